"""The CLI through click's CliRunner, against recordings and a store in a temp dir."""

import dataclasses
import json
from pathlib import Path

import factories
import pytest
from click.testing import CliRunner

import fakes
from linkroof.cli import cli
from linkroof.profiler import nvml
from linkroof.schema import Profile, Topology, dumps, loads


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # `linkroof run` writes its report into the working directory
    return CliRunner()


def test_help_explains_commands(runner):
    out = runner.invoke(cli, ["--help"]).output
    for word in ("probe", "run", "runs", "--store"):
        assert word in out
    assert "--replay" in runner.invoke(cli, ["probe", "--help"]).output


def test_probe_replay_json_is_only_json(runner):
    res = runner.invoke(cli, ["probe", "--replay", "h200x2", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["schema"] == "linkroof.Topology" and doc["schema_version"] == 1
    t = loads(res.stdout, Topology)
    assert len(t.gpus) == 2 and all(len(g.active_nvlinks) == 18 for g in t.gpus)
    assert t.pair(0, 1).nvlink_via == "switch"
    assert t.gpus[0].pcie_gen_max == 5 and t.gpus[0].pcie_width_max == 16


def test_probe_replay_tables(runner):
    res = runner.invoke(cli, ["probe", "--replay", "h200x2"])
    assert res.exit_code == 0
    for text in ("NVIDIA H200", "NVLink 4.0", "18 x NVSwitch", "NV18", "478.1 GB/s", "450.0 GB/s", "63.0 GB/s",
                 "Gen5 x16", "OK/OK/OK", "pair0-1"):
        assert text in res.output, text


@pytest.mark.parametrize("name", sorted(fakes.SCENARIOS))
def test_probe_every_scenario_file(runner, scenario_file, name):
    res = runner.invoke(cli, ["probe", "--replay", str(scenario_file(name))])
    assert res.exit_code == 0, res.output
    assert "GPU0" in res.output


def test_probe_without_driver_one_line(runner, no_gpu):
    res = runner.invoke(cli, ["probe"])
    assert res.exit_code == 3
    assert res.output.strip().count("\n") == 0
    assert "no NVIDIA driver" in res.output and "Traceback" not in res.output


def test_unknown_bundled_name(runner):
    res = runner.invoke(cli, ["probe", "--replay", "dgx-nonexistent"])
    assert res.exit_code == 1
    assert "no bundled recording named 'dgx-nonexistent'" in res.output and "h200x2" in res.output


@pytest.mark.parametrize("content, message", [
    ("{not json", "not valid JSON (line 1"),
    ('{"format": "something-else"}', "not a linkroof probe recording"),
    ('{"format": "linkroof.probe-recording", "version": 1, "nvml": {"name|0": 5}, "fs": {}}', "nvml['name|0']"),
    ('{"format": "linkroof.probe-recording", "version": 9, "nvml": {}, "fs": {}}', "version 9 not supported"),
    ('{"format": "linkroof.probe-recording", "version": 1, "nvml": {}, "fs": {}}', "no device_count"),
])
def test_malformed_recording(runner, tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    res = runner.invoke(cli, ["probe", "--replay", str(path)])
    assert res.exit_code == 1
    assert message in res.output and "Traceback" not in res.output


def test_record_then_replay_is_identical(runner, tmp_path, monkeypatch):
    """--record keeps every answer: a 'live' probe (here the HGX scenario standing in for the
    driver) and the replay of what it recorded give the same topology."""
    answers = fakes.hgx_h100_8().recording()

    def fake_live(self):
        self.inner = nvml.ReplayBackend(answers["nvml"])

    monkeypatch.setattr(nvml.LiveBackend, "__init__", fake_live)
    monkeypatch.setattr(nvml.LiveBackend, "call", lambda self, q, *a: self.inner.call(q, *a))
    monkeypatch.setattr(nvml.LiveBackend, "close", lambda self: None)
    from linkroof.profiler import sysfs

    monkeypatch.setattr(sysfs, "LiveFs", lambda: sysfs.ReplayFs(answers["fs"]))
    from linkroof.profiler import recording

    monkeypatch.setattr(recording, "LiveFs", lambda: sysfs.ReplayFs(answers["fs"]))
    rec = tmp_path / "rec.json"
    live = runner.invoke(cli, ["probe", "--record", str(rec), "--json"])
    assert live.exit_code == 0, live.output
    replay = runner.invoke(cli, ["probe", "--replay", str(rec), "--json"])
    a, b = json.loads(live.stdout), json.loads(replay.stdout)
    for doc in (a, b):
        for key in ("probed_at", "probe_seconds", "source"):
            doc.pop(key)
    assert a == b
    saved = json.loads(rec.read_text())
    assert saved["nvml"]["numa_node_id|0"]["error"] == "NotSupported"  # errors are recorded too


def test_record_and_replay_exclude_each_other(runner, tmp_path):
    res = runner.invoke(cli, ["probe", "--replay", "h200x2", "--record", str(tmp_path / "x.json")])
    assert res.exit_code == 2 and "exclude each other" in res.output


def test_run_without_gpu_uses_reference_and_says_so(runner, no_gpu, store_path):
    res = runner.invoke(cli, ["run"])
    assert res.exit_code == 0, res.output
    assert "No NVIDIA GPU here" in res.output and "bundled reference" in res.output
    assert "NVIDIA H200" in res.output
    listed = json.loads(runner.invoke(cli, ["runs", "list", "--json"]).stdout)
    assert listed["total"] == 1 and listed["profiles"][0]["label"] == "reference:h200x2"


def test_run_writes_a_report_without_a_terminal(runner, no_gpu, store_path, tmp_path):
    res = runner.invoke(cli, ["run"])
    assert res.exit_code == 0 and "Wrote linkroof-report.html" in res.output
    assert (tmp_path / "linkroof-report.html").stat().st_size > 1_000_000


def test_run_benches_when_a_gpu_is_here(runner, store_path, monkeypatch):
    from linkroof.profiler import bench
    from linkroof.profiler import session

    ref = session.bundled_profile()
    probed = dataclasses.replace(ref, measurements=(), label="probe")
    monkeypatch.setattr(session, "probe_profile", lambda allow_reference=True: (probed, None))
    monkeypatch.setattr(bench, "plan_for", lambda **kw: (None, ref.topology))
    monkeypatch.setattr(bench, "run", lambda plan, topology, label="", progress=True: dataclasses.replace(ref, label=label))
    res = runner.invoke(cli, ["run", "--no-dashboard"])
    assert res.exit_code == 0, res.output
    assert "Running the quick benchmark suite" in res.output
    assert json.loads(runner.invoke(cli, ["runs", "list", "--json"]).stdout)["profiles"][0]["label"] == "run:quick"


def test_run_json(runner, no_gpu, store_path):
    res = runner.invoke(cli, ["run", "--json", "--no-save"])
    assert res.exit_code == 0
    p = loads(res.stdout, Profile)
    assert p.label == "reference:h200x2" and "No NVIDIA GPU here" in p.notes[-1]
    assert len(p.measurements) > 100 and all(m.verified for m in p.measurements)
    assert p.topology.gpus[0].name == "NVIDIA H200"
    assert not store_path.exists() or json.loads(runner.invoke(cli, ["runs", "list", "--json"]).stdout)["total"] == 0


def test_run_twice_keeps_one_reference(runner, no_gpu, store_path):
    for _ in range(2):
        assert runner.invoke(cli, ["run"]).exit_code == 0
    assert json.loads(runner.invoke(cli, ["runs", "list", "--json"]).stdout)["total"] == 1


def _import_probe_profile(runner, tmp_path, label):
    from linkroof.schema import dumps

    path = tmp_path / f"{label}.json"
    path.write_text(dumps(factories.profile(label=label)))
    assert runner.invoke(cli, ["runs", "import", str(path)]).exit_code == 0


def test_runs_lifecycle(runner, store_path, tmp_path):
    for label in ("first", "second"):
        _import_probe_profile(runner, tmp_path, label)
    rows = json.loads(runner.invoke(cli, ["runs", "list", "--json"]).stdout)["profiles"]
    assert sorted(r["label"] for r in rows) == ["first", "second"]
    pid = next(r["id"] for r in rows if r["label"] == "first")
    shown = runner.invoke(cli, ["runs", "show", pid[:-1], "--json"])  # a unique prefix works
    assert loads(shown.stdout, Profile).label == "first"
    assert "Profile " + pid in runner.invoke(cli, ["runs", "show", pid]).output
    out = tmp_path / "p.json"
    assert runner.invoke(cli, ["runs", "export", pid, "-o", str(out)]).exit_code == 0
    assert runner.invoke(cli, ["runs", "rm", pid, "--yes"]).exit_code == 0
    assert json.loads(runner.invoke(cli, ["runs", "list", "--json"]).stdout)["total"] == 1
    res = runner.invoke(cli, ["runs", "import", str(out)])
    assert res.exit_code == 0 and pid in res.output
    again = runner.invoke(cli, ["runs", "import", str(out)])
    assert again.exit_code == 0 and "already in the store, identical: nothing to do" in again.output
    assert runner.invoke(cli, ["runs", "import", "--replace", str(out)]).exit_code == 0
    assert json.loads(runner.invoke(cli, ["runs", "list", "--json"]).stdout)["total"] == 2
    page2 = json.loads(runner.invoke(cli, ["runs", "list", "--json", "--limit", "1", "--page", "2"]).stdout)
    assert len(page2["profiles"]) == 1
    assert "2 profiles" in runner.invoke(cli, ["runs", "list"]).output


def test_runs_rm_asks(runner, no_gpu, store_path):
    runner.invoke(cli, ["run"])
    pid = json.loads(runner.invoke(cli, ["runs", "list", "--json"]).stdout)["profiles"][0]["id"]
    res = runner.invoke(cli, ["runs", "rm", pid], input="n\n")
    assert res.exit_code == 1 and "not removed" in res.output
    assert json.loads(runner.invoke(cli, ["runs", "list", "--json"]).stdout)["total"] == 1


@pytest.mark.parametrize("content, message", [
    ("[1, 2", "not valid JSON"),
    ('{"hello": 1}', "not a linkroof document"),
    ('{"schema": "linkroof.Topology", "schema_version": 1}', "expected linkroof.Profile"),
    ('{"schema": "linkroof.Profile", "schema_version": 7}', "newer than this linkroof"),
    ('{"schema": "linkroof.Profile", "schema_version": 1, "id": "x", "created_at": "t", "topologies": [{}],'
     ' "environments": []}', "profile.topologies[0].host: missing"),
])
def test_import_rejects_bad_files_and_changes_nothing(runner, store_path, tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    res = runner.invoke(cli, ["runs", "import", str(path)])
    assert res.exit_code == 1
    assert message in res.output and "Traceback" not in res.output
    assert json.loads(runner.invoke(cli, ["runs", "list", "--json"]).stdout)["total"] == 0


def test_import_missing_file(runner, store_path):
    res = runner.invoke(cli, ["runs", "import", "/nonexistent/p.json"])
    assert res.exit_code == 1 and "cannot read" in res.output


def test_unreadable_store_path(runner, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    res = runner.invoke(cli, ["--store", str(blocker / "sub" / "store.sqlite"), "runs", "list"])
    assert res.exit_code == 1 and "cannot open the store" in res.output


def test_foreign_file_as_store(runner, tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("this is not a database, just some text " * 100)
    res = runner.invoke(cli, ["--store", str(bad), "runs", "list"])
    assert res.exit_code == 1 and "damaged or not a linkroof store" in res.output
    assert bad.read_text().startswith("this is not a database")


def test_show_missing_profile(runner, store_path):
    res = runner.invoke(cli, ["runs", "show", "nope"])
    assert res.exit_code == 1 and "no profile 'nope'" in res.output


def test_python_dash_m(tmp_path):
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "linkroof", "probe", "--replay", "h200x1", "--json"],
                         capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["gpus"][0]["name"] == "NVIDIA H200"


@pytest.mark.parametrize("no_color", [False, True])
def test_warnings_honour_no_color(tmp_path, monkeypatch, no_gpu, no_color):
    monkeypatch.chdir(tmp_path)
    env = {"NO_COLOR": "1"} if no_color else {}
    if not no_color:
        monkeypatch.delenv("NO_COLOR", raising=False)
    res = CliRunner().invoke(cli, ["--store", str(tmp_path / "s.sqlite"), "run", "--no-save", "--no-dashboard"],
                             env=env, color=True)
    assert res.exit_code == 0 and "bundled reference" in res.stderr
    assert ("\x1b[" in res.stderr) is (not no_color)


def test_runs_show_collectives(tmp_path):
    runner = CliRunner()
    store = str(tmp_path / "s.sqlite")
    bundled = Path(__file__).parent.parent / "linkroof" / "data" / "h200x2.profile.json"
    runner.invoke(cli, ["--store", store, "runs", "import", str(bundled)])
    res = runner.invoke(cli, ["--store", store, "runs", "show", "2026", "--collectives"], catch_exceptions=False)
    assert res.exit_code == 0 and "all_to_all fp32 (linkroof)" in res.output and "#wrong" in res.output
    doc = json.loads(runner.invoke(cli, ["--store", store, "runs", "show", "2026", "--collectives", "--json"]).stdout)
    assert len(doc["collectives"]["sendrecv fp32 (linkroof)"]) == 28  # nccl-tests' grid: 8 B - 1 GiB, x2
    probe_only = factories.profile(label="no collectives")
    (tmp_path / "p.json").write_text(dumps(probe_only))
    runner.invoke(cli, ["--store", store, "runs", "import", str(tmp_path / "p.json")])
    res = runner.invoke(cli, ["--store", store, "runs", "show", probe_only.id, "--collectives"])
    assert res.exit_code == 1 and "holds no collectives" in res.output


def test_bench_help_names_every_family():
    from linkroof.profiler.plan import FAMILIES

    res = CliRunner().invoke(cli, ["bench", "--help"], terminal_width=200)
    assert res.exit_code == 0
    text = " ".join(res.output.split())
    assert all(f in text for f in FAMILIES), [f for f in FAMILIES if f not in text]


def test_another_machines_profile_says_so_everywhere(runner, no_gpu, store_path, tmp_path):
    """The bundled reference shown on a machine without a GPU says what it is: first on
    stderr of every command that shows it, in the JSON of roofline, at the top of the
    report and of every dashboard page; its probe header names it, not 'nvml'."""
    from linkroof.dashboard import app as A
    from linkroof.profiler.session import bundled_profile, provenance

    text = provenance(bundled_profile(), None)
    assert "bundled reference profile" in text and "2 x NVIDIA H200 on vm, 2026-11-30" in text
    for args in (["roofline", "--profile", "reference"], ["advise", "--size", "1M", "--profile", "reference"]):
        res = runner.invoke(cli, args)
        assert res.exit_code == 0 and res.stderr.splitlines()[0].startswith("This is linkroof's bundled reference")
    doc = json.loads(runner.invoke(cli, ["roofline", "--profile", "reference", "--json"]).stdout)
    assert doc["provenance"] == text
    out = tmp_path / "r.html"
    assert runner.invoke(cli, ["report", "--profile", "reference", "--out", str(out)]).exit_code == 0
    html = out.read_text()
    assert html.index("class='banner'") < html.index("<h1>") and "bundled reference profile" in html
    run = runner.invoke(cli, ["run", "--no-dashboard"])
    assert "source: bundled reference h200x2 (recorded through nvml on vm, 2026-11-30)" in run.output
    data = A.Data(str(store_path), None, here=None)
    for path in [p for p, _ in A.PAGES]:
        page = A.render_page(path, "reference", data)
        assert A.Id.BANNER.value in str(page) and "bundled reference profile" in str(page), path
    # a profile of this very machine carries no banner
    ref = bundled_profile()
    mine = dataclasses.replace(ref, id="20261201-000000-000000", topologies=tuple(
        dataclasses.replace(t, source="nvml") for t in ref.topologies))
    assert provenance(mine, mine.topology) is None and "another machine" in provenance(
        mine, dataclasses.replace(mine.topology, gpus=mine.topology.gpus[:1]))


def test_run_serving_prints_a_screen_then_the_url_on_a_production_server(runner, no_gpu, store_path, monkeypatch):
    """`run` with the dashboard: a summary screen (the machine and its headline figures),
    then the URL, served by waitress (no development-server warning); --debug keeps
    Dash's own reloading server."""
    import waitress

    from linkroof.dashboard import app as A

    served = []
    monkeypatch.setattr(waitress, "serve", lambda app, host, port, threads: served.append((host, port, threads)))
    res = runner.invoke(cli, ["run", "--dashboard"])
    assert res.exit_code == 0, res.output
    out = res.stdout.splitlines()
    assert len(out) < 25 and "HBM: 4510.3 GB/s" in res.stdout and "NVLink per GPU" in res.stdout
    assert "Measurements" not in res.stdout and "Dashboard on http://127.0.0.1:8050/" in res.stderr
    assert served == [("127.0.0.1", 8050, 8)]
    debug = []

    class Fake:
        def run(self, **kw):
            debug.append(kw)

    A.serve(Fake(), "127.0.0.1", 9000, debug=True)
    assert debug == [{"host": "127.0.0.1", "port": 9000, "debug": True}]
