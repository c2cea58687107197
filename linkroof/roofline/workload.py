"""Workloads: what a kernel or collective must do (FLOPs per data type, HBM bytes,
bytes per link class), from the user (Python or TOML), from collective formulas, or
from templates of the fused operations multi-GPU kernels are made of.

Bytes on the wire are per GPU (rank), per direction; the collective formulas live in
collectives.py.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

from ..errors import LinkroofError
from ..schema import Workload
from . import collectives as C

# data types a workload can count FLOPs in
FLOP_DTYPES = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4")


class WorkloadError(LinkroofError):
    """A workload description is wrong; the message names the key."""


def collective(collective: str, size_bytes: int, ranks: int, link: str = "nvlink") -> Workload:
    """A collective of `size_bytes` (nccl-tests' size) over `ranks`: its bytes per rank."""
    name = C.canonical(collective)
    try:
        nbytes = C.link_bytes(name, size_bytes, ranks)
    except C.CollectiveError as e:
        raise WorkloadError(str(e)) from None
    return Workload(name=f"{name} {size_bytes} B x {ranks}", hbm_bytes=0.0, link_bytes={link: nbytes},
                    message_bytes=size_bytes, ranks=ranks, pattern=name, source=f"formula:{name}")


def _dtype_bytes(dtype: str) -> float:
    if dtype not in FLOP_DTYPES:
        raise WorkloadError(f"unknown data type {dtype!r} (one of {', '.join(FLOP_DTYPES)})")
    return C.dtype_bytes(dtype)


def allgather_gemm(m: int, n: int, k: int, dtype: str, ranks: int, link: str = "nvlink") -> Workload:
    """Tensor parallel, column-parallel: A [m, k] sharded by rows is all-gathered, each
    rank multiplies it by its B shard [k, n/ranks]. Per rank. The message is the gathered
    A (nccl-tests' all-gather size: the whole output), as NCCL figures count it."""
    s = _dtype_bytes(dtype)
    return Workload(name=f"all-gather + GEMM {m}x{n}x{k} {dtype} x{ranks}",
                    flops={dtype: 2.0 * m * k * n / ranks},
                    hbm_bytes=s * (m * k + k * n / ranks + m * n / ranks),
                    link_bytes={link: s * m * k * (ranks - 1) / ranks}, message_bytes=int(s * m * k),
                    ranks=ranks, pattern="all_gather", source="template:allgather_gemm",
                    params=dict(m=m, n=n, k=k, dtype=dtype))


def gemm_reduce_scatter(m: int, n: int, k: int, dtype: str, ranks: int, link: str = "nvlink") -> Workload:
    """Row-parallel: A [m, k/ranks] x B [k/ranks, n] gives partial C [m, n], then
    reduce-scatter over ranks. Per rank."""
    s = _dtype_bytes(dtype)
    return Workload(name=f"GEMM + reduce-scatter {m}x{n}x{k} {dtype} x{ranks}",
                    flops={dtype: 2.0 * m * n * k / ranks},
                    hbm_bytes=s * (m * k / ranks + k * n / ranks + m * n),
                    link_bytes={link: s * m * n * (ranks - 1) / ranks}, message_bytes=int(s * m * n),
                    ranks=ranks, pattern="reduce_scatter", source="template:gemm_reduce_scatter",
                    params=dict(m=m, n=n, k=k, dtype=dtype))


def gemm_all_reduce(m: int, n: int, k: int, dtype: str, ranks: int, link: str = "nvlink") -> Workload:
    s = _dtype_bytes(dtype)
    return Workload(name=f"GEMM + all-reduce {m}x{n}x{k} {dtype} x{ranks}",
                    flops={dtype: 2.0 * m * n * k / ranks},
                    hbm_bytes=s * (m * k / ranks + k * n / ranks + m * n),
                    link_bytes={link: 2 * s * m * n * (ranks - 1) / ranks}, message_bytes=int(s * m * n),
                    ranks=ranks, pattern="all_reduce", source="template:gemm_all_reduce",
                    params=dict(m=m, n=n, k=k, dtype=dtype))


def ring_attention(seq: int, hidden: int, dtype: str, ranks: int, causal: bool = False,
                   link: str = "nvlink") -> Workload:
    """Sequence-parallel attention with a ring exchange of K and V blocks. Per rank:
    its seq/ranks queries against every key; K and V pass around the ring."""
    s = _dtype_bytes(dtype)
    local = seq / ranks
    flops = 4.0 * local * seq * hidden * (0.5 if causal else 1.0)
    return Workload(name=f"ring attention seq {seq} hidden {hidden} {dtype} x{ranks}", flops={dtype: flops},
                    hbm_bytes=s * (4 * local * hidden + 2 * seq * hidden),
                    link_bytes={link: 2 * s * local * hidden * (ranks - 1)}, message_bytes=int(2 * s * local * hidden),
                    ranks=ranks, pattern="ring", source="template:ring_attention")


def moe_dispatch_combine(tokens: int, hidden: int, experts: int, top_k: int, dtype: str, ranks: int,
                         link: str = "nvlink") -> Workload:
    """Expert parallel: each rank's `tokens` go to top_k experts spread evenly over the
    ranks (dispatch) and come back (combine). Per rank, uniform routing."""
    s = _dtype_bytes(dtype)
    if experts < ranks:
        raise WorkloadError(f"experts ({experts}) must be at least ranks ({ranks})")
    one_way = s * tokens * top_k * hidden * (ranks - 1) / ranks
    return Workload(name=f"MoE dispatch+combine {tokens} tok h{hidden} E{experts} k{top_k} {dtype} x{ranks}",
                    hbm_bytes=4 * one_way, link_bytes={link: 2 * one_way},
                    message_bytes=int(s * tokens * top_k * hidden / ranks), ranks=ranks, pattern="all_to_all",
                    source="template:moe_dispatch_combine")


TEMPLATES = {
    "allgather_gemm": (allgather_gemm, ("m", "n", "k", "dtype", "ranks")),
    "gemm_reduce_scatter": (gemm_reduce_scatter, ("m", "n", "k", "dtype", "ranks")),
    "gemm_all_reduce": (gemm_all_reduce, ("m", "n", "k", "dtype", "ranks")),
    "ring_attention": (ring_attention, ("seq", "hidden", "dtype", "ranks")),
    "moe_dispatch_combine": (moe_dispatch_combine, ("tokens", "hidden", "experts", "top_k", "dtype", "ranks")),
}


LINK_CLASSES = ("nvlink", "pcie_peer", "host", "network")
MAX_COUNT = 1e18  # bytes or FLOPs a workload may claim: beyond this it is not a kernel's
MAX_DIM = 1 << 31  # a matrix dimension, a sequence length, a token count
MAX_RANKS = 4096

# What each form of workload accepts: a key that means nothing for it is refused
COMMON_KEYS = {"name", "link"}
FORM_KEYS = {
    "collective": {"collective", "size_bytes", "ranks", "dtype"},
    "explicit": {"flops", "hbm_bytes", "link_bytes", "message_bytes", "ranks", "pattern", "dtype"},
}


def _number(table: dict[str, Any], key: str, where: str, integer: bool = False, positive: bool = False,
            limit: float = MAX_COUNT) -> Any:
    """A finite number of `table[key]`, not negative (at least 1 where `positive`), at
    most `limit`; the error names the key and what was given."""
    value = table.get(key)
    ok = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok or value != value:
        kind = "an integer" if integer else "a number"
        raise WorkloadError(f"{where}.{key}: expected {kind}, got {value!r}"[:300])
    if value < 0:
        raise WorkloadError(f"{where}.{key}: must not be negative, got {value!r}"[:300])
    if value > limit:  # infinity and 5000-digit integers too (which have no repr to show)
        shown = (f"{value:.3g}" if isinstance(value, float) else str(value) if value < 10 ** 30
                 else "a number of many digits")
        bound = f"{limit:,.0f}" if limit < 1e9 else f"{limit:.3g}"
        raise WorkloadError(f"{where}.{key}: {shown} is more than the {bound} a workload may give")
    if positive and value == 0:
        raise WorkloadError(f"{where}.{key}: must be at least 1, got 0")
    return value


def _text(table: dict[str, Any], key: str, where: str, choices: tuple[str, ...] | None = None) -> str:
    value = table[key]
    if not isinstance(value, str) or len(value) > 200 or any(not c.isprintable() for c in value):
        raise WorkloadError(f"{where}.{key}: expected a line of text (at most 200 characters), got {value!r}"[:300])
    if choices is not None and value not in choices:
        raise WorkloadError(f"{where}.{key}: {value!r} is not one of {', '.join(choices)}")
    return value


def _check_keys(w: dict[str, Any], allowed: set[str], form: str, where: str) -> None:
    for key in w:
        if key not in allowed:
            raise WorkloadError(f"{where}.{key}: not a key of {form} workload (it takes "
                                f"{', '.join(sorted(allowed))})")


def from_dict(doc: dict[str, Any], where: str = "workload") -> Workload:
    """A workload from a TOML-shaped dict: either a `template` with its parameters, a
    `collective` with size and ranks, or explicit flops / hbm_bytes / link_bytes. Every
    key must mean something for its form, every number be finite and bounded."""
    if not isinstance(doc, dict) or "workload" not in doc:
        raise WorkloadError(f"{where}: no [workload] table (see examples/*.toml)")
    w = doc["workload"]
    if not isinstance(w, dict):
        raise WorkloadError(f"{where}: expected a [workload] table")
    link = _text(w, "link", where, LINK_CLASSES) if "link" in w else "nvlink"
    name = _text(w, "name", where) if "name" in w else None
    if "template" in w:
        tname = _text(w, "template", where)
        if tname not in TEMPLATES:
            raise WorkloadError(f"{where}.template: unknown template {tname!r} (one of {', '.join(TEMPLATES)})")
        fn, params = TEMPLATES[tname]
        _check_keys(w, COMMON_KEYS | {"template"} | set(params) | ({"causal"} if tname == "ring_attention" else set()),
                    f"a {tname} template", where)
        kwargs: dict[str, Any] = {}
        for p in params:
            if p not in w:
                raise WorkloadError(f"{where}.{p}: missing (template {tname} needs {', '.join(params)})")
            kwargs[p] = (_text(w, p, where, FLOP_DTYPES) if p == "dtype" else
                         _number(w, p, where, integer=True, positive=True, limit=MAX_RANKS if p == "ranks" else MAX_DIM))
        if "causal" in w:
            if not isinstance(w["causal"], bool):
                raise WorkloadError(f"{where}.causal: expected true or false, got {w['causal']!r}"[:300])
            kwargs["causal"] = w["causal"]
        if tname == "moe_dispatch_combine" and kwargs["top_k"] > kwargs["experts"]:
            raise WorkloadError(f"{where}.top_k: {kwargs['top_k']} is more than the {kwargs['experts']} experts")
        wl = fn(**kwargs, link=link)
        return wl if name is None else dataclasses.replace(wl, name=name)
    if "collective" in w:
        _check_keys(w, COMMON_KEYS | FORM_KEYS["collective"], "a collective", where)
        coll = C.canonical(_text(w, "collective", where))
        if coll not in C.COLLECTIVES:
            raise WorkloadError(f"{where}.collective: unknown collective {coll!r} (one of {', '.join(C.COLLECTIVES)})")
        wl = collective(coll, _number(w, "size_bytes", where, True, positive=True),
                        _number(w, "ranks", where, True, positive=True, limit=MAX_RANKS), link)
        if "dtype" in w:
            wl = dataclasses.replace(wl, params={"dtype": _user_dtype(w["dtype"], where)})
        return wl if name is None else dataclasses.replace(wl, name=name)
    _check_keys(w, COMMON_KEYS | FORM_KEYS["explicit"], "an explicit (flops / bytes)", where)
    flops = w.get("flops", {})
    if not isinstance(flops, dict):
        raise WorkloadError(f"{where}.flops: expected a table of data type = FLOPs")
    for dt in flops:
        if dt not in FLOP_DTYPES:
            raise WorkloadError(f"{where}.flops.{dt}: unknown data type (one of {', '.join(FLOP_DTYPES)})"[:300])
        _number(flops, dt, f"{where}.flops")
    links = w.get("link_bytes", {})
    if not isinstance(links, dict):
        raise WorkloadError(f"{where}.link_bytes: expected a table of link class = bytes")
    for cls in links:
        if cls not in LINK_CLASSES:
            raise WorkloadError(f"{where}.link_bytes.{cls}: unknown link class ({', '.join(LINK_CLASSES)})"[:300])
        _number(links, cls, f"{where}.link_bytes")
    hbm = float(_number(w, "hbm_bytes", where)) if "hbm_bytes" in w else 0.0
    if not (any(flops.values()) or hbm or any(links.values())):
        raise WorkloadError(f"{where}: nothing to bound: give a template, a collective, or flops / hbm_bytes / "
                            "link_bytes (see examples/*.toml)")
    pattern = C.canonical(_text(w, "pattern", where)) if "pattern" in w else ""
    if pattern and pattern not in C.COLLECTIVES + ("ring",):
        raise WorkloadError(f"{where}.pattern: unknown pattern {pattern!r} (a collective: "
                            f"{', '.join(C.COLLECTIVES)}, or ring)")
    return Workload(name=name or "workload", flops={k: float(v) for k, v in flops.items()}, hbm_bytes=hbm,
                    link_bytes={k: float(v) for k, v in links.items()},
                    message_bytes=_number(w, "message_bytes", where, True) if "message_bytes" in w else None,
                    ranks=_number(w, "ranks", where, True, positive=True, limit=MAX_RANKS) if "ranks" in w else 1,
                    pattern=pattern, source="user",
                    params={"dtype": _user_dtype(w["dtype"], where)} if "dtype" in w else {})


def _user_dtype(value: Any, where: str) -> str:
    if value not in FLOP_DTYPES:
        raise WorkloadError(f"{where}.dtype: unknown data type {value!r} (one of {', '.join(FLOP_DTYPES)})")
    return str(value)


MAX_WORKLOAD_BYTES = 1024 * 1024  # a workload description is a few lines


def load_toml(path: str | Path) -> Workload:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    from ..files import FileInputError, read_text

    p = Path(path)
    try:
        doc = tomllib.loads(read_text(p, "workload (TOML)", MAX_WORKLOAD_BYTES))
    except FileInputError as e:
        raise WorkloadError(str(e)) from None
    except tomllib.TOMLDecodeError as e:
        raise WorkloadError(f"{p}: not valid TOML ({e})") from None
    except RecursionError:
        raise WorkloadError(f"{p}: nested too deep for a workload") from None
    try:
        return from_dict(doc)
    except WorkloadError as e:
        raise WorkloadError(f"{p}: {e}") from None
