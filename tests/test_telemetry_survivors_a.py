"""One NCCL Inspector record (coll_perf / p2p_perf) read into a TelemetryCall, and the
warning for ranks whose recordings start far apart, held to the rules a user relies on:

- every figure the record carries is kept as it was written: the rank and group size,
  the host and communicator (empty, never invented, where the record omits them), the
  node count, the timing source, both bandwidths (GB/s -> B/s), the algorithm and
  protocol, the earliest positive kernel start of a verbose record;
- an execution time of 0 us (under the Inspector's 1 us resolution) is no time, and
  said; any positive time, however small, is a time;
- the bounds are inclusive where the format allows the value: 1 to 2^20 ranks, rank
  below n_ranks, 0 us to a day, 0 B to 1 PiB, bandwidths >= 0, a peer among the ranks;
  one past each bound is refused;
- each refusal is a TelemetryError naming the file and the line, and the field or the
  figure that was wrong;
- a lone surrogate in any name the record carries is shown as U+FFFD and said, never
  a crash;
- ranks whose first kernel starts lie more than APART_S apart are said, naming the
  later and the earlier rank and the gap in hours.
"""

import json

import pytest

from linkroof.readers import telemetry as T
from test_inspector_formats import MiB, coll_perf, emit, header, metadata, p2p_perf

# ------------------------------------------------------------------ helpers


def record(perf=None, kind="coll_perf", version="v4.0", rank=0, n=8, head=None, meta=None, drop_head=(),
           drop_meta=()):
    """A headered record as inspector_json.cc writes it; `head` / `meta` override fields
    of the header and metadata, `drop_*` remove them."""
    h = header(rank, n) | (head or {})
    m = metadata(version) | (meta or {})
    for k in drop_head:
        h.pop(k, None)
    for k in drop_meta:
        m.pop(k, None)
    if perf is None:
        perf = coll_perf(version, "AllReduce", 1, MiB, 17, n)
    return {"header": h, "metadata": m, kind: perf}


def log(tmp_path, *lines, name="node0-pid1.log"):
    """A log of the given records (dicts emitted as json.cc writes them, text as is)."""
    f = tmp_path / name
    f.write_text("".join((x if isinstance(x, str) else emit(x)) + "\n" for x in lines))
    return f


def read_one(tmp_path, rec):
    """The one call read from a log holding only `rec`, with the file's notes."""
    tel = T.read_inspector_jsonl(log(tmp_path, rec))
    [call] = tel.calls
    return call, tel.notes


def refused_at(tmp_path, bad, line=2):
    """`bad` after a good record: the refusal names the file and line 2; its reason."""
    f = log(tmp_path, record(), bad)
    with pytest.raises(T.TelemetryError) as e:
        T.read_inspector_jsonl(f)
    msg = str(e.value)
    want = f"{f} line {line}: "
    assert msg.startswith(want), msg
    return msg[len(want):]


def perf_with(**fields):
    """An AllReduce of 1 MiB in 17 us on 8 ranks, with `fields` replaced (None removes)."""
    p = coll_perf("v4.0", "AllReduce", 1, MiB, 17, 8)
    for k, v in fields.items():
        if v is None:
            p.pop(k, None)
        else:
            p[k] = v
    return p


# ------------------------------------------------------------------ what a record carries is kept


def test_the_record_s_figures_are_kept_as_written(tmp_path):
    """Rank, group, communicator, host, node count, timing source and both bandwidths:
    each as the record wrote it, the bandwidths in B/s (GB/s x 1e9, exactly)."""
    perf = perf_with(coll_algobw_gbs=61.5, coll_busbw_gbs=107.625, coll_timing_source="kernel_gpu")
    rec = record(perf, rank=3, n=8, head={"id": "0xabc", "nnodes": 2}, meta={"hostname": "gpu-node-7"})
    c, _ = read_one(tmp_path, rec)
    assert (c.rank, c.group_size, c.comm, c.host, c.nodes) == (3, 8, "0xabc", "gpu-node-7", 2)
    assert c.timing == "kernel_gpu"
    assert c.recorded_algbw == 61.5e9
    assert c.recorded_busbw == 107.625e9
    assert (c.collective, c.seq, c.size_bytes) == ("all_reduce", 1, MiB)


def test_bandwidths_are_gigabytes_times_1e9_exactly(tmp_path):
    """2 GB/s is 2e9 B/s, not a hair more: the unit is 1e9 bytes."""
    c, _ = read_one(tmp_path, record(perf_with(coll_algobw_gbs=2.0, coll_busbw_gbs=3.0)))
    assert c.recorded_algbw == 2e9 and c.recorded_busbw == 3e9


def test_a_record_without_algbw_keeps_busbw_and_leaves_algbw_unknown(tmp_path):
    """Each bandwidth is read from its own field: one missing leaves that one None."""
    c, _ = read_one(tmp_path, record(perf_with(coll_algobw_gbs=None, coll_busbw_gbs=5.0)))
    assert c.recorded_algbw is None and c.recorded_busbw == 5e9
    c, _ = read_one(tmp_path, record(perf_with(coll_algobw_gbs=4.0, coll_busbw_gbs=None)))
    assert c.recorded_algbw == 4e9 and c.recorded_busbw is None


def test_a_p2p_record_keeps_its_timing_source_and_node_count(tmp_path):
    """p2p_timing_source and the header's nnodes are kept for point-to-point records too."""
    perf = p2p_perf("Send", 4, 5, MiB, 20) | {"p2p_timing_source": "proxy_cpu"}
    c, _ = read_one(tmp_path, record(perf, kind="p2p_perf", head={"nnodes": 4}))
    assert c.timing == "proxy_cpu" and c.nodes == 4
    assert c.collective == "sendrecv" and c.group_size == 2 and c.seq is None
    assert c.recorded_algbw == pytest.approx(MiB / 20e-6) and c.notes[0] == "Send #4 with peer 5 (point-to-point)"


def test_missing_names_stay_empty_never_invented(tmp_path):
    """A record without hostname, communicator id or timing source: each is '' (unknown),
    not a placeholder that could be taken for a real host or communicator."""
    rec = record(perf_with(coll_timing_source=None), drop_head=("id", "nnodes"), drop_meta=("hostname",))
    c, _ = read_one(tmp_path, rec)
    assert (c.host, c.comm, c.timing, c.nodes) == ("", "", "", None)


# ------------------------------------------------------------------ algorithm and protocol


def test_algorithm_and_protocol_are_said_together(tmp_path):
    """v4.2's coll_algo and coll_proto: one note, 'algorithm RING/SIMPLE'; a known
    collective carries no other note."""
    c, _ = read_one(tmp_path, record(coll_perf("v4.2", "AllReduce", 1, MiB, 17, 8), version="v4.2"))
    assert c.notes == ("algorithm RING/SIMPLE",)


@pytest.mark.parametrize("field,value,want", [("coll_algo", "TREE", "algorithm TREE"),
                                              ("coll_proto", "LL128", "algorithm LL128")])
def test_algorithm_or_protocol_alone_is_said_alone(tmp_path, field, value, want):
    """Only one of the two recorded: the note names just that one."""
    c, _ = read_one(tmp_path, record(perf_with(**{field: value})))
    assert c.notes == (want,)


def test_a_record_without_algorithm_has_no_algorithm_note(tmp_path):
    """v4.0 records no algorithm: a known collective timed above 0 us has no notes."""
    c, notes = read_one(tmp_path, record())
    assert c.notes == ()
    assert notes == ["NCCL Inspector JSON format v4.0"]


# ------------------------------------------------------------------ unknown collectives


def test_an_unknown_collective_is_kept_and_said(tmp_path):
    """A collective linkroof does not know: kept, no collective, one note naming it."""
    c, _ = read_one(tmp_path, record(perf_with(coll="AllToAllV")))
    assert c.collective is None
    assert c.notes == ("collective 'AllToAllV' unknown to linkroof",)


@pytest.mark.parametrize("coll,want", [("AllReduce", "all_reduce"), ("Broadcast", "broadcast"),
                                       ("AllGatherV", "all_gather")])
def test_a_known_collective_carries_no_unknown_note(tmp_path, coll, want):
    c, _ = read_one(tmp_path, record(perf_with(coll=coll)))
    assert c.collective == want
    assert not any("unknown" in n for n in c.notes)


# ------------------------------------------------------------------ lone surrogates


@pytest.mark.parametrize("where", ["coll", "coll_algo", "coll_timing_source", "id", "hostname"])
def test_a_lone_surrogate_in_any_name_is_shown_as_replacement_and_said(tmp_path, where):
    """A JSON escape of half a character in the collective, algorithm, timing source,
    communicator id or host name: read, shown with U+FFFD, said in the file's notes."""
    bad = "x\ud800y"
    if where == "id":
        rec = record(head={"id": bad})
    elif where == "hostname":
        rec = record(meta={"hostname": bad})
    else:
        rec = record(perf_with(**{where: bad}))
    f = log(tmp_path, rec)
    assert "\\ud800" in f.read_text()
    tel = T.read_inspector_jsonl(f)
    [c] = tel.calls
    shown = {"coll": " ".join(c.notes), "coll_algo": " ".join(c.notes), "coll_timing_source": c.timing,
             "id": c.comm, "hostname": c.host}[where]
    assert "x\ufffdy" in shown
    assert not any(0xD800 <= ord(ch) <= 0xDFFF for ch in shown + c.host + c.comm + c.timing + "".join(c.notes))
    assert any("lone surrogate" in n for n in tel.notes), tel.notes


# ------------------------------------------------------------------ execution time


def test_zero_microseconds_is_no_time_and_said(tmp_path):
    """0 us (under the 1 us resolution; bandwidths then written as 0): no time, its
    note; the zero bandwidths are kept as written, not refused."""
    c, _ = read_one(tmp_path, record(coll_perf("v4.0", "AllReduce", 1, MiB, 0, 8)))
    assert c.time_s is None and c.busbw is None
    assert c.recorded_busbw == 0.0 and c.recorded_algbw == 0.0
    assert any("execution time of 0 us" in n for n in c.notes)


@pytest.mark.parametrize("t_us,want_s", [(1, 1e-6), (0.5, 0.5e-6), (17, 17e-6)])
def test_a_positive_time_however_small_is_a_time(tmp_path, t_us, want_s):
    """1 us, or even half of one, is a time (seconds = us x 1e-6), with no 0-us note."""
    c, _ = read_one(tmp_path, record(perf_with(coll_exec_time_us=t_us)))
    assert c.time_s == pytest.approx(want_s, rel=1e-12)
    assert not any("0 us" in n for n in c.notes)


def test_a_time_of_exactly_a_day_is_taken_a_hair_more_refused(tmp_path):
    """MAX_TIME_US (a day) is the longest time a collective's record may carry."""
    c, _ = read_one(tmp_path, record(perf_with(coll_exec_time_us=T.MAX_TIME_US)))
    assert c.time_s == pytest.approx(86_400.0)
    msg = refused_at(tmp_path, record(perf_with(coll_exec_time_us=int(T.MAX_TIME_US) + 1)))
    assert "not a collective's record" in msg


def test_a_negative_time_is_refused_with_its_place(tmp_path):
    msg = refused_at(tmp_path, record(perf_with(coll_exec_time_us=-3.0)))
    assert "-3.0 us" in msg


# ------------------------------------------------------------------ ranks


def test_a_one_rank_communicator_is_read(tmp_path):
    """n_ranks 1 (rank 0 of 1) is a communicator: read, group size 1."""
    c, _ = read_one(tmp_path, record(coll_perf("v4.0", "AllReduce", 1, MiB, 17, 1), rank=0, n=1))
    assert (c.rank, c.group_size) == (0, 1)


def test_two_to_the_twenty_ranks_is_read_one_more_refused(tmp_path):
    """The largest communicator taken is 2^20 ranks; 2^20 + 1 is not a record."""
    n = 1 << 20
    c, _ = read_one(tmp_path, record(rank=n - 1, n=n))
    assert (c.rank, c.group_size) == (n - 1, n)
    msg = refused_at(tmp_path, record(rank=0, n=n + 1))
    assert f"of {n + 1}" in msg


def test_zero_ranks_is_refused(tmp_path):
    assert "rank 0 of 0" in refused_at(tmp_path, record(perf_with(), rank=0, n=0))


def test_a_rank_equal_to_n_ranks_is_refused_naming_both(tmp_path):
    """Ranks count from 0: rank 8 of 8 does not exist; the last one, 7, does."""
    c, _ = read_one(tmp_path, record(rank=7, n=8))
    assert c.rank == 7
    msg = refused_at(tmp_path, record(rank=8, n=8))
    assert "rank 8 of 8" in msg and "not a collective's record" in msg


# ------------------------------------------------------------------ message size


def test_a_zero_byte_collective_is_read(tmp_path):
    """NCCL runs collectives of count 0: a 0-byte record is read, size 0."""
    c, _ = read_one(tmp_path, record(perf_with(coll_msg_size_bytes=0)))
    assert c.size_bytes == 0


def test_one_pebibyte_is_the_largest_message_taken(tmp_path):
    """1 PiB is taken; one byte more is refused, the size named, with file and line."""
    c, _ = read_one(tmp_path, record(perf_with(coll_msg_size_bytes=T.MAX_MESSAGE)))
    assert c.size_bytes == 1 << 50
    msg = refused_at(tmp_path, record(perf_with(coll_msg_size_bytes=T.MAX_MESSAGE + 1)))
    assert f"{(1 << 50) + 1} B" in msg and "over 1 PiB" in msg


# ------------------------------------------------------------------ bandwidths and peers


def test_a_negative_bandwidth_alone_is_refused(tmp_path):
    """A collective (no peer) whose busbw is negative: refused, with file and line."""
    msg = refused_at(tmp_path, record(perf_with(coll_busbw_gbs=-1.0)))
    assert "negative bandwidth" in msg


def test_a_tiny_positive_bandwidth_is_kept(tmp_path):
    """A bandwidth above 0 but under 1 B/s (json.cc's %lf cannot print one, another
    writer can) is a figure, kept as written: only negative ones are refused."""
    c, _ = read_one(tmp_path, json.dumps(record(perf_with(coll_algobw_gbs=1e-10, coll_busbw_gbs=2e-10))))
    assert c.recorded_algbw == pytest.approx(0.1) and c.recorded_busbw == pytest.approx(0.2)


def test_a_peer_outside_the_ranks_is_refused_naming_the_rank_count(tmp_path):
    """A p2p record's peer must be one of the n_ranks: 7 of 8 is read, 8 of 8 refused."""
    c, _ = read_one(tmp_path, record(p2p_perf("Recv", 1, 7, MiB, 20), kind="p2p_perf"))
    assert c.notes[0] == "Recv #1 with peer 7 (point-to-point)"
    msg = refused_at(tmp_path, record(p2p_perf("Recv", 1, 8, MiB, 20), kind="p2p_perf"))
    assert "peer outside the 8 ranks" in msg


# ------------------------------------------------------------------ bad fields named


@pytest.mark.parametrize("where,value,field", [
    ("head", {"n_ranks": None}, "header.n_ranks"),
    ("head", {"n_ranks": "8"}, "header.n_ranks"),
    ("head", {"rank": True}, "header.rank"),
    ("head", {"rank": 1.5}, "header.rank"),
    ("perf", {"coll_sn": "1"}, "coll_sn"),
    ("perf", {"coll_msg_size_bytes": 1.5}, "coll_msg_size_bytes"),
    ("perf", {"coll_exec_time_us": "17us"}, "coll_exec_time_us"),
    ("perf", {"coll_busbw_gbs": "fast"}, "coll_busbw_gbs"),
    ("perf", {"coll_algobw_gbs": [1]}, "coll_algobw_gbs"),
])
def test_a_bad_field_is_refused_naming_the_field_the_file_and_the_line(tmp_path, where, value, field):
    """A field of the wrong type: the refusal says which field, at which file and line."""
    rec = record(head=value) if where == "head" else record(perf_with(**value))
    msg = refused_at(tmp_path, rec)
    assert msg.startswith(f"missing or bad field ({field} is "), msg


@pytest.mark.parametrize("peer", [None, "3", 2.0])
def test_a_bad_p2p_peer_is_refused_naming_the_field(tmp_path, peer):
    perf = p2p_perf("Send", 1, 3, MiB, 20)
    if peer is None:
        del perf["p2p_peer"]
    else:
        perf["p2p_peer"] = peer
    msg = refused_at(tmp_path, record(perf, kind="p2p_perf"))
    assert msg.startswith("missing or bad field (p2p_peer is "), msg


def test_a_payload_that_is_not_an_object_is_refused_naming_it(tmp_path):
    """coll_perf given as a list: refused, saying coll_perf is not an object."""
    msg = refused_at(tmp_path, record([1, 2, 3]))
    assert "coll_perf is not an object" in msg


def test_a_collective_name_that_is_not_text_is_refused_showing_the_value(tmp_path):
    """coll given as a number: refused, naming coll_perf.coll and the value written."""
    msg = refused_at(tmp_path, record(perf_with(coll=7)))
    assert "coll_perf.coll is '7'" in msg


def test_a_long_bad_value_is_shown_cut_to_40_characters(tmp_path):
    """A long non-text collective is shown by its first 40 characters, not in full."""
    value = list(range(100))
    msg = refused_at(tmp_path, record(perf_with(coll=value)))
    assert f"coll_perf.coll is {str(value)[:40]!r})" in msg


# ------------------------------------------------------------------ format version


def test_a_missing_version_is_refused_with_file_and_line(tmp_path):
    rec = record(drop_meta=("inspector_output_format_version",))
    assert "metadata.inspector_output_format_version" in refused_at(tmp_path, rec)


def test_an_unknown_version_is_refused_with_file_line_and_the_version(tmp_path):
    msg = refused_at(tmp_path, record(meta={"inspector_output_format_version": "v5.0"}))
    assert "'v5.0'" in msg and "v4.0" in msg and "v4.4" in msg


def test_a_long_unknown_version_is_shown_cut_to_20_characters(tmp_path):
    """A version string of 40 characters is shown by its first 20, so the line stays short."""
    v = "v9." + "1234567890" * 4
    msg = refused_at(tmp_path, record(meta={"inspector_output_format_version": v}))
    assert repr(v[:20]) in msg and v[:21] not in msg


# ------------------------------------------------------------------ kernel starts (verbose records)


def verbose(starts):
    """A record whose event_trace_ts lists kernel events with these kernel_start_ts."""
    perf = perf_with()
    perf["event_trace_ts"] = {"coll_start_ts": 10, "coll_stop_ts": 50,
                              "kernel_events": [{"channel_id": i, "kernel_start_ts": s} for i, s in enumerate(starts)]}
    return record(perf)


def test_the_start_is_the_earliest_channel_s_kernel_start(tmp_path):
    c, _ = read_one(tmp_path, verbose([1_000_040, 1_000_010, 1_000_025]))
    assert c.start_us == 1_000_010.0


@pytest.mark.parametrize("junk", [0, -5, True, None, "7"])
def test_unset_negative_and_non_numeric_starts_are_ignored(tmp_path, junk):
    """A start of 0 (unset), negative, a boolean, null or text is no time: the start is
    the earliest real one."""
    c, _ = read_one(tmp_path, verbose([junk, 2_000_000, 2_000_003]))
    assert c.start_us == 2_000_000.0


def test_a_start_of_one_microsecond_is_a_start(tmp_path):
    """Any positive timestamp is a time on the host's clock, 1 us included."""
    c, _ = read_one(tmp_path, verbose([1, 9]))
    assert c.start_us == 1.0


def test_no_kernel_events_means_no_start(tmp_path):
    """An empty kernel_events list, or only unset starts: start unknown, the record read."""
    c, _ = read_one(tmp_path, verbose([]))
    assert c.start_us is None
    c, _ = read_one(tmp_path, verbose([0, 0]))
    assert c.start_us is None


# ------------------------------------------------------------------ ranks far apart


def call(rank, start_us):
    return T.TelemetryCall("NCCL Inspector", rank, "n0", "c0", 1, "all_reduce", None, 1 << 20, 4, 1e-3,
                           start_us=start_us)


def test_apart_names_the_later_rank_and_the_earlier_by_their_first_starts(tmp_path):
    """Rank 1 started first (hour 0), rank 0 two hours later: rank 0 is after rank 1,
    whatever their numbers."""
    h = 3600e6
    w = T._apart_warnings([call(0, 1e6 + 2 * h), call(1, 1e6)])
    assert len(w) == 1 and w[0].startswith("rank 0's calls start 2.0 h after rank 1's")


def test_apart_uses_each_rank_s_earliest_start(tmp_path):
    """Rank 0's calls at hour 0 and hour 3, rank 1's at hour 1: rank 1 starts 1 h after
    rank 0 (rank 0's later call does not make it the late one)."""
    h = 3600e6
    w = T._apart_warnings([call(0, 1e6), call(0, 1e6 + 3 * h), call(1, 1e6 + h)])
    assert len(w) == 1 and w[0].startswith("rank 1's calls start 1.0 h after rank 0's")


def test_apart_is_the_gap_not_the_clock_reading(tmp_path):
    """Ranks 100 s apart at 400 s and 500 s on the clock: within 600 s, nothing said."""
    assert T._apart_warnings([call(0, 400e6), call(1, 500e6)]) == []


def test_exactly_apart_s_is_not_said_a_second_more_is(tmp_path):
    """APART_S (600 s) apart is still one window; 601 s is not."""
    assert T._apart_warnings([call(0, 1e6), call(1, 601e6)]) == []
    [w] = T._apart_warnings([call(0, 1e6), call(1, 602e6)])
    assert w.startswith("rank 1's calls start 0.2 h after rank 0's")


def test_the_gap_is_said_in_hours_of_3600_seconds(tmp_path):
    """500 h apart is said as 500.0 h."""
    [w] = T._apart_warnings([call(0, 1e6), call(1, 1e6 + 500 * 3600e6)])
    assert w.startswith("rank 1's calls start 500.0 h after rank 0's")
