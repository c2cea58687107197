"""Survivors of mutation testing in linkroof/readers/telemetry.py's read_telemetry (the
format told from a file's contents, the bounded doors naming the file), _skews (which
calls are compared across ranks, the skew's fields, ties, the order), _per_node and
analyze_telemetry (why a row is not placed, bucket notes, the warnings of a mixed or
multi-host set of files). Files are built as their writers write them (the helpers of
test_inspector_formats and test_telemetry); each expected value is worked out by hand."""

import json
import os
import pickle

import pytest

from linkroof.readers import telemetry as T
from test_inspector_formats import MiB, coll_perf, dump, emit, p2p_perf, prom_bucket, write
from test_telemetry import _fr_entries, fr_dump

_PROFILE = []


def reference():
    if not _PROFILE:
        from linkroof.profiler.session import bundled_profile

        _PROFILE.append(bundled_profile())
    return _PROFILE[0]


def refusal(path) -> str:
    """read_telemetry(path) refuses with one TelemetryError (or the file door's error): its message."""
    with pytest.raises(T.LinkroofError) as ei:
        T.read_telemetry(path)
    assert "\n" not in str(ei.value)
    return str(ei.value)


def inspector_log(path, rank, perfs, n_ranks=2, host="node0", comm="0xc0", p2ps=(), starts=None):
    """A v4.0 Inspector log (header and metadata on every line) of one rank; `starts`, where
    given, the verbose kernel start (us, host clock) of each coll_perf."""
    perfs = [dict(p) for p in perfs]
    for p, s in zip(perfs, starts or []):
        p["event_trace_ts"] = {"coll_start_ts": s - 5, "kernel_events": [
            {"channel_id": ch, "kernel_start_ts": s + ch, "kernel_stop_ts": s + 50} for ch in range(2)]}
    lines = dump("v4.0", rank, n_ranks, perfs, p2ps=list(p2ps), comm=comm)
    for line in lines:
        line["metadata"]["hostname"] = host
    return write(path, lines)


def call(rank, start_us=None, time_s=None, seq=1, coll="all_reduce", size=MiB, comm="c0", source="NCCL Inspector",
         host="n0"):
    return T.TelemetryCall(source, rank, host, comm, seq, coll, None, size, 4, time_s, start_us=start_us)


# ------------------------------------------------------------------ read_telemetry: the format from the contents


def test_an_inspector_log_that_begins_with_blank_lines_is_still_read_as_one(tmp_path):
    """The format is told from the first non-blank text: blank lines before the first
    record (the reader skips them) do not hide an Inspector log."""
    f = tmp_path / "n-pid1.log"
    body = "".join(emit(x) + "\n" for x in dump("v4.0", 0, 2, [coll_perf("v4.0", "AllReduce", 1, MiB, 17, 2)]))
    f.write_text("\n\n   \n" + body)
    t = T.read_telemetry(f)
    assert t.source == "NCCL Inspector" and [(c.collective, c.seq) for c in t.calls] == [("all_reduce", 1)]


def test_an_inspector_log_whose_first_header_is_long_is_still_read_as_one(tmp_path):
    """The format is told from the contents: a record's header holding a 4200-character
    communicator name (a line well under the reader's 1 MiB) still makes an Inspector log."""
    lines = dump("v4.2", 0, 2, [coll_perf("v4.2", "AllReduce", sn, MiB, 17, 2) for sn in (1, 2)])
    for line in lines:
        line["header"]["comm_name"] = "x" * 4200
    f = write(tmp_path / "n-pid1.log", lines)
    assert len(T.read_inspector_jsonl(f).calls) == 2  # the reader itself takes it
    t = T.read_telemetry(f)
    assert t.source == "NCCL Inspector" and [c.seq for c in t.calls] == [1, 2]


def test_a_prom_file_is_read_as_prometheus_whatever_comes_first(tmp_path):
    """A .prom file is a Prometheus textfile by its name: the Inspector's samples after
    4 KB of another exporter's metrics are still read."""
    other = "".join(f"# TYPE node_other_metric_{i} gauge\nnode_other_metric_{i} {i}\n" for i in range(150))
    assert len(other) > 4096
    f = tmp_path / "textfile_collector.prom"
    f.write_text(other + prom_bucket(20.0, 150.0, size="1-2MB", nranks=2))
    t = T.read_telemetry(f)
    (c,) = t.calls
    assert t.source == "NCCL Inspector (Prometheus)"
    assert (c.collective, c.group_size, c.size_range) == ("all_reduce", 2, (MiB, 2 * MiB))


def test_a_textfile_of_point_to_point_samples_only_is_read_by_its_contents(tmp_path):
    """Without the .prom suffix a textfile is told by its metric names: a file of
    nccl_p2p_* samples only (no collective bucket) is the Inspector's Prometheus form."""
    f = tmp_path / "metrics.txt"
    f.write_text(prom_bucket(464.9, 1154.87, p2p=True, collective="Send", size="512-513MB"))
    (c,) = T.read_telemetry(f).calls
    assert (c.source, c.collective, c.group_size, c.size_range) == (
        "NCCL Inspector (Prometheus)", "sendrecv", 2, (512 * MiB, 513 * MiB))
    assert c.time_s == pytest.approx(1154.87e-6)


def test_a_textfile_of_bus_bandwidths_only_is_refused_for_its_missing_times(tmp_path):
    """A textfile (not named .prom) holding nccl_bus_bandwidth_gbs samples is read as the
    Inspector's and refused for what it lacks (the time), not as an unknown format."""
    f = tmp_path / "metrics.txt"
    f.write_text(prom_bucket(20.0, 150.0, size="1-2MB", nranks=2).split("\n")[0] + "\n")
    msg = refusal(f)
    assert "lack time_us" in msg and "not NCCL Inspector output" not in msg


def test_a_textfile_of_exec_times_only_is_refused_for_its_missing_bandwidth(tmp_path):
    """Likewise a textfile holding nccl_collective_exec_time_microseconds only: refused
    for lacking busbw."""
    f = tmp_path / "metrics.txt"
    f.write_text(prom_bucket(20.0, 150.0, size="1-2MB", nranks=2).split("\n")[1] + "\n")
    msg = refusal(f)
    assert "lack busbw" in msg and "not NCCL Inspector output" not in msg


def test_a_flight_recorder_json_dump_with_a_config_key_is_still_a_dump(tmp_path):
    """Only a document with both "results" and "config" is nccl-tests': a Flight Recorder
    dump carrying some "config" field is read as the dump it is."""
    doc = fr_dump(0, _fr_entries())
    doc["config"] = {"trace_buffer_size": 2000}
    f = tmp_path / "trace_0.json"
    f.write_text(json.dumps(doc))
    t = T.read_telemetry(f)
    assert t.source == "Flight Recorder"
    assert [c.collective for c in t.calls] == ["all_reduce", "all_gather", "reduce_scatter"]


# ------------------------------------------------------------------ read_telemetry: refusals that name the file


def test_a_folder_is_refused_as_not_a_telemetry_file(tmp_path):
    """A folder given for a telemetry file is refused naming what was expected."""
    d = tmp_path / "dumps"
    d.mkdir()
    msg = refusal(d)
    assert str(d) in msg and "not a telemetry file" in msg


def _sparse(path, head: bytes, size: int):
    with open(path, "wb") as fh:
        fh.write(head)
        fh.truncate(size)
    return path


def test_a_flight_recorder_pickle_over_256_mib_is_refused_by_its_size(tmp_path):
    """A pickle (first byte 0x80) over MAX_DUMP (256 MiB) is refused unread, naming the
    limit and that it was read as a Flight Recorder dump."""
    f = _sparse(tmp_path / "dump_0", b"\x80\x02", T.MAX_DUMP + 1)
    msg = refusal(f)
    assert str(f) in msg and f"the {T.MAX_DUMP}-byte limit for a Flight Recorder dump" in msg


def test_a_prometheus_textfile_over_64_mib_is_refused_by_its_size(tmp_path):
    """A textfile is bounded at MAX_PROM (64 MiB), far under the JSON limit: one just over
    it is refused by its size, naming that limit."""
    assert T.MAX_PROM == 64 * MiB
    f = _sparse(tmp_path / "m.prom", b"nccl_bus_bandwidth_gbs{", T.MAX_PROM + 1)
    msg = refusal(f)
    assert f"the {T.MAX_PROM}-byte limit for a Prometheus textfile" in msg


def test_a_json_file_over_256_mib_is_refused_by_its_size(tmp_path):
    """A JSON document over 256 MiB is refused unread, naming the limit for a telemetry file."""
    f = _sparse(tmp_path / "big.json", b"{", T.MAX_DUMP + 1)
    msg = refusal(f)
    assert f"the {T.MAX_DUMP}-byte limit for a telemetry file" in msg


def test_invalid_utf8_in_a_json_file_is_refused_naming_the_file(tmp_path):
    f = tmp_path / "nt.json"
    f.write_bytes(b'{"config": {"x": "\xff"}, "results": []}')
    msg = refusal(f)
    assert msg.startswith(f"{f}: not UTF-8 (byte 19 is 0xff)")


def test_invalid_utf8_in_a_prom_file_is_refused_naming_the_file(tmp_path):
    f = tmp_path / "m.prom"
    f.write_bytes(prom_bucket(1.0, 2.0).replace("DP Group 0", "DP\udcff").encode("utf-8", "surrogateescape"))
    msg = refusal(f)
    assert msg.startswith(f"{f}: not UTF-8")


def test_nan_in_a_json_file_is_refused_naming_the_file(tmp_path):
    f = tmp_path / "x.json"
    f.write_text('{"version": "2.10", "entries": NaN}')
    msg = refusal(f)
    assert msg.startswith(f"{f}: NaN is not a number") and msg.endswith("not a telemetry file")


def test_a_json_file_cut_short_is_refused_naming_the_file_as_not_json(tmp_path):
    f = tmp_path / "x.json"
    f.write_text('{"version": "2.10", "entries": [')
    with pytest.raises(T.TelemetryError) as ei:
        T.read_telemetry(f)
    assert str(ei.value).startswith(f"{f}: not JSON (") and "truncated?" in str(ei.value)


def test_a_file_of_no_known_format_is_refused_naming_the_file(tmp_path):
    f = tmp_path / "notes.log"
    f.write_text("hello\n")
    with pytest.raises(T.TelemetryError) as ei:
        T.read_telemetry(f)
    assert str(ei.value).startswith(f"{f}: not NCCL Inspector output")


# ------------------------------------------------------------------ _skews: what is compared


def test_point_to_point_records_are_never_compared_across_ranks(tmp_path):
    """A Send and its Recv (p2p_perf) carry no sequence number comparable across ranks
    (p2p_sn counts per operation and peer): no skew, though both ranks recorded 2 MiB."""
    a = inspector_log(tmp_path / "a-pid1.log", 0, [], p2ps=[p2p_perf("Send", 1, 1, 2 * MiB, 40)])
    b = inspector_log(tmp_path / "b-pid2.log", 1, [], p2ps=[p2p_perf("Recv", 1, 0, 2 * MiB, 60)])
    report = T.analyze_telemetry([T.read_telemetry(a), T.read_telemetry(b)], reference())
    assert [(c.rank, c.collective, c.seq) for c in (r.call for r in report.rows)] == [(0, "sendrecv", None),
                                                                                       (1, "sendrecv", None)]
    assert report.skews == []


def test_flight_recorder_calls_of_one_number_but_different_collectives_are_never_compared():
    """Flight Recorder's collective_seq_id counts every collective of its group: ranks 0
    and 1 at all_reduce #5 while ranks 2 and 3 are at all_gather #5 are out of step, and
    no skew is made of either pair."""
    calls = [call(r, start_us=100.0 + r, seq=5, coll="all_reduce" if r < 2 else "all_gather",
                  source="Flight Recorder") for r in range(4)]
    assert T._skews(calls) == []


def test_one_number_with_different_sizes_is_never_compared_nor_stops_the_rest():
    """On communicator a, ranks 0 and 1 recorded all_reduce #1 of different sizes: not
    one call, no skew; communicator b's all_reduce #1 after it is still compared."""
    calls = [call(0, 100.0, comm="a"), call(1, 110.0, comm="a", size=2 * MiB),
             call(0, 200.0, comm="b"), call(1, 230.0, comm="b")]
    [s] = T._skews(calls)
    assert (s.comm, s.last_rank, round(s.skew_s * 1e6)) == ("b", 1, 30)


def test_a_call_one_rank_recorded_is_skipped_not_the_end_of_the_comparison():
    """Communicator a's #1 was recorded by rank 0 only: nothing to compare; b's #1 on two
    ranks still is."""
    calls = [call(0, 100.0, comm="a"), call(0, 200.0, comm="b"), call(1, 250.0, comm="b")]
    [s] = T._skews(calls)
    assert (s.comm, s.ranks, s.last_rank, round(s.skew_s * 1e6)) == ("b", (0, 1), 1, 50)


# ------------------------------------------------------------------ _skews: the fields of a skew


def test_a_measured_skew_carries_the_call_and_names_the_last_starter():
    """Kernel starts at 100, 150 and 120 us: rank 1 started last, 50 us after rank 0; the
    skew names the communicator, collective, size and ranks; measured from kernel
    starts, no tie."""
    [s] = T._skews([call(0, 100.0, comm="0xab", seq=7), call(1, 150.0, comm="0xab", seq=7),
                    call(2, 120.0, comm="0xab", seq=7)])
    assert (s.comm, s.seq, s.collective, s.size_bytes, s.ranks, s.last_rank) == ("0xab", 7, "all_reduce", MiB,
                                                                                 (0, 1, 2), 1)
    assert s.skew_s == pytest.approx(50e-6)
    assert s.how == "measured: kernel starts on the hosts' clocks"


def test_kernel_starts_exactly_1_us_apart_are_a_tie():
    """TIE_US is 1 us, inclusive: starts at 100 and 101 us are together, no rank named."""
    [s] = T._skews([call(0, 100.0), call(1, 101.0)])
    assert s.last_rank is None and s.skew_s == pytest.approx(1e-6) and "a tie" in s.how


def test_flight_recorder_starts_are_said_to_be_coarse():
    [s] = T._skews([call(0, 100.0, source="Flight Recorder"), call(1, 3100.0, source="Flight Recorder")])
    assert s.last_rank == 1 and s.how.startswith("measured, coarse")


def test_an_inferred_skew_carries_the_call_and_names_the_shortest_time():
    """No starts: times 30, 50, 70 us; the rank with the shortest (0) arrived last, the
    skew is the spread, 40 us; the skew names communicator, size and ranks, no tie."""
    [s] = T._skews([call(0, None, 30e-6, comm="0xab"), call(1, None, 50e-6, comm="0xab"),
                    call(2, None, 70e-6, comm="0xab")])
    assert (s.comm, s.collective, s.size_bytes, s.ranks, s.last_rank) == ("0xab", "all_reduce", MiB, (0, 1, 2), 0)
    assert s.skew_s == pytest.approx(40e-6)
    assert s.how == "inferred: the rank with the shortest time arrived last (the others waited for it)"


def test_two_ranks_with_the_same_time_are_a_tie_when_inferred():
    """Two ranks, 50 us each: neither arrived last; said as a tie."""
    [s] = T._skews([call(0, None, 50e-6), call(1, None, 50e-6)])
    assert s.last_rank is None and s.skew_s == 0.0
    assert s.how.startswith("inferred") and "a tie" in s.how


def test_times_exactly_1_us_apart_are_a_tie_when_inferred():
    """The Inspector's 1 us resolution: 1 us and 2 us are within TIE_US (inclusive)."""
    [s] = T._skews([call(0, None, 1e-6), call(1, None, 2e-6)])
    assert s.last_rank is None and "a tie" in s.how


# ------------------------------------------------------------------ _skews: the order


def test_skews_are_listed_by_communicator_then_collective_then_number():
    """Whatever order the calls came in: communicator, then collective name, then the
    sequence number as a number (9 before 10)."""
    groups = [("b", "all_reduce", 1), ("a", "all_reduce", 10), ("a", "all_reduce", 9), ("a", "all_gather", 20)]
    calls = [call(r, 100.0 + 10 * r, seq=seq, coll=coll, comm=comm) for comm, coll, seq in groups for r in (0, 1)]
    assert [(s.comm, s.collective, s.seq) for s in T._skews(calls)] == [
        ("a", "all_gather", 20), ("a", "all_reduce", 9), ("a", "all_reduce", 10), ("b", "all_reduce", 1)]


def test_skews_of_two_formats_are_ordered_by_communicator_not_by_format():
    """An Inspector communicator "a" and a Flight Recorder group "b": a first."""
    calls = [call(r, 100.0 + r * 5, comm="a") for r in (0, 1)] + \
            [call(r, 100.0 + r * 5, comm="b", source="Flight Recorder") for r in (0, 1)]
    assert [s.comm for s in T._skews(calls)] == ["a", "b"]


def test_an_unknown_collective_beside_known_ones_is_compared_too():
    """An Inspector collective linkroof does not know (collective None) beside an
    all_reduce of the same number on one communicator: each gets its skew."""
    calls = [call(r, 100.0 + r * 5, coll=None) for r in (0, 1)] + [call(r, 100.0 + r * 7) for r in (0, 1)]
    skews = T._skews(calls)
    assert sorted((str(s.collective), round(s.skew_s * 1e6)) for s in skews) == [("None", 5), ("all_reduce", 7)]


# ------------------------------------------------------------------ _per_node


def test_per_node_median_and_worst_rank():
    """A node's median is that of its ranks' medians (a rank without one left out); its
    worst rank the one last most often, then by the larger mean lateness."""
    R = T.RankSummary
    nodes = T._per_node([R(0, "n0", 3, 100e-6, 0, 0.0, "m"), R(1, "n0", 3, 300e-6, 2, 5e-6, "m"),
                         R(4, "n0", 3, 200e-6, 2, 9e-6, "m"),
                         R(2, "n1", 3, None, 0, 0.0, "m"), R(3, "n1", 3, 50e-6, 0, 0.0, "m")])
    n0, n1 = nodes
    assert (n0["host"], n0["ranks"], n0["times_last"], n0["worst_rank"]) == ("n0", [0, 1, 4], 4, 4)
    assert n0["median_s"] == pytest.approx(200e-6)
    assert (n1["host"], n1["times_last"], n1["worst_rank"]) == ("n1", 0, None)
    assert n1["median_s"] == pytest.approx(50e-6)


# ------------------------------------------------------------------ analyze_telemetry: rows


def _rows(tmp_path, perfs, n_ranks=2, rank=0):
    f = inspector_log(tmp_path / "n-pid1.log", rank, perfs, n_ranks=n_ranks)
    return T.analyze_telemetry([T.read_telemetry(f)], reference()).rows


def test_a_one_rank_group_is_not_placed_and_says_why(tmp_path):
    """n_ranks 1: nothing crosses a link, no NCCL time and no bound, said so."""
    (row,) = _rows(tmp_path, [coll_perf("v4.0", "AllReduce", 1, MiB, 5, 1)], n_ranks=1)
    assert row.nccl_how == "a one-rank group: nothing crosses a link"
    assert row.nccl_s is None and row.bound_s is None and row.placement is None


def test_a_call_of_size_0_is_not_placed_for_its_size(tmp_path):
    """An all-reduce of 0 bytes on 2 ranks: the size is unknown for placing (not the
    collective, not the group)."""
    (row,) = _rows(tmp_path, [coll_perf("v4.0", "AllReduce", 1, 0, 3, 2)])
    assert row.call.size_bytes == 0 and row.call.size_range is None
    assert row.nccl_how == "not placed: size unknown" and row.nccl_s is None


def test_an_unknown_collective_is_not_placed_for_its_collective(tmp_path):
    perf = coll_perf("v4.0", "AllReduce", 1, MiB, 17, 2)
    perf["coll"] = "AllToAll"
    (row,) = _rows(tmp_path, [perf])
    assert row.call.collective is None
    assert row.nccl_how == "not placed: collective unknown"


def test_a_flight_recorder_call_of_an_unknown_group_is_not_placed_for_its_group_size(tmp_path):
    """An entry of process group 5, absent from pg_config: its group size is unknown."""
    doc = fr_dump(0, _fr_entries()[:1])
    doc["entries"][0]["process_group"] = ["5", "other_pg"]
    f = tmp_path / "trace_0.json"
    f.write_text(json.dumps(doc))
    (row,) = T.analyze_telemetry([T.read_telemetry(f)], reference()).rows
    assert (row.call.collective, row.call.size_bytes, row.call.group_size) == ("all_reduce", 4 << 20, None)
    assert row.nccl_how == "not placed: group size unknown"


def test_a_call_whose_data_type_is_recorded_is_not_said_to_lack_one(tmp_path):
    """Flight Recorder records the data type: its rows say nothing of a missing one."""
    f = tmp_path / "trace_0.json"
    f.write_text(json.dumps(fr_dump(0, _fr_entries())))
    rows = T.analyze_telemetry([T.read_telemetry(f)], reference()).rows
    assert rows and all(r.call.dtype for r in rows)
    assert rows[0].nccl_s and not any("data type is not recorded" in r.nccl_how for r in rows)


def test_rows_of_several_ranks_share_a_placement_named_by_the_call_not_a_rank(tmp_path):
    """One placement per (collective, size, type, group): the rows of ranks 0 and 1 share
    it, so it names no rank."""
    perfs = [coll_perf("v4.0", "AllReduce", 1, MiB, 17, 2)]
    a = inspector_log(tmp_path / "a-pid1.log", 0, perfs)
    b = inspector_log(tmp_path / "b-pid2.log", 1, perfs)
    rows = T.analyze_telemetry([T.read_telemetry(a), T.read_telemetry(b)], reference()).rows
    assert [r.call.rank for r in rows] == [0, 1] and all(r.placement is not None for r in rows)
    assert all("rank" not in r.placement.workload.name for r in rows), [r.placement.workload.name for r in rows]


def test_a_bucket_row_keeps_its_placement_note_and_says_its_range(tmp_path):
    """A v5 bucket 1-2MB on 2 ranks: the row says how it was placed (the profile's fp32
    figure, no data type recorded) and then the bucket [1 MiB, 2 MiB) at its lower end."""
    f = tmp_path / "m.prom"
    f.write_text(prom_bucket(20.0, 150.0, size="1-2MB", nranks=2))
    (row,) = T.analyze_telemetry([T.read_telemetry(f)], reference()).rows
    how = row.nccl_how
    assert not how.startswith(";") and "data type is not recorded" in how
    assert f"the size is a bucket [{MiB}, {2 * MiB}) B" in how
    assert how.index("data type is not recorded") < how.index("the size is a bucket")


# ------------------------------------------------------------------ analyze_telemetry: warnings


def test_files_of_two_formats_together_are_said(tmp_path):
    a = inspector_log(tmp_path / "a-pid1.log", 0, [coll_perf("v4.0", "AllReduce", 1, MiB, 17, 2)])
    g = tmp_path / "m.prom"
    g.write_text(prom_bucket(20.0, 150.0, size="1-2MB", nranks=2))
    report = T.analyze_telemetry([T.read_telemetry(a), T.read_telemetry(g)], reference())
    assert any(w is not None and "files of different formats given together" in w for w in report.warnings)


def test_files_of_one_format_say_nothing_of_formats(tmp_path):
    a = inspector_log(tmp_path / "a-pid1.log", 0, [coll_perf("v4.0", "AllReduce", 1, MiB, 17, 2)])
    b = inspector_log(tmp_path / "b-pid2.log", 1, [coll_perf("v4.0", "AllReduce", 1, MiB, 20, 2)])
    report = T.analyze_telemetry([T.read_telemetry(a)], reference())
    assert not any("different formats" in w for w in report.warnings)
    report = T.analyze_telemetry([T.read_telemetry(a), T.read_telemetry(b)], reference())
    assert not any("different formats" in w for w in report.warnings)


def _two_ranks(tmp_path, hosts, verbose):
    perfs = [coll_perf("v4.0", "AllReduce", 1, MiB, 17, 2)]
    files = [inspector_log(tmp_path / f"{h}-pid{r}.log", r, perfs, host=h,
                           starts=[1_000_000 + 40 * r] if verbose else None) for r, h in enumerate(hosts)]
    return T.analyze_telemetry([T.read_telemetry(f) for f in files], reference())


def test_measured_skews_across_hosts_warn_that_clocks_differ(tmp_path):
    """Kernel starts on two hosts compare two clocks: said, with what it means."""
    report = _two_ranks(tmp_path, ["node0", "node1"], verbose=True)
    [s] = report.skews
    assert s.how.startswith("measured") and s.last_rank == 1 and s.skew_s == pytest.approx(40e-6)
    [w] = [w for w in report.warnings if "hosts' clocks" in w]
    assert w.startswith("ranks on several hosts") and "which may differ by more than the skew" in w


def test_measured_skews_on_one_host_share_one_clock_and_say_nothing_of_clocks(tmp_path):
    report = _two_ranks(tmp_path, ["node0", "node0"], verbose=True)
    assert report.skews[0].how.startswith("measured")
    assert not any("hosts' clocks" in w for w in report.warnings)


def test_inferred_skews_across_hosts_compare_no_clocks(tmp_path):
    report = _two_ranks(tmp_path, ["node0", "node1"], verbose=False)
    assert report.skews and report.skews[0].how.startswith("inferred")
    assert not any("hosts' clocks" in w for w in report.warnings)
