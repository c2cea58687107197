"""Real-browser smoke tests: headless Chromium (Debian's package) driven by Playwright.
Every page loads without console errors and draws its charts; a click on a GPU shows
its figures; the runs comparison works; a malformed upload is refused with a message.
Screenshots of every page land in $LINKROOF_SCREENSHOTS (default: the test's tmp dir).

Without a browser these tests skip with a message, except in CI (CI=true), where a
missing browser is a failure: .ci/run installs chromium."""

import os
import shutil
import socket
import threading
from pathlib import Path

import pytest

from linkroof.dashboard import app as A
from linkroof.profiler.session import bundled_profile
from linkroof.schema import dumps

from fakes import startup_s  # noqa: E402


def ms(base: int) -> float:
    """A wait's limit from the work, not the wall clock: `base` ms on an idle machine
    (where a stand-in interpreter starts in 0.25 s or less), stretched by how much slower
    this machine starts one now (other suites beside this one)."""
    return base * max(1.0, startup_s() / 0.25)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _need_browser():
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing = "the playwright package"
    else:
        missing = None if CHROMIUM else "Debian's chromium"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"{missing} is missing in CI: .ci/run must install it")
        pytest.skip(f"{missing} not installed: browser tests skipped (apt-get install chromium; pip install playwright)")


def _serve(app):
    """Serve a Dash app on a free loopback port; returns (base URL, stop)."""
    from werkzeug.serving import make_server

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = make_server("127.0.0.1", port, app.server, threaded=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{port}", srv.shutdown


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    _need_browser()
    store = tmp_path_factory.mktemp("store") / "s.sqlite"
    app = A.create_app(str(store))
    base, stop = _serve(app)
    yield base, app
    stop()


@pytest.fixture(scope="module")
def browser():
    _need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                              args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                                    "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        yield b
        b.close()


def shots_dir(tmp_path) -> Path:
    d = Path(os.environ.get("LINKROOF_SCREENSHOTS") or tmp_path)
    d.mkdir(parents=True, exist_ok=True)
    return d


def open_page(browser, url):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    return page, errors


@pytest.mark.parametrize("path, charts", [("/", 1), ("/topology", 1), ("/bandwidth", 3), ("/collectives", 1),
                                          ("/roofline", 1), ("/runs", 0)])
def test_page_loads_and_draws(server, browser, tmp_path, path, charts):
    base, _ = server
    page, errors = open_page(browser, base + path)
    page.wait_for_selector("#page-content > div, #page-content div", timeout=ms(20000))
    if charts:
        page.wait_for_function(f"document.querySelectorAll('.js-plotly-plot').length >= {charts}", timeout=ms(20000))
        traces = page.evaluate("Array.from(document.querySelectorAll('.js-plotly-plot')).map(g => g.data.length)")
        assert all(n > 0 for n in traces[:charts]) or path == "/collectives", traces
    else:
        page.wait_for_timeout(500)
    name = "overview" if path == "/" else path.strip("/")
    page.screenshot(path=str(shots_dir(tmp_path) / f"{name}.png"), full_page=True)
    assert not errors, errors
    page.close()


def test_clicking_a_gpu_shows_its_figures(server, browser):
    base, _ = server
    page, errors = open_page(browser, base + "/topology")
    page.wait_for_function("document.querySelector('#topology-graph .js-plotly-plot') !== null", timeout=ms(20000))
    page.evaluate("""() => {
        const gd = document.querySelector('#topology-graph .js-plotly-plot');
        const t = gd.data.findIndex(d => d.name === 'GPU');
        gd.emit('plotly_click', {points: [{curveNumber: t, pointNumber: 0, customdata: gd.data[t].customdata[0]}]});
    }""")
    page.wait_for_function("document.querySelector('#topology-detail').innerText.includes('GPU0:')", timeout=ms(10000))
    page.wait_for_function("document.querySelector('#topology-detail').innerText.includes('p2p_')", timeout=ms(10000))
    assert "ce p2p_read GPU0->GPU1" in page.inner_text("#topology-detail")
    # at 1280 px the path and its GB/s are on screen (issue 45: GB/s was off to the right)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.wait_for_timeout(600)
    heads = page.evaluate("""() => Array.from(document.querySelectorAll('#topology-detail .ag-header-cell'))
        .map(h => ({text: h.innerText.trim(), right: h.getBoundingClientRect().right}))""")
    seen = {h["text"]: h["right"] for h in heads if h["text"] in ("path", "GB/s")}
    assert set(seen) == {"path", "GB/s"} and all(0 < r <= 1280 for r in seen.values()), heads
    assert not errors, errors
    page.close()


def test_runs_comparison_and_refused_upload(server, browser, tmp_path):
    base, app = server
    ref = bundled_profile()
    with app.linkroof_data.store() as s:
        s.put(ref, replace=True)
    page, errors = open_page(browser, base + "/runs")
    page.wait_for_selector("#runs-diff", timeout=ms(20000))
    page.wait_for_function("document.querySelector('#runs-diff').innerText.length > 0", timeout=ms(10000))
    assert "No figure changed beyond the noise" in page.inner_text("#runs-diff")
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "linkroof.Profile", "schema_version": 1, "id": 3}')
    page.set_input_files("#upload input[type=file]", str(bad))
    page.wait_for_selector(".upload-error", timeout=ms(10000))
    assert "refused" in page.inner_text("#upload-message")
    good = tmp_path / "ref.json"
    good.write_text(dumps(ref))
    page.set_input_files("#upload input[type=file]", str(good))
    page.wait_for_function("document.querySelector('#upload-message').innerText.includes('already in the store')",
                           timeout=ms(10000))
    assert not errors, errors
    page.close()


HOSTILE = '<img src=x onerror="window.__pwned=(window.__pwned||0)+1"><script>window.__pwned=99</script>'


def _hostile_profile():
    import dataclasses

    ref = bundled_profile()
    topo = ref.topology
    topo = dataclasses.replace(topo, host=dataclasses.replace(topo.host, hostname="host" + HOSTILE),
                               notes=topo.notes + ("a note below " + HOSTILE,))
    return dataclasses.replace(ref, id="hostile-1", label="label" + HOSTILE, topologies=(topo,),
                               notes=ref.notes + ("note" + HOSTILE,))


def test_injected_html_never_runs_in_the_report(browser, tmp_path):
    from linkroof.dashboard.report import report_html

    path = tmp_path / "hostile.html"
    path.write_text(report_html(_hostile_profile()))
    page, errors = open_page(browser, path.as_uri())
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length > 3", timeout=ms(20000))
    page.wait_for_timeout(500)
    assert page.evaluate("window.__pwned === undefined")
    assert "<img src=x" in page.inner_text("body")  # shown as text, not run
    page.close()


def test_injected_html_never_runs_in_the_dashboard(browser, tmp_path):
    """Every page, with the hostile profile shown, and the runs comparison listing it."""
    app = A.create_app(str(tmp_path / "s.sqlite"), _hostile_profile())
    with app.linkroof_data.store() as s:
        s.put(_hostile_profile())
    base, stop = _serve(app)
    try:
        for path, _ in A.PAGES:
            page, errors = open_page(browser, base + path)
            page.wait_for_selector("#page-content > div", timeout=ms(20000))
            page.wait_for_timeout(700)
            assert page.evaluate("window.__pwned === undefined"), path
            if path == "/":
                assert "<img src=x" in page.inner_text("#page-content")  # shown as text
            page.close()
    finally:
        stop()


@pytest.mark.parametrize("tool, sample", [("nccl-tests", "nt_allreduce.txt"), ("nvbandwidth", "nvb.json")])
def test_every_page_works_on_an_imported_profile(browser, tmp_path, tool, sample):
    """An imported-only profile (the way to use linkroof without a GPU): every page loads
    without an error, and draws its charts or says what is missing and how to get it."""
    from linkroof.readers.tools import bare_topology, import_file, imported_environment
    from linkroof.profiler.session import make_profile

    got = import_file(tool, Path(__file__).parent / "data" / "anchor" / sample)
    prof = make_profile([bare_topology(got, sample)], [imported_environment(got)], got.measurements,
                        label=f"import:{tool}:{sample}")
    base, stop = _serve(A.create_app(str(tmp_path / "s.sqlite"), prof))
    try:
        for path, _ in A.PAGES:
            page, errors = open_page(browser, base + path)
            page.wait_for_selector("#page-content > div", timeout=ms(20000))
            if path != "/runs":
                page.wait_for_function("document.querySelectorAll('.js-plotly-plot, .missing').length > 0",
                                       timeout=ms(20000))
            page.wait_for_timeout(500)
            charts = page.evaluate("document.querySelectorAll('.js-plotly-plot').length")
            notes = page.evaluate("document.querySelectorAll('.missing').length")
            assert charts or notes or path == "/runs", path
            assert not errors, (path, errors)
            page.screenshot(path=str(shots_dir(tmp_path) / f"import-{tool}-{path.strip('/') or 'overview'}.png"),
                            full_page=True)
            page.close()
    finally:
        stop()


def test_roofline_page_draws_the_decomposition(browser, tmp_path):
    """A profile holding a decomposed placement: the Roofline page draws the stacked bars
    (one segment per term, the cost bound marked) with no console error."""
    import dataclasses

    from linkroof.roofline import workload as W
    from linkroof.roofline.cost import with_cost
    from linkroof.roofline.model import MachineModel
    from linkroof.roofline.place import place

    ref = bundled_profile()
    model = MachineModel.from_profile(ref)
    placed = with_cost(place(W.collective("all_reduce", 2 << 20, 2), 92e-6, model), ref, model, "nccl",
                       collective_s=28e-6, launch_s=45e-6)
    prof = dataclasses.replace(ref, id="decomposed", label="decomposed", placements=(placed,))
    base, stop = _serve(A.create_app(str(tmp_path / "s.sqlite"), prof))
    try:
        page, errors = open_page(browser, base + "/roofline")
        page.wait_for_selector("#decomposition-graph .js-plotly-plot", timeout=ms(20000))
        names = page.evaluate("document.querySelector('#decomposition-graph .js-plotly-plot').data.map(t => t.name)")
        assert {"host launch (measured)", "measured NCCL", "unexplained", "cost-model bound"} <= set(names), names
        page.screenshot(path=str(shots_dir(tmp_path) / "roofline-decomposition.png"), full_page=True)
        assert not errors, errors
        page.close()
    finally:
        stop()


def test_trace_page_draws_two_ranks_and_takes_an_upload(browser, tmp_path):
    """The Trace page in a browser: two ranks' synthetic traces given at start (the
    timeline per rank and stream, the calls over the profile's NCCL curves, the tables),
    then the recorded one-H200 trace uploaded through the page, then a cut-off file
    refused in the page. Screenshots: trace.png, trace-uploaded.png."""
    import tracegen as G
    from linkroof.readers.traces import read_job

    files = [G.tier1_rank(0).write(tmp_path / "r0.json.gz"), G.tier1_rank(1, 60.0).write(tmp_path / "r1.json.gz")]
    app = A.create_app(str(tmp_path / "s.sqlite"), traces=read_job(files))
    base, stop = _serve(app)
    try:
        page, errors = open_page(browser, base + "/trace")
        page.wait_for_function("document.querySelectorAll('#trace-view .js-plotly-plot').length >= 2", timeout=ms(20000))
        n = page.evaluate("Array.from(document.querySelectorAll('#trace-view .js-plotly-plot')).map(g => g.data.length)")
        assert all(k > 0 for k in n), n
        # the tables come in beside the graphs; under load the text can follow them by a moment
        page.wait_for_function("document.querySelector('#trace-view').innerText.includes('Across ranks')",
                               timeout=ms(20000))
        page.screenshot(path=str(shots_dir(tmp_path) / "trace.png"), full_page=True)
        recorded = Path(__file__).parent / "data" / "traces" / "h200x1_torch2.11_rank0.json.gz"
        page.set_input_files("#trace-upload input[type=file]", str(recorded))
        page.wait_for_function("document.querySelector('#trace-message').innerText.includes('read 1 trace')",
                               timeout=ms(20000))
        page.wait_for_function("document.querySelector('#trace-view').innerText.includes('reduce_scatter')",
                               timeout=ms(20000))
        page.screenshot(path=str(shots_dir(tmp_path) / "trace-uploaded.png"), full_page=True)
        cut = tmp_path / "cut.json"
        cut.write_text('{"traceEvents": [{"ph": "X"')
        page.set_input_files("#trace-upload input[type=file]", str(cut))
        page.wait_for_function("document.querySelector('#trace-message').innerText.includes('mid-JSON')",
                               timeout=ms(20000))
        assert not errors, errors
        page.close()
    finally:
        stop()


# A unit an axis title names: a word or symbol of one, or a count of something said in it
AXIS_UNIT = r"(GB/s|FLOP/s|FLOP per|bytes|µs|\bms\b|\bs\b|%|\bGPUs?\b|\bblocks\b|\bcalls?\b|\bns\b|\bB\b|\brank\b)"
CHECK_PAGE = """(unit) => {
  const re = new RegExp(unit);
  const out = {empty: [], untitled: [], unitless: [], charts: 0, grids: [], text: document.querySelector(
               '#page-content').innerText};
  for (const gd of document.querySelectorAll('#page-content .js-plotly-plot')) {
    out.charts += 1;
    const title = (gd.layout.title && gd.layout.title.text) || gd.id || '?';
    const pts = gd.data.reduce((n, t) => n + ((t.x && t.x.length) || (t.z && t.z.length) || 0), 0);
    if (!pts) out.empty.push(title);
    for (const ax of ['xaxis', 'yaxis']) {
      const a = gd._fullLayout[ax];
      if (!a || a.visible === false || a.showticklabels === false) continue;
      const t = (a.title && a.title.text) || '';
      if (!t) out.untitled.push(title + ' ' + ax);
      else if (a.type !== 'category' && !re.test(t)) out.unitless.push(title + ' ' + ax + ': ' + t);
    }
  }
  for (const g of document.querySelectorAll('#page-content .ag-root-wrapper')) {
    const heads = Array.from(g.querySelectorAll('.ag-header-cell[aria-colindex]'))
      .filter(h => +h.getAttribute('aria-colindex') <= 2)
      .map(h => ({col: +h.getAttribute('aria-colindex'), text: h.innerText.trim(),
                  left: h.getBoundingClientRect().left, right: h.getBoundingClientRect().right}));
    out.grids.push(heads);
  }
  return out;
}"""


def test_every_page_as_a_person_reads_it(browser, tmp_path):
    """Every page at 1280 px on the bundled profile with kernels and calls placed, and the
    README's two-rank example trace loaded: no empty chart, no 'None' or 'NaN' on the page, every
    axis titled (with a unit where it is numeric), and each grid's key columns (the
    identifying one and the first figure) inside the viewport. The screenshots land in
    $LINKROOF_SCREENSHOTS; `LINKROOF_DOCS_IMG=1` writes them to docs/img for the docs."""
    import re

    import factories
    from linkroof.readers.traces import read_job

    example = Path(__file__).resolve().parents[1] / "examples" / "traces"  # the README's: placed calls, a straggler
    app = A.create_app(str(tmp_path / "s.sqlite"), factories.showcase_profile(),
                       traces=read_job([example / f"train_2xh200_rank{r}.json.gz" for r in (0, 1)]))
    base, stop = _serve(app)
    docs = Path(__file__).resolve().parents[1] / "docs" / "img" if os.environ.get("LINKROOF_DOCS_IMG") else None
    problems = []
    try:
        for path, label in A.PAGES:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(base + path)
            page.wait_for_selector("#page-content > div", timeout=ms(20000))
            if path != "/runs":
                page.wait_for_function("document.querySelectorAll('#page-content .js-plotly-plot').length > 0",
                                       timeout=ms(20000))
            page.wait_for_timeout(1200)  # the grids size their columns after their first rows
            got = page.evaluate(CHECK_PAGE, AXIS_UNIT)
            name = "overview" if path == "/" else path.strip("/")
            for key in ("empty", "untitled", "unitless"):
                problems += [f"{name}: {key}: {x}" for x in got[key]]
            bad = re.findall(r".{0,40}\b(?:None|NaN)\b.{0,40}", got["text"])
            problems += [f"{name}: shows {b!r}" for b in bad]
            for heads in got["grids"]:
                problems += [f"{name}: key column {h['text']!r} outside the viewport ({h['left']:.0f}-{h['right']:.0f})"
                             for h in heads if h["right"] > 1280 or h["left"] < 0]
            problems += [f"{name}: page error {e}" for e in errors]
            if path != "/runs":
                assert got["charts"] > 0, name
            page.screenshot(path=str(shots_dir(tmp_path) / f"person-{name}.png"))
            if docs is not None:
                docs.mkdir(exist_ok=True)
                page.screenshot(path=str(docs / f"{name}.png"))
            page.close()
    finally:
        stop()
    assert not problems, "\n".join(problems)
