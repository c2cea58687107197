"""Surviving mutants of flightrec._entry (one ring entry of a dump -> FREntry): every
field read from its own key, its defaults when the key is absent, and the exact
errors (the path and the entry index they name) when a field is bad."""

import pickle

import pytest

from linkroof.readers import flightrec as F
from linkroof.readers.telemetry import TelemetryError

STATES = "['completed', 'scheduled', 'started']"


def _e(**kw):
    """A minimal entry: only the keys _entry needs (record_id, profiling_name, state)."""
    e = {"record_id": 7, "profiling_name": "nccl:all_reduce", "state": "completed"}
    e.update(kw)
    return e


def _full(**kw):
    e = _e(process_group=["tp:0", "tp"], pg_id=3, op_id=11, collective_seq_id=41, p2p_seq_id=2,
           input_sizes=[[2, 3]], input_dtypes=["Float"], output_sizes=[[4, 3]], output_dtypes=["BFloat16"],
           duration_ms=1.5, time_discovered_started_ns=1000, time_discovered_completed_ns=5000)
    e.update(kw)
    return e


def _raises(e, i=3, path="dumps/trace_5"):
    with pytest.raises(TelemetryError) as ex:
        F._entry(e, i, path)
    return str(ex.value)


# ------------------------------------------------------------------ every field, from its key


def test_a_full_entry_reads_every_field_from_its_own_key():
    r = F._entry(_full(), 0, "trace_0")
    assert r.record_id == 7 and r.pg_id == 3 and r.op_id == 11
    assert (r.group, r.desc) == ("tp:0", "tp")
    assert (r.collective_seq, r.p2p_seq) == (41, 2)
    assert (r.profiling_name, r.op, r.is_p2p, r.peer) == ("nccl:all_reduce", "all_reduce", False, None)
    assert r.input_sizes == ((2, 3),) and r.input_dtypes == ("Float",)
    assert r.output_sizes == ((4, 3),) and r.output_dtypes == ("BFloat16",)
    assert r.size_bytes == 24  # max(6 fp32 = 24, 12 bf16 = 24)
    assert r.dtype == "fp32"  # the input's type first
    assert (r.state, r.duration_ms, r.started_ns, r.completed_ns) == ("completed", 1.5, 1000, 5000)
    assert isinstance(r.duration_ms, float)


def test_completed_ns_read_on_its_own():
    r = F._entry(_e(time_discovered_completed_ns=123456789), 0, "p")
    assert r.completed_ns == 123456789 and r.started_ns is None


def test_op_id_and_p2p_seq_read():
    r = F._entry(_e(op_id=0x7FFF, p2p_seq_id=9), 0, "p")
    assert r.op_id == 32767 and r.p2p_seq == 9
    assert F._entry(_e(), 0, "p").op_id is None


def test_a_group_without_a_desc_has_an_empty_desc():
    r = F._entry(_e(process_group=["only_name"]), 0, "p")
    assert (r.group, r.desc) == ("only_name", "")
    r = F._entry(_e(process_group="bare"), 0, "p")
    assert (r.group, r.desc) == ("bare", "")
    r = F._entry(_e(), 0, "p")
    assert (r.group, r.desc) == ("", "")


def test_input_only_entry_keeps_the_input_type_and_empty_outputs():
    r = F._entry(_e(input_sizes=[[8]], input_dtypes=["Half"]), 0, "p")
    assert r.input_sizes == ((8,),) and r.input_dtypes == ("Half",)
    assert r.output_sizes == () and r.output_dtypes == ()
    assert r.size_bytes == 16 and r.dtype == "fp16"


def test_output_only_entry_keeps_the_output_type_and_empty_inputs():
    r = F._entry(_e(output_sizes=[[5, 2]], output_dtypes=["Float"]), 0, "p")
    assert r.output_sizes == ((5, 2),) and r.output_dtypes == ("Float",)
    assert r.input_sizes == () and r.input_dtypes == ()
    assert r.size_bytes == 40 and r.dtype == "fp32"


def test_sizes_without_dtypes_are_kept_without_bytes():
    """An old dump may give shapes and no data types at all: shapes kept, no bytes known."""
    r = F._entry(_e(input_sizes=[[3]], output_sizes=[[6, 1]]), 0, "p")
    assert r.input_sizes == ((3,),) and r.input_dtypes == ()
    assert r.output_sizes == ((6, 1),) and r.output_dtypes == ()
    assert r.size_bytes is None and r.dtype is None


def test_dtypes_without_sizes_are_refused_both_sides():
    msg = _raises(_e(input_dtypes=["Float"]))
    assert msg == "dumps/trace_5 entries[3]: missing or bad field (0 shapes for 1 data types)"
    msg = _raises(_e(output_dtypes=["Float"]))
    assert msg == "dumps/trace_5 entries[3]: missing or bad field (0 shapes for 1 data types)"


# ------------------------------------------------------------------ defaults of absent keys


def test_absent_keys_take_their_defaults():
    r = F._entry(_e(), 0, "p")
    assert (r.collective_seq, r.p2p_seq) == (0, 0)
    assert r.input_sizes == () and r.input_dtypes == () and r.output_sizes == () and r.output_dtypes == ()
    assert r.size_bytes is None and r.dtype is None
    assert r.duration_ms is None and r.started_ns is None and r.completed_ns is None
    assert r.pg_id is None and r.op_id is None


def test_old_seq_id_stands_in_for_collective_seq_id():
    r = F._entry(_e(seq_id=5), 0, "p")
    assert r.collective_seq == 5 and r.seq == 5
    r = F._entry(_e(seq_id=5, collective_seq_id=6), 0, "p")
    assert r.collective_seq == 6


def test_bad_seq_id_is_named_as_collective_seq_id():
    msg = _raises(_e(seq_id="x"))
    assert msg == "dumps/trace_5 entries[3]: missing or bad field (collective_seq_id 'x' is not an integer)"


def test_a_missing_state_is_the_empty_state_and_refused():
    e = _e()
    del e["state"]
    msg = _raises(e)
    assert msg == f"dumps/trace_5 entries[3]: state '' is not one of {STATES}"


def test_a_bad_state_names_the_path_and_the_entry():
    msg = _raises(_e(state="done"), i=12, path="x/trace_2.json")
    assert msg == f"x/trace_2.json entries[12]: state 'done' is not one of {STATES}"
    msg = _raises(_e(state=None), i=0, path="t")
    assert msg == f"t entries[0]: state None is not one of {STATES}"


# ------------------------------------------------------------------ the name: op, is_p2p, peer


def test_only_the_first_colon_splits_the_backend_off():
    r = F._entry(_e(profiling_name="nccl:all_reduce:x"), 0, "p")
    assert r.op == "all_reduce:x" and r.profiling_name == "nccl:all_reduce:x"
    r = F._entry(_e(profiling_name="a:b:c:d"), 0, "p")
    assert r.op == "b:c:d"


def test_an_empty_name_gives_an_empty_op():
    for name in ("nccl:", "", "nccl:   "):
        r = F._entry(_e(profiling_name=name), 0, "p")
        assert r.op == "" and r.is_p2p is False and r.peer is None


def test_send_and_recv_names_give_op_peer_and_p2p():
    r = F._entry(_e(profiling_name="nccl:send 0->1"), 0, "p")
    assert (r.op, r.is_p2p, r.peer) == ("send", True, 1)
    r = F._entry(_e(profiling_name="nccl:recv 3<-2"), 0, "p")
    assert (r.op, r.is_p2p, r.peer) == ("recv", True, 2)
    r = F._entry(_e(profiling_name="nccl:recv"), 0, "p")  # no peer in the name
    assert (r.op, r.is_p2p, r.peer) == ("recv", True, None)


def test_a_non_p2p_name_has_no_peer():
    r = F._entry(_e(profiling_name="nccl:all_gather"), 0, "p")
    assert r.peer is None and r.is_p2p is False


def test_is_p2p_key_wins_over_the_name():
    r = F._entry(_e(profiling_name="nccl:all_reduce", is_p2p=True), 0, "p")
    assert r.is_p2p is True and r.seq == 0
    r = F._entry(_e(profiling_name="nccl:all_reduce", is_p2p=True, p2p_seq_id=4, collective_seq_id=9), 0, "p")
    assert r.seq == 4
    r = F._entry(_e(profiling_name="nccl:send 0->1", is_p2p=False), 0, "p")
    assert r.is_p2p is False and r.peer == 1


@pytest.mark.parametrize("bad, shown", [("yes", "'yes'"), (1, "1"), (0, "0")])
def test_a_non_bool_is_p2p_is_refused_with_its_value(bad, shown):
    msg = _raises(_e(is_p2p=bad))
    assert msg == f"dumps/trace_5 entries[3]: missing or bad field (is_p2p {shown})"


# ------------------------------------------------------------------ p2p_seq_id / duration


def test_bad_p2p_seq_id_is_refused_and_absent_is_zero():
    msg = _raises(_e(p2p_seq_id=None))
    assert msg == "dumps/trace_5 entries[3]: missing or bad field (p2p_seq_id None is not an integer)"
    assert F._entry(_e(), 0, "p").p2p_seq == 0


def test_a_zero_duration_is_a_time():
    r = F._entry(_e(duration_ms=0), 0, "p")
    assert r.duration_ms == 0.0 and isinstance(r.duration_ms, float)
    r = F._entry(_e(duration_ms=-0.0), 0, "p")
    assert r.duration_ms == 0.0


@pytest.mark.parametrize("bad, shown", [(-1, "-1"), (float("nan"), "nan"), ("3", "'3'"), (True, "True")])
def test_a_bad_duration_names_the_path_the_entry_and_the_value(bad, shown):
    msg = _raises(_e(duration_ms=bad), i=4, path="run/trace_9.pkl")
    assert msg == f"run/trace_9.pkl entries[4]: duration_ms {shown} is not a time"


# ------------------------------------------------------------------ the catch-all error


def test_a_missing_record_id_names_the_path_and_the_entry():
    e = _e()
    del e["record_id"]
    msg = _raises(e, i=2, path="job/trace_1")
    assert msg == "job/trace_1 entries[2]: missing or bad field ('record_id')"


def test_not_a_dict_names_the_entry():
    assert _raises([1, 2], i=6) == "dumps/trace_5 entries[6]: not an entry"


class _Loud(dict):
    """A dict whose lookups of one key fail with a long message (the catch-all cuts it)."""

    def get(self, key, *default):
        if key == "duration_ms":
            raise ValueError("a" * 150 + "b" * 100)
        return super().get(key, *default)


def test_the_error_text_is_cut_at_200_characters():
    msg = _raises(_Loud(_e()), i=1, path="p")
    assert msg == "p entries[1]: missing or bad field (" + "a" * 150 + "b" * 50 + ")"


def test_through_read_dump_the_entry_errors_name_the_file():
    doc = {"version": "2.10", "pg_config": {}, "entries": [_e(), _e(is_p2p="no")]}
    with pytest.raises(TelemetryError) as ex:
        F.read_dump(pickle.dumps(doc, protocol=2), "d/trace_3")
    assert str(ex.value) == "d/trace_3 entries[1]: missing or bad field (is_p2p 'no')"
