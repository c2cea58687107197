"""read_inspector_jsonl, held to the rules a user of the NCCL Inspector reader relies on:

- every refusal is a TelemetryError that names the file and the line it stopped at, and
  says what was wrong (the field, the counts, the two payloads a record carried);
- a dump_stats marker needs its header and counts; counts it omits are zero; counts up
  to MAX_CALLS are taken, negative ones refused; the dropped totals are the largest any
  marker of that communicator and rank announced, and said per payload;
- headerless records take their marker's header, as many as it announced; headered
  records owe the marker nothing;
- blank lines are skipped, not an end; proxy_trace records are counted, not read, and
  records after them are read; a record repeated is counted once and said, and records
  after it are read; p2p records and unknown collectives are told apart by what they
  are, not merged;
- the format's version note comes first; a file with no records is refused, saying
  how many proxy_trace records it held only where it held some.
"""

import json

import pytest

from linkroof.files import FileInputError
from linkroof.readers import telemetry as T
from test_inspector_formats import MiB, coll_perf, dump, dump_stats, emit, header, metadata, p2p_perf, three_calls, write


# ------------------------------------------------------------------ helpers


def lines_file(tmp_path, lines, name="node0-pid1.log"):
    """A file of the given lines: dicts are emitted as json.cc writes them, text as is."""
    f = tmp_path / name
    f.write_bytes(b"".join((x if isinstance(x, bytes) else (x if isinstance(x, str) else emit(x)).encode())
                           + b"\n" for x in lines))
    return f


def refusal(path, line=None):
    """The reader's TelemetryError for `path`; its message must start with the file's
    name and, where `line` is given, the line number (`path line N: ...`)."""
    with pytest.raises(T.TelemetryError) as e:
        T.read_inspector_jsonl(path)
    msg = str(e.value)
    want = f"{path} line {line}: " if line is not None else f"{path}: "
    assert msg.startswith(want), msg
    return msg[len(want):]


def rec(version="v4.0", rank=0, n=8, perf=None, kind="coll_perf", **kw):
    """One headered record (v4.0 layout: header, metadata, payload)."""
    return {"header": header(rank, n, **kw), "metadata": metadata(version),
            kind: perf if perf is not None else coll_perf(version, "AllReduce", 1, MiB, 17, n)}


def good(version="v4.0", sn=1):
    return rec(version, perf=coll_perf(version, "AllReduce", sn, MiB, 17, 8))


def marker(version="v4.4", rank=0, n=8, **stats):
    """A dump_stats marker whose counts are exactly `stats` (nothing else announced)."""
    return {"header": header(rank, n), "metadata": metadata(version), "dump_stats": stats}


# ------------------------------------------------------------------ the file itself


def test_a_folder_is_refused_naming_what_was_expected(tmp_path):
    """Given a folder, the refusal says an NCCL Inspector log was expected there."""
    with pytest.raises(FileInputError) as e:
        T.read_inspector_jsonl(tmp_path)
    assert "NCCL Inspector log" in str(e.value)


def test_the_reading_is_labelled_as_nccl_inspector(tmp_path):
    """The Telemetry read says which format it came from."""
    tel = T.read_inspector_jsonl(write(tmp_path / "a.log", [good()]))
    assert tel.source == "NCCL Inspector"
    assert all(c.source == "NCCL Inspector" for c in tel.calls)


# ------------------------------------------------------------------ line length


def test_a_line_of_exactly_max_line_bytes_is_read(tmp_path):
    """MAX_LINE bytes (newline included) is the longest line taken: it is read."""
    text = emit(good())
    pad = T.MAX_LINE - len(text) - 1
    f = lines_file(tmp_path, [" " * pad + text])
    assert f.stat().st_size == T.MAX_LINE
    tel = T.read_inspector_jsonl(f)
    assert [c.seq for c in tel.calls] == [1]


def test_a_line_over_max_line_bytes_is_refused_with_its_number(tmp_path):
    """One byte more than MAX_LINE: refused, naming the file and the line."""
    text = emit(good(sn=2))
    f = lines_file(tmp_path, [emit(good()), " " * (T.MAX_LINE - len(text)) + text])
    assert "a line of over" in refusal(f, 2)


# ------------------------------------------------------------------ blank and bad lines


def test_blank_lines_between_records_are_skipped_not_an_end(tmp_path):
    """Empty or whitespace-only lines are skipped; the records after them are read."""
    f = lines_file(tmp_path, [good(sn=1), "", "   \t", good(sn=2), "", good(sn=3)])
    tel = T.read_inspector_jsonl(f)
    assert [c.seq for c in tel.calls] == [1, 2, 3]


def test_a_non_utf8_line_followed_by_records_is_refused_with_its_place(tmp_path):
    """A line that is not UTF-8 but not the last: refused, naming the file and the line."""
    f = lines_file(tmp_path, [good(sn=1), b'{"x":"\xff\xfe"}', good(sn=2)])
    assert "not UTF-8" in refusal(f, 2)


def test_a_non_json_line_followed_by_records_is_refused_with_its_place(tmp_path):
    """A line cut mid-record that is not the last: refused, naming the file and the line."""
    f = lines_file(tmp_path, [good(sn=1), emit(good(sn=2))[:30], good(sn=3)])
    assert "not JSON" in refusal(f, 2)


def test_nan_in_a_record_is_refused_with_its_place(tmp_path):
    """NaN (which JSON lacks) in a record: refused, naming the file and the line."""
    bad = emit(good(sn=2)).replace('"coll_exec_time_us":17', '"coll_exec_time_us":NaN')
    assert "NaN" in bad
    f = lines_file(tmp_path, [good(sn=1), bad])
    assert "NaN is not a number" in refusal(f, 2)


@pytest.mark.parametrize("value", ["[1,2]", '"coll_perf"', "17", "null"])
def test_a_line_that_is_not_an_object_is_refused_with_its_place(tmp_path, value):
    """A JSON value that is not an object: refused, naming the file and the line."""
    f = lines_file(tmp_path, [good(sn=1), value, good(sn=2)])
    assert "not an object" in refusal(f, 2)


def test_a_cut_off_last_line_leaves_the_version_note_first(tmp_path):
    """The notes start with the format's version, before the note on the cut-off line."""
    f = lines_file(tmp_path, [good(sn=1), emit(good(sn=2))[:30]])
    tel = T.read_inspector_jsonl(f)
    assert tel.notes[0] == "NCCL Inspector JSON format v4.0"
    assert any("line 2 cut off" in n for n in tel.notes[1:])


# ------------------------------------------------------------------ payloads


def test_a_record_with_no_payload_is_refused_naming_the_payloads_read(tmp_path):
    """Neither dump_stats nor coll_perf, p2p_perf, proxy_trace: refused, the kinds named."""
    r = good(sn=2)
    r["coll_stats"] = r.pop("coll_perf")
    msg = refusal(lines_file(tmp_path, [good(sn=1), r]), 2)
    assert "none of dump_stats, coll_perf, p2p_perf, proxy_trace" in msg


def test_a_record_with_two_payloads_is_refused_naming_both(tmp_path):
    """A record carrying coll_perf and p2p_perf: refused, naming the two."""
    r = good(sn=2)
    r["p2p_perf"] = p2p_perf("Send", 1, 1, MiB, 20)
    msg = refusal(lines_file(tmp_path, [good(sn=1), r]), 2)
    assert "both coll_perf and p2p_perf" in msg


# ------------------------------------------------------------------ headers


def test_metadata_without_header_is_a_bad_header_not_a_headerless_record(tmp_path):
    """A record with metadata but no header is a headered record missing its header."""
    r = good(sn=2)
    del r["header"]
    msg = refusal(lines_file(tmp_path, [good(sn=1), r]), 2)
    assert "missing or bad field (header)" in msg


@pytest.mark.parametrize("head", [5, "rank 0", [0, 8], None])
def test_a_header_that_is_not_an_object_is_refused_with_its_place(tmp_path, head):
    """A header that is not an object: refused as a bad header, naming file and line."""
    r = good(sn=2)
    r["header"] = head
    assert "missing or bad field (header)" in refusal(lines_file(tmp_path, [good(sn=1), r]), 2)


def test_an_unknown_version_on_a_headered_record_is_refused_with_its_place(tmp_path):
    """A newer version on a record: refused, naming the file and the line, and the version."""
    r = good(sn=2)
    r["metadata"]["inspector_output_format_version"] = "v9.9"
    assert "'v9.9'" in refusal(lines_file(tmp_path, [good(sn=1), r]), 2)


def test_a_bad_field_in_a_record_is_refused_with_its_place(tmp_path):
    """A record whose size is text: refused, naming the file, the line and the field."""
    r = good(sn=2)
    r["coll_perf"]["coll_msg_size_bytes"] = "1MB"
    assert "coll_msg_size_bytes" in refusal(lines_file(tmp_path, [good(sn=1), r]), 2)


# ------------------------------------------------------------------ dump_stats markers


def test_a_marker_without_header_is_refused(tmp_path):
    """A dump_stats marker with counts but no header: refused with its place."""
    m = marker(coll_records=0)
    del m["header"]
    msg = refusal(lines_file(tmp_path, [good(sn=1), m]), 2)
    assert "dump_stats marker without its header" in msg


def test_a_marker_whose_counts_are_not_an_object_is_refused(tmp_path):
    """A dump_stats marker whose counts are a number: refused with its place."""
    m = marker()
    m["dump_stats"] = 3
    msg = refusal(lines_file(tmp_path, [good(sn=1), m]), 2)
    assert "dump_stats marker without its header" in msg


def test_an_unknown_version_on_a_marker_is_refused_with_its_place(tmp_path):
    """A marker of a newer format: refused, naming the file and the line."""
    m = marker(coll_records=0)
    m["metadata"]["inspector_output_format_version"] = "v5.0"
    assert "'v5.0'" in refusal(lines_file(tmp_path, [good(sn=1), m]), 2)


@pytest.mark.parametrize("field", ["coll_records", "p2p_records", "proxy_records"])
def test_a_marker_count_that_is_not_an_integer_is_refused_naming_it(tmp_path, field):
    """Each announced count is an integer; one that is not is named as it is written."""
    m = marker(**{field: "3"})
    msg = refusal(lines_file(tmp_path, [good(sn=1), m]), 2)
    assert f"({field} is '3', not an integer)" in msg


@pytest.mark.parametrize("field", ["coll_dropped_total", "p2p_dropped_total"])
def test_a_dropped_total_that_is_not_an_integer_is_refused_naming_it(tmp_path, field):
    """Each dropped total is an integer; one that is not is named, with the file and line."""
    m = marker(**{field: 2.5})
    msg = refusal(lines_file(tmp_path, [good(sn=1), m]), 2)
    assert f"({field} is '2.5', not an integer)" in msg


def test_a_marker_may_omit_every_count(tmp_path):
    """Counts a marker leaves out are zero: nothing dropped, nothing owed, nothing said."""
    f = lines_file(tmp_path, [marker("v4.1"), good("v4.1", 1), good("v4.1", 2)])
    tel = T.read_inspector_jsonl(f)
    assert [c.seq for c in tel.calls] == [1, 2]
    assert tel.notes == ["NCCL Inspector JSON format v4.1"]


def test_a_headerless_dump_without_proxy_counts_owes_no_proxy_records(tmp_path):
    """v4.3's headerless branch announces no proxy_records: none are owed."""
    f = write(tmp_path / "a.log", dump("v4.3", 0, 8, three_calls("v4.3"), headerless=True))
    tel = T.read_inspector_jsonl(f)
    assert len(tel.calls) == 3
    assert not any("lacks" in n for n in tel.notes), tel.notes


def test_headered_records_after_a_marker_owe_it_nothing(tmp_path):
    """v4.1 to v4.3 write headered records after the marker: they do not count against it,
    so neither the next marker nor the end of the file finds records missing."""
    lines = (dump("v4.1", 0, 8, three_calls("v4.1"), comm="0xa")
             + dump("v4.1", 0, 8, three_calls("v4.1"), comm="0xb"))
    lines.insert(1, marker("v4.1", coll_records=0))  # a marker before the first dump's records
    lines.insert(0, {**marker("v4.1", coll_records=5)})  # and one announcing records never followed headerless
    tel = T.read_inspector_jsonl(write(tmp_path / "a.log", lines))
    assert len(tel.calls) == 6
    assert not any("lacks" in n for n in tel.notes), tel.notes


def test_a_marker_before_its_predecessor_is_complete_is_refused_with_both_lines(tmp_path):
    """A headerless dump followed by a new marker before all its records came: refused,
    naming the file, the new marker's line and the short dump's line."""
    lines = [marker(coll_records=3), {"coll_perf": coll_perf("v4.4", "AllReduce", 1, MiB, 17, 8)},
             marker(coll_records=1), {"coll_perf": coll_perf("v4.4", "AllReduce", 2, MiB, 17, 8)}]
    msg = refusal(lines_file(tmp_path, lines), 3)
    assert "line 1 announced 2 more records" in msg


def test_headerless_records_beyond_the_announced_count_are_refused_with_their_line(tmp_path):
    """A marker announcing 1 collective, followed by 2: the second refused with its line."""
    lines = [marker(coll_records=1)] + [{"coll_perf": coll_perf("v4.4", "AllReduce", s, MiB, 17, 8)} for s in (1, 2)]
    msg = refusal(lines_file(tmp_path, lines), 3)
    assert "more coll_perf records than the dump_stats marker of line 1" in msg


def test_a_headerless_record_before_any_marker_is_refused_with_its_line(tmp_path):
    """A record without header and no marker before it: refused with its place."""
    lines = [good(sn=1), {"coll_perf": coll_perf("v4.4", "AllReduce", 2, MiB, 17, 8)}]
    assert "before any dump_stats marker" in refusal(lines_file(tmp_path, lines), 2)


def test_a_headerless_record_with_other_fields_is_refused_with_its_line(tmp_path):
    """A record without header that carries anything beside its payload: refused."""
    lines = [marker(coll_records=2), {"coll_perf": coll_perf("v4.4", "AllReduce", 1, MiB, 17, 8)},
             {"coll_perf": coll_perf("v4.4", "AllReduce", 2, MiB, 17, 8), "pid": 7}]
    assert "without header carries other fields" in refusal(lines_file(tmp_path, lines), 3)


def test_counts_up_to_max_calls_are_taken(tmp_path):
    """MAX_CALLS itself is an allowed count (a total dropped that large is said)."""
    lines = [marker("v4.1", coll_records=1, coll_dropped_total=T.MAX_CALLS), good("v4.1")]
    tel = T.read_inspector_jsonl(lines_file(tmp_path, lines))
    assert any(f"dropped {T.MAX_CALLS} coll records" in n for n in tel.notes), tel.notes


@pytest.mark.parametrize("stats", [{"coll_records": -1}, {"p2p_dropped_total": -4},
                                   {"proxy_records": T.MAX_CALLS + 1}])
def test_counts_out_of_range_are_refused_with_their_line(tmp_path, stats):
    """A negative count, or one over MAX_CALLS: refused, naming the file and the line."""
    msg = refusal(lines_file(tmp_path, [good(sn=1), marker(**stats)]), 2)
    assert "out of range" in msg
    assert str(next(iter(stats.values()))) in msg


# ------------------------------------------------------------------ dropped records


def test_dropped_collectives_and_p2p_are_both_said(tmp_path):
    """A marker's coll and p2p dropped totals are said together, each with its count."""
    lines = [marker("v4.1", coll_records=1, coll_dropped_total=3, p2p_dropped_total=5), good("v4.1")]
    tel = T.read_inspector_jsonl(lines_file(tmp_path, lines))
    said = [n for n in tel.notes if "dropped" in n]
    assert len(said) == 1 and "dropped 3 coll and 5 p2p records" in said[0], said


def test_dropped_p2p_alone_is_said(tmp_path):
    """Only p2p records dropped: said as p2p, with no collectives claimed."""
    lines = [marker("v4.1", p2p_dropped_total=5), good("v4.1")]
    tel = T.read_inspector_jsonl(lines_file(tmp_path, lines))
    said = [n for n in tel.notes if "dropped" in n]
    assert len(said) == 1 and "dropped 5 p2p records" in said[0] and "coll" not in said[0].split("records")[0]


def test_the_dropped_total_is_the_largest_any_marker_announced(tmp_path):
    """Totals are cumulative: a later marker with a smaller one does not lower what is said."""
    lines = [marker("v4.1", coll_records=0, coll_dropped_total=7), marker("v4.1", coll_records=0,
                                                                          coll_dropped_total=3), good("v4.1")]
    tel = T.read_inspector_jsonl(lines_file(tmp_path, lines))
    said = [n for n in tel.notes if "dropped" in n]
    assert len(said) == 1 and "dropped 7 coll records" in said[0], said


def test_drops_of_a_communicator_without_id_name_it_as_its_calls_do(tmp_path):
    """A header without id: the drop note names the communicator as the calls do (empty)."""
    m = marker("v4.1", coll_dropped_total=2)
    del m["header"]["id"]
    r = good("v4.1")
    del r["header"]["id"]
    tel = T.read_inspector_jsonl(lines_file(tmp_path, [m, r]))
    assert tel.calls[0].comm == ""
    said = [n for n in tel.notes if "dropped" in n]
    assert len(said) == 1 and "records of communicator  rank 0 before" in said[0], said


def test_a_lone_surrogate_in_a_markers_communicator_is_replaced_and_said(tmp_path):
    """A marker whose id holds half a UTF-16 character is read; the name is shown with
    U+FFFD and the note says so."""
    lines = [json.dumps({"header": header(0, 8, comm="0x\ud800"), "metadata": metadata("v4.4"),
                         "dump_stats": {"coll_records": 1, "coll_dropped_total": 1}}),
             emit({"coll_perf": coll_perf("v4.4", "AllReduce", 1, MiB, 17, 8)})]
    tel = T.read_inspector_jsonl(lines_file(tmp_path, lines))
    assert tel.calls[0].comm == "0x\ufffd"
    assert any("lone surrogate" in n and "shown with U+FFFD" in n for n in tel.notes), tel.notes
    assert any("communicator 0x\ufffd rank 0" in n for n in tel.notes), tel.notes


def test_drop_notes_come_in_rank_order(tmp_path):
    """Drop notes of one communicator are listed by rank number: rank 2 before rank 10
    (they were sorted as text, rank 10 first)."""
    lines = [marker("v4.1", rank=10, n=16, coll_dropped_total=1), marker("v4.1", rank=2, n=16, coll_dropped_total=1),
             good("v4.1")]
    tel = T.read_inspector_jsonl(lines_file(tmp_path, lines))
    said = [n for n in tel.notes if "dropped" in n]
    assert [s.split(" rank ")[1].split()[0] for s in said] == ["2", "10"]


# ------------------------------------------------------------------ proxy records


def test_proxy_records_are_counted_and_records_after_them_read(tmp_path):
    """v4.4 writes proxy_trace records at the end of a dump: each is counted, none read,
    and the next communicator's dump after them is read whole."""
    lines = (dump("v4.4", 0, 8, three_calls("v4.4"), headerless=True, proxy=[{"step": 1}, {"step": 2}], comm="0xa")
             + dump("v4.4", 0, 8, three_calls("v4.4"), headerless=True, comm="0xb"))
    tel = T.read_inspector_jsonl(write(tmp_path / "a.log", lines))
    assert [c.comm for c in tel.calls] == ["0xa"] * 3 + ["0xb"] * 3
    assert any(n.startswith("2 proxy_trace records") for n in tel.notes), tel.notes
    assert not any("lacks" in n for n in tel.notes), tel.notes


def test_a_file_of_proxy_records_only_is_refused_saying_how_many(tmp_path):
    """Nothing but proxy_trace records: refused for no records, saying how many proxy ones."""
    lines = dump("v4.4", 0, 8, [], headerless=True, proxy=[{"step": 1}, {"step": 2}, {"step": 3}])
    msg = refusal(write(tmp_path / "a.log", lines))
    assert msg == "no Inspector records (only 3 proxy_trace records)"


@pytest.mark.parametrize("lines", [[], [""], [dump_stats("v4.1", 0, 8, 0)]])
def test_a_file_without_records_is_refused_without_mention_of_proxies(tmp_path, lines):
    """Empty, blank or markers only: refused as holding no Inspector records, nothing more."""
    msg = refusal(lines_file(tmp_path, lines))
    assert msg.endswith("no Inspector records") and "proxy" not in msg


# ------------------------------------------------------------------ repeats and identities


def test_a_record_repeated_is_counted_once_and_the_repeats_said(tmp_path):
    """The same record three times: one call, the two repeats said; later records read."""
    f = lines_file(tmp_path, [good(sn=1), good(sn=1), good(sn=1), good(sn=2)])
    tel = T.read_inspector_jsonl(f)
    assert [c.seq for c in tel.calls] == [1, 2]
    assert any(n.startswith("2 records repeated") for n in tel.notes), tel.notes


def test_p2p_records_with_different_sequence_numbers_or_peers_are_all_kept(tmp_path):
    """p2p records are told apart by operation, number and peer, not merged as one sendrecv."""
    perfs = [p2p_perf("Send", 1, 1, MiB, 20), p2p_perf("Send", 2, 1, MiB, 20), p2p_perf("Recv", 1, 1, MiB, 20),
             p2p_perf("Send", 1, 3, MiB, 20)]
    f = lines_file(tmp_path, [rec(kind="p2p_perf", perf=p) for p in perfs])
    tel = T.read_inspector_jsonl(f)
    assert len(tel.calls) == 4
    assert [c.notes[0].split(" (")[0] for c in tel.calls] == ["Send #1 with peer 1", "Send #2 with peer 1",
                                                              "Recv #1 with peer 1", "Send #1 with peer 3"]
    assert not any("repeated" in n for n in tel.notes)


def test_unknown_collectives_with_the_same_number_are_not_merged(tmp_path):
    """Two collectives linkroof does not know, same sequence number: two calls, each said."""
    perfs = []
    for name in ("AllToAll", "Gather"):
        p = coll_perf("v4.0", "AllReduce", 4, MiB, 17, 8)
        p["coll"] = name
        perfs.append(p)
    tel = T.read_inspector_jsonl(lines_file(tmp_path, [rec(perf=p) for p in perfs]))
    assert len(tel.calls) == 2 and all(c.collective is None for c in tel.calls)
    assert [c.notes[0] for c in tel.calls] == ["collective 'AllToAll' unknown to linkroof",
                                               "collective 'Gather' unknown to linkroof"]
    assert not any("repeated" in n for n in tel.notes)


# ------------------------------------------------------------------ the MAX_CALLS limit


def test_max_calls_records_are_read_and_one_more_refused(tmp_path, monkeypatch):
    """MAX_CALLS records are taken; the one past it is refused with its line and the limit."""
    monkeypatch.setattr(T, "MAX_CALLS", 3)
    tel = T.read_inspector_jsonl(lines_file(tmp_path, [good(sn=s) for s in (1, 2, 3)]))
    assert len(tel.calls) == 3
    f = lines_file(tmp_path, [good(sn=s) for s in (1, 2, 3, 4)], name="b.log")
    assert "more than 3 records" in refusal(f, 4)
