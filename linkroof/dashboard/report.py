"""The static report and figure files: every page's figures in one self-contained
HTML file (plotly.js included once), or each figure as an image. Every string that
comes from a profile is escaped before it reaches the HTML."""

from __future__ import annotations

from html import escape
from typing import Any

from ..errors import LinkroofError
from ..roofline.fits import profile_fits
from ..roofline.model import MachineModel
from ..roofline.summaries import NOT_HELD, headline_rows, topo_matrix, warnings_of
from ..schema import Profile
from . import figures as F
from . import plotlyjs


# What each report figure needs, and how to get it, when the profile has nothing to draw
MISSING = {
    "Measured as % of spec": "no headline figure with a known spec: `linkroof bench` measures links, HBM and GEMMs",
    "Bandwidth by pair (copy engine, write)": "no copy-engine peer writes between GPU pairs: `linkroof bench` (peer_ce) "
                                              "or an nvbandwidth import measures them",
    "Bandwidth by pair, % of spec": "no copy-engine peer writes against a known spec (an import knows no link spec)",
    "Bandwidth by message size": "no message-size sweeps of copies: `linkroof bench` (the sweep family)",
    "Blocks": "no block-count sweep: `linkroof bench` (default or full suite, peer_sm)",
    "Collectives": "no collectives: `linkroof bench --only nccl`, or `linkroof import nccl-tests FILE`",
    "Roofline": "no compute ceiling: `linkroof bench --only compute`",
    "Communication roofline": "no NVLink bandwidth: `linkroof bench` (sweeps, NCCL) or an import gives one",
}


def _draws(fig: Any) -> bool:
    """Whether a figure has anything to draw (a heatmap of no value, no trace: nothing)."""
    for t in fig.data:
        z = getattr(t, "z", None)
        if z is not None:
            if any(v is not None for row in z for v in (row if isinstance(row, (list, tuple)) else [row])):
                return True
        elif len(t.x or ()):
            return True
    return False


def _fit_legend(fig: Any) -> Any:
    """A static page cannot scroll a long legend: put it under the plot, one row per
    three entries, and make the figure tall enough to hold it."""
    entries = sum(1 for t in fig.data if t.showlegend is not False and t.name)
    if entries > 8:
        rows = -(-entries // 3)
        height = (fig.layout.height or 450) + 22 * rows
        fig.update_layout(legend={"orientation": "h", "yanchor": "top", "y": -0.12, "xanchor": "left", "x": 0,
                                  "font": {"size": 10}}, height=height, margin={"b": 40 + 22 * rows})
    return fig


def report_figures(profile: Profile) -> list[tuple[str, Any]]:
    """Every page's figures, titled, for the report and image export (each figure with
    something to draw; `missing_figures` names the others)."""
    return drawn_and_missing(profile)[0]


def missing_figures(profile: Profile) -> list[tuple[str, str]]:
    """(title, what is missing and how to get it) for each figure with nothing to draw."""
    return drawn_and_missing(profile)[1]


def drawn_and_missing(profile: Profile) -> tuple[list[tuple[str, Any]], list[tuple[str, str]]]:
    """`report_figures` and `missing_figures` from one building of the figures (the
    report's most costly step: about half of `linkroof run`'s time with no GPU)."""
    figs = _all_figures(profile)
    drawn = [(t, f) for t, f in figs if f is not None and _draws(f)]
    missing = [(t, MISSING.get(t, "nothing to draw")) for t, f in figs if f is None or not _draws(f)]
    return drawn, missing


def _all_figures(profile: Profile) -> list[tuple[str, Any]]:
    model = MachineModel.from_profile(profile)
    try:
        roof = F.roofline_figure(model, list(profile.placements))
        hbm_roof = F.hbm_roofline_figure(model, list(profile.placements))
    except ValueError:
        roof = hbm_roof = None
    figs = [("Measured as % of spec", F.headline_figure(headline_rows(profile, model))),
            ("Topology", F.topology_figure(profile.topology, profile)),
            ("Bandwidth by pair (copy engine, write)", F.pair_matrix_figure(profile, "p2p_write", "ce")),
            ("Bandwidth by pair, % of spec", F.pair_matrix_figure(profile, "p2p_write", "ce", relative=True)),
            ("Bandwidth by message size", F.bandwidth_sweep_figure(model)),
            ("Blocks", F.sm_sweep_figure(profile)),
            ("Collectives", F.collectives_figure(profile, model)),
            ("Roofline", roof),
            ("Roofline (HBM), placed kernels and calls", hbm_roof),
            ("Communication roofline", F.bandwidth_roofline_figure(model, list(profile.placements), profile))]
    if profile.placements:
        figs.append(("Speed of light", F.speed_of_light_figure(list(profile.placements))))
    if any(p.decomposition_s for p in profile.placements):
        figs.append(("Where the measured time went", F.decomposition_figure(list(profile.placements))))
    for p in profile.placements:
        if p.timeline is not None and p.timeline.intervals:
            figs.append((f"Timeline: {p.workload.name}", F.timeline_figure(p.workload.name, p.timeline)))
    fits = profile_fits(profile)
    if fits:
        figs.append(("Fits of a + size / b (curve parameters)", F.fits_figure(fits)))
    return [(t, _fit_legend(f) if f is not None else None) for t, f in figs]


def _cell(value: Any, unit: str = "") -> str:
    """A table cell: a value, or 'unknown' (never a literal None)."""
    return "unknown" if value is None else escape(f"{value}{unit}")


def trace_html(profile: Profile, traces: list) -> str:
    """The Trace page in the report: the traces' timeline, their calls over this
    machine's NCCL curves, and one row per collective call (every string escaped)."""
    import plotly.io as pio

    from ..readers.traces import analyze
    from ..units import format_rate, format_size, format_time

    report = analyze(traces, profile)
    model = MachineModel.from_profile(profile)
    figs = [("Trace: timeline", F.trace_timeline_figure(report)),
            ("Trace: collectives over this machine's NCCL", F.trace_collectives_figure(report, profile, model)),
            ("Trace: calls on the communication roofline", F.bandwidth_roofline_figure(model, (), None, report))]
    out = [f"<h2>{escape(t)}</h2>" + pio.to_html(f, include_plotlyjs=False, full_html=False)
           for t, f in figs]

    def opt(x: Any, fmt: Any) -> str:
        return "unknown" if x is None else escape(fmt(x))

    rows = "".join(
        f"<tr><td>{opt(r.call.rank, str)}</td><td>{escape(r.call.collective or 'unknown')}</td>"
        f"<td>{escape(r.call.dtype or 'unknown')}</td><td>{opt(r.call.size_bytes, format_size)}</td>"
        f"<td>{opt(r.call.group_size, str)} ({escape(r.call.group_from)})</td>"
        f"<td>{escape(format_time(r.call.duration_s))}</td><td>{opt(r.call.busbw, format_rate)}</td>"
        f"<td>{opt(r.nccl_s, format_time) if r.nccl_s else escape(r.nccl_how)}</td>"
        f"<td>{opt(r.fraction_of_nccl, lambda f: f'{f:.0%}')}</td><td>{escape(format_time(r.exposed_s))}</td>"
        f"<td>{escape(r.call.source)}</td></tr>" for r in report.rows[:500])
    out.append("<h3>Trace: collectives</h3><table border=1 cellpadding=4><tr><th>rank</th><th>collective</th>"
               "<th>type</th><th>size</th><th>group (from)</th><th>time</th><th>busbw</th><th>NCCL here</th>"
               f"<th>of NCCL</th><th>exposed</th><th>facts from</th></tr>{rows}</table>")
    if len(report.rows) > 500:
        out.append(f"<p>The first 500 of {len(report.rows)} calls; `linkroof trace --csv FILE` writes them all.</p>")
    out += [f"<p class='warning'>{escape(w)}</p>" for w in report.warnings]
    return "".join(out)


def report_html(profile: Profile, banner: str | None = None, traces: list | None = None) -> str:
    """One self-contained HTML page with every page's figures; `banner` (the profile is
    not this machine's) tops it; `traces` (readers.traces.Trace, one per rank) add the
    Trace page."""
    import plotly.io as pio

    from ..roofline.cost import machine_terms
    from ..roofline.cost import decomposition_text
    from ..units import format_time

    model = MachineModel.from_profile(profile)
    parts = []
    drawn, missing = drawn_and_missing(profile)
    for title, fig in drawn:
        parts.append(f"<h2>{escape(title)}</h2>" + pio.to_html(fig, include_plotlyjs=False, full_html=False))
    if missing:
        parts.append("<h3>Not drawn: nothing to show</h3><ul>" + "".join(
            f"<li><b>{escape(t)}</b>: {escape(why)}</li>" for t, why in missing) + "</ul>")
    rows = "".join(f"<tr><td>{escape(str(r['figure']))}</td><td>{_cell(r['measured'], ' ' + r['unit'])}</td>"
                   f"<td>{_cell(r['spec'])}</td>"
                   f"<td>{_cell(NOT_HELD if r['spec'] == NOT_HELD else r['percent_of_spec'])}</td></tr>"
                   for r in headline_rows(profile, model))
    headline = (f"<table border=1 cellpadding=4><tr><th>figure</th><th>measured</th><th>spec</th><th>% of spec "
                f"(data rate)</th></tr>{rows}</table>" if rows else
                "<p class='missing'>No headline figure: `linkroof bench` measures links, HBM and GEMMs.</p>")
    warnings = "".join(f"<li>{escape(w)}</li>" for w in warnings_of(profile, model)) or "<li>none</li>"
    def decomposed(p: Any) -> str:
        parts = [(k, v, "") for k, v in p.decomposition_s.items()]
        return escape(decomposition_text(p.measured_time_s, parts)) if parts else "-"

    placed = ""
    if profile.placements:
        prow = "".join(
            f"<tr><td>{escape(p.workload.name)}</td><td>{escape(p.ceilings_kind)}</td>"
            f"<td>{escape(format_time(p.measured_time_s))}</td><td>{escape(format_time(p.bound_time_s))}</td>"
            f"<td>{escape(p.limiter)}</td><td>{p.fraction_of_roofline:.1%}</td>"
            f"<td>{escape(format_time(p.cost_bound_s)) if p.cost_bound_s else '-'}</td>"
            f"<td>{decomposed(p)}</td><td>{escape('; '.join(p.verdicts)) or '-'}</td></tr>"
            for p in profile.placements)
        placed = ("<h3>Placed workloads</h3><table border=1 cellpadding=4><tr><th>workload</th><th>ceilings</th>"
                  "<th>measured</th><th>bandwidth-only bound</th><th>limiter</th><th>fraction of roofline</th>"
                  f"<th>cost-model bound</th><th>decomposition</th><th>flags</th></tr>{prow}</table>")
    terms = machine_terms(profile)
    terms_html = ("<h3>Cost-model terms of this machine</h3><table border=1 cellpadding=4><tr><th>term</th><th>kind"
                  "</th><th>time</th><th>what</th></tr>" + "".join(
                      f"<tr><td>{escape(r['term'])}</td><td>{escape(r['kind'])}</td>"
                      f"<td>{escape(format_time(r['seconds']))}</td><td>{escape(r['what'])}</td></tr>" for r in terms)
                  + "</table>") if terms else ""
    top = (f"<div class='banner' style='background:#fcf8e3;color:#8a6d3b;border:1px solid #faebcc;padding:10px;"
           f"font-weight:bold'>{escape(banner)}</div>") if banner else ""
    head = (f"{top}<h1>linkroof report: {escape(', '.join(profile.hostnames))}</h1><p>Profile {escape(profile.id)} "
            f"({escape(profile.label)}), {len(profile.measurements)} measurements, {escape(profile.created_at)}</p>"
            f"{headline}<h3>Warnings</h3><ul>{warnings}</ul><pre>{escape(topo_matrix(profile.topology))}</pre>"
            f"{placed}{terms_html}")
    if traces:
        parts.append(trace_html(profile, traces))
    # plotly.js once, in the head: the cartesian bundle where it fits (dashboard/plotlyjs.py)
    return ("<!doctype html><html><head><meta charset='utf-8'><title>linkroof report</title>" + plotlyjs.script()
            + "</head><body style='font-family:sans-serif'>" + head + "".join(parts) + "</body></html>")


def write_figure(fig: Any, path: str) -> None:
    """HTML always; PNG/SVG/PDF where kaleido is installed (clear error otherwise)."""
    if path.endswith(".html"):
        try:
            fig.write_html(path, include_plotlyjs=True, full_html=True)
        except OSError as e:
            raise LinkroofError(f"cannot write {path}: {e.strerror or e}") from None
        return
    if not path.endswith((".png", ".svg", ".pdf")):
        raise LinkroofError(f"--plot {path}: use .html, .png, .svg or .pdf")
    try:
        fig.write_image(path)
    except OSError as e:
        raise LinkroofError(f"cannot write {path}: {e.strerror or e}") from None
    except (ValueError, ImportError, RuntimeError) as e:
        detail = " ".join(str(e).split())[:160]
        raise LinkroofError(f"cannot write {path}: image export needs kaleido (pip install 'linkroof[images]'); "
                            f".html always works ({detail})") from None
