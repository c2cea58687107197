"""The GPU timeline of a call, as intervals: the one home of busy, idle, overlapped and
exposed time. Pure arithmetic on activity records (kernels, copies, memsets with their
device, stream, start and end), whoever recorded them: CUPTI's Activity API for
`compare`, a PyTorch profiler trace for `trace`. A call, a trace step and a scored
candidate are explained by the same functions.

Every figure here is measured from the intervals; what is inferred (a kernel's class
taken from its name) says so in its `how`.
"""

from __future__ import annotations

import contextvars
import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..schema import HostSummary, KernelGroup, TimelineSummary
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


@dataclass(frozen=True, slots=True)
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


class Activities(Sequence):
    """Activities held in columns: a trace's million kernels as objects took about 210 B
    each (and twice that at once while the analysis walked them), these about 40. Each
    distinct (kind, name, device, stream, grid, block, copy kind) is kept once in `table`
    and numbered; per activity, its number, start, end, correlation and bytes. Items are
    Activity objects, made when asked; an index `pin`ned (a collective's kernel) gives
    the same object every time, so that a set of such objects' ids (Trace.comm_ids) holds
    while the columns live. Compares equal to any sequence of the same activities."""

    __slots__ = ("table", "key", "start", "end", "corr", "nbytes", "_keys", "_pinned", "_order")

    def __init__(self) -> None:
        from array import array

        self.table: list[tuple] = []
        self.key, self.start, self.end, self.corr, self.nbytes = (array("q") for _ in range(5))
        self._keys: dict = {}
        self._pinned: dict[int, Activity] = {}
        self._order: Any = None

    @classmethod
    def of(cls, acts: Iterable[Activity]) -> "Activities":
        """`acts` in columns; a given Activities as it is. Every object given is pinned:
        a caller's own objects keep their identity (ids taken of them still hold)."""
        if isinstance(acts, Activities):
            return acts
        out = cls()
        for a in acts:
            out._pinned[len(out)] = a
            out.add(a.kind, a.name, a.device, a.stream, a.start_ns, a.end_ns, a.correlation, a.grid, a.block,
                    a.bytes, a.copy_kind)
        return out

    def add(self, kind: str, name: str, device: int, stream: int, start: int, end: int, corr: int, grid: tuple,
            block: tuple, nbytes: int, copy_kind: str) -> None:
        t = (kind, name, device, stream, grid, block, copy_kind)
        k = self._keys.get(t)
        if k is None:
            k = self._keys[t] = len(self.table)
            self.table.append(t)
        self.key.append(k)
        self.start.append(start)
        self.end.append(end)
        self.corr.append(corr)
        self.nbytes.append(nbytes)
        self._order = None

    def extend(self, other: "Activities") -> None:
        """The activities of `other` after these (a later part of the same trace)."""
        from array import array

        ours = array("q")
        for t in other.table:
            k = self._keys.get(t)
            if k is None:
                k = self._keys[t] = len(self.table)
                self.table.append(t)
            ours.append(k)
        n = len(self)
        self.key += array("q", map(ours.__getitem__, other.key))
        self.start += other.start
        self.end += other.end
        self.corr += other.corr
        self.nbytes += other.nbytes
        for i, a in other._pinned.items():
            self._pinned[n + i] = a
        self._order = None

    def take(self, rows: Iterable[int]) -> "Activities":
        """The activities at `rows`, in that order (pinned objects stay pinned)."""
        out = Activities()
        out.table, out._keys = list(self.table), dict(self._keys)
        for i in rows:
            a = self._pinned.get(i)
            if a is not None:
                out._pinned[len(out.key)] = a
            out.key.append(self.key[i])
            out.start.append(self.start[i])
            out.end.append(self.end[i])
            out.corr.append(self.corr[i])
            out.nbytes.append(self.nbytes[i])
        return out

    def _make(self, i: int) -> Activity:
        kind, name, device, stream, grid, block, copy_kind = self.table[self.key[i]]
        return Activity(kind, name, device, stream, self.start[i], self.end[i], self.corr[i], grid, block,
                        self.nbytes[i], copy_kind)

    def pin(self, i: int) -> Activity:
        """Activity `i`, the same object from now on."""
        a = self._pinned.get(i)
        if a is None:
            a = self._pinned[i] = self._make(i)
        return a

    def __len__(self) -> int:
        return len(self.start)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("activity index out of range")
        a = self._pinned.get(i)
        return a if a is not None else self._make(i)

    def __iter__(self) -> Any:
        table, pinned = self.table, self._pinned
        for i, (k, s, e, c, b) in enumerate(zip(self.key, self.start, self.end, self.corr, self.nbytes)):
            a = pinned.get(i) if pinned else None
            if a is None:
                kind, name, device, stream, grid, block, copy_kind = table[k]
                a = Activity(kind, name, device, stream, s, e, c, grid, block, b, copy_kind)
            yield a

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, (Sequence, Activities)) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Activities({len(self)} activities, {len(self.table)} distinct)"

    def __getstate__(self) -> tuple:
        return self.table, self.key, self.start, self.end, self.corr, self.nbytes

    def __setstate__(self, state: tuple) -> None:
        self.table, self.key, self.start, self.end, self.corr, self.nbytes = state
        self._keys = {t: k for k, t in enumerate(self.table)}
        self._pinned, self._order = {}, None

    def by_start(self) -> Any:
        """The rows in order of start (ties: as read), or None where they are in that
        order already (a profiler writes them nearly so); kept until the next add."""
        if self._order is None:
            from itertools import islice

            s = self.start
            if all(a <= b for a, b in zip(s, islice(s, 1, None))):
                self._order = False
            else:
                from array import array

                self._order = array("q", sorted(range(len(s)), key=s.__getitem__))
        return self._order or None

    def starts_by_start(self) -> Any:
        """The starts in order (see by_start)."""
        order = self.by_start()
        if order is None:
            return self.start
        from array import array

        s = self.start
        return array("q", map(s.__getitem__, order))

    def device_of_key(self) -> list[int]:
        return [t[2] for t in self.table]

    def comm_mask(self, comm_ids: set[int]) -> bytearray:
        """Per activity, 1 where it is one of the objects whose ids `comm_ids` holds (only
        a pinned object can be: an object made for one look-up is gone after it)."""
        mask = bytearray(len(self))
        if comm_ids:
            for i, a in self._pinned.items():
                if id(a) in comm_ids:
                    mask[i] = 1
        return mask


# The classes of GPU work, in the order they are named: communication (NCCL's kernels and
# peer copies), transfer (copies between host and device), compute, memory (memory-bound
# kernels, device-to-device copies, memsets) and other (a kernel whose name says nothing)
CLASSES = ("communication", "transfer", "compute", "memory", "other")
FROM_NAME = "from its name (inferred)"


def kernel_class(a: Activity) -> tuple[str, str]:
    """(class, how it was known): one of CLASSES. Copies and memsets by their record's
    kind (a peer copy is communication, a host<->device copy a transfer, a device copy
    memory); kernels by their name, which is an inference and says so (counters, where
    counted, replace it: baseline.kernel_group_placements, through `summarize(classes=)`)."""
    given = _CLASSES_GIVEN.get()
    if given and a.kind == "kernel" and a.name in given:
        return given[a.name]
    return _classify(a.kind, a.name, a.copy_kind)


# kernel name -> (class, how known) where counters classed it: every part of one summary
# (the decomposition, the pieces, the critical path, the table) then says the same class
_CLASSES_GIVEN: contextvars.ContextVar[dict[str, tuple[str, str]] | None] = contextvars.ContextVar(
    "linkroof_kernel_classes", default=None)


@functools.lru_cache(maxsize=8192)  # a trace's kernels have few names: the regexes ran per activity
def _classify(kind: str, name: str, copy_kind: str) -> tuple[str, str]:
    if kind == "memcpy":
        if copy_kind == "PtoP":
            return "communication", "a peer copy (the record's kind)"
        if copy_kind in ("DtoD", "DtoA", "AtoD", "AtoA"):
            return "memory", f"a {copy_kind} copy (the record's kind)"
        return "transfer", f"a {copy_kind or 'host'} copy (the record's kind)"
    if kind == "memset":
        return "memory", "a memset (the record's kind)"
    for cls, pattern in (("communication", COMMUNICATION), ("compute", COMPUTE), ("memory", MEMORY)):
        if pattern.search(name):
            return cls, FROM_NAME
    return "other", "not known from its name (no counters)"


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


@dataclass
class DeviceOverlap:
    """One device's share of a set of calls, from a sweep over its intervals (ns)."""

    busy: int = 0
    class_busy: dict[str, int] = field(default_factory=dict)  # the union of each class's intervals
    class_alone: dict[str, int] = field(default_factory=dict)  # each class with no other class beside it
    pairs: dict[tuple[str, str], int] = field(default_factory=dict)  # two classes at once (sorted pair)
    pieces: dict[str, int] = field(default_factory=dict)  # "compute", "compute + transfer", ...


def piece_name(classes: Iterable[str]) -> str:
    """The name of a piece of time in which these classes ran at once ("compute +
    transfer"), in CLASSES' order, then any class of the caller's own (`summarize(classes=)`)
    by name: never dropped, or its piece would be named ""."""
    given = set(classes)
    return " + ".join([c for c in CLASSES if c in given] + sorted(given - set(CLASSES)))


def communication_exposure(activities: Sequence[Activity], lo: int | None = None, hi: int | None = None,
                           class_of: Any = None) -> tuple[int, int]:
    """(communication's busy ns, its exposed ns): per device, communication with no other
    class beside it on that device, the most of any device. The one rule of exposure, for
    compare, score and trace alike."""
    per = overlap(activities, lo, hi, class_of)
    return (max((d.class_busy.get("communication", 0) for d in per.values()), default=0),
            max((d.class_alone.get("communication", 0) for d in per.values()), default=0))


def overlap(activities: Sequence[Activity], lo: int | None = None, hi: int | None = None,
            class_of: Any = None) -> dict[int, DeviceOverlap]:
    """Per device, a sweep over the activities' intervals (clipped to [lo, hi] where
    given): each class's busy time, its time alone (no other class beside it on that
    device: exposed), every pair's time at once, and the pieces of the busy time by the
    set of classes running. Work on another device never hides a class: exposure is per
    device, in compare, score and trace alike."""
    events: dict[int, list[tuple[int, int, str]]] = {}
    for a in activities:
        s, e = a.start_ns, a.end_ns
        if lo is not None:
            s = max(s, lo)
        if hi is not None:
            e = min(e, hi)
        if e <= s:
            continue
        cls = class_of(a) if class_of is not None else kernel_class(a)[0]
        ev = events.setdefault(a.device, [])
        ev.append((s, 1, cls))
        ev.append((e, -1, cls))
    out: dict[int, DeviceOverlap] = {}
    for dev, ev in events.items():
        ev.sort(key=lambda x: (x[0], x[1]))
        o = DeviceOverlap()
        active: dict[str, int] = {}
        prev = ev[0][0]
        for t, delta, cls in ev:
            if t > prev and active:
                d = t - prev
                running = sorted(active)
                o.busy += d
                name = piece_name(running)
                o.pieces[name] = o.pieces.get(name, 0) + d
                for c in running:
                    o.class_busy[c] = o.class_busy.get(c, 0) + d
                if len(running) == 1:
                    o.class_alone[running[0]] = o.class_alone.get(running[0], 0) + d
                for i, a_ in enumerate(running):
                    for b_ in running[i + 1:]:
                        o.pairs[(a_, b_)] = o.pairs.get((a_, b_), 0) + d
            prev = t
            active[cls] = active.get(cls, 0) + delta
            if active[cls] <= 0:
                del active[cls]
        out[dev] = o
    return out


def critical_path(activities: Sequence[Activity], lo: int, hi: int) -> tuple[dict[str, int], list[Activity]]:
    """The chain of activities that set a call's length, walked back from the one that
    ended last: each activity's predecessor is the one that ended last before it began
    (its stream's previous activity where that ended as late). Inferred, not recorded:
    CUPTI gives no dependency edges, so a wait across streams is taken from the order.
    ({class or "idle": ns on the path}, the path's activities). Its length is hi - lo."""
    acts = sorted((a for a in activities if a.end_ns > a.start_ns), key=lambda a: a.end_ns)
    on: dict[str, int] = {}
    path: list[Activity] = []
    if not acts:
        return {"idle": max(0, hi - lo)}, path
    import bisect

    ends = [a.end_ns for a in acts]
    cur = acts[-1]
    t_end = max(hi, cur.end_ns)
    if t_end > cur.end_ns:
        on["idle"] = on.get("idle", 0) + t_end - cur.end_ns
    while True:
        path.append(cur)
        cls = kernel_class(cur)[0]
        on[cls] = on.get(cls, 0) + (cur.end_ns - max(cur.start_ns, lo))
        if cur.start_ns <= lo:
            break
        i = bisect.bisect_right(ends, cur.start_ns) - 1
        if i < 0:
            on["idle"] = on.get("idle", 0) + cur.start_ns - lo
            break
        best = acts[i]
        for j in range(i, -1, -1):  # among those ending last, the same stream's first
            if acts[j].end_ns < best.end_ns:
                break
            if (acts[j].device, acts[j].stream) == (cur.device, cur.stream):
                best = acts[j]
                break
        gap = cur.start_ns - best.end_ns
        if gap > 0:
            on["idle"] = on.get("idle", 0) + gap
        cur = best
    return on, path


def shorten_bounds(activities: Sequence[Activity], lo: int, hi: int, on_path: dict[str, int]) -> list[tuple[str, int, str]]:
    """Per class: the most the call could shorten were that class's work free. At most its
    time on the critical path, and never more than the span less the longest stream of
    the other classes' work (that work is serial on its stream and stays). Inferred."""
    out = []
    span = hi - lo
    for cls in CLASSES:
        if not on_path.get(cls):
            mine = [a for a in activities if kernel_class(a)[0] == cls]
            if mine:
                inside = sum(max(0, min(a.end_ns, hi) - max(a.start_ns, lo)) for a in mine)
                out.append((cls, 0, "not on the critical path: other work ran beside all of it" if inside > 0
                            else "not on the critical path: its work took no time inside the call"))
            continue
        per_stream: dict[tuple[int, int], int] = {}
        for a in activities:
            if kernel_class(a)[0] != cls:
                per_stream[(a.device, a.stream)] = per_stream.get((a.device, a.stream), 0) + max(
                    0, min(a.end_ns, hi) - max(a.start_ns, lo))
        rest = max(per_stream.values(), default=0)
        at_most = max(0, min(on_path[cls], span - rest))
        why = (f"its {format_time(on_path[cls] * 1e-9)} on the critical path"
               + (f", less what the other work's longest stream ({format_time(rest * 1e-9)}) would still take"
                  if span - rest < on_path[cls] else ""))
        out.append((cls, at_most, why))
    return out


def summarize(activities: Sequence[Activity], call_starts_ns: Sequence[int], host_of: dict[int, int] | None = None,
              source: str = "cupti", rank: int | None = None,
              host_calls: Sequence[HostCall] | None = None,
              classes: dict[str, tuple[str, str]] | None = None) -> TimelineSummary:
    """What the GPU did during the calls, per call, measured from the intervals (with
    `classes`, kernel name -> (class, how known), those kernels' classes as counters
    found them, in every part):

    - span: the steady period, from the first call's start to the last activity's end,
      over the number of calls (back-to-back calls overlap their launch with the work
      before them, as the timed loop does);
    - busy and idle: the union of every activity on the call's GPUs, and the rest of the
      span (the GPU waited for the host);
    - per device (the busiest one's shown): each class's busy time, its time alone
      (exposed), each pair's time at once, and the span's pieces by the classes running;
      communication overlapped and exposed are communication's time beside other work
      on its device and alone;
    - the critical path (inferred from the order) and what shortening each class could
      save at most;
    - per kernel name: launches per call, time per call, class;
    - with `host_calls` (CUPTI's API records of the same calls): what the host did while
      the GPU idled (host_causes)."""
    if classes:
        token = _CLASSES_GIVEN.set(dict(classes))
        try:
            return summarize(activities, call_starts_ns, host_of, source, rank, host_calls)
        finally:
            _CLASSES_GIVEN.reset(token)
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
    per_dev = overlap(acts)
    dev = max(per_dev, key=lambda d: per_dev[d].busy)
    o = per_dev[dev]
    comm_total, comm_alone = communication_exposure(acts)
    pieces = dict(o.pieces)
    idle_dev = span - o.busy
    if idle_dev > 0:
        pieces["idle"] = idle_dev
    on_path: dict[str, int] = {}
    shorten: dict[str, list] = {}
    for c in calls:
        if not c.activities:
            continue
        lo = c.start_ns
        hi = max(a.end_ns for a in c.activities)
        p, _ = critical_path(c.activities, lo, hi)
        for k, v in p.items():
            on_path[k] = on_path.get(k, 0) + v
        for cls, v, why in shorten_bounds(c.activities, lo, hi, p):
            shorten.setdefault(cls, []).append((v, why))
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
    notes = []
    if len(per_dev) > 1:
        notes.append(f"the call ran on {len(per_dev)} GPUs; the pieces are GPU{dev}'s (the busiest), and exposure "
                     "is counted on each GPU by itself")
    host = host_causes(calls, host_calls) if host_calls else None
    return TimelineSummary(
        source=source, calls=n, rank=rank, span_s=span * 1e-9 / n, busy_s=length(busy) * 1e-9 / n,
        idle_s=(span - length(busy)) * 1e-9 / n, activities_per_call=sum(per_call) / n,
        kernels_per_call=sum(1 for a in acts if a.kind == "kernel") / n, streams=streams,
        devices=tuple(sorted({a.device for a in acts})),
        communication_s=comm_total * 1e-9 / n, overlapped_communication_s=(comm_total - comm_alone) * 1e-9 / n,
        exposed_communication_s=comm_alone * 1e-9 / n,
        class_s=tuple(sorted(class_time.items())), kernels=tuple(kernels), intervals=_drawn(calls, t0),
        notes=tuple(notes), device=dev,
        class_alone_s=tuple((c, o.class_alone.get(c, 0) * 1e-9 / n) for c in CLASSES if c in o.class_busy),
        overlap_s=tuple((a_, b_, v * 1e-9 / n) for (a_, b_), v in sorted(o.pairs.items())),
        pieces=tuple(sorted(((k, v * 1e-9 / n) for k, v in pieces.items()), key=lambda kv: -kv[1])),
        critical_path_s=tuple(sorted(((k, v * 1e-9 / n) for k, v in on_path.items()), key=lambda kv: -kv[1])),
        shorten_s=tuple((cls, sum(v for v, _ in vs) * 1e-9 / n, _shorten_why(vs, on_path.get(cls, 0), n))
                        for cls, vs in shorten.items()),
        host=host)


def _shorten_why(per_call: list[tuple[int, str]], on_path_ns: int, n: int) -> str:
    """Why a class could save what it could, in the same unit as the saving (per call, the
    calls' mean): its mean time on the critical path, not the first call's sum."""
    if on_path_ns <= 0:
        return per_call[0][1]  # on the path in no call: the reason is the same in each
    at_most = sum(v for v, _ in per_call)
    return (f"its {format_time(on_path_ns * 1e-9 / n)} a call on the critical path"
            + (", less what the other work's longest stream would still take" if at_most < on_path_ns else ""))


DRAWN = 2000  # intervals kept for the figure: the first calls', up to this many


def _drawn(calls: list[CallWindow], t0: int) -> tuple[tuple[int, int, str, int, int], ...]:
    out: list[tuple[int, int, str, int, int]] = []
    for c in calls[:3]:
        for a in sorted(c.activities, key=lambda a: a.start_ns):
            if len(out) >= DRAWN:
                return tuple(out)
            out.append((a.device, a.stream, kernel_class(a)[0], a.start_ns - t0, a.end_ns - t0))
    return tuple(out)


# ------------------------------------------------------------------ the host


@dataclass(frozen=True)
class HostCall:
    """One CUDA API call of the host (CUPTI's RUNTIME / DRIVER records) or one host wait
    (its SYNCHRONIZATION records): kind 'launch' (a kernel, graph, copy or memset
    issued), 'sync' (the host waited for the GPU) or 'other'; the correlation id ties a
    launch to the activity it issued."""

    kind: str
    name: str
    start_ns: int
    end_ns: int
    correlation: int = 0
    thread: int = 0


LAUNCH_API = re.compile(r"^(cu|cuda)(LaunchKernel|LaunchCooperativeKernel|GraphLaunch|LaunchKernelEx|Memcpy|Memset|"
                        r"LaunchHostFunc)", re.I)
SYNC_API = re.compile(r"^(cu|cuda)(StreamSynchronize|DeviceSynchronize|CtxSynchronize|EventSynchronize)", re.I)
BLOCKING_COPY = re.compile(r"^(cu|cuda)Memcpy(?!.*Async)", re.I)  # cudaMemcpy (not ...Async) waits for the GPU


def host_call_kind(name: str) -> str:
    """'sync' for an API call that waits for the GPU (synchronize calls, blocking copies),
    'launch' for one that issues GPU work, else 'other'."""
    if SYNC_API.match(name) or BLOCKING_COPY.match(name):
        return "sync"
    if LAUNCH_API.match(name):
        return "launch"
    return "other"


def outermost(host_calls: Sequence[HostCall]) -> tuple[list[HostCall], dict[int, HostCall]]:
    """The host's outermost API calls per thread (a runtime call and the driver calls it
    makes are one call: cudaLaunchKernel holds cuLaunchKernel), each of the strongest
    kind nested in it (sync over launch over other), and every correlation id nested in
    one mapped to it."""
    rank = {"sync": 2, "launch": 1}
    out: list[HostCall] = []
    of_corr: dict[int, HostCall] = {}
    open_: dict[int, tuple[int, list[HostCall]]] = {}  # thread -> (index in out, nested calls)
    groups: list[list[HostCall]] = []
    for h in sorted(host_calls, key=lambda h: (h.start_ns, -h.end_ns)):
        cur = open_.get(h.thread)
        if cur is not None and h.start_ns >= groups[cur[0]][0].start_ns and h.end_ns <= groups[cur[0]][0].end_ns:
            groups[cur[0]].append(h)
            continue
        groups.append([h])
        open_[h.thread] = (len(groups) - 1, [])
    for g in groups:
        top = g[0]
        kind = max((x.kind for x in g), key=lambda k: rank.get(k, 0))
        merged = HostCall(kind, top.name, top.start_ns, top.end_ns, top.correlation, top.thread)
        out.append(merged)
        for x in g:
            if x.correlation:
                of_corr[x.correlation] = merged
    return out, of_corr


# A host gap this long with no CUDA call in it is the program's own host work, not a
# launch's cost: the framework's dispatch of one op and the driver's launch take 5-20 us
# on the hosts measured (torch, one H200: a chain of 200 adds at 10.8 us a kernel,
# benchmarks/RESULTS.md), so 50 us is several launches' worth of doing something else.
HOST_WORK_GAP_NS = 50_000
SYNC_SLACK_NS = 5_000  # a wait returns a few us after the GPU drained (CUPTI's clocks are one)


def host_causes(calls: Sequence[CallWindow], host_calls: Sequence[HostCall]) -> HostSummary:
    """What the host did during each GPU idle gap of each call, from its API records:

    - 'sync': a host wait (a synchronize call, a blocking copy, a SYNCHRONIZATION
      record) returned inside the gap: the GPU drained because the host waited on it,
      then stayed idle while the host worked and relaunched;
    - 'host work': the launch that ended the gap followed a host gap of over
      HOST_WORK_GAP_NS with no CUDA call in it;
    - 'launch': the host was issuing launches all along: each launch's own cost (the
      framework's dispatch and the driver's call) set the pace;
    - 'graph': the activity that ended the gap came from the same launch as one before it
      (a CUDA graph's nodes): the GPU's own gap between a graph's kernels, not the host;
    - 'unknown': the activity that ended the gap has no API record.
    Seconds per call of recorded idle by cause, and the host's per-launch figures (no call:
    zeros, and a note saying so)."""
    if not calls:
        return HostSummary(calls=0, recorded_period_s=0.0, launches_per_call=0.0, launch_api_s=0.0,
                           host_per_launch_s=0.0, syncs_per_call=0.0, notes=("no call was recorded",))
    n = len(calls)
    hc, of_corr = outermost(host_calls)
    launch_by_corr = {k: h for k, h in of_corr.items() if h.kind in ("launch", "sync")}
    syncs = [h for h in hc if h.kind == "sync"]
    sync_ends = sorted(h.end_ns for h in syncs)
    import bisect

    causes: dict[str, int] = {}
    sync_names: dict[str, int] = {}
    lo_all = min(c.start_ns for c in calls)
    hi_all = max(c.end_ns for c in calls)
    inside = [h for h in hc if lo_all <= h.start_ns <= hi_all]
    # host gaps with no CUDA call in them, over the threshold: the program's own work
    work_gaps: list[tuple[int, int]] = []
    prev = lo_all
    for h in inside:
        if h.start_ns - prev > HOST_WORK_GAP_NS:
            work_gaps.append((prev, h.start_ns))
        prev = max(prev, h.end_ns)
    host_work = sum(e - s_ for s_, e in work_gaps)
    # every GPU idle gap of the calls, also those between one call's last activity and the
    # next call's first (a call that ends in host work idles there)
    t = lo_all
    seen: set[int] = set()
    for a in sorted((a for c in calls for a in c.activities), key=lambda a: a.start_ns):
        if a.start_ns > t:
            a_, b_ = t, a.start_ns
            i = bisect.bisect_left(sync_ends, a_ - SYNC_SLACK_NS)
            launch = launch_by_corr.get(a.correlation)
            if a.correlation and a.correlation in seen:  # an earlier activity of the same launch: a graph's nodes
                cause = "graph"
            elif i < len(sync_ends) and sync_ends[i] <= b_:
                cause = "sync"
            elif launch is None:
                cause = "unknown"
            else:  # what the host did from the GPU's going idle to the launch that ended it
                worked = length(intersect(work_gaps, [(a_, max(a_, launch.start_ns))]))
                cause = "host work" if worked > (b_ - a_) / 2 else "launch"
            causes[cause] = causes.get(cause, 0) + (b_ - a_)
        t = max(t, a.end_ns)
        seen.add(a.correlation)
    for h in syncs:
        if lo_all <= h.start_ns <= hi_all:
            sync_names[h.name] = sync_names.get(h.name, 0) + 1
    launches = [h for h in inside if h.kind == "launch"]
    api_s = sorted(h.end_ns - h.start_ns for h in launches)
    steps = sorted(b.end_ns - a.end_ns for a, b in zip(launches, launches[1:])
                   if 0 < b.end_ns - a.end_ns <= HOST_WORK_GAP_NS)
    notes = []
    if not launches:
        notes.append("no launch was recorded among the host's API records")
    return HostSummary(
        calls=len(calls), recorded_period_s=(hi_all - lo_all) * 1e-9 / n, launches_per_call=len(launches) / n,
        launch_api_s=api_s[len(api_s) // 2] * 1e-9 if api_s else 0.0,
        host_per_launch_s=steps[len(steps) // 2] * 1e-9 if steps else 0.0,
        syncs_per_call=sum(sync_names.values()) / n, sync_names=tuple(sorted(sync_names)),
        host_work_s=host_work * 1e-9 / n,
        idle_causes_s=tuple(sorted(((k, v * 1e-9 / n) for k, v in causes.items()), key=lambda kv: -kv[1])),
        notes=tuple(notes))


# ------------------------------------------------------------------ the call's parts


IDLE = "idle (GPU waiting for the host)"
UNATTRIBUTED = "timed beyond the recorded calls (unattributed)"


def measured_parts(t: TimelineSummary) -> list[tuple[str, float, str]]:
    """The call's period split by measurement, additive (seconds per call): the pieces of
    the union of its activities on its device, each named by the classes that ran in it
    ("compute" alone, "compute + transfer" at once), and the GPU's idle time; each with
    how it was measured. A class's own time is the sum of the pieces that name it, never
    less than its kernels' union."""
    if not t.span_s:
        return []
    parts: list[tuple[str, float, str]] = []
    pieces = dict(t.pieces) if t.pieces else _legacy_pieces(t)
    idle = pieces.pop("idle", max(0.0, t.span_s - t.busy_s))
    parts.append((IDLE, idle, "the GPU ran nothing: the span less the union of every activity (measured)"))
    inferred = {k.kernel_class for k in t.kernels if k.class_basis == FROM_NAME}
    for name, v in sorted(pieces.items(), key=lambda kv: -kv[1]):
        classes = name.split(" + ")
        label = name + (" (alone)" if len(classes) == 1 else " (overlapped)")
        basis = [c for c in classes if c in inferred]
        how = ("measured from the intervals: " + ("only this class ran" if len(classes) == 1 else
                                                  "these classes ran at once on the device")
               + (f"; class of {', '.join(basis)} {FROM_NAME}" if basis else ""))
        parts.append((label, v, how))
    return parts


def _legacy_pieces(t: TimelineSummary) -> dict[str, float]:
    """Pieces for a summary stored before the overlap-aware fields: each class's share of
    the busy time (the old rule), said by its name."""
    classes = {k: v for k, v in t.class_s if v > 0}
    total = sum(classes.values())
    return {k: t.busy_s * v / total for k, v in classes.items()} if total else {}


def timed_idle(t: TimelineSummary, period_s: float) -> float:
    """The idle part of a timed call of `period_s`: the period less the recorded kernels'
    busy time, but no more than the idle recorded (recording only adds host time, so a
    timed call cannot have waited longer for the host than the recorded one did)."""
    return min(max(0.0, period_s - t.busy_s), t.idle_s)


def timed_parts(t: TimelineSummary, measured_s: float) -> tuple[list[tuple[str, float, str]], str | None]:
    """The measured parts (measured_parts) of a timed median `measured_s`, the timeline
    having been recorded in a pass of its own: the GPU's busy pieces are the recorded
    kernels' own (recording does not slow them; it slows the host), the idle part is
    timed_idle (split by the host's recorded causes where the API was recorded), and
    what the median has beyond both is unattributed; where the busy time exceeds the
    median, the pieces are scaled to it, and the note says by how much."""
    parts = measured_parts(t)
    busy = [(k, v, how) for k, v, how in parts if k != IDLE]
    busy_s = sum(v for _, v, _ in busy)
    if not parts or measured_s <= 0:
        return parts, None
    if measured_s >= busy_s:
        gap = measured_s - busy_s
        idle = timed_idle(t, measured_s)
        out = idle_parts(t, idle)
        if gap > idle + 1e-12:
            out.append((UNATTRIBUTED, gap - idle, "the timed median exceeds the recorded calls' busy and idle time: "
                        "the timed kernels ran slower than the recorded ones (inputs cycled out of L2, other "
                        "clocks) or the host paused; not attributed"))
        return out + busy, None
    scale = measured_s / busy_s
    return [(k, v * scale, how) for k, v, how in busy], (
        f"the recorded kernels took {busy_s / measured_s - 1:.1%} longer per call than the timed calls: "
        "the measured parts are scaled to the timed median")


IDLE_CAUSE_LABEL = {"sync": "idle after a host sync", "host work": "idle during host work",
                    "launch": "idle between launches", "graph": "idle between a graph's kernels (the GPU's own)",
                    "unknown": "idle (cause not recorded)"}


def idle_parts(t: TimelineSummary, idle_s: float) -> list[tuple[str, float, str]]:
    """The timed idle, split by what the host records say it was doing (their shares of
    the recorded idle), or whole where the API was not recorded."""
    how = (f"the timed median less the GPU's busy time of the recorded calls, at most the recorded idle "
           f"({format_time(t.idle_s)} a call; recording costs host time)")
    causes = dict(t.host.idle_causes_s) if t.host is not None else {}
    total = sum(causes.values())
    if not causes or total <= 0:
        return [(IDLE, idle_s, how)]
    return [(IDLE_CAUSE_LABEL.get(k, f"idle ({k})"), idle_s * v / total,
             f"{how}; its share by what the host did meanwhile ({k}), from CUPTI's API records (measured)")
            for k, v in causes.items() if v > 0]


def flops_text(counters: dict[str, float]) -> str:
    """A kernel's counted FLOPs per data type ('bf16 2.15e+09, fp32 1e+06'), or '0'."""
    return ", ".join(f"{k.split(':', 1)[1]} {v:.3g}" for k, v in sorted(counters.items())
                     if k.startswith("flops:") and v > 0) or "0"


HOST_BOUND = 0.5  # idle over this share of the call: the host, not the GPU, sets the pace


def host_cause(t: TimelineSummary, measured_s: float | None = None) -> str | None:
    """None where the GPU set the pace (idle at most HOST_BOUND of the call), else the
    cause of the idle that host_verdict names: 'sync', 'host work', 'launch', 'graph', or
    'unknown' (no API records, or none for the launches that ended the idle)."""
    period = measured_s if measured_s else t.span_s
    if not period or not t.busy_s and not t.kernels_per_call:
        return None
    if timed_idle(t, period) <= HOST_BOUND * period:
        return None
    causes = dict(t.host.idle_causes_s) if t.host is not None else {}
    if not causes or max(causes.values()) <= 0:
        return "unknown"
    return max(causes, key=causes.get)


def host_verdict(t: TimelineSummary, measured_s: float | None = None) -> str | None:
    """A verdict only when the GPU was idle for more than HOST_BOUND of the call (the
    timed median, else the recorded period, less the recorded kernels' busy time), named
    by the cause the host's API records show most idle for:

    - a device-to-host sync: the host waited for the GPU, then worked before
      relaunching; a CUDA graph cannot capture a sync;
    - host work between launches: time outside any CUDA call;
    - launches: the host's measured time per launch set the pace (launch-bound).
    Without API records the cause is not known, and the verdict says so (never
    launch-bound: that needs the host's time per launch, measured). None otherwise."""
    period = measured_s if measured_s else t.span_s
    if not period or not t.busy_s and not t.kernels_per_call:
        return None
    idle = timed_idle(t, period)
    if idle <= HOST_BOUND * period:
        return None
    share = f"the GPU was idle {idle / period:.0%} of each call"
    h = t.host
    causes = dict(h.idle_causes_s) if h is not None else {}
    if not causes or max(causes.values()) <= 0:
        return (f"host-bound (measured idle): {share}, waiting for the host; what the host did is not recorded "
                "(no CUPTI API records), so neither a sync nor launches can be named")
    cause = max(causes, key=causes.get)
    total = sum(causes.values())
    if cause == "sync":
        after = f", then worked {format_time(h.host_work_s)} a call outside CUDA calls" if h.host_work_s else ""
        return (f"host-bound by a device-to-host sync (measured): {share}; the host waited for the GPU "
                f"{h.syncs_per_call:g} time(s) a call ({', '.join(h.sync_names) or 'a sync'}){after}, and the GPU "
                f"drained each time ({causes[cause] / total:.0%} of the idle followed a sync). A CUDA graph cannot "
                "capture a sync: keep the value on the GPU, or move the sync and the host work after it out of "
                "the loop")
    if cause == "host work":
        return (f"host-bound by host work between launches (measured): {share}; the host spent "
                f"{format_time(h.host_work_s)} a call outside any CUDA call ({causes[cause] / total:.0%} of the "
                "idle). Move that work out of the loop, issue the GPU work before it so they overlap, or batch "
                "the calls")
    if cause == "graph":
        return (f"bound by the gaps between a CUDA graph's kernels (measured): {share}, between kernels of one "
                f"graph launch ({t.kernels_per_call:g} kernels a call, {h.launches_per_call:g} host launch(es)): the "
                "GPU's own launch latency per node, not the host. Fewer, larger kernels (fusion) shorten it; the "
                "host is not the limit")
    if cause == "launch":
        per = h.host_per_launch_s or (h.recorded_period_s / max(1.0, h.launches_per_call))
        return (f"launch-bound (measured): {share}; the host issued {h.launches_per_call:g} launch(es) a call at "
                f"{format_time(per)} of host time each ({format_time(h.launch_api_s)} inside the launch call "
                "itself, the rest the framework's dispatch; recorded with CUPTI's API records, which slow the "
                "host). Fusing the kernels, or capturing the call in a CUDA graph, takes the host out of the loop")
    return (f"host-bound (measured idle): {share}; the launches that ended the idle have no API record, so the "
            "cause is not known")


# ------------------------------------------------------------------ recordings


def to_record(activities: Sequence[Activity], call_starts_ns: Sequence[int], host_of: dict[int, int],
              meta: dict | None = None, host_pass: tuple | None = None) -> dict:
    """A recorded timeline as plain JSON (the tests' recordings, captured on the device);
    `host_pass`, the (activities, call starts, host calls) of the pass that recorded the
    host's API calls too, rides along (version 2)."""
    doc = {"format": "linkroof-timeline", "version": 2 if host_pass else 1, "meta": meta or {},
           "call_starts_ns": list(call_starts_ns), "host_of": {str(k): v for k, v in host_of.items()},
           "activities": [_act_row(a) for a in activities]}
    if host_pass:
        acts, starts, calls = host_pass
        doc["host_pass"] = {"call_starts_ns": list(starts), "activities": [_act_row(a) for a in acts],
                            "host_calls": [[h.kind, h.name, h.start_ns, h.end_ns, h.correlation, h.thread]
                                           for h in calls]}
    return doc


def _act_row(a: Activity) -> list:
    return [a.kind, a.name, a.device, a.stream, a.start_ns, a.end_ns, a.correlation, list(a.grid), list(a.block),
            a.bytes, a.copy_kind]


def _act(row: list) -> Activity:
    k, n, d, s, t0, t1, c, g, b, by, ck = row
    return Activity(k, n, int(d), int(s), int(t0), int(t1), int(c), tuple(g), tuple(b), int(by), ck)


def host_pass_from_record(doc: dict) -> tuple[list[Activity], list[int], list[HostCall]] | None:
    """The host pass of a version-2 recording, or None."""
    hp = doc.get("host_pass") if isinstance(doc, dict) else None
    if not hp:
        return None
    return ([_act(r) for r in hp["activities"]], [int(x) for x in hp["call_starts_ns"]],
            [HostCall(k, n, int(s), int(e), int(c), int(t)) for k, n, s, e, c, t in hp["host_calls"]])


def with_host(t: TimelineSummary, activities: Sequence[Activity], call_starts_ns: Sequence[int],
              host_calls: Sequence[HostCall]) -> TimelineSummary:
    """The summary with what the host did during the GPU's idle time (host_causes), from
    a pass of its own that recorded the host's API calls (they slow the host, so that
    pass's figures are shares, applied to the timed idle)."""
    import dataclasses

    calls = split_calls(activities, call_starts_ns)
    if not any(c.activities for c in calls):
        return t
    return dataclasses.replace(t, host=host_causes(calls, host_calls))


def from_record(doc: dict) -> tuple[list[Activity], list[int], dict[int, int]]:
    if not isinstance(doc, dict) or doc.get("format") != "linkroof-timeline":
        raise ValueError("not a linkroof timeline recording")
    acts = [_act(r) for r in doc["activities"]]
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


# ------------------------------------------------------------------ why below the roof


# atomic and reduction sectors to L2 a second under which the atomics wait for each other
# (one H200: 17.3 M float atomicAdds onto 4 addresses ran at 2.3 G/s, spread over 1 Mi
# addresses at 640 G/s; benchmarks/data/2026-12-04-zoo)
ATOMICS_CONTENDED = 20e9

SHARE_NAMES = {"dram_pct": "DRAM throughput", "sm_pct": "SM throughput", "l2_hit_pct": "L2 hit rate",
               "occupancy_pct": "achieved occupancy", "ld_use_pct": "bytes used per loaded sector",
               "st_use_pct": "bytes used per stored sector", "tensor_pct": "tensor pipe (HMMA) use",
               "tensor_gmma_pct": "tensor pipe (GMMA) use"}


def why_text(c: dict[str, float]) -> str:
    """One sentence on why a kernel sits where it does, from ncu's counters
    (profiler/ncu.WHY_METRICS, per call, time-weighted): the first rule that its
    figures meet, in order; '' where ncu gave none of them. A share ncu gave outside
    [0, 100] % is no share: it is left out of every rule, and the sentence says so."""
    misread = {k: v for k in SHARE_NAMES if (v := c.get(f"why:{k}")) is not None and v == v
               and not 0.0 <= v <= 100.5}
    clean = {k: v for k, v in c.items() if not (k.startswith("why:") and k[4:] in misread)}
    text = _why_text(clean)
    if misread:
        said = ", ".join(f"{SHARE_NAMES[k]} {v:g}%" for k, v in misread.items())
        text = (text + " " if text else "") + f"[ncu's {said}: not a share (outside 0-100 %), left out]"
    return text


def _pct(x: float | None) -> str:
    """A share ncu gave, as '12%'; 'not read' where it gave none (never a 0 % not measured)."""
    return "not read" if x is None else f"{x:.0f}%"


def _why_text(c: dict[str, float]) -> str:
    def g(key: str) -> float | None:
        v = c.get(f"why:{key}")
        return v if v is not None and v == v else None

    atomic = (c.get("atom_sectors") or 0.0) + (c.get("red_sectors") or 0.0)
    busy = c.get("gpu_time_s") or 0.0
    if atomic > 0 and busy > 0 and atomic / busy < ATOMICS_CONTENDED and all(
            x is None or x < 50 for x in (g("sm_pct"), g("dram_pct"))):
        return (f"contended atomics: {atomic:,.0f} atomic and reduction sectors to L2 a call at only "
                f"{atomic / busy / 1e9:.1f} G/s, SM {_pct(g('sm_pct'))}, DRAM {_pct(g('dram_pct'))}: atomics "
                "to the same addresses wait for each other in L2; spread them (a partial sum a block, then one "
                "atomic a block) (ncu)")

    dram, sm, hit, occ = g("dram_pct"), g("sm_pct"), g("l2_hit_pct"), g("occupancy_pct")
    ld, st, spr = g("ld_use_pct"), g("st_use_pct"), g("ld_sectors_per_req")
    tensor = max((x for x in (g("tensor_pct"), g("tensor_gmma_pct")) if x is not None), default=None)
    if all(x is None for x in (dram, sm, hit, occ, ld, st, tensor)):
        return ""
    at = f"DRAM {dram:.0f}% of its peak" if dram is not None else "DRAM not read"
    if tensor is not None and tensor >= 80:
        return (f"tensor pipes busy {tensor:.0f}% of its time: at the compute roof; only fewer FLOPs or a lower "
                "precision are left (ncu)")
    if dram is not None and dram >= 80 and ld is not None and 0 < ld < 50:
        return (f"{at}, but only {ld:.0f}% of each loaded 32-byte sector is used (strided or scattered loads): "
                "bound by bytes it does not need; make the accesses contiguous (ncu)")
    if dram is not None and dram >= 80:
        return f"{at}: memory-bound at the roof; only moving fewer bytes helps (fusion, a narrower type) (ncu)"
    bad = [(n, u) for n, u in (("loads", ld), ("stores", st)) if u is not None and 0 < u < 50]
    if bad:
        what = " and ".join(f"{n} use {u:.0f}% of each 32-byte sector" for n, u in bad)
        return (f"uncoalesced: {what}" + (f" ({spr:.0f} sectors a load request)" if spr else "")
                + f", {at}: coalesce the accesses (a transpose: tile through shared memory) (ncu)")
    if sm is not None and sm >= 80:
        return (f"SM pipelines {sm:.0f}% busy, {at}: bound by instructions on the CUDA cores (math or index "
                "arithmetic), not by memory (ncu)")
    if hit is not None and hit >= 80 and (dram is None or dram < 50):
        return f"served from L2 ({hit:.0f}% hits), {at}: DRAM is not its limit (ncu)"
    if sm is not None and sm < 1 and (dram or 0) < 1 and not ld and not st:
        return (f"waiting, not working: SM {sm:.0f}%, {at}, no global loads or stores: the kernel spins (a clock or "
                "flag loop) or waits on other work; no roof sets its time (ncu)")
    if occ is not None and occ < 50:
        return (f"little work in flight: {occ:.0f}% of warp slots active, {at}"
                + (f", SM {sm:.0f}%" if sm is not None else "") + ": latency-bound; more warps or more independent "
                "loads per thread (ncu)")
    return (f"{at}" + (f", SM {sm:.0f}%" if sm is not None else "") + ": neither at its peak: latency-bound "
            "(dependent accesses, too few loads in flight) (ncu)")
