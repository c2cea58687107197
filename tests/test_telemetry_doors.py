"""The doors of `telemetry`'s readers (issue 42, item 8) for NCCL Inspector JSON lines,
its Prometheus textfile and nccl-tests' per-iteration JSON: hostile numbers, nesting,
lines, booleans, non-finite figures, absurd sizes, files and records given twice, lone
surrogates and invalid UTF-8. Each is a one-line refusal (TelemetryError) or a stated
warning; never a traceback, never NaN or Infinity in --json. A Hypothesis fuzz test per
reader puts hostile values anywhere in a file its writer would write.

LINKROOF_FUZZ_EXAMPLES sets the examples per fuzz test (default 40)."""

import json
import os
import tracemalloc

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linkroof.cli import cli
from linkroof.readers import telemetry as T
from test_inspector_formats import MiB, coll_perf, dump, emit, prom_bucket, three_calls, write
from test_telemetry import nccl_tests_per_iter

EXAMPLES = int(os.environ.get("LINKROOF_FUZZ_EXAMPLES", 40))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
_PROFILE = []


def reference():
    if not _PROFILE:
        from linkroof.profiler.session import bundled_profile

        _PROFILE.append(bundled_profile())
    return _PROFILE[0]


def one_line_refusal(path, *more):
    """`linkroof telemetry PATH` exits non-zero with one line, no traceback; the message."""
    res = CliRunner().invoke(cli, ["telemetry", str(path), *map(str, more), "--profile", "reference", "--json"])
    assert res.exit_code != 0 and "Traceback" not in res.output, res.output[-600:]
    assert not isinstance(res.exception, Exception) or isinstance(res.exception, SystemExit), res.exception
    lines = [line for line in res.output.splitlines() if line.startswith(("linkroof:", "Error:"))]
    assert len(lines) == 1, res.output[-600:]
    return lines[0]


def read_json_report(*paths):
    """`linkroof telemetry PATHS --json`: exits 0 and writes strict JSON (no NaN, no
    Infinity), which is returned."""
    res = CliRunner().invoke(cli, ["telemetry", *map(str, paths), "--profile", "reference", "--json"])
    assert res.exit_code == 0, res.output[-800:]
    return json.loads(res.stdout, parse_constant=lambda c: pytest.fail(f"{c} in --json"))


def inspector_line(perf_value_path, value):
    """A v4.0 record (inspector_json.cc) with the text `value` put in place of one field."""
    rec = dump("v4.0", 0, 8, three_calls("v4.0"))[0]
    text = emit(rec)
    key, old = perf_value_path
    return text.replace(f'"{key}":{old}', f'"{key}":{value}', 1)


def nccl_tests_text(mutate=None):
    doc = nccl_tests_per_iter()
    text = json.dumps(doc)
    return mutate(text) if mutate else text


# ------------------------------------------------------------------ numbers, nesting, lines


@pytest.mark.parametrize("digits", [400, 5000])
def test_long_numbers_refused_in_each_reader(tmp_path, digits):
    n = "9" * digits
    f = tmp_path / "a-pid1.log"
    f.write_text(inspector_line(("coll_msg_size_bytes", MiB), n) + "\n")
    assert f"an integer of {digits} digits" in one_line_refusal(f)
    f.write_text(inspector_line(("coll_exec_time_us", 17), n + ".5") + "\n")
    assert f"a number of {digits + 2} characters" in one_line_refusal(f)
    g = tmp_path / "m.prom"
    g.write_text(prom_bucket(1.0, 2.0).replace(" 2\n", f" {n}\n"))
    assert "not a bandwidth or a time" in one_line_refusal(g)  # the parser reads it as inf
    h = tmp_path / "nt.json"
    h.write_text(nccl_tests_text(lambda t: t.replace('"p50_us": ', f'"p50_us": {n}, "x": ', 1)))
    assert f"an integer of {digits} digits" in one_line_refusal(h)


def test_nesting_100000_deep_refused_in_each_reader(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    f = tmp_path / "a-pid1.log"
    f.write_text(inspector_line(("coll_sn", 1), deep) + "\n")
    assert "nested too deep" in one_line_refusal(f)
    h = tmp_path / "nt.json"
    h.write_text(nccl_tests_text(lambda t: t.replace('"results": ', f'"deep": {deep}, "results": ', 1)))
    assert "nested too deep" in one_line_refusal(h)
    g = tmp_path / "m.prom"  # the exposition has no nesting: brackets are a malformed line
    g.write_text(prom_bucket(1.0, 2.0) + "x{" * 50_000 + "\n")
    assert "lines under 2 KB" in one_line_refusal(g)


def test_a_5_gb_first_line_without_newline_is_refused_unread(tmp_path):
    """A sparse file: 5 GB of one line; read to MAX_LINE (1 MiB) and refused, the reader's
    peak allocation under 8 MiB."""
    f = tmp_path / "a-pid1.log"
    with open(f, "wb") as fh:
        fh.write(b'{"header":{"id":"x"},"coll_perf":{"coll":"')
        fh.truncate(5 * 1024 ** 3)
    tracemalloc.start()
    with pytest.raises(T.TelemetryError, match="a line of over 1048576 bytes"):
        T.read_telemetry(f)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8 * MiB
    for name in ("m.prom", "nt.json"):  # the other readers refuse a file that size by its size, unread
        g = tmp_path / name
        with open(g, "wb") as fh:
            fh.write(b"{" if name.endswith("json") else b"nccl_bus_bandwidth_gbs{")
            fh.truncate(5 * 1024 ** 3)
        with pytest.raises(T.LinkroofError, match="limit"):
            T.read_telemetry(g)


# ------------------------------------------------------------------ booleans, non-finite figures, absurd sizes


@pytest.mark.parametrize("field, old", [("coll_exec_time_us", 17), ("coll_sn", 1), ("coll_msg_size_bytes", MiB),
                                        ("rank", 0), ("n_ranks", 8)])
def test_true_is_never_1_us_or_rank_1(tmp_path, field, old):
    f = tmp_path / "a-pid1.log"
    f.write_text(inspector_line((field, old), "true") + "\n")
    assert "'True', not" in one_line_refusal(f)


def test_true_is_never_a_time_in_nccl_tests(tmp_path):
    h = tmp_path / "nt.json"
    h.write_text(nccl_tests_text(lambda t: t.replace('"p50_us": ', '"p50_us": true, "x": ', 1)))
    assert "p50_us is 'True', not a number" in one_line_refusal(h)


@pytest.mark.parametrize("token, said", [("NaN", "NaN is not a number"), ("Infinity", "Infinity is not a number"),
                                         ("1e400", "1e400 is beyond a double")])
def test_nan_and_1e400_refused_in_json_readers(tmp_path, token, said):
    f = tmp_path / "a-pid1.log"
    f.write_text(inspector_line(("coll_exec_time_us", 17), token) + "\n")
    assert said in one_line_refusal(f)
    h = tmp_path / "nt.json"
    h.write_text(nccl_tests_text(lambda t: t.replace('"p50_us": ', f'"p50_us": {token}, "x": ', 1)))
    assert said in one_line_refusal(h)


@pytest.mark.parametrize("value", ["NaN", "+Inf", "-1"])
def test_nan_infinite_or_negative_prometheus_values_refused(tmp_path, value):
    g = tmp_path / "m.prom"
    g.write_text(prom_bucket(1.0, 2.0).replace(" 2\n", f" {value}\n"))
    assert "not a bandwidth or a time" in one_line_refusal(g)


def test_a_non_finite_figure_reaches_json_as_null_with_a_warning():
    call = T.TelemetryCall("NCCL Inspector", 0, "h", "c", 1, "all_reduce", None, MiB, 2, float("nan"))
    report = T.TelemetryReport([], [T.TelemetryRow(call)], [], [], [], ["w"])
    doc = report.to_dict()
    json.dumps(doc, allow_nan=False)
    assert doc["collectives"][0]["time_s"] is None
    assert any("collectives[0].time_s: not a finite number" in w for w in doc["warnings"])


def test_absurd_sizes_refused(tmp_path):
    f = tmp_path / "a-pid1.log"
    f.write_text(inspector_line(("coll_msg_size_bytes", MiB), str(10 ** 30)) + "\n")  # 31 digits
    assert "an integer of 31 digits" in one_line_refusal(f)
    f.write_text(inspector_line(("coll_msg_size_bytes", MiB), str(10 ** 18)) + "\n")  # 1 EB: fits uint64
    assert "over 1 PiB" in one_line_refusal(f)
    h = tmp_path / "nt.json"
    doc = nccl_tests_per_iter()
    doc["results"][-1]["size"] = 10 ** 18
    h.write_text(json.dumps(doc))
    assert "over 1 PiB" in one_line_refusal(h) or "size" in one_line_refusal(h)


# ------------------------------------------------------------------ twice


def test_the_same_file_twice_is_read_once_and_said(tmp_path):
    f = write(tmp_path / "a-pid1.log", dump("v4.2", 0, 2, three_calls("v4.2", n=2)))
    g = tmp_path / "m.prom"
    g.write_text(prom_bucket(20.0, 150.0, size="1-2MB", nranks=2))
    h = tmp_path / "nt.json"
    h.write_text(nccl_tests_text())
    for path, rows in ((f, 3), (g, 1), (h, len(read_json_report(h)["collectives"]))):
        doc = read_json_report(path, path)
        assert len(doc["collectives"]) == rows
        assert any(f"{path.name} has the same contents as {path.name}: read once" in w for w in doc["warnings"])


def test_one_ranks_records_in_two_files_counted_once_and_said(tmp_path):
    a = write(tmp_path / "a-pid1.log", dump("v4.2", 0, 2, [coll_perf("v4.2", "AllReduce", sn, MiB, 17, 2)
                                                           for sn in (1, 2, 3)]))
    b = write(tmp_path / "b-pid1.log", dump("v4.2", 0, 2, [coll_perf("v4.2", "AllReduce", sn, MiB, 17, 2)
                                                           for sn in (2, 3, 4)]))
    doc = read_json_report(a, b)
    assert sorted(c["seq"] for c in doc["collectives"]) == [1, 2, 3, 4]
    assert any("b-pid1.log: 2 records of rank(s) 0 are also in a-pid1.log: counted once" in w
               for w in doc["warnings"])


def test_a_record_repeated_in_one_file_counted_once_and_said(tmp_path):
    lines = dump("v4.0", 0, 2, three_calls("v4.0", n=2))
    t = T.read_telemetry(write(tmp_path / "a-pid1.log", lines + lines[:1]))
    assert len(t.calls) == 3 and any("1 records repeated" in n for n in t.notes)


# ------------------------------------------------------------------ names


def test_a_lone_surrogate_in_a_name_is_shown_as_ufffd_and_said(tmp_path):
    f = tmp_path / "a-pid1.log"
    lines = [inspector_line(("coll_sn", sn), sn).replace('"hostname":"node0"', '"hostname":"node\\ud800"')
             for sn in (1,)]
    f.write_text("\n".join(lines) + "\n")
    doc = read_json_report(f)
    assert doc["collectives"][0]["host"] == "node\ufffd"
    assert any("lone surrogate" in w for w in doc["warnings"])
    res = CliRunner().invoke(cli, ["telemetry", str(f), "--profile", "reference", "--csv", str(tmp_path / "c.csv")])
    assert res.exit_code == 0 and "node\ufffd" in (tmp_path / "c.csv").read_text(encoding="utf-8")
    h = tmp_path / "nt.json"
    h.write_text(nccl_tests_text(lambda t: t.replace('"hostname": "vm"', '"hostname": "vm\\udc80"', 1)))
    doc = read_json_report(h)
    assert any("lone surrogate" in w for w in doc["warnings"])


def test_invalid_utf8_is_said(tmp_path):
    good = [emit(x) for x in dump("v4.0", 0, 2, three_calls("v4.0", n=2))]
    f = tmp_path / "a-pid1.log"
    f.write_bytes((good[0] + "\n").encode() + b'{"header":\xff}\n' + (good[1] + "\n").encode())
    assert "line 2: not UTF-8 (byte 11 is 0xff)" in one_line_refusal(f)
    f.write_bytes(("\n".join(good) + "\n").encode() + b'{"header":{"id":"\xe2\x82')  # cut in a character
    t = T.read_telemetry(f)
    assert len(t.calls) == 3 and any("line 4 cut off (not UTF-8" in n for n in t.notes)
    g = tmp_path / "m.prom"
    g.write_bytes(prom_bucket(1.0, 2.0).replace("DP Group 0", "DP\udcff").encode("utf-8", "surrogateescape"))
    assert "not UTF-8" in one_line_refusal(g)
    h = tmp_path / "nt.json"
    h.write_bytes(nccl_tests_text().replace('"vm"', '"v\udcffm"', 1).encode("utf-8", "surrogateescape"))
    assert "not UTF-8" in one_line_refusal(h)


# ------------------------------------------------------------------ a fuzz test per reader

HOSTILE = st.one_of(
    st.integers(400, 5000).map(lambda n: "9" * n), st.just("[" * 3000 + "]" * 3000), st.sampled_from(
        ["true", "false", "null", "NaN", "-Infinity", "1e400", "-1", "0", "18446744073709551616", "1e-400",
         '"\\ud800"', '"nan"', '"x"', "{}", "[]", "1.5", "1e18", str(10 ** 30), "4.0e309"]))


def holds(path):
    """The reader's contract: read, or refuse with TelemetryError; what it read analyses
    and writes strict JSON that encodes as UTF-8."""
    try:
        t = T.read_telemetry(path)
    except T.LinkroofError as e:
        assert str(e) and "\n" not in str(e)
        return None
    doc = T.analyze_telemetry([t], reference()).to_dict()
    json.dumps(doc, allow_nan=False).encode("utf-8")
    return doc


@FUZZ
@given(data=st.data(), version=st.sampled_from(["v4.0", "v4.2", "v4.4"]))
def test_inspector_json_door(tmp_path, data, version):
    lines = [emit(x) for x in dump(version, 0, 2, three_calls(version, n=2), headerless=version == "v4.4")]
    i = data.draw(st.integers(0, len(lines) - 1))
    fields = [k for k in json.loads(lines[i]) if True] + ["coll_sn", "coll_exec_time_us", "rank", "n_ranks",
                                                          "coll_records", "hostname", "coll_msg_size_bytes"]
    key = data.draw(st.sampled_from(fields))
    value = data.draw(HOSTILE)
    import re

    lines[i] = re.sub(f'"{key}":("[^"]*"|[^,}}]+|\\{{[^}}]*\\}})', lambda m: f'"{key}":{value}', lines[i], count=1)
    body = "\n".join(lines) + data.draw(st.sampled_from(["\n", "", "\n\n", "\n" + lines[0][:30]]))
    holds(write_raw(tmp_path / "n-pid1.log", body.encode("utf-8", "surrogatepass")))


@FUZZ
@given(data=st.data())
def test_prometheus_door(tmp_path, data):
    text = prom_bucket(678.263, 9498.47) + prom_bucket(464.9, 1154.87, p2p=True, collective="Send", size="512-513MB")
    token = data.draw(st.sampled_from(["678.263", "9498.47", "v5.1", "4-5GB", "Ring_ll", "AllReduce", '"4"', "{", ",",
                                       "nccl_bus_bandwidth_gbs", "\n"]))
    value = data.draw(st.one_of(HOSTILE, st.sampled_from(["+Inf", "NaN", "-0", "v9.9", "0-1GB", "\\", '"', "}", "",
                                                          "nccl_bus_bandwidth_gbs{"]),
                                st.text(max_size=8)))
    text = text.replace(token, value, data.draw(st.integers(1, 3)))
    holds(write_raw(tmp_path / "m.prom", text.encode("utf-8", "surrogatepass")))


@FUZZ
@given(data=st.data())
def test_nccl_tests_door(tmp_path, data):
    text = nccl_tests_text()
    key = data.draw(st.sampled_from(['"p50_us": ', '"size": ', '"times_us": ', '"skipped_iterations": ', '"rank": ',
                                     '"hostname": ', '"per_process_max_times_us": ', '"min_us": ', '"nranks": ']))
    value = data.draw(HOSTILE)
    text = text.replace(key, f"{key}{value}, \"_was\": ", data.draw(st.integers(1, 2)))
    holds(write_raw(tmp_path / "nt.json", text.encode("utf-8", "surrogatepass")))


def write_raw(path, data):
    path.write_bytes(data)
    return path


def test_a_dump_stats_marker_whose_rank_is_not_an_integer_is_refused(tmp_path):
    # found by test_inspector_json_door: {"rank": {}} in a marker was a TypeError
    lines = dump("v4.2", 0, 2, three_calls("v4.2", n=2))
    lines[0]["header"]["rank"] = {}
    f = write(tmp_path / "a-pid1.log", lines)
    assert "line 1: missing or bad field (header.rank is '{}', not an integer) in a dump_stats marker" in \
        one_line_refusal(f)
