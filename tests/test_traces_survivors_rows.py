"""Survivors of mutation testing in linkroof/roofline/traces.py's per-activity rows and
their checks: _comm_rows (each activity's class and whether it is a collective),
check_steps (no step sum above the trace's own), exposed_s, _union_length, open_ops and
CommOps.open_at (the host ops open when a kernel was launched), ActivityIndex (the
activities overlapping a window). Each test pins what the real code says for a small
hand-built input, exact values written out by hand."""

import pytest

from linkroof.roofline import traces as TR
from linkroof.roofline.timeline import Activity
from linkroof.roofline.traces import ActivityIndex, CommOp, CommOps, StepSummary, TraceTotals, check_steps, open_ops

US = 1000  # ns

GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32"
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"


def kernel(name, start, end, device=0, stream=7):
    return Activity("kernel", name, device, stream, start, end)


# ------------------------------------------------------------------ _comm_rows: classes and collectives


def test_rows_of_a_gemm_a_collective_and_a_host_copy():
    """A GEMM (compute), an all-reduce kernel that is a collective, a host-to-device copy
    (transfer): the classes are numbered as met, compute 0, communication 1, transfer 2;
    only the all-reduce is marked a collective; with no one-rank group, no 'memory'
    class is added."""
    gemm = kernel(GEMM, 0, 100)
    ar = kernel(ALLREDUCE, 50, 150, stream=20)
    copy = Activity("memcpy", "Memcpy HtoD (Pageable -> Device)", 0, 7, 200, 300, copy_kind="HtoD")
    mask, cls, names = TR._comm_rows(TR.Activities.of([gemm, ar, copy]), {id(ar)})
    assert (list(mask), list(cls), names) == ([0, 1, 0], [0, 1, 2], ["compute", "communication", "transfer"])


def test_rows_with_no_collective_kernel_still_name_communication_once():
    """Two GEMMs and no collective: one class, compute (0), then communication (1)
    named once at the end; no activity is a collective, no 'memory' class."""
    a, b = kernel(GEMM, 0, 100), kernel(GEMM, 100, 200)
    mask, cls, names = TR._comm_rows(TR.Activities.of([a, b]), set())
    assert (list(mask), list(cls), names) == ([0, 0], [0, 0], ["compute", "communication"])


def test_rows_of_a_one_rank_groups_collective_are_memory():
    """A GEMM, a collective of a one-rank group (a local copy: memory, not
    communication) and a real all-reduce: classes compute 0, communication 1 (the
    all-reduce kernels' names say so), memory 2, each named once; the one-rank group's
    kernel is class 2 and not marked a collective in the mask."""
    gemm = kernel(GEMM, 0, 100)
    local = kernel(ALLREDUCE, 100, 150, stream=20)
    ar = kernel(ALLREDUCE, 200, 300, stream=20)
    mask, cls, names = TR._comm_rows(TR.Activities.of([gemm, local, ar]), {id(ar)}, {id(local)})
    assert (list(mask), list(cls), names) == ([0, 0, 1], [0, 2, 1], ["compute", "communication", "memory"])


def test_rows_of_a_one_rank_group_beside_a_memset_share_the_memory_class():
    """A memset (memory, class 0) and a one-rank group's collective: the collective's
    class is that same memory class 0; communication is 1; nothing is named twice."""
    memset = Activity("memset", "Memset (Device)", 0, 7, 0, 10)
    local = kernel(ALLREDUCE, 20, 40, stream=20)
    mask, cls, names = TR._comm_rows(TR.Activities.of([memset, local]), set(), {id(local)})
    assert (list(mask), list(cls), names) == ([0, 0], [0, 0], ["memory", "communication"])


def test_a_one_rank_groups_collective_is_memory_time_in_its_step():
    """One step 0-400 us: a GEMM 0-100 us, a one-rank group's all-reduce 100-150 us (a
    local copy: 50 us of memory), a real all-reduce 200-300 us (100 us of
    communication, all exposed). Both collectives are counted (2)."""
    gemm = kernel(GEMM, 0, 100 * US)
    local = kernel(ALLREDUCE, 100 * US, 150 * US, stream=20)
    ar = kernel(ALLREDUCE, 200 * US, 300 * US, stream=20)
    (s,) = TR.step_summaries(0, [("s", 0, 400 * US)], [gemm, local, ar], [0, 0, 0], {id(ar)}, {id(local)})
    assert s.class_s == {"communication": 100e-6, "compute": 100e-6, "memory": 50e-6}
    assert (s.communication_s, s.exposed_s, s.collectives) == (100e-6, 100e-6, 2)


# ------------------------------------------------------------------ check_steps


def step(busy=5e-4, comm=2e-4, exposed=1e-4, n=1):
    return StepSummary(0, "s", 0, 10**6, busy, 1e-3 - busy, {}, comm, comm - exposed, exposed, n)


TOTALS = TraceTotals(busy_s=1e-3, communication_s=5e-4, exposed_s=3e-4, collectives=2)
BUG = ": a kernel counted in two steps (a linkroof bug: please report it)"


def test_check_steps_names_the_trace_and_the_communication_breach():
    """Two steps of 0.3 ms communication each (0.6 ms) in a trace of 0.5 ms: the message
    names the trace file and 'communication', with both sums."""
    with pytest.raises(AssertionError) as e:
        check_steps([step(comm=3e-4), step(comm=3e-4)], TOTALS, "r0.json")
    assert str(e.value) == "r0.json: the steps' communication sums to 0.0006, more than the trace's 0.0005" + BUG


def test_check_steps_names_the_collectives_breach_with_no_trace_named():
    """Steps counting 1 + 2 = 3 collectives in a trace of 2: the message says
    'collectives', 3 and 2; with no trace named it begins with an empty name."""
    with pytest.raises(AssertionError) as e:
        check_steps([step(), step(n=2)], TOTALS)
    assert str(e.value) == ": the steps' collectives sums to 3, more than the trace's 2" + BUG


def test_check_steps_names_the_busy_and_exposed_breaches():
    """0.6 + 0.6 ms busy in a trace of 1 ms: 'busy time'; 0.2 + 0.2 ms exposed in a
    trace of 0.3 ms: 'exposed communication'."""
    with pytest.raises(AssertionError) as e:
        check_steps([step(6e-4), step(6e-4)], TOTALS, "t")
    assert str(e.value) == "t: the steps' busy time sums to 0.0012, more than the trace's 0.001" + BUG
    with pytest.raises(AssertionError) as e:
        check_steps([step(1e-4, 2e-4, 2e-4), step(1e-4, 2e-4, 2e-4)], TOTALS, "t")
    assert str(e.value) == "t: the steps' exposed communication sums to 0.0004, more than the trace's 0.0003" + BUG


def test_check_steps_allows_exactly_one_ns_per_step_plus_one_of_rounding():
    """One step 2 ns busier than its trace of 1 us (rounding of ns to s: 1 ns per step
    plus one, 2 ns here) holds: exactly on the allowance is not a breach."""
    totals = TraceTotals(busy_s=1e-6, communication_s=0.0, exposed_s=0.0, collectives=0)
    check_steps([step(busy=1e-6 + 2e-9, comm=0.0, exposed=0.0, n=0)], totals)


def test_check_steps_refuses_more_than_the_rounding_allowance():
    """One step 2.5 ns busier than its trace of 1 us: more than the 2 ns one step's
    rounding allows, a breach."""
    totals = TraceTotals(busy_s=1e-6, communication_s=0.0, exposed_s=0.0, collectives=0)
    with pytest.raises(AssertionError, match="busy time"):
        check_steps([step(busy=1e-6 + 2.5e-9, comm=0.0, exposed=0.0, n=0)], totals)


# ------------------------------------------------------------------ exposed_s


def call(start, end, device=0):
    return TR.CollectiveCall(0, ALLREDUCE, device, 20, start, end, "all_reduce", None, None, None, None, 2, "unknown")


def test_exposed_part_with_work_touching_and_overlapping_the_call():
    """An all-reduce 100-200 ns; GEMMs 50-100 (ends as it starts), 150-170 (beside it),
    200-250 (starts as it ends), one 120-140 on another GPU, and the all-reduce's own
    kernel: only 150-170 hides it, 80 ns of 100 exposed."""
    ar = kernel(ALLREDUCE, 100, 200, stream=20)
    acts = [kernel(GEMM, 50, 100), kernel(GEMM, 150, 170), kernel(GEMM, 200, 250), kernel(GEMM, 120, 140, device=1), ar]
    assert TR.exposed_s(call(100, 200), acts, {id(ar)}) == pytest.approx(80e-9, abs=1e-18)


# ------------------------------------------------------------------ _union_length


def test_union_length_of_overlapping_touching_and_empty_intervals():
    """[0, 10) and [5, 20) cover 20 ns, not 25; [20, 30) touches them (30 in all); [40,
    40) and [60, 50) are empty; [50, 55) inside [45, 70) adds 25: 55 ns."""
    starts = [0, 5, 20, 40, 45, 50, 60]
    ends = [10, 20, 30, 40, 70, 55, 50]
    assert TR._union_length(starts, ends, range(7)) == 55


def test_union_length_of_some_rows_only():
    """Rows 0 and 2 only of [0, 10), [5, 100), [20, 30): two pieces, 10 + 10 = 20 ns."""
    assert TR._union_length([0, 5, 20], [10, 100, 30], [0, 2]) == 20
    assert TR._union_length([0, 5, 20], [10, 100, 30], []) == 0
    assert TR._union_length([7], [9], [0]) == 2


def test_trace_busy_time_is_the_union_of_its_kernels():
    """Kernels 0-10 us and 5-20 us on one GPU, an all-reduce 30-40 us on another stream, an empty one at
    50 us: busy 20 + 10 = 30 us, not 35; communication (the all-reduce at 30-40 us) 10 us."""
    ar = kernel(ALLREDUCE, 30 * US, 40 * US, stream=20)
    acts = [kernel(GEMM, 0, 10 * US), kernel(GEMM, 5 * US, 20 * US), ar, kernel(GEMM, 50 * US, 50 * US)]
    t = TR.trace_totals(acts, {id(ar)})
    assert (round(t.busy_s * 1e9), round(t.communication_s * 1e9), t.collectives) == (30 * US, 10 * US, 1)


# ------------------------------------------------------------------ open_ops and CommOps.open_at

C10D = CommOp("c10d::allreduce_", 1, 100, 200)
RPC = CommOp("record_param_comms", 1, 120, 150)
OTHER = CommOp("c10d::allreduce_", 2, 100, 200)  # the same span, on another thread


@pytest.mark.parametrize("ops", [[C10D, RPC, OTHER], CommOps([C10D, RPC, OTHER])], ids=["list", "CommOps"])
def test_ops_open_at_their_start_and_end_on_their_thread(ops):
    """On thread 1, the c10d op 100-200 ns is open at 100 (its start) and at 200 (its
    end), record_param_comms 120-150 too at 130; thread 2's op at the same times is not
    thread 1's; nothing is open at 201, nor on thread 3."""
    assert open_ops(ops, 1, 100) == [C10D]
    assert open_ops(ops, 1, 200) == [C10D]
    assert open_ops(ops, 1, 130) == [C10D, RPC]
    assert open_ops(ops, 1, 150) == [C10D, RPC]
    assert open_ops(ops, 2, 150) == [OTHER]
    assert open_ops(ops, 1, 99) == [] and open_ops(ops, 1, 201) == []
    assert open_ops(ops, 3, 150) == []


def test_open_at_an_op_begun_before_time_zero():
    """An op from -100 ns to 100 ns (begun before the trace's zero) is open at 50 ns,
    beside one of 40-60 ns; at 150 ns neither is."""
    early, short = CommOp("c10d::allreduce_", 1, -100, 100), CommOp("record_param_comms", 1, 40, 60)
    ops = CommOps([short, early])
    assert ops.open_at(1, 50) == [early, short]
    assert ops.open_at(1, 150) == []


def test_open_at_an_op_ending_exactly_then():
    """Ops 0-10 and 5-30 ns on one thread: at 10 ns both are open (the first ends then),
    at 11 only the second."""
    a, b = CommOp("c10d::allreduce_", 4, 0, 10), CommOp("c10d::broadcast_", 4, 5, 30)
    ops = CommOps([b, a])
    assert ops.open_at(4, 10) == [a, b]
    assert ops.open_at(4, 11) == [b]


# ------------------------------------------------------------------ ActivityIndex.overlapping


def names(acts):
    return [a.name for a in acts]


def test_no_activity_overlaps_any_window_of_an_empty_trace():
    """A trace with no activity: nothing overlaps 0-100 ns."""
    assert ActivityIndex([]).overlapping(0, 100) == []


def test_overlapping_with_activities_read_out_of_order():
    """Activities read as a 200-300, b 0-100, c 50-150 ns (not in order of start): the
    window 120-250 holds c and a (in order of start), not b (it ended at 100)."""
    acts = [kernel("a", 200, 300), kernel("b", 0, 100), kernel("c", 50, 150)]
    idx = ActivityIndex(acts)
    assert names(idx.overlapping(120, 250)) == ["c", "a"]
    assert names(idx.overlapping(0, 60)) == ["b", "c"]
    assert idx.overlapping(120, 250)[0] is acts[2]  # the caller's own object


def test_overlapping_an_activity_begun_before_time_zero():
    """a -100 to 100 ns (begun before zero) and b 0-10 ns: the window 50-60 overlaps a
    only."""
    idx = ActivityIndex([kernel("a", -100, 100), kernel("b", 0, 10)])
    assert names(idx.overlapping(50, 60)) == ["a"]


def test_an_activity_before_the_window_in_the_searched_range_is_left_out():
    """a 0-100 and b 0-10 ns: the window 50-60 overlaps a only; b ended long before it."""
    idx = ActivityIndex([kernel("a", 0, 100), kernel("b", 0, 10)])
    assert names(idx.overlapping(50, 60)) == ["a"]


def test_activities_touching_the_window_do_not_overlap_it():
    """a 0-10, b 10-20, c 20-30 ns: the window 10-20 holds b only (a ends as it opens, c
    starts as it closes); the window 0-10 holds a only."""
    idx = ActivityIndex([kernel("a", 0, 10), kernel("b", 10, 20), kernel("c", 20, 30)])
    assert names(idx.overlapping(10, 20)) == ["b"]
    assert names(idx.overlapping(0, 10)) == ["a"]
    assert names(idx.overlapping(5, 25)) == ["a", "b", "c"]
