"""Survivors (round d) of mutation testing in linkroof/roofline/traces.py: the sweep
that gives each instant to the lowest owner covering it (_attributed / _Attribution),
the classing of activity rows (_comm_rows: a collective is communication whatever its
kernel's name says), and the exposed pieces of communication (_exposed_pieces: the
parts of a collective with no other work on its device). Each test states one rule at
its boundary (an interval ending where the next starts, zero-length intervals, equal
starts, times before zero), its expected values worked out by hand."""

from linkroof.roofline.timeline import Activity
from linkroof.roofline.traces import (_Attribution, _attributed, _exposed_pieces, step_summaries,
                                      trace_totals)

GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32"
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"


def kernel(name, start, end, device=0, stream=7):
    return Activity("kernel", name, device, stream, start, end)


# ------------------------------------------------------------------ the sweep (_attributed / _Attribution)


def test_an_owner_hidden_all_its_time_by_a_lower_one_gets_no_entry():
    """Owner 1 (0-100 ns) and owner 0 (0-100 ns) open at the same instant and close at
    the same instant: owner 0, the lower, gets all 100 ns; owner 1 gets nothing, not an
    entry of 0 ns (no time passes between the two opens, nor between the two closes)."""
    assert _attributed([(0, 100, 1), (0, 100, 0)]) == {0: 100}


def test_intervals_at_negative_times_are_closed_where_they_end():
    """Owner 0 open from -100 to -50 ns and again from -20 to 0 ns: 50 + 20 = 70 ns; the
    gap from -50 to -20 is nobody's (the first interval is closed at its end, before the
    second opens, however the times compare with the owner's number)."""
    assert _attributed([(-100, -50, 0), (-20, 0, 0)]) == {0: 70}


def test_intervals_before_zero_of_two_owners_each_get_their_own_time():
    """Owner 3 from -1000 to -600 ns, owner 5 from -400 to -100 ns (a gap between):
    400 ns and 300 ns, nothing for the gap."""
    assert _attributed([(-1000, -600, 3), (-400, -100, 5)]) == {3: 400, 5: 300}


def test_a_trace_before_zero_exposes_only_its_collectives_own_time():
    """Two all-reduces at -100..-50 ns and -20..0 ns, no other work: the trace's exposed
    communication is their 50 + 20 = 70 ns (not the 30 ns between them)."""
    a = kernel(ALLREDUCE, -100, -50)
    b = kernel(ALLREDUCE, -20, 0)
    t = trace_totals([a, b], {id(a), id(b)})
    assert round(t.exposed_s * 1e9) == 70
    assert round(t.communication_s * 1e9) == 70


def test_a_fresh_sweep_has_met_nothing():
    """step_summaries tells a class never met from one met by the sweep's `prev` being
    None: a sweep fed nothing has none, one fed an interval has its time."""
    sw = _Attribution()
    assert sw.prev is None
    assert sw.result() == {}
    sw.add(10, 30, 0)
    assert sw.prev == 10
    assert sw.result() == {0: 20}


def test_a_zero_length_interval_is_never_held_open():
    """add(5, 5, 0): no time, so the sweep holds nothing open (it holds only the
    intervals open at once) and has met nothing; its result is empty."""
    sw = _Attribution()
    sw.add(5, 5, 0)
    assert (sw.active, sw.ends, sw.prev) == ({}, [], None)
    assert sw.result() == {}


# ------------------------------------------------------------------ the rows' classes (_comm_rows)


def test_a_collective_whose_kernel_name_says_nothing_is_still_communication():
    """A kernel named `my_kernel` (class `other` by its name) that the trace matched to a
    collective (its id in comm_ids), 1000-3000 ns, alone: 2000 ns of communication, all
    exposed, one collective; the trace's totals agree."""
    k = kernel("my_kernel", 1000, 3000)
    (s,) = step_summaries(0, [("step 0", 1000, 3000)], [k], [0], {id(k)})
    assert round(s.communication_s * 1e9) == 2000
    assert round(s.exposed_s * 1e9) == 2000
    assert {c: round(v * 1e9) for c, v in s.class_s.items()} == {"communication": 2000}
    assert s.collectives == 1
    t = trace_totals([k], {id(k)})
    assert (round(t.communication_s * 1e9), round(t.exposed_s * 1e9), t.collectives) == (2000, 2000, 1)


def test_a_collective_named_like_nothing_beside_a_gemm_is_exposed_only_outside_it():
    """The same `my_kernel` collective (0-1000 ns) beside a GEMM (0-400 ns) on its
    device: communication 1000 ns, exposed 600 ns; the GEMM is compute (400 ns)."""
    k = kernel("my_kernel", 0, 1000)
    g = kernel(GEMM, 0, 400, stream=8)
    (s,) = step_summaries(0, [("step 0", 0, 1000)], [g, k], [0, 0], {id(k)})
    assert {c: round(v * 1e9) for c, v in s.class_s.items()} == {"communication": 1000, "compute": 400}
    assert (round(s.communication_s * 1e9), round(s.exposed_s * 1e9)) == (1000, 600)


# ------------------------------------------------------------------ exposed pieces (_exposed_pieces)


def test_a_zero_length_kernel_does_not_split_an_exposed_piece():
    """An all-reduce 100-300 ns (owner 4) with a zero-length GEMM at 150 ns on its
    device: the zero-length kernel is no work, so the whole 100-300 ns is one exposed
    piece."""
    ar = kernel(ALLREDUCE, 100, 300)
    z = kernel(GEMM, 150, 150, stream=8)
    assert _exposed_pieces([ar, z], [4, 4], [True, False]) == [(100, 300, 4)]


def test_work_starting_with_the_collective_leaves_no_empty_piece_before_it():
    """An all-reduce 100-300 ns (owner 2) and a GEMM 100-200 ns on its device: exposed
    only 200-300 ns, one piece (no (100, 100) piece where the GEMM begins)."""
    ar = kernel(ALLREDUCE, 100, 300)
    g = kernel(GEMM, 100, 200, stream=8)
    assert _exposed_pieces([ar, g], [2, 2], [True, False]) == [(200, 300, 2)]


def test_a_collective_covered_to_its_end_has_no_exposed_piece():
    """An all-reduce 100-300 ns (owner 1) with a GEMM 50-300 ns on its device: it is
    hidden to its last instant, so no piece at all (no (300, 300) piece at its end)."""
    ar = kernel(ALLREDUCE, 100, 300)
    g = kernel(GEMM, 50, 300, stream=8)
    assert _exposed_pieces([g, ar], [1, 1], [False, True]) == []


def test_a_zero_length_collective_has_no_exposed_piece():
    """A zero-length all-reduce at 500 ns with no other work: no time, no piece."""
    ar = kernel(ALLREDUCE, 500, 500)
    assert _exposed_pieces([ar], [0], [True]) == []


def test_exposed_pieces_around_work_touching_end_to_start():
    """An all-reduce 0-1000 ns (owner 0); GEMMs 200-400 and 400-600 ns (touching: one
    piece of work 200-600) and 800-1000 ns: exposed 0-200 and 600-800 ns."""
    ar = kernel(ALLREDUCE, 0, 1000)
    acts = [ar, kernel(GEMM, 200, 400, stream=8), kernel(GEMM, 400, 600, stream=8),
            kernel(GEMM, 800, 1000, stream=8)]
    assert _exposed_pieces(acts, [0] * 4, [True, False, False, False]) == [(0, 200, 0), (600, 800, 0)]
