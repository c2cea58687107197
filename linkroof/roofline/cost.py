"""The communication cost model, each term from the profile's own measurements:

    T = T_launch x launches + T_sync x syncs + max(T_compute, T_memory, T_comm)

T_launch is the launch path's cost (an empty kernel by CUDA-graph replay or back to back
on a stream, CuPy's host issue cost, NCCL's host cost per grouped call); T_sync a
barrier (within an SM, across SMs, or a signal to another GPU); T_comm is latency-aware:
per message, the lower envelope of the times the link's copy mechanisms were measured
to take at that size (never from NCCL's own times, which are a baseline to place, not a
bound; never from a least-squares fit, which is central and overshoots some points).
Every term is at or below what was measured, so no measured point sits below its bound.

A measured time is decomposed into these terms, what NCCL itself took for a collective
workload, and what none of them explains. The bandwidth-only roofline (place.py) stays
beside it, named as such.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import dataclasses

from ..schema import Measurement, Placement, Profile, Workload
from ..units import format_rate, format_time
from .model import MachineModel

# launch paths: (name, mechanism, pattern) of the measured figure, and what it is
LAUNCH_PATHS: dict[str, tuple[str, str, str, str]] = {
    "graph": ("launch_latency", "launch", "graph", "an empty kernel replayed from a CUDA graph (GPU time per kernel)"),
    "cuda": ("launch_latency", "launch", "stream", "an empty kernel back to back on a stream (GPU time per launch)"),
    "cupy": ("launch_latency", "launch", "host_issue", "the host's issue cost of one launch through CuPy"),
    "nccl": ("nccl_issue_cost", "launch", "nccl_host", "NCCL's host cost of one grouped call from one process"),
    "torch": ("torch_collective_cost", "launch", "torch_all_reduce",
              "a 4-byte torch.distributed all-reduce per call, back to back, one rank per GPU (launch included)"),
}
SYNC_KINDS: dict[str, tuple[str, str, str, str]] = {
    "cta": ("sync_latency", "sync", "mbarrier", "an mbarrier round within one SM"),
    "grid": ("sync_latency", "sync", "grid_barrier", "a barrier across every SM through global memory"),
    "gpu": ("signal_latency", "sm", "one_way", "a flag to another GPU (half a ping-pong, relaxed store)"),
}
COPY_MECHANISMS = ("ce", "sm", "tma")


class CostError(ValueError):
    """A cost-model question the profile cannot answer (a term it never measured)."""


def _figures(profile: Profile, key: tuple[str, str, str, str]) -> list[Measurement]:
    name, mech, pattern, _ = key
    return [m for m in profile.measurements if m.verified and (m.spec.name, m.spec.mechanism, m.spec.pattern)
            == (name, mech, pattern) and m.spec.params.get("signal", "st.relaxed.sys") == "st.relaxed.sys"
            and m.median_s == m.median_s and m.median_s > 0]


def _conditions(m: Measurement) -> str:
    """Where a term's figure was taken: one process, or a rank of a launcher's group."""
    procs = m.spec.params.get("processes")
    where = f"rank {m.rank} of {procs} processes" if m.rank is not None and procs else "one process"
    per = m.spec.params.get("launches_per_sample") or m.spec.params.get("calls_per_sample")
    return where + (f", {per} per sample" if per else "")


def _term(profile: Profile, table: dict[str, tuple[str, str, str, str]], key: str, what: str,
          family: str) -> tuple[float, str]:
    """The lowest of the profile's figures for the term (a bound takes the least the
    term was measured to cost), with what it is, where it was taken and of how many."""
    if key not in table:
        raise CostError(f"unknown {what} {key!r} (one of {', '.join(table)})")
    cands = _figures(profile, table[key])
    if not cands:
        raise CostError(f"this profile has no {key} {family} figure (linkroof bench --only {family} measures it)")
    m = min(cands, key=lambda x: x.median_s)
    of = f"the lowest of {len(cands)} figures" if len(cands) > 1 else "the one figure"
    return m.median_s, f"{table[key][3]}; {of} in this profile ({_conditions(m)})"


def launch_cost(profile: Profile, path: str) -> tuple[float, str]:
    """Seconds per launch on `path` and what the figure is."""
    return _term(profile, LAUNCH_PATHS, path, "launch path", "launch")


def sync_cost(profile: Profile, kind: str) -> tuple[float, str]:
    """Seconds per sync of `kind` and what the figure is."""
    return _term(profile, SYNC_KINDS, kind, "sync kind", "sync")


def machine_terms(profile: Profile) -> list[dict[str, object]]:
    """The launch and sync terms the cost model uses, as this profile measured them: one
    row per launch path and sync kind it has (term, kind, seconds, what). The CLI, its
    JSON, the dashboard and the report all show these rows."""
    rows: list[dict[str, object]] = []
    for term, table, fn in (("launch", LAUNCH_PATHS, launch_cost), ("sync", SYNC_KINDS, sync_cost)):
        for key in table:
            try:
                seconds, what = fn(profile, key)
            except CostError:
                continue
            rows.append({"term": term, "kind": key, "seconds": seconds, "what": what})
    return rows


def comm_time(profile: Profile, link: str, nbytes: float, message_bytes: int | None,
              model: MachineModel | None = None) -> tuple[float, str] | None:
    """The least time any copy mechanism (copy engine, SM, TMA) was measured to need to
    move `nbytes` over `link` in messages of `message_bytes` (one message when unknown):
    per message, the lower envelope of that mechanism's measured times per message
    (Curve.time_at: never above a time measured at that size, never below the bytes
    over its peak), messages back to back. None where no copy was measured on the link.
    A bound, not a fit: least-squares fits are central and overshoot some points."""
    model = model or MachineModel.from_profile(profile)
    msg = int(min(message_bytes or nbytes, nbytes)) or 1  # a collective's link moves its share, not its size
    count = max(1.0, nbytes / msg)
    best: tuple[float, str] | None = None
    for c in model.curves:
        if c.link != link or c.mechanism not in COPY_MECHANISMS or c.pattern not in ("p2p_read", "p2p_write") \
                or c.variant:
            continue
        t = count * c.time_at(msg)
        if best is None or t < best[0]:
            where = "at a swept size" if c.swept(msg) else "between swept sizes: the smaller size's time"
            best = (t, f"{c.label} {c.pattern}: {format_time(c.time_at(msg))} per {msg} B message, the lower "
                       f"envelope of its measured times ({where})" + (f", x {count:g} messages" if count > 1 else ""))
    return best


@dataclass(frozen=True)
class CostBound:
    """The cost model's bound of one workload, term by term (seconds)."""

    terms_s: dict[str, float]  # launch, sync, compute, memory, link:<class> (latency-aware)
    bound_s: float
    limiter: str  # the largest of compute, memory and link terms
    how: dict[str, str] = field(default_factory=dict)  # what each term was computed from
    notes: tuple[str, ...] = ()

    @property
    def overlapped(self) -> dict[str, float]:
        """The resource terms that run at the same time (the max of them counts)."""
        return {k: v for k, v in self.terms_s.items() if k not in ("launch", "sync")}


def cost_bound(workload: Workload, profile: Profile, model: MachineModel | None = None, launch_path: str = "graph",
               launches: int = 1, syncs: int = 0, sync_kind: str = "grid",
               launch_s: float | None = None) -> CostBound:
    """T_launch x launches + T_sync x syncs + max(compute, memory, latency-aware links).
    `launch_s`, where given, is the launch as measured for this very call (compare: the
    ungated time less the gated one per call): calls launched back to back hide most of
    their launch behind the previous call, so a bound adding the profile's launch figure
    would sit above them."""
    model = model or MachineModel.from_profile(profile)
    terms: dict[str, float] = {}
    how: dict[str, str] = {}
    notes: list[str] = []
    if launches and launch_s is not None:
        terms["launch"] = max(0.0, launch_s)
        how["launch"] = (f"{format_time(terms['launch'])} a call as measured: the ungated time less the gated one "
                         "(calls back to back hide their launch behind the previous call)")
        launches = 0
    for term, count, fn, key in (("launch", launches, launch_cost, launch_path), ("sync", syncs, sync_cost, sync_kind)):
        if not count:
            continue
        try:
            t, what = fn(profile, key)
        except CostError as e:
            if "unknown" in str(e):
                raise
            notes.append(f"{e}: the {term} term is left out, so the bound is lower than it would be")
            continue
        terms[term], how[term] = count * t, f"{count} x {format_time(t)}: {what}"
    compute = 0.0
    for dtype, flops in workload.flops.items():
        roof = model.compute(dtype)
        if flops and roof is not None:
            compute += flops / roof.value
        elif flops:
            notes.append(f"no measured compute ceiling for {dtype}: its time is left out")
    if compute:
        terms["compute"], how["compute"] = compute, "FLOPs / the measured GEMM peak per data type"
    if workload.hbm_bytes:
        roof = model.hbm()
        if roof is not None:
            terms["memory"], how["memory"] = workload.hbm_bytes / roof.value, f"bytes / HBM {format_rate(roof.value)}"
    for link, nbytes in workload.link_bytes.items():
        if not nbytes:
            continue
        got = comm_time(profile, link, nbytes, workload.message_bytes, model)
        peak = model.link(link, "measured", None, workload.message_bytes)
        if got is None and peak is None:
            notes.append(f"no measured copy and no ceiling for link {link}: its time is left out")
            continue
        plain = nbytes / peak[0] if peak is not None else 0.0
        if got is None:
            got = (plain, f"bytes / {format_rate(peak[0])} (no copy measured on this link: no latency term)")
        elif got[0] < plain:  # another mechanism's envelope (NCCL's, a reduction's) is the higher bound here
            got = (plain, f"bytes / {format_rate(peak[0])}, the bandwidth-only term ({peak[1]}; the copies' "
                          f"envelope gave {format_time(got[0])})")
        terms[f"link:{link}"], how[f"link:{link}"] = got
    resources = {k: v for k, v in terms.items() if k not in ("launch", "sync")}
    if not resources:
        raise CostError(f"workload {workload.name!r}: nothing to bound (no FLOPs, bytes or measured ceilings)")
    # the same ceilings as the bandwidth-only roofline for compute and HBM, and a link term
    # never below its: this bound is never below the bandwidth-only one
    limiter = max(resources, key=resources.get)
    bound = terms.get("launch", 0.0) + terms.get("sync", 0.0) + resources[limiter]
    return CostBound(terms, bound, limiter, how, tuple(notes))


BELOW_MODEL = "below the model's terms"


# the decomposition's term for NCCL's own measured time, beside the model's bound: a
# measured figure, never to be read as the bound (issue 45: "collective 862.8 us" under a
# bound of 682.7 us said neither which was which)
NCCL_MEASURED = "measured NCCL"


def decompose(measured_s: float, bound: CostBound, collective_s: float | None = None,
              launch_s: float | None = None) -> list[tuple[str, float, str]]:
    """Where a measured time went, additive and never negative: (term, seconds, what it is).

    Launch (the measured host-launch share per call where given, else the model's), sync,
    then the limiting resource term, or for a collective workload what NCCL itself took
    at this size (`collective_s`) where that is larger. The model overlaps the other
    resource terms with it; what the measured time leaves after these is first given to
    them, largest first, up to their own size, as "not overlapped" (inferred: the
    model's T_non-overlap, work that ran one after the other); the rest is unexplained.
    A measured time shorter than the terms takes each term only up to what is left: the
    part named "(capped)", the whole excess in the last entry, BELOW_MODEL, which is
    not a part of the time (0 s) and says by how much the model's terms exceed it."""
    if not measured_s > 0:
        raise CostError("measured time must be positive")
    parts: list[tuple[str, float, str]] = []
    left = measured_s
    excess = 0.0

    def take(name: str, value: float, how: str) -> None:
        nonlocal left, excess
        got = min(value, left)
        if got < value:
            excess += value - got
            name, how = f"{name} (capped)", f"{how}; the model's term is {format_time(value)}, more than was left"
        if got > 0 or not parts:
            parts.append((name, got, how))
        left -= got

    launch = bound.terms_s.get("launch", 0.0) if launch_s is None else max(0.0, launch_s)
    if launch:
        take("host launch (measured)" if launch_s is not None else "launch", launch,
             "measured host share per call: the ungated time less the gated one, both at one clock state; a part "
             "beside the bound, not in it" if launch_s is not None else bound.how.get("launch", ""))
    if bound.terms_s.get("sync"):
        take("sync", bound.terms_s["sync"], bound.how.get("sync", ""))
    resources = bound.overlapped
    main, main_s = bound.limiter, resources[bound.limiter]
    how = bound.how.get(main, "")
    nccl = collective_s is not None and collective_s > main_s and main.startswith("link:")
    if nccl:
        main, main_s, how = NCCL_MEASURED, collective_s, "NCCL's own device time at this size (the profile's)"
    take(main, main_s, how)
    for k, v in sorted(resources.items(), key=lambda kv: -kv[1]):
        if k == bound.limiter or (nccl and k.startswith("link:")):  # NCCL's time holds its link time
            continue
        serial = min(v, left)
        if serial > 0:
            parts.append((f"{k} (not overlapped, inferred)", serial, f"inferred: of {format_time(v)}, the time left after "
                                                          f"{main}, taken to have run after it rather than beside it"))
            left -= serial
        if serial < v:
            parts.append((k, 0.0, f"{format_time(v - serial)} of it beside {main}"))
    parts.append(("unexplained", max(0.0, left), "measured minus the terms above"))
    if excess > 0:
        parts.append((BELOW_MODEL, 0.0, f"the measured time is {format_time(excess)} shorter than the model's terms "
                                        "add up to: check the workload's counts, its launch path and syncs"))
    return parts


def decomposition_text(measured_s: float, parts: list[tuple[str, float, str]]) -> str:
    """'of 92.0 us: launch 45.0 us, measured NCCL 20.1 us, memory 1.0 us, unexplained 25.9 us'."""
    shown = [f"{name} {format_time(v)}" for name, v, _ in parts if v or name == "unexplained"]
    shown += [f"{name} by {how.split(' is ', 1)[1].split(' shorter')[0]}" for name, v, how in parts
              if name == BELOW_MODEL]
    return f"of {format_time(measured_s)}: " + ", ".join(shown)


def with_cost(placement: Placement, profile: Profile, model: MachineModel | None = None, launch_path: str = "graph",
              launches: int = 1, syncs: int = 0, sync_kind: str = "grid", collective_s: float | None = None,
              launch_s: float | None = None) -> Placement:
    """The placement with the cost model's bound and the decomposition of its measured
    time; unchanged but for a note where the profile lacks a term."""
    try:  # the bound from the profile's terms only: the call's own host time is a part beside it, never in it
        bound = cost_bound(placement.workload, profile, model, launch_path, launches, syncs, sync_kind)
    except CostError as e:
        return dataclasses.replace(placement, cost_notes=(f"cost model not computed: {e}",))
    return with_bound(placement, bound, collective_s, launch_s)


def with_bound(placement: Placement, bound: CostBound, collective_s: float | None = None,
               launch_s: float | None = None) -> Placement:
    """with_cost for a bound already computed (a trace's many calls of one collective,
    size, type and group share theirs)."""
    parts = decompose(placement.measured_time_s, bound, collective_s, launch_s)
    notes = [f"{k}: {v}" for k, v in bound.how.items()] + list(bound.notes)
    below = [how for name, _, how in parts if name == BELOW_MODEL]
    if below and not bound.bound_s > placement.measured_time_s * (1 + Placement.BELOW_BOUND):
        notes.append(f"faster than the cost model's terms: {below[0]}")
    return dataclasses.replace(placement, cost_bound_s=bound.bound_s, cost_terms_s=dict(bound.terms_s),
                               decomposition_s={name: v for name, v, _ in parts if name != BELOW_MODEL},
                               cost_notes=tuple(notes))


def with_timeline(placement: Placement, timeline: Any) -> Placement:
    """The placement with its measured time decomposed from the call's own timeline
    (roofline.timeline.timed_parts: idle, exposed communication, each class of work),
    replacing the model's inferred parts; where the recorded kernels outlast the timed
    median the note says by how much. The model's bound and terms stay."""
    from .timeline import timed_parts

    parts, scaled = timed_parts(timeline, placement.measured_time_s)
    if not parts:
        return dataclasses.replace(placement, timeline=timeline)
    notes = list(placement.cost_notes) + ([scaled] if scaled else [])
    notes = [n for n in notes if not n.startswith("faster than the cost model's terms")]  # the model's own parts
    notes.append("decomposition measured from the call's GPU timeline (CUPTI); the cost model's bound and terms "
                 "beside it are modelled")
    return dataclasses.replace(placement, decomposition_s={k: v for k, v, _ in parts}, cost_notes=tuple(notes),
                               timeline=timeline)
