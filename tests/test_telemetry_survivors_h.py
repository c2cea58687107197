"""Telemetry's small rules, held one by one (mutation survivors, share h):

- names read from a file: a null is no name (""), a number is its digits, a lone
  surrogate becomes U+FFFD and the note quotes (at most 60 characters of) the name;
- numbers in JSON: integers of up to 20 digits (a sign not counted), floats written in up
  to 64 characters; a bad value is quoted to at most 40 characters; `true` is no count;
- the report as JSON: its keys, every row's figures, the stats without the per-iteration
  lists, non-finite figures and lone surrogates fixed and said at their exact place
  (at most 20 places said);
- each file and each record once: identical files, records already read from another
  file (an Inspector record is its communicator, rank, collective and sequence number; a
  point-to-point record also its operation; a Prometheus bucket all its labels), and
  what is said about them;
- bytes that are not UTF-8: the file and the byte named.

Every expected value is worked out by hand from the format."""

import json

import pytest

from linkroof.readers import telemetry as T
from test_inspector_formats import MiB, coll_perf, dump, emit, p2p_perf, prom_bucket, three_calls, write

_PROFILE = []


def reference():
    if not _PROFILE:
        from linkroof.profiler.session import bundled_profile

        _PROFILE.append(bundled_profile())
    return _PROFILE[0]


def v40_line(rank=0, n_ranks=2, sn=1, host="node0", **head):
    """One v4.0 record (header and metadata on the line) of a 1 MiB all-reduce in 17 us."""
    rec = dump("v4.0", rank, n_ranks, [coll_perf("v4.0", "AllReduce", sn, MiB, 17, n_ranks)])[0]
    rec["metadata"]["hostname"] = host
    rec["header"].update(head)
    return rec


def read_lines(tmp_path, lines, name="a-pid1.log"):
    return T.read_telemetry(write(tmp_path / name, lines))


def refusal(path):
    with pytest.raises(T.TelemetryError) as e:
        T.read_telemetry(path)
    return str(e.value)


# ------------------------------------------------------------------ names from a file


def test_a_null_hostname_and_timing_source_are_no_name_not_the_word_none(tmp_path):
    """JSON null where a name belongs is an empty name: never "None", never "XXXX"."""
    rec = v40_line()
    rec["metadata"]["hostname"] = None
    rec["coll_perf"]["coll_timing_source"] = None
    (c,) = read_lines(tmp_path, [rec]).calls
    assert c.host == "" and c.timing == ""


def test_a_numeric_name_is_kept_as_its_digits(tmp_path):
    """A hostname or communicator id written as a number is that number's text."""
    rec = v40_line(host=42, id=123456789)
    (c,) = read_lines(tmp_path, [rec]).calls
    assert c.host == "42" and c.comm == "123456789"


def test_a_lone_surrogate_name_is_quoted_in_the_note_to_60_characters(tmp_path):
    """The note names the first bad name as ascii() shows it, cut to 60 characters."""
    host = "h" * 100 + "\ud800"
    t = read_lines(tmp_path, [v40_line(host=host)])
    assert t.calls[0].host == "h" * 100 + "\ufffd"
    (note,) = [n for n in t.notes if "lone surrogate" in n]
    assert note.startswith("1 names with a lone surrogate")
    assert f"e.g. '{'h' * 59}: shown with U+FFFD" in note  # ascii(host)[:60]: the quote and 59 h


def test_a_short_lone_surrogate_name_is_quoted_whole(tmp_path):
    t = read_lines(tmp_path, [v40_line(host="node\udc80")])
    assert any("e.g. 'node\\udc80': shown with U+FFFD" in n for n in t.notes), t.notes


# ------------------------------------------------------------------ numbers in JSON


def test_a_boolean_node_count_is_no_count(tmp_path):
    """header.nnodes true is not 1 node: no node count at all; 2 is 2."""
    (c,) = read_lines(tmp_path, [v40_line(nnodes=True)]).calls
    assert c.nodes is None
    (c,) = read_lines(tmp_path, [v40_line(nnodes=2)]).calls
    assert c.nodes == 2


def test_integers_of_20_digits_are_read_21_refused():
    """The writers write uint64 at most: 20 digits; a minus sign is no digit."""
    assert T.loads_strict("18446744073709551615") == 2 ** 64 - 1
    assert T.loads_strict("-99999999999999999999") == -(10 ** 20 - 1)
    with pytest.raises(T.JSONRefused, match="an integer of 21 digits"):
        T.loads_strict("1" + "0" * 20)
    with pytest.raises(T.JSONRefused, match="an integer of 21 digits"):
        T.loads_strict("-1" + "0" * 20)


def test_a_uint64_field_in_a_record_is_read(tmp_path):
    """An Inspector record whose pid is the largest uint64 (20 digits) reads."""
    rec = v40_line()
    rec["metadata"]["pid"] = 2 ** 64 - 1
    assert len(read_lines(tmp_path, [rec]).calls) == 1


def test_a_time_written_in_64_characters_is_read_65_refused(tmp_path):
    """A double written in full is under 30 characters; up to 64 are taken."""
    f = tmp_path / "a-pid1.log"
    text = emit(v40_line())
    assert '"coll_exec_time_us":17,' in text
    t64 = "17." + "0" * 61
    assert len(t64) == 64
    f.write_text(text.replace('"coll_exec_time_us":17', f'"coll_exec_time_us":{t64}') + "\n")
    (c,) = T.read_telemetry(f).calls
    assert c.time_s == pytest.approx(17e-6)
    f.write_text(text.replace('"coll_exec_time_us":17', f'"coll_exec_time_us":{t64}0') + "\n")
    assert "a number of 65 characters" in refusal(f)


def test_a_bad_rank_is_quoted_to_40_characters(tmp_path):
    """A rank that is not an integer is refused, the value quoted to 40 characters."""
    f = write(tmp_path / "a-pid1.log", [v40_line(rank="r" * 50)])
    msg = refusal(f)
    assert f"header.rank is '{'r' * 40}', not an integer" in msg and "line 1" in msg


def test_a_bad_time_is_quoted_to_40_characters(tmp_path):
    rec = v40_line()
    rec["coll_perf"]["coll_exec_time_us"] = "t" * 50
    msg = refusal(write(tmp_path / "a-pid1.log", [rec]))
    assert f"coll_exec_time_us is '{'t' * 40}', not a number" in msg


# ------------------------------------------------------------------ a row as JSON


def _row(stats=None, notes=("algorithm RING/SIMPLE",)):
    # a 1 MiB all-reduce on 2 ranks in 200 us: busbw = algbw x 2(2-1)/2 = 1 MiB / 200 us
    call = T.TelemetryCall("NCCL Inspector", 0, "n0", "c0", 1, "all_reduce", None, MiB, 2, 200e-6,
                           recorded_busbw=5e9, stats=stats or {}, notes=notes)
    return T.TelemetryRow(call, nccl_s=100e-6, nccl_how="NCCL's figure at 1 MiB", bound_s=50e-6)


def test_a_rows_json_carries_its_figures_and_fractions():
    """busbw, NCCL's time and how, the bound, both fractions (NCCL / measured, bound /
    measured) and the notes as a list; no stats key when the call has none."""
    d = _row().to_dict()
    assert d["busbw"] == pytest.approx(MiB / 200e-6)
    assert d["nccl_s"] == 100e-6 and d["nccl_how"] == "NCCL's figure at 1 MiB"
    assert d["fraction_of_nccl"] == pytest.approx(0.5)
    assert d["bound_s"] == 50e-6 and d["fraction_of_bound"] == pytest.approx(0.25)
    assert d["notes"] == ["algorithm RING/SIMPLE"] and isinstance(d["notes"], list)
    assert (d["rank"], d["seq"], d["size_bytes"], d["time_s"], d["recorded_busbw"]) == (0, 1, MiB, 200e-6, 5e9)
    assert "stats" not in d
    json.dumps(d, allow_nan=False)


def test_a_rows_json_stats_leave_out_the_per_iteration_lists():
    """nccl-tests' percentiles go to JSON; every iteration's time and the per-process
    rows (thousands of numbers) do not."""
    stats = {"min_us": 1.0, "p50_us": 2.0, "max_us": 3.0, "skipped": 0,
             "times_us": [1.0, 2.0, 3.0], "per_process_us": [[1.0, 2.0, 3.0], [1.0, 1.5, 2.5]]}
    d = _row(stats=stats).to_dict()
    assert d["stats"] == {"min_us": 1.0, "p50_us": 2.0, "max_us": 3.0, "skipped": 0}


def test_a_read_nccl_tests_row_in_json_has_its_percentiles_only(tmp_path):
    from test_telemetry import nccl_tests_per_iter

    f = tmp_path / "ar.json"
    f.write_text(json.dumps(nccl_tests_per_iter(slow_process=1)))
    doc = T.analyze_telemetry([T.read_telemetry(f)], reference()).to_dict()
    st = doc["collectives"][0]["stats"]
    assert {"min_us", "p50_us", "p95_us", "p99_us", "max_us", "avg_us", "skipped"} <= set(st)
    assert "times_us" not in st and "per_process_us" not in st


# ------------------------------------------------------------------ the report as JSON


def test_the_reports_json_has_its_sections_and_each_files_fields(tmp_path):
    f0 = write(tmp_path / "node0-pid1.log", dump("v4.2", 0, 2, three_calls("v4.2", n=2)))
    f1 = write(tmp_path / "node1-pid2.log", dump("v4.2", 1, 2, three_calls("v4.2", n=2)))
    tels = [T.read_telemetry(f0), T.read_telemetry(f1)]
    report = T.analyze_telemetry(tels, reference())
    doc = report.to_dict()
    assert set(doc) == {"files", "collectives", "skews", "per_rank", "per_node", "warnings"}
    assert doc["files"][0] == {"path": str(f0), "source": "NCCL Inspector", "notes": tels[0].notes, "progress": []}
    assert doc["files"][0]["notes"][0] == "NCCL Inspector JSON format v4.2"
    assert len(doc["collectives"]) == 6
    assert doc["per_node"] == report.per_node and doc["per_node"][0]["ranks"] == [0, 1]


def test_a_files_progress_reaches_json():
    prog = [{"process_group": "0", "last_completed": 3}]
    tel = T.Telemetry("Flight Recorder", "/d/r0.json", [], ["n"], progress=prog)
    doc = T.TelemetryReport([tel], [], [], [], [{"host": "h", "ranks": [0]}], []).to_dict()
    assert doc["files"] == [{"path": "/d/r0.json", "source": "Flight Recorder", "notes": ["n"], "progress": prog}]
    assert doc["per_node"] == [{"host": "h", "ranks": [0]}]


def _nan_row(host="n0"):
    return T.TelemetryRow(T.TelemetryCall("NCCL Inspector", 0, host, "c", 1, "all_reduce", None, MiB, 2,
                                          float("nan")))


def test_a_non_finite_figure_is_said_at_its_exact_place():
    doc = T.TelemetryReport([], [_nan_row()], [], [], [], []).to_dict()
    assert doc["collectives"][0]["time_s"] is None
    assert doc["warnings"] == ["collectives[0].time_s: not a finite number or not text, written as null or with "
                               "U+FFFD"]


def test_a_lone_surrogate_in_a_row_or_a_warning_becomes_ufffd_at_its_place():
    """In a row: the text fixed, its place named; in a warning: the same, named
    warnings[i]; the warning itself kept in its place, first."""
    row = T.TelemetryRow(T.TelemetryCall("NCCL Inspector", 0, "n\ud800x", "c", 1, "all_reduce", None, MiB, 2, 1e-4))
    doc = T.TelemetryReport([], [row], [], [], [], ["plain", "bad \udc80 name"]).to_dict()
    assert doc["collectives"][0]["host"] == "n\ufffdx"
    assert doc["warnings"][:2] == ["plain", "bad \ufffd name"]
    places = [w.split(":")[0] for w in doc["warnings"][2:]]
    assert places == ["collectives[0].host", "warnings[1]"]
    json.dumps(doc, allow_nan=False).encode("utf-8")


def test_at_most_20_fixed_places_are_said():
    """25 rows without a finite time: all 25 written as null, the first 20 places said."""
    doc = T.TelemetryReport([], [_nan_row() for _ in range(25)], [], [], [], []).to_dict()
    assert all(c["time_s"] is None for c in doc["collectives"])
    said = [w for w in doc["warnings"] if "not a finite number" in w]
    assert [w.split(":")[0] for w in said] == [f"collectives[{i}].time_s" for i in range(20)]


# ------------------------------------------------------------------ each file and each record once


def test_a_file_given_twice_does_not_stop_the_files_after_it(tmp_path):
    """a, a, b: a is read once and said; b is still read."""
    a = write(tmp_path / "node0-pid1.log", dump("v4.0", 0, 2, three_calls("v4.0", n=2)))
    b = write(tmp_path / "node1-pid2.log", dump("v4.0", 1, 2, three_calls("v4.0", n=2)))
    tels = [T.read_telemetry(p) for p in (a, a, b)]
    report = T.analyze_telemetry(tels, reference())
    assert sorted(r.call.rank for r in report.rows) == [0, 0, 0, 1, 1, 1]
    assert "node0-pid1.log has the same contents as node0-pid1.log: read once" in report.warnings
    assert [t.path for t in report.files] == [str(a), str(b)]


def test_records_of_several_ranks_also_in_an_earlier_file_name_each_rank(tmp_path):
    ranks01 = [v40_line(rank=r, sn=1) for r in (0, 1)]
    a = write(tmp_path / "a.log", ranks01)
    b = write(tmp_path / "b.log", ranks01 + [v40_line(rank=0, sn=2)])
    report = T.analyze_telemetry([T.read_telemetry(a), T.read_telemetry(b)], reference())
    assert len(report.rows) == 3
    assert "b.log: 2 records of rank(s) 0, 1 are also in a.log: counted once" in report.warnings


def test_a_prometheus_bucket_also_in_an_earlier_file_is_counted_once_without_ranks(tmp_path):
    """v5 buckets name no rank: the warning counts them and names no rank."""
    same = prom_bucket(20.0, 150.0, size="1-2MB", nranks=2)
    a = tmp_path / "a.prom"
    a.write_text(same)
    b = tmp_path / "b.prom"
    b.write_text(same + prom_bucket(40.0, 300.0, size="2-3MB", nranks=2))
    report = T.analyze_telemetry([T.read_telemetry(a), T.read_telemetry(b)], reference())
    assert sorted(r.call.size_range for r in report.rows) == [(MiB, 2 * MiB), (2 * MiB, 3 * MiB)]
    assert "b.prom: 1 records are also in a.prom: counted once" in report.warnings


def test_one_inspector_call_in_two_files_is_one_call_whatever_else_differs(tmp_path):
    """A record is its communicator, rank, collective and sequence number: the same call
    written with another algorithm note is still that call."""
    ring = coll_perf("v4.2", "AllReduce", 5, MiB, 17, 2)
    tree = dict(ring, coll_algo="TREE")
    a = write(tmp_path / "a.log", dump("v4.2", 0, 2, [ring]))
    b = write(tmp_path / "b.log", dump("v4.2", 0, 2, [tree, coll_perf("v4.2", "AllReduce", 6, MiB, 17, 2)]))
    report = T.analyze_telemetry([T.read_telemetry(a), T.read_telemetry(b)], reference())
    assert sorted(r.call.seq for r in report.rows) == [5, 6]
    assert "b.log: 1 records of rank(s) 0 are also in a.log: counted once" in report.warnings


def test_point_to_point_records_differ_by_operation_across_files(tmp_path):
    """p2p records carry no sequence number compared across ranks: a Send #2 is not the
    Send #1 an earlier file held; the Send #1 repeated is."""
    s1, s2 = p2p_perf("Send", 1, 1, MiB, 20), p2p_perf("Send", 2, 1, MiB, 20)
    a = write(tmp_path / "a.log", dump("v4.0", 0, 2, [], p2ps=[s1]))
    b = write(tmp_path / "b.log", dump("v4.0", 0, 2, [], p2ps=[s1, s2]))
    report = T.analyze_telemetry([T.read_telemetry(a), T.read_telemetry(b)], reference())
    assert sorted(r.call.notes[0] for r in report.rows) == ["Send #1 with peer 1 (point-to-point)",
                                                             "Send #2 with peer 1 (point-to-point)"]
    assert "b.log: 1 records of rank(s) 0 are also in a.log: counted once" in report.warnings


def test_unknown_collectives_of_one_sequence_number_differ_by_name_across_files(tmp_path):
    """A collective linkroof does not know keeps its name as its identity."""
    a = write(tmp_path / "a.log", dump("v4.0", 0, 2, [coll_perf("v4.0", "AllReduce", 3, MiB, 17, 2) | {"coll": "Foo"}]))
    b = write(tmp_path / "b.log", dump("v4.0", 0, 2, [coll_perf("v4.0", "AllReduce", 3, MiB, 17, 2) | {"coll": "Bar"}]))
    report = T.analyze_telemetry([T.read_telemetry(a), T.read_telemetry(b)], reference())
    assert sorted(r.call.notes[0] for r in report.rows) == ["collective 'Bar' unknown to linkroof",
                                                             "collective 'Foo' unknown to linkroof"]
    assert not any("are also in" in w for w in report.warnings)


def _prom229(rank, t_us, size):
    """NCCL 2.29's textfile (no version label, no coll_sn here): one rank's latest collective."""
    labels = (f'comm_id="0xd152c00f111816",hostname="pool0-0002",rank="{rank}",nranks="8",n_nodes="1",'
              f'gpu_device_id="GPU{rank}",collective="AllReduce"')
    algbw = size / 1e9 / (t_us * 1e-6)
    return (f"nccl_algorithm_bandwidth_gbs{{{labels}}} {algbw:.6g}\n"
            f"nccl_bus_bandwidth_gbs{{{labels}}} {algbw * 2 * 7 / 8:.6g}\n"
            f"nccl_collective_exec_time_microseconds{{{labels}}} {t_us:.6g}\n")


def test_two_scrapes_of_one_ranks_latest_collective_are_two_calls(tmp_path):
    """Without a sequence number, two textfiles of the same rank holding collectives of
    different sizes hold different calls: both kept, nothing said to be repeated."""
    a = tmp_path / "a.prom"
    a.write_text(_prom229(4, 8000.0, 2 << 30))
    b = tmp_path / "b.prom"
    b.write_text(_prom229(4, 1000.0, 256 << 20))
    tels = [T.read_telemetry(a), T.read_telemetry(b)]
    assert [c.rank for t in tels for c in t.calls] == [4, 4]
    report = T.analyze_telemetry(tels, reference())
    sizes = sorted(r.call.size_bytes for r in report.rows)
    assert sizes[0] == pytest.approx(256 << 20, rel=1e-5) and sizes[1] == pytest.approx(2 << 30, rel=1e-5)
    assert not any("are also in" in w for w in report.warnings)


# ------------------------------------------------------------------ bytes that are not UTF-8


def test_a_prometheus_file_not_utf8_names_the_file_and_the_byte(tmp_path):
    data = prom_bucket(1.0, 2.0).replace("DP Group 0", "DP\udcff").encode("utf-8", "surrogateescape")
    at = data.index(b"\xff") + 1  # 1-based, as an editor counts
    g = tmp_path / "m.prom"
    g.write_bytes(data)
    msg = refusal(g)
    assert msg.startswith(f"{g}: not UTF-8 (byte {at} is 0xff)"), msg
    assert "UTF-8 text" in msg


def test_a_json_file_not_utf8_names_the_byte(tmp_path):
    h = tmp_path / "x.json"
    h.write_bytes(b'{"results": [], "config": {"hostname": "v\xfe"}}')
    msg = refusal(h)
    assert msg.startswith(f"{h}: not UTF-8 (byte 42 is 0xfe)"), msg
