"""Imported results as first-class data: every sample output of nvbandwidth and
nccl-tests, imported into an empty store, works in `runs show`, `report`, `roofline`,
`advise` and every dashboard page; their NVLink and collective figures reach the
roofline, labelled with their source."""

import json
from pathlib import Path

import factories
import pytest
from click.testing import CliRunner

from linkroof.cli import cli
from linkroof.dashboard import app as A
from linkroof.readers.tools import bare_topology, import_file
from linkroof.roofline.model import MachineModel

ANCHOR = Path(__file__).parent / "data" / "anchor"
SAMPLES = sorted(p.name for p in ANCHOR.iterdir())


def tool_of(name: str) -> str:
    return "nvbandwidth" if name.startswith("nvb") else "nccl-tests"


def imported(runner, tmp_path, name):
    store = tmp_path / "s.sqlite"
    res = runner.invoke(cli, ["--store", str(store), "import", tool_of(name), str(ANCHOR / name), "--json"])
    assert res.exit_code == 0, res.output
    return store, json.loads(res.stdout)["id"]


@pytest.mark.parametrize("name", SAMPLES)
def test_every_command_works_on_an_import(tmp_path, name):
    runner = CliRunner()
    store, pid = imported(runner, tmp_path, name)

    def ok(*args):
        res = runner.invoke(cli, ["--store", str(store), *args])
        assert res.exit_code == 0, f"{args}: {res.output[-2000:]}"
        return res

    assert pid in ok("runs", "show", pid).stdout
    # an import is used only when named: by default the commands take the newest profile
    # linkroof measured, here none, so the bundled reference, and say so (issue 45)
    plain = ok("roofline", "--json")
    assert json.loads(plain.stdout)["profile"] != pid and "an imported one is used only when named" in plain.stderr
    listed = json.loads(ok("runs", "list", "--json").stdout)["profiles"]
    assert [r["kind"] for r in listed] == ["imported"]
    ok("report", "--out", str(tmp_path / "r.html"), "--profile", pid)
    assert (tmp_path / "r.html").stat().st_size > 100_000
    roofs = json.loads(ok("roofline", "--json", "--profile", pid).stdout)["roofs"]
    if tool_of(name) == "nccl-tests":
        coll = {"nt_allgather.txt": "all_gather", "nt_alltoall.txt": "all_to_all",
                "nt_sendrecv.txt": "sendrecv"}.get(name, "all_reduce")
        advice = json.loads(ok("advise", "--size", "1M", "--pattern", coll, "--json", "--profile", pid).stdout)
        assert advice["fastest"] == "nccl fp32"
        assert any(r["resource"] == "link:nvlink" and r["mechanism"] == "nccl" and "nccl-tests" in r["basis"]
                   for r in roofs)
    else:
        nv = [r for r in roofs if r["resource"] == "link:nvlink"]
        assert nv and all("nvbandwidth" in r["basis"] and "inferred" in r["basis"] for r in nv)


@pytest.mark.parametrize("name", SAMPLES)
def test_every_dashboard_page_renders_an_import(tmp_path, name):
    store, pid = imported(CliRunner(), tmp_path, name)
    app = A.create_app(str(store))
    data = app.linkroof_data
    for path, _ in A.PAGES:
        assert A.render_page(path, pid, data) is not None
    assert A.topology_detail({"points": [{"customdata": "gpu:0"}]}, pid, data) is not None
    for pattern in ("p2p_write", "p2p_read", "bidir"):
        for mech in ("ce", "sm"):
            assert A.heatmap(pattern, mech, "rel", pid, data) is not None


def test_nvbandwidth_names_it_does_not_know_are_listed_and_an_empty_import_fails(tmp_path):
    text = (ANCHOR / "nvb.txt").read_text().replace("device_to_device_memcpy_read_ce", "multinode_device_to_device_x")
    f = tmp_path / "nvb.txt"
    f.write_text(text)
    got = import_file("nvbandwidth", f)
    assert got.skipped == ["multinode_device_to_device_x"] and got.measurements
    header, _, rest = text.partition("Running ")
    f.write_text(header + "Running " + rest.split("Running ")[0])  # the unknown test alone
    res = CliRunner().invoke(cli, ["--store", str(tmp_path / "s.sqlite"), "import", "nvbandwidth", str(f)])
    assert res.exit_code != 0 and "nothing imported" in res.output and "multinode_device_to_device_x" in res.output


def test_json_and_text_of_one_nccl_tests_run_agree_on_the_gpus():
    a = import_file("nccl-tests", ANCHOR / "nt_allreduce.txt")
    b = import_file("nccl-tests", ANCHOR / "nt_allreduce.json")
    assert [g[0] for g in a.gpus] == [g[0] for g in b.gpus] == [0, 1]
    assert {m.spec.params["dtype"] for m in a.measurements + b.measurements} == {"fp32"}  # nccl-tests' float


def test_nvbandwidth_0_8_bidirectional_tests_import():
    got = import_file("nvbandwidth", ANCHOR / "nvb-0.8.txt")
    totals = [m for m in got.measurements if m.spec.name == "p2p_bidir_read_total_bandwidth"]
    assert totals and max(m.bandwidth_bytes_per_s for m in totals) == pytest.approx(778.81e9)
    model = MachineModel.from_profile(factories.profile(got.measurements, topologies=[bare_topology(got, "x")]))
    assert model.find("link:nvlink", "measured", "ce").value > 380e9


@pytest.mark.parametrize("tool, name", [("nvbandwidth", "nvb.json"), ("nccl-tests", "nt_allreduce.txt")])
def test_imports_draw_no_empty_chart_and_print_no_none(tool, name, tmp_path):
    """An import in every view: no literal None, no blank heatmap or empty % chart (a
    view with nothing says what is missing), the topology drawn as unknown links (or
    NVLink inferred), never as PCIe through a '?' CPU, and the inferred NVLink roof on
    the roofline."""
    from linkroof.dashboard import app as A
    from linkroof.dashboard import figures as F
    from linkroof.dashboard.report import missing_figures, report_figures, report_html
    from linkroof.readers.tools import bare_topology, import_file, imported_environment
    from linkroof.profiler.session import make_profile
    from linkroof.roofline.model import MachineModel

    imp = import_file(tool, ANCHOR / name)
    p = make_profile([bare_topology(imp, name)], [imported_environment(imp)], imp.measurements, label=name)
    html = report_html(p)
    assert ">None<" not in html and "None " not in html.replace("None yet", "")
    titles = [t for t, _ in report_figures(p)]
    assert all(t not in titles for t, _ in missing_figures(p)) and "Not drawn" in html
    for t, fig in report_figures(p):
        z = [v for tr in fig.data if getattr(tr, "z", None) is not None for row in tr.z for v in row]
        assert not z or any(v is not None for v in z), t
    topo = F.topology_figure(p.topology, p)
    names = {t.name for t in topo.data}
    assert "NVLink (inferred from the figures)" in names and "PCIe" not in names and "CPU" not in names
    roof = F.roofline_figure(MachineModel.from_profile(p))
    assert any("NVLink measured" in (t.name or "") and "inferred" in t.name for t in roof.data)
    data = A.Data(str(tmp_path / "s.sqlite"), p)
    page = str(A.page_overview(data, None))
    assert "None" not in page.replace("'NoneType'", "")
    if tool == "nccl-tests":  # no link spec: no % chart with an empty axis, a note instead
        assert A.Id.OVERVIEW_HEADLINE.value not in page and "No figure has a known spec" in page
