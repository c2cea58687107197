"""The one timing protocol: CUDA events around repetitions queued behind a spin kernel.

Every lane (a stream on one device with one operation to repeat) is first held by a
kernel spinning on a host flag; all repetitions and their events are queued behind
it; then the flag is released and the GPU runs them back to back. What Python costs
to enqueue never reaches the figures (the method of NVIDIA's nvbandwidth). Lanes on
several devices or streams run at once, which is how simultaneous figures (both
directions, all-to-all) are taken.
"""

from __future__ import annotations

import time
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
    slots: dict[int, int] = {}
    streams = []
    for lane in lanes:
        slot = slots.get(lane.device, 0)
        slots[lane.device] = slot + 1
        streams.append(stream(lane.device, slot))

    def rep(_: list[Any]) -> None:
        cupy = cp()
        for lane, s in zip(lanes, streams):
            with cupy.cuda.Device(lane.device):
                for _ in range(lane.inner):
                    lane.enqueue(s)

    ops = max(lane.inner for lane in lanes)
    times = time_repetitions([lane.device for lane in lanes], streams, rep, reps, warmup=warmup, ops_per_rep=ops,
                             settle=0, gated=gated)
    return [[t / lane.inner for t in ts] for lane, ts in zip(lanes, times)]


def time_grouped(devices: list[int], enqueue_rep: Callable[[list[Any]], None], reps: int, warmup: int = 2,
                 ops_per_rep: int = 1, settle: int = 5, gated: bool = True) -> list[list[float]]:
    """Like time_lanes, for operations that must be issued together on every device's
    stream (NCCL group calls): `enqueue_rep(streams)` issues one repetition on all of
    them. Seconds per repetition, one list per device.

    `settle` untimed repetitions run right after each release of the gate: on 2xH200
    the first few NCCL calls after it took about 110 us each where the median was
    8 us (an 8 B all-reduce), then every later one was steady."""
    return time_repetitions(devices, [stream(d, 0) for d in devices], enqueue_rep, reps, warmup=warmup,
                            ops_per_rep=ops_per_rep, settle=settle, gated=gated)


def hold(devices: list[int], streams: list[Any]) -> HostFlag:
    """Close the gate: a kernel spinning on the host flag (reset here) on every stream;
    what is queued behind it waits until `flag.release()`."""
    cupy = cp()
    flag = _flag()
    flag.reset()
    for d, s in zip(devices, streams):
        with cupy.cuda.Device(d):
            launch(d, "spin_wait", 1, 1, (cupy.uint64(flag.flag_ptr), cupy.uint64(int(SPIN_TIMEOUT_S * 1e9)),
                                          cupy.uint64(flag.timeout_ptr)), stream=s)
    return flag


def time_repetitions(devices: list[int], streams: list[Any], enqueue_rep: Callable[[list[Any]], None], reps: int,
                     warmup: int = 2, ops_per_rep: int = 1, settle: int = 0, gated: bool = True) -> list[list[float]]:
    """The one gate protocol. `enqueue_rep(streams)` queues one repetition on every
    stream (stream i on devices[i]); an event on each stream after each repetition
    gives its time. Gated: a spin kernel holds every stream, all repetitions are queued
    behind it (in batches the driver's queue can hold), then the flag is released, and
    each repetition's time runs from the event before it to the event after it.
    `gated=False` queues the same without the spin kernel, with an event pair around
    each repetition: for operations the driver runs synchronously with the host, and
    for user code that may synchronise. Seconds, one list per stream."""
    cupy = cp()
    for _ in range(warmup):
        enqueue_rep(streams)
    for s in streams:
        s.synchronize()
    per_gate = max(1, MAX_QUEUED // (ops_per_rep + 1) - settle) if gated else reps
    out: list[list[float]] = [[] for _ in streams]
    done = 0
    flag = _flag()
    while done < reps:
        batch = min(per_gate, reps - done)
        if gated:
            hold(devices, streams)
        for _ in range(settle):  # untimed, right after the release
            enqueue_rep(streams)
        # gated: events e0 e1 ... (repetition r from e_r to e_r+1); ungated: pairs (s_r, e_r)
        marks: list[list[tuple[Any, Any]]] = [[] for _ in streams]

        def record(i: int) -> Any:
            with cupy.cuda.Device(devices[i]):
                ev = cupy.cuda.Event()
                ev.record(streams[i])
                return ev

        last = [record(i) for i in range(len(streams))] if gated else []
        for r in range(batch):
            starts = last if gated else [record(i) for i in range(len(streams))]
            enqueue_rep(streams)
            last = [record(i) for i in range(len(streams))]
            for i in range(len(streams)):
                marks[i].append((starts[i], last[i]))
        flag.release()
        for s in streams:
            s.synchronize()
        if gated and flag.timed_out:
            raise GateTimeout("the spin gate timed out before all repetitions were queued; figures discarded "
                              "(the driver runs this operation synchronously with the host, or the host was too slow)")
        for lst, pairs in zip(out, marks):
            lst.extend(cupy.cuda.get_elapsed_time(a, b) / 1e3 for a, b in pairs)
        done += batch
    return out


def time_kernel(device: int, run: Callable[[Any], None], reps: int, warmup: int = 1) -> list[float]:
    """Seconds per call of something that runs long enough on its own (a GEMM, a
    pointer chase): one lane, gated all the same."""
    return time_lanes([Lane(device, run)], reps, warmup)[0]


def time_calls(call: Callable[[int], Any], reps: int, framework: str = "cupy", gated: bool = False,
               ops_per_call: int = 1, min_batch_s: float = 0.0, windows: list | None = None,
               lead: bool = True, on_batch: Callable[[], None] | None = None,
               sm_clock_mhz: list | None = None) -> list[float]:
    """User code (`linkroof compare`): seconds per `call(i)`, on the current stream of
    CuPy or PyTorch, with the same protocol. Ungated by default: user code may wait on
    the host, which would hold the gate until it times out; then the calls run in
    batches of at least `min_batch_s` each (more calls than `reps` where one is short,
    as a user's loop and torch.utils.benchmark run them), timed with the framework's own
    events (a torch program's ungated loop touches no CuPy). `ops_per_call` (the
    operations one call launches) sizes the gated batches to what the launch queue holds.
    `windows`, where given, gets each kept batch's host window (perf_counter seconds,
    from queueing its first call to its end event's wait): the clock samples taken in it
    give the batch's clock state; `on_batch()` runs after each batch's end event is
    waited for (a clock reading of that batch's end, outside the timed events). `lead`: a gated batch starts with an untimed call
    behind the gate, as an ungated one does (see _time_gated_batches)."""
    counter = iter(range(1 << 62))
    clock = _sm_clock(framework, 2 * UNGATED_SAMPLES + 2) if sm_clock_mhz is not None else None
    if not gated:
        out = _time_batches(framework, lambda: call(next(counter)), reps, min_batch_s, windows, on_batch, clock)
    else:
        device, s = _current_stream(framework)
        out = _time_gated_batches(device, s, lambda: call(next(counter)), reps, max(1, ops_per_call), min_batch_s,
                                  windows, lead, on_batch, clock)
    if clock is not None and sm_clock_mhz is not None:
        sm_clock_mhz.extend(clock.mhz(len(out)))
    return out


UNGATED_SAMPLES = 10
MAX_BATCH = 100_000


class SmClock:
    """Each timed batch's mean SM clock, measured on the GPU as nvbench does: a stamp
    (kernels/linkroof.cu sm0_stamp: SM 0's %globaltimer and clock64) before the batch's
    start event and after its end event, on the batch's stream; MHz = cycles / ns x 1e3."""

    def __init__(self, device: int, stream: Any, batches: int):
        from .cuda import sm_count

        cupy = cp()
        self.device, self.stream, self.sms = device, stream, sm_count(device)
        with cupy.cuda.Device(device):
            self.buf = cupy.zeros(4 * (batches + 2), dtype=cupy.uint64)
        self.n = 0  # stamps taken

    def stamp(self) -> None:
        if 2 * self.n + 2 > self.buf.size:
            return
        launch(self.device, "sm0_stamp", self.sms, 1, (self.buf[2 * self.n:],), stream=self.stream)
        self.n += 1

    def mhz(self, last: int) -> list[float]:
        """The last `last` batches' SM clocks (MHz), in order."""
        v = self.buf.get().tolist()
        pairs = [(v[4 * i], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3]) for i in range(self.n // 2)]
        out = [(c1 - c0) / (g1 - g0) * 1e3 if g1 > g0 else float("nan") for g0, c0, g1, c1 in pairs]
        return out[-last:] if last else []


def _current_stream(framework: str) -> tuple[int, Any]:
    """(device, CuPy stream) of the framework's current stream."""
    cupy = cp()
    if framework == "torch":
        import torch

        current = torch.cuda.current_stream()
        device = current.device.index if current.device.index is not None else torch.cuda.current_device()
        if hasattr(cupy.cuda.Stream, "from_external"):  # CuPy 14: torch's stream speaks the CUDA stream protocol
            return device, cupy.cuda.Stream.from_external(current)
        return device, cupy.cuda.ExternalStream(current.cuda_stream, device)
    return cupy.cuda.Device().id, cupy.cuda.get_current_stream()


def _sm_clock(framework: str, batches: int) -> SmClock | None:
    """An SmClock on the framework's current stream, or None where CuPy is not here (a
    torch-only install: the batch clocks then come from NVML alone)."""
    try:
        device, s = _current_stream(framework)
        return SmClock(device, s, batches)
    except Exception:  # noqa: BLE001 - no CuPy, or no kernel build: NVML's readings stand alone
        return None


class _Events:
    """An event pair on the current stream of CuPy or torch: record, wait, seconds."""

    def __init__(self, framework: str):
        if framework == "torch":
            import torch

            self.a, self.b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            self.start, self.stop = self.a.record, self.b.record
            self.wait = self.b.synchronize
            self.seconds = lambda: self.a.elapsed_time(self.b) / 1e3
        else:
            cupy = cp()
            self.a, self.b = cupy.cuda.Event(), cupy.cuda.Event()
            self.start, self.stop = self.a.record, self.b.record
            self.wait = self.b.synchronize
            self.seconds = lambda: cupy.cuda.get_elapsed_time(self.a, self.b) / 1e3


def _time_batches(framework: str, call: Callable[[], Any], calls: int, min_batch_s: float = 0.0,
                  windows: list | None = None, on_batch: Callable[[], None] | None = None,
                  clock: SmClock | None = None) -> list[float]:
    """Ungated user code: `calls` calls back to back in UNGATED_SAMPLES batches, an event
    before and after each batch only (an event pair around every call cost the host
    enough to slow a 9 us GEMM to 22.6 us, where torch.utils.benchmark read 13.0): seconds
    per call, one value per batch, as a user's own loop runs. An untimed call leads each
    batch, so the first event is stamped when that call ends, by which time the host
    has queued the next: the queue's start from empty (one host launch, 10-20 us for a
    torch op) is not in the batch (it put a 505 us kernel at 514). A short call's batch,
    whose calls the host cannot stay ahead of, is lengthened to `min_batch_s` (its size
    from the first batch, which is then dropped)."""
    samples = max(1, min(UNGATED_SAMPLES, calls))
    batch = max(1, calls // samples)
    ev = _Events(framework)  # set up before the first timed call
    out: list[float] = []
    spans: list[tuple[float, float]] = []
    while len(out) < samples:
        call()  # a lead call, untimed: the first event waits for it, and the host is ahead from then on
        t0 = time.perf_counter()
        if clock is not None:
            clock.stamp()
        ev.start()
        for _ in range(batch):
            call()
        ev.stop()
        if clock is not None:
            clock.stamp()
        ev.wait()
        if on_batch is not None:  # outside the events: the next batch starts with an untimed lead call
            on_batch()
        spans.append((t0, time.perf_counter()))
        out.append(ev.seconds() / batch)
        if len(out) == 1 and (longer := _lengthened(batch, out[0], min_batch_s, MAX_BATCH)):
            batch, out, spans, min_batch_s = longer, [], [], 0.0  # the first batch only sized the rest
    if windows is not None:
        windows.extend(spans)
    return out


def _lengthened(batch: int, per_call_s: float, min_batch_s: float, most: int) -> int | None:
    """The batch size that lasts `min_batch_s` at `per_call_s` a call (at most `most`),
    or None where `batch` already lasts that long or cannot grow."""
    if min_batch_s <= 0 or per_call_s * batch >= min_batch_s or batch >= most:
        return None
    return min(most, max(batch, int(-(-min_batch_s // max(per_call_s, 1e-9)))))


def _time_gated_batches(device: int, s: Any, call: Callable[[], Any], calls: int, ops_per_call: int,
                        min_batch_s: float = 0.0, windows: list | None = None, lead: bool = True,
                        on_batch: Callable[[], None] | None = None, clock: SmClock | None = None) -> list[float]:
    """User code behind the gate: UNGATED_SAMPLES batches, each queued whole behind the
    spin kernel (as many calls as the launch queue holds), an event before and after the
    batch only, then released: seconds per call, one value per batch, the GPU's own time
    with nothing of the host in it. An event between calls would make each call wait
    for the last one's end to be stamped (a 1024^3 GEMM read 8.5 us so, where its kernels
    back to back take 7). Short calls get batches of `min_batch_s`, sized as ungated."""
    cupy = cp()
    per_gate = max(1, (MAX_QUEUED - 4) // ops_per_call - (1 if lead else 0))  # events, stamps, the lead
    samples = max(1, min(UNGATED_SAMPLES, calls))
    batch = min(per_gate, max(1, calls // samples))
    out: list[float] = []
    spans: list[tuple[float, float]] = []
    with cupy.cuda.Device(device):
        a, b = cupy.cuda.Event(), cupy.cuda.Event()
        while len(out) < samples:
            flag = hold([device], [s])
            if lead:  # untimed: what the first call after the spin kernel pays is not in the batch
                call()
            if clock is not None:
                clock.stamp()
            a.record(s)
            for _ in range(batch):
                call()
            b.record(s)
            if clock is not None:
                clock.stamp()
            t0 = time.perf_counter()
            flag.release()
            s.synchronize()
            if on_batch is not None:
                on_batch()
            spans.append((t0, time.perf_counter()))
            if flag.timed_out:
                raise GateTimeout("the spin gate timed out before the calls were all queued; figures discarded "
                                  "(the code waits on the host, or the host was too slow)")
            out.append(cupy.cuda.get_elapsed_time(a, b) / 1e3 / batch)
            if len(out) == 1 and (longer := _lengthened(batch, out[0], min_batch_s, per_gate)):
                batch, out, spans, min_batch_s = longer, [], [], 0.0
    if windows is not None:
        windows.extend(spans)
    return out


def time_graph(devices: list[int], streams: list[Any], enqueue_rep: Callable[[list[Any]], None], reps: int,
               replays: int = 10) -> tuple[list[list[float]], Callable[[], None], Callable[[], None], bool]:
    """`reps` repetitions captured in one CUDA graph per stream, replayed `replays` times
    (nccl-tests -G): seconds per repetition, one value per replay (its time / reps), one
    list per stream; a function that replays the graph once more (to check what it
    computes); one that destroys the graphs (call it before freeing their buffers); and
    whether the replays ran behind the gate.

    The replays are queued behind the spin gate, with an event between consecutive
    ones: every GPU starts its first replay at the gate's release, not when Python got
    round to launching its graph (launched one after the other, the second GPU's graph
    started several microseconds late, and the first GPU's time waited for it)."""
    cupy = cp()
    rt = cupy.cuda.runtime
    for s in streams:
        s.synchronize()
    for d, s in zip(devices, streams):
        with cupy.cuda.Device(d):
            rt.streamBeginCapture(s.ptr, rt.streamCaptureModeRelaxed)
    try:
        for _ in range(reps):
            enqueue_rep(streams)
    finally:
        graphs = []
        for d, s in zip(devices, streams):
            with cupy.cuda.Device(d):
                graphs.append(rt.streamEndCapture(s.ptr))
    execs = []
    for d, g in zip(devices, graphs):
        with cupy.cuda.Device(d):
            execs.append(rt.graphInstantiate(g))

    def replay(_: Any = None) -> None:
        for d, s, x in zip(devices, streams, execs):
            with cupy.cuda.Device(d):
                rt.graphLaunch(x, s.ptr)

    def destroy() -> None:
        for s in streams:
            s.synchronize()
        for d, g, x in zip(devices, graphs, execs):
            with cupy.cuda.Device(d):
                rt.graphExecDestroy(x)
                rt.graphDestroy(g)

    replay()  # warm-up: the first launch uploads the graph
    try:
        times = time_repetitions(devices, streams, replay, replays, warmup=0, settle=1)
        gated = True
    except GateTimeout:
        times = time_repetitions(devices, streams, replay, replays, warmup=0, gated=False)
        gated = False
    return [[t / reps for t in ts] for ts in times], replay, destroy, gated


def time_host_loop(devices: list[int], streams: list[Any], enqueue_rep: Callable[[list[Any]], None], reps: int,
                   loops: int = 9) -> list[list[float]]:
    """Per-call time with the host's launch in it, as nccl-tests without -G and as a
    user's Python loop sees it: `reps` repetitions issued back to back from Python with
    an event before and after the loop; one value per loop (its time / reps). Python's
    garbage collector is held off during the loops (its pauses are not the launch)."""
    import gc

    cupy = cp()
    enqueue_rep(streams)  # warm
    for s in streams:
        s.synchronize()
    out: list[list[float]] = [[] for _ in streams]
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(loops):
            starts = _marks(devices, streams)
            for _ in range(reps):
                enqueue_rep(streams)
            ends = _marks(devices, streams)
            for lst, a, b in zip(out, starts, ends):
                b.synchronize()
                lst.append(cupy.cuda.get_elapsed_time(a, b) / 1e3 / reps)
    finally:
        if was_enabled:
            gc.enable()
    return out


def _marks(devices: list[int], streams: list[Any]) -> list[Any]:
    """An event recorded now on each stream."""
    cupy = cp()
    events = []
    for d, s in zip(devices, streams):
        with cupy.cuda.Device(d):
            e = cupy.cuda.Event()
            e.record(s)
            events.append(e)
    return events
