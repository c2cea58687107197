"""The Dash app: `create_app(store_path, profile) -> dash.Dash`. Pages read profiles
through the one resolver (profiler.session) and the store; figures come from the pure
builders in figures.py, analyses from roofline.summaries. Callback functions are
module-level so tests call them directly."""

from __future__ import annotations

import base64
from enum import Enum
from typing import Any

from ..errors import LinkroofError
from ..profiler.session import bundled_profile, is_reference, resolve_profile
from ..roofline.fits import profile_fits
from ..roofline.model import MachineModel
from ..roofline.summaries import (NOT_HELD, collective_rows, compare_profiles, headline_rows, show, topo_matrix,
                                  warnings_of)
from ..roofline.timeline import flops_text, short_name
from ..schema import Profile, known
from ..store import Store
from ..units import format_size, gbps
from . import figures as F
from . import plotlyjs

MAX_UPLOAD_BYTES = 64 * 1024 * 1024
PAGE_SIZE = 25
PAGES = [("/", "Overview"), ("/topology", "Topology"), ("/bandwidth", "Bandwidth"), ("/collectives", "Collectives"),
         ("/roofline", "Roofline"), ("/trace", "Trace"), ("/runs", "Runs")]


class Id(str, Enum):
    """Component ids in one place, so a typo fails at import, not in the browser."""

    URL = "url"
    PROFILE = "profile-select"
    CONTENT = "page-content"
    TOPO_GRAPH = "topology-graph"
    TOPO_DETAIL = "topology-detail"
    PATTERN = "bw-pattern"
    MECHANISM = "bw-mechanism"
    RELATIVE = "bw-relative"
    HEATMAP = "bw-heatmap"
    RUNS_PAGE = "runs-page"
    RUNS_TABLE = "runs-table"
    RUN_A = "runs-a"
    RUN_B = "runs-b"
    RUNS_DIFF = "runs-diff"
    UPLOAD = "upload"
    UPLOAD_MSG = "upload-message"
    OVERVIEW_HEADLINE = "overview-headline"
    OVERVIEW_WARNINGS = "overview-warnings"
    TOPO_MATRIX = "topo-matrix"
    TOPO_GPU_TABLE = "topology-gpu-table"
    RUNS_LIST = "runs-list"
    RUNS_DIFF_NONE = "runs-diff-none"
    RUNS_DIFF_TABLE = "runs-diff-table"
    ROOFLINE_GRAPH = "roofline-graph"
    BANDWIDTH_ROOFLINE_GRAPH = "bandwidth-roofline-graph"
    COLL_GRAPH = "collectives-graph"
    COLL_TABLES = "collectives-tables"
    COLL_EMPTY = "collectives-empty"
    COLL_SELECT = "collectives-select"
    FITS_GRAPH = "fits-graph"
    DECOMPOSITION_GRAPH = "decomposition-graph"
    COLL_TABLE = "collectives-table"
    BANNER = "provenance-banner"
    TRACE_UPLOAD = "trace-upload"
    TRACE_MSG = "trace-message"
    TRACE_VIEW = "trace-view"
    TRACE_TABLE = "trace-table"
    TRACE_TIMELINE = "trace-timeline"
    TRACE_STEPS = "trace-steps"
    TRACE_MATCHED = "trace-matched"
    TRACE_COLLECTIVES = "trace-collectives"


class Data:
    """Where profiles come from: the store, the bundled reference and an explicit one;
    `here` is this machine's topology (None without a GPU), to say when a profile shown
    is another machine's."""

    def __init__(self, store_path: str | None, profile: Profile | None = None, here: Any = None,
                 traces: list | None = None):
        self.store_path = store_path
        self.pinned = profile
        self.here = here
        self.traces = list(traces or [])  # the trace files' readings (readers.traces.Trace), one per rank
        self.reference = bundled_profile()
        self._cache: dict[str, Profile] = {}
        self._models: dict[str, MachineModel] = {}
        self._report: tuple[Any, Any] | None = None  # ((traces' identity, profile id), the traces' report)
        self.paged: dict[str, list[dict]] = {}  # server-side rows of the paged tables, by table id
        self._sorted: dict[tuple, list[dict]] = {}

    def trace_report(self, pid: Any) -> Any:
        """The traces' report against the profile, computed once per traces and profile
        (the page, its zooms and its table pages all read it)."""
        from ..readers.traces import analyze

        profile = self.get(pid)
        key = (tuple(id(t) for t in self.traces), profile.id)
        if self._report is None or self._report[0] != key:
            self._report = (key, analyze(self.traces, profile))
            self.paged.clear()
            self._sorted.clear()
        return self._report[1]

    def store(self) -> Any:
        return Store(self.store_path)

    def choices(self) -> list[dict[str, str]]:
        """The profile menu, the one shown first at the top: the pinned profile, else the
        newest measured by linkroof, else the bundled reference; an import or saved
        placements only when chosen. Each entry names its kind."""
        from ..profiler.session import kind_of

        with self.store() as s:
            rows = [r for r in s.list(limit=50) if self.pinned is None or r["id"] != self.pinned.id]
        stored = [{"label": f"{r['id']} [{kind_of(r['label'] or '', r['measurements'] or 0)}] {r['hostname']} "
                            f"{r['label']}", "value": r["id"],
                   "measured": kind_of(r["label"] or "", r["measurements"] or 0) == "measured" and not r["damaged"]}
                  for r in rows]
        ref = {"label": f"{self.reference.id} [reference] bundled 2xH200", "value": "reference", "measured": False}
        first = [c for c in stored if c["measured"]][:1]
        out = [c for c in stored if c not in first] + [ref]
        if self.pinned is not None:
            from ..profiler.session import profile_kind

            first = [{"label": f"{self.pinned.id} [{profile_kind(self.pinned)}] {self.pinned.label}",
                      "value": self.pinned.id}]
            out = [c for c in stored] + [ref]
        elif not first:
            first, out = [ref], stored
        return [{"label": c["label"], "value": c["value"]} for c in first + out]

    def get(self, pid: Any) -> Profile:
        """The pinned profile when none or its id is asked for; else a profile the store
        lists (by id or unique prefix), or 'reference'. Never a file: the input comes
        from anyone who can reach the dashboard. Anything else raises BadInput."""
        if self.pinned is not None and (not pid or pid == self.pinned.id):
            return self.pinned
        if not pid or pid == "reference":
            return self.reference
        if not isinstance(pid, str):
            raise BadInput(f"a profile is chosen by its id, not by {type(pid).__name__}")
        if pid not in self._cache:
            try:
                self._cache[pid] = resolve_profile(pid, self.store_path, files=False)[0]
            except LinkroofError as e:
                raise BadInput(str(e)) from None
            if len(self._cache) > 32:
                self._cache.pop(next(iter(self._cache)))
        return self._cache[pid]

    def model(self, pid: Any) -> MachineModel:
        profile = self.get(pid)
        key = profile.id
        if key not in self._models:
            if len(self._models) > 32:
                self._models.pop(next(iter(self._models)))
            self._models[key] = MachineModel.from_profile(profile)
        return self._models[key]


class BadInput(ValueError):
    """A callback got a value its component cannot send: answered in the page."""


def _bad(text: str) -> Any:
    """Bad input to a callback, said in the page (never an HTTP 500)."""
    from dash import html

    return html.P(f"Not shown: {text}"[:500], className="bad-input",
                  style={"color": "#a94442", "background": "#f2dede", "padding": "8px"})


def _text(value: Any, what: str, limit: int = 200) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise BadInput(f"{what} must be a short text, got {type(value).__name__}")
    return value


def guarded(fallback: Any) -> Any:
    """Every callback answers bad input with a message in the page (or, for a figure, an
    empty figure saying so), never a traceback: a component may send anything."""
    import functools

    def wrap(fn: Any) -> Any:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except (BadInput, LinkroofError) as e:
                return fallback(str(e))
            except (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError) as e:
                return fallback(f"this input cannot be shown ({type(e).__name__})")

        return call

    return wrap


def _figure_saying(text: str) -> Any:
    import plotly.graph_objects as go

    fig = go.Figure()
    fig.add_annotation(text=text[:200], showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    fig.update_layout(template="plotly_white", height=300)
    return fig


def _missing(text: str) -> Any:
    """What a view cannot show, and how to get it (never empty axes)."""
    from dash import html

    return html.P(text, className="missing", style={"color": "#8a6d3b", "background": "#fcf8e3", "padding": "8px"})


def _graph_or(fig: Any, text: str, gid: str | None = None) -> Any:
    """The figure, or what is missing when it would draw nothing."""
    return _graph(fig, gid) if any(len(t.x or t.z or ()) for t in fig.data) else _missing(text)


def _graph(fig: Any, gid: str | None = None) -> Any:
    from dash import dcc

    kwargs = {"id": gid} if gid else {}
    return dcc.Graph(figure=fig, config={"displaylogo": False}, **kwargs)


PAGED_OVER = 1000  # a table of more rows is paged by the server: only the page shown travels
PAGE_ROWS_MAX = 1000  # rows one page request may ask for


def _paged_table(rows: Any, tid: str, data: Data, page_size: int = 15) -> Any:
    """`_table` for any number of rows: up to PAGED_OVER in the page, more kept here and
    served a block at a time (AG Grid's infinite row model, sorted here)."""
    if len(rows) <= PAGED_OVER:
        return _table(list(rows), tid, page_size)
    import dash_ag_grid as dag

    data.paged[tid] = rows
    cols = column_defs(rows[0])
    return dag.AgGrid(id=tid, columnDefs=cols, rowModelType="infinite", columnSize="autoSize",
                      defaultColDef={"sortable": True, "filter": False, "resizable": True, "cellDataType": False},
                      dashGridOptions={"pagination": True, "paginationPageSize": page_size,
                                       "paginationPageSizeSelector": page_sizes(page_size),
                                       "cacheBlockSize": page_size * 4, "maxBlocksInCache": 20, "rowBuffer": 0,
                                       "domLayout": "autoHeight", "suppressFieldDotNotation": True},
                      style={"width": "100%"})


def page_rows(request: Any, tid: str, data: Data) -> dict:
    """One block of a paged table: rows [startRow, endRow) in the order asked (a sort on
    one column, numbers before text, missing last)."""
    rows = data.paged.get(tid)
    if rows is None:
        raise BadInput("this table is no longer loaded: reload the page")
    if not isinstance(request, dict):
        raise BadInput("not a page request")
    start, end = request.get("startRow", 0), request.get("endRow", 0)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)) or not 0 <= start <= end \
            or end - start > PAGE_ROWS_MAX:
        raise BadInput(f"rows {str(start)[:12]} to {str(end)[:12]}: not a page")
    sort = request.get("sortModel") or []
    if sort:
        if not isinstance(sort, list) or not isinstance(sort[0], dict):
            raise BadInput("not a sort")
        col, desc = sort[0].get("colId"), sort[0].get("sort") == "desc"
        if col not in rows[0]:
            raise BadInput(f"no column {str(col)[:40]!r}")
        key = (tid, col, desc)
        if key not in data._sorted:
            rows = list(rows)  # a sort needs every row once (then kept)
            have = [r for r in rows if r.get(col) is not None]
            nums = sorted((r for r in have if isinstance(r[col], (int, float))), key=lambda r: r[col], reverse=desc)
            text = sorted((r for r in have if not isinstance(r[col], (int, float))), key=lambda r: str(r[col]),
                          reverse=desc)
            data._sorted[key] = nums + text + [r for r in rows if r.get(col) is None]
        rows = data._sorted[key]
    return {"rowData": rows[start:end], "rowCount": len(data.paged[tid])}


def trace_zoom(relayout: Any, pid: Any, data: Data) -> Any:
    """The trace timeline redrawn for the part zoomed to (every activity apart once the
    view is narrow enough), or whole again on a double click."""
    report = data.trace_report(pid)
    window = None
    if isinstance(relayout, dict):
        a, b = relayout.get("xaxis.range[0]"), relayout.get("xaxis.range[1]")
        if a is None and isinstance(relayout.get("xaxis.range"), list) and len(relayout["xaxis.range"]) == 2:
            a, b = relayout["xaxis.range"]
        if a is not None and b is not None:
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b)) or not a < b:
                raise BadInput("not a zoom")
            window = (float(a), float(b))
    return F.trace_timeline_figure(report, window)


DETAIL_WORDS = ("basis", "note", "notes", "how", "source", "facts", "why", "path", "what")
VERDICT_WORDS = ("flags", "verdict", "verdicts", "warnings", "limiter")
DETAIL_WIDTH = 320  # px: a verdict or detail column wraps inside this, so a row fits a 1280 px page


def column_defs(keys: Any) -> list[dict]:
    """The grid's columns key first: the identifying column (pinned left, so it stays in
    view when the grid scrolls), then the figures as the rows give them, then the
    verdicts (flags, warnings, limiter), then the details (basis, notes, how, source...);
    verdicts and details at most DETAIL_WIDTH wide, their whole text on hover."""
    keys = list(keys)

    def has(k: str, words: tuple[str, ...]) -> bool:
        return any(w in k.lower().replace("_", " ").split() for w in words)

    verdicts = [k for k in keys[1:] if has(k, VERDICT_WORDS)]
    details = [k for k in keys[1:] if has(k, DETAIL_WORDS) and k not in verdicts]
    ordered = keys[:1] + [k for k in keys[1:] if k not in verdicts and k not in details] + verdicts + details
    cols = []
    for i, k in enumerate(ordered):
        c: dict[str, Any] = {"field": k, "headerName": k.replace("_", " ")}
        if i == 0:
            c["pinned"] = "left"
        elif k in verdicts or k in details:
            # one line within DETAIL_WIDTH, the whole text on hover (rows grown to wrapped text were cut
            # short where the grid sized its columns after their heights)
            c.update(maxWidth=DETAIL_WIDTH, tooltipField=k)
        cols.append(c)
    return cols


def page_sizes(page_size: int) -> list[int]:
    """The page-size selector's choices: the grid's own size among them (AG Grid shows a
    blank selector when it is not)."""
    return sorted({page_size, 50, 100, 500})


def _table(rows: list[dict], tid: str | None = None, page_size: int = 15) -> Any:
    """A sortable, filterable grid (dash-ag-grid) of plain rows, each cell shown as given
    (no type inferred from the first row: a column of numbers with an empty cell would
    read "Invalid Number" there)."""
    import dash_ag_grid as dag

    cols = column_defs(rows[0].keys() if rows else [])
    kwargs = {"id": tid} if tid else {}
    return dag.AgGrid(rowData=rows, columnDefs=cols, columnSize="autoSize",
                      defaultColDef={"sortable": True, "filter": True, "resizable": True, "cellDataType": False},
                      dashGridOptions={"pagination": len(rows) > page_size, "paginationPageSize": page_size,
                                       "paginationPageSizeSelector": page_sizes(page_size),
                                       "domLayout": "autoHeight", "suppressFieldDotNotation": True},
                      style={"width": "100%"}, **kwargs)


# ------------------------------------------------------------------- pages


def page_overview(data: Data, pid: str | None) -> Any:
    from dash import html

    p = data.get(pid)
    model = data.model(pid)
    gpus = [{"gpu": g.index, "name": str(g.name), "bus id": str(g.pci_bus_id), "memory GB":
             round(gbps(g.memory_total_bytes), 1) if isinstance(g.memory_total_bytes, int) else "unknown",
             "NVLinks active": len(g.active_nvlinks) if g.nvlinks or not t.source.startswith("import:") else "unknown",
             "PCIe": f"Gen{g.pcie_gen_max} x{g.pcie_width_max}" if known(g.pcie_gen_max) else "unknown",
             "NUMA": show(g.numa_affinity, str)} for t in p.topologies for g in t.gpus]
    warn = warnings_of(p, model)
    rows = headline_rows(p, model)
    against_spec = [r for r in rows if r.get("percent_of_spec") is not None]
    chart = (_graph(F.headline_figure(rows), Id.OVERVIEW_HEADLINE.value) if against_spec else
             _missing("No figure has a known spec to hold it to (an imported tool's output names no link spec): the "
                      "table gives the measured figures."))
    # the table the page's full width (its flags in view at 1280 px), the chart under it
    headline = (html.Div([_table([{k: ((NOT_HELD if r.get("spec") == NOT_HELD else "unknown") if v is None else v)
                                            for k, v in r.items()} for r in rows]), chart])
                if rows else
                _missing("No headline figure to hold against spec: `linkroof bench` measures links, HBM and GEMMs "
                         "(a profile from `linkroof probe` or an import may hold none)."))
    return html.Div([
        html.H2(f"{', '.join(p.hostnames)}: {len(gpus)} GPUs"),
        html.P(f"Profile {p.id} ({p.label}), {len(p.measurements)} measurements, {p.created_at}"),
        _table(gpus),
        html.H3("Headline figures: measured against spec"),
        headline,
        html.H3("Warnings"),
        html.Ul([html.Li(w) for w in warn] or [html.Li("none")], id=Id.OVERVIEW_WARNINGS.value),
    ])


def page_topology(data: Data, pid: str | None) -> Any:
    from dash import html

    p = data.get(pid)
    return html.Div([
        html.Div([_graph(F.topology_figure(p.topology, p), Id.TOPO_GRAPH.value)], style={"flex": "3"}),
        html.Div([html.H4("Connections (nvidia-smi topo -m)"), html.Pre(topo_matrix(p.topology), id=Id.TOPO_MATRIX.value),
                  html.H4("Selected"), html.Div("Click a GPU in the graph.", id=Id.TOPO_DETAIL.value)],
                 style={"flex": "2", "overflowX": "auto"}),
    ], style={"display": "flex", "gap": "16px"})


def topology_detail(click: dict | None, pid: str | None, data: Data) -> Any:
    """Callback: the figures of the clicked GPU (its pairs)."""
    from dash import html

    if not isinstance(click, dict) or not isinstance(click.get("points"), list) or not click["points"]:
        return "Click a GPU in the graph."
    point = click["points"][0]
    tag = str(point.get("customdata", "") if isinstance(point, dict) else "")[:64]
    if not tag.startswith("gpu:") or not tag[4:].isdigit():
        return f"{tag or 'that'}: not a GPU"
    g = int(tag[4:])
    p = data.get(pid)
    if g not in {gpu.index for gpu in p.topology.gpus}:
        return f"GPU{g}: not in this profile"
    rows = []
    for m in p.measurements:
        # its transfers (collectives have their page; block and size sweeps, and copies beside a GEMM, theirs)
        if g in m.spec.devices and m.bytes_per_rep and not m.spec.params.get("sweep") and "parts" not in m.spec.params \
                and m.spec.mechanism != "nccl" and m.spec.name != "copy_under_compute":
            # the key and the figure first, then what tells two rows of one path apart: size, blocks
            path = "->".join(f"GPU{d}" for d in m.spec.devices) if len(m.spec.devices) > 1 else f"GPU{m.spec.devices[0]}"
            rows.append({"path": f"{m.spec.mechanism} {m.spec.pattern} {path}",
                         "GB/s": round(gbps(m.bandwidth_bytes_per_s), 1), "size": format_size(m.spec.message_bytes),
                         "blocks": m.spec.params.get("blocks", "-"),
                         "settings": ", ".join(f"{k}={v}" for k, v in sorted(m.spec.params.items()) if k != "blocks"),
                         "benchmark": m.spec.name, "reps": len(m.times_s) or m.spec.repetitions,
                         "verified": m.verified_text, "_o": (m.spec.pattern, m.spec.mechanism, m.spec.message_bytes)})
    order = {"p2p_read": 0, "p2p_write": 0, "bidir": 1}
    mech = {"ce": 0, "sm": 1, "tma": 2}
    rows.sort(key=lambda r: (order.get(r["_o"][0], 2), mech.get(r["_o"][1], 3), r["path"], -r["GB/s"]))  # its pairs first
    for r in rows:
        del r["_o"]
    return html.Div([html.H5(f"GPU{g}: {len(rows)} figures"), _table(rows, Id.TOPO_GPU_TABLE.value, 10)])


def page_bandwidth(data: Data, pid: str | None) -> Any:
    from dash import dcc, html

    p = data.get(pid)
    model = data.model(pid)
    patterns = sorted({m.spec.pattern for m in p.measurements if len(m.spec.devices) == 2 and
                       m.spec.pattern in ("p2p_read", "p2p_write", "bidir")})
    sweeps = _graph_or(F.bandwidth_sweep_figure(model), "No message-size sweeps in this profile: `linkroof bench` "
                       "(the sweep family) measures them.")
    blocks = _graph_or(F.sm_sweep_figure(p), "No block-count sweep in this profile: `linkroof bench` (default or "
                       "full suite, peer_sm) measures one.")
    if not patterns:
        return html.Div([_missing("No peer copies between GPU pairs in this profile: `linkroof bench` (families "
                                  "peer_ce, peer_sm, peer_tma) measures them, or import nvbandwidth's output "
                                  "(`linkroof import nvbandwidth FILE`)."), sweeps, blocks])
    mechs = sorted({m.spec.mechanism for m in p.measurements if m.spec.pattern in patterns}) or ["ce"]
    return html.Div([
        html.Div([
            dcc.Dropdown(patterns, patterns[-1], id=Id.PATTERN.value, clearable=False, style={"width": "200px"}),
            dcc.Dropdown(mechs, "ce" if "ce" in mechs else mechs[0], id=Id.MECHANISM.value, clearable=False,
                         style={"width": "150px"}),
            dcc.RadioItems([{"label": "GB/s", "value": "abs"}, {"label": "% of spec", "value": "rel"}], "abs",
                           id=Id.RELATIVE.value, inline=True),
        ], style={"display": "flex", "gap": "12px", "alignItems": "center"}),
        _graph(F.pair_matrix_figure(p, patterns[-1], "ce" if "ce" in mechs else mechs[0]), Id.HEATMAP.value),
        sweeps,
        blocks,
    ])


def heatmap(pattern: Any, mechanism: Any, relative: Any, pid: Any, data: Data) -> Any:
    pattern, mechanism = _text(pattern, "the pattern", 32), _text(mechanism, "the mechanism", 32)
    if pattern not in ("p2p_read", "p2p_write", "bidir"):
        raise BadInput(f"no heatmap for the pattern {pattern!r} (p2p_read, p2p_write or bidir)")
    return F.pair_matrix_figure(data.get(pid), pattern, mechanism, relative == "rel")


def page_collectives(data: Data, pid: str | None) -> Any:
    from dash import html

    p = data.get(pid)
    tables = collective_rows(p)
    if not tables:
        return html.Div([_missing("No collectives in this profile: run `linkroof bench --only nccl`, or import "
                                  "nccl-tests results with `linkroof import nccl-tests FILE`.")], id=Id.COLL_EMPTY.value)
    from dash import dcc

    titles = list(tables)
    first = next((t for t in titles if t.startswith("all_reduce fp32")),
                 next((t for t in titles if t.startswith("all_reduce")), titles[0]))
    return html.Div([
        _graph(F.collectives_figure(p, data.model(pid)), Id.COLL_GRAPH.value),
        html.H4("As nccl-tests prints them (times in µs, bandwidths in GB/s)"),
        dcc.Dropdown(titles, first, id=Id.COLL_SELECT.value, clearable=False, style={"width": "420px"}),
        html.Div(collective_table(first, pid, data), id=Id.COLL_TABLE.value),
    ], id=Id.COLL_TABLES.value)


def collective_table(title: str | None, pid: str | None, data: Data) -> Any:
    """Callback: one collective's nccl-tests-style table."""
    title = _text(title, "the collective's title") if title is not None else ""
    rows = collective_rows(data.get(pid)).get(title, [])
    return _table(rows, page_size=40) if rows else _missing(f"No figures for {title} in this profile.")


def page_roofline(data: Data, pid: str | None) -> Any:
    from dash import html

    p = data.get(pid)
    model = data.model(pid)
    placements = list(p.placements)
    examples = ""
    if not placements and is_reference(p):  # no GPU, nothing placed yet: the bundled examples, said so
        from ..profiler.session import example_placements

        placements = list(example_placements())
        examples = (f"The dots are {len(placements)} examples measured on H200s by linkroof's developers (the zoo's "
                    "kernels counted by Nsight Compute, an all-reduce on 2 x H200), not on this machine: "
                    "`linkroof compare` or `roofline --workload --time` places your own.")
    rows = [{"workload": x.workload.name, "ceilings": x.ceilings_kind, "measured ms": round(x.measured_time_s * 1e3, 4),
             "clock state": x.clock.state if x.clock is not None else "not sampled",
             "bandwidth-only bound ms": round(x.bound_time_s * 1e3, 4), "limiter": x.limiter,
             "fraction of roofline": f"{x.fraction_of_roofline:.1%}",
             "cost-model bound ms": round(x.cost_bound_s * 1e3, 4) if x.cost_bound_s else "",
             "fraction of cost bound": f"{x.fraction_of_cost_bound:.1%}" if x.cost_bound_s else "",
             "flags": "; ".join(x.verdicts)} for x in placements]
    try:
        roof = _graph(F.roofline_figure(model, placements), Id.ROOFLINE_GRAPH.value)
    except ValueError:
        roof = _missing(f"No compute ceiling for {model.gpu_name}: it is not in linkroof's spec table and no GEMM "
                        "was measured; `linkroof bench --only compute` measures one.")
    try:
        hbm_roof = _graph(F.hbm_roofline_figure(model, placements))
    except ValueError:
        hbm_roof = None
    # the roofline that places the kernels first, the communication one (calls, NCCL, the
    # trace) next, the FLOP-per-link-byte one for the fused workloads after them
    parts = [*([html.P(examples, className="examples-note", style={"fontWeight": "bold"})] if examples else []),
             *([hbm_roof] if hbm_roof is not None else []),
             _graph_or(F.bandwidth_roofline_figure(model, placements, p, data.trace_report(pid) if data.traces
                                                   else None), "No NVLink bandwidth by message size in this "
                       "profile: `linkroof bench` (sweeps, NCCL) or imported nccl-tests results give one.",
                       Id.BANDWIDTH_ROOFLINE_GRAPH.value), roof,
             html.H4("Placed workloads"), _table(rows) if rows else html.P("No workload placed yet: linkroof compare places kernels.")]
    if placements:
        parts.append(_graph(F.speed_of_light_figure(placements)))
    if any(x.decomposition_s for x in placements):
        parts.append(_graph(F.decomposition_figure(placements), Id.DECOMPOSITION_GRAPH.value))
    for x in placements:
        if x.timeline is not None and x.timeline.intervals:
            parts += [_graph(F.timeline_figure(x.workload.name, x.timeline)),
                      html.H5(f"{x.workload.name}: kernels per call (measured)"),
                      _table([_kernel_row(k) for k in x.timeline.kernels])]
    parts += [html.H4("Cost-model terms of this machine"), cost_terms_table(p)]
    fits = profile_fits(p)
    parts.append(_graph(F.fits_figure(fits), Id.FITS_GRAPH.value) if fits else
                 _missing("No message-size sweep to fit: `linkroof bench` (sweeps, NCCL) measures them."))
    return html.Div(parts)


def _kernel_row(k: Any) -> dict:
    """One kernel name of a call's timeline: what the timeline measured, and what ncu
    counted where compare --counters ran (DRAM bytes, FLOPs per data type)."""
    row = {"kernel": short_name(k.name), "class": k.kernel_class, "launches / call": k.launches_per_call,
           "µs / call": round(k.time_per_call_s * 1e6, 3)}
    if k.counters:
        c = k.counters
        row["DRAM MB / call (ncu)"] = round((c.get("dram_read_bytes", 0.0) + c.get("dram_write_bytes", 0.0)) / 1e6, 3)
        row["FLOPs / call (ncu)"] = flops_text(c)
        row["why (ncu)"] = k.why
    row.update({"class from": k.class_basis, "name as recorded": k.name[:300]})
    return row


def cost_terms_table(profile: Any) -> Any:
    """The launch and sync terms the cost model uses, as this profile measured them."""
    from dash import html

    from ..roofline.cost import machine_terms

    rows = [{"term": r["term"], "kind": r["kind"], "µs": round(r["seconds"] * 1e6, 3), "what": r["what"]}
            for r in machine_terms(profile)]
    if not rows:
        return _missing("No launch or sync figures in this profile: `linkroof bench --only launch,sync` measures them.")
    return html.Div(_table(rows))


def _call_row(r: Any) -> dict:
    """One collective call as a table row (times in us, bandwidths in GB/s)."""
    row = {k: v for k, v in r.to_dict().items() if k not in ("notes", "start_ns", "kernel")}
    for key in ("duration_s", "exposed_s", "nccl_s", "bound_s"):
        if row.get(key) is not None:
            row[key.replace("_s", "_us")] = round(row.pop(key) * 1e6, 3)
        else:
            row.pop(key, None)
    for key in ("algbw", "busbw"):
        row[f"{key}_GBps"] = round(row.pop(key) / 1e9, 2) if row.get(key) is not None else None
    for key in ("fraction_of_nccl", "fraction_of_bound"):
        if row.get(key) is not None:
            row[key] = round(row[key], 3)
    row["notes"] = "; ".join(r.call.notes)
    first = [k for k in CALL_KEYS_FIRST if k in row]  # the call, its figures, its gap; details after
    return {**{k: row[k] for k in first}, **{k: v for k, v in row.items() if k not in first}}


CALL_KEYS_FIRST = ("rank", "collective", "size_bytes", "duration_us", "busbw_GBps", "nccl_us", "fraction_of_nccl",
                   "bound_us", "fraction_of_bound", "exposed_us", "wait_s")


def _step_row(s: Any, saved: tuple[float, float]) -> dict:
    a, b = saved
    return {"rank": s.rank, "step": s.step, "span_us": round(s.span_s * 1e6, 2), "busy_us": round(s.busy_s * 1e6, 2),
            "idle_us": round(s.idle_s * 1e6, 2), **{f"{k}_us": round(v * 1e6, 2) for k, v in s.class_s.items()},
            "overlapped_comm_us": round(s.overlapped_s * 1e6, 2), "exposed_comm_us": round(s.exposed_s * 1e6, 2),
            "saved_at_nccl_us (inferred)": round(a * 1e6, 2), "saved_at_bound_us (inferred)": round(b * 1e6, 2)}


def _matched_row(m: Any) -> dict:
    return {"process group": str(m.key[1]), "call": m.key[-1], "collective": m.collective,  # never a tuple's repr
            "size_bytes": m.size_bytes, "ranks": ",".join(map(str, m.ranks)),
            "skew_us": round(m.skew_s * 1e6, 3), "transfer_us": round(m.transfer_s * 1e6, 3),
            "busbw of the transfer (GB/s)": round(m.busbw / 1e9, 2) if m.busbw else None,
            "last_rank": m.last_words, "matched_by": m.matched_by,
            "waits": ", ".join(f"rank {r}: {w * 1e6:.1f} us" for r, w in m.waits_s)}


class LazyRows:
    """A table's rows made when a page asks for them: `make(i)` builds row i (a trace of
    100 k calls is not turned into 100 k dicts to show 15)."""

    def __init__(self, n: int, make: Any):
        self.n, self.make = n, make

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self.make(k) for k in range(*i.indices(self.n))]
        return self.make(i)

    def __iter__(self) -> Any:
        return (self.make(k) for k in range(self.n))


def trace_view(data: Data, pid: str | None) -> Any:
    """The traces read (given to `linkroof dashboard --trace`, or uploaded) against the
    profile chosen: the timeline per rank and stream, the calls over this machine's NCCL
    curves, the per-collective and per-step tables (paged by the server when long)."""
    from dash import html

    if not data.traces:
        return _missing("No trace yet: `linkroof dashboard --trace rank0.json.gz ...`, or drop PyTorch profiler "
                        "traces (one file per rank) above.")
    profile = data.get(pid)
    report = data.trace_report(pid)
    rows = LazyRows(len(report.rows), lambda i: _call_row(report.rows[i]))
    steps = LazyRows(len(report.steps), lambda i: _step_row(report.steps[i], report.savings[i]))
    parts = [html.P(f"{len(data.traces)} rank file(s): " + ", ".join(f"rank {t.rank}" for t in data.traces[:64])
                    + (f" ... ({len(data.traces)} ranks)" if len(data.traces) > 64 else "")
                    + f"; {len(report.rows)} collective call(s)"),
             *[html.P(w, style={"color": "#8a6d3b"}) for w in report.warnings[:20]],
             _graph(F.trace_timeline_figure(report), Id.TRACE_TIMELINE.value),
             _graph(F.trace_collectives_figure(report, profile, data.model(pid)), Id.TRACE_COLLECTIVES.value),
             html.H4("Collectives (sizes in nccl-tests' convention; NCCL and the bound at the call's own collective, "
                     "type, group and size)"),
             _paged_table(rows, Id.TRACE_TABLE.value, data) if len(rows) else html.P("No collective in the trace."),
             html.H4("Steps (measured from the intervals; savings inferred)"),
             _paged_table(steps, Id.TRACE_STEPS.value, data)]
    if report.matched:
        parts += [html.H4("Across ranks (transfer from the last arrival; each rank's wait apart)"),
                  _paged_table(LazyRows(len(report.matched), lambda i: _matched_row(report.matched[i])),
                               Id.TRACE_MATCHED.value, data)]
    if report.unmatched:
        parts += [html.P(f"{len(report.unmatched)} call(s) not matched across ranks: "
                         + "; ".join(f"{u.key}: {u.why}" for u in report.unmatched[:5]))]
    return html.Div(parts)


def page_trace(data: Data, pid: str | None) -> Any:
    from dash import dcc, html

    return html.Div([
        dcc.Upload(html.Div(["Drop PyTorch profiler traces here (one file per rank, .json or .json.gz) or ",
                             html.A("choose files")]), id=Id.TRACE_UPLOAD.value, multiple=True,
                   style={"border": "1px dashed #888", "padding": "16px", "textAlign": "center"},
                   max_size=MAX_UPLOAD_BYTES),
        html.Div(id=Id.TRACE_MSG.value),
        html.Div(trace_view(data, pid), id=Id.TRACE_VIEW.value)])


def _decoded(contents: Any, name: str) -> bytes:
    """An upload's bytes (a data URL from dcc.Upload) under the size limit, or BadInput
    naming the file."""
    if not isinstance(contents, str) or len(contents) > 2 * MAX_UPLOAD_BYTES or "," not in contents:
        raise BadInput(f"{name}: not a readable upload")
    try:
        raw = base64.b64decode(contents.split(",", 1)[1], validate=True)
    except (ValueError, base64.binascii.Error):
        raise BadInput(f"{name}: not a readable upload") from None
    if len(raw) > MAX_UPLOAD_BYTES:
        raise BadInput(f"{name}: {len(raw)} bytes is over the {MAX_UPLOAD_BYTES}-byte limit")
    return raw


def upload_traces(contents: Any, filenames: Any, pid: Any, data: Data) -> Any:
    """Trace files dropped on the Trace page: each under the size limit, read as a trace
    (never executed, never kept on disk past the reading); all of them replace the traces
    shown. Returns (message, view)."""
    import os
    import tempfile

    from dash import html

    from ..readers.traces import read_job

    if not contents:
        return "", trace_view(data, pid)
    if isinstance(contents, str):
        contents, filenames = [contents], [filenames]
    if not isinstance(contents, list) or len(contents) > 64:
        return html.Div("not a readable upload", style={"color": "red"}), trace_view(data, pid)
    names = filenames if isinstance(filenames, list) and len(filenames) == len(contents) else [None] * len(contents)
    with tempfile.TemporaryDirectory(prefix="linkroof-trace-") as tmp:
        paths = []
        for i, (c, n) in enumerate(zip(contents, names)):
            name = n if isinstance(n, str) and 0 < len(n) < 256 else f"upload{i}"
            try:
                raw = _decoded(c, name)
            except BadInput as e:
                return html.Div(str(e), style={"color": "red"}), trace_view(data, pid)
            path = os.path.join(tmp, f"{i}.json")
            with open(path, "wb") as f:
                f.write(raw)
            paths.append(path)
        try:
            traces = read_job(paths)
        except LinkroofError as e:
            return html.Div(f"refused: {str(e).replace(tmp + '/', '')}", style={"color": "red"}), trace_view(data, pid)
    for t, n in zip(traces, names):
        t.path = n if isinstance(n, str) and len(n) < 256 else t.path
    data.traces = traces
    return (html.Div(f"read {len(traces)} trace file(s)", style={"color": "green"}), trace_view(data, pid))


def page_runs(data: Data, pid: str | None) -> Any:
    from dash import dcc, html

    with data.store() as s:
        total = s.count()
    choices = [c for c in data.choices()]
    return html.Div([
        html.P(f"{total} profiles in the store."),
        dcc.Input(id=Id.RUNS_PAGE.value, type="number", min=1, value=1, step=1),
        html.Div(runs_table(1, data), id=Id.RUNS_TABLE.value),
        html.H4("Compare two runs"),
        html.Div([dcc.Dropdown(choices, choices[0]["value"] if choices else None, id=Id.RUN_A.value,
                               style={"width": "420px"}),
                  dcc.Dropdown(choices, choices[-1]["value"] if choices else None, id=Id.RUN_B.value,
                               style={"width": "420px"})], style={"display": "flex", "gap": "12px"}),
        html.Div(id=Id.RUNS_DIFF.value),
        html.H4("Add a profile"),
        dcc.Upload(html.Div(["Drop a profile JSON here or ", html.A("choose a file")]), id=Id.UPLOAD.value,
                   style={"border": "1px dashed #888", "padding": "16px", "textAlign": "center"}, max_size=MAX_UPLOAD_BYTES),
        html.Div(id=Id.UPLOAD_MSG.value),
    ])


def runs_table(page: Any, data: Data) -> Any:
    if page is None or page == "":
        page = 1
    if isinstance(page, bool) or not isinstance(page, (int, float, str)):
        raise BadInput("a page is a whole number")
    try:
        number = float(page)
    except ValueError:
        raise BadInput(f"a page is a whole number, not {str(page)[:20]!r}") from None
    if not (number == number and 1 <= number <= 1e6):
        raise BadInput(f"page {str(page)[:20]} does not exist")
    page = int(number)
    with data.store() as s:
        rows = s.list(limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE)
    return _table(rows, Id.RUNS_LIST.value, PAGE_SIZE)


def runs_diff(a: str | None, b: str | None, data: Data) -> Any:
    from dash import html

    if not a or not b:
        return ""
    pa, pb = data.get(a), data.get(b)  # only ids the store lists, or the reference: BadInput otherwise
    result = compare_profiles(pa, pb)
    verdict = result.verdict(pa.id, pb.id) + "."
    if not result.compared:
        return _missing(verdict)
    if not result.changed:
        return html.P(verdict, id=Id.RUNS_DIFF_NONE.value)
    return html.Div([html.P(verdict), _table(result.changed, Id.RUNS_DIFF_TABLE.value)])


def upload(contents: str | None, filename: str | None, data: Data) -> Any:
    """Accepts only schema-valid profile JSON under the size limit; never executes anything."""
    from dash import html

    from ..errors import LinkroofError
    from ..schema import loads

    if not contents:
        return ""
    filename = filename if isinstance(filename, str) and len(filename) < 256 else "upload"
    try:
        raw = _decoded(contents, filename)
    except BadInput as e:
        return html.Div(str(e), className="upload-error", style={"color": "red"})
    try:
        profile = loads(raw, Profile)
    except LinkroofError as e:
        return html.Div(f"{filename}: refused: {e}", className="upload-error", style={"color": "red"})
    try:
        with data.store() as s:
            s.put(profile)
            unchanged = s.unchanged
    except LinkroofError as e:
        return html.Div(f"{filename}: {e}", className="upload-error", style={"color": "red"})
    if unchanged:
        return html.Div(f"{filename}: profile {profile.id} is already in the store, identical: nothing to do",
                        className="upload-ok", style={"color": "green"})
    return html.Div(f"{filename}: added profile {profile.id}", className="upload-ok", style={"color": "green"})


def _refuse_unknown_requests(app: Any) -> None:
    """A request the app cannot serve (a callback output it does not have, a body that
    is not a callback's) is answered 400 with a line, never a 500 with a traceback."""
    from flask import jsonify
    from werkzeug.exceptions import HTTPException

    def refuse(e: Exception) -> Any:
        if isinstance(e, HTTPException) and (e.code or 500) < 500:
            return e
        return jsonify({"error": f"bad request: {type(e).__name__}"}), 400

    app.server.register_error_handler(Exception, refuse)


PAGE_BUILDERS = {"/": page_overview, "/topology": page_topology, "/bandwidth": page_bandwidth,
                 "/collectives": page_collectives, "/roofline": page_roofline, "/trace": page_trace,
                 "/runs": page_runs}


def banner(pid: str | None, data: Data) -> Any:
    """The line that tops every page when the profile shown is not this machine's."""
    from dash import html

    from ..profiler.session import provenance

    text = provenance(data.get(pid), data.here)
    return html.Div(text, id=Id.BANNER.value, className="banner",
                    style={"background": "#fcf8e3", "color": "#8a6d3b", "border": "1px solid #faebcc",
                           "padding": "8px", "fontWeight": "bold", "marginBottom": "8px"}) if text else None


def render_page(pathname: Any, pid: Any, data: Data) -> Any:
    from dash import html

    builder = PAGE_BUILDERS.get(pathname or "/") if isinstance(pathname, (str, type(None))) else None
    if builder is None:
        return html.Div([html.H2("Not found"), html.P(f"No page {str(pathname)[:100]}")])
    top = banner(pid, data)
    page = builder(data, pid)
    return html.Div([top, page]) if top is not None else page


def create_app(store_path: str | None = None, profile: Profile | None = None, here: Any = None,
               traces: list | None = None, token: str | None = None) -> Any:
    import dash
    import dash_ag_grid  # noqa: F401 - component libraries must be loaded before the first callback
    from dash import Input, Output, State, dcc, html

    data = Data(store_path, profile, here, traces)
    # plotly.js: the cartesian bundle from assets/ where it fits the installed plotly, else
    # dcc.Graph's own full bundle (dashboard/plotlyjs.py)
    app = dash.Dash(__name__, title="linkroof", suppress_callback_exceptions=True, assets_folder=str(plotlyjs.ASSETS),
                    assets_ignore="" if plotlyjs.fits() else plotlyjs.IGNORE_BUNDLE)
    if token:
        require_token(app.server, token)
    choices = data.choices()
    app.layout = html.Div([
        dcc.Location(id=Id.URL.value),
        html.Div([html.B("linkroof", style={"fontSize": "20px"}),
                  *[dcc.Link(label, href=href, style={"margin": "0 10px"}) for href, label in PAGES],
                  dcc.Dropdown(choices, choices[0]["value"], id=Id.PROFILE.value, clearable=False,
                               style={"width": "480px", "marginLeft": "auto"})],
                 style={"display": "flex", "alignItems": "center", "padding": "8px",
                        "borderBottom": "1px solid #ddd"}),
        dcc.Loading(html.Div(id=Id.CONTENT.value, style={"padding": "12px"})),
    ], style={"fontFamily": "sans-serif"})

    if data.traces:  # the traces' report made with their reading, before the first page asks for it
        data.trace_report(choices[0]["value"])
    page, fig = guarded(_bad), guarded(_figure_saying)
    app.callback(Output(Id.CONTENT.value, "children"), Input(Id.URL.value, "pathname"),
                 Input(Id.PROFILE.value, "value"))(page(lambda path, pid: render_page(path, pid, data)))
    app.callback(Output(Id.TOPO_DETAIL.value, "children"), Input(Id.TOPO_GRAPH.value, "clickData"),
                 State(Id.PROFILE.value, "value"))(page(lambda click, pid: topology_detail(click, pid, data)))
    app.callback(Output(Id.HEATMAP.value, "figure"), Input(Id.PATTERN.value, "value"),
                 Input(Id.MECHANISM.value, "value"), Input(Id.RELATIVE.value, "value"),
                 State(Id.PROFILE.value, "value"))(fig(lambda pat, mech, rel, pid: heatmap(pat, mech, rel, pid, data)))
    app.callback(Output(Id.COLL_TABLE.value, "children"), Input(Id.COLL_SELECT.value, "value"),
                 State(Id.PROFILE.value, "value"))(page(lambda title, pid: collective_table(title, pid, data)))
    app.callback(Output(Id.RUNS_TABLE.value, "children"), Input(Id.RUNS_PAGE.value, "value"))(
        page(lambda n: runs_table(n, data)))
    app.callback(Output(Id.RUNS_DIFF.value, "children"), Input(Id.RUN_A.value, "value"),
                 Input(Id.RUN_B.value, "value"))(page(lambda a, b: runs_diff(a, b, data)))
    app.callback(Output(Id.UPLOAD_MSG.value, "children"), Input(Id.UPLOAD.value, "contents"),
                 State(Id.UPLOAD.value, "filename"))(page(lambda c, f: upload(c, f, data)))
    app.callback(Output(Id.TRACE_MSG.value, "children"), Output(Id.TRACE_VIEW.value, "children"),
                 Input(Id.TRACE_UPLOAD.value, "contents"), State(Id.TRACE_UPLOAD.value, "filename"),
                 State(Id.PROFILE.value, "value"))(guarded(lambda t: (_bad(t), ""))(
                     lambda c, f, pid: upload_traces(c, f, pid, data)))
    app.callback(Output(Id.TRACE_TIMELINE.value, "figure"), Input(Id.TRACE_TIMELINE.value, "relayoutData"),
                 State(Id.PROFILE.value, "value"), prevent_initial_call=True)(
        fig(lambda r, pid: trace_zoom(r, pid, data)))
    for tid in (Id.TRACE_TABLE, Id.TRACE_STEPS, Id.TRACE_MATCHED):
        app.callback(Output(tid.value, "getRowsResponse"), Input(tid.value, "getRowsRequest"),
                     prevent_initial_call=True)(
            guarded(lambda t: {"rowData": [], "rowCount": 0})(lambda req, t=tid.value: page_rows(req, t, data)))
    _refuse_unknown_requests(app)
    app.linkroof_data = data  # for tests
    return app


TOKEN_COOKIE = "linkroof_token"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def require_token(server: Any, token: str) -> None:
    """Every request must carry the token: as `?token=` once (it is then kept in a cookie
    that scripts cannot read and other sites do not send), the cookie, or an
    `Authorization: Bearer` header. Anything else is a 401 with one line; the token is
    compared in constant time."""
    import hmac

    from flask import request

    want = token.encode()

    def same(got: Any) -> bool:
        return isinstance(got, str) and hmac.compare_digest(got.encode(), want)

    @server.before_request
    def check() -> Any:
        auth = request.headers.get("Authorization", "")
        if same(request.cookies.get(TOKEN_COOKIE)) or (auth.startswith("Bearer ") and same(auth[7:])):
            return None
        if same(request.args.get("token")):
            request.environ["linkroof.set_token"] = True
            return None
        return ("linkroof dashboard: this address needs the token printed when it was started "
                "(open the URL with ?token=...)\n", 401, {"Content-Type": "text/plain; charset=utf-8"})

    @server.after_request
    def keep(response: Any) -> Any:
        if request.environ.get("linkroof.set_token"):
            response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="Strict")
        return response


class ServeError(LinkroofError):
    """The dashboard cannot listen where asked (a port in use, a host that does not resolve)."""


def check_listen(host: str, port: int) -> None:
    """Refuse, with what to do, a host that does not resolve or a port already in use,
    before anything is printed or served (waitress raised OSError and socket.gaierror
    as tracebacks)."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise ServeError(f"cannot serve on host {host!r}: it does not resolve ({e.strerror or e}); give --host "
                         "127.0.0.1, ::1 or an address of this machine") from None
    family, kind, proto, _, addr = infos[0]
    with socket.socket(family, kind, proto) as s:
        if hasattr(socket, "SO_REUSEADDR"):  # as waitress binds: a port in TIME_WAIT is free
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError as e:
            if e.errno in (98, 48, 10048):  # EADDRINUSE: Linux, macOS, Windows
                raise ServeError(f"port {port} on {host} is in use (another dashboard, or another server): give "
                                 f"another with --port, e.g. --port {port + 1 if port < 65535 else 8051}") from None
            raise ServeError(f"cannot listen on {host} port {port}: {e.strerror or e}") from None


def serve(app: Any, host: str, port: int, debug: bool = False) -> None:
    """Serve the dashboard with waitress, a production WSGI server (Flask's development
    server warns, in red, that it is not one); --debug keeps Dash's own server, which
    reloads on code changes."""
    if debug:
        app.run(host=host, port=port, debug=True)
        return
    import logging

    from waitress import serve as waitress_serve

    logging.getLogger("waitress").setLevel(logging.WARNING)  # the URL is said once, by linkroof
    try:  # the callers check the port before printing its URL (check_listen)
        waitress_serve(app.server, host=host, port=port, threads=8)
    except OSError as e:  # taken between that check and the bind, or a caller that did not check
        raise ServeError(f"cannot serve on {host} port {port}: {e.strerror or e}; give another with --port") from None
