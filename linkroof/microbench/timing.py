"""The one timing helper: CUDA events around repetitions queued behind a spin kernel.

Every lane (a stream on one device with one operation to repeat) is first held by a
kernel spinning on a host flag; all repetitions and their events are queued behind
it; then the flag is released and the GPU runs them back to back. What Python costs
to enqueue never reaches the figures (the method of NVIDIA's nvbandwidth). Lanes on
several devices or streams run at once, which is how simultaneous figures (both
directions, all-to-all) are taken.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .cuda import BenchError, HostFlag, cp, launch

# Operations (plus one event per repetition) queued behind one gate. The driver's
# queue holds about a thousand entries; a full queue would block Python while the
# gate waits for Python: stay well below, and split longer runs into several gates.
MAX_QUEUED = 480
# Long enough for Python to queue MAX_QUEUED operations many times over; short enough
# that an operation the driver will not queue behind the gate costs little.
SPIN_TIMEOUT_S = 2.0


class GateTimeout(BenchError):
    """The operations could not all be queued behind the gate: the driver executes this
    one synchronously with the host (seen for staged peer copies and tiny peer reads)."""


@dataclass
class Lane:
    device: int
    enqueue: Callable[[Any], None]  # enqueue one operation on the given stream
    inner: int = 1  # operations per repetition (small messages: a batch, time / inner)


_FLAG: HostFlag | None = None
_STREAMS: dict[tuple[int, int], Any] = {}


def _flag() -> HostFlag:
    global _FLAG
    if _FLAG is None:
        _FLAG = HostFlag()
    return _FLAG


def stream(device: int, slot: int = 0) -> Any:
    """A non-blocking stream per (device, slot), reused across benchmarks."""
    cupy = cp()
    key = (device, slot)
    if key not in _STREAMS:
        with cupy.cuda.Device(device):
            _STREAMS[key] = cupy.cuda.Stream(non_blocking=True)
    return _STREAMS[key]


def time_lanes(lanes: list[Lane], reps: int, warmup: int = 2, gated: bool = True) -> list[list[float]]:
    """Seconds per operation, one list per lane (one value per repetition).

    `gated=False` times without the spin gate (for operations the driver runs
    synchronously with the host, like copies from pageable memory)."""
    cupy = cp()
    slots: dict[int, int] = {}
    streams = []
    for lane in lanes:
        slot = slots.get(lane.device, 0)
        slots[lane.device] = slot + 1
        streams.append(stream(lane.device, slot))
    for _ in range(warmup):
        for lane, s in zip(lanes, streams):
            with cupy.cuda.Device(lane.device):
                for _ in range(lane.inner):
                    lane.enqueue(s)
    for lane, s in zip(lanes, streams):
        s.synchronize()

    per_gate = max(1, MAX_QUEUED // max(lane.inner + 1 for lane in lanes))
    times: list[list[float]] = [[] for _ in lanes]
    done = 0
    while done < reps:
        batch = min(per_gate, reps - done)
        times_batch = _gate(lanes, streams, batch, gated)
        for t, tb in zip(times, times_batch):
            t.extend(tb)
        done += batch
    return times


def _gate(lanes: list[Lane], streams: list[Any], reps: int, gated: bool) -> list[list[float]]:
    cupy = cp()
    flag = _flag()
    flag.reset()
    marks: list[list[Any]] = []
    for lane, s in zip(lanes, streams):
        with cupy.cuda.Device(lane.device):
            if gated:
                launch(lane.device, "spin_wait", 1, 1,
                       (cupy.uint64(flag.flag_ptr), cupy.uint64(int(SPIN_TIMEOUT_S * 1e9)), cupy.uint64(flag.timeout_ptr)),
                       stream=s)
            ev = [cupy.cuda.Event() for _ in range(reps + 1)]
            ev[0].record(s)
            marks.append(ev)
    for r in range(reps):
        for lane, s, ev in zip(lanes, streams, marks):
            with cupy.cuda.Device(lane.device):
                for _ in range(lane.inner):
                    lane.enqueue(s)
                ev[r + 1].record(s)
    flag.release()
    for s in streams:
        s.synchronize()
    if gated and flag.timed_out:
        raise GateTimeout("the spin gate timed out before all repetitions were queued; figures discarded "
                          "(the driver runs this operation synchronously with the host, or the host was too slow)")
    out = []
    for lane, ev in zip(lanes, marks):
        out.append([cupy.cuda.get_elapsed_time(ev[r], ev[r + 1]) / 1e3 / lane.inner for r in range(reps)])
    return out


def time_grouped(devices: list[int], enqueue_rep: Callable[[list[Any]], None], reps: int, warmup: int = 2,
                 ops_per_rep: int = 1, settle: int = 5, gated: bool = True) -> list[list[float]]:
    """Like time_lanes, for operations that must be issued together on every device's
    stream (NCCL group calls): `enqueue_rep(streams)` issues one repetition on all of
    them. Seconds per repetition, one list per device.

    `settle` untimed repetitions run right after each release of the gate: on 2xH200
    the first few NCCL calls after it took about 110 us each where the median was
    8 us (an 8 B all-reduce), then every later one was steady. `gated=False` times
    each repetition on its own, waiting for it (the fallback when the gate times out)."""
    cupy = cp()
    streams = [stream(d, 0) for d in devices]
    for _ in range(warmup):
        enqueue_rep(streams)
    for s in streams:
        s.synchronize()
    if not gated:
        return _grouped_ungated(devices, streams, enqueue_rep, reps)
    per_gate = max(1, MAX_QUEUED // (ops_per_rep + 1) - settle)
    out: list[list[float]] = [[] for _ in devices]
    done = 0
    flag = _flag()
    while done < reps:
        batch = min(per_gate, reps - done)
        flag.reset()
        marks = []
        for d, s in zip(devices, streams):
            with cupy.cuda.Device(d):
                launch(d, "spin_wait", 1, 1, (cupy.uint64(flag.flag_ptr), cupy.uint64(int(SPIN_TIMEOUT_S * 1e9)),
                                              cupy.uint64(flag.timeout_ptr)), stream=s)
        for _ in range(settle):  # untimed, right after the release (see above)
            enqueue_rep(streams)
        for d, s in zip(devices, streams):
            with cupy.cuda.Device(d):
                ev = [cupy.cuda.Event() for _ in range(batch + 1)]
                ev[0].record(s)
                marks.append(ev)
        for r in range(batch):
            enqueue_rep(streams)
            for d, s, ev in zip(devices, streams, marks):
                with cupy.cuda.Device(d):
                    ev[r + 1].record(s)
        flag.release()
        for s in streams:
            s.synchronize()
        if flag.timed_out:
            raise GateTimeout("the spin gate timed out before the group calls were all queued")
        for lst, ev in zip(out, marks):
            lst.extend(cupy.cuda.get_elapsed_time(ev[r], ev[r + 1]) / 1e3 for r in range(batch))
        done += batch
    return out


def _grouped_ungated(devices: list[int], streams: list[Any], enqueue_rep: Callable[[list[Any]], None],
                     reps: int) -> list[list[float]]:
    cupy = cp()
    out: list[list[float]] = [[] for _ in devices]

    def mark() -> list[Any]:
        events = []
        for d, s in zip(devices, streams):
            with cupy.cuda.Device(d):
                e = cupy.cuda.Event()
                e.record(s)
                events.append(e)
        return events

    for _ in range(reps):
        starts = mark()
        enqueue_rep(streams)
        ends = mark()
        for lst, a, b in zip(out, starts, ends):
            b.synchronize()
            lst.append(cupy.cuda.get_elapsed_time(a, b) / 1e3)
    return out


def time_kernel(device: int, run: Callable[[Any], None], reps: int, warmup: int = 1) -> list[float]:
    """Seconds per call of something that runs long enough on its own (a GEMM, a
    pointer chase): one lane, gated all the same."""
    return time_lanes([Lane(device, run)], reps, warmup)[0]
