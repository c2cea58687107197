"""The collectives of a PyTorch profiler (Kineto) trace, as facts: which collective,
data type, elements, bytes in nccl-tests' convention, group size and where each came
from, its kernel's time, algbw and busbw; per step the GPU's time by class, idle,
communication overlapped and exposed (roofline/timeline.py's interval logic); across
ranks the calls matched, their arrival skew and transfer time. Pure arithmetic on
events a reader (readers/traces.py) gives; nothing here is guessed: what cannot be
known is None, and its `how` says why.

Three tiers of trace, as torch writes them:
- kernel args: the kernel carries `Collective name`, `In msg nelems`, `Out msg nelems`,
  `dtype`, `Group size`, `Process Group Name/Ranks`, `Seq` (from about torch 2.2, when
  the kernel was launched inside `record_param_comms`);
- the launching op: no facts on the kernel (coalesced collectives, batch_isend_irecv,
  torch 1.13-2.1): its `correlation` leads to the runtime launch, and that to the
  innermost `record_param_comms` or `c10d::*` op on the launching thread, whose facts
  or `Input Dims` x `Input type` give the call;
- the kernel name only: NCCL >= 2.19 names the collective (ncclDevKernel_AllReduce_...);
  NCCL 2.1x's ncclKernel_SendRecv_... runs several and names none.
"""

from __future__ import annotations

import heapq
import math
import re
from array import array
from collections.abc import Sequence
import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Any

from .collectives import busbw_factor, canonical
from .timeline import Activities, Activity, intersect, kernel_class, length, nccl_collective, union

# c10 scalar type names (kernel and record_param_comms `dtype`) and record_shapes'
# `Input type` spellings -> linkroof's names and element bytes
C10_DTYPES = {"Float": ("fp32", 4), "BFloat16": ("bf16", 2), "Half": ("fp16", 2), "Double": ("fp64", 8),
              "Long": ("int64", 8), "Int": ("int32", 4), "Short": ("int16", 2), "Char": ("int8", 1),
              "Byte": ("uint8", 1), "Bool": ("bool", 1), "Float8_e4m3fn": ("fp8", 1), "Float8_e5m2": ("fp8", 1),
              "Float8_e4m3fnuz": ("fp8", 1), "Float8_e5m2fnuz": ("fp8", 1), "ComplexFloat": ("complex64", 8)}
INPUT_TYPES = {"float": "Float", "c10::BFloat16": "BFloat16", "c10::Half": "Half", "double": "Double",
               "long int": "Long", "int64_t": "Long", "long": "Long", "long long": "Long", "long long int": "Long",
               "int": "Int", "short int": "Short", "signed char": "Char",
               "unsigned char": "Byte", "bool": "Bool", "c10::Float8_e4m3fn": "Float8_e4m3fn",
               "c10::Float8_e5m2": "Float8_e5m2", "c10::complex<float>": "ComplexFloat"}

# record_param_comms' `Collective name` and c10d ops -> linkroof's collective
COLLECTIVE_NAMES = {
    "allreduce": "all_reduce", "allreduce_coalesced": "all_reduce", "all_reduce": "all_reduce",
    "allgather": "all_gather", "allgather_base": "all_gather", "all_gather": "all_gather",
    "allgather_into_tensor_coalesced": "all_gather", "all_gather_into_tensor": "all_gather",
    "allgather_coalesced": "all_gather", "reduce_scatter": "reduce_scatter", "reduce_scatter_base": "reduce_scatter",
    "reduce_scatter_tensor": "reduce_scatter", "reduce_scatter_tensor_coalesced": "reduce_scatter",
    "alltoall": "all_to_all", "alltoall_base": "all_to_all", "all_to_all": "all_to_all", "broadcast": "broadcast",
    "reduce": "reduce", "send": "sendrecv", "recv": "sendrecv", "recv_any_source": "sendrecv", "gather": "gather",
    "scatter": "scatter", "barrier": "barrier",
    # the record_function ranges ProcessGroupNCCL opens around each call (torch 1.13-2.1:
    # `nccl:all_reduce`, `nccl:_all_gather_base`, `nccl:_reduce_scatter_base`, ...)
    # uneven all-to-all (all_to_all_single with splits): torch names it all_to_allv, its
    # In/Out msg nelems the totals, the splits in `In split size` / `Out split size`
    "all_to_allv": "all_to_all", "alltoallv": "all_to_all", "all_to_all_v": "all_to_all",
    "all_gather_base": "all_gather", "all_reduce_coalesced": "all_reduce", "all_gather_coalesced": "all_gather",
    "reduce_scatter_coalesced": "reduce_scatter", "all_to_all_single": "all_to_all", "alltoall_single": "all_to_all",
}
NCCL_RANGE = "nccl:"  # ProcessGroupNCCL's range name prefix; its `Input Dims` are the call's inputs only


def collective_name(raw: Any) -> str | None:
    """linkroof's collective for a `Collective name` or a c10d op's name
    ('_allgather_base', 'c10d::allreduce_coalesced_'), else None."""
    if not isinstance(raw, str):
        return None
    name = raw.split("::", 1)[-1].strip()
    if name.startswith(NCCL_RANGE):
        name = name[len(NCCL_RANGE):]
    return COLLECTIVE_NAMES.get(name.strip("_").lower())


# c10d ops' tensor arguments: (output index, input index) in `Input Dims`
C10D_ARGS = {"_allgather_base_": (0, 1), "allgather_": (0, 1), "allgather_into_tensor_coalesced_": (0, 1),
             "_reduce_scatter_base_": (0, 1), "reduce_scatter_": (0, 1), "reduce_scatter_tensor_coalesced_": (0, 1),
             "alltoall_base_": (0, 1), "alltoall_": (0, 1)}


@dataclass(frozen=True)
class CommOp:
    """A host op a collective kernel may have been launched from: `record_param_comms`
    (its args are the facts) or a `c10d::*` op (its shapes); thread, start and end."""

    name: str
    tid: int
    start_ns: int
    end_ns: int
    args: dict = field(default_factory=dict)


@dataclass(frozen=True)
class CollectiveCall:
    """One collective kernel of a trace, with what it did and how each fact was known."""

    rank: int | None
    kernel: str
    device: int
    stream: int
    start_ns: int
    end_ns: int
    collective: str | None  # linkroof's name; None: not known
    dtype: str | None
    in_nelems: int | None
    out_nelems: int | None
    size_bytes: int | None  # nccl-tests' convention: an all-gather's whole output, a reduce-scatter's whole input
    group_size: int | None
    group_from: str  # "kernel args" | "process group ranks" | "the trace's process groups" | "derived ..." | "unknown"
    process_group: str = ""
    seq: int | None = None
    source: str = ""  # "kernel args" | "launching op ..." | "kernel name"
    notes: tuple[str, ...] = ()
    group_ranks: tuple[int, ...] = ()  # the group's global ranks where the trace lists them all
    mechanism: str = "NCCL"  # what moved the data: NCCL, or a kernel of its own (custom_mechanism)

    @property
    def duration_s(self) -> float:
        return max(0, self.end_ns - self.start_ns) * 1e-9

    @property
    def algbw(self) -> float | None:
        return self.size_bytes / self.duration_s if self.size_bytes and self.duration_s > 0 else None

    @property
    def busbw(self) -> float | None:
        if self.algbw is None or not self.group_size or not self.collective:
            return None
        return self.algbw * busbw_factor(self.collective, self.group_size)


# collectives that are not NCCL kernels, by their kernels' names: (pattern, mechanism, collective)
CUSTOM_KERNELS = (
    (re.compile(r"multimem_(one_shot_)?all_reduce", re.I), "symmetric memory, NVLS multicast (multimem): not NCCL",
     "all_reduce"),
    (re.compile(r"multimem_all_gather", re.I), "symmetric memory, NVLS multicast (multimem): not NCCL", "all_gather"),
    (re.compile(r"(one|two)_shot_all_reduce", re.I), "symmetric memory (torch symm_mem, peer loads and stores): "
     "not NCCL", "all_reduce"),
    (re.compile(r"symm_mem|reduce_scatter_kernel.*symm", re.I), "symmetric memory (torch symm_mem): not NCCL", None),
    (re.compile(r"cross_device_reduce_(1|2)stage", re.I), "custom all-reduce (vLLM / SGLang, peer memory): not NCCL",
     "all_reduce"),
    (re.compile(r"(one|two)ShotAllReduce|allreduce_?fusion|AllReduceFusion|lamport.*all_?reduce", re.I),
     "TensorRT-LLM custom all-reduce: not NCCL", "all_reduce"),
    (re.compile(r"nvshmem", re.I), "NVSHMEM: not NCCL", None),
)
# the host ops such kernels run under (their `Input Dims` and `Input type` give the size)
CUSTOM_OP_PREFIXES = ("vllm::", "symm_mem::", "_c10d_functional::", "c10d_functional::", "trtllm::", "_C_custom_ar::",
                      "sgl_kernel::", "tensorrt_llm::", "nvshmem")
_CUSTOM_OP_COLLECTIVE = re.compile(r"(all_?reduce|all_?gather|reduce_?scatter|all_?to_?all)", re.I)


@functools.lru_cache(maxsize=16384)  # once per distinct name: a trace's kernels have few (4.4 s of 8 s per kernel)
def custom_mechanism(kernel: str) -> tuple[str, str | None] | None:
    """(mechanism, collective or None) of a kernel that is a collective but not NCCL's,
    from its name's family, else None."""
    if "nccl" in kernel.lower():
        return None
    for pattern, mechanism, coll in CUSTOM_KERNELS:
        if pattern.search(kernel):
            return mechanism, coll
    return None


def custom_op_collective(name: str) -> str | None:
    """The collective a host op of a custom collective names (vllm::all_reduce,
    symm_mem::two_shot_all_reduce_, _c10d_functional::all_gather_into_tensor, ...)."""
    if not name.startswith(CUSTOM_OP_PREFIXES):
        return None
    m = _CUSTOM_OP_COLLECTIVE.search(name.split("::", 1)[-1])
    return canonical(m.group(1).lower().replace("_", "")) if m else None


def c10_dtype(name: Any) -> tuple[str, int] | None:
    """(linkroof's name, bytes) of a c10 type name or a record_shapes type, else None."""
    if not isinstance(name, str):
        return None
    return C10_DTYPES.get(name) or C10_DTYPES.get(INPUT_TYPES.get(name, ""))


def _int(x: Any) -> int | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, int) and x >= 0:
        return x
    if isinstance(x, str) and x.strip().isascii() and x.strip().isdigit():  # "²" is a digit int() refuses
        return int(x)
    return None


def ranks_listed(text: Any) -> int | None:
    """How many ranks `Process Group Ranks` lists ('[0, 1, 2]'), or None where torch cut
    the list short ('[0, 1, ..., 29, ...]': at most 30 shown) or it lists no ranks: the
    count of what ranks_of reads, so a group's size and its ranks never disagree."""
    return len(ranks_of(text)) or None


def ranks_of(text: Any) -> tuple[int, ...]:
    """The global ranks `Process Group Ranks` lists ('[0, 1, 2]'), or () where it lists
    none or torch cut the list short ('[0, 1, ..., 29, ...]')."""
    if isinstance(text, list):
        items = text
    elif isinstance(text, str) and "..." not in text:
        inner = text.strip().strip("[]").strip()
        items = [x.strip() for x in inner.split(",")] if inner else []
    else:
        return ()
    out = []
    for x in items:
        if isinstance(x, bool):
            return ()
        if isinstance(x, int) and 0 <= x < 1 << 24:
            out.append(x)
        elif isinstance(x, str) and x.isdigit() and x.isascii() and len(x) <= 8 and int(x) < 1 << 24:
            out.append(int(x))  # a rank as text within the same bound as a rank as a number
        else:
            return ()
    return tuple(out) if len(set(out)) == len(out) else ()


def _elements(dims: Any) -> int | None:
    """Elements of one tensor's dims ([4096, 1024]) or a TensorList's ([[n], [m]]): the
    sum; None where there are no dims (a TensorList recorded empty: unknown, not 0)."""
    if not isinstance(dims, list) or not dims:
        return None
    if all(isinstance(d, int) for d in dims):
        return math.prod(dims)
    if all(isinstance(d, list) for d in dims):
        parts = [_elements(d) for d in dims]
        return None if any(p is None for p in parts) else sum(parts)  # type: ignore[misc]
    return None


def size_of(collective: str, in_nelems: int | None, out_nelems: int | None, elem: int) -> int | None:
    """nccl-tests' size: an all-gather's whole output; a reduce-scatter's, an
    all-to-all's, an all-reduce's, a broadcast's whole input (out where in is unknown
    for in-place ones)."""
    n = out_nelems if collective in ("all_gather", "gather") else (
        in_nelems if in_nelems is not None else (out_nelems if collective in ("all_reduce", "broadcast") else None))
    return None if n is None else n * elem


def _group_from_ratio(collective: str, in_n: int | None, out_n: int | None) -> int | None:
    if not in_n or not out_n:
        return None
    if collective == "all_gather" and out_n % in_n == 0 and out_n // in_n > 1:
        return out_n // in_n
    if collective == "reduce_scatter" and in_n % out_n == 0 and in_n // out_n > 1:
        return in_n // out_n
    return None


def _derived(collective: str | None) -> str:
    """Where a group size derived from the elements' ratio came from, in the order it was
    divided: an all-gather's output over its input, a reduce-scatter's input over its output."""
    return "derived (input / output elements)" if collective == "reduce_scatter" else "derived (output / input elements)"


def facts_from_args(args: dict, groups: dict[str, int], where: str) -> dict:
    """What a kernel's (or record_param_comms') args say: collective, dtype, elements,
    group size and where each came from."""
    notes = []
    raw = args.get("Collective name")
    coll = collective_name(raw)
    if raw and coll is None:
        coll = canonical(str(raw).lower())
        notes.append(f"collective {raw!r} is not one linkroof knows")
    dt = c10_dtype(args.get("dtype"))
    in_n, out_n = _int(args.get("In msg nelems")), _int(args.get("Out msg nelems"))
    pg = str(args.get("Process Group Name", "") or "")
    group, group_from = _int(args.get("Group size")), where
    if not group:
        group, group_from = ranks_listed(args.get("Process Group Ranks")), "process group ranks"
    if not group and pg in groups:
        group, group_from = groups[pg], "distributedInfo"
    if not group and coll:
        group = _group_from_ratio(coll, in_n, out_n)
        group_from = _derived(coll) if group else "unknown"
    if not group:
        group_from = "unknown"
    return {"collective": coll, "dtype": dt, "in": in_n, "out": out_n, "group": group, "group_from": group_from,
            "pg": pg, "seq": _int(args.get("Seq")), "notes": notes, "ranks": ranks_of(args.get("Process Group Ranks"))}


def facts_from_c10d(op: CommOp, groups: dict[str, int]) -> dict:
    """What a c10d op's recorded shapes say (no facts on the kernel, torch 1.13-2.1 or a
    coalesced call): the collective from the op's name, elements from `Input Dims`, the
    type from `Input type`; the group from the trace's only process group, if one."""
    base = op.name.split("::", 1)[-1]
    # the collective from the same one namespace stripped as base: 'c10d::x::allgather_' was
    # an all-gather (a second namespace stripped) sized as no all-gather (base not in C10D_ARGS)
    coll = collective_name(op.name)
    dims, types = op.args.get("Input Dims") or [], op.args.get("Input type") or []
    if not isinstance(dims, list):
        dims = []
    if not isinstance(types, list):
        types = []
    notes = []
    if base.startswith(NCCL_RANGE):  # ProcessGroupNCCL's range: its inputs only (the local shard of an all-gather)
        in_n, out_n = (_elements(dims[0]) if dims else None), None
    else:
        out_i, in_i = C10D_ARGS.get(base, (0, 0))
        in_n = _elements(dims[in_i]) if len(dims) > in_i else None
        out_n = _elements(dims[out_i]) if len(dims) > out_i else None
    dt = None
    for t in types:
        dt = dt or c10_dtype(t)
    if dt is None and types and types[0] == "TensorList":
        notes.append("a TensorList's element type is not recorded")
    if in_n is None and out_n is None:
        notes.append(f"{op.name} recorded no input shapes (record_shapes off, or an empty TensorList): size unknown")
    group, group_from = None, "unknown"
    if len(groups) == 1:
        group, group_from = next(iter(groups.values())), "distributedInfo (the one process group)"
    if not group and coll:
        group = _group_from_ratio(coll, in_n, out_n)
        group_from = _derived(coll) if group else "unknown"
    if not group:
        notes.append("group size unknown: no `Group size` or `Process Group Ranks` on this era's ops, "
                     + (f"and the trace has {len(groups)} process groups" if groups else "no pg_config in distributedInfo")
                     + " to tell which one ran it")
    if coll == "all_gather" and out_n is None and in_n is not None and group:
        out_n = in_n * group  # the range records the local shard: the output is the group's shards
    return {"collective": coll, "dtype": dt, "in": in_n, "out": out_n, "group": group, "group_from": group_from,
            "pg": "", "seq": None, "notes": notes}


def _out_of(collective: str | None, in_n: int, group: int | None) -> int | None:
    """A collective's output elements from its input's and its group's size: an all-gather's
    group times, a reduce-scatter's one group-th, any other's the same (None where the group
    is needed and unknown)."""
    if collective == "all_gather":
        return in_n * group if group else None
    if collective == "reduce_scatter":
        return in_n // group if group else None
    return in_n


def facts_from_custom_op(op: CommOp, coll: str | None, groups: dict[str, int], world: int | None) -> dict:
    """What the host op around a custom collective's kernel says: its first tensor's
    elements and type (an all-reduce's input and output alike), the group from a group
    name among its concrete inputs that the trace's process groups list, else the world
    (inferred, and said so)."""
    dims, types = op.args.get("Input Dims") or [], op.args.get("Input type") or []
    dims = dims if isinstance(dims, list) else []
    types = types if isinstance(types, list) else []
    coll = coll or custom_op_collective(op.name)
    n = _elements(dims[0]) if dims else None
    dt = c10_dtype(types[0]) if types else None
    notes = []
    concrete = op.args.get("Concrete Inputs")
    found = [(i, x) for i, x in enumerate(concrete) if isinstance(x, str) and x.strip("'\"") in groups] \
        if isinstance(concrete, list) else []
    # a string argument (typed str, or quoted) names the group before a number does: torch's
    # groups are named "0", "1", ..., so all_gather's group_size 4 can match group "4"
    named = [x for i, x in found if (i < len(types) and types[i] == "str") or x[:1] in ("'", '"')] \
        or [x for i, x in found if not (i < len(types) and types[i] in ("Scalar", "int", "SymInt"))]
    group, group_from, pg = None, "unknown", ""
    if named:
        pg = named[0].strip("'\"")
        group, group_from = groups[pg], f"the op's group {pg!r} (distributedInfo)"
    elif world and world > 1:
        group, group_from = world, f"inferred: the world ({world} ranks); {op.name} records no group size"
    else:
        notes.append(f"group size unknown: {op.name} records none and the trace gives no world size")
    if n is None:
        notes.append(f"{op.name} recorded no input shapes (record_shapes off): size unknown")
    in_n, out_n = (n, _out_of(coll, n, group)) if n is not None else (None, None)
    return {"collective": coll, "dtype": dt, "in": in_n, "out": out_n, "group": group, "group_from": group_from,
            "pg": pg, "seq": None, "notes": notes}


def merge_facts(inner: dict, outer: dict) -> dict:
    """An `nccl:` range's facts (the collective, its inputs) completed by the enclosing
    c10d op's (both tensors' shapes, so the group from their ratio): each fact from the
    first that holds it."""
    out = dict(inner)
    for k in ("dtype", "in", "out"):
        if out.get(k) is None:
            out[k] = outer.get(k)
    if not out.get("group") and outer.get("group"):
        out["group"], out["group_from"] = outer["group"], outer["group_from"] + " (the enclosing c10d op)"
    if out.get("collective") and not out.get("group"):
        g = _group_from_ratio(out["collective"], out.get("in"), out.get("out"))
        if g:
            out["group"], out["group_from"] = g, _derived(out["collective"])
    return _settled(out)


def _settled(f: dict) -> dict:
    """The facts with their notes that a later reading contradicts dropped: 'group size unknown'
    once a group is known, '... size unknown' once shapes sized the call."""
    if f.get("group"):
        f["notes"] = [n for n in f["notes"] if not n.startswith("group size unknown")]
    if f.get("in") is not None or f.get("out") is not None:  # the op's shapes sized what the range could not
        f["notes"] = [n for n in f["notes"] if not n.endswith("size unknown")]
    return f


class ActivityIndex:
    """Activities sorted by start, for the ones overlapping a window (a step, a call)
    without scanning all of them (a 100 MB trace took 266 s scanning per step). Held as
    the rows' order over the trace's columns: no object is made but those returned."""

    def __init__(self, activities: Sequence[Activity]):
        self.acts = Activities.of(activities)
        self.order = self.acts.by_start()  # None: in order already
        self.starts = self.acts.starts_by_start()
        self.longest = max((e - s for s, e in zip(self.acts.start, self.acts.end)), default=0)

    def overlapping(self, lo: int, hi: int) -> list[Activity]:
        import bisect

        i = bisect.bisect_left(self.starts, lo - self.longest)
        j = bisect.bisect_right(self.starts, hi)
        rows = range(i, j) if self.order is None else self.order[i:j]
        start, end = self.acts.start, self.acts.end
        return [self.acts[r] for r in rows if end[r] > lo and start[r] < hi]


class CommOps(list):
    """The comm ops of a trace, with an index per thread for `open_at` (a trace of 100 k
    collectives asked every op for every kernel: quadratic)."""

    def __init__(self, ops: Sequence[CommOp] = ()):
        super().__init__(ops)
        self._index: dict[int, tuple[list[int], list[CommOp], int]] | None = None

    def open_at(self, tid: int, t_ns: int) -> list[CommOp]:
        """The ops on `tid` open at `t_ns`."""
        import bisect

        if self._index is None:
            by: dict[int, list[CommOp]] = {}
            for o in self:
                by.setdefault(o.tid, []).append(o)
            self._index = {}
            for k, v in by.items():
                v.sort(key=lambda o: o.start_ns)
                self._index[k] = ([o.start_ns for o in v], v, max(o.end_ns - o.start_ns for o in v))
        got = self._index.get(tid)
        if got is None:
            return []
        starts, ops, longest = got
        i = bisect.bisect_right(starts, t_ns)
        lo = bisect.bisect_left(starts, t_ns - longest)
        return [o for o in ops[lo:i] if o.end_ns >= t_ns]


def open_ops(ops: Sequence[CommOp], tid: int, t_ns: int) -> list[CommOp]:
    if isinstance(ops, CommOps):
        return ops.open_at(tid, t_ns)
    return [o for o in ops if o.tid == tid and o.start_ns <= t_ns <= o.end_ns]


def innermost(ops: Sequence[CommOp], tid: int, t_ns: int) -> CommOp | None:
    """The innermost comm op on `tid` open at `t_ns`, record_param_comms before c10d."""
    open_ = open_ops(ops, tid, t_ns)
    if not open_:
        return None
    with_facts = [o for o in open_ if o.args.get("Collective name")]
    pool = with_facts or open_
    return min(pool, key=lambda o: o.end_ns - o.start_ns)


def is_collective_kernel(a: Activity, kernel_args: dict) -> bool:
    return a.kind == "kernel" and (bool(kernel_args.get("Collective name")) or "nccl" in a.name.lower()
                                   or custom_mechanism(a.name) is not None)


def _name_only_note(name: str) -> str:
    if "generic" in name.lower():
        return (f"the kernel's name ({name[:60]}) does not name its collective: a generic kernel (NCCL 2.19 or later, "
                "or RCCL) runs any collective, and this one's launching op was not recorded")
    if "sendrecv" in name.lower():
        return (f"the kernel's name ({name[:60]}) does not name its collective (NCCL 2.1x runs several collectives "
                "in one SendRecv kernel)")
    return f"the kernel's name ({name[:60]}) does not name its collective"


def collective_call(a: Activity, kernel_args: dict, launch: tuple[int, int] | None, ops: Sequence[CommOp],
                    groups: dict[str, int], rank: int | None, world: int | None = None) -> CollectiveCall:
    """One collective kernel's facts, from the best tier this trace has for it."""
    custom = custom_mechanism(a.name) if a.kind == "kernel" else None
    if custom is not None and not kernel_args.get("Collective name"):
        mechanism, coll = custom
        around = [o for o in open_ops(ops, *launch) if custom_op_collective(o.name) or o.name.startswith("c10d::")] \
            if launch else []
        if around:
            op = min(around, key=lambda o: o.end_ns - o.start_ns)
            f = facts_from_custom_op(op, coll, groups, world)
            if op.name.split("::", 1)[-1] in C10D_ARGS and op.name.startswith("c10d::"):
                # a c10d op that records its output first (c10d::_allgather_base_: output, input):
                # its tensors read in that order, as for an NCCL kernel inside it; the group
                # from its shapes' ratio, else the custom op's reading (a group name, the world)
                c10d = facts_from_c10d(op, groups)
                f["collective"] = f["collective"] or c10d["collective"]  # a kernel named for no one collective
                if c10d["group"]:
                    f["group"], f["group_from"] = c10d["group"], c10d["group_from"]
                f["in"], f["out"] = c10d["in"], c10d["out"]
                if f["group"] and f["in"] is not None and f["out"] is None:
                    f["out"] = _out_of(f["collective"], f["in"], f["group"])
                f = _settled(f)  # the custom op's 'size unknown', 'group size unknown' answered
            source = f"launching op ({op.name}, recorded shapes)"
        else:
            f = {"collective": coll, "dtype": None, "in": None, "out": None, "group": None, "group_from": "unknown",
                 "pg": "", "seq": None, "notes": [f"{mechanism}: no launching op found, so size and group unknown"]}
            source = "kernel name"
        c = _call(a, f, source, rank)
        return dataclasses.replace(c, mechanism=mechanism)
    if kernel_args.get("Collective name"):
        f, source = facts_from_args(kernel_args, groups, "kernel args"), "kernel args"
    else:
        op = innermost(ops, *launch) if launch else None
        if op is not None and op.args.get("Collective name"):
            f, source = facts_from_args(op.args, groups, "launching op's args"), "launching op (record_param_comms)"
        elif op is not None:
            f, source = facts_from_c10d(op, groups), f"launching op ({op.name}, recorded shapes)"
            if op.name.startswith(NCCL_RANGE) and launch:  # the c10d op around ProcessGroupNCCL's range
                outer = [o for o in open_ops(ops, *launch) if o.name.startswith("c10d::")]
                if outer:
                    c10d = min(outer, key=lambda o: o.end_ns - o.start_ns)
                    f = merge_facts(f, facts_from_c10d(c10d, groups))
                    source += f" and {c10d.name}"
        else:
            coll = nccl_collective(a.name)
            f = {"collective": coll, "dtype": None, "in": None, "out": None, "group": None, "group_from": "unknown",
                 "pg": "", "seq": None,
                 "notes": ["no collective facts on the kernel and no launching op found: size and group unknown"]
                 + ([] if coll else [_name_only_note(a.name)])}
            source = "kernel name" if coll else "none"
    return _call(a, f, source, rank)


def _call(a: Activity, f: dict, source: str, rank: int | None) -> CollectiveCall:
    coll, dt = f["collective"], f["dtype"]
    size = size_of(coll, f["in"], f["out"], dt[1]) if coll and dt else None
    notes = list(f["notes"])
    if coll and dt is None:
        notes.append("data type unknown: bytes unknown")
    return CollectiveCall(rank, a.name, a.device, a.stream, a.start_ns, a.end_ns, coll, dt[0] if dt else None,
                          f["in"], f["out"], size, f["group"], f["group_from"], f["pg"], f["seq"], source, tuple(notes),
                          tuple(f.get("ranks") or ()))


# ------------------------------------------------------------------ steps


@dataclass(frozen=True)
class StepSummary:
    """One step of one rank, measured from the trace's intervals."""

    rank: int | None
    step: str
    start_ns: int
    end_ns: int
    busy_s: float
    idle_s: float
    class_s: dict[str, float]
    communication_s: float
    overlapped_s: float
    exposed_s: float
    collectives: int

    @property
    def span_s(self) -> float:
        return (self.end_ns - self.start_ns) * 1e-9


def _attributed(intervals: Sequence[tuple[int, int, int]]) -> dict[int, int]:
    """Each instant covered by the (start, end, owner) intervals counted once, for the
    lowest owner covering it: {owner: ns}. The values sum to the intervals' union, so
    no instant is counted for two owners (two steps, where their windows overlap)."""
    sweep = _Attribution()
    for s_, e, o in sorted(intervals, key=lambda x: x[0]):
        sweep.add(s_, e, o)
    return sweep.result()


class _Attribution:
    """_attributed's sweep, fed the intervals in order of start: it holds only those open
    at once (a heap of their ends), never an event per interval of the whole trace."""

    __slots__ = ("out", "active", "ends", "prev")

    def __init__(self) -> None:
        self.out: dict[int, int] = {}
        self.active: dict[int, int] = {}  # owner -> intervals of it open
        self.ends: list[tuple[int, int]] = []  # (end, owner) of each open interval, a heap
        self.prev: int | None = None

    def _to(self, t: int) -> None:
        """The time from the last event to `t`, for the lowest owner open over it."""
        active, out, prev = self.active, self.out, self.prev
        if active and prev is not None and t > prev:
            w = min(active)
            out[w] = out.get(w, 0) + t - prev
        self.prev = t

    def _close_to(self, t: int) -> None:
        """Every interval ending at or before `t` closed (an end before a start at one instant)."""
        ends, active = self.ends, self.active
        while ends and ends[0][0] <= t:
            e, o = heapq.heappop(ends)
            self._to(e)
            n = active[o] - 1
            if n:
                active[o] = n
            else:
                del active[o]

    def add(self, s_: int, e: int, o: int) -> None:
        if e <= s_:
            return
        if self.ends and self.ends[0][0] <= s_:
            self._close_to(s_)
        self._to(s_)
        self.active[o] = self.active.get(o, 0) + 1
        heapq.heappush(self.ends, (e, o))

    def result(self) -> dict[int, int]:
        if self.ends:
            self._close_to(max(e for e, _ in self.ends))
        return self.out


def _union_length(starts: Any, ends: Any, rows: Any) -> int:
    """length() of the intervals at `rows`, taken in order of start: the union's length,
    one interval held at a time."""
    total, lo, hi = 0, None, None
    for i in rows:
        s_, e = starts[i], ends[i]
        if e <= s_:
            continue
        if hi is not None and s_ <= hi:
            if e > hi:
                hi = e
        else:
            if hi is not None:
                total += hi - lo
            lo, hi = s_, e
    return total + (hi - lo if hi is not None else 0)


def _comm_rows(acts: Activities, comm_ids: set[int], local_ids: set[int] = frozenset()
               ) -> tuple[bytearray, bytearray, list[str]]:
    """Per activity: 1 where it is a collective (its object's id in `comm_ids`), and its
    class's number in the classes returned (a collective's: communication; a one-rank
    group's collective, in `local_ids`: memory, a local copy; else its kernel_class,
    taken once per distinct kind and name)."""
    mask = acts.comm_mask(comm_ids)
    local = acts.comm_mask(local_ids) if local_ids else None
    names: list[str] = []
    numbers: dict[str, int] = {}
    per_key = []
    for kind, name, device, stream, grid, block, copy_kind in acts.table:
        c = kernel_class(Activity(kind, name, device, stream, 0, 0, 0, grid, block, 0, copy_kind))[0]
        per_key.append(numbers.setdefault(c, len(numbers)))
        if len(names) < len(numbers):
            names.append(c)
    comm_n = numbers.setdefault("communication", len(numbers))
    if len(names) < len(numbers):
        names.append("communication")
    mem_n = numbers.setdefault("memory", len(numbers)) if local_ids else -1
    if len(names) < len(numbers):
        names.append("memory")
    cls = bytearray(len(acts))
    for i, (k, m) in enumerate(zip(acts.key, mask)):
        cls[i] = comm_n if m else (mem_n if local is not None and local[i] else per_key[k])
    return mask, cls, names


def _exposed_pieces(activities: Sequence[Activity], owner: Sequence[int], is_comm: Sequence[bool]
                    ) -> list[tuple[int, int, int]]:
    """(start, end, owner) of each communication activity's time with no other work on
    its device (the exposed communication), per device as exposure is. Each device's
    other work is merged as it is met in order of start (one interval open at a time)."""
    import bisect

    acts = Activities.of(activities)
    order = acts.by_start()
    rows = range(len(acts)) if order is None else order
    dev_of = acts.device_of_key()
    starts, ends, keys = acts.start, acts.end, acts.key
    by_dev: dict[int, tuple[list, Any, Any]] = {}
    for i in rows:
        dev = dev_of[keys[i]]
        got = by_dev.get(dev)
        if got is None:
            got = by_dev[dev] = ([], array("q"), array("q"))
        comm, ws, we = got
        s_, e = starts[i], ends[i]
        if is_comm[i]:
            comm.append((s_, e, owner[i]))
        elif e > s_:  # the device's other work, merged (union) as it comes in order of start
            if we and s_ <= we[-1]:
                if e > we[-1]:
                    we[-1] = e
            else:
                ws.append(s_)
                we.append(e)
    out = []
    for comm, ws, we in by_dev.values():
        for s_, e, o in comm:
            pos = s_
            i = bisect.bisect_right(we, s_)  # the first piece of work that ends after the kernel starts
            while i < len(ws) and ws[i] < e:
                if ws[i] > pos:
                    out.append((pos, ws[i], o))
                pos = max(pos, we[i])
                i += 1
            if e > pos:
                out.append((pos, e, o))
    return out


def step_summaries(rank: int | None, windows: Sequence[tuple[str, int, int]], activities: Sequence[Activity],
                   step_of: Sequence[int], comm_ids: set[int], local_ids: set[int] = frozenset()
                   ) -> list[StepSummary]:
    """Each step from its own activities only (`step_of[i]`: the step activity i belongs
    to, the one whose host range launched it; -1: none): busy, each class's time,
    communication and its exposed part, each instant counted for one step only, so that
    summed over steps no figure exceeds the trace's own (trace_totals). The window of a
    step is its own activities' span, as given in `windows`. One pass over the trace's
    columns in order of start, holding only the intervals open at once: no list of every
    activity's interval (460 B an activity at once on a 1 GB trace)."""
    acts = Activities.of(activities)
    mask, cls, names = _comm_rows(acts, comm_ids, local_ids)
    if local_ids:  # a one-rank group's collective is still a collective call of its step, counted
        mask = bytearray(a | b for a, b in zip(mask, acts.comm_mask(local_ids)))
    order = acts.by_start()
    starts, ends = acts.start, acts.end
    busy_sweep = _Attribution()
    class_sweeps = [_Attribution() for _ in names]
    n_coll: dict[int, int] = {}
    for i in (range(len(acts)) if order is None else order):
        o = step_of[i]
        if o < 0:
            continue
        s_, e = starts[i], ends[i]
        busy_sweep.add(s_, e, o)
        class_sweeps[cls[i]].add(s_, e, o)
        if mask[i]:
            n_coll[o] = n_coll.get(o, 0) + 1
    busy = busy_sweep.result()
    comm_n = names.index("communication")
    classes = {c: sw.result() for c, sw in zip(names, class_sweeps) if sw.prev is not None}
    # exposure is physical: any work beside a step's communication hides it, whichever step
    # (or none) launched that work; only the communication's own step counts the piece
    is_comm = bytearray(c == comm_n for c in cls)
    exposed = _attributed([x for x in _exposed_pieces(acts, step_of, is_comm) if x[2] >= 0])
    out = []
    for k, (name, lo, hi) in enumerate(windows):
        b = busy.get(k, 0)
        comm = classes.get("communication", {}).get(k, 0)
        exp = min(exposed.get(k, 0), comm)
        out.append(StepSummary(rank, name, lo, hi, b * 1e-9, max(0, hi - lo - b) * 1e-9,
                               {c: v[k] * 1e-9 for c, v in sorted(classes.items()) if v.get(k)},
                               comm * 1e-9, (comm - exp) * 1e-9, exp * 1e-9, n_coll.get(k, 0)))
    return out


@dataclass(frozen=True)
class TraceTotals:
    """A trace's own figures over all its activities (no step): what the steps' sums may
    never exceed."""

    busy_s: float
    communication_s: float
    exposed_s: float
    collectives: int


def trace_totals(activities: Sequence[Activity], comm_ids: set[int], local_ids: set[int] = frozenset()) -> TraceTotals:
    """The trace's own figures, communication as step_summaries counts it (the
    collectives, and what is communication by its kind or name, a peer copy). From the
    columns in order of start, one interval open at a time."""
    acts = Activities.of(activities)
    mask, cls, names = _comm_rows(acts, comm_ids, local_ids)
    comm_n = names.index("communication")
    order = acts.by_start()
    rows = range(len(acts)) if order is None else order
    is_comm = bytearray(c == comm_n for c in cls)
    zero = bytes(len(acts))  # every activity owned by the trace
    return TraceTotals(_union_length(acts.start, acts.end, rows) * 1e-9,
                       _union_length(acts.start, acts.end, (i for i in rows if is_comm[i])) * 1e-9,
                       sum(_attributed(_exposed_pieces(acts, zero, is_comm)).values()) * 1e-9,
                       sum(mask) + (sum(acts.comm_mask(local_ids)) if local_ids else 0))


def check_steps(steps: Sequence[StepSummary], totals: TraceTotals, where: str = "") -> None:
    """The rule every trace read keeps: summed over steps, busy time, communication, its
    exposed part and the collectives counted never exceed the trace's own (a kernel in
    two steps would). A breach is linkroof's bug: raised, never printed as a figure."""
    slack = 1e-9 * (1 + len(steps))  # rounding of ns to s, one per step
    for what, got, total in (("busy time", sum(s.busy_s for s in steps), totals.busy_s),
                             ("communication", sum(s.communication_s for s in steps), totals.communication_s),
                             ("exposed communication", sum(s.exposed_s for s in steps), totals.exposed_s),
                             ("collectives", sum(s.collectives for s in steps), totals.collectives)):
        if got > total + slack:
            raise AssertionError(f"{where}: the steps' {what} sums to {got!r}, more than the trace's {total!r}: a "
                                 "kernel counted in two steps (a linkroof bug: please report it)")


def exposed_s(call: CollectiveCall, activities: Sequence[Activity], comm_ids: set[int]) -> float:
    """The part of a collective's kernel with no other (non-communication) work beside it
    on its GPU: what a faster collective could take off the step."""
    own = [(call.start_ns, call.end_ns)]
    work = union((a.start_ns, a.end_ns) for a in activities
                 if id(a) not in comm_ids and a.device == call.device and a.end_ns > call.start_ns
                 and a.start_ns < call.end_ns)
    return (length(own) - length(intersect(own, work))) * 1e-9


# ------------------------------------------------------------------ across ranks


CLOCK_TOLERANCE_S = 1e-3  # how far apart one call's kernels on two ranks may seem (hosts' clocks differ)


@dataclass(frozen=True)
class MatchedCall:
    """One collective call across the ranks of one group: matched by the group's `Seq`
    where the trace has it and names the group, else by aligning the ranks' calls of one
    collective, size and type in time (`matched_by`). Never two groups, never two
    different calls, and never kernels that do not overlap (within the clock tolerance):
    a collective cannot end on one rank before every rank has started it."""

    key: tuple
    collective: str | None
    size_bytes: int | None
    ranks: tuple[int, ...]
    skew_s: float  # last arrival less first arrival (kernel starts)
    transfer_s: float  # from the last rank's arrival to the first rank's end: the transfer, no waiting in it
    last_rank: int | None  # the rank that arrived last (the others waited for it); None on a tie
    matched_by: str
    dtype: str | None = None
    group_size: int | None = None
    waits_s: tuple[tuple[int, float], ...] = ()  # (rank, how long it waited for the last arrival)
    members: tuple[tuple[int, int, int, int], ...] = ()  # each rank's call: (rank, device, stream, kernel start ns)
    tied: bool = False  # two or more ranks started within TIE_NS of the last start: no rank was last

    @property
    def busbw(self) -> float | None:
        """Bus bandwidth of the transfer alone (the wait for the last rank left out)."""
        if not self.size_bytes or self.transfer_s <= 0 or not self.collective or not self.group_size:
            return None
        return self.size_bytes / self.transfer_s * busbw_factor(self.collective, self.group_size)

    @property
    def last_words(self) -> str:
        """Who arrived last, in words: a rank, "none (a tie)" when another rank started within
        TIE_NS of the last start, or "unknown" where the last call's rank is not known."""
        if self.last_rank is not None:
            return str(self.last_rank)
        return "none (a tie)" if self.tied else "unknown"


@dataclass(frozen=True)
class Unmatched:
    """A call left unmatched (never paired with a call it is not), and why."""

    key: tuple
    ranks: tuple[int, ...]
    why: str


@dataclass(frozen=True)
class MatchSummary:
    """How the calls of several ranks were matched: how many, on what evidence, how many
    left unmatched, under which clock tolerance."""

    calls: int
    matched_calls: int
    by_seq: int
    by_alignment: int
    unmatched_calls: int
    tolerance_s: float

    def line(self) -> str:
        return (f"{self.matched_calls} of {self.calls} collective calls matched across ranks into "
                f"{self.by_seq + self.by_alignment} calls ({self.by_seq} by the group's Seq, {self.by_alignment} by "
                f"aligning each group's calls of one collective, size and type in time); {self.unmatched_calls} left "
                f"unmatched; one call's kernels must overlap within {self.tolerance_s * 1e3:g} ms (the clock "
                "tolerance across hosts)")


def _what(c: CollectiveCall) -> tuple:
    return (c.collective, c.size_bytes, c.dtype)


def group_identity(c: CollectiveCall) -> tuple[str, tuple[int, ...]] | None:
    """The group a call ran on as every rank names it: its name (torch names a group the
    same on all its ranks) and its global ranks where the trace lists them; None where
    the trace records neither (never a rank-local id)."""
    if c.group_ranks or c.process_group:
        return (c.process_group, c.group_ranks)
    return None


def member(c: CollectiveCall) -> tuple[int, int, int, int]:
    return (c.rank if c.rank is not None else -1, c.device, c.stream, c.start_ns)


def _apart_ns(cs: Sequence[CollectiveCall]) -> int:
    """How far one call's kernels are from all overlapping: the last start less the first
    end (at most 0 where they overlap)."""
    return max(c.start_ns for c in cs) - min(c.end_ns for c in cs)


def match_calls(calls: Sequence[CollectiveCall], tolerance_s: float = CLOCK_TOLERANCE_S
                ) -> tuple[list[MatchedCall], list[Unmatched]]:
    """Calls matched across ranks, sure or said so:
    - within one group only (group_identity: its name and global ranks; calls whose
      group is not recorded only with each other, and never more ranks than the group has);
    - by (group, Seq) where the trace has Seq and names the group (each group counts its
      own Seq: without a name, a Seq says nothing);
    - else by aligning each rank's calls of one collective, size and type to the rank with
      the most of them, in order and in time: a rank whose window starts later or ends
      sooner shifts no pair;
    - only where the kernels overlap, within `tolerance_s` (one host's clock: they must;
      across hosts, the clocks' difference).
    What cannot be matched is listed unmatched with why. Transfer: from the last arrival
    to the first end. The result does not depend on the order of the calls given."""
    tol = int(round(tolerance_s * 1e9))
    by_rank: dict[int | None, list[CollectiveCall]] = {}
    for c in sorted(calls, key=lambda c: (c.start_ns, c.end_ns, c.rank if c.rank is not None else -1, c.device,
                                           c.stream)):
        by_rank.setdefault(c.rank, []).append(c)
    if len(by_rank) < 2:
        return [], []
    # each bucket: (kind, group identity); the kind is a tag apart from the group's name, so
    # a group named like a tag ("?", "!not-a-member") is a group like any other
    buckets: dict[tuple, dict[int | None, list[CollectiveCall]]] = {}
    for rank, cs in by_rank.items():
        for c in cs:
            gid = group_identity(c)
            if gid is None:
                bucket: tuple = ("unrecorded", ("?",))
            elif gid[1] and c.rank is not None and c.rank not in gid[1]:
                bucket = ("not a member", gid)  # a rank outside the ranks its group lists: never paired
            else:
                bucket = ("group", gid)
            buckets.setdefault(bucket, {}).setdefault(rank, []).append(c)
    out: list[MatchedCall] = []
    unmatched: list[Unmatched] = []
    for (kind, gid), ranks in buckets.items():
        known = kind == "group"
        name = gid[0] if known else ""
        if kind == "not a member":
            for rank, cs in ranks.items():
                unmatched += [Unmatched(("unpaired", gid[0]) + _what(c), (rank,),
                                        f"rank {rank} is not among its group's ranks {list(gid[1])}") for c in cs]
            continue
        seqd = {r: [c for c in cs if c.seq is not None] for r, cs in ranks.items()} if known else {}
        rest = {r: [c for c in cs if not known or c.seq is None] for r, cs in ranks.items()}
        _by_seq(name, gid, seqd, tol, out, unmatched)
        _by_alignment(name, gid, rest, tol, out, unmatched, known)
    out.sort(key=lambda m: (str(m.key[1]), min(x[3] for x in m.members), m.key[0]))
    return out, unmatched


def _set_fault(cs: Sequence[CollectiveCall], tol: int) -> str | None:
    """Why these calls (one per rank) cannot be one call, or None."""
    kinds = {_what(c) for c in cs}
    if len(kinds) > 1:
        return "the ranks' calls differ: " + "; ".join(f"{k[0]} {k[1]} B {k[2]}" for k in sorted(kinds, key=str))
    apart = _apart_ns(cs)
    if apart > tol:
        return (f"their kernels are {apart / 1e6:.3f} ms apart (none overlaps the last to start), more than the "
                f"{tol / 1e6:g} ms clock tolerance: not one call")
    sizes = {c.group_size for c in cs if c.group_size}
    if sizes and len(cs) > min(sizes):
        return f"{len(cs)} ranks hold it at once, more than its group's {min(sizes)}: two groups under one name"
    return None


TIE_NS = 1000  # ranks whose kernels start within 1 us of the latest start arrived together: no one was last


def _matched(key: tuple, cs: Sequence[CollectiveCall], by: str) -> MatchedCall:
    first = min(c.start_ns for c in cs)
    last = max(cs, key=lambda c: (c.start_ns, c.rank if c.rank is not None else -1))
    transfer = max(0, min(c.end_ns for c in cs) - last.start_ns) * 1e-9
    groups = {c.group_size for c in cs if c.group_size}
    tied = sum(1 for c in cs if last.start_ns - c.start_ns <= TIE_NS) > 1  # a tie names no rank (issue 45, item 6)
    return MatchedCall(key, cs[0].collective, cs[0].size_bytes, tuple(sorted(c.rank for c in cs if c.rank is not None)),
                       (last.start_ns - first) * 1e-9, transfer, None if tied else last.rank, by, cs[0].dtype,
                       groups.pop() if len(groups) == 1 else None,
                       tuple(sorted((c.rank, (last.start_ns - c.start_ns) * 1e-9) for c in cs if c.rank is not None)),
                       tuple(sorted(member(c) for c in cs)), tied)


def _by_seq(name: str, gid: tuple, ranks: dict, tol: int, out: list, unmatched: list) -> None:
    per: dict[int, list[CollectiveCall]] = {}
    for cs in ranks.values():
        for c in cs:
            per.setdefault(c.seq, []).append(c)  # type: ignore[arg-type]
    for seq, cs in per.items():
        key = ("seq", name, seq)
        rs = [c.rank for c in cs]
        if len(set(rs)) < len(rs):
            why = f"Seq {seq} appears twice on one rank of group {name!r}: not a call's identity here"
        elif len(cs) < 2:
            why = "no other rank has this call (its window may not cover it)"
        else:
            why = _set_fault(cs, tol)
        if why:
            unmatched.append(Unmatched(key, tuple(sorted(r for r in rs if r is not None)), why))
            continue
        out.append(_matched(key, cs, f"Seq {seq} of group {name!r}" + (f" (ranks {list(gid[1])})" if gid[1] else "")))


def _by_alignment(name: str, gid: tuple, ranks: dict, tol: int, out: list, unmatched: list, known: bool) -> None:
    """Each rank's calls of one collective, size and type aligned to the reference rank's
    (the one with the most; the lowest such rank), in order, a pair only where the
    kernels overlap within `tol`; a reference call and its partners one call where all
    of them overlap."""
    what: dict[tuple, dict[int | None, list[CollectiveCall]]] = {}
    for r, cs in ranks.items():
        for c in cs:
            what.setdefault(_what(c), {}).setdefault(r, []).append(c)
    how = ("aligned in time: the calls of one collective, size and type of group "
           + (repr(name) if known else "(not recorded)") + ", in order, kernels overlapping")
    for w, per in what.items():
        if len(per) < 2:
            for r, cs in per.items():
                unmatched += [Unmatched(("aligned", name) + w, (r,) if r is not None else (),
                                        "no other rank has a call of this group, collective, size and type")
                              for _ in cs]
            continue
        ref_rank = min(per, key=lambda r: (-len(per[r]), r if r is not None else -1))
        ref = per[ref_rank]
        sets: list[list[CollectiveCall]] = [[c] for c in ref]
        for r, cs in sorted(per.items(), key=lambda kv: kv[0] if kv[0] is not None else -1):
            if r == ref_rank:
                continue
            j = 0
            for i, c in enumerate(ref):
                while j < len(cs) and cs[j].end_ns < c.start_ns - tol:
                    unmatched.append(Unmatched(("aligned", name) + w, (r,) if r is not None else (),
                                               "no call of its group, collective, size and type on the other ranks "
                                               "overlaps it in time (their windows may not cover it)"))
                    j += 1
                while j + 1 < len(cs) and _fit(c, cs[j + 1]) < _fit(c, cs[j]) and _fit(c, cs[j + 1])[0] <= tol:
                    unmatched.append(Unmatched(("aligned", name) + w, (r,) if r is not None else (),
                                               "no call of its group, collective, size and type on the other ranks "
                                               "overlaps it in time (their windows may not cover it)"))
                    j += 1  # its next call fits this one better: this one has no partner here
                if j < len(cs) and _fit(c, cs[j])[0] <= tol and not (
                        i + 1 < len(ref) and _fit(ref[i + 1], cs[j]) < _fit(c, cs[j])):
                    sets[i].append(cs[j])
                    j += 1
            for c in cs[j:]:
                unmatched.append(Unmatched(("aligned", name) + w, (r,) if r is not None else (),
                                           "no call of its group, collective, size and type on the other ranks "
                                           "overlaps it in time (their windows may not cover it)"))
        for i, cs in enumerate(sets):
            key = ("aligned", name) + w + (i,)
            why = "no call of its group, collective, size and type on the other ranks overlaps it in time (their " \
                  "windows may not cover it)" if len(cs) < 2 else _set_fault(cs, tol)
            if why:
                unmatched.append(Unmatched(key, tuple(sorted(c.rank for c in cs if c.rank is not None)), why))
                continue
            out.append(_matched(key, cs, how))


def _fit(a: CollectiveCall, b: CollectiveCall) -> tuple[int, int]:
    """How well two ranks' kernels fit one call: how far they are from overlapping (0
    where they overlap), then how far apart they start."""
    return max(0, max(a.start_ns, b.start_ns) - min(a.end_ns, b.end_ns)), abs(a.start_ns - b.start_ns)


def match_summary(calls: int, matched: Sequence[MatchedCall], unmatched: Sequence[Unmatched],
                  tolerance_s: float = CLOCK_TOLERANCE_S) -> MatchSummary:
    """The counts behind a matching: calls given, calls in a matched call, by what."""
    in_sets = sum(len(m.members) for m in matched)
    seq = sum(1 for m in matched if m.key[0] == "seq")
    return MatchSummary(calls, in_sets, seq, len(matched) - seq, calls - in_sets, tolerance_s)
