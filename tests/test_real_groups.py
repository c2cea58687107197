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
