"""Hang diagnosis from PyTorch Flight Recorder dumps (issue 42, item 4): dumps written in
the writer's format for torch's dump versions 2.3 to 2.10 (tests/frdumps.py), each case
built so that torch's own analyzer (torch.distributed.flight_recorder, `torchfrtrace`)
answers wrong or not at all, and linkroof names the ranks that are behind, the group and
the call, whatever the order of the files."""

import itertools
import json
import pickle
import random

import pytest
from click.testing import CliRunner
from frdumps import Job, coll, recv, send, sixteen_rank_hang

from linkroof.readers import flightrec as F
from linkroof.readers import telemetry as T


def _diag(paths):
    return F.diagnose_hang([F.read_dump(p.read_bytes(), str(p)) for p in paths])


# ------------------------------------------------------------------ the 16-rank hang


@pytest.mark.parametrize("version, fmt", [("2.3", "pickle"), ("2.7", "json"), ("2.9", "pickle"), ("2.10", "json"),
                                          ("2.10", "pickle")])
def test_sixteen_ranks_two_behind_named_with_group_and_call(tmp_path, version, fmt):
    """Ranks 3 and 7 stop before tp all-reduce #41; rank 7's ring is empty. Every other
    rank waits, in 'tp:0' or (held by those) in its dp group. pg_status id "1" is 'tp:0'
    on ranks 0-7 and 'tp:1' on 8-15, whose counters run 20 ahead: compared by id, all of
    0-7 looked behind."""
    paths = sixteen_rank_hang().write(tmp_path, version=version, fmt=fmt, empty=lambda r: r == 7)
    d = _diag(paths)
    assert d.behind == (3, 7)
    tp = d.stuck[0]
    assert (tp.group, tp.kind, tp.op, tp.seq, tp.dtypes, tp.size_bytes) == ("tp:0", "collective", "all_reduce", 41,
                                                                          ("bf16",), 8 << 20)
    assert tp.behind == (3, 7) and tp.waiting == (0, 1, 2, 4, 5, 6)
    assert tp.evidence[7] == "empty ring" and tp.evidence[3].startswith("pg_status: last enqueued #40")
    assert tp.sentence().startswith("group 'tp:0' (tp): ranks 3,7 are behind at all_reduce #41 (bf16, 8 MiB); "
                                    "ranks 0-2,4-6 wait")
    # the dp groups of 3 and 7 name them too; the others' dp partners are held, not behind
    dp3 = next(s for s in d.stuck if s.group == "dp:3")
    assert dp3.behind == (3,) and dp3.waiting == (11,)
    dp0 = next(s for s in d.stuck if s.group == "dp:0")
    assert dp0.behind == () and dp0.held == (0,) and dp0.waiting == (8,)
    assert d.empty == (7,) and d.missing == ()


def test_sixteen_ranks_in_any_file_order(tmp_path):
    paths = sixteen_rank_hang().write(tmp_path, version="2.10", empty=lambda r: r == 7)
    dumps = [F.read_dump(p.read_bytes(), str(p)) for p in paths]
    first = F.diagnose_hang(dumps).to_dict()
    rng = random.Random(42)
    for _ in range(25):
        rng.shuffle(dumps)
        assert F.diagnose_hang(dumps).to_dict() == first


def test_four_ranks_every_permutation(tmp_path):
    job = Job({"0": ("default_pg", [0, 1, 2, 3]), "pair": ("pp", [1, 2])})
    job.add([0, 1, 2, 3], coll("0"), coll("0"))
    job.add([1], send("pair", 2))
    job.add([2], recv("pair", 1))
    job.add([0, 1, 3], coll("0", n=2048))  # rank 2 never reaches all_reduce #3
    paths = job.write(tmp_path)
    again = tmp_path / "copy_of_rank_3"  # the same dump twice: its warning the same in any order too
    again.write_bytes(paths[3].read_bytes())
    dumps = [F.read_dump(p.read_bytes(), str(p)) for p in paths + [again]]
    answers = {json.dumps(F.diagnose_hang(list(perm)).to_dict(), sort_keys=True)
               for perm in itertools.permutations(dumps)}
    assert len(answers) == 1
    d = F.diagnose_hang(dumps)
    assert d.behind == (2,) and d.stuck[0].waiting == (0, 1, 3) and d.stuck[0].seq == 3


def test_the_old_warning_named_every_rank_and_the_new_one_two(tmp_path):
    """Through analyze_telemetry (what `telemetry` prints): the hang's one sentence names
    ranks 3 and 7 only."""
    paths = sixteen_rank_hang().write(tmp_path, version="2.9", empty=lambda r: r == 7)
    tels = [T.read_telemetry(p) for p in paths]
    warnings = F._progress_warnings(tels)
    hang = [w for w in warnings if w.startswith("hang:")]
    assert hang[0].startswith("hang: group 'tp:0' (tp): ranks 3,7 are behind at all_reduce #41")
    assert all("ranks 0-" not in w.split(";")[0] for w in hang)


# ------------------------------------------------------------------ the version, and untimed entries


@pytest.mark.parametrize("version, key, note", [("2.3", None, "2.3"), ("2.7", "nccl_version", "2.7, NCCL 2.21.5"),
                                                ("2.9", "nccl_version", "2.9, NCCL 2.21.5"),
                                                ("2.10", "comm_lib_version", "2.10, NCCL 2.21.5")])
def test_version_read_from_the_key_each_version_writes(tmp_path, version, key, note):
    job = Job({"0": ("default_pg", [0, 1])}).add([0, 1], *[coll("0") for _ in range(300)])
    p = job.write(tmp_path, version=version)[0]
    doc = pickle.loads(p.read_bytes())
    assert (key in doc) if key else not ({"nccl_version", "comm_lib_version"} & set(doc))
    t = T.read_telemetry(p)
    assert t.notes[0] == f"Flight Recorder dump version {note}"
    assert "?" not in t.notes[0]
    assert "300 entries, none with duration_ms" in t.notes[1]  # untimed, not "no call recorded"


# ------------------------------------------------------------------ suspects never dropped


def test_a_rank_without_a_dump_is_a_suspect(tmp_path):
    job = Job({"0": ("default_pg", [0, 1, 2, 3])})
    job.add([0, 1, 2, 3], coll("0"), coll("0"))
    job.add([0, 1, 3], coll("0"))
    paths = job.write(tmp_path, ranks=[0, 1, 3])  # rank 2's dump never came
    d = _diag(paths)
    assert d.missing == (2,) and d.behind == (2,)
    assert d.stuck[0].evidence[2] == "no dump" and d.stuck[0].waiting == (0, 1, 3)


def test_a_missing_or_empty_rank_of_a_healthy_group_is_not_named(tmp_path):
    job = Job({"0": ("default_pg", [0, 1, 2, 3])}).add([0, 1, 2, 3], coll("0"), coll("0"))
    paths = job.write(tmp_path, ranks=[0, 1, 2], empty=lambda r: r == 1)
    d = _diag(paths)
    assert d.stuck == [] and d.behind == () and d.missing == (3,) and d.empty == (1,)


# ------------------------------------------------------------------ p2p against its peer only


def test_a_send_is_checked_against_its_peer_only(tmp_path):
    """torch's analyzer checks the send against the whole group and calls every bystander
    missing; the peer that never posted the receive is the one behind."""
    job = Job({"0": ("default_pg", [0, 1, 2, 3])})
    job.add([0, 1, 2, 3], coll("0", n=4096, dtype="Float"))
    job.add([0], send("0", 1, n=1 << 20))
    job.add([2], send("0", 3))
    job.add([3], recv("0", 2))
    d = _diag(job.write(tmp_path))
    (s,) = d.stuck
    assert (s.kind, s.op, s.behind, s.waiting, s.size_bytes) == ("p2p", "recv", (1,), (0,), 4 << 20)
    assert s.sentence().startswith("group '0' (default_pg): rank 1 never posted the matching recv (fp32, 4 MiB); "
                                   "rank 0 waits")
    assert 2 not in s.evidence and 3 not in s.evidence


# ------------------------------------------------------------------ where torch's analyzer fails


def test_entries_below_the_largest_first_record_id_still_count(tmp_path):
    """torch's align_trace_from_beginning drops every entry whose record_id is below the
    largest first record_id across ranks. record_id counts all of a rank's groups: ranks
    0-1 ran 3000 calls in 'dp' (ring of 2000: first record_id 1000+), ranks 2-3 hang in
    'tp' at record_id 6. torch's analyzer never sees 'tp'."""
    job = Job({"0": ("default_pg", [0, 1, 2, 3]), "dp": ("dp", [0, 1]), "tp": ("tp", [2, 3])})
    job.add([0, 1, 2, 3], coll("0"))
    job.add([0, 1], *[coll("dp", n=64) for _ in range(3000)])
    job.add([2, 3], *[coll("tp") for _ in range(5)])
    job.add([2], coll("tp"))
    paths = job.write(tmp_path, ring=2000)
    dumps = [F.read_dump(p.read_bytes(), str(p)) for p in paths]
    assert min(e.record_id for e in dumps[0].entries) > max(e.record_id for e in dumps[2].entries)
    d = F.diagnose_hang(dumps)
    assert d.behind == (3,) and d.stuck[0].group == "tp" and d.stuck[0].seq == 6 and d.stuck[0].waiting == (2,)


def test_pg_status_clears_a_rank_whose_ring_entry_is_stale(tmp_path):
    """torch's analyzer ignores pg_status: a ring entry still 'started' (the watchdog had
    not polled it) against 'completed' elsewhere is a state mismatch naming that rank.
    pg_status says rank 1 completed #2; the hang is #3, where rank 3 is behind."""
    job = Job({"0": ("default_pg", [0, 1, 2, 3])})
    job.add([0, 1, 2, 3], coll("0"), coll("0"))
    job.add([0, 1, 2], coll("0"))
    paths = job.write(tmp_path)
    doc = pickle.loads(paths[1].read_bytes())
    doc["entries"][1]["state"] = "started"  # #2 on rank 1: stale in the ring, completed in pg_status
    paths[1].write_bytes(pickle.dumps(doc, protocol=2))
    d = _diag(paths)
    assert d.behind == (3,) and d.stuck[0].seq == 3 and d.stuck[0].waiting == (0, 1, 2)


def test_a_ring_entry_newer_than_pg_status_counts(tmp_path):
    """The ring can run ahead of pg_status (the entry is recorded as the work is enqueued,
    the counter a moment later): ranks 0-2's rings hold all_reduce #3 while their counters
    still say #2; rank 3 never enqueued it."""
    job = Job({"0": ("default_pg", [0, 1, 2, 3])})
    job.add([0, 1, 2, 3], coll("0"), coll("0"))
    job.add([0, 1, 2], coll("0"))
    paths = job.write(tmp_path)
    for p in paths[:3]:
        doc = pickle.loads(p.read_bytes())
        doc["pg_status"]["0"]["last_enqueued_collective"] = 2
        p.write_bytes(pickle.dumps(doc, protocol=2))
    d = _diag(paths)
    assert d.behind == (3,) and d.stuck[0].seq == 3 and d.stuck[0].waiting == (0, 1, 2)


def test_no_mismatch_cap_hides_a_later_group(tmp_path):
    """torch's analyzer stops the whole analysis after 10 mismatches in one group; here
    'a' has 12 calls whose sizes differ across ranks (each one a mismatch) and the hang is
    in 'b'."""
    job = Job({"0": ("default_pg", [0, 1, 2, 3]), "a": ("a", [0, 1]), "b": ("b", [2, 3])})
    job.add([0], *[coll("a", n=100) for _ in range(12)])
    job.add([1], *[coll("a", n=200) for _ in range(12)])
    job.add([2, 3], coll("b"), coll("b"))
    job.add([3], coll("b"))
    d = _diag(job.write(tmp_path))
    assert d.behind == (2,) and d.stuck[0].group == "b" and d.stuck[0].seq == 3


def test_split_groups_sharing_a_name_stay_apart(tmp_path):
    """split_group gives several groups one name; torch keys them by name + ranks, and so
    does linkroof: ranks 0-1 and 2-3 are two groups named 'split'."""
    job = Job({"0": ("default_pg", [0, 1, 2, 3])})
    job.groups.update({"split": ("s", [0, 1])})
    job.add([0, 1], coll("split"), coll("split"), coll("split"))
    paths = job.write(tmp_path, ranks=[0, 1])
    job2 = Job({"0": ("default_pg", [0, 1, 2, 3]), "split": ("s", [2, 3])})
    job2.add([2, 3], coll("split"))
    job2.add([2], coll("split"))
    paths += job2.write(tmp_path, ranks=[2, 3])
    d = _diag(paths)
    assert d.behind == (3,) and d.stuck[0].group == "split@2,3" and d.stuck[0].seq == 2


def test_a_dump_without_is_p2p_reads_p2p_from_the_name(tmp_path):
    job = Job({"0": ("default_pg", [0, 1])}).add([0], send("0", 1))
    job.add([1], coll("0"))
    job.add([0], coll("0"))
    paths = job.write(tmp_path, version="2.3")
    for p in paths:
        doc = pickle.loads(p.read_bytes())
        for e in doc["entries"]:
            e.pop("is_p2p")
        p.write_bytes(pickle.dumps(doc, protocol=2))
    d = _diag(paths)  # rank 0 sends while rank 1 is in the all-reduce: each waits on the other
    assert {s.kind for s in d.stuck} == {"p2p", "collective"} and d.behind == (0, 1)
    assert next(s for s in d.stuck if s.kind == "p2p").behind == (1,)


# ------------------------------------------------------------------ duplicates


def test_the_same_dump_twice_and_one_rank_in_two_files_counted_once(tmp_path):
    job = Job({"0": ("default_pg", [0, 1, 2])}).add([0, 1, 2], coll("0"))
    job.add([0, 1], coll("0"))
    paths = job.write(tmp_path)
    copy = tmp_path / "again_0"
    copy.write_bytes(paths[0].read_bytes())
    older = tmp_path / "older_rank_1"
    older.write_bytes(job.dump(1, ring=1))
    d = _diag(paths + [copy, older])
    assert d.ranks == (0, 1, 2) and d.behind == (2,) and d.stuck[0].waiting == (0, 1)
    assert any("same dump" in w for w in d.warnings) and any("rank 1 is in 2 files" in w for w in d.warnings)


# ------------------------------------------------------------------ the command


def test_cli_telemetry_prints_the_hang_and_json_carries_it(tmp_path):
    from linkroof.cli import cli

    paths = sixteen_rank_hang().write(tmp_path, version="2.10", empty=lambda r: r == 7)
    args = ["telemetry", *map(str, paths), "--profile", "reference"]
    res = CliRunner().invoke(cli, [*args, "--json"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["hang"]["behind"] == [3, 7] and doc["hang"]["stuck"][0]["group"] == "tp:0"
    res = CliRunner().invoke(cli, args, env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    assert "Hang: ranks 3,7 are behind" in res.stdout
    assert "group 'tp:0' (tp): ranks 3,7 are behind at all_reduce #41 (bf16, 8 MiB)" in res.stdout


# ------------------------------------------------------------------ real dumps (tests/data/flightrec/ORIGIN.md)


def test_real_gloo_dumps_name_the_rank_that_skipped():
    """4 CPU ranks on Gloo (torch 2.13): rank 3 skipped its all-reduce #4 in group '2'
    ([2, 3]); Gloo's pg_config names neither that group nor the world group."""
    from pathlib import Path

    folder = Path(__file__).parent / "data" / "flightrec" / "gloo_collective"
    paths = sorted(folder.glob("rank_*"))
    d = _diag(paths)
    assert d.behind == (3,) and len(d.stuck) == 1
    s = d.stuck[0]
    assert (s.group, s.op, s.seq, s.waiting, s.dtypes, s.size_bytes) == ("2", "all_reduce", 4, (2,), ("bf16",), 8192)
    assert d.versions == {0: "2.10", 1: "2.10", 2: "2.10", 3: "2.10"}
    p2p = _diag(sorted((folder.parent / "gloo_p2p").glob("rank_*")))
    assert p2p.stuck == [] and p2p.behind == ()  # Gloo records no send or receive


def test_a_send_stalled_in_a_split_group_names_which_one(tmp_path):
    """Two groups named 'split' (ranks 0-1 and 2-3): rank 0 sends to its peer 1, which never
    posts the receive. The stall is named 'split@0,1', as a collective's would be, not the
    bare name both groups share."""
    job = Job({"0": ("default_pg", [0, 1, 2, 3])})
    job.groups.update({"split": ("s", [0, 1])})
    job.add([0, 1], coll("split"))
    job.add([0], send("split", 1))
    paths = job.write(tmp_path, ranks=[0, 1])
    job2 = Job({"0": ("default_pg", [0, 1, 2, 3]), "split": ("s", [2, 3])})
    job2.add([2, 3], coll("split"))
    paths += job2.write(tmp_path, ranks=[2, 3])
    d = _diag(paths)
    p2p = [s for s in d.stuck if s.kind == "p2p"]
    assert [(s.group, s.op, s.behind, s.waiting) for s in p2p] == [("split@0,1", "recv", (1,), (0,))]


def test_sends_of_a_group_no_pg_config_lists_are_not_matched_by_guess():
    """Group 'x' is in no rank's pg_config. Rank 0's send to its peer 1 and rank 2's receive
    from its peer 0 are pending; rank 1 has nothing in 'x'. Guessing the members from the
    ranks with entries (0 and 2) would make peer 1 rank 2 and call the two matched; without
    the group's ranks no peer is a rank, so nothing is matched, and a warning says why."""
    def p2p(rid, name):
        return {"record_id": rid, "pg_id": 1, "process_group": ("x", "x"), "collective_seq_id": 0, "p2p_seq_id": 1,
                "op_id": rid + 1, "profiling_name": name, "input_sizes": [[256]], "input_dtypes": ["Float"],
                "output_sizes": [[256]], "output_dtypes": ["Float"], "state": "started", "is_p2p": True}

    def dump(rank, entries):
        doc = {"version": "2.10", "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2]"}},
               "entries": entries, "rank": rank}
        return F.read_dump(pickle.dumps(doc, protocol=2), f"rank_{rank}")

    dumps = [dump(0, [p2p(0, "nccl:send 0->1")]), dump(1, []), dump(2, [p2p(0, "nccl:recv 2<-0")])]
    d = F.diagnose_hang(dumps)
    assert [e.peer for e in dumps[0].entries] == [1] and [e.peer for e in dumps[2].entries] == [0]
    assert [s for s in d.stuck if s.group == "x"] == []
    assert "group 'x' is in no dump's pg_config: its ranks are not known, so its pending sends and receives are " \
           "not matched to their peers" in d.warnings


@pytest.mark.parametrize("p2p, state, warned", [
    (True, "started", True), (True, "scheduled", True),
    (True, "completed", False),  # a completed send waits on no peer
    (False, "started", False),  # a pending collective needs no peer: it is diagnosed from its members
])
def test_the_unlisted_group_warning_is_for_pending_sends_and_receives_only(p2p, state, warned):
    """Group 'x' is in no pg_config; ranks 0 and 1 each hold one entry in it. Only a send or
    receive not completed needs the peers' ranks, so only that raises the warning."""
    def entry(rank):
        name = (f"nccl:send {rank}->{1 - rank}" if rank == 0 else f"nccl:recv {rank}<-{1 - rank}") if p2p \
            else "nccl:all_reduce"
        return {"record_id": 0, "pg_id": 1, "process_group": ("x", "x"), "collective_seq_id": 0 if p2p else 1,
                "p2p_seq_id": 1 if p2p else 0, "op_id": 1, "profiling_name": name, "input_sizes": [[256]],
                "input_dtypes": ["Float"], "output_sizes": [[256]], "output_dtypes": ["Float"], "state": state,
                "is_p2p": p2p}

    def dump(rank):
        doc = {"version": "2.10", "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}},
               "entries": [entry(rank)], "rank": rank}
        return F.read_dump(pickle.dumps(doc, protocol=2), f"rank_{rank}")

    d = F.diagnose_hang([dump(0), dump(1)])
    said = [w for w in d.warnings if w.startswith("group 'x' is in no dump's pg_config")]
    assert said == (["group 'x' is in no dump's pg_config: its ranks are not known, so its pending sends and "
                     "receives are not matched to their peers"] if warned else [])


@pytest.mark.parametrize("sizes, dtypes, why", [
    ([[1024], 5], ["Float"], "2 shapes for 1 data types"),  # was a bare TypeError past the check
    ([[1024], [1 << 20]], ["Float"], "2 shapes for 1 data types"),  # was read as 4096 B, the second tensor dropped
    ([[1024]], ["Float", "Float"], "1 shapes for 2 data types"),
    ([[1024], "x"], [], "shape 'x'"),  # no data types at all: each shape is still checked
])
def test_a_tensor_without_its_data_type_is_refused_not_dropped(sizes, dtypes, why):
    e = {"record_id": 0, "pg_id": 0, "process_group": ("0", "default_pg"), "collective_seq_id": 1, "p2p_seq_id": 0,
         "profiling_name": "nccl:all_reduce", "input_sizes": sizes, "input_dtypes": dtypes, "output_sizes": [],
         "output_dtypes": [], "state": "completed", "is_p2p": False}
    with pytest.raises(T.TelemetryError, match=r"entries\[0\].*missing or bad field \(" + __import__("re").escape(why)):
        F.read_dump(pickle.dumps({"version": "2.10", "pg_config": {}, "entries": [e], "rank": 0}), "rank_0")


def test_shapes_of_an_old_dump_without_data_types_are_read_with_no_size():
    e = {"record_id": 0, "pg_id": 0, "process_group": ("0", "default_pg"), "collective_seq_id": 1, "p2p_seq_id": 0,
         "profiling_name": "nccl:all_reduce", "input_sizes": [[1024]], "output_sizes": [[1024]],
         "state": "completed", "is_p2p": False}
    d = F.read_dump(pickle.dumps({"version": "2.1", "pg_config": {}, "entries": [e], "rank": 0}), "rank_0")
    assert d.entries[0].input_sizes == ((1024,),) and d.entries[0].size_bytes is None


def test_a_duration_past_any_float_is_refused_in_one_line():
    """A pickle can carry 10**400 as an entry's duration_ms: math.isfinite raises OverflowError
    on it, which escaped the reader as a traceback; it is a bad field like any other."""
    e = {"record_id": 0, "pg_id": 0, "process_group": ("0", "default_pg"), "collective_seq_id": 1, "p2p_seq_id": 0,
         "profiling_name": "nccl:all_reduce", "input_sizes": [], "input_dtypes": [], "output_sizes": [],
         "output_dtypes": [], "state": "completed", "is_p2p": False, "duration_ms": 10 ** 400}
    with pytest.raises(T.TelemetryError, match=r"entries\[0\].*missing or bad field \(int too large to convert"):
        F.read_dump(pickle.dumps({"version": "2.10", "pg_config": {}, "entries": [e], "rank": 0}), "rank_0")
