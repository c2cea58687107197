"""Which mechanism to use for a transfer of a given size, direction and pattern on
this machine, from the profile's sweeps: the fastest, by how much, how many blocks it
took, and where each mechanism reaches 50 % and 90 % of its peak."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..schema import Profile
from ..units import format_size
from .model import MachineModel, link_class


@dataclass
class MechanismAdvice:
    mechanism: str  # with its variant where one exists: "ce (host_memory=pageable)"
    link: str
    bandwidth_bytes_per_s: float  # at the asked size (interpolated between sweep points)
    peak_bytes_per_s: float
    size_50: int | None
    size_90: int | None
    blocks_needed: int | None = None  # SM/TMA: fewest blocks reaching 95 % of the block sweep's best
    time_s: float = 0.0  # one message of the asked size at that bandwidth


@dataclass
class Advice:
    size: int
    pattern: str
    mechanisms: list[MechanismAdvice] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def fastest(self) -> MechanismAdvice | None:
        return max(self.mechanisms, key=lambda m: m.bandwidth_bytes_per_s) if self.mechanisms else None

    @property
    def margin(self) -> float | None:
        """Fastest over the runner-up (1.25 = 25 % faster)."""
        if len(self.mechanisms) < 2:
            return None
        a, b = sorted((m.bandwidth_bytes_per_s for m in self.mechanisms), reverse=True)[:2]
        return a / b if b else None


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


def advise(profile: Profile, size: int, pattern: str, model: MachineModel | None = None) -> Advice:
    if size <= 0:
        raise ValueError(f"a message size must be at least 1 byte, got {size}")
    model = model or MachineModel.from_profile(profile)
    out = Advice(size=size, pattern=pattern)
    curves = [c for c in model.curves if c.pattern == pattern]
    if not curves:
        have = sorted({c.pattern for c in model.curves})
        out.notes.append(f"no message-size sweep for pattern {pattern!r} in this profile"
                         + (f" (sweeps: {', '.join(have)})" if have else " (run linkroof bench with the sweep family)"))
        return out
    for c in curves:
        bw = c.at(size)
        out.mechanisms.append(MechanismAdvice(
            mechanism=c.label, link=c.link, bandwidth_bytes_per_s=bw, peak_bytes_per_s=c.peak(),
            size_50=c.reaches(0.5), size_90=c.reaches(0.9),
            blocks_needed=_blocks_needed(profile, c.mechanism, pattern) if c.mechanism in ("sm", "tma") else None,
            time_s=size / bw if bw > 0 else float("inf")))
    kernels = [k for k in (_kernels(profile, mech, pattern, size) for mech in sorted({c.mechanism for c in curves})
                           if mech in ("sm", "tma")) if k]
    if kernels:
        out.notes.append("The comparison holds for the kernels this profile measured: " + "; ".join(kernels)
                         + ". Other launch shapes cross over elsewhere.")
    sizes = sorted({s for c in curves for s, _ in c.points})
    if size < sizes[0] or size > sizes[-1]:
        out.notes.append(f"{size} B is outside the swept sizes ({sizes[0]}-{sizes[-1]} B): extrapolated")
    return out
