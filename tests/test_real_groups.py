"""Real inputs of issue 42, item 9 (recorded on one H200, torch 2.11, NCCL 2.28.9, by
benchmarks/record_groups_trace.py): a profiler trace of a program with three process
groups (default_pg, tp, dp) and the Flight Recorder dump NCCL kept for it. What they
must give is taken from what the recording program says it issued
(tests/data/traces/h200x1_torch2.11_groups_record.json), not from linkroof.

On a one-rank group NCCL does nothing on the GPU for an in-place all-reduce or a
broadcast, and copies the input into the output for an out-of-place all-gather (a
DtoD memcpy inside the `nccl:_all_gather_base` range): so the all-gathers are rows and
every other call is an op that launched no GPU work, said in one warning."""

import json
from collections import Counter
from pathlib import Path

import tracegen as G
from linkroof.profiler.session import bundled_profile
from linkroof.readers import flightrec as FR
from linkroof.readers import traces as P

DATA = Path(__file__).parent / "data"
TRACE = DATA / "traces" / "h200x1_torch2.11_groups_rank0.json.gz"
RECORD = json.loads((DATA / "traces" / "h200x1_torch2.11_groups_record.json").read_text())
DUMP = DATA / "flightrec" / "nccl_groups_h200x1" / "rank_0"
KIND = {"all_reduce": "all_reduce", "all_gather": "all_gather", "broadcast": "broadcast",
        "_c10d_functional.all_reduce": "all_reduce", "all_reduce (side stream)": "all_reduce"}


def issued():
    return [(g, KIND[op], size) for step in RECORD["issued_per_profiled_step"] for g, op, size in step]


def test_the_all_gathers_are_rows_of_their_own_group_and_size():
    t = P.read_trace(TRACE)
    rows = P.analyze([t], bundled_profile()).rows
    want = sorted((g, c, s) for g, c, s in issued() if c == "all_gather")
    desc = {g["pg_name"]: g["pg_desc"] for g in json.loads(P.gzip.open(TRACE).read())["distributedInfo"]["pg_config"]}
    got = sorted((desc[r.call.process_group], r.call.collective, r.call.size_bytes) for r in rows)
    assert got == want and len(got) == len(RECORD["issued_per_profiled_step"])
    assert all(r.call.group_size == 1 and "one-rank group" in r.nccl_how for r in rows)
    assert all(r.call.kernel.startswith("Memcpy DtoD") for r in rows)


def test_every_call_that_ran_nothing_on_the_gpu_is_counted_in_one_warning():
    t = P.read_trace(TRACE)
    silent = Counter((g, c) for g, c, _ in issued() if c != "all_gather")
    assert sum(silent.values()) == 20  # 5 of 6 calls a step, 4 steps
    got = Counter((str(o.args["Process Group Description"]), P.collective_name(o.args["Collective name"]))
                  for o in t.silent_ops())
    assert got == Counter({("default_pg" if g == "default" else g, c): n for (g, c), n in silent.items()})
    report = P.analyze([t], bundled_profile())
    [w] = [w for w in report.warnings if "launched no GPU work" in w]
    assert w.startswith(f"{TRACE.name}: 20 collective op(s) launched no GPU work: 8 all_reduce on group 'dp' of 1 rank")
    assert "does nothing on the GPU" in w


def test_an_op_of_a_larger_group_without_gpu_work_is_blamed_on_the_recording(tmp_path):
    """Two ranks' all-reduce whose kernel the profiler did not record: never 'one-rank'."""
    b = G.TraceBuilder(rank=0, world=2)
    b.step(1, 0, 1000)
    b.op("record_param_comms", 10, 20, G.comm_args("allreduce", 1 << 20, 1 << 20))
    b.op("record_param_comms", 100, 20, G.comm_args("allreduce", 1 << 20, 1 << 20))
    b.kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 120, 50, launch_ts=105)
    t = P.read_trace(b.write(tmp_path / "r0.json"))
    assert len(t.silent_ops()) == 1 and t.silent_ops()[0].start_ns == 10_000
    note = P.silent_note(t.silent_ops(), t.groups)
    assert note.startswith("1 collective op(s) launched no GPU work: 1 all_reduce on group 'default_pg' of 2 ranks")
    assert "recorded no GPU activity" in note and "one-rank" not in note
    b2 = G.TraceBuilder(rank=0, world=2)  # a barrier and a kernel's own op: nothing to say
    b2.op("record_param_comms", 10, 20, G.comm_args("barrier", 1, 1))
    b2.op("record_param_comms", 100, 20, G.comm_args("allreduce", 1 << 20, 1 << 20))
    b2.kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 120, 50, launch_ts=105)
    t2 = P.read_trace(b2.write(tmp_path / "r1.json"))
    assert t2.silent_ops() == [] and P.silent_note([], t2.groups) is None


def test_the_real_flight_recorder_dump_whose_pg_status_lags_its_ring():
    """torch 2.11 dumped right after a synchronize: every entry completed, while pg_status
    counts 2 completed in groups 1 and 2 (of 16 and 24). Positions come from the ring; no
    hang is named; the lag is said."""
    tel = FR.parse_flight_recorder(DUMP.read_bytes(), str(DUMP))
    d = tel.dump
    # the ring holds all 8 steps the program ran (3 warm-up, 5 under the profiler); the
    # record lists the 4 profiled ones: each group's calls a step, times 8
    per_step = Counter(g for g, _, _ in issued())
    n = {g: k // len(RECORD["issued_per_profiled_step"]) * 8 for g, k in per_step.items()}
    assert FR.status_lag(d) == [("1", 2, n["tp"]), ("2", 2, n["dp"])]
    assert any("pg_status lags the ring" in x and "group '1' says last completed #2" in x for x in tel.notes)
    per = {e.group: [x for x in d.entries if x.group == e.group] for e in d.entries}
    assert FR._position(0, "1", per["1"], d)[:2] == (n["tp"], n["tp"])
    assert FR._position(0, "0", per["0"], d)[:2] == (n["default"], n["default"])
    diag = FR.diagnose_hang([d])
    assert diag.stuck == [] and diag.missing == ()


# ---- a public 8-rank job whose trace names no group: facebookresearch/param's DLRM traces

DLRM = sorted((DATA / "traces").glob("param_dlrm_v100x8_rank*.json.gz"))


def test_a_call_matched_on_every_rank_of_the_world_is_placed_at_the_world():
    """8 V100 ranks (2023), world_size 8 and no pg_config, the ops naming no group size:
    each of the 8 collectives a rank ran is matched on all 8 ranks, so its group is the
    world's (inferred, said on the row and in one warning) and each row is placed."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent / "tools"))
    import plain_trace_reader as plain

    assert len(DLRM) == 8
    rep = P.analyze([P.read_trace(f) for f in DLRM], bundled_profile())
    seen = [plain.read(str(f)) for f in DLRM]
    assert len(rep.rows) == sum(s["comm_kernels"] for s in seen) == 64
    assert len(rep.matched) == 8 and all(sorted(m.ranks) == list(range(8)) for m in rep.matched)
    assert all(r.call.group_size == 8 and r.call.group_from.startswith("inferred: matched on all 8 ranks")
               for r in rep.rows)
    assert all(r.bound_s and r.nccl_how and "extrapolated" in r.nccl_how for r in rep.rows)  # a 2-GPU profile
    assert all(m.group_size == 8 and m.busbw for m in rep.matched)
    assert sum("taken as the world (inferred)" in w for w in rep.warnings) == 1


def test_without_every_rank_nothing_is_inferred():
    """Seven of the eight ranks: a call matched on seven says nothing of its group."""
    rep = P.analyze([P.read_trace(f) for f in DLRM[:7]], bundled_profile())
    assert rep.rows and all(r.call.group_size is None and r.bound_s is None for r in rep.rows)
    assert not any("taken as the world" in w for w in rep.warnings)


def test_a_call_on_some_ranks_of_the_world_keeps_its_group_unknown(tmp_path):
    """Three ranks of a world of 3, no group named anywhere: the all-reduce all three ran
    is placed at 3 (inferred); the one only ranks 0 and 1 ran says nothing of its group;
    a trace that says no world size stops all inference."""
    def rank(r, world=3, both=True):
        b = G.TraceBuilder(rank=r, world=world, pgs=())
        b.step(1, 0, 5000)
        b.op("record_param_comms", 10, 20, G.comm_args("allreduce", 1 << 20, 1 << 20, group=None, ranks="[]"))
        b.kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 100, 400, launch_ts=15)
        if both and r < 2:
            b.op("record_param_comms", 1000, 20, G.comm_args("allreduce", 1 << 18, 1 << 18, group=None, ranks="[]"))
            b.kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 1100, 200, launch_ts=1005)
        return P.read_trace(b.write(tmp_path / f"w{world}_r{r}.json"))

    rep = P.analyze([rank(r) for r in range(3)], bundled_profile())
    sizes = sorted((r.call.size_bytes, r.call.group_size) for r in rep.rows)
    assert sizes == [(1 << 19, None), (1 << 19, None), (1 << 21, 3), (1 << 21, 3), (1 << 21, 3)]
    assert sum(m.group_size == 3 for m in rep.matched) == 1
    mixed = P.analyze([rank(0), rank(1), rank(2, world=None)], bundled_profile())
    assert all(r.call.group_size is None for r in mixed.rows if r.call.rank < 2)
    assert not any("taken as the world" in w for w in mixed.warnings)
