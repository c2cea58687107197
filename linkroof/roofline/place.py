"""Placing a workload on the roofline: bound time = max(F/R, Q_hbm/B_hbm, max over
links Q_l/B_l(mechanism, message size)), the limiter, and the fraction of roofline =
bound / measured (slowest rank)."""

from __future__ import annotations

import math

from ..errors import LinkroofError
from ..schema import Placement, Workload
from ..units import format_time
from .model import MachineModel

# GEMM + collective templates: the dimension that scales the FLOPs but not the bytes on
# the link (all-gather + GEMM moves A [m, k] whatever n is; the GEMM + reduce-scatter and
# + all-reduce move C [m, n] whatever k is)
OVERLAP_DIMENSION = {"template:allgather_gemm": "n", "template:gemm_reduce_scatter": "k",
                     "template:gemm_all_reduce": "k"}


NO_LIMITER = 0.05  # a bound under this share of the measured time: no roof limits the call


class PlacementError(LinkroofError, ValueError):
    """A workload cannot be placed (nothing to bound, or no measured time)."""


def place(workload: Workload, measured_time_s: float, model: MachineModel, kind: str = "measured",
          mechanism: str | None = None) -> Placement:
    bad = [f"{what} {v!r}" for what, v in [*((f"FLOPs ({d})", f) for d, f in workload.flops.items()),
                                           ("HBM bytes", workload.hbm_bytes),
                                           *((f"link bytes ({k})", b) for k, b in workload.link_bytes.items()),
                                           ("message size", workload.message_bytes)]
           if v is not None and not v >= 0]
    if bad:  # a negative message size reached a ceiling's size curve and divided by zero (2026-12-05)
        raise PlacementError(f"workload {workload.name!r}: counts must be zero or more, not " + ", ".join(bad))
    terms: dict[str, float] = {}
    flags: list[str] = []
    compute_time = 0.0
    for dtype, flops in workload.flops.items():
        if not flops:
            continue
        roof = model.compute(dtype, kind)
        if roof is None:
            flags.append(f"no {kind} compute ceiling for {dtype}: its time is left out")
            continue
        compute_time += flops / roof.value
    if compute_time:
        terms["compute"] = compute_time
    if workload.hbm_bytes:
        roof = model.hbm(kind)
        if roof is None:
            flags.append(f"no {kind} HBM ceiling: memory time left out")
        else:
            terms["memory"] = workload.hbm_bytes / roof.value
    for link, nbytes in workload.link_bytes.items():
        if not nbytes:
            continue
        variant = workload.params.get("host_memory") if link == "host" and kind == "measured" else None
        got = model.link(link, kind, f"ce ({variant})" if variant else mechanism, workload.message_bytes)
        if variant and got is not None:
            flags.append(f"host link placed against {variant} copies' own measured ceiling (the call's copies are "
                         f"{variant.split()[0]}: CUPTI's memcpy records)")
        elif variant:
            got = model.link(link, kind, mechanism, workload.message_bytes)
            flags.append(f"no measured ceiling of {variant} host copies in the profile: placed against the best host "
                         "ceiling (pinned memory's), which copies from pageable memory do not reach")
        if got is None:
            flags.append(f"no {kind} ceiling for link {link}: its time is left out")
            continue
        terms[f"link:{link}"] = nbytes / got[0]
    if not terms:
        missing = model.missing_for(workload, kind)
        raise PlacementError(f"workload {workload.name!r}: nothing to bound: " + (
            "; ".join(missing) if missing else "it gives no FLOPs and no bytes"))
    if not measured_time_s > 0:
        raise PlacementError("measured time must be positive")
    limiter = max(terms, key=terms.get)
    bound = terms[limiter]
    if bound < NO_LIMITER * measured_time_s:
        flags.append(f"no throughput limiter: its largest term ({limiter}) is {bound / measured_time_s:.1%} of its "
                     "time: bound by latency, occupancy or waiting (a spinning, atomic-contended or one-warp kernel), "
                     "not by a roof")
        limiter = "none"
    if bound > measured_time_s * (1 + Placement.BELOW_BOUND):
        flags.append(f"faster than its {kind} roofline ({bound / measured_time_s:.2f}x): check the workload's "
                     "counts or the ceilings")
    return Placement(workload=workload, measured_time_s=measured_time_s, bound_time_s=bound, limiter=limiter,
                     ceilings_kind=kind, terms_s=terms, flags=tuple(flags))


def overlap_note(workload: Workload, model: MachineModel, kind: str = "measured") -> str | None:
    """For GEMM + collective templates: whether communication can hide behind compute,
    read from the placement's own terms (link time against compute time at the same
    ceilings), and the size of the dimension that scales the FLOPs alone above which it
    can. Never a separate formula that could disagree with the placement."""
    dim = OVERLAP_DIMENSION.get(workload.source)
    if dim is None or dim not in workload.params:
        return None
    terms = place(workload, 1.0, model, kind).terms_s
    links = {k: v for k, v in terms.items() if k.startswith("link:")}
    if "compute" not in terms or not links:
        return None
    link, t_link = max(links.items(), key=lambda kv: kv[1])
    t_comp = terms["compute"]
    value = workload.params[dim]
    threshold = math.ceil(value * t_link / t_comp)  # FLOPs grow with `dim`, the link bytes do not
    hides = t_comp >= t_link
    return (f"Overlap ({kind} ceilings): {link} {format_time(t_link)} against compute {format_time(t_comp)}: "
            f"communication {'can' if hides else 'cannot'} hide behind compute; it can when {dim} >= {threshold:,} "
            f"(this {dim} = {value:,}).")


def place_spec(workload: Workload, measured_time_s: float, model: MachineModel) -> tuple[list[Placement], list[str]]:
    """The spec placement beside a measured one, where the spec knows the ceilings; an
    imported profile knows no spec link ceiling: then none, and a note says why."""
    try:
        return [place(workload, measured_time_s, model, "spec")], []
    except PlacementError as e:
        return [], [f"no spec placement: {e}"]
