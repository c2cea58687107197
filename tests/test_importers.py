"""Importing NVIDIA's tools' real outputs from the 2xH200 machine (shared/anchor-outputs,
copied to tests/data/anchor): the numbers the tools printed, the traps, bad files."""

import json

import pytest
from click.testing import CliRunner

from fakes import DATA
from linkroof.cli import cli
from linkroof.readers.tools import ImportFormatError, import_file, parse_nccl_tests, parse_nvbandwidth
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
    # nvbandwidth checks no data: never "verified", counted as printed, and every table says so
    assert all(m.source == "nvbandwidth" and not m.verified and m.as_printed and m.trusted for m in imp.measurements)
    assert {m.verified_text for m in imp.measurements} == {"not checked by nvbandwidth"}
    assert all("not checked by nvbandwidth" in m.all_warnings[0] for m in imp.measurements)
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
    rows = [line for line in (ANCHOR / file).read_text().splitlines() if line.strip() and not line.startswith("#")]
    sized = [r for r in rows if int(r.split()[0]) > 0]  # a size-0 row moved nothing: no figure
    assert len(imp.measurements) == 2 * len(sized) and imp.hostname == "vm"
    assert (len(rows) > len(sized)) == any("rows of size 0 not imported" in n for n in imp.notes)
    for m in imp.measurements:  # from size and time, as nccl-tests computes before it rounds to two decimals
        assert m.spec.message_bytes > 0 and m.bandwidth_bytes_per_s == m.spec.message_bytes / m.median_s
        assert m.busbw_bytes_per_s == pytest.approx(m.bandwidth_bytes_per_s * factor, rel=1e-12)
        assert m.reported["printed_algbw_bytes_per_s"] == pytest.approx(m.bandwidth_bytes_per_s, abs=0.0051 * GB + 1e-3 * m.bandwidth_bytes_per_s)
    small = min(imp.measurements, key=lambda m: m.spec.message_bytes)
    assert small.bandwidth_bytes_per_s > 0  # an 8 B or 32 B row printed 0.00 GB/s; its figure is not 0
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
        # one run, two outputs, one figure: within the text's rounding of the time (two decimals of a microsecond)
        assert a.bandwidth_bytes_per_s == pytest.approx(b.bandwidth_bytes_per_s, rel=0.005e-6 / a.median_s + 1e-12)
        assert a.busbw_bytes_per_s == pytest.approx(b.busbw_bytes_per_s, rel=0.005e-6 / a.median_s + 1e-12)
        assert a.reported["count"] == b.reported["count"]
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


def test_runs_show_collectives_keeps_every_column_of_the_file(store_path):
    """An imported nccl-tests run shown as nccl-tests prints it: every column kept (time,
    algbw, busbw, #wrong, out of place and in place), the file's own count column, and
    headings that tell the two times apart."""
    r = CliRunner()
    res = r.invoke(cli, ["import", "nccl-tests", str(ANCHOR / "nt_allgather.txt"), "--json"])
    pid = loads(res.stdout, Profile).id
    doc = json.loads(r.invoke(cli, ["runs", "show", pid, "--collectives", "--json"]).stdout)
    (title, rows), = doc["collectives"].items()
    assert title == "all_gather fp32 (nccl-tests, host launch)"
    printed = {int(c[0]): c for c in (line.split() for line in (ANCHOR / "nt_allgather.txt").read_text().splitlines()
                                      if line.strip() and not line.startswith("#")) if int(c[0]) > 0}
    assert [row["size"] for row in rows] == sorted(printed)
    for row in rows:
        c = printed[row["size"]]
        assert row["count"] == int(c[1])
        assert (row["out_time_us"], row["in_time_us"]) == (float(c[5]), float(c[9]))
        within = 0.011 + float(c[6]) * 0.006 / float(c[5])  # the printed time's rounding, then two decimals
        assert row["out_algbw_GBps"] == pytest.approx(float(c[6]), abs=within)
        assert row["out_busbw_GBps"] == pytest.approx(float(c[7]), abs=within)
        assert (row["out_wrong"], row["in_wrong"]) == (c[8], c[12])
    text = r.invoke(cli, ["runs", "show", pid, "--collectives"]).output
    header = [h for h in text.splitlines() if "size (B)" in h][0]
    assert header.count("#wrong") == 2 and header.count("algbw") == 2 and header.count("busbw") == 2
    from linkroof.render import collectives_tables

    table = collectives_tables(doc["collectives"]).renderables[0]
    heads = [c.header for c in table.columns]
    times = [h for h in heads if "time" in h]
    assert len(times) == len(set(times)) and "out-of-place time (us)" in times and "in-place time (us)" in times


def test_linkroofs_own_collective_table_names_each_time_apart():
    """linkroof's collectives carry both timings: the host-launch columns say which
    placement they belong to, so no two time columns share a heading."""
    from linkroof.profiler.session import bundled_profile
    from linkroof.render import collectives_tables
    from linkroof.roofline.summaries import collective_rows

    tables = collective_rows(bundled_profile())
    table = collectives_tables({"all_reduce fp32 (linkroof)": tables["all_reduce fp32 (linkroof)"]}).renderables[0]
    times = [c.header for c in table.columns if "time" in c.header]
    assert len(times) == 4 and len(set(times)) == 4
    assert "in-place time with host launch (us)" in times


def _nt(path="nt_allreduce.txt"):
    return (ANCHOR / path).read_text()


@pytest.mark.parametrize("case, text, message", [
    ("a negative cell", lambda: _first_nvb_cell("-393.91"), "not a figure"),
    ("nan", lambda: _first_nvb_cell("nan"), "not a figure"),
    ("inf", lambda: _first_nvb_cell("inf"), "not a figure"),
    ("1e400", lambda: _first_nvb_cell("1e400"), "not a figure"),
    ("a row of 200000 cells", lambda: _first_nvb_row(" ".join(["1.0"] * 200_000)), "more than 256 GPUs"),
])
def test_nvbandwidth_figures_are_finite_and_bounded(case, text, message):
    with pytest.raises(ImportFormatError, match=message):
        parse_nvbandwidth(text(), "f")


def _nvb_lines():
    return (ANCHOR / "nvb.txt").read_text().splitlines()


def _first_nvb_row(cells):
    lines = _nvb_lines()
    i = next(k for k, line in enumerate(lines) if line.strip().startswith("0 ") and "." in line)
    lines[i] = f"         0 {cells}"
    return "\n".join(lines) + "\n"


def _first_nvb_cell(value):
    lines = _nvb_lines()
    i = next(k for k, line in enumerate(lines) if line.strip().startswith("0 ") and "." in line)
    cells = lines[i].split()
    j = next(k for k, c in enumerate(cells[1:], 1) if c != "N/A")
    cells[j] = value
    lines[i] = "  ".join(cells)
    return "\n".join(lines) + "\n"


def _nt_row(change):
    lines = _nt().splitlines()
    i = next(k for k, line in enumerate(lines) if line.strip().startswith("536870912 "))
    cells = lines[i].split()
    change(cells)
    lines[i] = "  ".join(cells)
    return "\n".join(lines) + "\n"


def _swap(cells, a, b):
    cells[a], cells[b] = cells[b], cells[a]


@pytest.mark.parametrize("case, text, message", [
    ("a negative time", lambda: _nt_row(lambda c: c.__setitem__(5, "-1710.84")), "not a figure"),
    ("a NaN time", lambda: _nt_row(lambda c: c.__setitem__(5, "nan")), "not a figure"),
    ("a negative size", lambda: _nt_row(lambda c: c.__setitem__(0, "-536870912")), "negative size"),
    ("time and busbw swapped", lambda: _nt_row(lambda c: _swap(c, 5, 7)), "not size / time"),
    ("algbw 1000x size / time", lambda: _nt_row(lambda c: c.__setitem__(6, "313810.00")), "not size / time"),
    ("busbw not algbw x factor", lambda: _nt_row(lambda c: c.__setitem__(7, "200.00")), "is not algbw x 1"),
])
def test_nccl_tests_columns_must_agree(case, text, message):
    """An imported row is checked column against column (algbw = size / time, busbw =
    algbw x factor, within nccl-tests' rounding); a mismatch is refused, naming the line."""
    with pytest.raises(ImportFormatError, match=f"line \\d+: .*{message}"):
        parse_nccl_tests(text(), "f")


def test_nccl_tests_cut_inside_a_later_test_is_truncated():
    """A file of several tests cut inside the third is refused as truncated (the first
    tests' 'concluded' lines must not cover it)."""
    text = (ANCHOR / "nt-all.txt").read_text()
    starts = [i for i, line in enumerate(text.splitlines()) if "Collective test starting" in line]
    assert len(starts) >= 3
    cut = "\n".join(text.splitlines()[:starts[2] + 20]) + "\n"
    with pytest.raises(ImportFormatError, match="truncated"):
        parse_nccl_tests(cut, "f")


def test_nccl_tests_repetitions_are_the_files():
    """`iters: 20` in the header is the repetition count (not 'agg iters: 1')."""
    for name in ("nt_allreduce.txt", "nt_allreduce.json"):
        imp = import_file("nccl-tests", ANCHOR / name)
        assert {m.spec.repetitions for m in imp.measurements} == {20}, name


@pytest.mark.parametrize("change, message", [
    (lambda cfg: cfg.update(ngpus=-4), "not a run of nccl-tests"),
    (lambda cfg: cfg.update(nthreads=100000), "not a run of nccl-tests"),
])
def test_nccl_tests_json_config_is_checked(change, message):
    doc = json.loads((ANCHOR / "nt_allreduce.json").read_text())
    change(doc["config"])
    with pytest.raises(ImportFormatError, match=message):
        parse_nccl_tests(json.dumps(doc), "f")
