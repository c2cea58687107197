"""Baselines for a placed kernel: the profile's NCCL figure for the workload's
collective, and the placements `linkroof compare` shows (kernel, reference, baseline)."""

from __future__ import annotations

import dataclasses
import math

from ..schema import Measurement, Placement, Profile, Workload
from .collectives import canonical, canonical_dtype
from .model import MachineModel
from .place import place
from .workload import collective


def nccl_baseline(profile: Profile, workload: Workload) -> Measurement | None:
    """The profile's NCCL measurement of the workload's collective at the nearest size,
    in the workload's data type when it names one (else fp32) where the profile has it."""
    if not workload.pattern or not workload.message_bytes:
        return None
    want = canonical_dtype(str(workload.params.get("dtype") or "fp32"))
    cands = [m for m in profile.measurements if m.spec.mechanism == "nccl"
             and m.spec.pattern == canonical(workload.pattern)
             and not m.spec.params.get("in_place") and m.spec.params.get("rank_time") != "this rank" and m.verified]
    if not cands:
        return None
    return min(cands, key=lambda m: (abs(math.log2(m.spec.message_bytes) - math.log2(workload.message_bytes)),
                                     canonical_dtype(str(m.spec.params.get("dtype", "fp32"))) != want,
                                     m.spec.params.get("timing") == "host_launch"))  # the device time first


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
                      reference: tuple[str, float] | None = None) -> tuple[list[Placement], list[str]]:
    """Place a timed kernel (and its reference, named with its median time, and the
    profile's NCCL baseline) against measured and spec ceilings. Counter bytes fill in
    the link bytes the workload does not give."""
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
    wl = dataclasses.replace(wl, name=name)
    out = [place(wl, median_s, model, "measured"), place(wl, median_s, model, "spec")]
    if wire:
        out = [dataclasses.replace(p, flags=p.flags + (wire,)) for p in out]
    if reference is not None:
        ref_name, ref_s = reference
        out.append(place(dataclasses.replace(wl, name=f"{ref_name} (reference)"), ref_s, model, "measured"))
        notes.append(f"speedup over the reference: {ref_s / median_s:.2f}x")
    base = nccl_baseline(profile, wl)
    if base is not None:
        nwl = collective(base.spec.pattern, base.spec.message_bytes, wl.ranks or 2)
        nwl = dataclasses.replace(nwl, name=f"NCCL {base.spec.pattern} {base.spec.message_bytes} B (profile)")
        out.append(place(nwl, base.median_s, model, "measured"))
    return out, notes
