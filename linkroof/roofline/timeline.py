"""The GPU timeline of a call, as intervals: the one home of busy, idle, overlapped and
exposed time. Pure arithmetic on activity records (kernels, copies, memsets with their
device, stream, start and end), whoever recorded them: CUPTI's Activity API for
`compare`, a PyTorch profiler trace for `trace`. A call, a trace step and a scored
candidate are explained by the same functions.

Every figure here is measured from the intervals; what is inferred (a kernel's class
taken from its name) says so in its `how`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..schema import KernelGroup, TimelineSummary
from ..units import format_time

# What a kernel's name says it does, where no counter says so: the class and how it
# was known. Communication first (NCCL's kernels, whatever else they do).
COMMUNICATION = re.compile(r"nccl|nvshmem|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|sendrecv|"
                           r"cross_device|one_?shot|two_?shot", re.I)
COMPUTE = re.compile(r"gemm|gemv|matmul|mma|wgmma|hmma|xmma|cutlass|cublas|sm90_|sm80_|conv|attention|flash|"
                     r"fmha|bmm|dot", re.I)
MEMORY = re.compile(r"elementwise|vectorized|unrolled|copy|fill|memset|reduce|norm|softmax|cat|index|gather|"
                    r"scatter|transpose|cast|multiply|add|mul|scale|where|cupy_", re.I)

# NCCL kernel names by collective, newest first: ncclDevKernel_AllReduce_Sum_f32_RING_LL,
# ncclKernel_AllGather_RING_LL_Sum_int8_t, ...; older ones (ncclKernel_SendRecv_...) carry
# several collectives under one name and stay unnamed
NCCL_COLLECTIVES = (("AllReduce", "all_reduce"), ("AllGather", "all_gather"), ("ReduceScatter", "reduce_scatter"),
                    ("AllToAll", "all_to_all"), ("Broadcast", "broadcast"), ("Reduce", "reduce"))


@dataclass(frozen=True)
class Activity:
    """One activity record: a kernel, a copy or a memset on one device and stream."""

    kind: str  # "kernel" | "memcpy" | "memset"
    name: str
    device: int
    stream: int
    start_ns: int
    end_ns: int
    correlation: int = 0
    grid: tuple[int, int, int] = (0, 0, 0)
    block: tuple[int, int, int] = (0, 0, 0)
    bytes: int = 0  # copies and memsets
    copy_kind: str = ""  # "HtoD" | "DtoH" | "DtoD" | "PtoP" | ...

    @property
    def ns(self) -> int:
        return max(0, self.end_ns - self.start_ns)


def kernel_class(a: Activity) -> tuple[str, str]:
    """(class, how it was known): 'communication', 'compute', 'memory', 'copy' or
    'other'. Copies and memsets by their kind (a peer copy is communication); kernels by
    their name, which is an inference and says so."""
    if a.kind == "memcpy":
        return ("communication", "a peer copy") if a.copy_kind == "PtoP" else ("copy", f"a {a.copy_kind or 'copy'}")
    if a.kind == "memset":
        return "memory", "a memset"
    for cls, pattern in (("communication", COMMUNICATION), ("compute", COMPUTE), ("memory", MEMORY)):
        if pattern.search(a.name):
            return cls, "inferred from the kernel's name"
    return "other", "not known from the name"


def nccl_collective(name: str) -> str | None:
    """The collective an NCCL kernel's name names, or None (a SendRecv kernel of NCCL
    2.1x runs several collectives; a generic kernel names none)."""
    if "nccl" not in name.lower():
        return None
    for key, coll in NCCL_COLLECTIVES:
        if re.search(rf"(?<![A-Za-z]){key}(?![a-z])", name):
            return coll
    return None


# ------------------------------------------------------------------ intervals


Interval = tuple[int, int]


def union(intervals: Iterable[Interval]) -> list[Interval]:
    """Merged, sorted, non-overlapping intervals."""
    out: list[list[int]] = []
    for s, e in sorted(i for i in intervals if i[1] > i[0]):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def length(intervals: Iterable[Interval]) -> int:
    return sum(e - s for s, e in union(intervals))


def intersect(a: Sequence[Interval], b: Sequence[Interval]) -> list[Interval]:
    """The intervals covered by both `a` and `b` (each merged first)."""
    a, b = union(a), union(b)
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if s < e:
            out.append((s, e))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def clip(intervals: Iterable[Interval], lo: int, hi: int) -> list[Interval]:
    return [(max(s, lo), min(e, hi)) for s, e in intervals if min(e, hi) > max(s, lo)]


# ------------------------------------------------------------------ summaries


@dataclass
class CallWindow:
    """One call's share of the timeline: from where the host began it (or its first
    activity) to the end of its last activity."""

    start_ns: int
    end_ns: int
    activities: list[Activity] = field(default_factory=list)


def split_calls(activities: Sequence[Activity], call_starts_ns: Sequence[int],
                host_of: dict[int, int] | None = None) -> list[CallWindow]:
    """The activities of each call: an activity belongs to the call whose host start
    precedes its launch (`host_of`: correlation id -> the host timestamp of the API call
    that launched it; without it, the activity's own start). A call's window runs from
    its host start to its last activity's end, so host and launch time before its first
    kernel is inside it."""
    starts = sorted(call_starts_ns)
    calls = [CallWindow(s, s) for s in starts]
    for a in activities:
        t = host_of.get(a.correlation, a.start_ns) if host_of else a.start_ns
        i = _index(starts, t)
        if i is None:
            continue
        calls[i].activities.append(a)
        calls[i].end_ns = max(calls[i].end_ns, a.end_ns)
    return calls


def _index(starts: Sequence[int], t: int) -> int | None:
    import bisect

    i = bisect.bisect_right(starts, t) - 1
    return i if i >= 0 else None


def summarize(activities: Sequence[Activity], call_starts_ns: Sequence[int], host_of: dict[int, int] | None = None,
              source: str = "cupti", rank: int | None = None) -> TimelineSummary:
    """What the GPU did during the calls, per call, measured from the intervals:

    - span: the steady period, from the first call's start to the last activity's end,
      over the number of calls (back-to-back calls overlap their launch with the work
      before them, as the timed loop does);
    - busy and idle: the union of every activity on the call's GPUs, and the rest of the
      span (the GPU waited for the host: launch- or host-bound time);
    - communication overlapped and exposed: communication intervals with compute or
      memory work beside them, and without;
    - per kernel name: launches per call, time per call, class."""
    calls = split_calls(activities, call_starts_ns, host_of)
    n = len(calls)
    if not n or not any(c.activities for c in calls):
        return TimelineSummary(source=source, calls=n, rank=rank,
                               notes=("no GPU activity was recorded during the calls",))
    acts = [a for c in calls for a in c.activities]
    t0, t1 = calls[0].start_ns, max(a.end_ns for a in acts)
    span = t1 - t0
    busy = union((a.start_ns, a.end_ns) for a in acts)
    by_class: dict[str, list[Interval]] = {}
    for a in acts:
        by_class.setdefault(kernel_class(a)[0], []).append((a.start_ns, a.end_ns))
    comm = union(by_class.get("communication", []))
    work = union(by_class.get("compute", []) + by_class.get("memory", []) + by_class.get("other", []) +
                 by_class.get("copy", []))
    overlapped = length(intersect(comm, work))
    groups: dict[tuple[str, str], list[Activity]] = {}
    for a in acts:
        groups.setdefault((a.kind, a.name), []).append(a)
    kernels = []
    for (kind, name), members in sorted(groups.items(), key=lambda kv: -sum(a.ns for a in kv[1])):
        cls, how = kernel_class(members[0])
        kernels.append(KernelGroup(
            name=name, kind=kind, kernel_class=cls, class_basis=how, launches_per_call=len(members) / n,
            time_per_call_s=sum(a.ns for a in members) * 1e-9 / n,
            median_s=sorted(a.ns for a in members)[len(members) // 2] * 1e-9,
            grid=members[0].grid, block=members[0].block, bytes_per_call=sum(a.bytes for a in members) / n,
            collective=nccl_collective(name) or ""))
    per_call = [len(c.activities) for c in calls]
    streams = len({(a.device, a.stream) for a in acts})
    class_time = {cls: length(iv) * 1e-9 / n for cls, iv in by_class.items()}
    return TimelineSummary(
        source=source, calls=n, rank=rank, span_s=span * 1e-9 / n, busy_s=length(busy) * 1e-9 / n,
        idle_s=(span - length(busy)) * 1e-9 / n, activities_per_call=sum(per_call) / n,
        kernels_per_call=sum(1 for a in acts if a.kind == "kernel") / n, streams=streams,
        devices=tuple(sorted({a.device for a in acts})),
        communication_s=length(comm) * 1e-9 / n, overlapped_communication_s=overlapped * 1e-9 / n,
        exposed_communication_s=(length(comm) - overlapped) * 1e-9 / n,
        class_s=tuple(sorted(class_time.items())), kernels=tuple(kernels), intervals=_drawn(calls, t0))


DRAWN = 2000  # intervals kept for the figure: the first calls', up to this many


def _drawn(calls: list[CallWindow], t0: int) -> tuple[tuple[int, int, str, int, int], ...]:
    out: list[tuple[int, int, str, int, int]] = []
    for c in calls[:3]:
        for a in sorted(c.activities, key=lambda a: a.start_ns):
            if len(out) >= DRAWN:
                return tuple(out)
            out.append((a.device, a.stream, kernel_class(a)[0], a.start_ns - t0, a.end_ns - t0))
    return tuple(out)


def measured_parts(t: TimelineSummary) -> list[tuple[str, float, str]]:
    """The call's period split by measurement, additive (seconds per call): the GPU idle
    (waiting for the host), exposed communication, and the busy time of each class of
    work beside no communication; each with how it was measured."""
    if not t.span_s:
        return []
    parts = [("idle (host / launch)", t.idle_s, "the GPU ran nothing: it waited for the host to launch work "
                                                 "(measured: the span less the union of every activity)")]
    if t.exposed_communication_s:
        parts.append(("communication (exposed)", t.exposed_communication_s,
                      "communication with no other work beside it (measured from the intervals)"))
    rest = t.busy_s - t.exposed_communication_s  # busy with work (communication beside it is overlapped)
    classes = dict(t.class_s)
    work = {k: v for k, v in classes.items() if k != "communication" and v > 0}
    total = sum(work.values())
    for cls, v in sorted(work.items(), key=lambda kv: -kv[1]):
        share = rest * v / total if total else 0.0  # classes that ran at once share the time they share
        named = {k.name for k in t.kernels if k.kernel_class == cls}
        basis = ("by the kernel's name (inferred)" if any(k.class_basis.startswith("inferred") for k in t.kernels
                                                         if k.kernel_class == cls) else "by the record's kind")
        parts.append((f"{cls} kernels", share, f"{len(named)} kernel name(s), class {basis}; measured time"))
    return parts


UNATTRIBUTED = "timed beyond the recorded calls (unattributed)"


def timed_idle(t: TimelineSummary, period_s: float) -> float:
    """The idle part of a timed call of `period_s`: the period less the recorded kernels'
    busy time, but no more than the idle recorded (recording only adds host time, so a
    timed call cannot have waited longer for the host than the recorded one did)."""
    return min(max(0.0, period_s - t.busy_s), t.idle_s)


def timed_parts(t: TimelineSummary, measured_s: float) -> tuple[list[tuple[str, float, str]], str | None]:
    """The measured parts (measured_parts) of a timed median `measured_s`, the timeline
    having been recorded in a pass of its own: the GPU's busy time is the recorded
    kernels' own (recording does not slow them; it slows the host), the idle part is
    timed_idle, and what the median has beyond both is unattributed; where the busy time
    exceeds the median, the parts are scaled to it, and the note says by how much."""
    parts = measured_parts(t)
    busy = [(k, v, how) for k, v, how in parts if not k.startswith("idle")]
    busy_s = sum(v for _, v, _ in busy)
    if not parts or measured_s <= 0:
        return parts, None
    if measured_s >= busy_s:
        gap = measured_s - busy_s
        idle = timed_idle(t, measured_s)
        out = [("idle (host / launch)", idle, "the timed median less the GPU's busy time of the recorded calls, "
                f"at most the recorded idle ({format_time(t.idle_s)} a call; recording costs host time)")]
        if gap > idle:
            out.append((UNATTRIBUTED, gap - idle, "the timed median exceeds the recorded calls' busy and idle time: "
                        "the timed kernels ran slower than the recorded ones (inputs cycled out of L2, other "
                        "clocks) or the host paused; not attributed"))
        return out + busy, None
    scale = measured_s / busy_s
    return [(k, v * scale, how) for k, v, how in busy], (
        f"the recorded kernels took {busy_s / measured_s - 1:.1%} longer per call than the timed calls: "
        "the measured parts are scaled to the timed median")


def flops_text(counters: dict[str, float]) -> str:
    """A kernel's counted FLOPs per data type ('bf16 2.15e+09, fp32 1e+06'), or '0'."""
    return ", ".join(f"{k.split(':', 1)[1]} {v:.3g}" for k, v in sorted(counters.items())
                     if k.startswith("flops:") and v > 0) or "0"


LAUNCH_BOUND = 0.5  # idle over this share of the call: the host, not the GPU, sets the pace


def launch_verdict(t: TimelineSummary, host_s_per_call: float, measured_s: float | None = None) -> str | None:
    """'launch-bound' only when the GPU was idle for more than half of the call: the
    timed median (`measured_s`, else the recorded period) less the recorded kernels'
    busy time. It names the kernel count and the host's time per kernel, and what would
    help. None otherwise."""
    period = measured_s if measured_s else t.span_s
    if not period or not t.busy_s and not t.kernels_per_call:
        return None
    idle = timed_idle(t, period)
    if idle <= LAUNCH_BOUND * period:
        return None
    k = max(1.0, t.kernels_per_call)
    per_kernel = period / k
    return (f"launch-bound (measured): the GPU was idle {idle / period:.0%} of each call, waiting for the host, "
            f"which issued {k:g} kernel{'' if k == 1 else 's'} a call at {per_kernel * 1e6:.1f} us each; fusing the kernels, or "
            "capturing the call in a CUDA graph, would take the host out of the loop")


# ------------------------------------------------------------------ recordings


def to_record(activities: Sequence[Activity], call_starts_ns: Sequence[int], host_of: dict[int, int],
              meta: dict | None = None) -> dict:
    """A recorded timeline as plain JSON (the tests' recordings, captured on the device)."""
    return {"format": "linkroof-timeline", "version": 1, "meta": meta or {},
            "call_starts_ns": list(call_starts_ns), "host_of": {str(k): v for k, v in host_of.items()},
            "activities": [[a.kind, a.name, a.device, a.stream, a.start_ns, a.end_ns, a.correlation, list(a.grid),
                            list(a.block), a.bytes, a.copy_kind] for a in activities]}


def from_record(doc: dict) -> tuple[list[Activity], list[int], dict[int, int]]:
    if not isinstance(doc, dict) or doc.get("format") != "linkroof-timeline":
        raise ValueError("not a linkroof timeline recording")
    acts = [Activity(k, n, int(d), int(s), int(t0), int(t1), int(c), tuple(g), tuple(b), int(by), ck)
            for k, n, d, s, t0, t1, c, g, b, by, ck in doc["activities"]]
    return acts, [int(x) for x in doc["call_starts_ns"]], {int(k): int(v) for k, v in doc["host_of"].items()}


def short_name(name: str) -> str:
    """A mangled kernel name's own identifier (_ZN2at6native...29vectorized_layer_norm_kernelI...
    -> vectorized_layer_norm_kernel), or the name, cut, where it is not Itanium-mangled."""
    m = re.match(r"_Z(N?)(.*)", name)
    if not m:
        return name[:80]
    rest, last = m.group(2), None
    while True:
        for prefix in ("L", "K", "St"):
            if rest.startswith(prefix) and len(rest) > len(prefix) and rest[len(prefix)].isdigit():
                rest = rest[len(prefix):]
        d = re.match(r"(\d+)", rest)
        if not d:
            break
        n = int(d.group(1))
        ident = rest[len(d.group(1)):len(d.group(1)) + n]
        if len(ident) < n:
            break
        last, rest = ident, rest[len(d.group(1)) + n:]
        if not m.group(1):
            break
    return last or name[:80]
