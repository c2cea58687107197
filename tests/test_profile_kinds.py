"""Issue 45, item 1: profiles by kind. The default profile of every command is the newest
one linkroof measured, else the bundled reference, never an import or saved placements
that happen to be newer; each command says which it used; an import keeps its
provenance in every view and export; `runs list` and the dashboard's menu mark the kind."""

import dataclasses
import json
from pathlib import Path

import factories
from click.testing import CliRunner

from linkroof.cli import cli
from linkroof.dashboard import app as A
from linkroof.profiler.session import bundled_profile, resolve_profile
from linkroof.roofline import export as E
from linkroof.schema import kind_of
from linkroof.store import Store

ANCHOR = Path(__file__).parent / "data" / "anchor"


def _store_with(tmp_path, *profiles):
    path = str(tmp_path / "s.sqlite")
    with Store(path) as s:
        for p in profiles:
            s.put(p)
    return path


def _measured(created: str, label: str = "bench:default"):
    p = factories.profile([factories.measurement()], label=label)
    return dataclasses.replace(p, created_at=created, id=f"m-{created[:4]}-{label[:5]}")


def _import(runner, store):
    res = runner.invoke(cli, ["--store", store, "import", "nccl-tests", str(ANCHOR / "nt_allgather.txt"), "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)["id"]


def test_kind_of_each_label():
    assert kind_of("reference:h200x2", 30) == "reference"
    assert kind_of("import:nccl-tests:x", 12) == "imported"
    assert kind_of("compare:k.py:f", 0) == "placements" and kind_of("", 0) == "placements"
    assert kind_of("run:quick", 17) == "measured" and kind_of("", 1) == "measured"
    assert bundled_profile().kind == "reference"


def test_a_newer_import_never_becomes_the_default(tmp_path):
    runner = CliRunner()
    old = _measured("2026-01-01T00:00:00+00:00")
    store = _store_with(tmp_path, old)
    pid = _import(runner, store)  # newer than the measured one
    got, note = resolve_profile(None, store)
    assert got.id == old.id and note.startswith(f"Using profile {old.id}, the newest measured by linkroof")
    assert resolve_profile(pid, store)[0].id == pid  # named: used
    res = runner.invoke(cli, ["--store", store, "roofline", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["profile"] == old.id and old.id in res.stderr
    kinds = {r["id"]: r["kind"] for r in json.loads(runner.invoke(cli, ["--store", store, "runs", "list",
                                                                      "--json"]).stdout)["profiles"]}
    assert kinds == {pid: "imported", old.id: "measured"}
    text = runner.invoke(cli, ["--store", store, "--width", "200", "runs", "list"]).stdout
    assert "imported" in text and "measured" in text


def test_with_only_an_import_and_saved_placements_the_reference_is_used_and_said(tmp_path):
    runner = CliRunner()
    saved = dataclasses.replace(factories.profile([], label="compare:k.py:f"), id="placements-1")
    store = _store_with(tmp_path, saved)
    _import(runner, store)
    got, note = resolve_profile(None, store)
    assert got.id == bundled_profile().id
    assert "it holds 1 imported, 1 placements" in note and "an imported one is used only when named" in note
    res = runner.invoke(cli, ["--store", store, "advise", "--size", "64K", "--json"])
    assert res.exit_code == 0, res.output  # the import's lone all_gather sweep no longer refuses advise


def test_the_dashboard_opens_on_the_newest_measured_profile_and_names_kinds(tmp_path):
    runner = CliRunner()
    old = _measured("2026-01-01T00:00:00+00:00")
    store = _store_with(tmp_path, old)
    pid = _import(runner, store)
    data = A.create_app(store).linkroof_data
    menu = data.choices()
    assert menu[0]["value"] == old.id and "[measured]" in menu[0]["label"]
    assert any(c["value"] == pid and "[imported]" in c["label"] for c in menu)
    assert menu[-1]["value"] == "reference" and "[reference]" in menu[-1]["label"]
    (tmp_path / "other").mkdir()
    only_import = _store_with(tmp_path / "other")
    _import(runner, only_import)
    assert A.create_app(only_import).linkroof_data.choices()[0]["value"] == "reference"


def test_an_imports_export_says_whose_figures_they_are(tmp_path):
    runner = CliRunner()
    store = _store_with(tmp_path)
    pid = _import(runner, store)
    res = runner.invoke(cli, ["--store", store, "export", "--profile", pid])
    assert res.exit_code == 0, res.output
    assert "nccl-tests's, imported by linkroof (not measured by it)" in res.stdout
    assert "Figures are measured by linkroof" not in res.stdout
    assert "nccl-tests figures imported" in res.stdout
    p = resolve_profile(pid, store)[0]
    assert "NVLink per GPU, one direction: spec not known (an import carries no topology)" in E.brief(p, E.facts(p))
    mine = E.brief(bundled_profile(), E.facts(bundled_profile()))
    assert "Figures are measured by linkroof" in mine and "bundled reference" in mine


def test_every_page_of_an_import_says_it_is_imported(tmp_path):
    from linkroof.profiler.session import provenance

    runner = CliRunner()
    store = _store_with(tmp_path)
    pid = _import(runner, store)
    p = resolve_profile(pid, store)[0]
    line = provenance(p, None)
    assert line.startswith("Imported results, not measured by linkroof: nccl-tests figures imported ")
    assert "measured elsewhere" not in line
    data = A.create_app(store).linkroof_data
    assert "Imported results, not measured by linkroof" in str(A.banner(pid, data))
