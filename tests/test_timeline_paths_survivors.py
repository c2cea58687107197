"""What mutation testing of roofline/timeline.py left unguarded in its path rules: the
critical path (`critical_path`: which activity precedes which, ties on one stream,
idle before, between and after, an empty or zero-length timeline), the most each class
could save (`shorten_bounds`, and `_shorten_why`'s sentence per call), and the sweep's
pairs and pieces (`overlap`: two classes starting or ending at one instant).

Each test builds a small timeline by hand; every figure is worked out from its inputs
(in ns: 1 us = 1000 ns) and every sentence written out from the rules' words, never
taken from the code."""

import pytest

from linkroof.roofline import timeline as T

US = 1_000  # ns in a microsecond
NOT_ON_PATH = "not on the critical path: other work ran beside all of it"
LESS = ", less what the other work's longest stream would still take"


def kernel(name, start_ns, end_ns, stream=7, device=0, corr=0):
    return T.Activity("kernel", name, device, stream, start_ns, end_ns, corr)


def gemm(start_ns, end_ns, stream=7, device=0):
    return kernel("sm90_xmma_gemm", start_ns, end_ns, stream, device)  # compute


def nccl(start_ns, end_ns, stream=8, device=0):
    return kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", start_ns, end_ns, stream, device)  # communication


def elementwise(start_ns, end_ns, stream=8, device=0):
    return kernel("vectorized_elementwise_kernel", start_ns, end_ns, stream, device)  # memory


def memset(start_ns, end_ns, stream=8, device=0):
    return T.Activity("memset", "Memset", device, stream, start_ns, end_ns)  # memory, by the record's kind


# ------------------------------------------------------------------ critical_path: no work


def test_no_activity_is_a_path_of_idle_over_the_window():
    """No activity in 10-30 us: the path is 20 us idle and no activity; a window of 0 ns is 0 ns idle."""
    assert T.critical_path([], 10 * US, 30 * US) == ({"idle": 20_000}, [])
    assert T.critical_path([], 5 * US, 5 * US) == ({"idle": 0}, [])


def test_only_zero_length_activities_are_no_path():
    """A 0 ns memset at 10 us, the window 10-30 us: no work, so the path is 20 us idle and no activity."""
    assert T.critical_path([memset(10 * US, 10 * US)], 10 * US, 30 * US) == ({"idle": 20_000}, [])


def test_a_zero_length_memset_before_a_kernel_is_no_step_of_the_path():
    """A 0 ns memset at 0 us (stream 8), GEMM B 5-10 us (stream 7), window 0-10 us: the path is B alone,
    5 us of compute after 5 us idle; the memset is neither on it nor 0 ns of memory."""
    b = gemm(5 * US, 10 * US)
    on, path = T.critical_path([memset(0, 0), b], 0, 10 * US)
    assert path == [b]
    assert on == {"compute": 5_000, "idle": 5_000}


# ------------------------------------------------------------------ critical_path: the chain


def test_a_chain_on_one_stream_is_the_path_and_work_beside_it_is_not():
    """GEMM A 0-10 us then GEMM B 10-30 us on stream 7, NCCL C 12-20 us on stream 8, window 0-30 us:
    the path is B then A, 30 us of compute, no idle (A starts at the window's start, B right after A)."""
    a, b, c = gemm(0, 10 * US), gemm(10 * US, 30 * US), nccl(12 * US, 20 * US)
    on, path = T.critical_path([a, b, c], 0, 30 * US)
    assert path == [b, a]
    assert on == {"compute": 30_000}


def test_a_chain_whose_predecessor_is_the_first_to_end():
    """GEMM A 0-10 us then GEMM B 10-30 us, NCCL C 5-8 us on another stream, window 0-30 us: C ended before A,
    so B's predecessor is A (the last to end by B's start): B then A, 30 us of compute."""
    a, b, c = gemm(0, 10 * US), gemm(10 * US, 30 * US), nccl(5 * US, 8 * US)
    on, path = T.critical_path([a, b, c], 0, 30 * US)
    assert path == [b, a]
    assert on == {"compute": 30_000}


def test_idle_between_and_after_the_chain_adds_up():
    """GEMM A 0-10 us, GEMM B 15-30 us, window 0-40 us: B then A, 10 + 15 = 25 us of compute, and
    5 us idle between A and B plus 10 us after B: 15 us idle."""
    a, b = gemm(0, 10 * US), gemm(15 * US, 30 * US)
    on, path = T.critical_path([a, b], 0, 40 * US)
    assert path == [b, a]
    assert on == {"compute": 25_000, "idle": 15_000}


def test_a_gap_of_one_ns_is_idle():
    """GEMM A 0-10 us, GEMM B from 10 us + 1 ns to 30 us, window 0-30 us: 29 999 ns of compute, 1 ns idle."""
    a, b = gemm(0, 10 * US), gemm(10 * US + 1, 30 * US)
    on, path = T.critical_path([a, b], 0, 30 * US)
    assert path == [b, a]
    assert on == {"compute": 29_999, "idle": 1}


def test_idle_before_the_first_activity_counts_from_lo():
    """Window from 5 us; GEMM A 10-20 us alone: 10 us of compute and 5 us idle before it (10 us - 5 us);
    with the window to 25 us, 5 us more idle after it: 10 us idle."""
    a = gemm(10 * US, 20 * US)
    assert T.critical_path([a], 5 * US, 20 * US) == ({"compute": 10_000, "idle": 5_000}, [a])
    assert T.critical_path([a], 5 * US, 25 * US) == ({"idle": 10_000, "compute": 10_000}, [a])


def test_among_activities_ending_together_the_same_streams_is_the_predecessor():
    """GEMM X1 0-10 us (stream 7), NCCL Y 0-10 us (stream 8), GEMM X2 10-20 us (stream 7): X1 and Y both
    end at 10 us, X2's start; the predecessor is X1 on X2's own stream, so the path is X2 then X1, 20 us
    of compute, and the NCCL kernel is not on it."""
    x1, y, x2 = gemm(0, 10 * US), nccl(0, 10 * US), gemm(10 * US, 20 * US)
    on, path = T.critical_path([x1, y, x2], 0, 20 * US)
    assert path == [x2, x1]
    assert on == {"compute": 20_000}


# ------------------------------------------------------------------ shorten_bounds


def test_a_kernel_alone_could_save_all_its_time():
    """GEMM 0-10 us alone in a 0-10 us window, 10 us on the path: compute could save 10 us, and no other
    class is named (none ran)."""
    got = T.shorten_bounds([gemm(0, 10 * US)], 0, 10 * US, {"compute": 10_000})
    assert got == [("compute", 10_000, "its 10.0 us on the critical path")]


def test_other_work_beside_the_path_caps_the_saving():
    """GEMM 0-100 us (stream 7) on the path, NCCL 20-40 us on stream 8 beside it, window 0-100 us: freeing
    the GEMM still leaves the NCCL kernel's 20 us, so compute could save at most 100 - 20 = 80 us;
    communication is not on the path and could save nothing."""
    acts = [gemm(0, 100 * US), nccl(20 * US, 40 * US)]
    assert T.shorten_bounds(acts, 0, 100 * US, {"compute": 100_000}) == [
        ("communication", 0, NOT_ON_PATH),
        ("compute", 80_000, "its 100.0 us on the critical path, less what the other work's longest stream "
                            "(20.0 us) would still take")]


def test_a_zero_length_activity_beside_the_path_takes_no_time():
    """GEMM 0-100 us on the path, a 0 ns memset at 50 us on stream 8: the memset leaves nothing to take,
    so compute could save all 100 us; memory (the memset) is not on the path, having taken no time."""
    acts = [gemm(0, 100 * US), memset(50 * US, 50 * US)]
    assert T.shorten_bounds(acts, 0, 100 * US, {"compute": 100_000}) == [
        ("compute", 100_000, "its 100.0 us on the critical path"),
        ("memory", 0, "not on the critical path: its work took no time inside the call")]


def test_other_work_as_long_as_the_window_leaves_no_saving():
    """GEMM 0-50 us then NCCL 50-100 us on stream 7 (50 us each on the path), an elementwise kernel
    0-100 us on stream 8: whichever is freed, the elementwise kernel's 100 us stay, so each could save 0 us."""
    acts = [gemm(0, 50 * US), elementwise(0, 100 * US), nccl(50 * US, 100 * US, stream=7)]
    less = ", less what the other work's longest stream (100.0 us) would still take"
    assert T.shorten_bounds(acts, 0, 100 * US, {"communication": 50_000, "compute": 50_000}) == [
        ("communication", 0, "its 50.0 us on the critical path" + less),
        ("compute", 0, "its 50.0 us on the critical path" + less),
        ("memory", 0, NOT_ON_PATH)]


def test_other_work_exactly_filling_the_rest_of_the_window_does_not_cap_the_saving():
    """GEMM 0-60 us then NCCL 60-100 us on stream 7, an elementwise kernel 0-40 us on stream 8: freeing the
    GEMM leaves 40 us a stream (100 - 40 = 60 us, all its time), freeing the NCCL kernel leaves the GEMM's
    60 us (100 - 60 = 40 us, all its time): each could save all it has, and no 'less' is said."""
    acts = [gemm(0, 60 * US), nccl(60 * US, 100 * US, stream=7), elementwise(0, 40 * US)]
    assert T.shorten_bounds(acts, 0, 100 * US, {"compute": 60_000, "communication": 40_000}) == [
        ("communication", 40_000, "its 40.0 us on the critical path"),
        ("compute", 60_000, "its 60.0 us on the critical path"),
        ("memory", 0, NOT_ON_PATH)]


# ------------------------------------------------------------------ _shorten_why


def test_a_class_on_the_path_in_no_call_keeps_the_calls_reason():
    """One call, memory on the path 0 ns: the reason is that call's own, word for word."""
    assert T._shorten_why([(0, NOT_ON_PATH)], 0, 1) == NOT_ON_PATH


def test_one_ns_on_the_path_is_on_it():
    """One call, 1 ns on the path and 1 ns to save: 'its 1 ns a call on the critical path', nothing less."""
    assert T._shorten_why([(1, "its 1 ns on the critical path")], 1, 1) == "its 1 ns a call on the critical path"


def test_a_saving_under_the_time_on_the_path_says_what_stays():
    """Two calls, 100 us on the path each (200 us), savings 100 us and 80 us (180 us): 100 us a call,
    less what the other work would still take."""
    per_call = [(100_000, "its 100.0 us on the critical path"),
                (80_000, "its 100.0 us on the critical path, less what the other work's longest stream "
                         "(20.0 us) would still take")]
    assert T._shorten_why(per_call, 200_000, 2) == "its 100.0 us a call on the critical path" + LESS


def test_summarize_says_the_saving_per_call_and_why():
    """Two calls (from 0 and 200 us), each a GEMM of 100 us on stream 7 with a 20 us NCCL kernel beside it:
    compute could save 80 us a call, its 100 us a call on the path less the NCCL kernel's; communication is
    on the path in neither call and could save nothing."""
    acts = [gemm(0, 100 * US), nccl(20 * US, 40 * US), gemm(200 * US, 300 * US), nccl(220 * US, 240 * US)]
    t = T.summarize(acts, [0, 200 * US])
    assert [(c, why) for c, _, why in t.shorten_s] == [
        ("communication", NOT_ON_PATH), ("compute", "its 100.0 us a call on the critical path" + LESS)]
    assert [s for _, s, _ in t.shorten_s] == [0.0, pytest.approx(80e-6)]


# ------------------------------------------------------------------ overlap


def test_two_classes_at_once_are_one_pair_for_their_common_time():
    """GEMM 0-100 us (stream 7) and NCCL 20-40 us (stream 8) on GPU 0: the pair (communication, compute) ran
    20 us at once, compute 80 us alone, communication never alone; pieces 80 us compute, 20 us both."""
    o = T.overlap([gemm(0, 100 * US), nccl(20 * US, 40 * US)])[0]
    assert o.pairs == {("communication", "compute"): 20_000}
    assert o.class_alone == {"compute": 80_000}
    assert o.pieces == {"compute": 80_000, "communication + compute": 20_000}


def test_two_classes_starting_and_ending_together_are_never_alone():
    """GEMM 0-10 us (stream 7) and an elementwise kernel 0-10 us (stream 8) on GPU 0: 10 us both at once,
    neither class alone for any time, and no piece of one class alone."""
    o = T.overlap([gemm(0, 10 * US), elementwise(0, 10 * US)])[0]
    assert o.busy == 10_000
    assert o.pieces == {"compute + memory": 10_000}
    assert o.class_busy == {"compute": 10_000, "memory": 10_000}
    assert o.class_alone == {}
    assert o.pairs == {("compute", "memory"): 10_000}


def test_work_of_no_time_is_not_said_to_run_beside_other_work():
    """A 0 ns memset at 50 us (a class's only activity) beside a GEMM 0-100 us on the path: the
    memset could save nothing, and the reason is that it took no time, not that other work
    ran beside it. A memset 120-130 us, outside the 0-100 us window, is the same."""
    for m in (memset(50 * US, 50 * US), memset(120 * US, 130 * US)):
        got = T.shorten_bounds([gemm(0, 100 * US), m], 0, 100 * US, {"compute": 100_000})
        assert got[1] == ("memory", 0, "not on the critical path: its work took no time inside the call"), got
    # 1 ns of it inside the window: it ran, beside the path
    got = T.shorten_bounds([gemm(0, 100 * US), memset(50 * US, 50 * US + 1)], 0, 100 * US, {"compute": 100_000})
    assert got[1] == ("memory", 0, NOT_ON_PATH)
