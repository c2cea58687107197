"""Importing NVIDIA's tools' real outputs from the 2xH200 machine (shared/anchor-outputs,
copied to tests/data/anchor): the numbers the tools printed, the traps, bad files."""

import json

import pytest
from click.testing import CliRunner

from fakes import DATA
from linkroof.cli import cli
from linkroof.profiler.importers import ImportFormatError, import_file, parse_nccl_tests, parse_nvbandwidth
from linkroof.schema import Profile, loads

ANCHOR = DATA / "anchor"
GB = 1e9


def find(imported, name, mechanism=None, devices=None, **params):
    out = [m for m in imported.measurements if m.spec.name == name
           and (mechanism is None or m.spec.mechanism == mechanism)
           and (devices is None or m.spec.devices == devices)
           and all(m.spec.params.get(k) == v for k, v in params.items())]
    assert len(out) == 1, (name, mechanism, devices, params, len(out))
    return out[0]


def test_nvbandwidth_json_every_case():
    imp = import_file("nvbandwidth", ANCHOR / "nvb.json")
    assert {g[1] for g in imp.gpus} == {"NVIDIA H200"} and len(imp.gpus) == 2
    # read: "GPU(row) -> GPU(column)" moves data column -> row, issued by the row GPU
    m = find(imp, "p2p_read_bandwidth", "ce", (1, 0))
    assert m.bandwidth_bytes_per_s == pytest.approx(393.817 * GB) and m.spec.params["issuer"] == 0
    assert find(imp, "p2p_read_bandwidth", "ce", (0, 1)).bandwidth_bytes_per_s == pytest.approx(393.673 * GB)
    # write: "GPU(row) <- GPU(column)" moves data row -> column, issued by the row GPU
    m = find(imp, "p2p_write_bandwidth", "ce", (0, 1))
    assert m.bandwidth_bytes_per_s == pytest.approx(396.142 * GB) and m.spec.params["issuer"] == 0
    total = find(imp, "p2p_bidir_read_total_bandwidth", "ce", (0, 1))
    assert total.bandwidth_bytes_per_s == pytest.approx(778.92 * GB)
    assert find(imp, "p2p_bidir_write_total_bandwidth", "ce", (0, 1)).bandwidth_bytes_per_s == pytest.approx(783.396 * GB)
    # the test of cell (0, 1) ran 1 -> 0 (first matrix, read) and 0 -> 1 (second) at once
    assert find(imp, "p2p_bidir_read_bandwidth", "ce", (1, 0), cell="0,1").bandwidth_bytes_per_s == pytest.approx(389.39 * GB)
    assert find(imp, "p2p_bidir_read_bandwidth", "ce", (0, 1), cell="0,1").bandwidth_bytes_per_s == pytest.approx(389.531 * GB)
    assert find(imp, "h2d_bandwidth", "ce", (0,)).bandwidth_bytes_per_s == pytest.approx(55.3393 * GB)
    assert find(imp, "d2h_bandwidth", "ce", (1,)).bandwidth_bytes_per_s == pytest.approx(55.3429 * GB)
    assert find(imp, "p2p_write_bandwidth", "sm", (1, 0)).spec.params["testcase"] == "device_to_device_memcpy_write_sm"
    local = find(imp, "local_copy_bandwidth", "ce", (0,))
    assert "bytes copied" in local.bytes_convention and local.bandwidth_bytes_per_s > 2000 * GB
    lat = find(imp, "pointer_chase_latency", "latency", (0, 1))
    assert 800e-9 < lat.median_s < 900e-9
    assert all(m.source == "nvbandwidth" and m.verified for m in imp.measurements)
    assert not any("sum" in m.spec.name.lower() for m in imp.measurements)  # SUM is not a simultaneous total
    assert len(imp.measurements) == 86


def test_nvbandwidth_text():
    imp = import_file("nvbandwidth", ANCHOR / "nvb.txt")
    assert len(imp.measurements) == 8
    assert find(imp, "p2p_read_bandwidth", "ce", (1, 0)).bandwidth_bytes_per_s == pytest.approx(393.91 * GB)
    assert find(imp, "p2p_write_bandwidth", "sm", (1, 0)).bandwidth_bytes_per_s == pytest.approx(369.86 * GB)
    assert find(imp, "h2d_bandwidth", "ce", (1,)).bandwidth_bytes_per_s == pytest.approx(55.48 * GB)
    assert find(imp, "pointer_chase_latency", "latency", (0, 1)).median_s == pytest.approx(830.74e-9)
    assert imp.gpus == [(0, "NVIDIA H200", "00000000:00:06"), (1, "NVIDIA H200", "00000000:00:07")]


@pytest.mark.parametrize("file, coll, factor, oop_busbw, ip_busbw, oop_time_us", [
    ("nt_allreduce.txt", "all_reduce", 1.0, 313.81, 314.14, 1710.84),
    ("nt_allgather.txt", "all_gather", 0.5, 255.7, 272.6, None),
    ("nt_alltoall.txt", "all_to_all", 0.5, 294.3, None, None),
    ("nt_sendrecv.txt", "sendrecv", 1.0, 355.6, None, None),
])
def test_nccl_tests_text(file, coll, factor, oop_busbw, ip_busbw, oop_time_us):
    imp = import_file("nccl-tests", ANCHOR / file)
    assert len(imp.measurements) == 28 and imp.hostname == "vm"
    big = [m for m in imp.measurements if m.spec.message_bytes == 512 << 20]
    oop = next(m for m in big if not m.spec.params["in_place"])
    ip = next(m for m in big if m.spec.params["in_place"])
    assert oop.spec.name == f"nccl_{coll}" and oop.spec.devices == (0, 1) and oop.busbw_factor == factor
    assert oop.busbw_bytes_per_s / GB == pytest.approx(oop_busbw, abs=0.06)
    assert oop.verified and oop.source == "nccl-tests"
    if ip_busbw:
        assert ip.busbw_bytes_per_s / GB == pytest.approx(ip_busbw, abs=0.06)
    if oop_time_us:
        assert oop.median_s == pytest.approx(oop_time_us * 1e-6)
    assert any("mean over the sizes" in n for n in imp.notes)
    if coll in ("all_to_all", "sendrecv"):
        assert not ip.verified and "N/A" in ip.verification  # nccl-tests did not check these


def test_nccl_tests_json_matches_text():
    text = import_file("nccl-tests", ANCHOR / "nt_allreduce.txt")
    js = import_file("nccl-tests", ANCHOR / "nt_allreduce.json")
    assert len(js.measurements) == len(text.measurements)
    for a, b in zip(text.measurements, js.measurements):
        assert a.spec.message_bytes == b.spec.message_bytes and a.spec.params["in_place"] == b.spec.params["in_place"]
        assert a.median_s == pytest.approx(b.median_s, abs=0.006e-6)
        assert a.busbw_bytes_per_s == pytest.approx(b.busbw_bytes_per_s, abs=0.006 * GB)
    assert "NCCL_NVLS_ENABLE=0" in js.notes[0]


def cut(path, keep_lines):
    return "\n".join(path.read_text().splitlines()[:keep_lines]) + "\n"


@pytest.mark.parametrize("parser, text, message", [
    (parse_nccl_tests, lambda: cut(ANCHOR / "nt_allreduce.txt", 20), "line 20: ends before '# Collective test concluded'"),
    (parse_nccl_tests, lambda: (ANCHOR / "nt_allreduce.txt").read_text().replace("     sum      -1    13.20", "     sum", 1),
     "line 13: expected 13 columns"),
    (parse_nccl_tests, lambda: "hello\n", "not nccl-tests output"),
    (parse_nccl_tests, lambda: (ANCHOR / "nt_allreduce.json").read_text()[:700], "not valid JSON"),
    (parse_nvbandwidth, lambda: cut(ANCHOR / "nvb.txt", 16), "line 16: device_to_device_memcpy_read_ce ends without its SUM"),
    (parse_nvbandwidth, lambda: "not it\n", "not nvbandwidth output"),
    (parse_nvbandwidth, lambda: (ANCHOR / "nvb.json").read_text()[:3000], "not valid JSON"),
    (parse_nvbandwidth, lambda: (ANCHOR / "nvb.json").read_text().replace('"393.817"', '"fast"'), "not a number: 'fast'"),
])
def test_bad_files_name_the_problem(parser, text, message):
    with pytest.raises(ImportFormatError, match=message):
        parser(text(), "f")


def test_cli_import_and_into(store_path, tmp_path):
    r = CliRunner()
    res = r.invoke(cli, ["import", "nccl-tests", str(ANCHOR / "nt_allreduce.txt"), "--json"])
    assert res.exit_code == 0, res.output
    p = loads(res.stdout, Profile)
    assert p.topology.source.startswith("import:nccl-tests") and p.topology.gpus[1].pci_bus_id == "0000:00:07"
    res = r.invoke(cli, ["import", "nvbandwidth", str(ANCHOR / "nvb.txt"), "--into", p.id])
    assert res.exit_code == 0, res.output
    stored = loads(r.invoke(cli, ["runs", "show", p.id, "--json"]).stdout, Profile)
    assert len(stored.measurements) == 36 and {m.source for m in stored.measurements} == {"nccl-tests", "nvbandwidth"}
    assert json.loads(r.invoke(cli, ["runs", "list", "--json"]).stdout)["total"] == 1


def test_cli_import_bad_file_changes_nothing(store_path, tmp_path):
    bad = tmp_path / "cut.txt"
    bad.write_text(cut(ANCHOR / "nt_sendrecv.txt", 18))
    res = CliRunner().invoke(cli, ["import", "nccl-tests", str(bad)])
    assert res.exit_code == 1 and "truncated" in res.output and "Traceback" not in res.output
    assert json.loads(CliRunner().invoke(cli, ["runs", "list", "--json"]).stdout)["total"] == 0
    res = CliRunner().invoke(cli, ["import", "nvbandwidth", str(tmp_path / "missing.json")])
    assert res.exit_code == 1 and "cannot read" in res.output
