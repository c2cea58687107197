"""Survivors of mutmut in the Flight Recorder hang diagnosis (_stuck_p2p,
_stuck_collective, _causes, _member_key, _status_names): small rings built by hand, each
answer worked out by hand (benchmarks/data/2026-12-04d-mutation/flightrec-open-p2p-diffs.txt)."""

from frdumps import Job, coll

from linkroof.readers import flightrec as F


def ent(rid, op, state="started", peer=None, *, seq=1, group="g", pg_id=0, ins=((4,),), outs=((4,),),
        dtype="fp32", size=16):
    """One ring entry as read: a send / recv names its peer group-locally ("send 0->1")."""
    p2p = op in ("send", "recv")
    if p2p and peer is not None:
        name = f"nccl:{op} 9->{peer}" if op == "send" else f"nccl:{op} 9<-{peer}"
    else:
        name = f"nccl:{op}"
    return F.FREntry(rid, pg_id, group, "", 0 if p2p else seq, seq if p2p else 0, None, name, op, p2p, peer,
                     ins, (dtype,) * len(ins) if dtype else (), outs, (dtype,) * len(outs) if dtype else (), size,
                     dtype, state, None, None, None)


def dump(rank, entries, groups=None):
    return F.FRDump(f"rank{rank}", rank, "2.10", None, groups or {}, {}, entries, f"digest{rank}")


# ------------------------------------------------------------------ _stuck_p2p


def test_a_receive_without_its_send_counts_only_the_peers_completed_sends_to_it():
    """Group (4, 5, 6): local 0 = rank 4, 1 = rank 5, 2 = rank 6. Rank 5 waits in two
    receives from local 0 (p2p #3 started, #4 scheduled); rank 4 posted no send for them.
    Of rank 4's completed entries only the two sends to local 1 count: not the send to
    local 2, the receive from local 1, the send to local 3 (no such member) or the send
    without a peer in its name."""
    members = (4, 5, 6)
    r4 = [ent(0, "send", "completed", 1, seq=1), ent(1, "send", "completed", 1, seq=2),
          ent(2, "send", "completed", 2, seq=3), ent(3, "recv", "completed", 1, seq=4),
          ent(4, "send", "completed", 3, seq=5), ent(5, "send", "completed", None, seq=6),
          ent(6, "all_reduce", "completed", seq=1)]
    r5 = [ent(0, "recv", "started", 0, seq=3, ins=(), outs=((8,),), size=32),
          ent(1, "recv", "scheduled", 0, seq=4, ins=(), outs=((8,),), size=32)]
    r6 = [ent(0, "send", "started", 3, seq=1),  # local 3: past the group's end, never matched
          ent(1, "send", "started", None, seq=2)]  # no peer in the name: nothing to check it against
    entries = {4: r4, 5: r5, 6: r6}
    by_rank = {4: dump(4, r4), 5: dump(5, r5), 6: dump(6, r6)}
    out = F._stuck_p2p("g", "pp", members, entries, by_rank)
    assert out == [F.Stuck("g", "pp", (4, 5, 6), "p2p", 3, "send", ((8,),), ("fp32",), 32, (4,), (5,),
                           {4: "ring: no pending send from rank 5 (2 completed)",
                            5: "ring: recv p2p #3 started from rank 4"})]
    assert out[0].to_dict()["ranks"] == [4, 5, 6]
    assert out[0].sentence() == ("group 'g' (pp): rank 4 never posted the matching send (fp32, 32 B); rank 5 waits "
                                 "[rank 4: ring: no pending send from rank 5 (2 completed); "
                                 "rank 5: ring: recv p2p #3 started from rank 4]")


def test_a_send_to_a_rank_without_a_dump_and_a_receive_from_an_empty_ring():
    """Group of 6 (local = global). Rank 0 sends to 1 (no dump); ranks 2 and 3 are a
    matched send/receive pair (nobody behind); rank 4 receives from 5, whose ring is
    empty. The send has no data type: none is named."""
    members = (0, 1, 2, 3, 4, 5)
    r0 = [ent(0, "all_reduce", "completed", seq=1), ent(1, "send", "started", 1, seq=2, ins=((16,),),
                                                         outs=((16,),), dtype=None, size=None)]
    r2 = [ent(0, "send", "started", 3, seq=1)]
    r3 = [ent(0, "recv", "started", 2, seq=1, ins=(), outs=((4,),))]
    r4 = [ent(0, "recv", "scheduled", 5, seq=1, ins=(), outs=((8,),), size=32)]
    entries = {0: r0, 2: r2, 3: r3, 4: r4}
    by_rank = {0: dump(0, r0), 2: dump(2, r2), 3: dump(3, r3), 4: dump(4, r4), 5: dump(5, [])}
    out = F._stuck_p2p("g", "", members, entries, by_rank)
    assert out == [
        F.Stuck("g", "", members, "p2p", 2, "recv", ((16,),), (), None, (1,), (0,),
                {1: "no dump", 0: "ring: send p2p #2 started to rank 1"}),
        F.Stuck("g", "", members, "p2p", 1, "send", ((8,),), ("fp32",), 32, (5,), (4,),
                {5: "empty ring", 4: "ring: recv p2p #1 scheduled from rank 5"})]
    assert out[0].sentence() == ("group 'g': rank 1 never posted the matching recv; rank 0 waits "
                                 "[rank 0: ring: send p2p #2 started to rank 1; rank 1: no dump]")


def test_a_matched_pair_and_completed_p2p_are_no_hang():
    members = (0, 1, 2)
    r0 = [ent(0, "send", "started", 1, seq=1), ent(1, "send", "completed", 2, seq=2)]
    r1 = [ent(0, "recv", "started", 0, seq=1, ins=())]
    r2 = [ent(0, "recv", "completed", 1, seq=1, ins=())]  # from rank 1, which never sent: completed all the same
    entries = {0: r0, 1: r1, 2: r2}
    by_rank = {r: dump(r, es) for r, es in entries.items()}
    assert F._stuck_p2p("g", "", members, entries, by_rank) == []


def test_two_sends_one_receive_names_the_receiver_once():
    """Rank 0 posted two sends to 1, rank 1 one receive (and had one receive from 0
    completed before): the second send has no match."""
    members = (0, 1)
    r0 = [ent(0, "send", "completed", 1, seq=1), ent(1, "send", "started", 1, seq=2),
          ent(2, "send", "scheduled", 1, seq=3)]
    r1 = [ent(0, "recv", "completed", 0, seq=1, ins=()), ent(1, "recv", "started", 0, seq=2, ins=())]
    entries = {0: r0, 1: r1}
    by_rank = {r: dump(r, es) for r, es in entries.items()}
    (s,) = F._stuck_p2p("g", "", members, entries, by_rank)
    assert (s.seq, s.op, s.behind, s.waiting, s.input_sizes) == (2, "recv", (1,), (0,), ((4,),))
    assert s.evidence == {1: "ring: no pending recv from rank 0 (1 completed)",
                          0: "ring: send p2p #2 started to rank 1"}


# ------------------------------------------------------------------ _stuck_collective


def test_a_stuck_collective_keeps_every_members_evidence_and_the_calls_sizes(tmp_path):
    """Ranks 0-2 run all_reduce #1; 0 and 1 then enter #2 (2048 bf16 = 4 KiB), rank 2 never does."""
    job = Job({"0": ("default_pg", [0, 1, 2])}).add([0, 1, 2], coll("0")).add([0, 1], coll("0", n=2048))
    d = F.diagnose_hang([F.read_dump(p.read_bytes(), str(p)) for p in job.write(tmp_path)])
    (s,) = d.stuck
    waits = "pg_status: last enqueued #2, started #2, completed #1"
    assert s == F.Stuck("0", "default_pg", (0, 1, 2), "collective", 2, "all_reduce", ((2048,),), ("bf16",), 4096,
                        (2,), (0, 1), {0: waits, 1: waits, 2: "pg_status: last enqueued #1, started #1, completed #1"})
    assert s.sentence() == ("group '0' (default_pg): rank 2 is behind at all_reduce #2 (bf16, 4 KiB); ranks 0,1 wait "
                            f"[rank 0: {waits}; rank 1: {waits}; "
                            "rank 2: pg_status: last enqueued #1, started #1, completed #1]")


# ------------------------------------------------------------------ _causes


def test_causes_orders_equal_behind_by_more_waiting_first():
    a = F.Stuck("a", "", (0, 1), "collective", 1, None, (), (), None, (1,), (0,), {})
    b = F.Stuck("b", "", (2, 3, 4), "collective", 1, None, (), (), None, (2,), (3, 4), {})
    assert [s.group for s in F._causes([a, b])] == ["b", "a"]
    assert [s.group for s in F._causes([b, a])] == ["b", "a"]
    # a cycle (every rank behind waits elsewhere): the same order
    c = F.Stuck("c", "", (0, 1), "collective", 1, None, (), (), None, (0,), (1,), {})
    d = F.Stuck("d", "", (0, 1, 5), "collective", 1, None, (), (), None, (1,), (0, 5), {})
    assert [s.group for s in F._causes([c, d])] == ["d", "c"]


# ------------------------------------------------------------------ _member_key


def test_member_key_is_none_for_a_group_no_pg_config_keys():
    d = dump(0, [], {"g": ((1, 0, 1), ""), "h": (None, "")})
    assert F._member_key(d, "g", {"g@0,1": ((0, 1), "")}) == "g@0,1"
    assert F._member_key(d, "g", {"g": ((0, 1), "")}) == "g"
    assert F._member_key(d, "g", {"g@2,3": ((2, 3), "")}) is None
    assert F._member_key(d, "h", {"g@0,1": ((0, 1), "")}) is None
    assert F._member_key(d, "x", {}) is None


# ------------------------------------------------------------------ _status_names


def test_status_names_map_each_group_to_its_single_pg_id():
    """'a' has pg_id 3; 'b' is seen under two ids (ambiguous: left out); 'c' has none."""
    es = [ent(0, "all_reduce", group="a", pg_id=3), ent(1, "all_reduce", group="b", pg_id=4),
          ent(2, "all_reduce", group="b", pg_id=5), ent(3, "all_reduce", group="c", pg_id=None),
          ent(4, "all_reduce", group="a", pg_id=3)]
    assert F._status_names(dump(0, es)) == {"a": "3"}


def test_status_names_through_a_written_dump(tmp_path):
    job = Job({"0": ("default_pg", [0, 1]), "pair": ("pp", [0, 1])}).add([0, 1], coll("0"), coll("pair"))
    d = F.read_dump(job.dump(0), "trace_0")
    assert F._status_names(d) == {"0": "0", "pair": "1"}
