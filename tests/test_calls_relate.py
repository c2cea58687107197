"""How calls relate (issue 42, items 1 and 2): a pair across ranks is the same call of
the same group, or it is left unmatched and says why; each kernel is in one step only,
so that summed over steps nothing exceeds the trace. Facts in their own units."""

import random

import pytest

import tracegen as G
from linkroof.profiler.session import bundled_profile
from linkroof.readers import traces as P
from linkroof.roofline import traces as TR
from linkroof.roofline.traces import CollectiveCall, match_calls

REF = bundled_profile()
US = 1000  # ns


def call(rank, t_us, coll="all_reduce", size=64 << 20, dtype="bf16", seq=None, pg="0", ranks=(), group=2, dur_us=100,
         stream=20):
    return CollectiveCall(rank, "ncclDevKernel_AllReduce", 0, stream, int(t_us * US), int((t_us + dur_us) * US), coll,
                          dtype, None, None, size, group, "kernel args", pg, seq, group_ranks=tuple(ranks))


def starts(m):
    return sorted((x[0], x[3] // US) for x in m.members)


def test_a_window_that_starts_later_shifts_no_pair():
    """Rank 1's profiler window opens after rank 0's first two all-reduces: its two calls
    pair with rank 0's third and fourth (the ones at the same time), never with the
    first two; those two are unmatched, each saying why."""
    r0 = [call(0, t) for t in (0, 1000, 2000, 3000)]
    r1 = [call(1, t + 10) for t in (2000, 3000)]
    matched, unmatched = match_calls(r0 + r1)
    assert [starts(m) for m in matched] == [[(0, 2000), (1, 2010)], [(0, 3000), (1, 3010)]]
    assert [round(m.skew_s * 1e6) for m in matched] == [10, 10]
    assert [round(m.transfer_s * 1e6) for m in matched] == [90, 90]
    assert sorted(u.ranks for u in unmatched) == [(0,), (0,)]
    assert all("overlaps it in time" in u.why for u in unmatched)


def test_a_window_that_ends_sooner_shifts_no_pair_either():
    r0 = [call(0, t) for t in (0, 1000, 2000)]
    r1 = [call(1, t + 5) for t in (0, 1000, 2000, 3000, 4000)]
    matched, unmatched = match_calls(r0 + r1)
    assert [starts(m) for m in matched] == [[(0, t), (1, t + 5)] for t in (0, 1000, 2000)]
    assert sorted(u.ranks for u in unmatched) == [(1,), (1,)]


def test_kernels_apart_by_more_than_the_clock_tolerance_are_not_one_call():
    """One all-reduce on each rank, 5 ms apart (rank 0's ends 4.9 ms before rank 1's
    starts): not one call under the 1 ms tolerance; one under a 10 ms tolerance
    (hosts whose clocks differ that much), with the 5 ms said as the skew."""
    cs = [call(0, 0, seq=5), call(1, 5000, seq=5)]
    matched, unmatched = match_calls(cs)
    assert not matched and len(unmatched) == 1 and "4.900 ms apart" in unmatched[0].why
    matched, _ = match_calls(cs, tolerance_s=0.01)
    assert len(matched) == 1 and matched[0].skew_s == pytest.approx(5e-3) and matched[0].transfer_s == 0.0
    bare = [call(0, 0), call(1, 5000)]  # no Seq: aligned in time, and neither has a partner
    matched, unmatched = match_calls(bare)
    assert not matched and sorted(u.ranks for u in unmatched) == [(0,), (1,)]
    assert len(match_calls(bare, tolerance_s=0.01)[0]) == 1


def test_a_seq_pair_too_far_apart_is_refused_too():
    matched, unmatched = match_calls([call(0, 0, seq=3), call(1, 620_000, seq=3)])
    assert not matched and "619.900 ms apart" in unmatched[0].why and unmatched[0].key == ("seq", "0", 3)


def test_two_groups_under_one_name_are_never_merged():
    """Ranks 0,1 and ranks 2,3 each run a 2-rank all-reduce at once under the name '1'.
    With the groups' ranks recorded: two calls of two ranks. Without: four ranks hold
    a call of a 2-rank group at once, which no single call can: left unmatched."""
    listed = [call(r, 0, pg="1", ranks=(0, 1) if r < 2 else (2, 3)) for r in range(4)]
    matched, unmatched = match_calls(listed)
    assert sorted(m.ranks for m in matched) == [(0, 1), (2, 3)] and not unmatched
    bare = [call(r, 0, pg="1") for r in range(4)]
    matched, unmatched = match_calls(bare)
    assert not matched and len(unmatched) == 1 and unmatched[0].ranks == (0, 1, 2, 3)
    assert "more than its group's 2" in unmatched[0].why


def test_a_seq_without_a_group_name_says_nothing():
    """Each group counts its own Seq: two unnamed groups' Seq 7 are different calls. Here
    they ran 3 ms apart: paired by Seq they would be one call; they are left unmatched."""
    matched, unmatched = match_calls([call(0, 0, seq=7, pg=""), call(1, 3000, seq=7, pg="")])
    assert not matched and unmatched and all(u.key[0] == "aligned" for u in unmatched)


def test_a_rank_outside_its_groups_ranks_is_never_paired():
    matched, unmatched = match_calls([call(0, 0, ranks=(0, 1)), call(1, 0, ranks=(0, 1)), call(2, 0, ranks=(0, 1))])
    assert [m.ranks for m in matched] == [(0, 1)]
    assert [u.ranks for u in unmatched] == [(2,)] and "not among its group's ranks [0, 1]" in unmatched[0].why


def test_a_seq_twice_on_one_rank_is_no_identity():
    matched, unmatched = match_calls([call(0, 0, seq=1), call(0, 500, seq=1), call(1, 0, seq=1)])
    assert not matched and "appears twice on one rank" in unmatched[0].why


def test_different_calls_under_one_seq_are_never_paired():
    matched, unmatched = match_calls([call(0, 0, seq=4), call(1, 0, seq=4, coll="all_gather")])
    assert not matched and "differ" in unmatched[0].why


def test_the_matching_does_not_depend_on_the_order_of_the_calls():
    calls = [call(r, t + 7 * r, group=4) for r in range(4) for t in (0, 1000, 2000)] + \
        [call(r, 5000 + r, coll="all_gather", size=1 << 20, group=4) for r in (0, 2, 3)] + [call(1, 9000, group=4)]
    want = match_calls(calls)
    for seed in range(5):
        shuffled = list(calls)
        random.Random(seed).shuffle(shuffled)
        assert match_calls(shuffled) == want
    matched, unmatched = want
    assert [m.ranks for m in matched] == [(0, 1, 2, 3)] * 3 + [(0, 2, 3)]
    assert [u.ranks for u in unmatched] == [(1,)]


def test_the_summary_counts_calls_and_evidence():
    matched, unmatched = match_calls([call(0, 0, seq=1), call(1, 0, seq=1), call(0, 500), call(1, 505), call(0, 900)])
    s = TR.match_summary(5, matched, unmatched)
    assert (s.matched_calls, s.by_seq, s.by_alignment, s.unmatched_calls) == (4, 1, 1, 1)
    assert s.line().startswith("4 of 5 collective calls matched across ranks into 2 calls (1 by the group's Seq, 1 "
                               "by aligning")


# ------------------------------------------------------------------ one step per kernel

def behind(rank=0):
    """Two host steps (0-100 us, 100-200 us); the GPU runs behind the host. Step 1
    launched a GEMM 0-500 (stream 7) and an all-reduce that starts late, 650-900
    (stream 20); step 2 a GEMM 600-800 (stream 8, beside step 1's all-reduce) and an
    all-reduce 1000-1100. The GPU windows overlap (0-900 and 600-1100), and step 1's
    all-reduce starts inside step 2's window."""
    t = G.TraceBuilder(rank)
    t.step(1, 0, 100)
    t.step(2, 100, 100)
    t.kernel("sm90_xmma_gemm_bf16bf16_bf16f32", 0, 500, launch_ts=10)
    t.kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 650, 250,
             G.comm_args("allreduce", 4096 * 1024, 4096 * 1024, seq=1), launch_ts=20, stream=20)
    t.kernel("sm90_xmma_gemm_bf16bf16_bf16f32", 600, 200, launch_ts=110, stream=8)
    t.kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 1000, 100,
             G.comm_args("allreduce", 4096 * 1024, 4096 * 1024, seq=2), launch_ts=120, stream=20)
    return t


def test_each_kernel_is_in_the_step_that_launched_it(tmp_path):
    """Step 1 owns its GEMM and its late all-reduce: communication 250 us, exposed 100 us
    (800-900: step 2's GEMM hides 650-800), busy 750 us, compute 500 us. Step 2 owns a
    GEMM of 200 us and an all-reduce of 100 us, exposed; its busy time is 150 us (600-650
    and 1000-1100: 650-800 is counted once, in step 1). Summed: communication 350 us,
    exposed 200 us, busy 900 us, two collectives: the trace's own figures. (By window,
    step 1's all-reduce fell in step 2 too: 2 collectives there, 3 in all.)"""
    t = P.read_trace(behind().write(tmp_path / "r0.json"))
    assert [(n, lo // US, hi // US) for n, lo, hi in t.steps] == [("ProfilerStep#1", 0, 900),
                                                                  ("ProfilerStep#2", 600, 1100)]
    rep = P.analyze([t], REF)
    s1, s2 = rep.steps
    assert (round(s1.communication_s * 1e6), round(s1.exposed_s * 1e6), round(s1.overlapped_s * 1e6)) == (250, 100, 150)
    assert (round(s2.communication_s * 1e6), round(s2.exposed_s * 1e6)) == (100, 100)
    assert (s1.collectives, s2.collectives) == (1, 1)
    assert round(s1.busy_s * 1e6) == 750 and round(s2.busy_s * 1e6) == 150
    assert round(s1.idle_s * 1e6) == 150 and round(s2.idle_s * 1e6) == 350
    assert round(s1.class_s["compute"] * 1e6) == 500 and round(s2.class_s["compute"] * 1e6) == 200
    totals = TR.trace_totals(t.activities, t.comm_ids())
    assert round(totals.communication_s * 1e6) == 350 and round(totals.exposed_s * 1e6) == 200
    assert round(totals.busy_s * 1e6) == 900
    # each collective row in its own step's savings, once: step 1's is the 250 us one
    part = P.rank_part(t, REF)
    assert [[round(part.rows[i].call.duration_s * 1e6) for i in rows] for rows in part.step_rows] == [[250], [100]]


def test_a_step_summed_over_its_own_kernels_never_exceeds_the_trace():
    """The rule every read keeps: two steps of 0.5 ms busy in a trace of 1 ms busy hold;
    two of 0.6 ms (a kernel counted in both) are linkroof's bug, raised, never printed;
    so are 3 collectives counted in a trace of 2."""
    totals = TR.TraceTotals(busy_s=1e-3, communication_s=5e-4, exposed_s=3e-4, collectives=2)

    def step(busy, comm=2e-4, exposed=1e-4, n=1):
        return TR.StepSummary(0, "s", 0, 10**6, busy, 1e-3 - busy, {}, comm, comm - exposed, exposed, n)

    TR.check_steps([step(5e-4), step(5e-4)], totals)
    with pytest.raises(AssertionError, match="busy time sums to"):
        TR.check_steps([step(6e-4), step(6e-4)], totals)
    with pytest.raises(AssertionError, match="exposed communication"):
        TR.check_steps([step(1e-4, 2e-4, 2e-4), step(1e-4, 2e-4, 2e-4)], totals)
    with pytest.raises(AssertionError, match="collectives"):
        TR.check_steps([step(1e-4), step(1e-4, n=2)], totals)


def test_the_attribution_counts_each_instant_for_one_owner():
    """0-100 owned by 0, 50-150 by 1, 200-300 by 1: 0 gets 100, 1 gets 50 + 100."""
    assert TR._attributed([(0, 100, 0), (50, 150, 1), (200, 300, 1)]) == {0: 100, 1: 150}
    assert TR._attributed([(50, 150, 1), (0, 100, 0)]) == {0: 100, 1: 50}


def test_the_cli_takes_the_clock_tolerance(tmp_path):
    """`trace --clock-tolerance 10` pairs two ranks' all-reduces 5 ms apart (hosts whose
    clocks differ); the default 1 ms leaves them unmatched and says so."""
    import json

    from click.testing import CliRunner

    from linkroof.cli import cli

    files = []
    for r in (0, 1):
        t = G.TraceBuilder(r)
        t.step(1, 0, 10_000)
        t.kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 100 + 5000 * r, 300,
                 G.comm_args("allreduce", 4096 * 1024, 4096 * 1024), launch_ts=10, stream=20)
        files.append(t.write(tmp_path / f"r{r}.json"))
    out = CliRunner().invoke(cli, ["trace", *files, "--json", "--no-save", "--workers", "1"])
    assert out.exit_code == 0, out.output
    d = json.loads(out.stdout)
    assert d["across_ranks"] == [] and d["matching"]["unmatched_calls"] == 2
    out = CliRunner().invoke(cli, ["trace", *files, "--json", "--no-save", "--workers", "1", "--clock-tolerance", "10"])
    d = json.loads(out.stdout)
    [m] = d["across_ranks"]
    assert round(m["skew_s"] * 1e3, 3) == 5.0 and d["matching"]["tolerance_s"] == 0.01


def test_a_ranks_extra_call_just_before_the_partner_is_left_out():
    """Rank 1 has an all-reduce 900 us before rank 0's first (ending 800 us before it:
    within the 1 ms tolerance) and one 5 us after it: the one that overlaps is the
    partner; the early one is unmatched, as is rank 0's last (rank 1's window ended).
    Either rank may be the one the other is aligned to."""
    r0 = [call(0, 0), call(0, 2000), call(0, 4000)]
    r1 = [call(1, -900), call(1, 5), call(1, 2005)]
    for a, b in ((r0, r1), (r0[:2], r1)):
        matched, unmatched = match_calls(a + b)
        assert [starts(m) for m in matched] == [[(0, 0), (1, 5)], [(0, 2000), (1, 2005)]]
        assert sorted(u.ranks for u in unmatched) == sorted([(1,)] + [(0,)] * (len(a) - 2))


def test_a_steps_exposed_part_never_exceeds_its_communication():
    """Two GPUs in one rank's trace. Step 0: an all-reduce 0-100 us on GPU 1, a GEMM beside
    it there. Step 1: an all-reduce 0-100 us alone on GPU 0. Each instant of
    communication is counted once, for step 0: step 1's communication is 0, so its
    exposed part is 0 too (not 100 us), and nothing is negative."""
    from linkroof.roofline.timeline import Activity

    ar1 = Activity("kernel", "ncclDevKernel_AllReduce", 1, 20, 0, 100 * US)
    gemm = Activity("kernel", "sm90_xmma_gemm_bf16", 1, 7, 0, 100 * US)
    ar0 = Activity("kernel", "ncclDevKernel_AllReduce", 0, 20, 0, 100 * US)
    comm = {id(ar1), id(ar0)}
    s0, s1 = TR.step_summaries(0, [("a", 0, 100 * US), ("b", 0, 100 * US)], [ar1, gemm, ar0], [0, 0, 1], comm)
    assert (s0.communication_s, s0.exposed_s) == (100e-6, 0.0)
    assert (s1.communication_s, s1.exposed_s, s1.overlapped_s) == (0.0, 0.0, 0.0)
    totals = TR.trace_totals([ar1, gemm, ar0], comm)
    assert totals.exposed_s == 100e-6  # GPU 0's all-reduce ran alone there


# ------------------------------------------------------------------ collectives that are not NCCL kernels

MULTIMEM = ("void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long, "
            "unsigned int**, unsigned long, unsigned long)")


def vllm_rank(rank, world=2, kernel=MULTIMEM, op="vllm::all_reduce", dims=((4096, 8192), ()), with_op=True):
    """A vLLM tensor-parallel step as its traces show it: a GEMM, then the all-reduce a
    `vllm::all_reduce` op (its `Input Dims` the tensor, its concrete inputs the group's
    name) runs as a symmetric-memory multimem kernel, no NCCL kernel anywhere."""
    t = G.TraceBuilder(rank, world, pgs=(("tp:0", world),))
    t.step(1, 0, 2000)
    t.kernel("sm90_xmma_gemm_bf16bf16_bf16f32", 0, 400, launch_ts=5)
    if with_op:
        t.op(op, 10, 30, {"Input Dims": [list(d) for d in dims], "Input type": ["c10::BFloat16", "str"],
                          "Concrete Inputs": ["", "tp:0"]})
    t.kernel(kernel, 400, 120, launch_ts=20, stream=9)
    return t


def test_a_symmetric_memory_all_reduce_is_a_row_sized_from_its_op_and_placed(tmp_path):
    """The multimem kernel under vllm::all_reduce of a 4096 x 8192 bf16 tensor: an
    all-reduce of 64 MiB on group 'tp:0' (2 ranks, from distributedInfo), labelled
    symmetric memory (not NCCL), placed against the profile's NCCL; matched across
    ranks in time; counted in the step's communication once."""
    files = [vllm_rank(r).write(tmp_path / f"r{r}.json") for r in (0, 1)]
    rep = P.analyze([P.read_trace(f) for f in files], REF)
    assert len(rep.rows) == 2
    r = rep.rows[0]
    c = r.call
    assert (c.collective, c.dtype, c.size_bytes, c.group_size) == ("all_reduce", "bf16", 4096 * 8192 * 2, 2)
    assert c.mechanism == "symmetric memory, NVLS multicast (multimem): not NCCL"
    assert c.group_from == "the op's group 'tp:0' (distributedInfo)" and c.source.startswith("launching op (vllm::")
    assert r.nccl_s and r.placement is not None and r.bound_s  # placed, with NCCL's time at 64 MiB beside it
    assert round(c.busbw / 1e9, 1) == round(64 * 2**20 / 120e-6 / 1e9, 1)  # 2 ranks: busbw = algbw
    [m] = rep.matched
    assert m.ranks == (0, 1) and m.collective == "all_reduce"
    s0 = [s for s in rep.steps if s.rank == 0][0]
    assert s0.collectives == 1 and round(s0.communication_s * 1e6) == 120 and round(s0.exposed_s * 1e6) == 120
    d = r.to_dict()
    assert d["mechanism"].startswith("symmetric memory")


@pytest.mark.parametrize("kernel,op,mech,coll", [
    ("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, "
     "__nv_bfloat16*, int, int)", "_C_custom_ar::all_reduce", "custom all-reduce (vLLM / SGLang", "all_reduce"),
    ("void c10d::symmetric_memory::two_shot_all_reduce_kernel<c10::BFloat16, 8>(...)",
     "symm_mem::two_shot_all_reduce_", "symmetric memory (torch symm_mem", "all_reduce"),
    ("void tensorrt_llm::kernels::oneShotAllReduceKernel<__nv_bfloat16, 8>(...)", "trtllm::allreduce",
     "TensorRT-LLM custom all-reduce", "all_reduce"),
    ("void (anonymous namespace)::multimem_all_gather_kernel<16>(...)", "symm_mem::multimem_all_gather_out",
     "symmetric memory, NVLS multicast", "all_gather"),
])
def test_every_custom_collective_family_is_found_and_labelled(tmp_path, kernel, op, mech, coll):
    dims = ((4096, 8192), ()) if coll == "all_reduce" else ((2048, 8192), ())
    t = P.read_trace(vllm_rank(0, kernel=kernel, op=op, dims=dims).write(tmp_path / "r.json"))
    [c] = t.collectives()
    assert c.mechanism.startswith(mech) and c.collective == coll and c.dtype == "bf16"
    # an all-gather's size is its whole output: the input's 32 MiB from each of 2 ranks
    assert c.size_bytes == 64 * 2**20


def test_without_its_op_a_custom_collective_is_listed_unknown_never_dropped(tmp_path):
    t = P.read_trace(vllm_rank(0, with_op=False).write(tmp_path / "r.json"))
    [c] = t.collectives()
    assert c.collective == "all_reduce" and c.size_bytes is None and c.source == "kernel name"
    assert any("no launching op found" in n for n in c.notes)
    rep = P.analyze([t], REF)
    assert rep.rows[0].nccl_how.startswith("not placed")


def test_a_generic_kernel_is_not_explained_as_nccl_21x():
    from linkroof.roofline.timeline import Activity

    a = Activity("kernel", "ncclDevKernel_Generic", 0, 20, 0, 100)
    c = TR.collective_call(a, {}, None, [], {}, 0)
    assert c.collective is None and any("a generic kernel (NCCL 2.19 or later, or RCCL)" in n for n in c.notes)
    assert not any("2.1x" in n for n in c.notes)


# ------------------------------------------------------------------ bounds past the profile

def test_a_group_larger_than_the_profile_gets_a_labelled_bound_and_no_saving(tmp_path):
    """The bundled profile measured 2 H200s on one node. An 8-rank all-reduce's bound is
    extrapolated: the row says so, and the step's saving at the bound counts none of it;
    a 2-rank one of the same trace shape saves at its bound as before."""
    eight = P.analyze([P.read_trace(G.tier1_rank(0, world=8).write(tmp_path / "r8.json"))], REF)
    two = P.analyze([P.read_trace(G.tier1_rank(0, world=2).write(tmp_path / "r2.json"))], REF)
    ar8 = next(r for r in eight.rows if r.call.collective == "all_reduce")
    assert ar8.call.group_size == 8 and ar8.bound_s
    assert ar8.extrapolated == ("the profile measured 2 GPU(s) on 1 node(s); a group of 8 ranks needs more (on nodes "
                                "like these, 4)")
    assert "the bound is extrapolated" in ar8.nccl_how and ar8.to_dict()["bound_extrapolated"] == ar8.extrapolated
    assert eight.savings[0][1] == 0.0
    assert any("larger than the profile measured" in w for w in eight.warnings)
    ar2 = next(r for r in two.rows if r.call.collective == "all_reduce")
    assert ar2.extrapolated == "" and ar2.to_dict()["bound_extrapolated"] is None
    assert two.savings[0][1] > 0 and not any("larger than the profile" in w for w in two.warnings)


@pytest.mark.parametrize("ranks,label", [(2, ""), (3, "a group of 3 ranks needs more (on nodes like these, 2)"),
                                         (4, "a group of 4 ranks needs more (on nodes like these, 2)")])
def test_past_the_profile_starts_one_rank_past_its_gpus(ranks, label):
    got = P.past_the_profile(REF, ranks)
    assert got == ("" if not label else "the profile measured 2 GPU(s) on 1 node(s); " + label)


def test_another_machines_gpus_are_said_once_for_all_ranks(tmp_path):
    """Four ranks recorded on A100s, placed against the H200 profile: one warning naming
    the four files, not four warnings."""
    files = []
    for r in range(4):
        t = G.tier1_rank(r, world=4)
        t.meta["deviceProperties"] = [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "numSms": 108}]
        files.append(t.write(tmp_path / f"r{r}.json"))
    rep = P.analyze_job(files, REF, workers=1)
    said = [w for w in rep.warnings if "recorded on NVIDIA A100" in w]
    assert len(said) == 1 and said[0].startswith("4 ranks' traces (r0.json, r1.json, r2.json ...) were recorded on")


def test_an_int64_all_to_all_recorded_as_long_is_sized():
    assert TR.c10_dtype("long") == ("int64", 8) and TR.c10_dtype("long int") == ("int64", 8)
