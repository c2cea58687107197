"""Pure figure builders: data model -> plotly Figure. Used by `linkroof roofline --plot`,
the dashboard and the static report (report.py writes them). No I/O here."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from ..roofline.model import LINK_NAMES, MachineModel
from ..roofline.timeline import short_name
from ..schema import Placement, known
from ..units import format_flops as _tf
from ..units import format_rate as _gb
from ..units import format_size, format_time, gbps

LINK_COLORS = {"nvlink": "#76b900", "pcie_peer": "#1f77b4", "host": "#ff7f0e", "network": "#9467bd", "hbm": "#d62728"}
DASH = {"spec": "dash", "derived": "dot", "measured": "solid"}


DTYPE_COLORS = {"fp64": "#1f77b4", "fp32": "#ff7f0e", "tf32": "#8c564b", "fp16": "#2ca02c", "bf16": "#d62728",
                "fp8": "#9467bd", "int8": "#7f7f7f", "fp4": "#e377c2"}


def _decades(lo: float, hi: float, fmt: Any) -> dict[str, Any]:
    """Tick values at every power of ten between lo and hi, labelled by `fmt`: one style
    of label on a log axis (no '100T' beside '10^15')."""
    vals = [10.0 ** k for k in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]
    return {"tickvals": vals, "ticktext": [fmt(v) for v in vals]}


def _us_tick(v: float) -> str:
    """A power of ten of microseconds as a tick label: '100 ns', '10 us', '1 ms'."""
    if v < 1:
        return f"{round(v * 1000):g} ns"
    if v < 1000:
        return f"{round(v):g} us"
    return f"{round(v / 1000):g} ms"


def _flops_tick(v: float) -> str:
    for scale, unit in ((1e15, "PFLOP/s"), (1e12, "TFLOP/s"), (1e9, "GFLOP/s")):
        if v >= scale:
            return f"{v / scale:g} {unit}"
    return f"{v:g} FLOP/s"


def _gbps_tick(v: float) -> str:
    return f"{v:g} GB/s" if v >= 1 else f"{v * 1000:g} MB/s"


def gbps_axis(values: Sequence[float]) -> dict[str, Any]:
    """A log axis of GB/s with a labelled tick at each power of ten: a gap of 30x (a call
    at 3 % of NCCL) is as visible at 64 KiB as at 1 GiB, where a linear axis puts every
    small size on the axis line (Nsight Systems' and nccl-tests' plots of bandwidth by
    size are log-log for that reason)."""
    vals = [v for v in values if v and v > 0]
    if not vals:
        return {"type": "log"}
    return {"type": "log", **_decades(min(vals), max(vals), _gbps_tick)}


COLLECTIVE_COLORS = {"all_reduce": "#1f77b4", "all_gather": "#ff7f0e", "reduce_scatter": "#2ca02c",
                     "all_to_all": "#d62728", "broadcast": "#9467bd", "reduce": "#8c564b", "sendrecv": "#e377c2",
                     "gather": "#7f7f7f", "scatter": "#bcbd22", "all_to_allv": "#17becf"}
DTYPE_SYMBOLS = {"": "circle", "bf16": "square", "fp16": "diamond", "fp8": "triangle-up", "int8": "x"}


def size_axis(sizes: Sequence[float]) -> dict[str, Any]:
    """A log axis of message sizes with binary tick labels (4 KiB, 1 MiB, 1 GiB) at
    every power of 4 covered, never '1B' for 10^9 bytes."""
    sizes = [s for s in sizes if s and s > 0]
    if not sizes:
        return {"type": "log"}
    lo, hi = math.floor(math.log2(min(sizes))), math.ceil(math.log2(max(sizes)))
    vals = [2 ** k for k in range(lo - lo % 2, hi + 1, 2)]
    return {"type": "log", "tickvals": vals, "ticktext": [format_size(v) for v in vals]}


def _link_roof(model: MachineModel, kind: str) -> tuple[str, Any] | None:
    """The link class the roofline is drawn against (NVLink where there is one) and its
    best roof of that kind, over every mechanism."""
    for link in ("nvlink", "pcie_peer", "network", "host"):
        roof = model.find(f"link:{link}", kind)
        if roof is not None and known(roof.value) and roof.value > 0:
            return link, roof
    return None


def roofline_figure(model: MachineModel, placements: Sequence[Placement] = (), dtypes: Sequence[str] = ("fp16", "bf16",
                    "fp32", "fp64", "fp8"), intensity_range: tuple[float, float] = (1e-1, 1e5)) -> go.Figure:
    """The communication-aware roofline: attainable FLOP/s against FLOP per link byte.
    One colour per data type; each roof bends at its ridge point (compute rate over the
    link's bandwidth), spec dashed and measured solid, with the ridge marked; the other
    link classes as grey slopes; placed workloads as labelled points."""
    fig = go.Figure()
    lo, hi = intensity_range
    tops = []
    ridges: list[tuple[float, float, str]] = []
    for kind, dash in (("spec", "dash"), ("measured", "solid")):
        link_roof = _link_roof(model, kind)
        for dt in dtypes:
            comp = model.compute(dt, kind)
            borrowed = False
            if comp is None and kind == "measured" and link_roof is not None:
                comp, borrowed = model.compute(dt, "spec"), True  # an import: a measured link under spec compute
            if comp is None or not known(comp.value):
                continue
            tops.append(comp.value)
            if link_roof is None:
                xs, ys = [lo, hi], [comp.value, comp.value]
                label = f"{dt} {kind}: {_tf(comp.value)}"
            else:
                link, lr = link_roof
                ridge = comp.value / lr.value
                xs = [lo, min(max(ridge, lo), hi), hi]
                ys = [lo * lr.value if ridge > lo else comp.value, comp.value, comp.value]
                inferred = " (NVLink inferred from the figures)" if "NVLink inferred" in lr.basis else ""
                label = (f"{dt}: spec compute {_tf(comp.value)} | {LINK_NAMES[link]} measured {_gb(lr.value)}"
                         f"{inferred}" if borrowed else
                         f"{dt} {kind}: {_tf(comp.value)} | {LINK_NAMES[link]} {_gb(lr.value)}{inferred}")
                if lo < ridge < hi:
                    ridges.append((ridge, comp.value, f"{dt} {kind} ridge: {ridge:,.0f} FLOP per {LINK_NAMES[link]} "
                                                      f"byte"))
            fig.add_trace(go.Scatter(
                x=xs, y=ys, mode="lines", name=label, legendgroup=dt,
                line={"dash": dash, "width": 2 if kind == "measured" else 1.5, "color": DTYPE_COLORS.get(dt)},
                hovertemplate=f"{label}<br>%{{x:.3~s}} FLOP/B -> %{{y:.3~s}}FLOP/s<extra>{comp.basis[:80]}</extra>"))
    if not tops:
        raise ValueError("this model has no compute ceiling to draw")
    top = max(tops)
    main = _link_roof(model, "measured")
    for link in ("pcie_peer", "host", "network"):
        roof = model.find(f"link:{link}", "measured")
        if roof is None or (main is not None and main[0] == link):
            continue
        xs = [lo, min(hi, top / roof.value)]
        fig.add_trace(go.Scatter(x=xs, y=[x * roof.value for x in xs], mode="lines",
                                 name=f"{LINK_NAMES[link]} measured: {_gb(roof.value)}",
                                 line={"dash": "dot", "color": "#999", "width": 1},
                                 hovertemplate=f"{LINK_NAMES[link]} {_gb(roof.value)}<extra></extra>"))
    if ridges:
        fig.add_trace(go.Scatter(x=[r[0] for r in ridges], y=[r[1] for r in ridges], mode="markers",
                                 name="ridge points", marker={"symbol": "circle-open", "size": 9, "color": "#333"},
                                 text=[r[2] for r in ridges], hovertemplate="%{text}<extra></extra>"))
    pts = [p for p in placements if p.workload.flops and sum(p.workload.link_bytes.values())]
    if pts:
        x = [sum(p.workload.flops.values()) / sum(p.workload.link_bytes.values()) for p in pts]
        y = [sum(p.workload.flops.values()) / p.measured_time_s for p in pts]
        detail = [f"{p.workload.name}<br>time {format_time(p.measured_time_s)}, bound {format_time(p.bound_time_s)}"
                  f"<br>limiter {p.limiter}<br>{p.fraction_of_roofline:.0%} of roofline ({p.ceilings_kind})"
                  for p in pts]
        labels = [f"{p.workload.name[:28]} ({p.fraction_of_roofline:.0%})" for p in pts]
        fig.add_trace(go.Scatter(x=x, y=y, mode="markers+text", name="placed workloads", text=labels,
                                 textposition="top center", customdata=detail,
                                 marker={"size": 11, "symbol": "diamond", "color": "black"},
                                 hovertemplate="%{customdata}<extra></extra>"))
    link_name = LINK_NAMES[main[0]] if main else "link"
    y_lo, y_hi = math.log10(top) - 4, math.log10(top) + 0.3
    fig.update_xaxes(type="log", title=f"FLOP per {link_name} byte (per GPU)",
                     **_decades(lo, hi, lambda v: f"{v:,g}"))
    fig.update_yaxes(type="log", title="FLOP/s", range=[y_lo, y_hi],
                     **_decades(10 ** y_lo, 10 ** y_hi, _flops_tick))
    fig.update_layout(title=f"Communication-aware roofline: {model.gpu_name}", template="plotly_white",
                      legend={"font": {"size": 10}}, height=600)
    return fig


LIMITER_COLORS = {"compute": "#2ca02c", "memory": "#ff7f0e", "latency": "#7f7f7f", "link": "#1f77b4"}


def hbm_roofline_figure(model: MachineModel, placements: Sequence[Placement] = (),
                        dtypes: Sequence[str] = ("fp8", "bf16", "fp16", "tf32", "fp32", "fp64"),
                        intensity_range: tuple[float, float] = (1e-2, 1e4)) -> go.Figure:
    """The classic roofline, every placement on it: attainable FLOP/s against FLOP per
    HBM byte, the HBM roof measured (solid) and spec (dashed), a compute roof per data
    type (measured solid, spec dashed), each roof labelled on the plot. Every placed
    kernel or call with FLOPs and HBM bytes is a dot at its intensity and achieved
    FLOP/s: its size the measured time, its colour its limiter; hovering gives the time,
    the fractions of roofline and cost bound, the limiter and the first verdict.
    (Intel Advisor and Nsight Compute draw the same: roofs as lines, kernels as dots
    sized by time.)"""
    fig = go.Figure()
    lo, hi = intensity_range
    hbm = {k: model.hbm(k) for k in ("measured", "spec")}
    tops: list[float] = []
    labels: list[tuple[float, str]] = []
    for kind, dash in (("spec", "dash"), ("measured", "solid")):
        h = hbm.get(kind)
        for dt in dtypes:
            comp = model.compute(dt, kind)
            if comp is None or not known(comp.value):
                continue
            tops.append(comp.value)
            if h is None or not known(h.value):
                continue
            ridge = comp.value / h.value
            xs = [lo, min(max(ridge, lo), hi), hi]
            ys = [lo * h.value if ridge > lo else comp.value, comp.value, comp.value]
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=f"{dt} {kind}", legendgroup=dt,
                                     line={"dash": dash, "width": 2 if kind == "measured" else 1.2,
                                           "color": DTYPE_COLORS.get(dt)},
                                     hovertemplate=f"{dt} {kind}: {_tf(comp.value)}, ridge {ridge:,.0f} FLOP/B"
                                                   f"<extra></extra>"))
            if kind == "measured":
                labels.append((comp.value, f"{dt} {comp.value / 1e12:,.0f}"))
    if not tops:
        raise ValueError("this model has no compute ceiling to draw")
    # the roofs named where they are, not only in the legend (beside the plot, at each
    # roof's height, where no dot can hide them), the measured HBM roof on its slope
    label_roofs(fig, labels, " TFLOP/s (measured)")
    h = hbm.get("measured") or hbm.get("spec")
    if h is not None and known(h.value):
        x = lo * 10
        fig.add_annotation(x=math.log10(x), y=math.log10(x * h.value), text=f"HBM {h.kind} {_gb(h.value)}",
                           showarrow=False, textangle=-28, yanchor="bottom", font={"size": 10, "color": "#d62728"})
    pts = [p for p in placements if p.workload.flops and p.workload.hbm_bytes and p.measured_time_s > 0]
    if pts:
        size = _time_sizes([p.measured_time_s for p in pts], 8, 30)

        by: dict[tuple[str, bool], list[Placement]] = {}
        for p in pts:  # calls as circles, kernels placed from ncu's counters (compare --counters) as squares
            by.setdefault((p.limiter.split(":")[0], p.workload.source.startswith("counters")), []).append(p)
        for (lim, kernel), group in sorted(by.items()):
            fig.add_trace(go.Scatter(
                x=[sum(p.workload.flops.values()) / p.workload.hbm_bytes for p in group],
                y=[sum(p.workload.flops.values()) / p.measured_time_s for p in group], mode="markers",
                name=f"{'kernel (ncu)' if kernel else 'placed'}: {lim}-bound",
                marker={"size": [size(p.measured_time_s) for p in group], "symbol": "square" if kernel else "circle",
                        "color": LIMITER_COLORS.get(lim, "#333"), "opacity": 0.85,
                        "line": {"color": "black", "width": 1}},
                customdata=[_placement_hover(p) for p in group], hovertemplate="%{customdata}<extra></extra>"))
    kernel_dots(fig, model, placements)
    top = max(tops)
    y_lo, y_hi = math.log10(top) - 5, math.log10(top) + 0.3
    fig.update_xaxes(type="log", title="FLOP per HBM byte", **_decades(lo, hi, lambda v: f"{v:,g}"))
    fig.update_yaxes(type="log", title="FLOP/s", range=[y_lo, y_hi], **_decades(10 ** y_lo, 10 ** y_hi, _flops_tick))
    fig.update_layout(title=f"Roofline (HBM): {model.gpu_name}; dots are placed kernels and calls, sized by time",
                      template="plotly_white", height=680, legend={"groupclick": "togglegroup", "font": {"size": 10}})
    return fig


def counted_kernels(placements: Sequence[Placement]) -> list[tuple[Placement, Any, float, float, str]]:
    """(placement, kernel, FLOPs per call, DRAM bytes per call, main data type) for every
    kernel Nsight Compute counted with both FLOPs and DRAM bytes in a call's timeline,
    except those compare --counters placed as workloads of their own (drawn as such)."""
    out = []
    placed = {p.workload.name for p in placements if p.workload.source.startswith("counters")}  # already dots of their own
    for p in placements:
        for k in (p.timeline.kernels if p.timeline is not None else ()):
            if f"{p.workload.name} / {short_name(k.name)}" in placed:
                continue
            c = k.counters or {}
            flops = {key.split(":", 1)[1]: v for key, v in c.items() if key.startswith("flops:") and v > 0}
            dram = c.get("dram_read_bytes", 0.0) + c.get("dram_write_bytes", 0.0)
            if flops and dram > 0 and k.time_per_call_s > 0:
                out.append((p, k, sum(flops.values()), dram, max(flops, key=flops.get)))
    return out


def kernel_dots(fig: go.Figure, model: MachineModel, placements: Sequence[Placement]) -> None:
    """Each counted kernel a dot on the HBM roofline (open circle, black edge): its FLOPs
    over its DRAM bytes as ncu counted them, at its measured time per call; hovering
    gives the time, its fraction of the roof at its intensity, the limiter there and
    ncu's one-line why."""
    ks = counted_kernels(placements)
    if not ks:
        return
    size = _time_sizes([k.time_per_call_s for _, k, _, _, _ in ks])
    xs, ys, text = [], [], []
    for p, k, flops, dram, dtype in ks:
        x, y = flops / dram, flops / k.time_per_call_s
        comp, hbm = model.compute(dtype) or model.compute(dtype, "spec"), model.hbm() or model.hbm("spec")
        roof_at = min(comp.value if comp else math.inf, hbm.value * x if hbm else math.inf)
        limiter = ("memory" if hbm and comp and hbm.value * x < comp.value else "compute") if comp or hbm else "?"
        frac = f"{y / roof_at:.0%} of the roof at this intensity ({limiter}-bound there)" \
            if roof_at < math.inf else "no roof for its data type"
        xs.append(x), ys.append(y)
        text.append(f"{short_name(k.name)[:60]} (in {p.workload.name[:40]})<br>measured "
                    f"{format_time(k.time_per_call_s)} per call, {dtype}, {x:,.1f} FLOP/B (ncu)<br>{frac}"
                    + (f"<br>{k.why[:140]}" if k.why else ""))
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="markers", name="kernels (ncu counters)", customdata=text,
                             marker={"size": [size(k.time_per_call_s) for _, k, _, _, _ in ks], "color": "white",
                                     "symbol": "circle", "line": {"color": "black", "width": 1.5}},
                             hovertemplate="%{customdata}<extra></extra>"))


def label_roofs(fig: go.Figure, labels: Sequence[tuple[float, str]], suffix: str = "") -> None:
    """Name each roof at its height to the right of the plot (a log y axis), one label per
    height (roofs within 15 % of each other share one), and move the legend under the
    plot to make room: roofs read on the plot, and no dot or curve covers their names."""
    left = sorted(labels, reverse=True)
    while left:
        v, _ = left[0]
        same = [t for w, t in left if w >= v / 1.15]
        left = [(w, t) for w, t in left if w < v / 1.15]
        fig.add_annotation(xref="paper", x=1.0, xanchor="left", y=math.log10(v), yanchor="middle",
                           text=(" / " if len(" / ".join(same) + suffix) <= 44 else "<br>").join(same) + suffix,
                           showarrow=False, font={"size": 10}, align="left")
    fig.update_layout(margin={"r": 230}, legend={"orientation": "h", "yanchor": "top", "y": -0.18, "x": 0})


def _placement_hover(p: Placement) -> str:
    cost = f", {p.fraction_of_cost_bound:.0%} of the cost bound" if p.cost_bound_s else ""
    why = f"<br>{p.verdicts[0][:120]}" if p.verdicts else ""
    return (f"{p.workload.name[:60]}<br>measured {format_time(p.measured_time_s)}: {p.fraction_of_roofline:.0%} of "
            f"the roofline{cost}<br>limiter {p.limiter}{why}")


def _time_sizes(times: Sequence[float], smallest: float = 7, largest: float = 26) -> Any:
    """Marker size from a time, `smallest` to `largest` px by the log of the time over
    the dots given (the longest call is the largest dot)."""
    ts = [t for t in times if t and t > 0]
    lo, hi = (min(ts), max(ts)) if ts else (1.0, 1.0)

    def size(t: float) -> float:
        return smallest + ((largest - smallest) * math.log(t / lo) / math.log(hi / lo) if hi > lo and t > 0 else 0)
    return size


COPY_MECHANISMS = ("ce", "sm", "tma")


def _copy_roof(model: MachineModel) -> Any:
    """The communication roof by message size: the best copy mechanism's measured
    bandwidth (interpolated between swept sizes) over the NVLink curves, with its name;
    None where nothing was swept."""
    curves = [c for c in model.curves if c.link == "nvlink" and c.mechanism in COPY_MECHANISMS and len(c.points) >= 4
              and not c.variant]
    if not curves:
        return None

    def at(size: float) -> tuple[float, str]:
        best = max(curves, key=lambda c: c.at(int(size)))
        return best.at(int(size)), f"{MECHANISM_NAMES.get(best.mechanism, best.mechanism)} {best.pattern}"
    return at, curves


def _half_size(curves: Sequence[Any]) -> int | None:
    sizes = [c.reaches(0.5) for c in curves]
    return min((s for s in sizes if s), default=None)


def bandwidth_roofline_figure(model: MachineModel, placements: Sequence[Placement] = (), profile: Any = None,
                              trace_report: Any = None) -> go.Figure:
    """The communication roofline, everything that moves data between GPUs on it: link
    bandwidth per GPU against message size (collectives carry no FLOPs worth an
    intensity axis, so their size is the x axis here). The roofs are the copy
    mechanisms' measured curves (copy engine, SM, TMA: solid, one colour each) and the
    NVLink spec (dashed), each named on the plot. The dots: every NCCL baseline the
    profile measured (bus bandwidth, one colour per collective), every placed
    communication workload, and every call of a loaded trace, each sized by its time;
    hovering gives the time, the fraction of the roof at that size, the limiter
    (latency below the best mechanism's 50 % size, else the link) and why."""
    fig = go.Figure()
    roof = _copy_roof(model)
    curves = roof[1] if roof else []
    for c in curves:
        sizes, bws = zip(*sorted(c.points))
        fig.add_trace(go.Scatter(x=sizes, y=[gbps(b) for b in bws], mode="lines", legendgroup="roofs",
                                 legendgrouptitle_text="roofs (measured)" if c is curves[0] else None,
                                 name=f"{curve_name(c)} (peak {_gb(c.peak())})",
                                 line={"width": 2, "color": MECHANISM_COLORS.get(c.mechanism),
                                       "dash": PATTERN_DASH.get(c.pattern, "solid")},
                                 hovertemplate=f"{curve_name(c)}: %{{x}} B -> %{{y:.1f}} GB/s<extra></extra>"))
    swept = {c.mechanism for c in curves}
    span = [4096, 1 << 30]
    for r in model.roofs:  # mechanisms measured at one size only (an nvbandwidth import): their ceiling, flat
        if r.resource == "link:nvlink" and r.kind == "measured" and r.mechanism in COPY_MECHANISMS \
                and r.mechanism not in swept and known(r.value):
            inferred = ", NVLink inferred" if "NVLink inferred" in r.basis else ""
            fig.add_trace(go.Scatter(x=span, y=[gbps(r.value)] * 2, mode="lines", legendgroup="roofs",
                                     name=f"{r.mechanism} measured ceiling {_gb(r.value)} (one size{inferred})",
                                     line={"width": 1.5, "dash": "dot", "color": MECHANISM_COLORS.get(r.mechanism)}))
    spec = model.find("link:nvlink", "spec")
    named = []
    if spec is not None and known(spec.value):
        fig.add_hline(y=gbps(spec.value), line_dash="dash")
        named.append((gbps(spec.value), f"NVLink spec {_gb(spec.value)}"))
    if curves:  # the measured roof named on the plot, at its height
        best = max(curves, key=lambda c: c.peak())
        named.append((gbps(best.peak()), f"{MECHANISM_NAMES.get(best.mechanism, best.mechanism)} {_gb(best.peak())} "
                                         "(measured)"))
    label_roofs(fig, named)
    half = _half_size(curves)

    def judged(size: float, bw: float) -> tuple[str, str]:
        """(fraction of the roof at this size, limiter and why) for a point at `size` moving `bw` B/s."""
        if roof is None or size <= 0:
            return "no copy roof swept", "limiter unknown (no NVLink sweep in this profile)"
        top, name = roof[0](size)
        frac = f"{bw / top:.0%} of the best copy roof here ({name}, {_gb(top)})" if top > 0 else "roof unknown"
        if half and size < half:
            why = (f"latency-bound: below {format_size(half)}, where the best mechanism reaches half its peak, "
                   "a call's fixed cost dominates")
        else:
            why = "link-bound: above the best mechanism's half-peak size, bytes over the link dominate"
        return frac, why

    dots: list[tuple[str, dict, list]] = []  # (legend group, trace args, times) drawn after sizes are known
    if profile is not None:
        by: dict[str, list[Any]] = {}
        for m in profile.measurements:
            if m.spec.mechanism != "nccl" or m.spec.params.get("in_place") or \
                    m.spec.params.get("rank_time") == "this rank" or m.spec.params.get("timing") == "host_launch":
                continue
            bw = m.busbw_bytes_per_s
            if bw == bw and bw > 0 and m.spec.message_bytes:
                dtype = str(m.spec.params.get("dtype") or "")
                by.setdefault(f"{m.spec.pattern}{' ' + dtype if dtype else ''} ({m.source})", []).append(m)
        for name, ms in sorted(by.items()):
            coll = ms[0].spec.pattern
            text = []
            for m in ms:
                frac, why = judged(m.spec.message_bytes, m.busbw_bytes_per_s)
                text.append(f"NCCL {name}, {format_size(m.spec.message_bytes)}<br>measured {format_time(m.median_s)}"
                            f", busbw {_gb(m.busbw_bytes_per_s)}<br>{frac}<br>{why}")
            dots.append(("nccl", dict(x=[m.spec.message_bytes for m in ms], y=[gbps(m.busbw_bytes_per_s) for m in ms],
                                      name=f"NCCL {name}", customdata=text, legendgroup=f"nccl {coll}",
                                      marker={"color": COLLECTIVE_COLORS.get(coll, "#7f7f7f"), "opacity": 0.75,
                                              "symbol": "circle"}),
                         [m.median_s for m in ms]))
    pts = [p for p in placements if not p.workload.flops and p.workload.message_bytes
           and p.workload.link_bytes.get("nvlink") and p.measured_time_s > 0]
    if pts:
        text = []
        for p in pts:
            bw = p.workload.link_bytes["nvlink"] / p.measured_time_s
            frac, why = judged(p.workload.message_bytes, bw)
            text.append(f"{_placement_hover(p)}<br>{frac}<br>{why}")
        dots.append(("placed", dict(x=[p.workload.message_bytes for p in pts],
                                    y=[gbps(p.workload.link_bytes["nvlink"] / p.measured_time_s) for p in pts],
                                    name="placed: communication", customdata=text, legendgroup="placed",
                                    marker={"color": "black", "symbol": "diamond"}), [p.measured_time_s for p in pts]))
    if trace_report is not None:
        for name, rs in sorted(trace_call_groups(trace_report).items()):
            rs = rs[:TRACE_CALLS_DRAWN]
            text = []
            for r in rs:
                frac, why = judged(r.call.size_bytes, r.call.busbw)
                nccl = f"{r.fraction_of_nccl:.0%} of NCCL here" if r.fraction_of_nccl else "no NCCL figure here"
                text.append(f"trace call {name}, rank {r.call.rank}, {format_size(r.call.size_bytes)}<br>measured "
                            f"{format_time(r.call.duration_s)}, busbw {_gb(r.call.busbw)}, {nccl}<br>{frac}<br>{why}")
            dots.append(("trace", dict(x=[r.call.size_bytes for r in rs], y=[gbps(r.call.busbw) for r in rs],
                                       name=f"trace: {name}", customdata=text, legendgroup=f"trace {name}",
                                       marker={"color": COLLECTIVE_COLORS.get(rs[0].call.collective, "#7f7f7f"),
                                               "symbol": "diamond", "line": {"color": "black", "width": 1}}),
                         [r.call.duration_s for r in rs]))
    size = _time_sizes([t for _, _, ts in dots for t in ts])
    for _, args, ts in dots:
        args["marker"]["size"] = [size(t) for t in ts]
        fig.add_trace(go.Scatter(mode="markers", hovertemplate="%{customdata}<extra></extra>", **args))
    fig.update_xaxes(title="message size (bytes)", **size_axis([x for t in fig.data for x in (t.x or ()) if x]))
    fig.update_yaxes(title="link bandwidth per GPU (GB/s; bus bandwidth for collectives)",
                     **gbps_axis([y for t in fig.data for y in (t.y or ())]
                                 + ([gbps(spec.value)] if spec is not None and known(spec.value) else [])))
    what = [w for w, k in (("NCCL baselines", "nccl"), ("placed calls", "placed"), ("trace calls", "trace"))
            if any(d[0] == k for d in dots)]
    fig.update_layout(title="Communication roofline (log-log): " + (", ".join(what) + " as dots sized by time, "
                      if what else "") + "under the copy mechanisms' measured roofs",
                      template="plotly_white", height=720, legend={"groupclick": "togglegroup", "font": {"size": 10}})
    return fig


MECHANISM_COLORS = {"ce": "#1f77b4", "sm": "#ff7f0e", "tma": "#2ca02c", "red": "#d62728", "tma_red": "#9467bd",
                    "nccl": "#8c564b"}
MECHANISM_NAMES = {"ce": "copy engine", "sm": "SM loads / stores", "tma": "TMA", "red": "SM reductions",
                   "tma_red": "TMA reductions"}
PATTERN_DASH = {"p2p_read": "solid", "p2p_write": "dash", "bidir": "dot"}


def curve_name(c: Any) -> str:
    """One legend entry per curve: mechanism (with its variant), pattern, and the link
    where it is not NVLink."""
    return f"{c.label} {c.pattern}" + (f" ({LINK_NAMES.get(c.link, c.link)})" if c.link != "nvlink" else "")


def bandwidth_sweep_figure(model: MachineModel, pattern: str | None = None) -> go.Figure:
    """Bandwidth against message size per copy mechanism (collectives have their own
    page): one colour per mechanism, one dash per direction, a variant (ungated, staged)
    with open markers; each curve's 90 % size marked in its colour."""
    fig = go.Figure()
    titled: set[str] = set()
    for c in model.curves:
        if (pattern and c.pattern != pattern) or c.link not in ("nvlink", "pcie_peer") or len(c.points) < 4 \
                or c.mechanism == "nccl":
            continue
        sizes, bws = zip(*c.points)
        name = curve_name(c)
        color = MECHANISM_COLORS.get(c.mechanism, "#7f7f7f")
        group = {"legendgroup": c.mechanism}  # one click on the group's title toggles a mechanism's curves
        if c.mechanism not in titled:
            titled.add(c.mechanism)
            group["legendgrouptitle_text"] = MECHANISM_NAMES.get(c.mechanism, c.mechanism)
        fig.add_trace(go.Scatter(x=sizes, y=[gbps(b) for b in bws], mode="lines+markers", name=name,
                                 **group, line={"color": color, "dash": PATTERN_DASH.get(c.pattern, "solid")},
                                 marker={"color": color, "size": 5,
                                         "symbol": "circle-open" if c.variant else "circle"},
                                 hovertemplate=f"{name}<br>%{{x}} B: %{{y:.1f}} GB/s<extra></extra>"))
        s90 = c.reaches(0.9)
        if s90:
            fig.add_trace(go.Scatter(x=[s90], y=[gbps(c.at(s90))], mode="markers", showlegend=False,
                                     legendgroup=c.mechanism, marker={"symbol": "x", "size": 10, "color": color},
                                     hovertemplate=f"{name}: 90% of peak at %{{x}} B<extra></extra>"))
    spec = model.find("link:nvlink", "spec")
    if spec is not None and known(spec.value):
        fig.add_hline(y=gbps(spec.value), line_dash="dash", annotation_text=f"NVLink spec {_gb(spec.value)}")
    fig.update_xaxes(title="message size (bytes)", **size_axis([x for t in fig.data for x in (t.x or ()) if x]))
    fig.update_yaxes(title="GB/s", **gbps_axis([y for t in fig.data for y in (t.y or ())]
                                               + ([gbps(spec.value)] if spec is not None and known(spec.value) else [])))
    fig.update_layout(title="Bandwidth by message size and mechanism (log-log)", template="plotly_white", height=500,
                      legend={"groupclick": "togglegroup"})
    return fig


# ---------------------------------------------------------------- dashboard pages

def headline_figure(rows: list[dict]) -> go.Figure:
    """Each headline figure as a percentage of its spec ceiling."""
    rows = [r for r in rows if r.get("percent_of_spec") is not None]
    fig = go.Figure(go.Bar(x=[r["percent_of_spec"] for r in rows], y=[r["figure"] for r in rows], orientation="h",
                           text=[f"{r['measured']} / {r['spec']} {r['unit']}" for r in rows], textposition="auto",
                           hovertemplate="%{y}: %{x:.1f}% of spec<extra></extra>"))
    fig.update_xaxes(range=[0, max([110.0] + [r["percent_of_spec"] + 5 for r in rows])], title="% of spec")
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(title="Measured as % of spec", template="plotly_white", height=max(220, 120 + 28 * len(rows)),
                      margin={"l": 200})
    return fig


def imported_topology_figure(topo, profile=None) -> go.Figure:
    """An imported tool's topology: its GPUs, and between each pair the link as far as
    the figures tell (NVLink where a figure is faster than any PCIe x16 link, inferred
    and drawn dashed), else unknown (dotted). No CPU, NUMA or NIC is drawn: the output
    does not name them."""
    from ..roofline.model import infer_nvlink

    n = len(topo.gpus)
    gx = {g.index: i - (n - 1) / 2 for i, g in enumerate(topo.gpus)}
    inferred = bool(profile is not None and infer_nvlink(topo, profile.measurements))
    kind = "NVLink (inferred from the figures)" if inferred else "link unknown (not in the imported output)"
    xs: list = []
    ys: list = []
    for a in topo.gpus:
        for b in topo.gpus:
            if a.index < b.index:
                xs += [gx[a.index], gx[b.index], None]
                ys += [0, 0.35 * abs(gx[b.index] - gx[a.index]) ** 0.5, None] if n > 2 else [0, 0, None]
    fig = go.Figure()
    if xs:
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=kind, hoverinfo="skip",
                                 line={"width": 2.5, "dash": "dash" if inferred else "dot",
                                       "color": "#76b900" if inferred else "#999"}))
    fig.add_trace(go.Scatter(x=[gx[g.index] for g in topo.gpus], y=[0] * n, mode="markers+text", name="GPU",
                             text=[g.label for g in topo.gpus], textposition="bottom center",
                             hovertext=[f"{g.label}<br>{g.name}<br>{g.pci_bus_id}" for g in topo.gpus],
                             hoverinfo="text", customdata=[f"gpu:{g.index}" for g in topo.gpus],
                             marker={"size": 26, "symbol": "square"}))
    fig.add_annotation(text=f"From {topo.source}: the output names its GPUs only; how they connect to each other, "
                            "CPUs, NUMA nodes and NICs is unknown", showarrow=False, x=0, y=-1.2, font={"size": 11})
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False, range=[-1.6, 1.4])
    fig.update_layout(title=f"Topology of {topo.host.hostname} (imported: links unknown)", template="plotly_white",
                      height=420, clickmode="event")
    return fig


def topology_figure(topo, profile=None) -> go.Figure:
    """GPUs, NVSwitch, host bridges / CPUs / NUMA nodes and NICs; edges by link type,
    NVLink edges sized by each GPU's measured NVLink bandwidth when the profile has it.
    An imported topology, which does not say how anything is linked, is drawn as such."""
    if not topo.links_known:
        return imported_topology_figure(topo, profile)
    n = len(topo.gpus)
    gx = {g.index: i - (n - 1) / 2 for i, g in enumerate(topo.gpus)}
    nodes_x, nodes_y, labels, kinds, custom = [], [], [], [], []
    edges: dict[str, tuple[list, list, float]] = {}

    def edge(kind: str, x0: float, y0: float, x1: float, y1: float, width: float = 2.0) -> None:
        xs, ys, w = edges.setdefault(f"{kind}|{width:.1f}", ([], [], width))
        xs += [x0, x1, None]
        ys += [y0, y1, None]

    for g in topo.gpus:
        nodes_x.append(gx[g.index])
        nodes_y.append(0)
        labels.append(f"GPU{g.index}<br>{g.name}")
        kinds.append("GPU")
        custom.append(f"gpu:{g.index}")
    switched = [g for g in topo.gpus if any(link.remote_type == "switch" for link in g.active_nvlinks)]
    if switched:
        nodes_x.append(0)
        nodes_y.append(1.2)
        labels.append("NVSwitch fabric")
        kinds.append("NVSwitch")
        custom.append("switch")
        best: dict[int, float] = {}
        if profile is not None:  # one pass: each GPU's best measured peer bandwidth as a source
            for m in profile.measurements:
                if m.trusted and m.spec.pattern in ("p2p_write", "p2p_read") and m.spec.devices \
                        and "parts" not in m.spec.params:
                    src = m.spec.devices[0]
                    best[src] = max(best.get(src, 0.0), m.bandwidth_bytes_per_s)
        top = max([v for v in best.values() if v] or [1.0])
        for g in switched:
            width = float(round(2 + 6 * best.get(g.index, 0.0) / top))  # a few widths: a few traces
            edge(f"NVLink x{len(g.active_nvlinks)}", gx[g.index], 0, 0, 1.2, width)
    for p in topo.pairs:
        if p.a < p.b and p.nvlink_via == "direct":
            edge(f"NVLink x{p.nvlink_count} (direct)", gx[p.a], 0, gx[p.b], 0, 3)
    numa = sorted({g.numa_affinity for g in topo.gpus if known(g.numa_affinity)}) or [None]
    cpu_x = {node: (i - (len(numa) - 1) / 2) * max(2.0, n / max(1, len(numa))) for i, node in enumerate(numa)}
    for node, x in cpu_x.items():
        nodes_x.append(x)
        nodes_y.append(-1.6)
        labels.append(f"CPU / NUMA {node if node is not None else '?'}")
        kinds.append("CPU")
        custom.append(f"numa:{node}")
    # PCIe switches: GPUs at most a few bridges apart (PIX / PXB) hang off one switch
    parent = {g.index: g.index for g in topo.gpus}

    def find(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for p in topo.pairs:
        if p.pcie_level in ("PIX", "PXB"):
            parent[find(p.a)] = find(p.b)
    groups: dict[int, list[int]] = {}
    for g in topo.gpus:
        groups.setdefault(find(g.index), []).append(g.index)
    switch_of: dict[int, tuple[float, float]] = {}
    for k, members in enumerate(sorted(v for v in groups.values() if len(v) > 1)):
        x = sum(gx[i] for i in members) / len(members)
        nodes_x.append(x)
        nodes_y.append(-0.8)
        labels.append(f"PCIe switch {k}<br>GPUs {', '.join(map(str, members))}")
        kinds.append("PCIe switch")
        custom.append(f"pcie:{k}")
        for i in members:
            switch_of[i] = (x, -0.8)
            edge("PCIe", gx[i], 0, x, -0.8, 1.5)
        g0 = topo.gpus[members[0]]
        node = g0.numa_affinity if known(g0.numa_affinity) else None
        edge("PCIe", x, -0.8, cpu_x.get(node, 0.0), -1.6, 2.0)
    for g in topo.gpus:
        if g.index not in switch_of:
            node = g.numa_affinity if known(g.numa_affinity) else None
            edge("PCIe", gx[g.index], 0, cpu_x.get(node, 0.0), -1.6, 1.5)
    placed: dict[int | None, int] = {}
    for i, nic in enumerate(topo.nics):
        near = nic.nearest_gpu if known(nic.nearest_gpu) else None
        slot = placed.get(near, 0)
        placed[near] = slot + 1
        x = (gx.get(near, 0.0) if near is not None else 0.0) + 0.5 * slot  # side by side when they share a GPU
        nodes_x.append(x + 0.3)
        nodes_y.append(-1.15)
        labels.append(f"NIC{i} {nic.name}")
        kinds.append("NIC")
        custom.append(f"nic:{i}")
        if near is not None and near in gx:  # a nearest GPU the topology does not list draws no edge
            sx, sy = switch_of.get(near, (gx[near], 0)) if nic.level_to(near) == "PIX" else (gx[near], 0)
            edge("NIC to nearest GPU", x + 0.3, -1.15, sx, sy, 1.0)
    fig = go.Figure()
    styles = {"NVLink": "#76b900", "PCIe": "#1f77b4", "NIC": "#9467bd"}
    for key, (xs, ys, width) in edges.items():
        kind = key.split("|")[0]
        color = next((c for k, c in styles.items() if kind.startswith(k)), "#888")
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line={"width": width, "color": color}, name=kind,
                                 hoverinfo="skip", legendgroup=kind, showlegend=key.endswith(f"|{width:.1f}") and
                                 not any(t.name == kind for t in fig.data)))
    symbols = {"GPU": "square", "NVSwitch": "diamond", "PCIe switch": "triangle-down", "CPU": "hexagon",
               "NIC": "circle"}
    for kind in ("GPU", "NVSwitch", "PCIe switch", "CPU", "NIC"):
        idx = [i for i, k in enumerate(kinds) if k == kind]
        if not idx:
            continue
        fig.add_trace(go.Scatter(x=[nodes_x[i] for i in idx], y=[nodes_y[i] for i in idx], mode="markers+text",
                                 text=[labels[i].split("<br>")[0] for i in idx], textposition="bottom center",
                                 hovertext=[labels[i] for i in idx], hoverinfo="text",
                                 customdata=[custom[i] for i in idx], name=kind,
                                 marker={"size": 14 if kind in ("NIC", "PCIe switch") else 26,
                                         "symbol": symbols[kind]}))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False, range=[-2.1, 1.8])
    fig.update_layout(title=f"Topology of {topo.host.hostname}", template="plotly_white", height=460,
                      clickmode="event")
    return fig


def pair_matrix_figure(profile, pattern: str = "p2p_write", mechanism: str = "ce", relative: bool = False) -> go.Figure:
    """Heatmap of the best bandwidth per ordered pair (source row, destination column),
    absolute (GB/s) or as % of the pair's spec (its data rate: roofline.model.spec_basis,
    as every other "% of spec"). The colour scale runs from 0 to the spec (100 %), or to
    the largest figure where no spec is known: equal figures get equal colours."""
    from ..roofline.model import percent_of_spec, spec_basis

    topo = profile.topology
    n = len(topo.gpus)
    z = [[None] * n for _ in range(n)]
    for m in profile.measurements:
        if (m.spec.pattern == pattern and m.spec.mechanism == mechanism and len(m.spec.devices) == 2 and m.trusted
                and "parts" not in m.spec.params and not m.spec.params.get("sweep")):
            a, b = m.spec.devices
            if a < n and b < n:
                bw = m.bandwidth_bytes_per_s
                if relative:
                    try:
                        bw = percent_of_spec(bw, topo.ceiling(f"pair{min(a, b)}-{max(a, b)}"))
                    except KeyError:
                        bw = None
                else:
                    bw = gbps(bw)
                if bw is not None and (z[a][b] is None or bw > z[a][b]):
                    z[a][b] = bw
    labels = [f"GPU{g.index}" for g in topo.gpus]
    values = [v for row in z for v in row if v is not None]
    if relative:
        zmax = 100.0
    else:
        specs = [b[0] for c in topo.ceilings if c.name.startswith("pair") and (b := spec_basis(c))]
        zmax = gbps(max(specs)) if specs else (max(values) if values else 1.0)
    zmax = max([zmax] + values)
    fig = go.Figure(go.Heatmap(z=z, x=labels, y=labels, colorscale="Viridis", zmin=0, zmax=zmax,
                               texttemplate="%{z:.1f}" if n <= 16 else None,  # numbers in the cells
                               colorbar={"title": "% of spec" if relative else "GB/s"},
                               hovertemplate="%{y} -> %{x}: %{z:.1f}" + ("%" if relative else " GB/s") + "<extra></extra>"))
    fig.update_layout(title=f"{mechanism.upper()} {pattern} by pair ({'% of spec' if relative else 'GB/s'})",
                      template="plotly_white", height=460, yaxis={"autorange": "reversed", "title": "source"},
                      xaxis={"title": "destination"})
    return fig


def sm_sweep_figure(profile) -> go.Figure:
    """Bandwidth against the copy kernel's block count, per SM, TMA and reduction
    mechanism, with the fewest blocks reaching 90 % of each one's peak marked."""
    from ..roofline.summaries import saturation

    import plotly.colors

    palette = plotly.colors.qualitative.Plotly
    fig = go.Figure()
    for i, row in enumerate(saturation(profile)):
        key = f"{row['mechanism']} {row['pattern']}"
        color = palette[i % len(palette)]  # the star in its line's colour
        xs = list(row["points"])
        fig.add_trace(go.Scatter(x=xs, y=[gbps(v) for v in row["points"].values()], mode="lines+markers", name=key,
                                 legendgroup=key, line={"color": color}, marker={"color": color}))
        need = row["blocks_needed"]
        fig.add_trace(go.Scatter(x=[need], y=[gbps(row["points"][need])], mode="markers", showlegend=False,
                                 legendgroup=key, marker={"symbol": "star", "size": 12, "color": color},
                                 hovertext=f"{key}: {need} blocks reach {row['share']:.0%} of its peak "
                                           f"{_gb(row['peak'])}", hoverinfo="text"))
    fig.update_xaxes(type="log", title="blocks (thread blocks of the kernel)")
    fig.update_yaxes(title="GB/s")
    fig.update_layout(title="How many blocks saturate the link (star: 90 % of the mechanism's peak)",
                      template="plotly_white", height=420)
    return fig


def collectives_figure(profile, model: MachineModel | None = None) -> go.Figure:
    """busbw against message size per collective (out-of-place), linkroof's solid and
    imported nccl-tests dashed, with the NVLink ceilings."""
    fig = go.Figure()
    series: dict[tuple[str, str, str], dict[int, float]] = {}
    for m in profile.measurements:
        launch = m.spec.params.get("timing") == "host_launch"
        if m.spec.mechanism != "nccl" or m.spec.params.get("in_place") or \
                m.spec.params.get("rank_time") == "this rank" or (launch and m.source == "linkroof"):
            continue  # linkroof's: the GPU's time per call (the tables show the time with the host's launch too)
        bw = m.busbw_bytes_per_s
        dtype = str(m.spec.params.get("dtype") or "")
        dtype = "" if dtype in ("fp32", "float", "float32") else dtype  # fp32 unnamed: the usual baseline
        source = m.source + (", graph" if m.source != "linkroof" and m.spec.params.get("timing") == "device" else "")
        if bw == bw:
            series.setdefault((m.spec.pattern, dtype, source), {})[m.spec.message_bytes] = gbps(bw)
    titled: set[str] = set()
    for (coll, dtype, source), pts in sorted(series.items()):
        xs = sorted(pts)
        color = COLLECTIVE_COLORS.get(coll, "#7f7f7f")
        group = {"legendgroup": coll}  # a collective's data types and sources toggle together
        if coll not in titled:
            titled.add(coll)
            group["legendgrouptitle_text"] = coll
        fig.add_trace(go.Scatter(x=xs, y=[pts[x] for x in xs], mode="lines+markers",
                                 name=f"{coll}{' ' + dtype if dtype else ''} ({source})", **group,
                                 line={"dash": "dash" if source != "linkroof" else "solid", "color": color},
                                 marker={"color": color, "symbol": DTYPE_SYMBOLS.get(dtype, "circle-open"), "size": 5}))
    if model is not None:
        for kind in ("spec", "measured"):
            r = model.find("link:nvlink", kind)
            if r is not None:
                fig.add_hline(y=gbps(r.value), line_dash=DASH[kind],
                              annotation_text=f"NVLink {kind} {r.mechanism} {_gb(r.value)}")
    roofs = [gbps(r.value) for kind in ("spec", "measured") if model is not None
             for r in [model.find("link:nvlink", kind)] if r is not None and known(r.value)]
    fig.update_xaxes(title="message size (bytes)", **size_axis([x for t in fig.data for x in (t.x or ()) if x]))
    fig.update_yaxes(title="bus bandwidth (GB/s)", **gbps_axis([y for t in fig.data for y in (t.y or ())] + roofs))
    fig.update_layout(title="Collectives: bus bandwidth by size (log-log)", template="plotly_white", height=480,
                      legend={"groupclick": "togglegroup"})
    return fig


def speed_of_light_figure(placements: Sequence[Placement]) -> go.Figure:
    """Per workload: compute, memory and link time against the measured time."""
    fig = go.Figure()
    names = [p.workload.name for p in placements]
    for term in ("compute", "memory", "link:nvlink", "link:pcie_peer", "link:host", "link:network"):
        ys = [p.terms_s.get(term, 0.0) * 1e3 for p in placements]
        if any(ys):
            fig.add_trace(go.Bar(x=names, y=ys, name=f"{term} (bound)"))
    fig.add_trace(go.Scatter(x=names, y=[p.measured_time_s * 1e3 for p in placements], mode="markers",
                             name="measured", marker={"symbol": "line-ew-open", "size": 30, "line": {"width": 3}}))
    fig.update_layout(barmode="group", title="Speed of light: each resource's time against the measured time",
                      yaxis_title="ms", template="plotly_white", height=420)
    return fig


DECOMPOSITION_COLORS = {"launch": "#d62728", "sync": "#9467bd", "measured NCCL": "#1f77b4", "compute": "#2ca02c",
                        "memory": "#ff7f0e", "unexplained": "#bbbbbb"}


def decomposition_figure(placements: Sequence[Placement]) -> go.Figure:
    """Per placement with the cost model: its measured time as a stacked bar of the
    model's terms (launch, sync, the limiting resource or NCCL's own time, and what
    none explains), with the cost model's bound marked."""
    fig = go.Figure()
    # calls that share a name (a trace's many all-reduces of one size) are one bar: their
    # mean per call, said in the label; stacked as they were, they read as one call's time
    groups: dict[str, list[Placement]] = {}
    for p in placements:
        if p.decomposition_s:
            groups.setdefault(p.workload.name, []).append(p)
    names = [n if len(g) == 1 else f"{n} (mean of {len(g)} calls)" for n, g in groups.items()]

    def mean(value: Any) -> list[float]:
        return [sum(value(p) for p in g) / len(g) for g in groups.values()]

    terms: list[str] = []
    for g in groups.values():
        for p in g:
            terms += [k for k, v in p.decomposition_s.items() if v > 0 and k not in terms]
    for term in terms:  # parts are never negative (roofline.cost.decompose caps them)
        xs = mean(lambda p: p.decomposition_s.get(term, 0.0) * 1e6)
        fig.add_trace(go.Bar(y=names, x=xs, name=term, orientation="h",
                             marker={"color": DECOMPOSITION_COLORS.get(term, "#17becf" if term.startswith("link")
                                                                       else "#8c564b")},
                             hovertemplate=f"{term}: %{{x:.2f}} µs<extra></extra>"))
    fig.add_trace(go.Scatter(y=names, x=mean(lambda p: p.cost_bound_s * 1e6), mode="markers", name="cost-model bound",
                             marker={"symbol": "line-ns-open", "size": 24, "line": {"width": 3}, "color": "black"},
                             hovertemplate="cost-model bound: %{x:.2f} µs<extra></extra>"))
    fig.add_trace(go.Scatter(y=names, x=mean(lambda p: p.measured_time_s * 1e6), mode="markers", name="measured time",
                             marker={"symbol": "diamond", "size": 10, "color": "#d62728"},
                             text=["; ".join(g[0].verdicts) for g in groups.values()],
                             hovertemplate="measured: %{x:.2f} µs<br>%{text}<extra></extra>"))
    rows = list(groups)
    fig.update_layout(barmode="stack", title="Where the measured time went (cost-model terms, stacked)",
                      xaxis_title="µs per call", template="plotly_white", height=max(260, 90 + 60 * len(rows)))
    return fig


def fits_figure(fits: Sequence[Any]) -> go.Figure:
    """Time per message against size for each mechanism and collective: the measured
    points and the fitted latency + size / bandwidth segments, one colour each, with the
    worst error in the legend."""
    import plotly.colors

    palette = plotly.colors.qualitative.Dark24
    fig = go.Figure()
    sizes = []
    for i, f in enumerate(fits):
        color = palette[i % len(palette)]
        xs, ys = zip(*f.points)
        sizes += list(xs)
        label = f"{f.name} (worst {f.worst_error:.0%})"
        fig.add_trace(go.Scatter(x=xs, y=[t * 1e6 for t in ys], mode="markers", name=label, legendgroup=f.name,
                                 marker={"color": color, "size": 6},
                                 hovertemplate=f"{f.name}<br>%{{x}} B: %{{y:.3g}} us measured<extra></extra>"))
        for seg in f.segments:
            grid = [seg.lo * (seg.hi / seg.lo) ** (k / 20) for k in range(21)] if seg.hi > seg.lo else [seg.lo]
            fig.add_trace(go.Scatter(x=grid, y=[seg.time(x) * 1e6 for x in grid], mode="lines", showlegend=False,
                                     legendgroup=f.name, line={"color": color, "width": 1.5},
                                     hovertemplate=f"{f.name} fit: {seg.latency_s * 1e6:.2f} us + size / "
                                                   f"{_gb(seg.bandwidth_bytes_per_s)} (curve parameters, not the "
                                                   "link's latency or bandwidth)<extra></extra>"))
    times = [t * 1e6 for f in fits for _, t in f.points]
    fig.update_xaxes(title="message size (bytes)", **size_axis(sizes))
    fig.update_yaxes(type="log", title="time per message (µs; ticks in ns, us, ms)", **(_decades(min(times), max(times), _us_tick)
                                                               if times else {}))
    fig.update_layout(title="Fits of a + size / b: measured points and fitted segments (curve parameters, not link "
                            "properties)", template="plotly_white",
                      height=560, legend={"font": {"size": 10}})
    return fig


CLASS_COLORS = {"compute": "#2ca02c", "memory": "#ff7f0e", "communication": "#1f77b4", "transfer": "#9467bd",
                "other": "#7f7f7f"}


def timeline_figure(name: str, t: Any) -> go.Figure:
    """A call's measured GPU timeline (its first calls): one row per device and stream,
    each kernel, copy and memset a bar coloured by class; the gaps are the GPU idle."""
    fig = go.Figure()
    rows = sorted({(d, s) for d, s, _, _, _ in t.intervals})
    label = {r: f"GPU{r[0]} stream {r[1]}" for r in rows}
    for cls in ("compute", "memory", "communication", "transfer", "other"):
        mine = [iv for iv in t.intervals if iv[2] == cls]
        if not mine:
            continue
        fig.add_trace(go.Bar(y=[label[(d, s)] for d, s, _, _, _ in mine], x=[(e - b) / 1e3 for _, _, _, b, e in mine],
                             base=[b / 1e3 for _, _, _, b, _ in mine], orientation="h", name=cls,
                             marker={"color": CLASS_COLORS[cls]},
                             hovertemplate=f"{cls}: %{{base:.1f}} us + %{{x:.2f}} us<extra></extra>"))
    fig.update_layout(title=f"{name}: GPU timeline of the first recorded calls ({t.kernels_per_call:g} kernels a call, "
                            f"idle {t.idle_s / t.span_s:.0%} of it)" if t.span_s else f"{name}: no activity",
                      xaxis_title="us from the first call's start", barmode="overlay", template="plotly_white",
                      height=max(220, 120 + 40 * len(rows)))
    return fig


TRACE_BARS = 20000  # bars drawn per timeline view, over all rows: intervals closer than the view's resolution merge
TRACE_MARKS = 2000  # exposed-communication marks per view (the most exposed)
TRACE_CALLS_DRAWN = 5000  # beyond this many calls, the NCCL figure draws each size's median and spread


def _coalesced(spans: list[tuple[int, int, str]], gap: float) -> list[tuple[int, int, int, str]]:
    """Sorted (start, end, name) spans of one row and class merged where the gap between
    them is under `gap` ns: (start, end, how many, first name)."""
    out: list[list] = []
    for b, e, n in spans:
        if out and b - out[-1][1] < gap:
            out[-1][1] = max(out[-1][1], e)
            out[-1][2] += 1
        else:
            out.append([b, e, 1, n])
    return [tuple(x) for x in out]


def trace_timeline_figure(report: Any, window_us: tuple[float, float] | None = None) -> go.Figure:
    """A trace's GPU timeline: one row per rank, device and stream, each activity a bar
    coloured by class (a collective's is communication); a collective's exposed part
    (nothing else beside it on its GPU) is marked. Drawn at the view's resolution:
    activities closer than 1/N of the view (N = TRACE_BARS over the rows) merge into one
    bar that says how many it holds; `window_us` (from a zoom) redraws that part alone,
    every activity in it apart once the view is narrow enough."""
    from ..roofline.timeline import kernel_class

    fig = go.Figure()
    t0 = min((a.start_ns for t in report.traces for a in t.activities), default=0)
    t1 = max((a.end_ns for t in report.traces for a in t.activities), default=0)
    lo, hi = (t0, t1) if window_us is None else (t0 + window_us[0] * 1e3, t0 + window_us[1] * 1e3)
    spans: dict[tuple[str, str], list[tuple[int, int, str]]] = {}
    for t in report.traces:
        comm = t.comm_ids()
        for a in t.activities:
            if a.end_ns < lo or a.start_ns > hi:
                continue
            cls = "communication" if id(a) in comm else kernel_class(a)[0]
            row = f"rank {t.rank if t.rank is not None else '?'} GPU{a.device} stream {a.stream}"
            spans.setdefault((row, cls), []).append((a.start_ns, a.end_ns, a.name[:80]))
    rows = {r for r, _ in spans}
    gap = max(1.0, (hi - lo) / max(50, TRACE_BARS // max(1, len(rows))))
    bars: dict[str, list] = {}
    merged = 0
    for (row, cls), sp in spans.items():
        sp.sort()
        for b, e, k, n in _coalesced(sp, gap):
            merged += k > 1
            bars.setdefault(cls, []).append((row, (b - t0) / 1e3, max(e - b, 1) / 1e3,
                                             n if k == 1 else f"{k} activities ({n}, ...)"))
    for cls in ("compute", "memory", "communication", "transfer", "other"):
        mine = bars.get(cls, [])
        if mine:
            fig.add_trace(go.Bar(y=[r for r, _, _, _ in mine], x=[d for _, _, d, _ in mine],
                                 base=[b for _, b, _, _ in mine], orientation="h", name=cls,
                                 marker={"color": CLASS_COLORS[cls]}, customdata=[n for *_, n in mine],
                                 hovertemplate="%{customdata}<br>%{base:.1f} us + %{x:.2f} us<extra>" + cls + "</extra>"))
    exposed = sorted((r for r in report.rows if r.exposed_s > 0 and r.call.end_ns >= lo and r.call.start_ns <= hi),
                     key=lambda r: -r.exposed_s)[:TRACE_MARKS]
    if exposed:
        fig.add_trace(go.Scatter(
            x=[(r.call.start_ns - t0) / 1e3 + r.call.duration_s * 5e5 for r in exposed],
            y=[f"rank {r.call.rank if r.call.rank is not None else '?'} GPU{r.call.device} stream {r.call.stream}"
               for r in exposed], mode="markers", name="exposed communication", marker={"symbol": "x", "size": 9,
                                                                                          "color": "black"},
            customdata=[f"{r.call.collective or 'unknown'}: {r.exposed_s * 1e6:.1f} us of "
                        f"{r.call.duration_s * 1e6:.1f} us exposed" for r in exposed],
            hovertemplate="%{customdata}<extra></extra>"))
    detail = (f"; activities closer than {gap / 1e3:.3g} us drawn as one bar: zoom in for each apart" if merged
              else "")
    fig.update_layout(title=f"Trace timeline ({len(report.traces)} rank file(s); exposed communication marked x"
                            f"{detail})",
                      xaxis_title="us from the trace's first activity", barmode="overlay", template="plotly_white",
                      height=min(4000, max(260, 120 + 22 * len(rows))), uirevision="trace")
    if window_us is not None:
        fig.update_xaxes(range=list(window_us))
    return fig


def trace_call_groups(report: Any) -> dict[str, list[Any]]:
    """A trace report's calls that can be drawn by size and bus bandwidth (size, busbw
    and a group of two or more known), by 'collective dtype xN'."""
    by: dict[str, list[Any]] = {}
    for r in report.rows:
        if r.call.busbw and r.call.size_bytes and r.call.group_size and r.call.group_size > 1:
            by.setdefault(f"{r.call.collective} {r.call.dtype} x{r.call.group_size}", []).append(r)
    return by


def nothing_placed(calls: int, why: list[str]) -> str:
    """The chart's note where none of a trace's collective calls can be drawn."""
    head = f"No collective call of the trace can be placed here ({calls} calls)"
    return f"{head}: " + ", ".join(why) + " (the table lists each)" if why else head


def trace_collectives_figure(report: Any, profile: Any, model: MachineModel | None = None) -> go.Figure:
    """The trace's collectives (busbw against nccl-tests' size, one marker per call)
    over this machine's NCCL busbw-by-size curves: how far each call sits from what the
    machine does at its size. Calls of unknown size or group are not drawn (the table
    lists them)."""
    fig = collectives_figure(profile, model)
    by = trace_call_groups(report)
    if not by and report.rows:  # nothing to draw: said on the chart, with why (issue 45: an empty chart, no word)
        one = sum(1 for r in report.rows if r.call.group_size == 1)
        why = [f"{one} of one-rank groups (nothing crosses a link)" if one else "",
               f"{sum(1 for r in report.rows if not r.call.size_bytes)} of unknown size",
               f"{sum(1 for r in report.rows if r.call.size_bytes and not r.call.group_size)} of unknown group size"]
        fig.add_annotation(xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False,
                           text=nothing_placed(len(report.rows), [w for w in why if w and not w.startswith("0 ")]),
                           bgcolor="rgba(255,255,255,0.9)", font={"size": 14})
    many = sum(len(v) for v in by.values()) > TRACE_CALLS_DRAWN
    for name, rows in sorted(by.items()):
        color = COLLECTIVE_COLORS.get(rows[0].call.collective, "#7f7f7f")
        fr = sorted(r.fraction_of_nccl for r in rows if r.fraction_of_nccl)
        mid = sorted(rows, key=lambda r: r.call.size_bytes)[len(rows) // 2]
        # where the user's calls sit, the gap said on the plot (or why there is none to say)
        said = f"{name}: median {fr[len(fr) // 2]:.0%} of NCCL here" if fr else \
            f"{name}: no NCCL figure for {mid.call.group_size} ranks in this profile"
        fig.add_annotation(x=math.log10(mid.call.size_bytes), y=math.log10(gbps(mid.call.busbw)), text=said,
                           showarrow=True, arrowhead=2, ax=-60, ay=-40, font={"color": color},
                           bgcolor="rgba(255,255,255,0.85)")
        if many:  # one marker per size: the median call, the 10th to 90th percentile as a bar, the count
            sizes: dict[int, list[Any]] = {}
            for r in rows:
                sizes.setdefault(r.call.size_bytes, []).append(r)
            xs, ys, lo, hi, text = [], [], [], [], []
            for size, rs in sorted(sizes.items()):
                bw = sorted(gbps(r.call.busbw) for r in rs)
                med, p10, p90 = bw[len(bw) // 2], bw[len(bw) // 10], bw[min(len(bw) - 1, (9 * len(bw)) // 10)]
                xs.append(size), ys.append(med), lo.append(med - p10), hi.append(p90 - med)
                fr = sorted(r.fraction_of_nccl for r in rs if r.fraction_of_nccl)
                text.append(f"{len(rs)} calls; median {med:.1f} GB/s (10th-90th: {p10:.1f}-{p90:.1f})"
                            + (f", median {fr[len(fr) // 2]:.0%} of NCCL here" if fr else ""))
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="markers", name=f"trace: {name} (median per size)",
                                     marker={"symbol": "diamond", "size": 10, "color": color,
                                             "line": {"color": "black", "width": 1}},
                                     error_y={"type": "data", "symmetric": False, "array": hi, "arrayminus": lo},
                                     customdata=text, hovertemplate="%{x} B: %{customdata}<extra></extra>"))
            continue
        fig.add_trace(go.Scatter(
            x=[r.call.size_bytes for r in rows], y=[gbps(r.call.busbw) for r in rows], mode="markers",
            name=f"trace: {name}", marker={"symbol": "diamond", "size": 10, "color": color,
                                           "line": {"color": "black", "width": 1}},
            customdata=[f"rank {r.call.rank}, {r.call.duration_s * 1e6:.1f} us"
                        + (f", {r.fraction_of_nccl:.0%} of NCCL here" if r.fraction_of_nccl else "") for r in rows],
            hovertemplate="%{x} B: %{y:.1f} GB/s<br>%{customdata}<extra></extra>"))
    fig.update_xaxes(title="message size (bytes)", **size_axis([x for t in fig.data for x in (t.x or ()) if x]))
    fig.update_yaxes(**gbps_axis([y for t in fig.data for y in (t.y or ())]))
    fig.update_layout(title="The trace's collectives over this machine's NCCL (bus bandwidth by size, log-log)")
    return fig
