"""`linkroof check` (the health gate) and `linkroof runs diff`."""

import dataclasses
import json
import xml.etree.ElementTree as ET

import factories
import pytest
from click.testing import CliRunner

from linkroof.cli import cli
from linkroof.profiler.session import bundled_profile
from linkroof.roofline import gate
from linkroof.roofline.summaries import compare_profiles, figures_by_key
from linkroof.schema import dumps

REF = bundled_profile()


def scaled(profile, factor, pred):
    """The profile with the figures matching `pred` `factor` times faster."""
    ms = [dataclasses.replace(m, times_s=tuple(t / factor for t in m.times_s)) if pred(m) else m
          for m in profile.measurements]
    return dataclasses.replace(profile, id=profile.id + "-x", measurements=tuple(ms))


def nvlink_ce(m):
    return m.spec.mechanism == "ce" and m.spec.name in ("p2p_read_bandwidth", "p2p_write_bandwidth")


def run(tmp_path, *args):
    return CliRunner().invoke(cli, ["--store", str(tmp_path / "s.sqlite"), *args], catch_exceptions=False)


def test_check_passes_a_slower_baseline_and_fails_against_a_faster_one(tmp_path):
    slower = tmp_path / "slower.json"
    slower.write_text(dumps(scaled(REF, 1 / 1.01, nvlink_ce)))  # the baseline's NVLink 1 % lower
    ok = run(tmp_path, "check", "--baseline", str(slower), "--profile", "reference", "--junit", str(tmp_path / "a.xml"))
    assert ok.exit_code == 0, ok.output
    faster = tmp_path / "faster.json"
    faster.write_text(dumps(scaled(REF, 1.2, nvlink_ce)))  # the baseline's NVLink 20 % higher
    bad = run(tmp_path, "check", "--baseline", str(faster), "--profile", "reference", "--junit",
              str(tmp_path / "b.xml"), "--json")
    assert bad.exit_code == 1
    doc = json.loads(bad.stdout[:bad.stdout.rindex("}") + 1])
    failed = [c for c in doc["checks"] if not c["passed"]]
    assert failed and all(c["name"].startswith(("p2p_read_bandwidth ce", "p2p_write_bandwidth ce")) for c in failed)
    assert all(c["ratio"] == pytest.approx(1 / 1.2, rel=1e-6) for c in failed)
    suite = ET.parse(tmp_path / "b.xml").getroot()
    assert int(suite.get("failures")) == len(failed) and int(suite.get("tests")) == len(doc["checks"])
    assert ET.parse(tmp_path / "a.xml").getroot().get("failures") == "0"


@pytest.mark.parametrize("args", [["--profile", "reference"], []])
def test_a_profile_checked_against_itself_has_nothing_to_check(tmp_path, args):
    """The reference held to itself (named, or as here with no GPU and an empty store,
    where the newest profile is the reference) passed '1000 of 1000 checks' and exited
    0: there was nothing to check, and it says so with exit code 3."""
    res = CliRunner().invoke(cli, ["--store", str(tmp_path / "s.sqlite"), "check", "--baseline", "reference", *args])
    assert res.exit_code == 3, res.output
    assert "nothing to check" in res.output and "checks passed" not in res.output


def test_a_small_drop_within_the_threshold_passes():
    slower = scaled(REF, 1 / 1.03, nvlink_ce)  # 3 % slower
    assert gate.against_baseline(slower, REF, 0.05).passed
    assert not gate.against_baseline(slower, REF, 0.02).passed


def test_topology_a_link_down_and_pcie_at_gen4_fail():
    topo = REF.topology
    g0 = topo.gpus[0]
    links = tuple(dataclasses.replace(n, active=False) if n.index == 0 else n for n in g0.nvlinks)
    g0 = dataclasses.replace(g0, nvlinks=links, pcie_gen_max=4)
    degraded = dataclasses.replace(REF, topologies=(dataclasses.replace(topo, gpus=(g0,) + topo.gpus[1:]),))
    failed = {c.name: c for c in gate.against_baseline(degraded, REF).failed}
    assert set(failed) == {"GPU0 active NVLinks", "GPU0 PCIe generation"}
    assert failed["GPU0 active NVLinks"].detail == "1 NVLinks down"


def test_minimum_figures_and_spec_share(tmp_path):
    mins = tmp_path / "min.toml"
    mins.write_text('[[minimum]]\nname = "p2p_write_bandwidth"\nmechanism = "ce"\nmin = 390e9\n'
                    '[[minimum]]\nname = "gemm_throughput"\ndtype = "fp16"\nmin = 900e12\n'
                    '[[minimum]]\nname = "pointer_chase_latency"\npattern = "peer"\nmax_s = 1e-6\n')
    res = run(tmp_path, "check", "--baseline", str(mins), "--profile", "reference", "--json")
    doc = json.loads(res.stdout[:res.stdout.rindex("}") + 1])
    failed = [c["name"] for c in doc["checks"] if not c["passed"]]
    assert res.exit_code == 1 and len(failed) == 1  # 814 TFLOP/s on the reference, under 900
    assert failed[0].startswith("gemm_throughput compute GPU ") and failed[0].endswith("dtype=fp16")
    assert gate.against_spec(REF, 0.70).passed and not gate.against_spec(REF, 0.95).passed
    with pytest.raises(gate.GateError, match="minimum\\[0\\]"):
        gate.against_minimums(REF, [{"name": "x"}])


def test_check_needs_something_to_hold_to(tmp_path):
    assert run(tmp_path, "check", "--profile", "reference").exit_code == 2
    assert run(tmp_path, "check", "--min-spec", "eighty", "--profile", "reference").exit_code == 2


def test_runs_diff_itself_is_empty_and_order_does_not_matter(tmp_path):
    same = compare_profiles(REF, REF)
    assert same.changed == [] and same.compared == len(figures_by_key(REF)) and same.only_in_a == 0
    other = scaled(REF, 1.10, lambda m: m.spec.mechanism == "tma")
    ab, ba = compare_profiles(REF, other).changed, compare_profiles(other, REF).changed
    assert {r["figure"] for r in ab} == {r["figure"] for r in ba} and ab
    assert all(r["before"].endswith(("GB/s", "TFLOP/s", " ns", " us", " ms")) for r in ab)  # units, not raw bytes/s
    f = tmp_path / "o.json"
    f.write_text(dumps(other))
    res = run(tmp_path, "runs", "diff", "reference", str(f))
    assert res.exit_code == 0 and "changed beyond the noise" in res.output and "+10.00 %" in res.output
    same = run(tmp_path, "runs", "diff", "reference", "reference")
    assert "No figure changed" in same.output and f"({same_count(REF)} figures compared)" in same.output


def same_count(p):
    return len(figures_by_key(p))


def test_runs_diff_matches_on_parameters(tmp_path):
    """Two figures that differ only in a parameter (block count) are never compared, and
    then no view says "nothing changed": it says nothing was compared (CLI text and JSON,
    the dashboard's Runs page)."""
    a = factories.profile([factories.measurement(blocks=132, times=(1e-3,) * 3)])
    b = factories.profile([factories.measurement(blocks=264, times=(2e-3,) * 3)])
    result = compare_profiles(a, b)
    assert result.changed == [] and result.compared == 0 and (result.only_in_a, result.only_in_b) == (1, 1)
    fa, fb = tmp_path / "a.json", tmp_path / "b.json"
    fa.write_text(dumps(a))
    fb.write_text(dumps(b))
    text = " ".join(run(tmp_path, "runs", "diff", str(fa), str(fb)).output.split())
    assert "nothing was compared" in text and "No figure changed" not in text
    doc = json.loads(run(tmp_path, "runs", "diff", str(fa), str(fb), "--json").output)
    assert doc["compared"] == 0 and "nothing was compared" in doc["verdict"]
    from linkroof.dashboard.app import Data, runs_diff

    data = Data(str(tmp_path / "s.sqlite"), a)
    with data.store() as st:
        st.put(b)
    page = str(runs_diff(a.id, b.id, data))
    assert "nothing was compared" in page and "No figure changed" not in page


def test_runs_spread_over_several_runs(tmp_path):
    runs = [scaled(REF, f, lambda m: m.spec.mechanism == "nccl") for f in (1.0, 1.02, 0.97)]
    paths = []
    for i, p in enumerate(runs):
        f = tmp_path / f"r{i}.json"
        f.write_text(dumps(dataclasses.replace(p, id=f"run-{i}")))
        paths.append(str(f))
    res = run(tmp_path, "runs", "spread", *paths, "--mechanism", "nccl", "--min-size", "1M", "--json")
    rows = json.loads(res.stdout)["figures"]
    assert res.exit_code == 0 and rows and all(r["runs"] == 3 for r in rows)
    # bus bandwidths 1, 1.02 and 0.97 times the same: spread (1.02 - 0.97) / median (1)
    assert all(r["spread_percent"] == pytest.approx(5.0, abs=0.01) for r in rows)
    text = run(tmp_path, "runs", "spread", *paths, "--mechanism", "nccl")
    assert text.exit_code == 0 and "largest spread" in text.output
    assert run(tmp_path, "runs", "spread", paths[0]).exit_code == 2
