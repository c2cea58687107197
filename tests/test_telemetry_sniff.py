"""read_telemetry tells a file's format from its first 4 KB (SNIFF), and from the whole
first line where that line is a JSON record running past them (an Inspector header with
a long comm_name). These tests put each edge of that rule where it falls: a marker
ending on byte 4096 or on byte 4097, blanks before a long record, a payload's name past
the window in a multi-line JSON document. Each expected verdict is worked out by hand
from the rule, not from the code's output."""

import json

from linkroof.readers import telemetry as T
from test_inspector_formats import MiB, coll_perf, dump, prom_bucket
from test_telemetry import nccl_tests_per_iter
from test_telemetry_survivors_g import refusal

MARKERS = ("nccl_bus_bandwidth_gbs{", "nccl_collective_exec_time_microseconds{", "nccl_p2p_bus_bandwidth_gbs{")


def _padded_to(end: int, body: str) -> str:
    """`body` after a comment line sized so that the first Prometheus marker in it ends on
    byte `end` of the file (1-based)."""
    first = min(body.index(m) + len(m) for m in MARKERS if m in body)
    pad = end - first  # bytes before the body
    assert pad >= 3
    return "#" + "x" * (pad - 2) + "\n" + body


def test_the_window_is_4_kb_exactly(tmp_path):
    """Not named .prom, a textfile is told by its metric names within the first 4096 bytes:
    a marker whose '{' is byte 4096 is seen, one whose '{' is byte 4097 is not, and the
    refusal says how the format is told and what to do."""
    body = prom_bucket(20.0, 150.0, size="1-2MB", nranks=2)
    inside, outside = tmp_path / "inside.txt", tmp_path / "outside.txt"
    inside.write_text(_padded_to(4096, body))
    outside.write_text(_padded_to(4097, body))
    assert inside.read_text().index("{") == 4095  # 0-based: byte 4096
    (c,) = T.read_telemetry(inside).calls
    assert (c.collective, c.group_size, c.size_range) == ("all_reduce", 2, (MiB, 2 * MiB))
    msg = refusal(outside)
    assert "not NCCL Inspector output, a Flight Recorder dump or nccl-tests JSON" in msg
    assert "told from its first 4 KB" in msg and "*.prom" in msg


def test_blanks_filling_the_window_tell_nothing(tmp_path):
    """5000 spaces and then, on the same line, a collective's sample: the first 4 KB are
    blank, so the file is refused with the rule (the rest of a first line is read only
    for a JSON record, which this is not)."""
    f = tmp_path / "blank.txt"
    f.write_text(" " * 5000 + prom_bucket(20.0, 150.0, size="1-2MB", nranks=2))
    assert "told from its first 4 KB" in refusal(f)


def _long_headers(lines):
    for line in lines:
        line["header"]["comm_name"] = "x" * 4200  # the payload's key lands past byte 4096
    return "".join(json.dumps(line) + "\n" for line in lines)


def test_blank_lines_before_a_long_first_record_are_skipped(tmp_path):
    """A newline and spaces before an Inspector log whose first record runs past 4 KB: the
    record still starts the file once blanks are skipped, its whole line is read, and the
    log is an Inspector log of both calls."""
    lines = dump("v4.2", 0, 2, [coll_perf("v4.2", "AllReduce", sn, MiB, 17, 2) for sn in (1, 2)])
    text = _long_headers(lines)
    assert text.index('"coll_perf"') > 4096
    f = tmp_path / "lead-pid1.log"
    f.write_text("\n  " + text)
    t = T.read_telemetry(f)
    assert t.source == "NCCL Inspector" and [c.seq for c in t.calls] == [1, 2]


def test_a_payloads_name_past_the_window_of_a_multiline_document_is_not_read(tmp_path):
    """An nccl-tests document whose second line runs past 4 KB and names "coll_perf" there:
    the first 4 KB hold a newline, so only they tell the format, and the document is read
    as the nccl-tests JSON it is (not as an Inspector log)."""
    doc = nccl_tests_per_iter()
    text = '{\n"pad": "' + "x" * 5000 + '", "coll_perf": 0,\n' + json.dumps(doc)[1:]
    assert text.index('"coll_perf"') > 4096 and "\n" in text[:4096]
    f = tmp_path / "ar.json"
    f.write_text(text)
    t = T.read_telemetry(f)
    assert t.source == "nccl-tests -I 1" and len(t.calls) > 10
