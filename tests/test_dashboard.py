"""Dashboard callbacks called directly, on the bundled 2xH200 profile and a temp store."""

import base64
import json

import pytest

from linkroof.dashboard import app as A
from linkroof.dashboard import report as R
from linkroof.roofline import summaries as S
from linkroof.profiler.session import bundled_profile
from linkroof.schema import dumps


@pytest.fixture
def app(tmp_path):
    return A.create_app(str(tmp_path / "s.sqlite"))


def text_of(component) -> str:
    """All text inside a Dash component tree."""
    if component is None:
        return ""
    if isinstance(component, (str, int, float)):
        return str(component)
    if isinstance(component, (list, tuple)):
        return " ".join(text_of(c) for c in component)
    out = text_of(getattr(component, "children", None))
    rows = getattr(component, "rowData", None)  # a grid's rows
    if isinstance(rows, list):
        out += " " + json.dumps(rows)
    return out


def test_every_page_renders(app):
    data = app.linkroof_data
    for path, _ in A.PAGES:
        page = A.render_page(path, "reference", data)
        assert page is not None
    assert "Not found" in text_of(A.render_page("/nope", None, data))
    overview = text_of(A.render_page("/", None, data))
    assert "NVIDIA H200" in overview and "NVLink peer (ce)" in overview and "88.1" in overview


def test_topology_click_shows_the_gpus_figures(app):
    data = app.linkroof_data
    assert "Click a GPU" in text_of(A.topology_detail(None, None, data))
    out = text_of(A.topology_detail({"points": [{"customdata": "gpu:1"}]}, None, data))
    assert "GPU1:" in out and "p2p_write_bandwidth" in out
    assert "not a GPU" in text_of(A.topology_detail({"points": [{"customdata": "switch"}]}, None, data))


def test_heatmap_callback(app):
    fig = A.heatmap("p2p_write", "ce", "abs", None, app.linkroof_data)
    assert fig.data[0].z[0][1] == pytest.approx(396.4, abs=0.5)
    rel = A.heatmap("p2p_write", "ce", "rel", None, app.linkroof_data)
    assert 75 < rel.data[0].z[0][1] < 100


def test_runs_pagination_comparison_and_upload(app, tmp_path):
    data = app.linkroof_data
    ref = bundled_profile()
    good = base64.b64encode(dumps(ref).encode()).decode()
    msg = text_of(A.upload(f"data:application/json;base64,{good}", "ref.json", data))
    assert "added profile" in msg
    assert "already in the store" in text_of(A.upload(f"data:application/json;base64,{good}", "ref.json", data))
    bad = base64.b64encode(b'{"schema": "linkroof.Profile", "schema_version": 1}').decode()
    assert "refused" in text_of(A.upload(f"data:application/json;base64,{bad}", "bad.json", data))
    junk = base64.b64encode(b"import os; os.system('echo pwned')").decode()
    assert "refused: not valid JSON" in text_of(A.upload(f"data:text/plain;base64,{junk}", "x.py", data))
    assert "not a readable upload" in text_of(A.upload("garbage", "x", data))
    table = A.runs_table(1, data)
    assert len(table.rowData) == 1 and table.rowData[0]["id"] == ref.id
    assert "No figure changed" in text_of(A.runs_diff("reference", ref.id, data))
    import dataclasses

    slower = dataclasses.replace(ref, id="slower", measurements=tuple(
        dataclasses.replace(m, times_s=tuple(t * 1.2 for t in m.times_s)) if m.spec.name == "p2p_write_bandwidth"
        else m for m in ref.measurements))
    with data.store() as s:
        s.put(slower)
    diff = text_of(A.runs_diff("reference", "slower", data))
    assert "changed beyond the noise" in diff and "-16.67" in diff


def test_report(tmp_path):
    html = R.report_html(bundled_profile())
    assert html.count("plotly.js") >= 1 and html.count("<h2>") >= 6 and "NV18" in html
    assert len(html) < 20e6


def test_figure_builders_on_the_reference():
    from linkroof.dashboard import figures as F
    from linkroof.roofline.model import MachineModel

    p = bundled_profile()
    model = MachineModel.from_profile(p)
    topo = F.topology_figure(p.topology, p)
    kinds = {t.name for t in topo.data}
    assert {"GPU", "NVSwitch", "CPU", "NVLink x18", "PCIe"} <= kinds
    gpus = next(t for t in topo.data if t.name == "GPU")
    assert list(gpus.customdata) == ["gpu:0", "gpu:1"]
    import fakes
    from linkroof.profiler.probe import probe_source
    from linkroof.profiler.recording import replay_source

    hgx = F.topology_figure(probe_source(replay_source(fakes.hgx_h100_8().recording(), "hgx")))
    by_name = {t.name: t for t in hgx.data}
    assert len(by_name["PCIe switch"].x) == 4 and len(by_name["NIC"].x) == 8 and len(by_name["CPU"].x) == 2
    assert len(set(by_name["NIC"].x)) == 8  # NICs sharing a GPU sit side by side
    heat = F.pair_matrix_figure(p, "p2p_read", "sm", relative=True)
    assert heat.data[0].zmax == 100 and heat.data[0].z[0][0] is None  # no self pairs
    assert heat.layout.yaxis.title.text == "source" and "% of spec" in heat.layout.title.text
    sweep = F.bandwidth_sweep_figure(model)
    assert sweep.layout.xaxis.type == "log" and sweep.layout.yaxis.title.text == "GB/s"
    named = [t for t in sweep.data if t.showlegend is not False]
    assert len({t.name for t in named}) == len(named)  # no duplicate legend entries (the ungated ce read has its own)
    assert "ce (ungated) p2p_read" in {t.name for t in named} and not any("nccl" in t.name for t in named)
    colours = {}
    for t in named:  # one colour per mechanism
        colours.setdefault(t.name.split()[0], set()).add(t.line.color)
    assert all(len(c) == 1 for c in colours.values()) and len({c.pop() for c in colours.values()}) == len(colours)
    blocks = F.sm_sweep_figure(p)
    lines = [t for t in blocks.data if t.showlegend is not False]
    assert {t.name for t in lines} == {"sm p2p_read", "tma p2p_read", "red p2p_write", "tma_red p2p_write"}
    assert all(len(t.x) >= 5 for t in lines)  # the copies beside a GEMM (blocks = k SMs) are not in it
    assert all("reach 90%" in t.hovertext for t in blocks.data if t.showlegend is False)
    head = F.headline_figure(S.headline_rows(p, model))
    assert head.data[0].orientation == "h" and max(head.data[0].x) <= 100
    coll = F.collectives_figure(p, model)
    assert coll.layout.yaxis.title.text == "bus bandwidth (GB/s)"
    names = [t.name for t in coll.data]  # one line per collective and data type (fp32 unnamed)
    assert {"all_reduce (linkroof)", "all_reduce bf16 (linkroof)", "all_reduce fp16 (linkroof)"} <= set(names)
    fp32 = next(t for t in coll.data if t.name == "all_reduce (linkroof)")
    ref = {m.spec.message_bytes: m.busbw_bytes_per_s / 1e9 for m in p.measurements
           if m.spec.name == "nccl_all_reduce" and m.spec.params["dtype"] == "fp32" and not m.spec.params["in_place"]
           and m.spec.params["timing"] == "device"}  # the GPU's time per call; the host-launch time is in the tables
    assert dict(zip(fp32.x, fp32.y)) == pytest.approx(ref)
    assert any("NVLink spec" in a.text for a in coll.layout.annotations)


def test_collectives_figure_overlays_imported_nccl_tests(tmp_path):
    import dataclasses

    from fakes import DATA
    from linkroof.dashboard import figures as F
    from linkroof.readers.tools import import_file

    imp = import_file("nccl-tests", DATA / "anchor" / "nt_allreduce.txt")
    p = dataclasses.replace(bundled_profile(), measurements=tuple(imp.measurements))
    fig = F.collectives_figure(p)
    (trace,) = fig.data
    assert trace.name == "all_reduce (nccl-tests)" and trace.line.dash == "dash"
    assert max(trace.y) == pytest.approx(313.81, abs=0.01)


def test_dashboard_off_loopback_needs_public_and_then_a_token(monkeypatch, tmp_path):
    """Issue 41 item 2: another address is refused without --public; with it, a warning
    and a token; --debug (Dash's debugger runs code) never with --public."""
    from click.testing import CliRunner

    from linkroof.cli import cli

    served = {}
    monkeypatch.setattr("waitress.serve", lambda app, host, port, threads: served.update(host=host, port=port,
                                                                                         app=app))
    store = ["--store", str(tmp_path / "s.sqlite")]
    res = CliRunner().invoke(cli, store + ["dashboard", "--host", "0.0.0.0", "--port", "8123"])
    assert res.exit_code == 1 and "--public" in res.output and served == {}
    res = CliRunner().invoke(cli, store + ["dashboard", "--host", "0.0.0.0", "--public", "--debug"])
    assert res.exit_code == 1 and "debugger" in res.output and served == {}
    res = CliRunner().invoke(cli, store + ["dashboard", "--host", "10.0.0.1", "--public", "--token", "short"])
    assert res.exit_code == 1 and "16" in res.output and served == {}
    res = CliRunner().invoke(cli, store + ["dashboard", "--host", "0.0.0.0", "--port", "8123", "--public"])
    assert res.exit_code == 0 and "reachable from other machines" in res.output
    assert served["host"] == "0.0.0.0" and served["port"] == 8123
    token = res.output.split("?token=")[1].split()[0]
    assert len(token) >= 24
    client = served["app"].test_client()
    assert client.get("/").status_code == 401
    assert client.get("/?token=wrong" + token[5:]).status_code == 401
    assert client.post("/_dash-update-component", json={}).status_code == 401  # callbacks too, not just pages
    ok = client.get("/?token=" + token)
    assert ok.status_code == 200 and "HttpOnly" in ok.headers["Set-Cookie"] and "SameSite=Strict" in ok.headers[
        "Set-Cookie"]
    assert client.get("/").status_code == 200  # the cookie now
    other = served["app"].test_client()
    assert other.get("/_dash-layout", headers={"Authorization": "Bearer " + token}).status_code == 200
    assert other.get("/_dash-layout").status_code == 401
    served.clear()
    res = CliRunner().invoke(cli, store + ["dashboard"])
    assert res.exit_code == 0 and "reachable" not in res.output and served["host"] == "127.0.0.1"
    assert served["app"].test_client().get("/").status_code == 200  # this machine only: no token unless asked


def test_report_cli(tmp_path):
    from click.testing import CliRunner

    from linkroof.cli import cli

    out = tmp_path / "r.html"
    res = CliRunner().invoke(cli, ["--store", str(tmp_path / "s.sqlite"), "report", "--profile", "reference",
                                   "--out", str(out)])
    assert res.exit_code == 0 and out.stat().st_size > 1_000_000 and "Wrote" in res.output
    try:
        import kaleido  # noqa: F401
    except ImportError:
        res = CliRunner().invoke(cli, ["--store", str(tmp_path / "s.sqlite"), "report", "--profile", "reference",
                                       "--out", str(out), "--images", str(tmp_path / "img")])
        assert res.exit_code == 1 and "needs kaleido" in res.output


def test_links_below_expectation_are_warned():
    import dataclasses


    ref = bundled_profile()
    slow = tuple(dataclasses.replace(m, times_s=tuple(t * 3 for t in m.times_s)) if m.spec.pattern in
                 ("p2p_read", "p2p_write", "bidir") or m.spec.mechanism == "nccl" else m for m in ref.measurements)
    warnings = S.warnings_of(dataclasses.replace(ref, measurements=slow))
    assert any(w.startswith("nvlink below expectation") for w in warnings)
    assert not any("below expectation" in w for w in S.warnings_of(ref))


def test_communication_roofline_places_calls_baselines_and_trace_calls(tmp_path):
    """Every placed communication workload, every NCCL baseline of the profile and every
    trace call is a dot at its size and bandwidth, sized by its time, with its fraction
    of the copy roof at that size and its limiter in the hover."""
    import tracegen as G
    from linkroof.dashboard import figures as F
    from linkroof.readers.traces import analyze, read_job
    from linkroof.roofline.model import MachineModel
    from linkroof.roofline.place import place
    from linkroof.roofline.workload import collective

    prof = bundled_profile()
    model = MachineModel.from_profile(prof)
    p = place(collective("all_reduce", 1 << 30, 2), 3.4e-3, model)
    files = [G.tier1_rank(0).write(tmp_path / "r0.json.gz"), G.tier1_rank(1, 60.0).write(tmp_path / "r1.json.gz")]
    report = analyze(read_job(files), prof)
    fig = F.bandwidth_roofline_figure(model, [p], prof, report)
    by = {t.name: t for t in fig.data}
    pts = by["placed: communication"]
    assert pts.x[0] == 1 << 30 and pts.y[0] == pytest.approx((1 << 30) / 3.4e-3 / 1e9)
    # the roofs: the copy mechanisms' curves only; NCCL is a baseline placed under them
    roofs = [t for t in fig.data if t.mode == "lines"]
    assert roofs and all(not t.name.startswith("nccl") for t in roofs)
    # every NCCL baseline a dot: as many as the out-of-place GPU-timed NCCL figures
    nccl = [m for m in prof.measurements if m.spec.mechanism == "nccl" and not m.spec.params.get("in_place")
            and m.spec.params.get("rank_time") != "this rank" and m.spec.params.get("timing") != "host_launch"]
    dots = [t for t in fig.data if t.name.startswith("NCCL ")]
    assert sum(len(t.x) for t in dots) == len(nccl) > 100
    ar = next(t for t in dots if t.name == "NCCL all_reduce fp32 (linkroof)")
    ms = sorted((m for m in nccl if m.spec.pattern == "all_reduce" and m.spec.params.get("dtype") == "fp32"),
                key=lambda m: m.median_s)
    i_small = list(ar.x).index(ms[0].spec.message_bytes)
    i_big = list(ar.x).index(ms[-1].spec.message_bytes)
    assert ar.y[i_big] == pytest.approx(ms[-1].busbw_bytes_per_s / 1e9)
    assert ar.marker.size[i_big] > ar.marker.size[i_small]  # sized by time: the longest call the largest dot
    assert "latency-bound" in ar.customdata[i_small] and "link-bound" in ar.customdata[i_big]
    big = ms[-1]
    top = max(c.at(big.spec.message_bytes) for c in model.curves
              if c.link == "nvlink" and c.mechanism in ("ce", "sm", "tma") and not c.variant and len(c.points) >= 4)
    assert f"{big.busbw_bytes_per_s / top:.0%} of the best copy roof here" in ar.customdata[i_big]
    # the trace's calls, each a dot, with their gap to NCCL
    traced = [t for t in fig.data if t.name.startswith("trace: ")]
    drawable = [r for r in report.rows if r.call.busbw and r.call.size_bytes and (r.call.group_size or 0) > 1]
    assert sum(len(t.x) for t in traced) == len(drawable) > 0
    assert all("of NCCL here" in c or "no NCCL figure" in c for t in traced for c in t.customdata)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert "(bytes)" in fig.layout.xaxis.title.text and "GB/s" in fig.layout.yaxis.title.text
    assert any("measured" in a.text for a in fig.layout.annotations)  # the roof named on the plot


def test_hbm_roofline_places_each_counted_kernel():
    """A placement whose timeline holds ncu-counted kernels: each kernel a dot at its
    FLOPs over its DRAM bytes and its FLOP/s per call, with the fraction of the roof at
    that intensity; kernels without FLOPs are not placed (no intensity)."""
    import dataclasses

    from linkroof.dashboard import figures as F
    from linkroof.roofline.model import MachineModel
    from linkroof.roofline.place import place
    from linkroof.roofline.workload import gemm_all_reduce
    from linkroof.schema import KernelGroup, TimelineSummary

    model = MachineModel.from_profile(bundled_profile())
    gemm = KernelGroup(name="sm90_xmma_gemm_f16f16", kind="kernel", kernel_class="compute", class_basis="counters",
                       launches_per_call=1, time_per_call_s=200e-6, median_s=200e-6,
                       counters={"dram_read_bytes": 60e6, "dram_write_bytes": 40e6, "flops:fp16": 137e9},
                       why="tensor pipes 80 % busy")
    copy = KernelGroup(name="memcpy_kernel", kind="kernel", kernel_class="memory", class_basis="counters",
                       launches_per_call=1, time_per_call_s=50e-6, median_s=50e-6,
                       counters={"dram_read_bytes": 1e8, "dram_write_bytes": 1e8})
    p = dataclasses.replace(place(gemm_all_reduce(4096, 4096, 4096, "fp16", 2), 0.6e-3, model),
                            timeline=TimelineSummary(source="cupti", calls=1, kernels=(gemm, copy)))
    fig = F.hbm_roofline_figure(model, [p])
    t = next(t for t in fig.data if t.name == "kernels (ncu counters)")
    assert len(t.x) == 1
    assert t.x[0] == pytest.approx(137e9 / 100e6) and t.y[0] == pytest.approx(137e9 / 200e-6)
    comp = model.compute("fp16")
    assert f"{137e9 / 200e-6 / comp.value:.0%} of the roof at this intensity (compute-bound there)" in t.customdata[0]
    assert "tensor pipes" in t.customdata[0]


def test_collectives_page_has_nccl_tests_tables(app):
    page = A.page_collectives(app.linkroof_data, "reference")
    text = text_of(page)
    assert '"out_busbw_GBps"' in text and '"in_time_us"' in text  # the all-reduce table shown first
    other = text_of(A.collective_table("sendrecv fp32 (linkroof)", "reference", app.linkroof_data))
    assert '"size": 1073741824' in other and '"in_time_us"' not in other  # send/recv has no in-place form
    assert "No figures" in text_of(A.collective_table("nothing", "reference", app.linkroof_data))
    from linkroof.roofline.summaries import collective_rows

    rows = collective_rows(bundled_profile())["all_reduce fp32 (linkroof)"]
    big = next(r for r in rows if r["size"] == 512 << 20)
    assert big["out_busbw_GBps"] == pytest.approx(318.6, abs=0.2) and big["out_wrong"] == "0"
    assert big["count"] == (512 << 20) // 4


def test_size_axes_are_binary_and_heatmaps_show_numbers():
    from linkroof.dashboard import figures as F
    from linkroof.roofline.model import MachineModel

    p = bundled_profile()
    model = MachineModel.from_profile(p)
    for fig in (F.bandwidth_sweep_figure(model), F.collectives_figure(p, model)):
        ticks = list(fig.layout.xaxis.ticktext)
        assert "1 GiB" in ticks and "64 KiB" in ticks and not any(t.endswith("B") and t[:-1].isdigit() for t in ticks)
    heat = F.pair_matrix_figure(p, "p2p_write", "ce")
    assert heat.data[0].texttemplate == "%{z:.1f}"


def test_both_timing_definitions_are_labelled_in_the_tables():
    import factories
    from linkroof.render import collectives_tables
    from linkroof.roofline.summaries import collective_rows

    p = factories.profile([factories.collective("all_to_all", 16 << 20, 37.5e-6, timing="device", method="graph"),
                           factories.collective("all_to_all", 16 << 20, 53.1e-6, timing="host_launch",
                                                method="python loop")])
    (row,) = collective_rows(p)["all_to_all fp32 (linkroof)"]
    assert row["out_time_us"] == 37.5 and row["out_launch_time_us"] == 53.1
    from rich.console import Console

    console = Console(width=250, record=True)
    console.print(collectives_tables(collective_rows(p)))
    assert "time with host launch (us)" in console.export_text()
    from linkroof.roofline.model import MachineModel

    roof = MachineModel.from_profile(p).find("link:nvlink", "measured", "nccl")
    assert roof.value == pytest.approx((16 << 20) / 37.5e-6 / 2)  # the device time makes the ceiling (busbw x1/2)


def test_roofline_page_shows_the_decomposition_and_the_cost_terms(app):
    import dataclasses

    from linkroof.dashboard import figures as F
    from linkroof.roofline import workload as W
    from linkroof.roofline.cost import with_cost
    from linkroof.roofline.model import MachineModel
    from linkroof.roofline.place import place

    ref = bundled_profile()
    model = MachineModel.from_profile(ref)
    placed = with_cost(place(W.collective("all_reduce", 2 << 20, 2), 92e-6, model), ref, model, "nccl",
                       collective_s=28e-6, launch_s=45e-6)
    prof = dataclasses.replace(ref, id="with-placements", placements=(placed,))
    with app.linkroof_data.store() as s:
        s.put(prof, replace=True)
    page = A.page_roofline(app.linkroof_data, "with-placements")
    text = text_of(page)
    assert "Cost-model terms of this machine" in text and '"kind": "graph"' in text and '"kind": "gpu"' in text
    assert '"fraction of cost bound"' in text and '"bandwidth-only bound ms"' in text
    fig = F.decomposition_figure([placed])
    bars = {t.name: t.x[0] for t in fig.data if t.type == "bar"}
    assert bars["host launch (measured)"] == pytest.approx(45) and bars["measured NCCL"] == pytest.approx(28)
    assert sum(bars.values()) == pytest.approx(92)  # the stack is the measured time
    marker = next(t for t in fig.data if t.name == "cost-model bound")
    assert marker.x[0] == pytest.approx(placed.cost_bound_s * 1e6)
    bare = A.cost_terms_table(dataclasses.replace(ref, measurements=ref.measurements[:3]))
    assert "--only launch,sync" in text_of(bare)


def test_report_carries_the_decomposition():
    import dataclasses

    from linkroof.roofline import workload as W
    from linkroof.roofline.cost import with_cost
    from linkroof.roofline.model import MachineModel
    from linkroof.roofline.place import place

    ref = bundled_profile()
    model = MachineModel.from_profile(ref)
    placed = with_cost(place(W.collective("all_reduce", 2 << 20, 2), 92e-6, model), ref, model, "nccl")
    titles = [t for t, _ in R.report_figures(dataclasses.replace(ref, placements=(placed,)))]
    assert "Where the measured time went" in titles
    assert "Where the measured time went" not in [t for t, _ in R.report_figures(ref)]  # no placements, no bars


def test_where_the_time_went_is_per_call_for_calls_that_share_a_name():
    """Issue 30/32: three all-reduces of one name (2.5, 3.3 and 6.0 ms) drew one bar of
    11.8 ms under 'µs per call'. The bar is their mean per call, and says so."""
    import dataclasses

    from linkroof.dashboard import figures as F
    from linkroof.roofline import workload as W
    from linkroof.roofline.cost import with_cost
    from linkroof.roofline.model import MachineModel
    from linkroof.roofline.place import place

    ref = bundled_profile()
    model = MachineModel.from_profile(ref)
    wl = W.collective("all_reduce", 64 << 20, 2)
    calls = [with_cost(place(wl, t, model), ref, model, "nccl") for t in (2.5e-3, 3.3e-3, 6.0e-3)]
    fig = F.decomposition_figure(calls)
    bars = [t for t in fig.data if t.type == "bar"]
    assert all(len(t.y) == 1 and t.y[0].endswith("(mean of 3 calls)") for t in bars)
    assert sum(t.x[0] for t in bars) == pytest.approx((2.5e3 + 3.3e3 + 6.0e3) / 3)
    measured = next(t for t in fig.data if t.name == "measured time")
    assert measured.x[0] == pytest.approx(3933.33, rel=1e-4) and fig.layout.xaxis.title.text == "µs per call"
    one = F.decomposition_figure(calls[:1] + [dataclasses.replace(calls[1], workload=dataclasses.replace(wl, name="b"))])
    assert len([t for t in one.data if t.type == "bar"][0].y) == 2


def test_topology_figure_with_a_nic_near_a_gpu_not_listed():
    """A profile (imported, or edited) whose NIC names a nearest GPU the topology lacks:
    the figure draws the NIC without an edge (the clean-clone fuzz run found a KeyError)."""
    import dataclasses

    from linkroof.dashboard import figures as F
    from linkroof.profiler.session import bundled_profile

    p = bundled_profile()
    t = p.topology
    bad = dataclasses.replace(t, nics=tuple(dataclasses.replace(n, nearest_gpu=-1) for n in t.nics))
    fig = F.topology_figure(bad, p)
    assert any("NIC" in str(tr.name) or "NIC" in str(getattr(tr, "text", "")) for tr in fig.data)


def test_size_sweeps_are_log_log_grouped_and_say_the_gap():
    """Bandwidth and busbw by size on log y axes (a call at 3 % of NCCL is 1.5 decades
    below the curve, visible at any size), one colour and one legend group per mechanism
    or collective, and each trace collective's median gap to NCCL written on the plot."""
    from types import SimpleNamespace as NS

    from linkroof.dashboard import figures as F
    from linkroof.roofline.model import MachineModel

    p = bundled_profile()
    model = MachineModel.from_profile(p)
    sweep, coll = F.bandwidth_sweep_figure(model), F.collectives_figure(p, model)
    assert F.bandwidth_roofline_figure(model).layout.yaxis.type == "log"
    for fig in (sweep, coll):
        assert fig.layout.yaxis.type == "log" and fig.layout.legend.groupclick == "togglegroup"
        lo, hi = min(y for t in fig.data for y in t.y), max(y for t in fig.data for y in t.y)
        ticks = list(fig.layout.yaxis.tickvals)
        assert ticks[0] <= lo and ticks[-1] >= hi  # every point inside the labelled decades
    groups = {}
    for t in coll.data:
        groups.setdefault(t.legendgroup, set()).add(t.line.color)
    assert "all_reduce" in groups and all(len(c) == 1 for c in groups.values())
    assert len({next(iter(c)) for c in groups.values()}) == len(groups)
    assert {t.legendgroup for t in sweep.data} == {"ce", "sm", "tma", "red", "tma_red"}

    def row(size, busbw, frac, group=2):
        call = NS(busbw=busbw, size_bytes=size, group_size=group, collective="all_reduce", dtype="bf16", rank=0,
                  duration_s=1e-3)
        return NS(call=call, fraction_of_nccl=frac)

    report = NS(rows=[row(1 << 20, 2.5e9, 0.03), row(1 << 20, 3e9, 0.04), row(64 << 20, 9e9, 0.035)])
    fig = F.trace_collectives_figure(report, p, model)
    assert fig.layout.yaxis.type == "log"
    said = [a.text for a in fig.layout.annotations if "of NCCL here" in a.text]
    assert said == ["all_reduce bf16 x2: median 4% of NCCL here"]
    far = F.trace_collectives_figure(NS(rows=[row(1 << 30, 20e9, None, 64)]), p, model)
    assert any("no NCCL figure for 64 ranks in this profile" in a.text for a in far.layout.annotations)


def test_grids_are_key_first_with_a_working_page_size_selector():
    """The identifying column first and pinned, verdicts then details (basis, notes,
    how, source) last, within 320 px with their text on hover, the grid's page size among the selector's
    choices (AG Grid shows a blank selector otherwise)."""
    from linkroof.dashboard import app as A

    rows = [{"gpu": 0, "basis": "x" * 200, "bandwidth": "400 GB/s", "flags": "", "verdict": "ok", "how": "ce"}]
    grid = A._table(rows * 20, "t", page_size=15)
    cols = grid.columnDefs
    assert [c["field"] for c in cols] == ["gpu", "bandwidth", "flags", "verdict", "basis", "how"]
    assert cols[0]["pinned"] == "left" and all(c.get("maxWidth") == 320 and c["tooltipField"] == c["field"]
                                               for c in cols[2:])
    assert 15 in grid.dashGridOptions["paginationPageSizeSelector"]
    data = A.Data(None)
    many = A._paged_table([{"rank": i, "note": "n", "busbw": 1.0} for i in range(A.PAGED_OVER + 1)], "p", data)
    assert [c["field"] for c in many.columnDefs] == ["rank", "busbw", "note"]
    assert 15 in many.dashGridOptions["paginationPageSizeSelector"]


def test_a_trace_call_row_leads_with_the_call_its_figures_and_its_gap():
    from linkroof.dashboard import app as A
    from linkroof.profiler.session import bundled_profile
    from linkroof.readers.traces import analyze_job

    rep = analyze_job(["tests/data/traces/hta_sampled_rank0.json.gz"], bundled_profile())
    row = A._call_row(next(r for r in rep.rows if r.call.busbw))
    assert list(row)[:5] == ["rank", "collective", "size_bytes", "duration_us", "busbw_GBps"]


def test_the_hbm_roofline_places_every_kernel_as_a_dot():
    """A GEMM and a layer norm placed on the bundled H200 profile: dots at their FLOP per
    HBM byte and achieved FLOP/s, the longer call the bigger dot, coloured by limiter;
    the HBM roofs (measured and spec) and the compute roofs named on the plot."""
    from linkroof.dashboard import figures as F
    from linkroof.roofline.model import MachineModel
    from linkroof.roofline.place import place
    from linkroof.schema import Workload

    model = MachineModel.from_profile(bundled_profile())
    gemm = place(Workload(name="gemm 8192^3 bf16", flops={"bf16": 2 * 8192 ** 3}, hbm_bytes=3 * 8192 ** 2 * 2),
                 1.6e-3, model)
    norm = place(Workload(name="layernorm", flops={"fp32": 8 * 32768 * 8192}, hbm_bytes=1 << 30), 300e-6, model)
    fig = F.hbm_roofline_figure(model, [gemm, norm])
    dots = {t.name: t for t in fig.data if t.name.startswith("placed")}
    assert set(dots) == {"placed: compute-bound", "placed: memory-bound"}
    g, n = dots["placed: compute-bound"], dots["placed: memory-bound"]
    assert g.x[0] == pytest.approx(2 * 8192 ** 3 / (3 * 8192 ** 2 * 2)) and g.y[0] == pytest.approx(2 * 8192 ** 3 / 1.6e-3)
    assert g.marker.size[0] > n.marker.size[0]  # 1.6 ms against 0.3 ms
    assert "of the roofline" in g.customdata[0] and "limiter compute" in g.customdata[0]
    said = " ".join(a.text for a in fig.layout.annotations)
    assert "HBM measured 4510.3 GB/s" in said and "bf16 851 / fp16 814 TFLOP/s (measured)" in said
    assert any(t.name == "bf16 spec" and t.line.dash == "dash" for t in fig.data)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"


def test_a_gpus_figures_lead_with_the_path_and_the_figure_and_never_repeat_a_row(tmp_path):
    """Issue 45, item 5: clicking a GPU listed rows that looked alike (sm p2p_read 0,1 at
    46, 91, 181 and 340 GB/s, no size or blocks) with GB/s in the fifth column."""
    from linkroof.profiler.session import bundled_profile

    data = A.Data(str(tmp_path / "s.sqlite"), bundled_profile())
    out = A.topology_detail({"points": [{"customdata": "gpu:0"}]}, None, data)
    rows = next(c.rowData for c in _walk(out) if getattr(c, "rowData", None))
    assert list(rows[0])[:4] == ["path", "GB/s", "size", "blocks"]
    keys = [(r["path"], r["size"], r["blocks"], r["settings"], r["benchmark"], r["reps"]) for r in rows]
    # the one pair left alike: a host bidirectional run's two halves, which the bundled profile's
    # measurements name no direction for (both 'bidir_host' from GPU0, 51.3 and 50.8 GB/s)
    alike = [k for k in set(keys) if keys.count(k) > 1]
    assert [k[4] for k in alike] == ["host_bidir_bandwidth"] and keys.count(alike[0]) == 2 and len(rows) > 10
    assert rows[0]["path"] == "ce p2p_read GPU0->GPU1"


def _walk(c):
    yield c
    kids = getattr(c, "children", None)
    for k in kids if isinstance(kids, (list, tuple)) else ([kids] if kids is not None else []):
        if not isinstance(k, (str, int, float)):
            yield from _walk(k)
