"""NVML clock, power and clock-event samples taken on a thread while figures are timed
(roofline/clockstate.py turns them into a clock state). One reading takes tens of
microseconds of the host's time, on a thread of its own, every PERIOD_S."""

from __future__ import annotations

import threading
import time
from typing import Any

from ..roofline.clockstate import ClockSample

PERIOD_S = 0.02  # 5 ms slowed a host-bound chain of 200 torch adds by 2.5 % (benchmarks/sampler_ab.py); a load's clock falls over ~0.3 s


class ClockSampler:
    """with ClockSampler(nvml, device) as s: ...; s.samples. `nvml` is the adapter
    (profiler/nvml.py); a reading NVML refuses is None in the sample."""

    def __init__(self, nvml: Any, device: int, period_s: float = PERIOD_S):
        self.nvml, self.device, self.period_s = nvml, device, period_s
        self.samples: list[ClockSample] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def read(self) -> ClockSample:
        from . import nvml as q
        from ..schema import known

        def get(*a: Any) -> Any:
            v = self.nvml.get(*a)
            return v if known(v) else None

        power = get("power_usage_mw", self.device)
        return ClockSample(time.perf_counter(), get("clock", self.device, q.CLOCK_SM),
                           get("clock", self.device, q.CLOCK_MEM), power / 1000 if power is not None else None,
                           get("clocks_event_reasons", self.device))

    def mark(self) -> None:
        """One reading now, from the caller's thread: a timed batch's own clock at its end
        (the thread's period is too coarse for batches of a few ms)."""
        self.samples.append(self.read())

    def max_sm_mhz(self) -> float | None:
        from . import nvml as q
        from ..schema import known

        v = self.nvml.get("max_clock", self.device, q.CLOCK_SM)
        return float(v) if known(v) else None

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append(self.read())
            self._stop.wait(self.period_s)

    def __enter__(self) -> "ClockSampler":
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="linkroof-clocks", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        self.samples.append(self.read())


def sampler(device: int) -> ClockSampler | None:
    """A sampler on this machine's NVML, or None where NVML is not here."""
    try:
        from .nvml import LiveBackend, Nvml

        return ClockSampler(Nvml(LiveBackend()), device)
    except Exception:  # noqa: BLE001 - no NVML: figures carry an unknown clock state
        return None
