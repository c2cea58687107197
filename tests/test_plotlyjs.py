"""The pages and the report load plotly's cartesian bundle (1.5 MB) instead of the full
one (4.8 MB) where it fits the installed plotly; every figure linkroof draws uses a trace
type that bundle holds, so no chart goes blank for a missing trace module."""

import dataclasses

import pytest

from linkroof.dashboard import app as A
from linkroof.dashboard import figures as F
from linkroof.dashboard import plotlyjs
from linkroof.dashboard.report import report_figures, report_html
from linkroof.profiler.session import bundled_profile
from linkroof.roofline.model import MachineModel


def _every_figure():
    import tracegen as G
    from linkroof.readers.traces import analyze, read_job
    from linkroof.roofline import workload as W
    from linkroof.roofline.place import place

    ref = bundled_profile()
    model = MachineModel.from_profile(ref)
    placed = (place(W.gemm_all_reduce(4096, 4096, 4096, "fp16", 2), 0.6e-3, model),
              place(W.collective("all_reduce", 2 << 20, 2), 92e-6, model))
    prof = dataclasses.replace(ref, placements=placed)
    figs = [f for _, f in report_figures(prof)]
    figs.append(F.imported_topology_figure(ref.topology, ref))
    return figs, ref, model, G, analyze, read_job


def test_every_figure_uses_a_trace_type_the_bundle_holds(tmp_path):
    figs, ref, model, G, analyze, read_job = _every_figure()
    files = [G.tier1_rank(0).write(tmp_path / "r0.json.gz"), G.tier1_rank(1, 60.0).write(tmp_path / "r1.json.gz")]
    report = analyze(read_job(files), ref)
    figs += [F.trace_timeline_figure(report), F.trace_collectives_figure(report, ref, model)]
    types = {t.type or "scatter" for f in figs for t in f.data}
    assert types, "no figure drew a trace"
    assert types <= plotlyjs.TRACE_TYPES, types - plotlyjs.TRACE_TYPES
    assert {"scatter", "bar", "heatmap"} <= types  # what the pages draw; a test on nothing would pass too


def test_the_bundle_is_vendored_and_fits_the_installed_plotly():
    assert plotlyjs.BUNDLE.stat().st_size < 2_000_000
    assert plotlyjs.bundle_version() is not None
    assert plotlyjs.fits(), (plotlyjs.bundle_version(), plotlyjs.installed_version())


@pytest.mark.parametrize("installed, vendored, ok", [("4.1.1", "4.1.1", True), ("4.1.3", "4.1.1", True),
                                                     ("4.2.0", "4.1.1", False), ("5.0.0", "4.1.1", False),
                                                     ("4.1.1", "", False)])
def test_the_bundle_is_used_only_for_its_own_minor_version(installed, vendored, ok):
    assert plotlyjs.fits(installed, vendored) is ok


def test_a_missing_bundle_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setattr(plotlyjs, "BUNDLE", tmp_path / "gone.js")
    plotlyjs.bundle_version.cache_clear()
    try:
        assert plotlyjs.bundle_version() is None and not plotlyjs.fits()
    finally:
        plotlyjs.bundle_version.cache_clear()


def _index(app) -> str:
    return app.server.test_client().get("/").get_data(as_text=True)


def test_the_dashboard_loads_the_bundle_where_it_fits_and_the_full_one_else(tmp_path, monkeypatch):
    html = _index(A.create_app(str(tmp_path / "a.sqlite")))
    assert "plotly-cartesian.min.js" in html
    monkeypatch.setattr(plotlyjs, "fits", lambda *a: False)
    html = _index(A.create_app(str(tmp_path / "b.sqlite")))
    assert "plotly-cartesian.min.js" not in html  # dcc.Graph fetches its own full bundle then


def test_the_report_holds_one_plotly_bundle(monkeypatch):
    html = report_html(bundled_profile())
    assert html.count("plotly.js (cartesian - minified) v") == 1
    assert html.count("* plotly.js v") == 0  # the full bundle's header
    assert len(html) < 3_000_000
    monkeypatch.setattr(plotlyjs, "fits", lambda *a: False)
    full = report_html(bundled_profile())
    assert full.count("plotly.js (cartesian") == 0 and full.count("* plotly.js v") == 1
