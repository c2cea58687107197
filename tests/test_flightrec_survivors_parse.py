"""Survivors of mutmut in the Flight Recorder reader's front door: parse_flight_recorder,
_entry, _SafeUnpickler.find_class, _err and _fr_bytes. Each dump is built by hand (a
dict pickled or dumped as JSON), each expected value worked out by hand."""

import io
import json
import pickle

import pytest

from linkroof.readers import flightrec as F
from linkroof.readers.telemetry import TelemetryError


def _e(**kw):
    """One ring entry of group 'tp' (pg_id 0): a completed bf16 all-reduce of 1024 elements."""
    e = {"record_id": 0, "pg_id": 0, "process_group": ("tp", "tp_desc"), "collective_seq_id": 1, "p2p_seq_id": 0,
         "op_id": 1, "profiling_name": "nccl:all_reduce", "input_sizes": [[1024]], "input_dtypes": ["BFloat16"],
         "output_sizes": [[1024]], "output_dtypes": ["BFloat16"], "state": "completed",
         "time_discovered_started_ns": 2_000_000, "time_discovered_completed_ns": 3_000_000, "is_p2p": False}
    e.update(kw)
    return e


def _doc(*entries, **kw):
    doc = {"version": "2.10", "comm_lib_version": "2.21.5",
           "pg_config": {"0": {"name": "tp", "desc": "tp_desc", "ranks": "[0, 1, 2, 3]"}},
           "pg_status": {"0": {"last_enqueued_collective": 1, "last_started_collective": 1,
                               "last_completed_collective": 1}},
           "entries": list(entries)}
    doc.update(kw)
    return doc


def _pk(doc):
    return pickle.dumps(doc, protocol=2)


def _read(*entries, **kw):
    return F.read_dump(_pk(_doc(*entries, **kw)), "trace_0")


def _refused(data, path="trace_0"):
    with pytest.raises(TelemetryError) as ex:
        F.read_dump(data, path)
    return str(ex.value)


# ------------------------------------------------------------------ pickles with torch.jit._pickle's helpers


def _p0(obj):
    """obj pickled in protocol 0 (text) without a memo: pieces can be spliced."""
    buf = io.BytesIO()
    p = pickle.Pickler(buf, protocol=0)
    p.fast = True
    p.dump(obj)
    return buf.getvalue()


def _with_global(doc, marker, module, name, args):
    """doc pickled (protocol 0, text) with the string `marker` replaced by a call of
    module.name(*args): args are pickle-0 opcodes, each pushing one argument."""
    data = _p0(doc)
    old = b"V" + marker.encode() + b"\n"
    assert data.count(old) == 1
    call = b"c" + module.encode() + b"\n" + name.encode() + b"\n(" + b"".join(args) + b"tR"
    return data.replace(old, call)


INTLIST_1024 = b"(lI1024\na"  # a list [1024]


def test_build_intlist_of_torch_jit_pickle_is_a_plain_list():
    """The writer's shape [1024] as torch.jit._pickle.build_intlist([1024]): read as the list."""
    doc = _doc(_e(input_sizes=["SHAPE"]))
    d = F.read_dump(_with_global(doc, "SHAPE", "torch.jit._pickle", "build_intlist", [INTLIST_1024]), "trace_0")
    e = d.entries[0]
    assert e.input_sizes == ((1024,),)
    assert e.size_bytes == 2048 and e.dtype == "bf16"


def test_restore_type_tag_of_torch_jit_pickle_gives_its_value():
    """torch.jit._pickle.restore_type_tag(value, type): the value, here a whole entry."""
    doc = _doc("ENTRY")
    entry = _p0(_e(record_id=7, state="started"))
    assert entry.endswith(b".")
    entry = entry[:-1]
    data = _with_global(doc, "ENTRY", "torch.jit._pickle", "restore_type_tag", [entry, b"VDict[str, Any]\n"])
    d = F.read_dump(data, "trace_0")
    assert len(d.entries) == 1
    assert (d.entries[0].record_id, d.entries[0].state, d.entries[0].group) == (7, "started", "tp")


@pytest.mark.parametrize("module, name", [("os", "build_intlist"), ("builtins", "restore_type_tag"),
                                          ("torch.jit._pickle", "system"), ("torch.jit._pickle", "eval"),
                                          ("os", "system")])
def test_any_other_class_is_refused(module, name):
    doc = _doc(_e(input_sizes=["SHAPE"]))
    data = _with_global(doc, "SHAPE", module, name, [INTLIST_1024])
    assert _refused(data) == (f"trace_0: not a Flight Recorder dump (pickle: the dump asks for {module}.{name}; "
                              "a Flight Recorder dump holds plain data)")


def test_a_refused_pickle_that_would_run_code_runs_nothing(tmp_path):
    """os.system through restore_type_tag's shape (two arguments) is refused, never called."""
    flag = tmp_path / "ran"
    doc = _doc("X")
    data = _with_global(doc, "X", "os", "restore_type_tag", [f"Vtouch {flag}\n".encode(), b"VDict\n"])
    assert "the dump asks for os.restore_type_tag" in _refused(data)
    assert not flag.exists()


# ------------------------------------------------------------------ errors name the file


def test_not_an_entry_names_the_file_and_entry():
    assert _refused(_pk(_doc(_e(), 5)), "nccl_trace_rank_3") == "nccl_trace_rank_3 entries[1]: not an entry"


def test_profiling_name_not_a_string():
    assert _refused(_pk(_doc(_e(profiling_name=5)))) == (
        "trace_0 entries[0]: missing or bad field (profiling_name 5)")


# ------------------------------------------------------------------ _fr_bytes


def test_dtypes_not_a_list_is_refused_with_its_reason():
    for bad in ("BFloat16", {"BFloat16": 1}, None):
        assert _refused(_pk(_doc(_e(input_dtypes=bad)))) == (
            "trace_0 entries[0]: missing or bad field (sizes and dtypes must be lists)")
    assert _refused(_pk(_doc(_e(output_sizes={"a": 1})))) == (
        "trace_0 entries[0]: missing or bad field (sizes and dtypes must be lists)")


def test_4096_tensors_read_4097_refused():
    ok = _read(_e(input_sizes=[[1]] * 4096, input_dtypes=["Float"] * 4096, output_sizes=[], output_dtypes=[]))
    assert ok.entries[0].size_bytes == 4096 * 4 and ok.entries[0].dtype == "fp32"
    assert _refused(_pk(_doc(_e(input_sizes=[[1]] * 4097, input_dtypes=["Float"] * 4097)))) == (
        "trace_0 entries[0]: missing or bad field (4097 tensors in one call)")


def test_bytes_sum_over_the_tensors():
    """[1024] + [512] floats in, [3] bf16 out: 6144 B in, 6 B out; the larger, 6144; two dtypes
    in the call, the input's fp32 named (the output's bf16 only where the input has none)."""
    d = _read(_e(input_sizes=[[1024], [512]], input_dtypes=["Float", "Float"], output_sizes=[[3]],
                 output_dtypes=["BFloat16"]))
    assert d.entries[0].size_bytes == 6144 and d.entries[0].dtype == "fp32"
    d = _read(_e(input_sizes=[[2, 8], [4]], input_dtypes=["Float", "BFloat16"], output_sizes=[], output_dtypes=[]))
    assert d.entries[0].size_bytes == 2 * 8 * 4 + 4 * 2 and d.entries[0].dtype is None


# ------------------------------------------------------------------ _entry: the process group


def test_no_process_group_is_the_empty_name_and_desc():
    for pg in (None, "", [], ()):
        e = _read(_e(process_group=pg)).entries[0]
        assert (e.group, e.desc) == ("", "")
    e = _read({k: v for k, v in _e().items() if k != "process_group"}).entries[0]
    assert (e.group, e.desc) == ("", "")


def test_process_group_pair_single_and_string():
    assert (lambda e: (e.group, e.desc))(_read(_e(process_group=("tp", "tensor parallel"))).entries[0]) == (
        "tp", "tensor parallel")
    assert (lambda e: (e.group, e.desc))(_read(_e(process_group=["tp", "x", "y"])).entries[0]) == ("tp", "x")
    assert (lambda e: (e.group, e.desc))(_read(_e(process_group=["tp"])).entries[0]) == ("tp", "")
    assert (lambda e: (e.group, e.desc))(_read(_e(process_group="tp")).entries[0]) == ("tp", "")
    assert (lambda e: (e.group, e.desc))(_read(_e(process_group=7)).entries[0]) == ("7", "")


def test_profiling_name_without_backend_prefix():
    e = _read(_e(profiling_name="all_reduce")).entries[0]
    assert (e.op, e.profiling_name, e.is_p2p, e.peer) == ("all_reduce", "all_reduce", False, None)
    e = _read(_e(profiling_name="send 0->1", is_p2p=None, p2p_seq_id=3)).entries[0]
    assert (e.op, e.is_p2p, e.peer, e.seq) == ("send", True, 1, 3)


# ------------------------------------------------------------------ parse_flight_recorder


def test_default_path_and_rank():
    t = F.parse_flight_recorder(_pk(_doc(_e())))
    assert t.path == "<dump>" and t.dump.path == "<dump>" and t.dump.rank is None
    assert t.calls[0].rank is None
    with pytest.raises(TelemetryError) as ex:
        F.parse_flight_recorder(_pk(_doc(5)))
    assert str(ex.value) == "<dump> entries[0]: not an entry"


def test_given_rank_wins_over_the_file_name():
    t = F.parse_flight_recorder(_pk(_doc(_e())), "nccl_trace_rank_3", rank=5)
    assert t.dump.rank == 5 and t.calls[0].rank == 5 and t.progress[0]["rank"] == 5
    t = F.parse_flight_recorder(_pk(_doc(_e())), "nccl_trace_rank_3")
    assert t.dump.rank == 3 and t.calls[0].rank == 3


def test_a_known_collective_call_in_full():
    """A started all-reduce of 1024 bf16 in the 4-rank group 'tp', timed 2 ms, seen started at
    2 000 000 ns (2000 us)."""
    t = F.parse_flight_recorder(_pk(_doc(_e(state="started", duration_ms=2.0, time_discovered_completed_ns=None))),
                                "trace_0")
    c = t.calls[0]
    assert (c.source, c.rank, c.host, c.comm, c.seq, c.collective, c.dtype, c.size_bytes, c.group_size) == (
        "Flight Recorder", 0, "", "tp", 1, "all_reduce", "bf16", 2048, 4)
    assert c.time_s == pytest.approx(0.002) and c.recorded_busbw is None
    assert (c.timing, c.state, c.start_us, c.notes) == ("CUDA events (duration_ms)", "started", 2000.0, ())
    assert t.notes == ["Flight Recorder dump version 2.10, NCCL 2.21.5"]


def test_an_untimed_call_has_no_timing():
    t = F.parse_flight_recorder(_pk(_doc(_e(state="scheduled", time_discovered_started_ns=None))), "trace_0")
    c = t.calls[0]
    assert (c.time_s, c.timing, c.state, c.start_us, c.notes) == (None, "", "scheduled", None, ())
    assert t.notes == ["Flight Recorder dump version 2.10, NCCL 2.21.5",
                       "1 entries, none with duration_ms (TORCH_NCCL_ENABLE_TIMING was off): states and order only, "
                       "no bandwidth"]


def test_unknown_op_and_unknown_group_are_noted():
    t = F.parse_flight_recorder(_pk(_doc(_e(profiling_name="nccl:frobnicate", process_group=("ghost", "")))),
                                "trace_0")
    c = t.calls[0]
    assert (c.collective, c.comm, c.group_size) == (None, "ghost", None)
    assert c.notes == ("'nccl:frobnicate': not a collective linkroof knows",
                       "process group 'ghost' not in pg_config: group size unknown")


def test_an_empty_profiling_name_is_a_call_with_a_note():
    for name in ("", "   "):
        t = F.parse_flight_recorder(_pk(_doc(_e(profiling_name=name))), "trace_0")
        assert t.calls[0].collective is None
        assert t.calls[0].notes == (f"{name!r}: not a collective linkroof knows",)


def test_point_to_point_counts_two_ranks_in_a_bigger_group():
    send = _e(profiling_name="nccl:send 0->2", is_p2p=True, collective_seq_id=1, p2p_seq_id=4,
              input_sizes=[[256]], input_dtypes=["Float"], output_sizes=[], output_dtypes=[])
    t = F.parse_flight_recorder(_pk(_doc(send, _e(record_id=1))), "trace_0")
    assert [(c.collective, c.seq, c.group_size, c.size_bytes, c.dtype) for c in t.calls] == [
        ("sendrecv", 4, 2, 1024, "fp32"), ("all_reduce", 1, 4, 2048, "bf16")]


def test_one_timed_entry_is_enough_for_no_untimed_note():
    """Timed first, untimed last: some entry timed, so no note about TORCH_NCCL_ENABLE_TIMING."""
    doc = _doc(_e(duration_ms=1.5), _e(record_id=1, collective_seq_id=2))
    doc["pg_status"]["0"]["last_completed_collective"] = 2
    t = F.parse_flight_recorder(_pk(doc), "trace_0")
    assert [c.timing for c in t.calls] == ["CUDA events (duration_ms)", ""]
    assert t.notes == ["Flight Recorder dump version 2.10, NCCL 2.21.5"]


def test_progress_rows_exact():
    doc = _doc(_e())
    doc["pg_status"] = {"0": {"last_enqueued_collective": 1, "last_started_collective": 1,
                              "last_completed_collective": 1},
                        "9": {"last_enqueued_collective": "4", "last_started_collective": -1}}
    t = F.parse_flight_recorder(_pk(doc), "nccl_trace_rank_2")
    assert t.progress == [
        {"rank": 2, "pg_id": "0", "group": "tp", "last_enqueued_collective": 1, "last_started_collective": 1,
         "last_completed_collective": 1},
        {"rank": 2, "pg_id": "9", "group": None, "last_enqueued_collective": 4, "last_started_collective": -1,
         "last_completed_collective": None}]


def test_the_library_named_by_its_version():
    t = F.parse_flight_recorder(_pk(_doc(_e(), comm_lib_version="xccl 1.0")), "trace_0")
    assert t.notes[0] == "Flight Recorder dump version 2.10, library xccl 1.0"
    doc = _doc(_e())
    del doc["comm_lib_version"]
    assert F.parse_flight_recorder(_pk(doc), "trace_0").notes[0] == "Flight Recorder dump version 2.10"


def test_no_version_is_a_question_mark():
    for v in ("", None):
        t = F.parse_flight_recorder(_pk(_doc(_e(duration_ms=1.0), version=v)), "trace_0")
        assert t.notes == ["Flight Recorder dump version ?, NCCL 2.21.5"]


def test_an_empty_ring_notes_exactly():
    for data in (_pk(_doc()), json.dumps({"version": "2.10", "pg_config": {}}).encode()):
        t = F.parse_flight_recorder(data, "trace_1")
        assert t.calls == []
        assert t.notes[1:] == ["an empty ring: no entry recorded (a suspect when its groups hang)"]
