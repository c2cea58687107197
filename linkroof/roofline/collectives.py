"""Collectives: the one home of their names, nccl-tests' size and bus-bandwidth
conventions, the bytes each rank puts on the wire, and data-type names.

Sizes follow nccl-tests: all-gather's size is the gathered output, reduce-scatter's
the input, all-to-all's the whole send buffer, send/recv's what each rank sends.
busbw = algbw x factor (all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all
(n-1)/n; broadcast, reduce, send/recv 1). Bytes on the wire are per rank, per
direction, for ring / direct algorithms: all-reduce 2S(n-1)/n, all-gather /
reduce-scatter / all-to-all S(n-1)/n, broadcast, reduce and send/recv S.
"""

from __future__ import annotations

from ..errors import LinkroofError

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "sendrecv")
NO_IN_PLACE = frozenset({"all_to_all", "sendrecv"})
# Other spellings seen in the wild (nccl-tests' binary names, NCCL's API), and the name used here
ALIASES = {"alltoall": "all_to_all", "allreduce": "all_reduce", "allgather": "all_gather",
           "reducescatter": "reduce_scatter", "send_recv": "sendrecv"}

# Bus-bandwidth factors by rank count (nccl-tests' PERFORMANCE.md), including the
# collectives nccl-tests has that linkroof does not run itself.
_BUSBW = {
    "all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n, "all_to_all": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0, "reduce": lambda n: 1.0, "sendrecv": lambda n: 1.0,
    "hypercube": lambda n: (n - 1) / n, "scatter": lambda n: (n - 1) / n, "gather": lambda n: (n - 1) / n,
}

# Bytes per element, by the names linkroof uses
DTYPE_BYTES = {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1, "fp4": 0.5,
               "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "uint8": 1}
# nccl-tests' and NCCL's type names -> linkroof's
_DTYPE_ALIASES = {"float": "fp32", "float32": "fp32", "half": "fp16", "float16": "fp16", "bfloat16": "bf16",
                  "double": "fp64", "float64": "fp64", "int": "int32", "uint": "uint32", "char": "int8",
                  "int8_t": "int8", "uint8_t": "uint8", "f8e4m3": "fp8", "f8e5m2": "fp8"}


class CollectiveError(LinkroofError):
    """An unknown collective or data type; the message lists the known ones."""


def canonical(name: str) -> str:
    """A collective's name as linkroof spells it ('alltoall' -> 'all_to_all')."""
    return ALIASES.get(name, name)


def canonical_dtype(name: str) -> str:
    """A data type as linkroof spells it (nccl-tests' 'float' -> 'fp32')."""
    return _DTYPE_ALIASES.get(name, name)


def busbw_factor(collective: str, ranks: int) -> float:
    """busbw / algbw for `collective` over `ranks` ranks; 1 for names nccl-tests has no
    factor for."""
    return _BUSBW.get(canonical(collective), lambda n: 1.0)(ranks)


def link_bytes(collective: str, size_bytes: float, ranks: int) -> float:
    """Bytes each rank sends (and receives) for a collective of `size_bytes` (nccl-tests'
    size)."""
    n = ranks
    if n < 1:
        raise CollectiveError(f"ranks must be at least 1, got {n}")
    c = canonical(collective)
    if c == "all_reduce":
        return 2 * size_bytes * (n - 1) / n
    if c in ("all_gather", "reduce_scatter", "all_to_all"):
        return size_bytes * (n - 1) / n
    if c in ("broadcast", "reduce", "sendrecv"):
        return float(size_bytes)
    raise CollectiveError(f"unknown collective {collective!r} (one of {', '.join(COLLECTIVES)})")


def dtype_bytes(dtype: str) -> float:
    d = canonical_dtype(dtype)
    if d not in DTYPE_BYTES:
        raise CollectiveError(f"unknown data type {dtype!r} (one of {', '.join(DTYPE_BYTES)})")
    return DTYPE_BYTES[d]


def element_count(nbytes: int, dtype: str, collective: str = "all_reduce", ranks: int = 1) -> int | None:
    """nccl-tests' count column: elements of `dtype` in `nbytes`, per rank for the
    collectives whose size is every rank's together (all-gather: each rank's input;
    reduce-scatter: each rank's output; all-to-all: what a rank sends each peer is the
    count over ranks, nccl-tests prints size / element / ranks). None for an unknown type."""
    d = canonical_dtype(dtype)
    if d not in DTYPE_BYTES:
        return None
    n = int(nbytes // DTYPE_BYTES[d])
    return n // max(1, ranks) if canonical(collective) in ("all_gather", "reduce_scatter", "all_to_all") else n


def layout(collective: str, nbytes: int, ranks: int, element_bytes: int) -> tuple[int, int]:
    """(send elements, receive elements) of one rank for a collective of `nbytes`;
    sizes that do not split evenly over the ranks are rounded down, as nccl-tests does."""
    total = nbytes // element_bytes
    c = canonical(collective)
    if c == "all_gather":
        return total // ranks, (total // ranks) * ranks
    if c == "reduce_scatter":
        return (total // ranks) * ranks, total // ranks
    if c == "all_to_all":
        return (total // ranks) * ranks, (total // ranks) * ranks
    return total, total


def actual_bytes(collective: str, nbytes: int, ranks: int, dtype: str) -> int:
    """The size a collective of `nbytes` really moves once rounded to whole elements per rank."""
    esize = int(dtype_bytes(dtype))
    send_n, recv_n = layout(collective, nbytes, ranks, esize)
    return (recv_n if canonical(collective) == "all_gather" else send_n) * esize


# Dependent hops a collective needs at the least. Over NVSwitch (or any full mesh)
# every rank can write every peer directly, so one hop carries any collective: a
# one-shot kernel (benchmarks/oneshot_floor.py) did each of the seven on 2xH200 in
# 2.2-2.4 us at 8 B. Ring algorithms take more hops (all-reduce 2(n-1)) but a bound
# counts the fewest; the bytes on the wire stay the ring's, also the fewest.
_STEPS = {c: (lambda n: 1) for c in ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce",
                                      "all_to_all", "sendrecv")}


def dependent_steps(name: str, ranks: int) -> int:
    """The number of dependent hops of `name` over `ranks` (the cost model's syncs)."""
    c = canonical(name)
    if c not in _STEPS:
        raise CollectiveError(f"no step count for {name!r} (one of {', '.join(_STEPS)})")
    return max(1, _STEPS[c](max(2, ranks)))
