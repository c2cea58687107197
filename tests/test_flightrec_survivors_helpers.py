"""Mutation survivors of the Flight Recorder reader's helpers (_short, _numel, _fmt_size,
_dedupe, _position): exact strings, exact error messages, exact warnings and exact
positions for values and small dumps written by hand, each answer worked out by hand."""

import dataclasses
import pickle

import pytest

from linkroof.readers import flightrec as F
from linkroof.readers.telemetry import TelemetryError

# ------------------------------------------------------------------ dumps, by hand


def _entry(rid, seq, state, group="g", desc="gd", pg_id=0, name="nccl:all_reduce", p2p=False):
    return {"record_id": rid, "pg_id": pg_id, "process_group": (group, desc), "collective_seq_id": seq,
            "p2p_seq_id": 0, "op_id": rid + 1, "profiling_name": name, "input_sizes": [[1024]],
            "input_dtypes": ["BFloat16"], "output_sizes": [[1024]], "output_dtypes": ["BFloat16"], "state": state,
            "is_p2p": p2p}


def _bytes(entries, pg_status=None, tag=0):
    doc = {"version": "2.10", "pg_config": {"g": {"name": "g", "desc": "gd", "ranks": "[0, 1]"}},
           "entries": entries, "tag": tag}  # tag: the bytes apart where wanted
    if pg_status is not None:
        doc["pg_status"] = pg_status
    return pickle.dumps(doc, protocol=2)


def _read(path, entries=(), pg_status=None, tag=0):
    return F.read_dump(_bytes(list(entries), pg_status, tag), path)


def _status(enq, started, done):
    out = {"last_enqueued_collective": enq, "last_completed_collective": done}
    if started is not None:
        out["last_started_collective"] = started
    return out


# ------------------------------------------------------------------ _short


def test_short_names_a_container_by_its_type():
    assert F._short({"a": 1}) == "dict"
    assert F._short([1, 2]) == "list"
    assert F._short((1,)) == "tuple"


def test_short_huge_numbers_by_their_digit_count_from_ten_to_the_thirty():
    assert F._short(10 ** 30) == "a number of 31 digits"  # the threshold itself counts as huge
    assert F._short(-(10 ** 30)) == "a number of 31 digits"
    assert F._short(10 ** 30 - 1) == "9" * 30  # below it: written out
    assert F._short(300) == "300"
    assert F._short(12345) == "12345"
    assert F._short(2 * 10 ** 30) == "a number of 31 digits"


def test_short_numbers_of_4000_digits_and_more_are_not_counted():
    assert F._short(10 ** 4000 - 1) == "a number of 4000 digits"
    assert F._short(10 ** 4000) == "a number of over 4000 digits"  # 4001 digits: not counted
    assert F._short(-(10 ** 4000)) == "a number of over 4000 digits"
    assert F._short(10 ** 5000) == "a number of over 4000 digits"  # str() would refuse it


def test_short_text_is_made_printable_and_cut_at_60():
    assert F._short("a\ud800b") == "'a?b'"  # a lone surrogate replaced
    assert F._short("x" * 100) == "'" + "x" * 59
    assert len(F._short("x" * 100)) == 60
    assert F._short(True) == "True" and F._short(None) == "None" and F._short(2.5) == "2.5"


# ------------------------------------------------------------------ _numel


def test_numel_counts_zero_sized_and_64_dim_tensors():
    assert F._numel([0]) == 0
    assert F._numel([3, 0]) == 0
    assert F._numel((4, 5)) == 20
    assert F._numel([]) == 1
    assert F._numel([1] * 64) == 1  # MAX_DIMS itself is allowed
    assert F._numel([2] * 40) == 1 << 40


def test_numel_accepts_two_to_the_forty_and_no_more():
    assert F._numel([1 << 40]) == 1 << 40
    assert F._numel([1 << 20, 1 << 20]) == 1 << 40
    with pytest.raises(ValueError) as ei:
        F._numel([(1 << 40) + 1])
    assert str(ei.value) == "dimension 1099511627777 (over 2^40 elements: not a tensor a rank holds)"
    with pytest.raises(ValueError) as ei:
        F._numel([1 << 21, 1 << 20])
    assert str(ei.value) == "a tensor of 2.2e+12 elements (over 2^40: not a tensor a rank holds)"


@pytest.mark.parametrize("shape, msg", [("abc", "shape 'abc'"), ([1] * 65, "shape list"), (None, "shape None"),
                                        ({"a": 1}, "shape dict"), (7, "shape 7")])
def test_numel_refuses_a_bad_shape_naming_it(shape, msg):
    with pytest.raises(ValueError) as ei:
        F._numel(shape)
    assert str(ei.value) == msg


@pytest.mark.parametrize("shape, msg", [([-1], "dimension -1"), ([2, True], "dimension True"),
                                        ([2.5], "dimension 2.5"), ([4, "8"], "dimension '8'"),
                                        ([[2]], "dimension list"), ([False], "dimension False")])
def test_numel_refuses_a_bad_dimension_naming_it(shape, msg):
    with pytest.raises(ValueError) as ei:
        F._numel(shape)
    assert str(ei.value) == msg


def test_a_bad_dimension_in_a_dump_is_named_in_the_error():
    e = _entry(0, 1, "completed")
    e["input_sizes"] = [[2, True]]
    with pytest.raises(TelemetryError, match=r"entries\[0\]: missing or bad field \(dimension True\)"):
        F.read_dump(_bytes([e]), "trace_0")


# ------------------------------------------------------------------ _fmt_size


@pytest.mark.parametrize("n, text", [(0, "0 B"), (1023, "1023 B"), (1024, "1 KiB"), (2047, "2 KiB"),
                                     (1536, "1.5 KiB"), ((1 << 20) - 1, "1.02e+03 KiB"), (1 << 20, "1 MiB"),
                                     (8 << 20, "8 MiB"), ((1 << 30) - 1, "1.02e+03 MiB"), (1 << 30, "1 GiB"),
                                     (3 << 30, "3 GiB"), (1 << 40, "1.02e+03 GiB")])
def test_fmt_size_exact(n, text):
    assert F._fmt_size(n) == text


def test_fmt_size_in_a_sentence():
    s = F.Stuck("g", "", (0, 1), "collective", 1, "all_reduce", (), ("bf16",), 1 << 30, (1,), (0,), {})
    assert s.sentence() == "group 'g': rank 1 is behind at all_reduce #1 (bf16, 1 GiB); rank 0 waits []"
    s = dataclasses.replace(s, size_bytes=1024)
    assert s.sentence() == "group 'g': rank 1 is behind at all_reduce #1 (bf16, 1 KiB); rank 0 waits []"


# ------------------------------------------------------------------ _dedupe


def test_a_copy_under_no_rank_is_said_after_the_ranked_one_in_any_order():
    data = _bytes([_entry(0, 1, "completed")])
    ranked, bare = F.read_dump(data, "d/trace_0"), F.read_dump(data, "d/trace_x")
    assert (ranked.rank, bare.rank, ranked.digest == bare.digest) == (0, None, True)
    want = ["trace_x has the same contents as trace_0, under another rank: a copy?",
            "trace_x: no rank in the file name: left out of the hang diagnosis"]
    for dumps in ([ranked, bare], [bare, ranked]):
        out, warnings = F._dedupe(dumps)
        assert list(out) == [0] and out[0] is ranked
        assert warnings == want


def test_copies_under_two_ranks_the_lower_rank_first_whatever_the_paths():
    data = _bytes([_entry(0, 1, "completed")])
    r2, r1 = F.read_dump(data, "a_rank_2"), F.read_dump(data, "b_rank_1")
    for dumps in ([r2, r1], [r1, r2]):
        out, warnings = F._dedupe(dumps)
        assert out == {1: r1, 2: r2}
        assert warnings == ["a_rank_2 has the same contents as b_rank_1, under another rank: a copy?"]


def test_copies_under_rank_0_and_rank_1_rank_0_first():
    data = _bytes([_entry(0, 1, "completed")])
    r0, r1 = F.read_dump(data, "b_rank_0"), F.read_dump(data, "a_rank_1")
    for dumps in ([r0, r1], [r1, r0]):
        out, warnings = F._dedupe(dumps)
        assert out == {0: r0, 1: r1}
        assert warnings == ["a_rank_1 has the same contents as b_rank_0, under another rank: a copy?"]


def test_different_dumps_are_no_copies_and_the_same_file_twice_is_read_once():
    a = _read("x/trace_0", [_entry(0, 1, "completed")], tag=1)
    b = _read("x/trace_1", [_entry(0, 1, "completed")], tag=2)
    again = F.read_dump(_bytes([_entry(0, 1, "completed")], tag=1), "y/trace_0")
    assert a.digest != b.digest and again.digest == a.digest
    out, warnings = F._dedupe([a, b])
    assert out == {0: a, 1: b} and warnings == []  # one file per rank: nothing to say
    out, warnings = F._dedupe([again, b, a])
    assert out == {0: a, 1: b}
    assert warnings == ["trace_0 is the same dump as trace_0: read once"]


def test_a_dump_without_a_rank_does_not_stop_the_others():
    bare = dataclasses.replace(_read("d/noname", [_entry(0, 1, "completed")], tag=1), digest="0" * 64)
    r0 = dataclasses.replace(_read("d/trace_0", [_entry(0, 1, "completed")], tag=2), digest="e" * 64)
    r1 = dataclasses.replace(_read("d/trace_1", [_entry(0, 1, "completed")], tag=3), digest="f" * 64)
    assert bare.rank is None
    out, warnings = F._dedupe([r1, bare, r0])
    assert out == {0: r0, 1: r1}
    assert warnings == ["noname: no rank in the file name: left out of the hang diagnosis"]


def test_one_rank_in_two_files_keeps_the_one_with_entries_over_an_empty_ring():
    full = _read("d/a_0", [_entry(0, 1, "started")])
    empty = _read("d/b_0", [])
    for dumps in ([full, empty], [empty, full]):
        out, warnings = F._dedupe(dumps)
        assert out == {0: full}
        assert warnings == ["rank 0 is in 2 files (b_0, a_0): a_0, the later dump, is used; the rank is counted once"]


def test_an_empty_ring_ranks_as_record_id_minus_one():
    """A hostile record_id of -1 ties with an empty ring (no entry counts as -1): the path
    decides; -2 is older than an empty ring."""
    minus1 = _read("d/a_0", [_entry(-1, 1, "started")])
    empty = _read("d/z_0", [])
    out, warnings = F._dedupe([minus1, empty])
    assert out == {0: empty}
    assert warnings == ["rank 0 is in 2 files (a_0, z_0): z_0, the later dump, is used; the rank is counted once"]
    minus2 = _read("d/z_0", [_entry(-2, 1, "started")])
    empty = _read("d/a_0", [])
    out, warnings = F._dedupe([minus2, empty])
    assert out == {0: empty}
    assert warnings == ["rank 0 is in 2 files (z_0, a_0): a_0, the later dump, is used; the rank is counted once"]


def test_one_rank_in_three_files_keeps_the_largest_record_id_not_the_last_path():
    a = _read("d/a_0", [_entry(0, 1, "completed"), _entry(1, 2, "completed"), _entry(2, 3, "started")])
    b = _read("d/b_0", [_entry(0, 1, "started")])
    c = _read("d/c_0", [_entry(0, 1, "completed"), _entry(1, 2, "started")])
    for dumps in ([a, b, c], [c, b, a], [b, a, c]):
        out, warnings = F._dedupe(dumps)
        assert out == {0: a}
        assert warnings == ["rank 0 is in 3 files (b_0, c_0, a_0): a_0, the later dump, is used; "
                            "the rank is counted once"]


# ------------------------------------------------------------------ _position


def _pos(entries, pg_status=None, name="g"):
    d = _read("trace_0", entries, pg_status)
    return F._position(0, name, [e for e in d.entries if e.group == name], d)


def test_position_from_pg_status_names_the_started_counter():
    es = [_entry(0, 1, "completed"), _entry(1, 2, "completed"), _entry(2, 3, "started")]
    assert _pos(es, {"0": _status(3, 3, 2)}) == (3, 2, "pg_status: last enqueued #3, started #3, completed #2")


def test_position_from_pg_status_without_a_started_counter():
    es = [_entry(0, 1, "completed"), _entry(1, 2, "completed"), _entry(2, 3, "started")]
    assert _pos(es, {"0": _status(3, None, 2)}) == (3, 2, "pg_status: last enqueued #3, completed #2")
    assert _pos(es, {"0": _status(3, -1, 2)}) == (3, 2, "pg_status: last enqueued #3, completed #2")


def test_position_names_a_started_counter_of_zero():
    # 0 is a started collective's number, not "none" (-1): it was dropped until 2026-12-05
    es = [_entry(0, 1, "scheduled")]
    assert _pos(es, {"0": _status(1, 0, 0)}) == (1, 0, "pg_status: last enqueued #1, started #0, completed #0")


def test_position_from_the_ring_with_completed_entries():
    es = [_entry(0, 1, "completed"), _entry(1, 2, "completed"), _entry(2, 3, "started")]
    assert _pos(es) == (3, 2, "ring: last all_reduce #3 started, 3 entries")
    es = [_entry(0, 4, "completed"), _entry(1, 5, "scheduled"), _entry(2, 6, "scheduled")]
    assert _pos(es) == (6, 4, "ring: last all_reduce #6 scheduled, 3 entries")


def test_position_from_a_ring_with_nothing_completed_the_older_ones_retired():
    es = [_entry(0, 5, "started"), _entry(1, 6, "scheduled")]
    assert _pos(es) == (6, 4, "ring: last all_reduce #6 scheduled, 2 entries")
    assert _pos([_entry(7, 1, "started")]) == (1, 0, "ring: last all_reduce #1 started, 1 entries")


def test_position_in_a_diagnosis_ring_evidence_exact():
    """Rank 0's ring holds all_reduce #3 started only (#1, #2 retired: completed); rank 1's
    holds #1 and #2 completed. The first call not every member completed is #3: rank 1 is
    behind, rank 0 waits."""
    r0 = _read("trace_0", [_entry(5, 3, "started")])
    r1 = _read("trace_1", [_entry(0, 1, "completed"), _entry(1, 2, "completed")])
    (s,) = F.diagnose_hang([r0, r1]).stuck
    assert (s.seq, s.behind, s.waiting) == (3, (1,), (0,))
    assert s.evidence == {0: "ring: last all_reduce #3 started, 1 entries",
                          1: "ring: last all_reduce #2 completed, 2 entries"}
