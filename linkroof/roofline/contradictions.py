"""Contradictions inside one explanation (issue 43, item 2): every figure and sentence of a
call's explanation must agree with the others and with physics. `check` takes what an
explanation is made of (the timeline summary, the placements, the clock state, and the
text shown) and returns one line per contradiction; [] where there is none.

The rules:
- class: each class the decomposition gives time to has a kernel of that class in the
  kernel table, and each kernel class the table shows over 1 % of the span has time in
  the decomposition (a Triton kernel called memory-bound in the table and "other" in
  the decomposition is one call with two classes);
- critical path: a class said "not on the critical path" has no time on it; no class
  could save more than its time on the path, nor more than the span; a saving's reason
  names no time on the path longer than the span;
- shares: a share shown as a percentage lies in [0, 100] (an L2 hit rate of 333 % is a
  misread figure); a class's time alone is no more than its time; the pieces add up to
  the span;
- bounds: a placement's bound is not above its measured time unless it says so (the
  "faster than its roofline" flag);
- drift: a clock state called drifting shows its evidence: the clock moving (NVML's or
  the GPU's own), a power or thermal cap, or the power rising.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

SPAN_SLACK = 1e-6  # relative: sums of floats
MINOR = 0.01  # a class under this share of the span is not held to the kernel table

# a percentage that is a share of something (never a change, "+12.0%", nor a ratio "1.4x")
SHARE = re.compile(r"(?<![+\-\d.])(\d+(?:\.\d+)?)\s?% (?=(?:hits|busy|of (?:its|the|their|each|warp|what|all|SM)|"
                   r"used|active|idle))")
_TIME = re.compile(r"its (\d+(?:\.\d+)?) (ns|us|µs|ms|s) (?:a call )?on the critical path")
_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}
EVIDENCE = ("measured on the GPU", "NVML reporting", "the power rising", "as the SM clock went from")


# a figure printed as NaN: "nan%", "nan us", "nanx" (a share or time with nothing behind it)
NAN_FIGURE = re.compile(r"(?<![A-Za-z_])nan(?:\s?%|\s(?:ns|us|µs|ms|s|GB/s|B/s)\b|x\b)", re.IGNORECASE)


def check_text(text: str, where: str = "text") -> list[str]:
    """Shares shown as percentages outside [0, 100], and figures printed as NaN."""
    out = []
    for m in NAN_FIGURE.finditer(text or ""):
        lo = max(0, m.start() - 40)
        out.append(f"{where}: a figure printed as NaN: ...{text[lo:m.end() + 20]}...")
    for m in SHARE.finditer(text or ""):
        v = float(m.group(1))
        if v > 100.0:
            lo = max(0, m.start() - 40)
            out.append(f"{where}: a share of {v:g}% (over 100 %): ...{text[lo:m.end() + 20]}...")
    return out


def check_timeline(t: Any) -> list[str]:
    """The timeline summary's classes, critical path and savings against each other."""
    out: list[str] = []
    span = getattr(t, "span_s", 0.0) or 0.0
    if span <= 0:
        return out
    cls = dict(t.class_s)
    table: dict[str, float] = {}
    for k in t.kernels:
        table[k.kernel_class] = table.get(k.kernel_class, 0.0) + k.time_per_call_s
    for c, v in cls.items():
        if v > MINOR * span and c not in table:
            out.append(f"class: the decomposition gives {c} {v * 1e6:.1f} us a call, and no kernel in the table is {c} "
                       f"(the table's classes: {', '.join(sorted(table)) or 'none'})")
    for c, v in table.items():
        if v > MINOR * span and cls.get(c, 0.0) <= 0:
            out.append(f"class: the kernel table calls {v * 1e6:.1f} us a call {c}, and the decomposition gives {c} "
                       "no time")
    for c, alone in t.class_alone_s:
        if alone > cls.get(c, 0.0) * (1 + SPAN_SLACK) + 1e-12:
            out.append(f"shares: {c} alone {alone * 1e6:.1f} us is more than all of {c} ({cls.get(c, 0.0) * 1e6:.1f} us)")
    if t.pieces:
        total = sum(v for _, v in t.pieces)
        if abs(total - span) > SPAN_SLACK * span + 1e-12:
            out.append(f"shares: the pieces add up to {total * 1e6:.1f} us, the span is {span * 1e6:.1f} us")
    path = dict(t.critical_path_s)
    for c, at_most, why in t.shorten_s:
        on = path.get(c, 0.0)
        if why.startswith("not on the critical path") and on > 0:
            out.append(f"critical path: {c} is said not to be on the critical path, and has {on * 1e6:.1f} us on it")
        if at_most > on * (1 + SPAN_SLACK) + 1e-12:
            out.append(f"critical path: shortening {c} could save at most {at_most * 1e6:.1f} us, more than its "
                       f"{on * 1e6:.1f} us on the path")
        if at_most > span * (1 + SPAN_SLACK):
            out.append(f"critical path: shortening {c} could save {at_most * 1e6:.1f} us, more than the span")
        m = _TIME.search(why)
        if m and float(m.group(1)) * _UNIT[m.group(2)] > span * (1 + 1e-3) + 1e-9:
            out.append(f"critical path: {c}'s reason gives {m.group(0)!r}, longer than the call's span "
                       f"({span * 1e6:.1f} us): a figure of another unit (a sum over calls?) beside a per-call one")
    return out


def check_placements(placements: Iterable[Any]) -> list[str]:
    out = []
    for p in placements:
        if p.measured_time_s > 0 and p.bound_time_s > p.measured_time_s * (1 + p.BELOW_BOUND) and \
                not any("faster than" in f for f in p.flags):
            out.append(f"bounds: {p.workload.name}'s bound {p.bound_time_s * 1e6:.1f} us is above its measured "
                       f"{p.measured_time_s * 1e6:.1f} us and nothing says so")
        frac = p.fraction_of_roofline
        if frac < 0 or (frac != frac and p.limiter != "unknown"):  # NaN: nothing to bound, so no limiter either
            out.append(f"shares: {p.workload.name}'s fraction of roofline is {frac} beside the limiter {p.limiter!r}")
    return out


def check_clock(c: Any, where: str = "clock") -> list[str]:
    """A drift is stated with its evidence."""
    if c is None or getattr(c, "state", "") != "drifting":
        return []
    first, last = c.sm_mhz_first, c.sm_mhz_last
    moved = bool(first and last and abs(last - first) / first > 0.03)
    if moved or any(e in (c.note or "") for e in EVIDENCE):
        return []
    return [f"{where}: called drifting with no evidence (SM clock {first} -> {last} MHz, no cap, no power rise "
            "named): a drift is the GPU's only with evidence"]


def check(timeline: Any = None, placements: Iterable[Any] = (), clock: Any = None, texts: Iterable[str] = ()) -> list[str]:
    """Every contradiction between the parts of one explanation."""
    out: list[str] = []
    if timeline is not None:
        out += check_timeline(timeline)
    out += check_placements(placements)
    out += check_clock(clock)
    for i, t in enumerate(texts):
        out += check_text(t, f"text {i + 1}")
    return out
