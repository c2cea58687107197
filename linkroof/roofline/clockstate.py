"""The clock and power state of timed figures: pure arithmetic on NVML samples taken
while the figures were timed (profiler/clocks.py samples them).

Anchor: nvbench's throttle handling (NVIDIA/nvbench: each sample carries the SM clock
it ran at; samples under 75 % of the clock are thrown away and the GPU is given 50 ms
to recover). linkroof keeps every sample and reports the two states apart instead: the
burst figure (the first samples, at the clock the GPU starts a load with) and the
sustained one (the samples after the clock settled, where a power-capped GEMM runs in
production), both with their clocks, power and the reasons NVML gives. A drift between
them is a clock state, never a launch cost.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from ..schema import ClockState

DRIFT = 0.03  # burst and sustained figures further apart than this are both reported
SETTLED = 0.01  # the SM clock within this of its last windows' mean: settled
SETTLED_POWER = 0.02  # and the power within this of its windows' mean

# NVML's clock-event reasons that hold the clocks down (idle and sync boost do not)
HOLDING = {0x4: "sw_power_cap", 0x8: "hw_slowdown", 0x20: "sw_thermal_slowdown", 0x40: "hw_thermal_slowdown",
           0x80: "hw_power_brake_slowdown", 0x2: "applications_clocks_setting"}


@dataclass(frozen=True)
class ClockSample:
    """One NVML reading: host time (s, perf_counter), SM and memory clock (MHz), power
    (W), the clock-event reasons bit mask; None where NVML did not answer."""

    t: float
    sm_mhz: float | None
    mem_mhz: float | None
    power_w: float | None
    reasons: int | None


def reasons_text(mask: int | None) -> tuple[str, ...]:
    if mask is None:
        return ()
    return tuple(name for bit, name in HOLDING.items() if mask & bit)


def _mean(xs: Sequence[float | None]) -> float | None:
    v = [x for x in xs if x is not None]
    return sum(v) / len(v) if v else None


def in_window(samples: Sequence[ClockSample], t0: float, t1: float) -> list[ClockSample]:
    """The samples taken in [t0, t1], or the one nearest it where none was."""
    inside = sorted((s for s in samples if t0 <= s.t <= t1), key=lambda s: s.t)
    if inside or not samples:
        return inside
    mid = (t0 + t1) / 2
    return [min(samples, key=lambda s: abs(s.t - mid))]


GPU_BUSY = 0.9  # a call whose GPU was busy this share of its time: the host does not set its time


def clock_state(times_s: Sequence[float], windows: Sequence[tuple[float, float]], samples: Sequence[ClockSample],
                max_sm_mhz: float | None = None, how: str = "", busy_share: float | None = None,
                gpu_mhz: Sequence[float] | None = None) -> ClockState:
    """The clock state of timed batches (seconds per call, one per batch, each with its
    host window): each batch's SM clock from the samples in its window; burst = the
    first third of the batches, sustained = the last third; a drift when the two
    medians differ by more than DRIFT. Without samples: state 'unknown', said why."""
    if (not samples and not gpu_mhz) or not times_s:
        return ClockState(state="unknown", samples=0, note=how or "no NVML clock samples were taken")
    third = max(1, len(times_s) // 3)
    measured = bool(gpu_mhz) and len(gpu_mhz) == len(times_s) and all(m == m and m > 0 for m in gpu_mhz)
    if measured:  # each batch's own SM clock, read on the GPU (nvbench's method): NVML's lags
        clocks = list(gpu_mhz)
        how = (how + "; " if how else "") + "each batch's SM clock measured on the GPU (SM 0's clock64 over " \
            "%globaltimer, nvbench's method)"
    else:
        clocks = [_mean([s.sm_mhz for s in in_window(samples, *w)]) for w in windows] if windows else []
    burst = statistics.median(times_s[:third])
    sustained = statistics.median(times_s[-third:])
    drift = abs(sustained - burst) / burst if burst > 0 else 0.0
    first = _mean(clocks[:third]) if clocks else _mean([s.sm_mhz for s in samples[:max(1, len(samples) // 3)]])
    last = _mean(clocks[-third:]) if clocks else _mean([s.sm_mhz for s in samples[-max(1, len(samples) // 3):]])
    sms = [c for c in clocks if c is not None] if measured else [s.sm_mhz for s in samples if s.sm_mhz is not None]
    mask = 0
    for s in samples:
        mask |= s.reasons or 0
    held = reasons_text(mask)
    power = _mean([s.power_w for s in samples])
    clock_moved = first is not None and last is not None and first > 0 and abs(last - first) / first > DRIFT
    # the last batch alone off the first third's time, at a lower clock: the clock began to fall
    end_clock = clocks[-1] if clocks else None
    late = (len(times_s) > 2 and burst > 0 and abs(times_s[-1] - burst) / burst > DRIFT and end_clock is not None
            and first is not None and end_clock < (1 - DRIFT) * first)
    median_sm = statistics.median(sms) if sms else None
    # NVML's SM clock reading lags a power cap's fall by more than a short timed loop lasts
    # (a GEMM 10 % slower within 70 ms while NVML read 1980 MHz throughout, one H200): where
    # the call kept the GPU busy and NVML shows a power or thermal cap holding the clock, or
    # the power rising, the drift is the GPU's; with no such evidence it is never blamed on it
    evidence = gpu_evidence(samples, windows, third)
    gpu_state = drift > DRIFT and not clock_moved and busy_share is not None and busy_share >= GPU_BUSY \
        and bool(evidence)
    if (drift > DRIFT and clock_moved) or late or gpu_state:
        state = "drifting"
        if late and drift <= DRIFT:
            sustained, drift = times_s[-1], abs(times_s[-1] - burst) / burst
            last = end_clock
    elif max_sm_mhz and median_sm and median_sm < (1 - DRIFT) * max_sm_mhz:
        state = "sustained"
    else:
        state = "burst"
    parts = [f"SM clock {first:.0f} -> {last:.0f} MHz" if first and last else "SM clock not read"]
    if max_sm_mhz:
        parts[-1] += f" (max {max_sm_mhz:.0f})"
    if power is not None:
        parts.append(f"{power:.0f} W")
    if held:
        parts.append("held by " + ", ".join(held))
    note = "; ".join(parts) + (f"; {how}" if how else "")
    if state == "drifting" and gpu_state:
        note += (f"; the calls slowed {sustained / burst - 1:+.1%} from the first batches to the last with the GPU "
                 f"busy {busy_share:.0%} of the time and {evidence}: a GPU state (inferred: NVML's clock reading, "
                 "which lags, did not show the clock fall)")
    elif state == "drifting":
        note += (f"; the calls slowed {sustained / burst - 1:+.1%} from the first batches to the last as the SM "
                 f"clock went from {first:.0f} to {last:.0f} MHz")
    elif drift > DRIFT:
        lo, hi = min(times_s), max(times_s)
        spread = f" (batches from {lo * 1e3:.4g} to {hi * 1e3:.4g} ms, {hi / lo - 1:.1%} apart)" if lo > 0 else ""
        note += (f"; the calls' times moved {sustained / burst - 1:+.1%} from the first batches to the last with no "
                 "clock, power or thermal evidence of a GPU state (SM clock steady, no cap holding it, power flat): "
                 f"host-side variance{spread}")
        if busy_share is not None and busy_share >= GPU_BUSY:
            note += (f", though the recorded pass kept the GPU busy {busy_share:.0%}: cause not established")
        elif busy_share is not None:
            note += f", the GPU idle {1 - busy_share:.0%} of the call: the host's own speed, not a clock state"
    return ClockState(state=state, samples=len(samples), sm_mhz_first=first, sm_mhz_last=last,
                      sm_mhz_median=median_sm, sm_mhz_max=max_sm_mhz,
                      mem_mhz=_mean([s.mem_mhz for s in samples]), power_w=power, reasons=held,
                      burst_s=burst, sustained_s=sustained, drift=drift, note=note)


POWER_RISE = 0.05  # the power of the last third of the batches this much over the first's: evidence


def gpu_evidence(samples: Sequence[ClockSample], windows: Sequence[tuple[float, float]], third: int) -> str:
    """What NVML shows of a GPU state while the batches ran, beside a clock reading that
    lags: a power or thermal cap holding the clocks (its reason bits), or the power rising
    by POWER_RISE from the first third of the batches to the last. '' where none."""
    holding = reasons_text(_or([s.reasons for s in samples]))
    capped = [r for r in holding if r != "applications_clocks_setting"]
    if capped:
        return "NVML reporting " + ", ".join(capped)
    if windows:
        p0 = _mean([_mean([s.power_w for s in in_window(samples, *w)]) for w in windows[:third]])
        p1 = _mean([_mean([s.power_w for s in in_window(samples, *w)]) for w in windows[-third:]])
        if p0 and p1 and p1 > (1 + POWER_RISE) * p0:
            return f"the power rising from {p0:.0f} to {p1:.0f} W"
    return ""


def _or(masks: Sequence[int | None]) -> int | None:
    out = None
    for m in masks:
        if m is not None:
            out = (out or 0) | m
    return out


def settled(samples: Sequence[ClockSample], window_s: float = 0.1, windows: int = 3) -> bool:
    """Whether the load has found its level: the SM clock's mean over each of the last
    `windows` windows of `window_s` within SETTLED of their mean, and the power's within
    SETTLED_POWER where NVML read it (NVML's clock lags a power cap's fall: a GEMM's
    power still climbing means its clock will follow)."""
    if not samples:
        return False
    end = samples[-1].t
    if samples[0].t > end - windows * window_s:
        return False
    for field_, tol in (("sm_mhz", SETTLED), ("power_w", SETTLED_POWER)):
        means = [_mean([getattr(s, field_) for s in samples if end - (k + 1) * window_s < s.t <= end - k * window_s])
                 for k in range(windows)]
        if any(m is None for m in means):
            if field_ == "sm_mhz":
                return False
            continue  # no power reading: the clock alone decides
        avg = sum(means) / len(means)
        if not all(abs(m - avg) <= tol * avg for m in means):
            return False
    return True


def scale_to_clock(value: float, from_mhz: float | None, to_mhz: float | None) -> float | None:
    """A compute ceiling measured at `from_mhz` scaled to `to_mhz` (tensor and CUDA-core
    rates are per clock): an inference, used where the profile has no figure at the
    call's clock state."""
    if not from_mhz or not to_mhz:
        return None
    return value * to_mhz / from_mhz
