"""Latency + bandwidth fits: time(size) = a + size / B for each mechanism and each
collective, from the measured message-size sweeps, piecewise where one line does not
fit, each with its worst error against its own points.

The fit minimises relative error (every point counts as much at 8 B as at 1 GiB), and a
segment is split where that lowers the worst error the most, until every point is
within `target` or `max_segments` is reached: the worst error is always reported,
whether the target was met or not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..schema import Profile


@dataclass(frozen=True)
class Segment:
    """time = latency_s + size / bandwidth_bytes_per_s for sizes in [lo, hi] bytes."""

    lo: int
    hi: int
    latency_s: float
    bandwidth_bytes_per_s: float  # inf where the time does not grow with size

    def time(self, size: float) -> float:
        return self.latency_s + size / self.bandwidth_bytes_per_s


@dataclass
class Fit:
    """One mechanism's or collective's fit, with the points it was fitted to."""

    name: str  # "ce p2p_write", "nccl all_reduce fp32"
    points: list[tuple[int, float]]  # (bytes, seconds)
    segments: list[Segment] = field(default_factory=list)

    def time(self, size: float) -> float:
        for s in self.segments:
            if size <= s.hi:
                return s.time(size)
        return self.segments[-1].time(size)

    def errors(self) -> list[float]:
        """Relative error of the fit at each point: (fit - measured) / measured."""
        return [(self.time(s) - t) / t for s, t in self.points]

    @property
    def worst_error(self) -> float:
        return max((abs(e) for e in self.errors()), default=math.nan)


def _line(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least squares in relative error: minimise sum ((a + s/B - t) / t)^2, i.e. a
    weighted linear fit of t = a + c*s with weights 1/t^2; a and c clamped at >= 0."""
    w = [1 / (t * t) for _, t in points]
    sw = sum(w)
    sx = sum(wi * s for wi, (s, _) in zip(w, points))
    sy = sum(wi * t for wi, (_, t) in zip(w, points))
    sxx = sum(wi * s * s for wi, (s, _) in zip(w, points))
    sxy = sum(wi * s * t for wi, (s, t) in zip(w, points))
    det = sw * sxx - sx * sx
    if len(points) < 2 or det <= 0:
        return sy / sw, 0.0
    c = (sw * sxy - sx * sy) / det
    a = (sy - c * sx) / sw
    if a < 0:  # no negative latency: a line through the origin
        a, c = 0.0, sxy / sxx
    if c < 0:  # time that falls with size: a constant
        a, c = sy / sw, 0.0
    return a, c


def _segment(points: list[tuple[int, float]]) -> Segment:
    a, c = _line(points)
    return Segment(points[0][0], points[-1][0], a, 1 / c if c > 0 else math.inf)


def _worst(points: list[tuple[int, float]], seg: Segment) -> float:
    return max(abs(seg.time(s) - t) / t for s, t in points)


def fit(name: str, points: list[tuple[int, float]], target: float = 0.10, max_segments: int = 3,
        min_points: int = 3) -> Fit:
    """Fit time against size, piecewise: split the worst segment at the size that lowers
    its worst error most, while a segment misses `target` and segments remain."""
    pts = sorted((int(s), float(t)) for s, t in points if s > 0 and t > 0)
    out = Fit(name, pts)
    if len(pts) < 2:
        return out
    pieces = [pts]
    while len(pieces) < max_segments:
        errs = [_worst(p, _segment(p)) for p in pieces]
        i = max(range(len(pieces)), key=lambda k: errs[k])
        if errs[i] <= target or len(pieces[i]) < 2 * min_points:
            break
        p = pieces[i]
        best = min(range(min_points, len(p) - min_points + 1),
                   key=lambda k: max(_worst(p[:k], _segment(p[:k])), _worst(p[k:], _segment(p[k:]))))
        pieces[i:i + 1] = [p[:best], p[best:]]
    out.segments = [_segment(p) for p in pieces]
    return out


def profile_fits(profile: Profile, target: float = 0.10) -> list[Fit]:
    """Fits for every message-size sweep of the profile: each copy mechanism and pattern
    (linkroof's sweeps, on one GPU pair), each collective and data type (the
    device time, out of place, linkroof's own or imported)."""
    groups: dict[str, dict[int, float]] = {}
    for m in profile.measurements:
        p = m.spec.params
        if not m.trusted or not m.spec.message_bytes or not (m.median_s == m.median_s and m.median_s > 0):
            continue
        if m.spec.mechanism == "nccl":
            if p.get("in_place") or p.get("rank_time") == "this rank" or \
                    (p.get("timing") == "host_launch" and m.source == "linkroof"):
                continue
            name = f"nccl {m.spec.pattern} {p.get('dtype', 'fp32')}" + ("" if m.source == "linkroof"
                                                                          else f" ({m.source})")
        elif p.get("sweep") and m.spec.mechanism in ("ce", "sm", "tma", "red", "tma_red"):
            name = f"{m.spec.mechanism} {m.spec.pattern}"
        else:
            continue
        pts = groups.setdefault(name, {})
        size = m.spec.message_bytes
        # a copy's repetition may hold many messages (loops, batches): time per message from its rate
        t = m.median_s if m.spec.mechanism == "nccl" else size / m.bandwidth_bytes_per_s
        pts[size] = min(t, pts.get(size, math.inf))
    return [fit(name, list(pts.items()), target) for name, pts in sorted(groups.items()) if len(pts) >= 4]
