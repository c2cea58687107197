"""`linkroof compare`: time a user's Python callable on the GPU, count the bytes that
really crossed the links, and place it (with its reference and the matching NCCL
baseline) on the machine's roofline.

The orchestration is separate from the GPU: a `Timer` (CUDA events through the one
timing protocol, microbench/timing.py) and `Counters` (NVML's link byte counters,
counters.py) are passed in, so the whole flow is tested on CPUs with fakes. Loading
the user's code is in usercode.py; the placements in roofline/baseline.py.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..roofline.baseline import kernel_placements
from ..schema import Placement, Profile, Topology, slowest_per_repetition
from .counters import Counters, NvmlCounters, per_call
from .usercode import CompareError, call, framework_of, input_bytes, resolve, to_numpy

__all__ = ["CompareError", "CompareReport", "CompareResult", "Counters", "CudaTimer", "NvmlCounters", "Timer",
           "run_callable", "run_compare"]


class Timer:
    """GPU time of one call."""

    def sync(self) -> None:
        raise NotImplementedError

    def time_calls(self, call: Callable[[int], Any], reps: int, ops_per_call: int = 1,
                   min_batch_s: float = 0.0, windows: list | None = None,
                   on_batch: Callable[[], None] | None = None, sm_clock_mhz: list | None = None) -> list[float]:
        raise NotImplementedError


class Recorder:
    """The GPU timeline of calls: (activities, host start of each call, host launch time
    per correlation id), or None with why not."""

    def available(self) -> tuple[bool, str]:
        raise NotImplementedError

    def record(self, calls: int, call: Callable[[int], Any], sync: Callable[[], None]) -> Any:
        raise NotImplementedError

    def record_host(self, calls: int, call: Callable[[int], Any], sync: Callable[[], None]) -> Any:
        """(activities, call starts, HostCalls) of a pass with the host's API recorded."""
        raise NotImplementedError


class CuptiRecorder(Recorder):
    def available(self) -> tuple[bool, str]:
        from .cupti import available

        return available()

    def record(self, calls: int, call: Callable[[int], Any], sync: Callable[[], None]) -> Any:
        from .cupti import record

        return record(calls, call, sync)

    def record_host(self, calls: int, call: Callable[[int], Any], sync: Callable[[], None]) -> Any:
        from .cupti import record_host

        return record_host(calls, call, sync)


class CudaTimer(Timer):
    """CUDA events on CuPy's or PyTorch's current stream (whichever the inputs use),
    through the benchmarks' timing protocol: ungated by default (user code may wait on
    the host, and then the host's launch gaps are in the time); `gated` queues the calls
    behind the spin gate, as the ceilings are measured (only for code that never waits
    on the host)."""

    def __init__(self, framework: str, gated: bool = False):
        self.framework, self.gated = framework, gated

    def sync(self) -> None:
        if self.framework == "torch":
            import torch

            torch.cuda.synchronize()
        else:
            import cupy

            cupy.cuda.Device().synchronize()

    def time_calls(self, call: Callable[[int], Any], reps: int, ops_per_call: int = 1,
                   min_batch_s: float = 0.0, windows: list | None = None,
                   on_batch: Callable[[], None] | None = None, sm_clock_mhz: list | None = None) -> list[float]:
        from ..microbench.timing import time_calls

        return time_calls(call, reps, self.framework, gated=self.gated, ops_per_call=ops_per_call,
                          min_batch_s=min_batch_s, windows=windows, on_batch=on_batch, sm_clock_mhz=sm_clock_mhz)


MIN_BATCH_S = 2e-3  # an ungated batch's least length: its start on an empty queue stays under 1 % of it


@dataclass
class CompareResult:
    name: str
    times_s: list[float]
    counter_bytes_per_call: dict[int, dict[str, float]] = field(default_factory=dict)
    input_sets: int = 1
    checked: str = ""
    overhead_s: float = 0.0  # linkroof's own time beyond the user's warm-up and repetitions
    host_s_per_call: float = 0.0  # wall time of the timed loop per call (the host issuing and waiting)
    gated_times_s: list[float] = field(default_factory=list)  # the same calls behind the gate (the GPU alone)
    gated_note: str = ""
    timeline: Any = None  # TimelineSummary of a recorded pass of the same calls, where CUPTI is here
    timeline_note: str = ""  # how the timeline was taken, or why there is none
    recording: dict | None = None  # the raw activity records (roofline.timeline.to_record), for --record-timeline
    clock: Any = None  # ClockState of the timed calls (NVML samples through them), or None
    gated_clock: Any = None  # ClockState of the gated pass
    steady_note: str = ""  # how long the call ran before timing for the clocks to settle (--steady)
    sustained_times_s: list[float] = field(default_factory=list)  # timed again after the clock settled (drift seen)
    sustained_clock: Any = None  # their ClockState
    input_bytes: int = 0  # one input set's bytes
    l2_bytes: int = 0  # the GPU's L2 size, where it was read (0: not read)
    warm_times_s: list[float] = field(default_factory=list)  # one input set reused (warm L2), where sets were rotated

    @property
    def launch_share_s(self) -> float | None:
        """Per call, what the host's launch added to the GPU's own time: the ungated
        median less the gated one; None when the gated pass could not run, or when the
        two passes ran at different clocks (the difference would be the clock's, not the
        launch's)."""
        if not self.gated_times_s or not clocks_alike(self.clock, self.gated_clock):
            return None
        return max(0.0, self.median_s - statistics.median(self.gated_times_s))

    @property
    def median_s(self) -> float:
        return statistics.median(self.times_s)

    def link_bytes(self) -> float | None:
        """NVLink bytes per call: the most any GPU sent (the slowest link's load)."""
        tx = [v["nvlink_tx"] for v in self.counter_bytes_per_call.values() if "nvlink_tx" in v]
        return max(tx) if tx else None


@dataclass
class CompareReport:
    """What `linkroof compare` found (rank 0); other ranks get `result=None`."""

    rank: int
    result: CompareResult | None = None
    reference: CompareResult | None = None
    placements: list[Placement] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    profile: Profile | None = None
    topology: Topology | None = None
    ranks: int = 1
    kernel_counts: dict[str, dict[str, float]] | None = None  # ncu's counters per kernel name, per call (--counters)
    counters_note: str = ""  # how they were counted, or why not
    counters_log: str = ""  # ncu's raw CSV page, for --record-counters


def clocks_alike(a: Any, b: Any) -> bool:
    """Two passes' clock states allow their times to be subtracted: neither drifted, and
    their SM clocks (where read) differ by under 3 %. Unknown states are taken as alike
    (nothing says they differ), and the figure stays labelled by its state."""
    from ..roofline.clockstate import DRIFT

    if a is None or b is None:
        return True
    if a.state == "drifting" or b.state == "drifting":
        return False
    x, y = a.sm_mhz_median, b.sm_mhz_median
    return not (x and y and abs(x - y) / max(x, y) > DRIFT)


SETTLE_WINDOW_S = 0.25  # --steady: three windows of this, the clock within 1 % and the power within 2 %
SETTLE_MIN_S = 1.0  # and never less than this (an 8192^3 GEMM's clock fell for 0.5 s after 0.45 s of calls)


def settle(call: Callable[[], Any], sync: Callable[[], None], clocks: Any, most_s: float = 10.0) -> str:
    """Run `call` back to back until the SM clock and the power settle (clockstate.settled
    over three SETTLE_WINDOW_S windows: the clock within 1 %, the power within 2 %), no
    sooner than SETTLE_MIN_S and at most `most_s`: the timed calls that follow are the
    steady state. Says how long it took."""
    from ..roofline.clockstate import settled

    t0 = time.perf_counter()
    n = 0
    with clocks:
        while time.perf_counter() - t0 < most_s:
            for _ in range(4):
                call()
                n += 1
            sync()
            if time.perf_counter() - t0 > SETTLE_MIN_S and settled(clocks.samples, SETTLE_WINDOW_S):
                took = time.perf_counter() - t0
                return (f"ran {n} calls for {took:.2f} s before timing, until the SM clock and the power settled "
                        "(steady state)")
    return (f"ran {n} calls for {most_s:.0f} s before timing; the SM clock (within 1 %) and the power (within 2 %) "
            "had not settled by then (timed as it was)")


def run_callable(name: str, fn: Callable[..., Any], make_inputs: Callable[[], Any], timer: Timer,
                 counters: Counters | None, reps: int = 50, warmup: int = 10, l2_bytes: int = 0,
                 reference: Callable[..., Any] | None = None, rtol: float = 1e-3, atol: float = 1e-5,
                 gated_timer: Timer | None = None, recorder: Recorder | None = None,
                 timeline_calls: int = 20, clocks: Any = None, steady: bool = False) -> CompareResult:
    """Warm up, time `reps` calls, count link bytes over the timed calls. When one input
    set fits twice in L2, several sets are rotated so the cache does not flatter.
    `recorder` records the GPU timeline of `timeline_calls` more calls, back to back as
    timed (kernels, copies, idle time: the measured decomposition), before the timing, so
    the kernels per call are known: `gated_timer` then times the calls once more behind
    the gate in batches the launch queue holds (the GPU's own time, for the launch
    share); code that waits on the host cannot be gated, and then the note says so.
    The timers are set up (CuPy's and torch's streams, events) before the timed loops."""
    import numpy as np

    t_start = time.perf_counter()
    user_s = 0.0  # time inside the user's own code (inputs, checks, warm-up, repetitions)

    def timed(f: Callable[..., Any], *a: Any) -> Any:
        nonlocal user_s
        t = time.perf_counter()
        try:
            return f(*a)
        finally:
            user_s += time.perf_counter() - t

    first = timed(make_inputs)
    sets = [first]
    size = input_bytes(first)
    if l2_bytes and 0 < size < 2 * l2_bytes:
        sets += [timed(make_inputs) for _ in range(min(16, -(-4 * l2_bytes // size)) - 1)]
    checked = "no reference given"
    if reference is not None:
        got, want = to_numpy(timed(call, fn, sets[0])), to_numpy(timed(call, reference, sets[0]))
        if np.shape(got) != np.shape(want):
            raise CompareError(f"{name}: output shape {np.shape(got)} differs from the reference's {np.shape(want)}")
        if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=False):
            err = float(np.max(np.abs(got - want)))
            raise CompareError(f"{name}: output differs from the reference (max abs error {err:.3g}, "
                               f"rtol {rtol}, atol {atol})")
        checked = f"matches the reference (rtol {rtol}, atol {atol})"
    t0 = time.perf_counter()
    for i in range(warmup):
        call(fn, sets[i % len(sets)])
    timer.sync()
    timer.time_calls(lambda i: call(fn, sets[i % len(sets)]), 2)  # the timer's own set-up, out of the timed loop
    user_s += time.perf_counter() - t0
    # the timed calls first: nothing of CUPTI or the gate has touched the process yet
    made = 0

    def counted(i: int) -> Any:
        nonlocal made
        made += 1
        return call(fn, sets[i % len(sets)])

    steady_note = ""
    if steady and clocks is not None:
        t0 = time.perf_counter()
        steady_note = settle(lambda: call(fn, sets[0]), timer.sync, clocks)
        clocks.samples.clear()
        user_s += time.perf_counter() - t0
    elif steady:
        steady_note = "--steady asked for, but NVML's clocks cannot be read here: timed as it was"
    before = counters.read() if counters else {}
    windows: list[tuple[float, float]] = []
    gpu_mhz: list[float] = []  # each batch's SM clock, measured on the GPU
    t0 = time.perf_counter()
    if clocks is not None:
        with clocks:
            times = timer.time_calls(counted, reps, min_batch_s=MIN_BATCH_S, windows=windows, on_batch=clocks.mark,
                                     sm_clock_mhz=gpu_mhz)
    else:
        times = timer.time_calls(counted, reps, min_batch_s=MIN_BATCH_S)
    loop_s = time.perf_counter() - t0
    user_s += loop_s
    after = counters.read() if counters else {}
    warm_times: list[float] = []
    if len(sets) > 1:  # the cold figure's inputs were rotated through L2: the warm one beside it (one set reused)
        t0 = time.perf_counter()
        warm_times = timer.time_calls(lambda i: call(fn, sets[0]), reps, min_batch_s=MIN_BATCH_S)
        user_s += time.perf_counter() - t0
    summary, timeline_note, recording = None, "", None
    if recorder is not None:
        ok, why = recorder.available()
        if not ok:
            timeline_note = why
        else:
            from ..roofline.timeline import summarize, to_record, with_host

            t0 = time.perf_counter()
            try:
                acts, starts, host_of = recorder.record(timeline_calls, lambda i: call(fn, sets[i % len(sets)]),
                                                         timer.sync)
                summary = summarize(acts, starts, host_of, "cupti")
                timeline_note = (f"timeline: {why}, {timeline_calls} calls back to back recorded apart from the timed "
                                 "ones (CUPTI's activity records: every kernel, copy and memset)")
                host_pass = None
                try:
                    host_pass = recorder.record_host(timeline_calls, lambda i: call(fn, sets[i % len(sets)]),
                                                     timer.sync)
                    summary = with_host(summary, *host_pass)
                    timeline_note += ("; what the host did while the GPU idled from a further pass with CUPTI's API "
                                      "records (they slow the host: shares, applied to the timed idle)")
                except NotImplementedError:
                    pass
                except Exception as e:  # noqa: BLE001 - the GPU-side timeline stands without the host's records
                    timeline_note += f"; no host records ({type(e).__name__}: {str(e)[:120]})"
                recording = to_record(acts, starts, host_of, {"name": name, "calls": timeline_calls}, host_pass)
            except Exception as e:  # noqa: BLE001 - CUPTI refused (a profiler attached, a driver mismatch)
                timeline_note = f"no CUPTI timeline ({type(e).__name__}: {str(e)[:160]})"
            user_s += time.perf_counter() - t0
    busy = (min(1.0, summary.busy_s / statistics.median(times)) if summary is not None and times
            and summary.span_s else None)
    clock = _clock_state(times, windows, clocks, "the timed calls" + (" (steady state)" if steady_note else ""), busy,
                         gpu_mhz)
    sustained_times: list[float] = []
    sustained_clock = None
    if clock is not None and clock.state == "drifting" and not steady:
        # the clock moved under the timed calls: time them again once it has settled, so
        # both states are measured (the burst figure above, the sustained one here)
        t0 = time.perf_counter()
        steady_note = settle(lambda: call(fn, sets[0]), timer.sync, clocks)
        clocks.samples.clear()
        swin: list[tuple[float, float]] = []
        smhz: list[float] = []
        with clocks:
            sustained_times = timer.time_calls(lambda i: call(fn, sets[i % len(sets)]), reps, min_batch_s=MIN_BATCH_S,
                                               windows=swin, on_batch=clocks.mark, sm_clock_mhz=smhz)
        sustained_clock = _clock_state(sustained_times, swin, clocks, "the calls timed again once the clock settled",
                                       busy, smhz)
        user_s += time.perf_counter() - t0
    made = max(1, made)
    ops = max(1, int(round(summary.activities_per_call))) if summary is not None and summary.activities_per_call else 1
    gated_times: list[float] = []
    gated_note = ""
    gated_clock = None
    if gated_timer is not None:
        from ..microbench.timing import MAX_QUEUED

        t0 = time.perf_counter()
        if ops + 1 > MAX_QUEUED:
            gated_note = (f"no gated pass: a call launches {ops} operations, more than the {MAX_QUEUED} the launch "
                          "queue holds behind the gate; the launch share is not measured")
        else:
            try:
                gated_timer.time_calls(lambda i: call(fn, sets[i % len(sets)]), 2, ops_per_call=ops)  # its set-up
                gwin: list[tuple[float, float]] = []
                gmhz: list[float] = []
                if clocks is not None:
                    clocks.samples.clear()
                    with clocks:
                        gated_times = gated_timer.time_calls(lambda i: call(fn, sets[i % len(sets)]),
                                                             max(5, reps // 2), ops_per_call=ops,
                                                             min_batch_s=MIN_BATCH_S, windows=gwin,
                                                             on_batch=clocks.mark, sm_clock_mhz=gmhz)
                else:
                    gated_times = gated_timer.time_calls(lambda i: call(fn, sets[i % len(sets)]), max(5, reps // 2),
                                                         ops_per_call=ops, min_batch_s=MIN_BATCH_S)
                gated_clock = _clock_state(gated_times, gwin, clocks, "the gated pass",
                                           min(1.0, summary.busy_s / statistics.median(gated_times))
                                           if summary is not None and gated_times and summary.span_s else None,
                                           gmhz)
            except Exception as e:  # noqa: BLE001 - the gate timed out (the code waits on the host), or similar
                gated_note = f"no gated pass ({type(e).__name__}: {str(e)[:160]}): the launch share is not measured"
        user_s += time.perf_counter() - t0
    overhead = time.perf_counter() - t_start - user_s
    return CompareResult(name, times, per_call(before, after, made), len(sets), checked, overhead, loop_s / made,
                         gated_times, gated_note, summary, timeline_note, recording, clock, gated_clock, steady_note,
                         sustained_times, sustained_clock, input_bytes=size, l2_bytes=l2_bytes, warm_times_s=warm_times)


def _clock_state(times: list[float], windows: list, clocks: Any, what: str, busy: float | None = None,
                 gpu_mhz: list[float] | None = None, marked: bool = True) -> Any:
    """The clock state of timed batches from the sampler's samples, or None; `marked`:
    the sampler was also read at each batch's end."""
    if clocks is None:
        return None
    from ..roofline.clockstate import clock_state

    try:
        top = clocks.max_sm_mhz()
    except Exception:  # noqa: BLE001
        top = None
    return clock_state(times, windows, list(clocks.samples), top, f"NVML every {clocks.period_s * 1e3:.0f} ms "
                       + ("and at each batch's end " if marked else "") + f"through {what}", busy, gpu_mhz)


def clock_notes(result: CompareResult) -> list[str]:
    """The timed calls' clock state, in words: burst and sustained figures where they
    differ by more than 3 %, and whether the figure is steady."""
    c = result.clock
    if c is None:
        return ["clock state unknown: NVML's clocks were not read through the timed calls"]
    if c.state == "unknown":
        return [f"clock state unknown: {c.note}"]
    out = [f"clock state of the timed calls: {c.state} ({c.note})"]
    if c.state == "drifting" and c.burst_s and c.sustained_s:
        out.append(f"burst {c.burst_s * 1e6:.1f} us a call (the first batches, at {c.sm_mhz_first or 0:.0f} MHz), "
                   f"{c.sustained_s * 1e6:.1f} us in the last (at {c.sm_mhz_last or 0:.0f} MHz): the clock fell "
                   "under the timed calls")
    if result.sustained_times_s:
        sc = result.sustained_clock
        out.append(f"sustained: {statistics.median(result.sustained_times_s) * 1e6:.1f} us a call, timed again once "
                   f"the clock settled ({sc.note if sc else 'clock not read'}); the headline median "
                   f"{result.median_s * 1e6:.1f} us is the burst state's")
    if result.steady_note:
        out.append(result.steady_note)
    return out


def l2_size(framework: str, gpu: int) -> int:
    """The GPU's L2 size in bytes, through the framework in use; 0 where it cannot say."""
    try:
        if framework == "torch":
            import torch

            return int(getattr(torch.cuda.get_device_properties(gpu), "L2_cache_size", 0) or 0)
        import cupy

        return int(cupy.cuda.runtime.getDeviceProperties(gpu)["l2CacheSize"])
    except Exception:  # noqa: BLE001 - only the note needs it
        return 0


def cache_note(r: CompareResult) -> str:
    """The cache state the timed figure was measured in (issue 43): cold where several
    input sets were rotated through the L2 (each call finds its inputs evicted, as ncu,
    which flushes the caches before each kernel, measures), warm where one set that fits
    was reused (as torch.utils.benchmark does); one figure where the inputs do not fit."""
    from ..units import format_bytes

    size, l2 = r.input_bytes, r.l2_bytes
    if not size:
        return "cache state: not known (the inputs' size was not read)"
    if not l2:
        return (f"cache state: not known: one input set of {format_bytes(size)} reused, this GPU's L2 size not read "
                "(warm where it fits)")
    if r.input_sets > 1:
        warm = ""
        if r.warm_times_s and r.times_s:
            w, c = statistics.median(r.warm_times_s), statistics.median(r.times_s)
            warm = (f"; timed again with one set reused (warm L2, as torch.utils.benchmark): median "
                    f"{w * 1e6:.1f} us, {w / c - 1:+.1%} against the cold {c * 1e6:.1f} us (measured)")
        return (f"cache state: cold L2: {r.input_sets} input sets of {format_bytes(size)} rotated through the "
                f"{format_bytes(l2)} L2, so each call finds its inputs evicted (as ncu measures)"
                + (warm or "; torch.utils.benchmark reuses one set, warm, and can read faster"))
    if size >= 2 * l2:
        return (f"cache state: the inputs ({format_bytes(size)}) are over twice the {format_bytes(l2)} L2: cold and "
                "warm are one figure")
    if size > l2:
        return (f"cache state: partly warm: one input set of {format_bytes(size)} reused, larger than the "
                f"{format_bytes(l2)} L2, so part of it stays there between calls")
    return (f"cache state: warm L2: one input set of {format_bytes(size)} reused, and it fits in the "
            f"{format_bytes(l2)} L2 (a cold figure, as ncu measures, can be slower)")


def timing_notes(result: CompareResult, framework: str, gated: bool) -> list[str]:
    """How the kernel was timed, its clock state, and what the host did (a verdict only
    when the GPU idled over half the call, named by the host's recorded cause)."""
    notes = [f"timed with CUDA events on {framework}'s current stream"
             + (" behind the spin gate (the GPU's own time)" if gated else " (the host's launch gaps included)")
             + "; work the kernel puts on other streams is timed only where the call waits for it"]
    notes += clock_notes(result)
    notes.append(cache_note(result))
    if result.gated_times_s:
        g = statistics.median(result.gated_times_s)
        if result.launch_share_s is not None:
            notes.append(f"behind the gate the same calls took {g * 1e6:.1f} us: the host's launch added "
                         f"{result.launch_share_s * 1e6:.1f} us a call (both passes at the same clock state)")
        else:
            gc = result.gated_clock
            notes.append(f"behind the gate the same calls took {g * 1e6:.1f} us, at another clock state "
                         f"({gc.state if gc else 'unknown'}: {gc.note if gc else ''}): the difference is not "
                         "attributed to the launch")
    elif result.gated_note:
        notes.append(result.gated_note)
    if result.timeline is not None:
        from ..roofline.timeline import host_verdict

        t = result.timeline
        notes.append(result.timeline_note)
        notes.append(f"timeline per call: {t.kernels_per_call:g} kernels, GPU busy {t.busy_s * 1e6:.1f} us, idle "
                     f"{t.idle_s * 1e6:.1f} us of {t.span_s * 1e6:.1f} us, on {t.streams} stream(s)"
                     + (f"; communication {t.communication_s * 1e6:.1f} us, {t.exposed_communication_s * 1e6:.1f} us "
                        "of it exposed" if t.communication_s else ""))
        notes += overlap_notes(t)
        verdict = host_verdict(t, result.median_s)
        if verdict:
            notes.append(verdict)
    else:
        if result.timeline_note:
            notes.append(result.timeline_note)
        if not gated and result.host_s_per_call > 1.1 * result.median_s:  # inferred: no timeline to say
            notes.append(f"the host took {result.host_s_per_call * 1e6:.1f} us per call to issue and wait, the GPU "
                         f"{result.median_s * 1e6:.1f} us (inferred from host and event times, no timeline: the "
                         "host's loop also waits for the GPU, so this alone does not make the call host-bound)")
    return notes


def overlap_notes(t: Any) -> list[str]:
    """Per class, its own time, what ran beside it and what was exposed; the critical
    path and what shortening each class could save at most (inferred)."""
    from ..units import format_time

    alone = dict(t.class_alone_s)
    busy = dict(t.class_s)
    out = []
    for cls, own in alone.items():
        beside = [(b if a == cls else a, v) for a, b, v in t.overlap_s if cls in (a, b) and v > 0]
        if not beside:
            continue
        out.append(f"{cls}: {format_time(busy.get(cls, 0.0))} a call, {format_time(own)} of it alone (exposed), "
                   + ", ".join(f"{format_time(v)} beside {o}" for o, v in beside) + " (measured from the intervals)")
    if t.critical_path_s and t.streams > 1:
        path = ", ".join(f"{k} {format_time(v)}" for k, v in t.critical_path_s if v > 0)
        save = "; ".join(f"{cls} at most {format_time(v)} ({why})" for cls, v, why in t.shorten_s)
        out.append(f"critical path (inferred from the order of the records): {path}. Shortening {save}")
    return out


def run_compare(kernel: str, inputs: str, reference: str | None = None, workload_path: str | None = None,
                profile: Profile | None = None, reps: int = 50, warmup: int = 10, rtol: float = 1e-3,
                atol: float = 1e-5, counters_on: bool = True, topology: Any = None,
                gated: bool = False, timeline: bool = True, count_kernels: bool = False,
                steady: bool = False) -> CompareReport:
    """The whole `linkroof compare` on this process's GPU (or rank), as data.
    `count_kernels` counts each kernel's work with Nsight Compute in a child process
    (profiler/ncu.py): the workload file becomes optional (the counters give it), and a
    given one is compared with what the kernels moved; each kernel is placed by itself."""
    if topology is None:  # the GPU first: no user code runs on a machine that cannot time it
        from .probe import probe

        topology = probe()
    try:
        return _run_compare(kernel, inputs, reference, workload_path, profile, reps, warmup, rtol, atol, counters_on,
                            topology, gated, timeline, count_kernels, steady)
    except SystemExit as e:  # the user's code ended the process: said, never a silent exit 0
        raise CompareError(f"the user's code called sys.exit({e.code!r}) (in {kernel}, {inputs}"
                           + (f" or {reference}" if reference else "") + "): nothing was measured") from None


def _run_compare(kernel: str, inputs: str, reference: str | None, workload_path: str | None,
                 profile: Profile | None, reps: int, warmup: int, rtol: float, atol: float, counters_on: bool,
                 topology: Any, gated: bool, timeline: bool, count_kernels: bool, steady: bool) -> CompareReport:
    import dataclasses

    from ..roofline.model import MachineModel
    from ..roofline.workload import load_toml
    from .launch import connect, detect

    fn, make = resolve(kernel), resolve(inputs)
    ref_fn = resolve(reference) if reference else None
    workload = load_toml(workload_path) if workload_path else None
    ctx = detect()
    comm = connect(ctx)
    if ctx.kind == "torchrun" and ctx.distributed:
        try:  # callables that use torch.distributed find it initialised (linkroof's own group: gloo)
            import torch

            torch.cuda.set_device(ctx.local_rank)
        except ImportError:
            pass
    first = make()
    framework = framework_of(first)
    pending = [first]

    def make_inputs() -> Any:
        return pending.pop() if pending else make()

    gpu = ctx.local_rank % max(1, len(topology.gpus))
    l2 = 0
    if framework == "cupy":
        try:
            import cupy

            cupy.cuda.Device(gpu).use()
            l2 = int(cupy.cuda.runtime.getDeviceProperties(gpu)["l2CacheSize"])
        except Exception:  # noqa: BLE001 - L2 size only decides input rotation
            l2 = 0
    counters = None
    if counters_on:
        links = {g.index: len(g.nvlinks) for g in topology.gpus}
        counters = NvmlCounters([g.index for g in topology.gpus], links)
    timer = CudaTimer(framework, gated)
    name = kernel.rsplit(":", 1)[1]
    from .clocks import sampler

    clocks = sampler(gpu)
    result = run_callable(name, fn, make_inputs, timer, counters, reps, warmup, l2, ref_fn, rtol, atol,
                          gated_timer=None if gated else CudaTimer(framework, gated=True),
                          recorder=CuptiRecorder() if timeline else None, clocks=clocks, steady=steady)
    if not l2:  # not rotated through it, but said: the cache state of the figure
        result.l2_bytes = l2_size(framework, gpu)
    ref_result = None
    if ref_fn is not None:
        # the reference measured as the candidate is: its own timeline and clock state, so
        # its time is explained from what it did, never by the model alone
        ref_result = run_callable(f"{reference.rsplit(':', 1)[1]}", ref_fn, make, CudaTimer(framework), None, reps,
                                  warmup, l2, recorder=CuptiRecorder() if timeline else None, clocks=clocks)
        if not l2:
            ref_result.l2_bytes = result.l2_bytes
    spot = None
    if ctx.kind == "torchrun" and ctx.distributed and workload is not None:
        from ..roofline.baseline import nccl_baseline
        from .session import bundled_profile as _bundled

        known = nccl_baseline(profile or _bundled(), workload)
        want = str(workload.params.get("dtype") or "fp32")
        if known is None or not known.exact or known.dtype != want:  # every rank decides alike: same profile, workload
            spot = torch_baseline(workload.pattern, workload.message_bytes, want)
    gathered = comm.gather((result, ref_result), timeout_s=600)
    comm.close()
    if ctx.rank != 0:
        return CompareReport(rank=ctx.rank)
    results = [r for _, r in gathered or []]
    if len(results) > 1:  # the slowest rank, repetition by repetition
        result = dataclasses.replace(result, times_s=list(slowest_per_repetition([r[0].times_s for r in results])))
        if ref_result is not None:
            ref_result = dataclasses.replace(ref_result, times_s=list(slowest_per_repetition(
                [r[1].times_s for r in results])))
    from .session import bundled_profile

    prof = profile or bundled_profile()
    model = MachineModel.from_profile(prof)
    if len(results) > 1 and result.gated_times_s and all(r[0].gated_times_s for r in results):
        result = dataclasses.replace(result, gated_times_s=list(slowest_per_repetition(
            [r[0].gated_times_s for r in results])))
    elif len(results) > 1:
        result = dataclasses.replace(result, gated_times_s=[])
    per_name, counters_note, counters_log, count_notes = None, "", "", []
    if count_kernels:
        from . import ncu

        try:
            rep = ncu.count(kernel, inputs, warmup=max(1, min(warmup, 3)), calls=1, ranks=ctx.world)
            per_name, counters_note, counters_log = rep.per_name(), rep.how, rep.log
            if rep.missing:
                counters_note += "; this GPU's ncu lacks " + ", ".join(rep.missing)
        except ncu.CountersUnavailable as e:
            counters_note = str(e)
    call_workload = workload
    if per_name:
        from ..roofline.baseline import counted_workload, workload_against_counters

        from .ncu import CounterReport

        totals = CounterReport.sum_names(per_name)
        if workload is not None:
            count_notes = workload_against_counters(workload, totals)
        else:
            call_workload = counted_workload(result.name, totals)
            count_notes = ["no workload file: the call's work is what ncu counted (DRAM bytes, FLOPs, NVLink bytes)"]
    hm = host_copies(result.timeline)
    if hm and call_workload is not None and call_workload.link_bytes.get("host"):
        call_workload = dataclasses.replace(call_workload, params={**call_workload.params, "host_memory": hm})
    placements, notes = kernel_placements(result.name, result.median_s, result.link_bytes(), call_workload, model,
                                          prof, (ref_result.name, ref_result.median_s) if ref_result else None,
                                          baseline=spot, timeline=result.timeline, clock=result.clock,
                                          launch_s=result.launch_share_s,
                                          reference_timeline=ref_result.timeline if ref_result else None,
                                          reference_clock=ref_result.clock if ref_result else None)
    if per_name:
        from ..roofline.baseline import kernel_group_placements

        kernels, summary, knotes = kernel_group_placements(result.name, result.timeline, per_name, model,
                                                           recording=result.recording)
        placements = placements + kernels
        notes += knotes
        if summary is not None:
            result = dataclasses.replace(result, timeline=summary)
    notes = timing_notes(result, framework, gated) + ([counters_note] if counters_note else []) + count_notes + notes
    from ..roofline.contradictions import check as contradictions

    said = notes + [f for p in placements for f in p.flags] + \
        [k.why for k in getattr(result.timeline, "kernels", None) or () if getattr(k, "why", "")]
    notes += [f"self-check found a contradiction (a linkroof bug; please report it): {x}"
              for x in contradictions(result.timeline, placements, result.clock, texts=said)]
    return CompareReport(rank=0, result=result, reference=ref_result, placements=placements, notes=notes,
                         profile=prof, topology=topology, ranks=ctx.world, kernel_counts=per_name,
                         counters_note=counters_note, counters_log=counters_log)


def host_copies(timeline: Any) -> str | None:
    """'pageable h2d' (or 'd2h') where every host copy of the call went one way and came
    from or went to pageable memory (CUPTI's memcpy records name each end's memory): the
    call's host bytes are then placed against that measured ceiling, not pinned memory's.
    None where the copies are pinned, mixed, or not recorded."""
    ks = [k for k in getattr(timeline, "kernels", None) or () if k.kind == "memcpy"
          and any(w in k.name.lower() for w in ("htod", "dtoh"))]
    if not ks or not all("pageable" in k.name.lower() for k in ks):
        return None
    ways = {"h2d" if "htod" in k.name.lower() else "d2h" for k in ks}
    return f"pageable {ways.pop()}" if len(ways) == 1 else "pageable both ways"


def torch_baseline(pattern: str, message_bytes: int | None, dtype: str, reps: int = 20) -> Any:
    """The NCCL baseline measured on the spot over this process group (torch.distributed,
    every rank at once), for a collective, size or data type the profile lacks: the
    slowest rank's time per call of `reps` calls back to back after a warm-up (CUDA
    events on the current stream, the host's launch included, as a user's loop)."""
    from ..roofline.baseline import Baseline
    from ..roofline.collectives import canonical, dtype_bytes

    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        return None
    if not message_bytes or not dist.is_initialized():
        return None
    name = canonical(pattern) if pattern else ""
    types = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
    if name not in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all") or dtype not in types:
        return None
    world = dist.get_world_size()
    n = int(message_bytes // dtype_bytes(dtype))
    if n < world:
        return None
    n -= n % world
    dev = torch.device("cuda", torch.cuda.current_device())
    big = torch.ones(n, dtype=types[dtype], device=dev)
    small = torch.ones(n // world, dtype=types[dtype], device=dev)
    spare = torch.empty_like(big)
    ops = {"all_reduce": lambda: dist.all_reduce(big),
           "all_gather": lambda: dist.all_gather_into_tensor(big, small),
           "reduce_scatter": lambda: dist.reduce_scatter_tensor(small, big),
           "all_to_all": lambda: dist.all_to_all_single(spare, big)}
    op = ops[name]
    for _ in range(5):
        op()
    torch.cuda.synchronize()
    from ..microbench.timing import time_calls

    try:  # the GPU's own time, as the profile's figures: calls queued behind the gate on torch's stream
        times, how = time_calls(lambda i: op(), reps, "torch", gated=True), "the GPU's time, queued behind the gate"
    except Exception:  # noqa: BLE001 - the gate timed out: back to back without it, the host's launch included
        times, how = time_calls(lambda i: op(), reps, "torch", gated=False), "ungated: the host's launch included"
    per_call = torch.tensor([sorted(times)[len(times) // 2]], device=dev)
    dist.all_reduce(per_call, op=dist.ReduceOp.MAX)
    return Baseline(name, int(message_bytes), world, dtype, float(per_call.item()),
                    f"measured now over this process group (torch.distributed, median of {reps} calls, {how}, "
                    "slowest rank): the profile has no figure at this size and data type")
