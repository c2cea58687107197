"""Mutation survivors of the Flight Recorder hang diagnosis (Stuck.sentence, Stuck.to_dict,
HangDiagnosis.to_dict, diagnose_hang): exact sentences and dicts for Stuck calls built by
hand, and diagnoses of small dumps written by hand, each answer worked out by hand."""

import pickle

from linkroof.readers import flightrec as F

# ------------------------------------------------------------------ dumps, by hand


def _entry(rid, group, desc, seq, state, pg_id=0, name="nccl:all_reduce", n=1024, dtype="BFloat16"):
    return {"record_id": rid, "pg_id": pg_id, "process_group": (group, desc), "collective_seq_id": seq,
            "p2p_seq_id": 0, "op_id": rid + 1, "profiling_name": name, "input_sizes": [[n]],
            "input_dtypes": [dtype], "output_sizes": [[n]], "output_dtypes": [dtype], "state": state,
            "is_p2p": False}


def _dump(rank, entries, pg_config=None, pg_status=None, version="2.10", lib="2.21.5"):
    doc = {"version": version, "pg_config": pg_config or {}, "entries": entries, "rank": rank}  # bytes apart
    if pg_status is not None:
        doc["pg_status"] = pg_status
    if lib:
        doc["comm_lib_version" if version == "2.10" else "nccl_version"] = lib
    return F.read_dump(pickle.dumps(doc, protocol=2), f"rank_{rank}")


def _status(enq, started, done):
    return {"last_enqueued_collective": enq, "last_started_collective": started, "last_completed_collective": done}


# ------------------------------------------------------------------ Stuck.sentence, exact


S_FULL = F.Stuck("tp:0", "tp", (0, 1, 2, 3), "collective", 41, "all_reduce", ((4194304,),), ("fp32", "bf16", "fp32"),
                 8 << 20, (3,), (0, 1), {3: "pg_status: last enqueued #40, completed #40", 1: "ring: b", 0: "ring: a"})
S_BARE = F.Stuck("g", "", (0, 1), "collective", 2, None, (), (), None, (), (), {})
S_P2P = F.Stuck("pp", "pp", (0, 1), "p2p", 1, "recv", ((),), (), 4096, (1,), (0,),
                {1: "empty ring", 0: "ring: send p2p #1 started to rank 1"}, held=(2,))
S_HELD = F.Stuck("dp", "dp group", tuple(range(7)), "collective", 7, "all_gather", ((8,),), ("fp16",), 100, (3, 6),
                 (0, 1, 2), {6: "empty ring", 3: "no dump"}, held=(4, 5))


def test_sentence_one_behind_two_waiting_two_dtypes_and_a_size():
    assert S_FULL.sentence() == ("group 'tp:0' (tp): rank 3 is behind at all_reduce #41 (bf16, fp32, 8 MiB); "
                                 "ranks 0,1 wait [rank 0: ring: a; rank 1: ring: b; "
                                 "rank 3: pg_status: last enqueued #40, completed #40]")


def test_sentence_with_nothing_known_but_the_group_and_seq():
    # no op, no dtype, no size, no desc, nobody behind, nobody waiting, no evidence
    assert S_BARE.sentence() == "group 'g': at a call #2 []"


def test_sentence_p2p_size_without_dtype_desc_equal_to_name_one_waiting_one_held():
    assert S_P2P.sentence() == ("group 'pp': rank 1 never posted the matching recv (4 KiB); rank 0 waits; "
                                "rank 2 not there: waiting in another group "
                                "[rank 0: ring: send p2p #1 started to rank 1; rank 1: empty ring]")


def test_sentence_two_behind_three_waiting_two_held():
    assert S_HELD.sentence() == ("group 'dp' (dp group): ranks 3,6 are behind at all_gather #7 (fp16, 100 B); "
                                 "ranks 0-2 wait; ranks 4,5 not there: waiting in another group "
                                 "[rank 3: no dump; rank 6: empty ring]")


# ------------------------------------------------------------------ Stuck.to_dict, exact


def test_stuck_to_dict_every_key():
    assert S_HELD.to_dict() == {
        "group": "dp", "desc": "dp group", "ranks": [0, 1, 2, 3, 4, 5, 6], "kind": "collective", "seq": 7,
        "op": "all_gather", "input_sizes": [[8]], "dtypes": ["fp16"], "size_bytes": 100, "behind": [3, 6],
        "waiting": [0, 1, 2], "held": [4, 5], "evidence": {"3": "no dump", "6": "empty ring"},
        "sentence": ("group 'dp' (dp group): ranks 3,6 are behind at all_gather #7 (fp16, 100 B); ranks 0-2 wait; "
                     "ranks 4,5 not there: waiting in another group [rank 3: no dump; rank 6: empty ring]")}
    d = S_FULL.to_dict()
    assert list(d) == ["group", "desc", "ranks", "kind", "seq", "op", "input_sizes", "dtypes", "size_bytes", "behind",
                       "waiting", "held", "evidence", "sentence"]
    assert d["evidence"] == {"0": "ring: a", "1": "ring: b", "3": "pg_status: last enqueued #40, completed #40"}
    assert list(d["evidence"]) == ["0", "1", "3"]
    assert d["dtypes"] == ["fp32", "bf16", "fp32"] and d["input_sizes"] == [[4194304]] and d["held"] == []


# ------------------------------------------------------------------ HangDiagnosis.to_dict, exact


def test_hang_diagnosis_to_dict_every_key():
    h = F.HangDiagnosis((0, 1, 3), (0, 1, 2, 3), (2,), (1,), [S_P2P], {3: "2.10", 0: "2.9, 2.21.5"}, ["w1"])
    assert h.to_dict() == {
        "behind": [1], "stuck": [S_P2P.to_dict()], "ranks": [0, 1, 3], "expected": [0, 1, 2, 3], "missing": [2],
        "empty_rings": [1], "versions": {"0": "2.9, 2.21.5", "3": "2.10"}, "warnings": ["w1"]}
    assert list(h.to_dict()["versions"]) == ["0", "3"]


# ------------------------------------------------------------------ diagnose_hang, small dumps by hand


def test_default_pg_not_in_pg_config_is_the_world_and_an_empty_ring_is_behind():
    """No dump lists any group in pg_config; ranks 0 and 1 started all_reduce #1 in group
    '0' (default_pg), rank 2's ring is empty. The default group is the world (0, 1, 2):
    rank 2 is the suspect behind."""
    dumps = [_dump(0, [_entry(0, "0", "default_pg", 1, "started")]),
             _dump(1, [_entry(0, "0", "default_pg", 1, "started")]),
             _dump(2, [])]
    d = F.diagnose_hang(dumps)
    assert (d.ranks, d.expected, d.missing, d.empty, d.behind) == ((0, 1, 2), (0, 1, 2), (), (2,), (2,))
    assert d.versions == {0: "2.10, 2.21.5", 1: "2.10, 2.21.5", 2: "2.10, 2.21.5"}
    assert d.warnings == []
    (s,) = d.stuck
    assert s.to_dict() == {
        "group": "0", "desc": "default_pg", "ranks": [0, 1, 2], "kind": "collective", "seq": 1, "op": "all_reduce",
        "input_sizes": [[1024]], "dtypes": ["bf16"], "size_bytes": 2048, "behind": [2], "waiting": [0, 1],
        "held": [], "evidence": {"0": "ring: last all_reduce #1 started, 1 entries",
                                 "1": "ring: last all_reduce #1 started, 1 entries", "2": "empty ring"},
        "sentence": "group '0' (default_pg): rank 2 is behind at all_reduce #1 (bf16, 2 KiB); ranks 0,1 wait "
                    "[rank 0: ring: last all_reduce #1 started, 1 entries; "
                    "rank 1: ring: last all_reduce #1 started, 1 entries; rank 2: empty ring]"}


def test_a_group_without_desc_in_pg_config_takes_its_entries_desc():
    """pg_config gives 'g' as a bare ranks list (no desc); the entries say ('g', 'mydesc')."""
    cfg = {"g": [0, 1]}
    dumps = [_dump(0, [_entry(0, "g", "mydesc", 1, "completed"), _entry(1, "g", "mydesc", 2, "started")], cfg),
             _dump(1, [_entry(0, "g", "mydesc", 1, "completed")], cfg)]
    d = F.diagnose_hang(dumps)
    (s,) = d.stuck
    assert (s.group, s.desc, s.ranks, s.seq, s.behind, s.waiting) == ("g", "mydesc", (0, 1), 2, (1,), (0,))
    assert s.sentence() == ("group 'g' (mydesc): rank 1 is behind at all_reduce #2 (bf16, 2 KiB); rank 0 waits "
                            "[rank 0: ring: last all_reduce #2 started, 2 entries; "
                            "rank 1: ring: last all_reduce #1 completed, 1 entries]")
    assert d.to_dict()["stuck"][0]["desc"] == "mydesc"


def test_pg_config_desc_wins_over_the_entries_desc():
    cfg = {"g": {"name": "g", "desc": "cfgdesc", "ranks": "[0, 1]"}}
    dumps = [_dump(0, [_entry(0, "g", "entdesc", 1, "completed"), _entry(1, "g", "entdesc", 2, "started")], cfg),
             _dump(1, [_entry(0, "g", "entdesc", 1, "completed")], cfg)]
    (s,) = F.diagnose_hang(dumps).stuck
    assert s.desc == "cfgdesc" and s.sentence().startswith("group 'g' (cfgdesc): rank 1 is behind at all_reduce #2")


def test_a_split_group_reads_pg_status_by_its_plain_name():
    """Two groups named 'split' ([0, 1] and [2, 3]); the second hangs at #2 where rank 3
    is behind. Each rank's pg_status (id "0", tied to 'split' by its entries) is used."""
    a, b = {"split": [0, 1]}, {"split": [2, 3]}
    dumps = [_dump(0, [_entry(0, "split", "s", 1, "completed")], a, {"0": _status(1, 1, 1)}),
             _dump(1, [_entry(0, "split", "s", 1, "completed")], a, {"0": _status(1, 1, 1)}),
             _dump(2, [_entry(0, "split", "s", 1, "completed"), _entry(1, "split", "s", 2, "started")], b,
                   {"0": _status(2, 2, 1)}),
             _dump(3, [_entry(0, "split", "s", 1, "completed")], b, {"0": _status(1, 1, 1)})]
    d = F.diagnose_hang(dumps)
    (s,) = d.stuck
    assert (s.group, s.desc, s.ranks, s.seq, s.behind, s.waiting) == ("split@2,3", "s", (2, 3), 2, (3,), (2,))
    assert s.evidence == {2: "pg_status: last enqueued #2, started #2, completed #1",
                          3: "pg_status: last enqueued #1, started #1, completed #1"}


def test_dumps_of_two_versions_are_said_once_and_one_version_never():
    e = [_entry(0, "0", "default_pg", 1, "completed")]
    cfg = {"0": {"name": "0", "desc": "default_pg", "ranks": [0, 1]}}
    d = F.diagnose_hang([_dump(1, e, cfg, version="2.9"), _dump(0, e, cfg)])
    assert d.stuck == [] and d.versions == {0: "2.10, 2.21.5", 1: "2.9, 2.21.5"}
    assert d.warnings == ["the dumps were written by different versions: rank 0: 2.10, 2.21.5; rank 1: 2.9, 2.21.5"]
    d = F.diagnose_hang([_dump(1, e, cfg, lib=None), _dump(0, e, cfg, lib=None)])
    assert d.versions == {0: "2.10", 1: "2.10"} and d.warnings == []
