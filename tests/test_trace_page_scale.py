"""The Trace page stays usable at many ranks and calls: the timeline drawn at the view's
resolution with every activity apart once zoomed in, the tables paged by the server
(only the page asked for travels), the NCCL figure one marker per size beyond a few
thousand calls. Thresholds are lowered here so that small traces cross them; the
timings at 64 ranks are benchmarks/trace_view_scale.py's (RESULTS.md)."""

import json

import plotly
import pytest

import tracegen as G
from linkroof.dashboard import app as A
from linkroof.dashboard import figures as F
from linkroof.readers import traces as P


def _busy_rank(rank):
    """tier1's calls, then 200 short GEMMs one after another on a stream of their own."""
    b = G.tier1_rank(rank, start_skew_us=10.0 * rank)
    for k in range(200):
        b.kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", 5000.0 + 3.0 * k, 2.0, stream=9)
    return b


@pytest.fixture
def data(tmp_path):
    traces = [P.read_trace(_busy_rank(r).write(tmp_path / f"r{r}.json")) for r in range(4)]
    return A.Data(None, None, None, traces)


def test_long_tables_are_paged_by_the_server(data, monkeypatch):
    monkeypatch.setattr(A, "PAGED_OVER", 2)
    view = A.trace_view(data, "reference")
    body = json.dumps(view, cls=plotly.utils.PlotlyJSONEncoder)
    grid = json.loads(body)
    found = []

    def walk(node):
        if isinstance(node, dict):
            if node.get("props", {}).get("id") == A.Id.TRACE_TABLE.value:
                found.append(node["props"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(grid)
    (props,) = found
    assert props["rowModelType"] == "infinite" and not props.get("rowData")
    n = len(data.trace_report("reference").rows)
    page = A.page_rows({"startRow": 0, "endRow": 3}, A.Id.TRACE_TABLE.value, data)
    assert page["rowCount"] == n and len(page["rowData"]) == min(3, n)
    desc = A.page_rows({"startRow": 0, "endRow": n, "sortModel": [{"colId": "duration_us", "sort": "desc"}]},
                       A.Id.TRACE_TABLE.value, data)["rowData"]
    times = [r["duration_us"] for r in desc]
    assert times == sorted(times, reverse=True)


@pytest.mark.parametrize("request_, message", [
    ("rows please", "not a page request"),
    ({"startRow": 5, "endRow": 2}, "not a page"),
    ({"startRow": 0, "endRow": 10 ** 6}, "not a page"),
    ({"startRow": 0, "endRow": 5, "sortModel": [{"colId": "nope", "sort": "asc"}]}, "no column"),
])
def test_bad_page_requests_are_refused(data, monkeypatch, request_, message):
    monkeypatch.setattr(A, "PAGED_OVER", 2)
    A.trace_view(data, "reference")
    with pytest.raises(A.BadInput, match=message):
        A.page_rows(request_, A.Id.TRACE_TABLE.value, data)


def test_timeline_merges_at_the_view_and_keeps_detail_on_zoom(data, monkeypatch):
    report = data.trace_report("reference")
    acts = sum(len(t.activities) for t in report.traces)
    whole = F.trace_timeline_figure(report)
    merged = sum(len(t.x) for t in whole.data if t.type == "bar")
    # 200 GEMMs 1 us apart in a view of ~5.6 ms at ~1700 bars a row: merged, and said
    assert merged < acts and "zoom in" in whole.layout.title.text
    assert any("activities (" in n for t in whole.data if t.type == "bar" for n in t.customdata)
    gemms = sorted((a for t in report.traces for a in t.activities if a.stream == 9 and t.rank == 0),
                   key=lambda a: a.start_ns)
    t0 = min(x.start_ns for t in report.traces for x in t.activities)
    window = ((gemms[0].start_ns - t0) / 1e3 - 0.5, (gemms[4].end_ns - t0) / 1e3 + 0.1)
    zoom = A.trace_zoom({"xaxis.range[0]": window[0], "xaxis.range[1]": window[1]}, "reference", data)
    rank0 = [n for t in zoom.data if t.type == "bar" for y, n in zip(t.y, t.customdata) if y.startswith("rank 0 ")]
    assert rank0 == [gemms[0].name[:80]] * 5  # each apart, none merged
    assert list(zoom.layout.xaxis.range) == list(window) and "zoom in" not in zoom.layout.title.text
    monkeypatch.setattr(F, "TRACE_BARS", 10 ** 7)  # a fine enough resolution draws every activity apart
    assert sum(len(t.x) for t in F.trace_timeline_figure(report).data if t.type == "bar") == acts
    with pytest.raises(A.BadInput):
        A.trace_zoom({"xaxis.range[0]": 5, "xaxis.range[1]": 1}, "reference", data)


def test_many_calls_draw_one_marker_per_size(data, monkeypatch):
    report = data.trace_report("reference")
    few = F.trace_collectives_figure(report, data.get("reference"))
    monkeypatch.setattr(F, "TRACE_CALLS_DRAWN", 1)
    many = F.trace_collectives_figure(report, data.get("reference"))
    mine = [t for t in many.data if t.name.startswith("trace:")]
    assert mine and all("median per size" in t.name for t in mine)
    assert sum(len(t.x) for t in mine) < sum(len(t.x) for t in few.data if t.name.startswith("trace:"))
    assert all("calls; median" in c for t in mine for c in t.customdata)


def test_the_report_is_made_once_per_traces_and_profile(data):
    a = data.trace_report("reference")
    assert data.trace_report("reference") is a
    data.traces = list(data.traces[:2])
    assert data.trace_report("reference") is not a
