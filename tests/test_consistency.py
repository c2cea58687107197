"""One fact, one number: each fact a user reads is computed through every path that
prints it (CLI text and JSON, dashboard callbacks, the report) and must come out as the
one number its one home gives. The facts: a figure's % of spec, the HBM spec, a
collective's time at a size, the machine's launch and sync terms, a placement's verdict
against its cost bound, and whether two runs differ."""

import dataclasses
import json
import re

import pytest
from click.testing import CliRunner

from linkroof.cli import cli
from linkroof.dashboard import app as A
from linkroof.dashboard import figures as F
from linkroof.dashboard.report import report_html
from linkroof.profiler.session import bundled_profile
from linkroof.roofline import cost
from linkroof.roofline import workload as W
from linkroof.roofline.baseline import nccl_baseline
from linkroof.roofline.model import MachineModel, percent_of_spec
from linkroof.roofline.place import place
from linkroof.roofline.spec import hbm_spec
from linkroof.units import format_time

REF = bundled_profile()
MODEL = MachineModel.from_profile(REF)


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.setenv("LINKROOF_STORE", str(tmp_path / "s.sqlite"))
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def go(*args, codes=(0,)):
        res = runner.invoke(cli, list(args))
        assert res.exit_code in codes, res.output
        return res

    return go


def flat(text):
    """Text with table borders and line breaks gone: a cell's words wrapped over lines read as one line."""
    return " ".join(re.sub(r"[│┃┏┓┗┛┡┩┠┨━─┬┴┼╇╈╋┳┻└┘┌┐]", " ", str(text)).split())


def test_percent_of_spec_is_one_number(run, tmp_path):
    """The copy engine's best NVLink write as % of spec: against the data rate (450
    GB/s) in the heatmap, the overview's table and chart, the report, `check --min-spec`
    (text and JSON) and the roofline table."""
    best = MODEL.find("link:nvlink", "measured", "ce")
    truth = percent_of_spec(best.value, REF.topology.ceiling("pair0-1"))
    assert truth == pytest.approx(100 * best.value / 450e9)
    one = f"{truth:.1f}"
    data = A.Data(str(tmp_path / "s.sqlite"), REF)
    heat = F.pair_matrix_figure(REF, "p2p_write", "ce", relative=True)
    assert f"{max(v for row in heat.data[0].z for v in row if v is not None):.1f}" == one
    overview = flat(A.page_overview(data, None))
    assert f"'percent_of_spec': {one}" in overview
    assert one in flat(report_html(REF))
    check = run("check", "--profile", "reference", "--min-spec", "80%", "--json", codes=(0, 1))
    row = next(c for c in json.loads(check.stdout)["checks"] if c["name"] == "NVLink peer (ce)")
    assert f"({truth / 100:.1%})" in row["got"]
    text = flat(run("check", "--profile", "reference", "--min-spec", "80%", codes=(0, 1)).output)
    assert f"({truth / 100:.1%})" in text
    roofs = flat(run("roofline", "--profile", "reference").output)
    assert "450.0 GB/s" in roofs and f"{truth:.1f}%" in roofs


def test_the_hbm_spec_is_one_number(run, tmp_path):
    """4800.0 GB/s (the datasheet) in probe (text and JSON), the roofline's spec roof
    (text and JSON), the overview and the report; never the 4814.3 of bus x clock alone."""
    value, basis = hbm_spec(REF.topology.gpus[0])
    assert value == 4.8e12
    probe = run("probe", "--replay", "h200x2").output
    assert "gpu0.hbm    │ spec │ 4800.0 GB/s" in probe
    probe_json = json.loads(run("probe", "--replay", "h200x2", "--json").stdout)
    assert next(c for c in probe_json["ceilings"] if c["name"] == "gpu0.hbm")["bytes_per_s"] == value
    roof = json.loads(run("roofline", "--profile", "reference", "--json").stdout)
    assert next(r for r in roof["roofs"] if r["resource"] == "hbm" and r["kind"] == "spec")["value"] == value
    assert "4800.0 GB/s" in run("roofline", "--profile", "reference").output
    data = A.Data(str(tmp_path / "s.sqlite"), REF)
    assert "'spec': 4800.0" in flat(A.page_overview(data, None))
    html = report_html(REF)
    assert "<td>4800.0</td>" in html
    for text in (probe, json.dumps(roof), html):
        assert "4814.3 GB/s" not in text.replace("gives 4814.3 GB/s", "")


@pytest.mark.parametrize("coll, size", [("all_gather", 16 << 20), ("all_to_all", 16 << 20),
                                        ("reduce_scatter", 16 << 20), ("all_reduce", 3 << 20)])
def test_a_collectives_time_at_a_size_is_one_number(run, tmp_path, coll, size):
    """NCCL's time for a collective at a size (measured there, or interpolated between
    the nearest, labelled): advise (text and JSON), the NCCL baseline placement of
    roofline --workload (text and JSON) and of compare, the decomposition's collective
    part and runs show --collectives, all the one home's (baseline.nccl_baseline)."""
    base = nccl_baseline(REF, W.collective(coll, size, 2))
    advice = json.loads(run("advise", "--size", str(size), "--pattern", coll, "--dtype", "fp32", "--profile",
                            "reference", "--json").stdout)
    assert advice["mechanisms"][0]["time_s"] == base.median_s
    assert format_time(base.median_s) in run("advise", "--size", str(size), "--pattern", coll, "--dtype", "fp32",
                                             "--profile", "reference").output
    wl = tmp_path / "w.toml"
    wl.write_text(f'[workload]\ncollective = "{coll}"\nsize_bytes = {size}\nranks = 2\n')
    doc = json.loads(run("roofline", "--profile", "reference", "--workload", str(wl), "--time", "1ms", "--force",
                         "--json").stdout)
    measured = doc["placements"][0]
    assert measured["decomposition_s"]["measured NCCL"] == base.median_s
    from linkroof.roofline.baseline import kernel_placements

    placements, _ = kernel_placements(coll, 1e-3, None, W.collective(coll, size, 2), MODEL, REF)
    nccl = next(p for p in placements if p.workload.name.startswith("NCCL"))
    assert nccl.measured_time_s == base.median_s
    text = flat(run("roofline", "--profile", "reference", "--workload", str(wl), "--time", "1ms", "--force").output)
    assert f"measured NCCL {format_time(base.median_s)}" in text
    # the workload view names both figures of the one collective: the model's bound and NCCL's measured time
    bound = format_time(measured["cost_bound_s"])
    assert (f"bound: {measured['limiter']} {bound} (the model's, from the ceilings) · measured NCCL: "
            f"{format_time(base.median_s)} (the profile's own time at this size)") in text
    assert f"collective {format_time(base.median_s)}" not in text
    if base.exact:
        from linkroof.roofline.summaries import collective_rows

        row = next(r for r in collective_rows(REF)[f"{coll} fp32 (linkroof)"] if r["size"] == size)
        assert row["out_time_us"] == round(base.median_s * 1e6, 2)


def test_the_machines_terms_are_one_set(run, tmp_path):
    """The launch and sync terms: roofline's text and JSON, the dashboard's Roofline page
    and the report show the rows of cost.machine_terms, and the cost bound uses them."""
    rows = cost.machine_terms(REF)
    assert {(r["term"], r["kind"]) for r in rows} >= {("launch", "graph"), ("sync", "gpu")}
    doc = json.loads(run("roofline", "--profile", "reference", "--json").stdout)
    assert doc["cost_terms"] == rows
    text = run("roofline", "--profile", "reference").output
    page = flat(A.page_roofline(A.Data(str(tmp_path / "s.sqlite"), REF), None))
    html = report_html(REF)
    for r in rows:
        assert format_time(r["seconds"]) in text and format_time(r["seconds"]) in html
        assert f"'µs': {round(r['seconds'] * 1e6, 3)}" in page
    graph = next(r for r in rows if r["kind"] == "graph")["seconds"]
    b = cost.cost_bound(W.collective("all_reduce", 1 << 20, 2), REF, MODEL, "graph", 1)
    assert b.terms_s["launch"] == graph


def test_a_time_below_its_cost_bound_is_said_in_every_view(run, tmp_path):
    """A placement faster than its cost-model bound: the CLI table and JSON, the
    dashboard's Roofline page and the report all carry the same verdict."""
    wl = tmp_path / "w.toml"
    wl.write_text('[workload]\ncollective = "all_reduce"\nsize_bytes = 268435456\nranks = 2\n')
    doc = json.loads(run("roofline", "--profile", "reference", "--workload", str(wl), "--time", "100us", "--force",
                         "--json").stdout)
    measured = doc["placements"][0]
    verdict = next(v for v in measured["derived"]["verdicts"] if "faster than its cost-model bound" in v)
    assert measured["derived"]["below_cost_bound"] is True
    text = flat(run("roofline", "--profile", "reference", "--workload", str(wl), "--time", "100us", "--force").output)
    assert "faster than its cost-model bound" in text
    w = W.collective("all_reduce", 268435456, 2)
    placed = cost.with_cost(place(w, 100e-6, MODEL), REF, MODEL)
    assert verdict in placed.verdicts
    prof = dataclasses.replace(REF, id="placed", placements=(placed,))
    page = flat(A.page_roofline(A.Data(str(tmp_path / "s.sqlite"), prof), None))
    assert flat(verdict) in page
    assert flat(verdict) in flat(report_html(prof))
    for part in placed.decomposition_s.values():
        assert part >= 0


def test_a_decomposition_never_prints_a_negative_time(run, tmp_path):
    """The issue's cases (peer_copy.toml at 1.5 ms; allgather_gemm.toml at 300 us):
    no negative part in text or JSON, and the excess named."""
    import pathlib

    examples = pathlib.Path(__file__).parent.parent / "examples"
    for toml, t in (("peer_copy.toml", "1.5ms"), ("allgather_gemm.toml", "300us")):
        res = run("roofline", "--profile", "reference", "--workload", str(examples / toml), "--time", t, "--force")
        assert not re.search(r"-\d", res.output.split("Placement")[-1]), res.output
        assert "below the model's terms" in flat(res.output) or "faster than" in flat(res.output)
        doc = json.loads(run("roofline", "--profile", "reference", "--workload", str(examples / toml), "--time", t,
                             "--force", "--json").stdout)
        assert all(v >= 0 for v in doc["placements"][0]["decomposition_s"].values())
