"""Which mechanism to use for a transfer of a given size, direction and pattern on
this machine, from the profile's sweeps: the fastest, by how much, how many blocks it
took, and where each mechanism reaches 50 % and 90 % of its peak."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..schema import Profile
from ..units import format_size
from .model import MachineModel


@dataclass
class MechanismAdvice:
    mechanism: str  # with its variant where one exists: "ce (host_memory=pageable)", "nccl (dtype=bf16)"
    link: str
    bandwidth_bytes_per_s: float  # at the asked size; a collective's bus bandwidth (from its time)
    peak_bytes_per_s: float
    size_50: int | None
    size_90: int | None
    blocks_needed: int | None = None  # SM/TMA: fewest blocks reaching SATURATION_SHARE (90 %) of the block sweep's best
    time_s: float = 0.0  # one message of the asked size: a copy's size / bandwidth, a collective's own time
    dtype: str = ""  # collectives: the data type of the figures
    how: str = ""  # how the time was found (measured at this size, interpolated, ...)


@dataclass
class Advice:
    size: int
    pattern: str
    mechanisms: list[MechanismAdvice] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def fastest(self) -> MechanismAdvice | None:
        """The least time for one message (a collective's bus bandwidth and a copy's
        bandwidth count bytes differently; their times compare)."""
        return min(self.mechanisms, key=lambda m: m.time_s) if self.mechanisms else None

    @property
    def margin(self) -> float | None:
        """The runner-up's time over the fastest's (1.25 = 25 % faster)."""
        if len(self.mechanisms) < 2:
            return None
        a, b = sorted(m.time_s for m in self.mechanisms)[:2]
        return b / a if a else None


def _blocks_needed(profile: Profile, mechanism: str, pattern: str) -> int | None:
    from .summaries import saturation

    return next((r["blocks_needed"] for r in saturation(profile)
                 if r["mechanism"] == mechanism and r["pattern"] == pattern), None)


def _kernels(profile: Profile, mechanism: str, pattern: str, size: int) -> str | None:
    """How this profile's SM or TMA sweep moved its messages at the size asked about (the
    sweep's point nearest to it): a crossover with another mechanism holds for that
    launch shape, not for the mechanism in general."""
    near = None
    for m in profile.measurements:
        p = m.spec.params
        if m.spec.mechanism == mechanism and m.spec.pattern == pattern and p.get("sweep") and m.spec.message_bytes:
            dist = abs(math.log(m.spec.message_bytes / size))
            if near is None or dist < near[0]:
                near = (dist, m)
    if near is None:
        return None
    m = near[1]
    p = m.spec.params
    shape = {k: p[k] for k in ("blocks", "threads", "active_threads", "unroll", "chunk", "stages") if k in p}
    described = (", ".join(f"{k.replace('_', ' ')} {v}" for k, v in shape.items()) if shape
                 else "the benchmark's default launch shape (not recorded in this profile)")
    return f"{mechanism} at {format_size(m.spec.message_bytes)}: {described}, many messages back to back in one launch"


def advise(profile: Profile, size: int, pattern: str, model: MachineModel | None = None,
           dtype: str | None = None) -> Advice:
    """The mechanisms that move `size` bytes in `pattern` on this machine, fastest first.
    A collective's time is the one `roofline --workload` and `compare` use (the profile's
    NCCL figure at this size, measured or interpolated: baseline.nccl_baseline), its
    bandwidth the bus bandwidth of that time; one row per data type (or only `dtype`)."""
    from .baseline import nccl_baseline
    from .collectives import busbw_factor, canonical, canonical_dtype
    from ..schema import Workload

    if size <= 0:
        raise ValueError(f"a message size must be at least 1 byte, got {size}")
    model = model or MachineModel.from_profile(profile)
    out = Advice(size=size, pattern=pattern)
    want = canonical_dtype(dtype) if dtype else None
    curves = [c for c in model.curves if c.pattern == pattern
              and (want is None or c.mechanism != "nccl" or dict(c.variant).get("dtype", "fp32") == want)]
    if not curves:
        have = sorted({c.pattern for c in model.curves})
        out.notes.append(f"no message-size sweep for pattern {pattern!r}{f' in {want}' if want else ''} in this "
                         "profile" + (f" (sweeps: {', '.join(have)})" if have
                                      else " (run linkroof bench with the sweep family)"))
        return out
    for c in curves:
        row = MechanismAdvice(
            mechanism=c.label, link=c.link, bandwidth_bytes_per_s=c.at(size), peak_bytes_per_s=c.peak(),
            size_50=c.reaches(0.5), size_90=c.reaches(0.9),
            blocks_needed=_blocks_needed(profile, c.mechanism, pattern) if c.mechanism in ("sm", "tma") else None)
        if c.mechanism == "nccl":
            row.dtype = str(dict(c.variant).get("dtype", "fp32"))
            base = nccl_baseline(profile, Workload(name=pattern, message_bytes=size, pattern=pattern,
                                                   params={"dtype": row.dtype}))
            if base is not None and base.dtype == row.dtype and base.median_s > 0:
                row.time_s, row.how = base.median_s, base.how
                ranks = base.ranks
                row.bandwidth_bytes_per_s = size / base.median_s * busbw_factor(canonical(pattern), ranks)
        if not row.time_s:
            bw = row.bandwidth_bytes_per_s
            row.time_s = size / bw if bw > 0 else float("inf")
            row.how = "size / the bandwidth at this size (" + _where(c, size) + ")"
        out.mechanisms.append(row)
    kernels = [k for k in (_kernels(profile, mech, pattern, size) for mech in sorted({c.mechanism for c in curves})
                           if mech in ("sm", "tma")) if k]
    if kernels:
        out.notes.append("The comparison holds for the kernels this profile measured: " + "; ".join(kernels)
                         + ". Other launch shapes cross over elsewhere.")
    beyond = [c for c in curves if c.mechanism != "nccl" and not _within(c, size)]
    for c in beyond:
        out.notes.append(f"{format_size(size)} is outside what was swept for {c.label} "
                         f"({format_size(min(s for s, _ in c.points))} to {format_size(max(s for s, _ in c.points))}): "
                         f"its figure here is {_where(c, size)} (an estimate, not a measurement)")
    between = [c.label for c in curves if not c.swept(size) and c.mechanism != "nccl" and _within(c, size)]
    if between:
        out.notes.append(f"{format_size(size)} was not swept for {', '.join(between)}: their figures here are "
                         "interpolated between the nearest swept sizes (an estimate, not a measurement)")
    return out


def _within(c: Any, size: int) -> bool:
    sizes = [s for s, _ in c.points]
    return min(sizes) <= size <= max(sizes)


def _where(c: Any, size: int) -> str:
    """How a curve's figure at `size` was found: measured there, interpolated between two
    swept sizes, or held from the nearest end of its range (outside it)."""
    sizes = sorted(s for s, _ in c.points)
    if c.swept(size):
        return "measured at this size"
    if size > sizes[-1]:
        return f"held flat from its largest swept size, {format_size(sizes[-1])}"
    if size < sizes[0]:
        return f"scaled down from its smallest swept size, {format_size(sizes[0])}, at the same time per message"
    return "interpolated between the sweep's sizes"
