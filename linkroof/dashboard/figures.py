"""Pure figure builders: data model -> plotly Figure. Used by `linkroof roofline --plot`,
the dashboard and the static report. No I/O here."""

from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go

from ..roofline.model import MachineModel
from ..schema import Placement, known

LINK_COLORS = {"nvlink": "#76b900", "pcie_peer": "#1f77b4", "host": "#ff7f0e", "network": "#9467bd", "hbm": "#d62728"}
DASH = {"spec": "dash", "derived": "dot", "measured": "solid"}


def _gb(x: float) -> str:
    return f"{x / 1e9:.1f} GB/s"


def _tf(x: float) -> str:
    return f"{x / 1e12:.1f} TFLOP/s"


def roofline_figure(model: MachineModel, placements: Sequence[Placement] = (), dtypes: Sequence[str] = ("fp16", "bf16",
                    "fp32", "fp64", "fp8"), intensity_range: tuple[float, float] = (1e-1, 1e5)) -> go.Figure:
    """The communication-aware roofline: attainable FLOP/s against FLOP per link byte.
    Compute roofs per data type and link roofs per mechanism; spec dashed, measured
    solid; roof values in the legend; placed workloads as points."""
    fig = go.Figure()
    lo, hi = intensity_range
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    computes = []
    for dt in dtypes:
        for kind in ("spec", "measured"):
            roof = model.compute(dt, kind)
            if roof is not None:
                computes.append((dt, kind, roof))
    if not computes:
        raise ValueError("this model has no compute ceiling to draw")
    top = max(r.value for _, _, r in computes)
    for dt, kind, roof in computes:
        fig.add_trace(go.Scatter(x=[lo, hi], y=[roof.value, roof.value], mode="lines",
                                 name=f"{dt} {roof.kind}: {_tf(roof.value)}",
                                 line={"dash": DASH[roof.kind], "width": 1.5},
                                 hovertemplate=f"{dt} {roof.kind} %{{y:.3s}}FLOP/s<br>{roof.basis}<extra></extra>"))
    links = []
    for link in ("nvlink", "pcie_peer", "host", "network"):
        spec = model.find(f"link:{link}", "spec")
        if spec is not None:
            links.append((link, "spec", "", spec))
        for mech in ("ce", "sm", "tma", "nccl"):
            r = model.find(f"link:{link}", "measured", mech)
            if r is not None:
                links.append((link, "measured", mech, r))
    for link, kind, mech, roof in links:
        ys = [min(top, x * roof.value) for x in xs]
        label = f"{link} {mech + ' ' if mech else ''}{kind}: {_gb(roof.value)}"
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=label,
                                 line={"dash": DASH[kind], "color": LINK_COLORS.get(link), "width": 1.5},
                                 hovertemplate=f"{label}<br>%{{x:.3g}} FLOP/B -> %{{y:.3s}}FLOP/s<extra></extra>"))
    pts = [p for p in placements if p.workload.flops and sum(p.workload.link_bytes.values())]
    if pts:
        x = [sum(p.workload.flops.values()) / sum(p.workload.link_bytes.values()) for p in pts]
        y = [sum(p.workload.flops.values()) / p.measured_time_s for p in pts]
        text = [f"{p.workload.name}<br>time {p.measured_time_s * 1e3:.3f} ms, bound {p.bound_time_s * 1e3:.3f} ms"
                f"<br>limiter {p.limiter}<br>{p.fraction_of_roofline:.0%} of roofline ({p.ceilings_kind})" for p in pts]
        fig.add_trace(go.Scatter(x=x, y=y, mode="markers", name="placed workloads", text=text,
                                 marker={"size": 11, "symbol": "diamond", "color": "black"},
                                 hovertemplate="%{text}<extra></extra>"))
    fig.update_xaxes(type="log", title="FLOP per link byte (per GPU)")
    fig.update_yaxes(type="log", title="FLOP/s", range=[math.log10(top) - 4, math.log10(top) + 0.3])
    fig.update_layout(title=f"Communication-aware roofline: {model.gpu_name}", template="plotly_white",
                      legend={"font": {"size": 10}}, height=600)
    return fig


def bandwidth_sweep_figure(model: MachineModel, pattern: str | None = None) -> go.Figure:
    """Bandwidth against message size per mechanism, with each mechanism's 90 % size marked."""
    fig = go.Figure()
    for c in model.curves:
        if pattern and c.pattern != pattern:
            continue
        sizes, bws = zip(*c.points)
        fig.add_trace(go.Scatter(x=sizes, y=[b / 1e9 for b in bws], mode="lines+markers",
                                 name=f"{c.mechanism} {c.pattern} ({c.link})",
                                 hovertemplate="%{x} B: %{y:.1f} GB/s<extra></extra>"))
        s90 = c.reaches(0.9)
        if s90:
            fig.add_trace(go.Scatter(x=[s90], y=[c.at(s90) / 1e9], mode="markers", showlegend=False,
                                     marker={"symbol": "x", "size": 10},
                                     hovertemplate=f"{c.mechanism}: 90% of peak at %{{x}} B<extra></extra>"))
    spec = model.find("link:nvlink", "spec")
    if spec is not None and known(spec.value):
        fig.add_hline(y=spec.value / 1e9, line_dash="dash", annotation_text=f"NVLink spec {_gb(spec.value)}")
    fig.update_xaxes(type="log", title="message size (bytes)")
    fig.update_yaxes(title="GB/s")
    fig.update_layout(title="Bandwidth by message size and mechanism", template="plotly_white", height=500)
    return fig


def write_figure(fig: go.Figure, path: str) -> None:
    """HTML always; PNG/SVG where kaleido is installed (clear error otherwise)."""
    if path.endswith(".html"):
        fig.write_html(path, include_plotlyjs=True, full_html=True)
        return
    if not path.endswith((".png", ".svg", ".pdf")):
        from ..errors import LinkroofError

        raise LinkroofError(f"--plot {path}: use .html, .png, .svg or .pdf")
    try:
        fig.write_image(path)
    except (ValueError, ImportError, RuntimeError) as e:
        from ..errors import LinkroofError

        raise LinkroofError(f"cannot write {path} ({e}); image export needs the kaleido package: use .html, or "
                            "pip install kaleido") from None
