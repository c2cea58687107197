"""Baselines for a placed kernel: the profile's NCCL figure for the workload's
collective, and the placements `linkroof compare` shows (kernel, reference, baseline)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from ..schema import Placement, Profile, Workload
from .collectives import canonical, canonical_dtype
from .model import MachineModel
from .place import place
from .workload import collective


@dataclass(frozen=True)
class Baseline:
    """The profile's NCCL figure for a workload's collective: its time at the workload's
    size (measured there, or interpolated between the two nearest sizes), and how."""

    pattern: str
    message_bytes: int
    ranks: int
    dtype: str
    median_s: float
    how: str  # "measured at this size" | "interpolated between ..." | "nearest size ..." | "measured now ..."

    @property
    def exact(self) -> bool:
        """Measured at this very size (in the profile or on the spot)."""
        return self.how.startswith("measured")


def _time_at(points: list[tuple[int, float]], size: int) -> tuple[float, str]:
    """Time at `size` from (size, time) points: exact, interpolated in log-log between
    the neighbours, or the nearest end scaled by size (said so)."""
    pts = sorted(points)
    for s_, t in pts:
        if s_ == size:
            return t, "measured at this size"
    below = [p for p in pts if p[0] < size]
    above = [p for p in pts if p[0] > size]
    if below and above:
        (s0, t0), (s1, t1) = below[-1], above[0]
        f = (math.log(size) - math.log(s0)) / (math.log(s1) - math.log(s0))
        return math.exp(math.log(t0) + f * (math.log(t1) - math.log(t0))), f"interpolated between {s0} and {s1} B"
    s0, t0 = (below[-1] if below else above[0])
    return t0 * max(1.0, size / s0) if below else t0, f"nearest measured size {s0} B (outside the sweep)"


def nccl_baseline(profile: Profile, workload: Workload) -> Baseline | None:
    """The profile's NCCL figure for the workload's collective, data type (else fp32) and
    rank count, at the workload's size (nccl-tests' size convention): measured, or
    interpolated between the nearest sizes and labelled so. Device time first."""
    if not workload.pattern or not workload.message_bytes:
        return None
    want = canonical_dtype(str(workload.params.get("dtype") or "fp32"))
    cands = [m for m in profile.measurements if m.spec.mechanism == "nccl"
             and m.spec.pattern == canonical(workload.pattern)
             and not m.spec.params.get("in_place") and m.spec.params.get("rank_time") != "this rank" and m.trusted]
    if workload.ranks > 1:
        same_ranks = [m for m in cands if len(m.spec.devices) == workload.ranks]
        cands = same_ranks or cands
    if not cands:
        return None
    dtypes = {canonical_dtype(str(m.spec.params.get("dtype", "fp32"))) for m in cands}
    dtype = want if want in dtypes else ("fp32" if "fp32" in dtypes else sorted(dtypes)[0])
    cands = [m for m in cands if canonical_dtype(str(m.spec.params.get("dtype", "fp32"))) == dtype]
    device = [m for m in cands if m.spec.params.get("timing") != "host_launch"]
    cands = device or cands
    points: dict[int, float] = {}
    for m in cands:
        points[m.spec.message_bytes] = min(m.median_s, points.get(m.spec.message_bytes, math.inf))
    t, how = _time_at(list(points.items()), workload.message_bytes)
    ranks = len(cands[0].spec.devices)
    return Baseline(canonical(workload.pattern), workload.message_bytes, ranks, dtype, t, how)


LL_SIZE = 4 << 20  # NCCL's low-latency protocols carry most messages below a few MiB


def wire_efficiency(counted_bytes: float, workload_bytes: float,
                    message_bytes: int | None = None) -> tuple[float, str]:
    """Counter bytes over the workload's own count, and what the ratio means."""
    ratio = counted_bytes / workload_bytes
    small = message_bytes is not None and message_bytes <= LL_SIZE
    if ratio < 0.9:
        why = ("fewer bytes crossed NVLink than the workload counts: it overstates its bytes, or part of its "
               "traffic took another path (PCIe, or stayed on one GPU)")
    elif ratio <= 1.1:
        why = "the counters match the workload's bytes"
    elif ratio >= 1.5 and small:
        why = ("protocol overhead at a small message size: NCCL's LL protocol sends a flag with every 8 bytes of "
               "data (2x on the wire), LL128 one in 16 (about 1.07x)")
    else:
        why = ("more bytes crossed NVLink than the workload counts: protocol overhead (LL128 about 1.07x), "
               "retransmitted or padded data, or traffic the workload leaves out")
    return ratio, why


def kernel_placements(name: str, median_s: float, counted_link_bytes: float | None, workload: Workload | None,
                      model: MachineModel, profile: Profile,
                      reference: tuple[str, float] | None = None,
                      baseline: Baseline | None = None, timeline: Any = None,
                      clock: Any = None, launch_s: float | None = None, reference_timeline: Any = None,
                      reference_clock: Any = None) -> tuple[list[Placement], list[str]]:
    """Place a timed kernel (and its reference, named with its median time, and the
    profile's NCCL baseline) against measured and spec ceilings. Counter bytes fill in
    the link bytes the workload does not give. The measured placements carry the cost
    model too (a CUDA-graph launch from the profile: the least a launch costs; never the
    call's own host time, which is a part of the decomposition beside the bound), the
    kernel's measured time decomposed by its timeline (else by the model's terms,
    labelled inferred) and NCCL's own time at the workload's size (`baseline` when
    measured on the spot, else the profile's). Without any work to bound, the call is
    still reported: its time and timeline, and what placing it would need. `clock`, the
    timed calls' ClockState, is compared with the ceilings' (clock_flags). The reference
    is placed with its own timeline and clock state where they were measured
    (`reference_timeline`, `reference_clock`), as the kernel is."""
    from .cost import with_cost

    notes: list[str] = []
    wl = workload or Workload(name=name)
    wire: str | None = None
    if counted_link_bytes is not None:
        given = wl.link_bytes.get("nvlink")
        if not given:
            wl = dataclasses.replace(wl, link_bytes={**wl.link_bytes, "nvlink": counted_link_bytes}, source="counters")
            notes.append(f"NVLink bytes per call from NVML counters: {counted_link_bytes:,.0f}")
        else:
            ratio, why = wire_efficiency(counted_link_bytes, given, wl.message_bytes)
            wire = f"wire efficiency {ratio:.2f}x (counter bytes / workload bytes): {why}"
            notes.append(f"NVLink bytes per call: workload {given:,.0f}, counters {counted_link_bytes:,.0f} "
                         f"(ratio {ratio:.2f}): {why}")
    from .place import PlacementError, place_spec

    wl = dataclasses.replace(wl, name=name)
    try:
        measured = place(wl, median_s, model, "measured")
    except PlacementError as e:  # no workload and no counter bytes: nothing to bound; the time still stands
        notes.append(f"not placed on the roofline: {e}. To place it: --workload FILE (the work it must do), or "
                     "--counters (ncu counts its DRAM bytes and FLOPs)" + ("" if timeline is not None else
                                                                          "; the timeline (without --no-timeline) "
                                                                          "explains its time"))
        measured = Placement(workload=wl, measured_time_s=median_s, bound_time_s=0.0, limiter="unknown",
                             ceilings_kind="measured", flags=("nothing to bound: the workload gives no FLOPs or bytes",),
                             clock=clock)
        from .cost import with_timeline

        out = [measured if timeline is None else with_timeline(measured, timeline)]
        if reference is not None:  # unplaced too, the reference is measured and explained as the call is
            ref_name, ref_s = reference
            ref = Placement(workload=Workload(name=f"{ref_name} (reference)"), measured_time_s=ref_s, bound_time_s=0.0,
                            limiter="unknown", ceilings_kind="measured", flags=measured.flags, clock=reference_clock)
            out.append(ref if reference_timeline is None else with_timeline(ref, reference_timeline))
            notes.append(f"speedup over the reference: {ref_s / median_s:.2f}x")
        return out, notes
    spec, spec_notes = place_spec(wl, median_s, model)
    out = [measured] + spec
    notes += spec_notes
    if wire:
        out = [dataclasses.replace(p, flags=p.flags + (wire,)) for p in out]
    base = baseline or nccl_baseline(profile, wl)
    out[0] = with_cost(out[0], profile, model, collective_s=base.median_s if base else None, launch_s=launch_s)
    if clock is not None:
        out[0] = dataclasses.replace(out[0], clock=clock, flags=out[0].flags + clock_flags(wl, clock, profile))
    if timeline is not None:
        from .cost import with_timeline

        out[0] = with_timeline(out[0], timeline)
    if reference is not None:
        ref_name, ref_s = reference
        ref = with_cost(place(dataclasses.replace(wl, name=f"{ref_name} (reference)"), ref_s, model, "measured"),
                        profile, model, collective_s=base.median_s if base else None)
        if reference_clock is not None:
            ref = dataclasses.replace(ref, clock=reference_clock)
        if reference_timeline is not None:  # both sides measured: its time from its own timeline
            from .cost import with_timeline

            ref = with_timeline(ref, reference_timeline)
        out.append(ref)
        notes.append(f"speedup over the reference: {ref_s / median_s:.2f}x")
    if base is not None:  # placed with the measurement's own rank count, at the workload's size
        nwl = collective(base.pattern, base.message_bytes, base.ranks)
        nwl = dataclasses.replace(nwl, name=f"NCCL {base.pattern} {base.message_bytes} B {base.dtype} x{base.ranks} "
                                            f"(profile, {base.how})")
        from .collectives import dependent_steps

        # NCCL's own time on the cost model: one launch (graph) and a signal per dependent hop
        out.append(with_cost(place(nwl, base.median_s, model, "measured"), profile, model, "graph", 1,
                             dependent_steps(base.pattern, base.ranks), "gpu"))
        notes.append(f"NCCL baseline: {base.pattern} of {base.message_bytes} B in {base.dtype} over {base.ranks} "
                     f"ranks, {base.how}")
    return out, notes


def clock_flags(workload: Workload, clock: Any, profile: Profile) -> tuple[str, ...]:
    """What the placement's clock states are: the call's (timed), and the compute
    ceilings' it is placed against (the profile's GEMM figures carry theirs where the
    suite sampled it). Where the call ran held below the clock the ceiling was measured
    at, the ceiling at the call's clock is given too (scaled by the clock: inferred)."""
    from ..units import format_flops
    from .clockstate import scale_to_clock

    out = [f"the call's clock state: {clock.state} ({clock.note})"]
    for dtype in workload.flops:
        figs = [m for m in profile.measurements if m.spec.mechanism == "compute"
                and str(m.spec.params.get("dtype", "")) == dtype and m.trusted]
        if not figs:
            continue
        best = max(figs, key=lambda m: m.flop_rate if m.flop_rate == m.flop_rate else 0.0)
        cs = getattr(best, "clock", None)
        if cs is None or cs.state == "unknown":
            out.append(f"the {dtype} ceiling carries no clock state (measured before linkroof sampled clocks): "
                       "like is compared with unknown")
            continue
        out.append(f"the {dtype} ceiling's clock state: {cs.state} ({cs.note})")
        call_mhz = clock.sm_mhz_median if clock.state != "drifting" else clock.sm_mhz_last
        scaled = scale_to_clock(best.flop_rate, cs.sm_mhz_median, call_mhz)
        if scaled and call_mhz and cs.sm_mhz_median and abs(call_mhz - cs.sm_mhz_median) / cs.sm_mhz_median > 0.03:
            out.append(f"at the call's {call_mhz:.0f} MHz the {dtype} ceiling would be {format_flops(scaled)} "
                       f"(its {format_flops(best.flop_rate)} at {cs.sm_mhz_median:.0f} MHz scaled by the "
                       "clock: inferred)")
    return tuple(out)


# ------------------------------------------------------------------ counted work (ncu)

COUNTED = "counters:ncu"  # the source of a workload made of Nsight Compute's counters


def counted_workload(name: str, counts: dict[str, float]) -> Workload:
    """A call's or a kernel's work as ncu counted it (per call): FLOPs per data type,
    DRAM bytes read + written, NVLink bytes sent."""
    flops = {k.split(":", 1)[1]: v for k, v in counts.items() if k.startswith("flops:") and v > 0}
    links = {"nvlink": counts["nvlink_tx_bytes"]} if counts.get("nvlink_tx_bytes", 0.0) > 0 else {}
    dram = counts.get("dram_bytes", counts.get("dram_read_bytes", 0.0) + counts.get("dram_write_bytes", 0.0))
    return Workload(name=name, flops=flops, hbm_bytes=dram, link_bytes=links, source=COUNTED)


def _gb(x: float) -> str:
    return f"{x / 1e9:.3g} GB"


def workload_against_counters(workload: Workload, totals: dict[str, float]) -> list[str]:
    """What the workload file claims against what the counters saw, per call: DRAM bytes
    (the HBM counterpart of the wire efficiency) and FLOPs per data type."""
    out = []
    dram = totals.get("dram_read_bytes", 0.0) + totals.get("dram_write_bytes", 0.0)
    if workload.hbm_bytes > 0 and dram > 0:
        ratio = dram / workload.hbm_bytes
        out.append(f"moved {_gb(dram)} of DRAM (ncu: {_gb(totals.get('dram_read_bytes', 0.0))} read, "
                   f"{_gb(totals.get('dram_write_bytes', 0.0))} written), the workload needs "
                   f"{_gb(workload.hbm_bytes)}: {ratio:.2f}x" +
                   (" (the kernels move more than the work needs: data read twice, or spilled)" if ratio > 1.05 else
                    " (less than the workload: part of it stayed in L2, or the workload over-counts)" if ratio < 0.95
                    else ""))
    for dtype, want in workload.flops.items():
        got = totals.get(f"flops:{dtype}", 0.0)
        if want > 0:
            out.append(f"{dtype} FLOPs: ncu counted {got:.4g}, the workload gives {want:.4g} ({got / want:.2f}x)")
    return out


def kernel_group_placements(call: str, timeline: Any, per_name: dict[str, dict[str, float]], model: MachineModel,
                            recording: dict | None = None) -> tuple[list[Placement], Any, list[str]]:
    """Each kernel name of the call placed by its own time (the timeline's, per call)
    and its own work (ncu's counters, per call); the timeline's kernels carry their
    counters and a class from where they land (compute- or memory-limited against this
    machine's measured ceilings). Kernels ncu counted that the timeline lacks are placed
    by ncu's own replay time, said so. With the call's `recording` (its activity
    records), a kernel the counters class anew is that class in the whole summary (the
    decomposition, the pieces, the critical path), not in the table alone; without it,
    the summary's other parts keep the name's class and a note says so."""
    from .place import PlacementError
    from .timeline import short_name, why_text

    out: list[Placement] = []
    notes: list[str] = []
    groups = list(timeline.kernels) if timeline is not None else []
    seen = set()
    new_groups = []
    for g in groups:
        counts = per_name.get(g.name)
        if counts is None or g.kind != "kernel":
            new_groups.append(g)
            continue
        seen.add(g.name)
        p = _place_kernel(call, g.name, counts, g.time_per_call_s, "its time per call from the timeline (CUPTI)",
                          model, PlacementError, short_name)
        cls, basis = g.kernel_class, g.class_basis
        if p is not None:
            out.append(p)
            if p.limiter in ("compute", "memory") and cls not in ("communication", "transfer"):
                cls, basis = p.limiter, "from ncu's counters against the measured ceilings (measured)"
            elif cls == "other":  # counted, and no roof limits it: said so, never "no counters"
                basis = (f"counted by ncu: no roof limits it (limiter {p.limiter}: waiting, latency or "
                         "contention; the why says which) (measured)")
        why = why_text(counts)
        if p is not None and why:
            out[-1] = dataclasses.replace(p, flags=p.flags + (f"why: {why}",))
        new_groups.append(dataclasses.replace(g, counters=dict(counts), kernel_class=cls, class_basis=basis, why=why))
    for name, counts in per_name.items():
        if name in seen:
            continue
        p = _place_kernel(call, name, counts, counts.get("gpu_time_s", 0.0),
                          "its time from ncu's replay (not in the recorded timeline)", model, PlacementError,
                          short_name)
        if p is not None:
            out.append(p)
    changed = {g.name: (g.kernel_class, g.class_basis) for g, old in zip(new_groups, groups)
               if g.kind == "kernel" and g.kernel_class != old.kernel_class}
    if timeline is not None and changed and recording:
        from .timeline import from_record, host_pass_from_record, summarize, with_host

        acts, starts, host_of = from_record(recording)
        again = summarize(acts, starts, host_of, timeline.source, timeline.rank, classes=changed)
        hp = host_pass_from_record(recording)
        timeline = with_host(again, *hp) if hp else again
    elif changed:
        notes.append(f"{len(changed)} kernel(s) classed anew by their counters ({', '.join(sorted(changed)[:3])}); "
                     "without the call's activity records the decomposition keeps the class from the name")
    if timeline is not None:
        timeline = dataclasses.replace(timeline, kernels=tuple(new_groups))
    if per_name and not out:
        notes.append("no kernel placed: ncu's counters gave no work to bound")
    return out, timeline, notes


def _place_kernel(call: str, name: str, counts: dict[str, float], time_s: float, how: str, model: MachineModel,
                  error: type, short_name: Any) -> Placement | None:
    if time_s <= 0:
        return None
    wl = counted_workload(f"{call} / {short_name(name)}", counts)
    try:
        p = place(wl, time_s, model, "measured")
    except error:
        return None
    n = counts.get("launches", 1.0)
    return dataclasses.replace(p, flags=p.flags + (
        f"one kernel of {call} ({n:g} launch(es) a call): {how}, its work from ncu's counters",))
