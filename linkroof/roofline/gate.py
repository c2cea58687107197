"""The health gate behind `linkroof check`: a profile against a baseline profile (figure
by figure, matched on the full spec key, parameters included), against a file of
minimum figures, or against spec; plus the topology a node must keep (GPUs, active
NVLinks, PCIe generation and width). Pure: profiles in, rows and JUnit XML out."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from ..errors import LinkroofError
from ..schema import Measurement, Profile, known
from ..units import format_size, format_value
from .model import MachineModel
from .summaries import figures_by_key, headline_rows


class GateError(LinkroofError):
    """A minimum-figures file is malformed; the message names the entry."""


@dataclass(frozen=True)
class Check:
    name: str  # what was checked, for a reader
    kind: str  # "figure" | "minimum" | "spec" | "topology"
    expected: str
    got: str
    ratio: float | None  # got / expected, oriented so that lower is worse (times inverted)
    passed: bool
    detail: str = ""


@dataclass
class GateReport:
    checks: list[Check] = field(default_factory=list)
    not_compared: int = 0  # figures of the profile with no counterpart in the baseline
    not_checked: list[str] = field(default_factory=list)  # what one side does not know, so nothing was held to it

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]

    @property
    def passed(self) -> bool:
        return bool(self.compared) and not self.failed

    @property
    def compared(self) -> list[Check]:
        """Checks that held a figure or a link to something (a GPU count alone is no comparison)."""
        return [c for c in self.checks if c.name != "GPUs"]


def _label(m: Measurement) -> str:
    s = m.spec
    where = ",".join(map(str, s.devices))
    size = f" {format_size(s.message_bytes)}" if s.message_bytes else ""
    params = "".join(f" {k}={v}" for k, v in sorted(s.params.items()) if k in ("dtype", "in_place", "blocks",
                                                                            "host_memory", "mode", "chunk"))
    return f"{s.name} {s.mechanism} GPU {where}{size}{params}"


def _ratio(value: float, reference: float, unit: str) -> float:
    """value against reference, 1.0 = equal, below 1 = worse (a time that grew is worse)."""
    return reference / value if unit == "s" else value / reference


def _by_key(profile: Profile) -> dict[tuple[Any, ...], Measurement]:
    """Verified figures by spec key alone (a node is held to its baseline whatever its hostname)."""
    return figures_by_key(profile, origin=False,
                          keep=lambda m: m.trusted and m.spec.params.get("rank_time") != "this rank")


def against_baseline(profile: Profile, baseline: Profile, threshold: float = 0.05) -> GateReport:
    """Every figure the two profiles share (same spec key): it fails when it is worse
    than the baseline's by more than `threshold` (0.05 = 5 %)."""
    report = GateReport()
    base = _by_key(baseline)
    for k, m in sorted(_by_key(profile).items(), key=lambda kv: repr(kv[0])):
        b = base.get(k)
        if b is None:
            report.not_compared += 1
            continue
        (v, unit), (bv, _) = m.figure, b.figure
        r = _ratio(v, bv, unit)
        report.checks.append(Check(_label(m), "figure", format_value(bv, unit), format_value(v, unit), r,
                                   r >= 1 - threshold, f"{(r - 1):+.1%} against the baseline"))
    checks, unknown = topology_checks(profile, baseline)
    report.checks += checks
    report.not_checked += unknown
    return report


def topology_checks(profile: Profile, baseline: Profile) -> tuple[list[Check], list[str]]:
    """What a node must keep from its baseline: as many GPUs, each with as many active
    NVLinks, its PCIe link trained at the same generation and width. Only what both
    topologies know is held: an imported tool's output says nothing of NVLinks or PCIe,
    and unknown is never taken as 0. The second list names what could not be checked."""
    out: list[Check] = []
    unknown: list[str] = []
    mine, theirs = profile.topology, baseline.topology
    if not mine.gpus or not theirs.gpus:
        return out, ["GPUs: one of the topologies lists none"]
    out.append(Check("GPUs", "topology", str(len(theirs.gpus)), str(len(mine.gpus)), None,
                     len(mine.gpus) >= len(theirs.gpus)))
    links = mine.links_known and theirs.links_known
    if not links:
        side = "the profile" if not mine.links_known else "the baseline"
        unknown.append(f"active NVLinks: {side} comes from {(mine if not mine.links_known else theirs).source}, "
                       "which does not say how the GPUs are linked")
    for g, b in zip(mine.gpus, theirs.gpus):
        if b.nvlinks and links:
            got, want = len(g.active_nvlinks), len(b.active_nvlinks)
            out.append(Check(f"GPU{g.index} active NVLinks", "topology", str(want), str(got), None, got >= want,
                             "" if got >= want else f"{want - got} NVLinks down"))
        for what, mine_v, base_v in (("PCIe generation", g.pcie_gen_max, b.pcie_gen_max),
                                     ("PCIe width", g.pcie_width_max, b.pcie_width_max)):
            if known(mine_v) and known(base_v):
                out.append(Check(f"GPU{g.index} {what}", "topology", str(base_v), str(mine_v), None,
                                 mine_v >= base_v, "" if mine_v >= base_v else "trained below its baseline"))
            elif known(base_v) or known(mine_v):
                unknown.append(f"GPU{g.index} {what}: unknown in {'the profile' if known(base_v) else 'the baseline'}")
    return out, unknown


def against_minimums(profile: Profile, minimums: list[dict[str, Any]]) -> GateReport:
    """A file of minimum figures: each entry names `name` and optionally `mechanism`,
    `pattern`, `devices`, `message_bytes`, `dtype`, with `min` (bytes/s or FLOP/s) or
    `max_s` (seconds, for times). With `message_bytes` every measurement it matches must
    meet it; without, the best of them (the headline figure). An entry that matches
    nothing fails."""
    report = GateReport()
    for i, entry in enumerate(minimums):
        if not isinstance(entry, dict) or "name" not in entry or ("min" in entry) == ("max_s" in entry):
            raise GateError(f"minimum[{i}]: needs a name and one of min (a rate) or max_s (a time)")
        limit = entry.get("min", entry.get("max_s"))
        if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not limit > 0:
            raise GateError(f"minimum[{i}]: the limit must be a positive number, got {limit!r}")
        matched = [m for m in profile.measurements if m.trusted and m.spec.name == entry["name"]
                   and all(entry[k] == getattr(m.spec, k) for k in ("mechanism", "pattern", "message_bytes")
                           if k in entry)
                   and ("devices" not in entry or tuple(entry["devices"]) == m.spec.devices)
                   and ("dtype" not in entry or entry["dtype"] == m.spec.params.get("dtype"))]
        what = " ".join(str(entry[k]) for k in ("name", "mechanism", "pattern") if k in entry)
        if not matched:
            report.checks.append(Check(what, "minimum", str(limit), "missing", None, False,
                                       "no verified measurement in the profile matches this entry"))
            continue
        if "message_bytes" not in entry:  # no size named: the entry holds the best figure (the headline one)
            best = max if "min" in entry else min
            matched = [best(matched, key=lambda m: m.figure[0])]
        for m in matched:
            v, unit = m.figure
            want_unit = "s" if "max_s" in entry else unit
            if want_unit != unit:
                raise GateError(f"minimum[{i}] ({what}): {'max_s' if unit != 's' else 'min'} given for a figure in "
                                f"{unit}")
            r = _ratio(v, float(limit), unit)
            report.checks.append(Check(_label(m), "minimum", format_value(float(limit), unit), format_value(v, unit),
                                       r, r >= 1))
    return report


def against_spec(profile: Profile, minimum_fraction: float, model: MachineModel | None = None) -> GateReport:
    """Each headline figure (the overview's: links, HBM, GEMMs) at least
    `minimum_fraction` of its spec ceiling."""
    report = GateReport()
    model = model or MachineModel.from_profile(profile)
    for row in headline_rows(profile, model):
        if row["percent_of_spec"] is None:
            continue
        r = row["percent_of_spec"] / 100
        report.checks.append(Check(row["figure"], "spec", f"{minimum_fraction:.0%} of {row['spec']} {row['unit']}",
                                   f"{row['measured']} {row['unit']} ({r:.1%})", r / minimum_fraction,
                                   r >= minimum_fraction))
    return report


def junit_xml(report: GateReport, suite: str = "linkroof check") -> str:
    """The checks as a JUnit XML test suite (one test case each; failures carry what was
    expected and what was measured), for CI systems and fleet dashboards. Text from a
    profile is plain (no character XML forbids) and escaped; the document is parsed back
    (ElementTree) to as many test cases as checks before it is returned."""
    from xml.etree import ElementTree

    from ..files import plain

    cases = []
    for c in report.checks:
        body = "" if c.passed else (f"<failure message={quoteattr(plain(f'expected {c.expected}, got {c.got}'))}>"
                                    f"{escape(plain(c.detail, newlines=True))}</failure>")
        cases.append(f'  <testcase classname={quoteattr("linkroof." + plain(c.kind))} name={quoteattr(plain(c.name))}>'
                     f'{body}</testcase>')
    text = (f'<?xml version="1.0" encoding="utf-8"?>\n<testsuite name={quoteattr(plain(suite))} tests="{len(cases)}" '
            f'failures="{len(report.failed)}" skipped="0">\n' + "\n".join(cases) + "\n</testsuite>\n")
    try:
        root = ElementTree.fromstring(text.encode("utf-8"))
    except ElementTree.ParseError as e:
        raise GateError(f"the JUnit report does not parse back as XML ({e}): not written") from None
    if root.tag != "testsuite" or len(root.findall("testcase")) != len(report.checks):
        raise GateError("the JUnit report parses back as other test cases than were checked: not written")
    return text


def parse_percent(text: str) -> float:
    """'5%' -> 0.05, '0.05' -> 0.05."""
    t = str(text).strip()
    try:
        value = float(t[:-1]) / 100 if t.endswith("%") else float(t)
    except ValueError:
        raise GateError(f"not a percentage: {text!r} (e.g. 5%)") from None
    if not (0 <= value < 10) or math.isnan(value):
        raise GateError(f"not a sensible percentage: {text!r}")
    return value
