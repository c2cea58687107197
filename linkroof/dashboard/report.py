"""The static report and figure files: every page's figures in one self-contained
HTML file (plotly.js included once), or each figure as an image. Every string that
comes from a profile is escaped before it reaches the HTML."""

from __future__ import annotations

from html import escape
from typing import Any

from ..errors import LinkroofError
from ..roofline.fits import profile_fits
from ..roofline.model import MachineModel
from ..roofline.summaries import headline_rows, topo_matrix, warnings_of
from ..schema import Profile
from . import figures as F


def report_figures(profile: Profile) -> list[tuple[str, Any]]:
    """Every page's figures, titled, for the report and image export."""
    model = MachineModel.from_profile(profile)
    figs = [("Measured as % of spec", F.headline_figure(headline_rows(profile, model))),
            ("Topology", F.topology_figure(profile.topology, profile)),
            ("Bandwidth by pair (copy engine, write)", F.pair_matrix_figure(profile, "p2p_write", "ce")),
            ("Bandwidth by pair, % of spec", F.pair_matrix_figure(profile, "p2p_write", "ce", relative=True)),
            ("Bandwidth by message size", F.bandwidth_sweep_figure(model)),
            ("Blocks", F.sm_sweep_figure(profile)),
            ("Collectives", F.collectives_figure(profile, model)),
            ("Roofline", F.roofline_figure(model, list(profile.placements))),
            ("Bandwidth roofline", F.bandwidth_roofline_figure(model, list(profile.placements)))]
    if profile.placements:
        figs.append(("Speed of light", F.speed_of_light_figure(list(profile.placements))))
    if any(p.decomposition_s for p in profile.placements):
        figs.append(("Where the measured time went", F.decomposition_figure(list(profile.placements))))
    fits = profile_fits(profile)
    if fits:
        figs.append(("Latency + bandwidth fits", F.fits_figure(fits)))
    return figs


def report_html(profile: Profile) -> str:
    """One self-contained HTML page with every page's figures."""
    import plotly.io as pio

    model = MachineModel.from_profile(profile)
    parts = []
    for i, (title, fig) in enumerate(report_figures(profile)):
        parts.append(f"<h2>{escape(title)}</h2>" + pio.to_html(fig, include_plotlyjs=(i == 0), full_html=False))
    rows = "".join(f"<tr><td>{escape(str(r['figure']))}</td><td>{r['measured']} {escape(r['unit'])}</td>"
                   f"<td>{r['spec']}</td><td>{r['percent_of_spec']}</td></tr>" for r in headline_rows(profile, model))
    warnings = "".join(f"<li>{escape(w)}</li>" for w in warnings_of(profile, model)) or "<li>none</li>"
    head = (f"<h1>linkroof report: {escape(', '.join(profile.hostnames))}</h1><p>Profile {escape(profile.id)} "
            f"({escape(profile.label)}), {len(profile.measurements)} measurements, {escape(profile.created_at)}</p>"
            f"<table border=1 cellpadding=4><tr><th>figure</th><th>measured</th><th>spec</th><th>% of spec</th></tr>"
            f"{rows}</table><h3>Warnings</h3><ul>{warnings}</ul><pre>{escape(topo_matrix(profile.topology))}</pre>")
    return ("<!doctype html><html><head><meta charset='utf-8'><title>linkroof report</title></head>"
            "<body style='font-family:sans-serif'>" + head + "".join(parts) + "</body></html>")


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
