"""Survivors of mutation testing in the Flight Recorder reader's door: read_dump, _fr_doc
(pickle through the restricted unpickler, or JSON), _ranks_of and _rank_from_name. Each
dump here is built by hand; each expected value worked out by hand from the writer's
format: exact groups, ranks, status counters and exact error messages naming the path."""

import json
import pickle

import pytest

from linkroof.readers import flightrec as F
from linkroof.readers.telemetry import TelemetryError

MAX_RANKS = 1 << 20
MAX_GROUPS = 100_000
MAX_ENTRIES = 200_000


def _entry(rid=0, seq=1, state="completed"):
    return {"record_id": rid, "pg_id": 0, "process_group": ["0", "default_pg"], "collective_seq_id": seq,
            "p2p_seq_id": 0, "profiling_name": "nccl:all_reduce", "input_sizes": [[1024]],
            "input_dtypes": ["BFloat16"], "output_sizes": [[1024]], "output_dtypes": ["BFloat16"], "state": state}


def _pk(doc):
    return pickle.dumps(doc, protocol=2)


def _js(doc):
    return json.dumps(doc).encode()


def _raises(data, path, rank=None):
    with pytest.raises(TelemetryError) as ei:
        F.read_dump(data, path, rank) if path is not None else F.read_dump(data)
    return str(ei.value)


# ------------------------------------------------------------------ _fr_doc: what is refused, naming the path


def test_a_pickle_naming_a_class_is_refused_with_the_path_and_200_characters():
    mod = "m" * 300
    data = b"\x80\x02c" + mod.encode() + b"\nX\n."
    msg = _raises(data, "/dumps/trace_3")
    want = ("the dump asks for " + mod + ".X; a Flight Recorder dump holds plain data")[:200]
    assert msg == f"/dumps/trace_3: not a Flight Recorder dump (pickle: {want})"
    assert len(want) == 200


def test_a_truncated_pickle_is_refused_naming_pickle_and_the_path():
    data = _pk({"version": "2.10", "entries": [_entry()]})[:-7]
    msg = _raises(data, "run/trace_1")
    assert msg.startswith("run/trace_1: not a Flight Recorder dump (pickle: ")


def test_bad_json_is_refused_naming_the_path():
    msg = _raises(b'{"version": "2.10", ', "run/trace_1.json")
    assert msg.startswith("run/trace_1.json: not a Flight Recorder dump (not JSON: ")


def test_default_path_is_dump_in_angle_brackets():
    msg = _raises(b'{"version": "2.10"}', None)
    assert msg == "<dump>: not a Flight Recorder dump (no version with entries or pg_config)"
    assert F.read_dump(_pk({"version": "2.10", "entries": []})).path == "<dump>"


@pytest.mark.parametrize("doc", [{"version": "2.10"}, {"version": "2.10", "pg_status": {"0": {}}},
                                 {"version": "2.10", "nccl_version": "2.21.5"}, {"entries": []}])
@pytest.mark.parametrize("enc", [_pk, _js])
def test_no_version_with_entries_or_pg_config_is_refused(doc, enc):
    msg = _raises(enc(doc), "x/trace_2")
    assert msg == "x/trace_2: not a Flight Recorder dump (no version with entries or pg_config)"


def test_a_json_list_is_read_as_json_and_refused_as_not_a_dump():
    # it went to the unpickler until 2026-12-05, which named a pickle's load key for a JSON file
    msg = _raises(b'  [{"version": "2.10", "entries": []}]', "x/trace_2.json")
    assert msg == "x/trace_2.json: not a Flight Recorder dump (no version with entries or pg_config)"
    msg = _raises(b'[{"version": "2.10", ', "x/trace_2.json")
    assert msg.startswith("x/trace_2.json: not a Flight Recorder dump (not JSON: ")


def test_a_json_error_past_the_decoder_is_named_json():
    # an integer of 5000 digits passes the decoder's syntax and fails int(): a ValueError, not a
    # JSONDecodeError, so it reaches the last handler, which must still say JSON, not pickle
    msg = _raises(b'{"version": ' + b"1" * 5000 + b"}", "x/trace_2.json")
    assert msg.startswith("x/trace_2.json: not a Flight Recorder dump (JSON: Exceeds the limit (4300 digits) ")
    msg = _raises(b'[' + b"1" * 5000 + b"]", "x/trace_2.json")
    assert msg.startswith("x/trace_2.json: not a Flight Recorder dump (JSON: Exceeds the limit (4300 digits) ")


def test_a_pickled_list_is_not_a_dump():
    msg = _raises(_pk([{"version": "2.10", "entries": []}]), "x/trace_2")
    assert msg == "x/trace_2: not a Flight Recorder dump (no version with entries or pg_config)"


def test_version_with_only_pg_config_or_only_entries_is_read():
    d = F.read_dump(_pk({"version": "2.3", "pg_config": {"0": {"name": "0", "desc": "default_pg",
                                                                    "ranks": "[0, 1]"}}}), "trace_0")
    assert (d.version, d.groups, d.entries) == ("2.3", {"0": ((0, 1), "default_pg")}, [])
    d = F.read_dump(_js({"version": "2.7", "entries": [_entry(rid=4, seq=9)]}), "trace_1.json")
    assert d.version == "2.7" and [(e.record_id, e.collective_seq, e.op) for e in d.entries] == [(4, 9, "all_reduce")]


# ------------------------------------------------------------------ the rank: from the name, unless given


def test_rank_given_wins_over_the_name():
    data = _pk({"version": "2.10", "entries": [_entry()]})
    assert F.read_dump(data, "dumps/trace_3", rank=5).rank == 5
    assert F.read_dump(data, "dumps/trace_3", rank=0).rank == 0
    assert F.read_dump(data, "dumps/trace_3").rank == 3


@pytest.mark.parametrize("name", ["trace.json", "nccl_trace_rank_", "dumps12/trace", "<dump>"])
def test_a_name_without_a_trailing_number_gives_no_rank(name):
    assert F.read_dump(_pk({"version": "2.10", "entries": []}), name).rank is None


# ------------------------------------------------------------------ pg_config


def test_group_name_and_desc_from_the_config_not_the_key():
    pgs = {"7": {"name": "tp:0", "desc": "tp", "ranks": [0, 1, 2, 3]},
           "8": {"ranks": "[4, 5]"},  # no name: the key; no desc: ""
           "9": {"name": "dp:1", "ranks": [1, 5], "": "not the desc"}}
    d = F.read_dump(_pk({"version": "2.10", "pg_config": pgs}), "trace_1")
    assert d.groups == {"tp:0": ((0, 1, 2, 3), "tp"), "8": ((4, 5), ""), "dp:1": ((1, 5), "")}


def test_bare_ranks_list_or_string_keyed_by_name():
    pgs = {"pp": [2, 3], "ep": "[0, 6]", "none": 3.5}
    d = F.read_dump(_js({"version": "2.9", "pg_config": pgs}), "trace_2.json")
    assert d.groups == {"pp": ((2, 3), ""), "ep": ((0, 6), ""), "none": (None, "")}


def test_pg_config_not_a_mapping_is_refused_with_the_path():
    for bad in ([["0", [0, 1]]], "0: [0, 1]", 7):
        msg = _raises(_pk({"version": "2.10", "pg_config": bad, "entries": []}), "d/trace_0")
        assert msg == "d/trace_0 pg_config: not a mapping of process groups"


def test_too_many_groups_is_refused_and_the_limit_itself_read():
    pgs = {f"g{i}": None for i in range(MAX_GROUPS + 1)}
    msg = _raises(_pk({"version": "2.10", "pg_config": pgs}), "d/trace_0")
    assert msg == "d/trace_0 pg_config: 100001 process groups (over 100000)"
    del pgs["g0"]
    d = F.read_dump(_pk({"version": "2.10", "pg_config": pgs}), "d/trace_0")
    assert len(d.groups) == MAX_GROUPS and d.groups["g1"] == (None, "") and d.groups["g100000"] == (None, "")


# ------------------------------------------------------------------ _ranks_of at its limits


def _ranks(spec):
    d = F.read_dump(_pk({"version": "2.10", "pg_config": {"g": {"name": "g", "ranks": spec}}}), "trace_0")
    return d.groups["g"][0]


def test_ranks_list_values_kept_nones_and_bools_dropped():
    assert _ranks([0, None, 3, True, "5", 2.0]) == (0, 3, 5, 2)
    assert _ranks([None, False]) is None
    assert F._ranks_of([]) is None and F._ranks_of("[]") is None


@pytest.mark.parametrize("spec", [[0, MAX_RANKS], [-1, 0], "[0, 1048576]", [MAX_RANKS - 1, MAX_RANKS + 5]])
def test_a_rank_past_the_limit_drops_the_group_ranks(spec):
    assert _ranks(spec) is None


def test_the_last_rank_below_the_limit_is_kept():
    assert _ranks("[0, 1048575]") == (0, MAX_RANKS - 1)


def test_list_read_up_to_max_ranks_plus_one_items():
    assert _ranks([None] * (MAX_RANKS - 1) + [5]) == (5,)  # index MAX_RANKS - 1: read
    assert _ranks([None] * MAX_RANKS + [6]) == (6,)  # index MAX_RANKS: read
    assert _ranks([None] * (MAX_RANKS + 1) + [7]) is None  # index MAX_RANKS + 1: past what is read


def test_exactly_max_ranks_kept_one_more_dropped():
    assert F._ranks_of([0] * MAX_RANKS) == [0] * MAX_RANKS
    assert F._ranks_of([1] * (MAX_RANKS + 1)) is None


def test_ranks_string_read_up_to_16_characters_a_rank():
    assert F._ranks_of(" " * (16 * MAX_RANKS - 1) + "5") == [5]
    assert F._ranks_of(" " * (16 * MAX_RANKS) + "5") is None


# ------------------------------------------------------------------ entries


@pytest.mark.parametrize("bad", [{"0": _entry()}, "entries", 5])
def test_entries_not_a_list_is_refused_with_the_path(bad):
    msg = _raises(_pk({"version": "2.10", "entries": bad}), "d/trace_4")
    assert msg == "d/trace_4 entries: not a list"


def test_too_many_entries_is_refused_before_any_is_read():
    msg = _raises(_pk({"version": "2.10", "entries": [None] * (MAX_ENTRIES + 1)}), "d/trace_4")
    assert msg == ("d/trace_4 entries: 200001 entries (over 200000; torch's ring holds TORCH_FR_BUFFER_SIZE, "
                   "2000 by default)")
    # exactly the limit: each entry is read (and the first, not an entry, is refused)
    msg = _raises(_pk({"version": "2.10", "entries": [None] * MAX_ENTRIES}), "d/trace_4")
    assert msg == "d/trace_4 entries[0]: not an entry"


def test_a_bad_entry_names_the_path():
    msg = _raises(_pk({"version": "2.10", "entries": [_entry(), 5]}), "d/trace_4")
    assert msg == "d/trace_4 entries[1]: not an entry"


# ------------------------------------------------------------------ pg_status


def test_pg_status_counters_read_by_key():
    st = {"0": {"last_enqueued_collective": 12, "last_started_collective": "11",
                "last_completed_collective": 10.0},
          "1": {"last_started_collective": True}, "2": [1, 2]}
    d = F.read_dump(_pk({"version": "2.10", "entries": [_entry()], "pg_status": st}), "trace_0")
    assert d.status == {"0": {"enqueued": 12, "started": 11, "completed": 10},
                        "1": {"enqueued": None, "started": None, "completed": None}}


@pytest.mark.parametrize("raw", [[{"last_started_collective": 1}], "0", 5, ("a",)])
def test_pg_status_not_a_mapping_is_ignored(raw):
    d = F.read_dump(_pk({"version": "2.10", "entries": [_entry()], "pg_status": raw}), "trace_0")
    assert d.status == {} and len(d.entries) == 1


def test_pg_status_read_up_to_max_groups():
    raw = {str(i): None for i in range(MAX_GROUPS - 1)}
    raw["x"] = {"last_enqueued_collective": 3, "last_started_collective": 2, "last_completed_collective": 1}
    d = F.read_dump(_pk({"version": "2.10", "entries": [], "pg_status": raw}), "trace_0")
    assert d.status == {"x": {"enqueued": 3, "started": 2, "completed": 1}}
    raw["y"] = None  # one over: pg_status is not read at all
    d = F.read_dump(_pk({"version": "2.10", "entries": [], "pg_status": raw}), "trace_0")
    assert d.status == {}


# ------------------------------------------------------------------ hostile bytes, and the helpers' units


@pytest.mark.parametrize("data, why", [
    (b"", "pickle: Ran out of input"),
    (b'  {"version": 1', "not JSON: Expecting ',' delimiter"),
    (b'{"version": "\xff"}', "not JSON: 'utf-8' codec can't decode byte 0xff in position 13: invalid start byte"),
    (b"[" * 1000, "nested too deep"),  # read as JSON since 2026-12-05, not sent to the unpickler
    (b" [1,", "not JSON: Expecting value"),
    (b'{"a":' * 100_000, "nested too deep"),
    (b"\x80\x02}q\x00h\x01.", "pickle: Memo value not found at index 1"),
])
def test_hostile_bytes_are_one_error_naming_the_path(data, why):
    assert _raises(data, "h/trace_9") == f"h/trace_9: not a Flight Recorder dump ({why})"


def _S(s):
    b = s.encode()
    return b"X" + len(b).to_bytes(4, "little") + b


def test_torch_jit_pickle_helpers_become_plain_lists_any_other_is_refused():
    data = (b"\x80\x02}(" + _S("version") + _S("2.10") + _S("pg_config") + b"}" + _S("g")
            + b"ctorch.jit._pickle\nbuild_intlist\n](K\x03K\x04e\x85Rs" + _S("h")
            + b"ctorch.jit._pickle\nrestore_type_tag\n](K\x05K\x06e" + _S("List[int]") + b"\x86Rs"
            + _S("entries") + b"]u.")
    d = F.read_dump(data, "trace_1")
    assert (d.rank, d.version, d.groups, d.entries) == (1, "2.10", {"g": ((3, 4), ""), "h": ((5, 6), "")}, [])
    msg = _raises(data.replace(b"build_intlist", b"build_intlisx"), "trace_1")
    assert msg == ("trace_1: not a Flight Recorder dump (pickle: the dump asks for torch.jit._pickle.build_intlisx; "
                   "a Flight Recorder dump holds plain data)")


@pytest.mark.parametrize("x, want", [
    (None, None), (True, None), (False, None), (0, 0), (-7, -7), (" 12 ", 12), ("-5", -5), ("1.5", None),
    ("9223372036854775807", 2 ** 63 - 1), ("9999999999999999999", None), ("12345678901234567890", None),
    (3.0, 3), (2.5, None), (float("nan"), None), (float("inf"), None), (2.0 ** 53, None),
    (2.0 ** 53 - 1, 2 ** 53 - 1), (-2 ** 63, -2 ** 63), (-2 ** 63 - 1, None), (2 ** 63, None), ([1], None)])
def test_opt_int_in_int64_units(x, want):
    got = F._opt_int(x)
    assert got == want and (want is None or type(got) is int)


@pytest.mark.parametrize("x, want", [
    ("tp:0", "tp:0"), (5, "5"), (2.5, "2.5"), (True, ""), (None, ""), ([1], ""), ("\ud800x", "?x"),
    ("a" * 600, "a" * 512)])
def test_text_of_a_name(x, want):
    assert F._text(x) == want
