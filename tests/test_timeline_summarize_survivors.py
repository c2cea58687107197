"""What mutation testing of roofline/timeline.py left unguarded in `summarize` (and the
helpers it leans on): every field of the summary it returns, per call over more than one
call (so that a figure multiplied by the calls instead of divided shows), in its order
(pieces and the critical path largest first, kernels by their time), with the fields a
caller passes through (`host_of`, `source`, `rank`, `host_calls`, also with `classes=`);
the busiest GPU and the note of several GPUs; the idle piece at its edge (none when the
GPU never waits, 1 ns when it waits 1 ns); the intervals kept for the figure (in ns from
the first call's start, capped at 2000); a class never on the critical path; the zeros of
host_causes without a call; why_text's edge of a share (100.5 % is one, 101 % is not);
and the columns of `Activities` (an index past the end, ties in start, taken rows).

Every figure is worked out by hand from the activities' nanoseconds (US = 1000 ns), and
every sentence is written out by hand, never taken from the code under test."""

import pytest

from linkroof.roofline import timeline as T
from linkroof.roofline.timeline import Activities, Activity
from linkroof.schema import TimelineSummary

US = 1_000  # ns in a microsecond


def gemm(start_ns, end_ns, corr=0, device=0, stream=7, name="sm90_xmma_gemm", grid=(0, 0, 0), block=(0, 0, 0)):
    return Activity("kernel", name, device, stream, start_ns, end_ns, corr, grid, block)


def nccl(start_ns, end_ns, device=0, stream=8):
    return Activity("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", device, stream, start_ns, end_ns)


def h2d(start_ns, end_ns, nbytes=0, device=0, stream=8, corr=0):
    return Activity("memcpy", "Memcpy HtoD", device, stream, start_ns, end_ns, corr, bytes=nbytes, copy_kind="HtoD")


# ------------------------------------------------------------------ no activity


def test_calls_without_activity_are_a_summary_of_nothing_that_says_so():
    """Two calls (at 0 and 10 us) with no activity, from a trace of rank 2: 2 calls, rank 2, source 'kineto',
    no figure, and the note that no GPU activity was recorded."""
    t = T.summarize([], [0, 10 * US], source="kineto", rank=2)
    assert t == TimelineSummary(source="kineto", calls=2, rank=2,
                                notes=("no GPU activity was recorded during the calls",))
    assert (t.source, t.calls, t.rank) == ("kineto", 2, 2)
    assert t.notes == ("no GPU activity was recorded during the calls",)


# ------------------------------------------------------------------ what the caller passes through


def _launched_before_the_call():
    """One call from 100 us: kernel 1 launched at 100 us runs 110-120 us; kernel 2, launched by the host at
    50 us (before the call began: an earlier call's work), runs 130-140 us."""
    acts = [gemm(110 * US, 120 * US, corr=1, name="mykernel"), gemm(130 * US, 140 * US, corr=2, name="other_kernel")]
    return acts, [100 * US], {1: 100 * US, 2: 50 * US}


def test_a_kernel_launched_before_the_first_call_is_not_the_calls_even_if_it_runs_inside_it():
    """host_of places each kernel by its host launch: only kernel 1 (10 us) is the call's: busy 10 us, 1 activity
    a call, the one kernel named; the source and rank given are kept."""
    acts, starts, host_of = _launched_before_the_call()
    t = T.summarize(acts, starts, host_of, source="kineto", rank=3)
    assert t.busy_s == pytest.approx(10e-6)
    assert t.span_s == pytest.approx(20e-6)  # 100-120 us
    assert t.activities_per_call == 1.0
    assert [k.name for k in t.kernels] == ["mykernel"]
    assert (t.source, t.rank, t.calls) == ("kineto", 3, 1)


def test_classes_given_keep_host_of_source_rank_and_the_host_calls():
    """The same call with kernel 1's class given by counters ('compute', "ncu's counters"), its host launch
    recorded at 100-101 us: kernel 1 alone is the call's (busy 10 us), classed as given; source 'kineto', rank 3;
    the host summary: 1 launch a call, and the 10 us idle (100-110 us) before kernel 1 ended by its launch."""
    acts, starts, host_of = _launched_before_the_call()
    hcs = [T.HostCall("launch", "cudaLaunchKernel", 100 * US, 101 * US, 1, 1)]
    t = T.summarize(acts, starts, host_of, source="kineto", rank=3, host_calls=hcs,
                    classes={"mykernel": ("compute", "ncu's counters")})
    assert t.busy_s == pytest.approx(10e-6)
    assert t.activities_per_call == 1.0
    assert [(k.name, k.kernel_class, k.class_basis) for k in t.kernels] == [("mykernel", "compute", "ncu's counters")]
    assert (t.source, t.rank, t.calls) == ("kineto", 3, 1)
    assert t.host is not None
    assert t.host.launches_per_call == 1.0
    assert t.host.idle_causes_s == (("launch", pytest.approx(10e-6)),)


# ------------------------------------------------------------------ devices, streams and their note


def test_two_gpus_take_the_busiest_ones_pieces_and_say_so():
    """GPU0 busy 0-10 us, GPU1 busy 0-4 us: the pieces are GPU0's (10 us of compute, no idle), devices (0, 1),
    2 streams, and the note names 2 GPUs and GPU0."""
    t = T.summarize([gemm(0, 10 * US, device=0), gemm(0, 4 * US, device=1)], [0])
    assert t.device == 0
    assert t.devices == (0, 1)
    assert t.streams == 2
    assert t.pieces == (("compute", pytest.approx(10e-6)),)
    assert t.notes == ("the call ran on 2 GPUs; the pieces are GPU0's (the busiest), and exposure is counted on "
                       "each GPU by itself",)


def test_the_busiest_gpu_is_chosen_by_busy_time_not_by_number():
    """GPU3 busy 0-2 us, GPU5 busy 0-1 us (GPU5 has the larger number): GPU3's pieces, 2 us of compute."""
    t = T.summarize([gemm(0, 2 * US, device=3), gemm(0, 1 * US, device=5)], [0])
    assert t.device == 3
    assert t.devices == (3, 5)
    assert t.pieces == (("compute", pytest.approx(2e-6)),)


def test_one_gpu_with_two_streams_has_no_note():
    """One GPU, kernels on streams 7 (0-10 us) and 9 (0-5 us): 2 streams, device 0, devices (0,), no note."""
    t = T.summarize([gemm(0, 10 * US, stream=7), gemm(0, 5 * US, stream=9)], [0])
    assert t.streams == 2
    assert t.device == 0
    assert t.devices == (0,)
    assert t.notes == ()


# ------------------------------------------------------------------ the idle piece at its edge


def test_back_to_back_kernels_have_no_idle_piece():
    """Kernels 0-10 us and 10-20 us: 20 us of compute, and no idle piece at all (not one of 0 s)."""
    t = T.summarize([gemm(0, 10 * US), gemm(10 * US, 20 * US)], [0])
    assert t.pieces == (("compute", pytest.approx(20e-6)),)


def test_one_ns_of_idle_is_an_idle_piece():
    """Kernels 0-10 us and 10 us + 1 ns to 20 us + 1 ns: 20 us of compute and an idle piece of 1 ns."""
    t = T.summarize([gemm(0, 10 * US), gemm(10 * US + 1, 20 * US + 1)], [0])
    assert t.pieces == (("compute", pytest.approx(20e-6)), ("idle", pytest.approx(1e-9)))


# ------------------------------------------------------------------ pieces and the critical path, largest first


def test_pieces_and_critical_path_are_largest_first():
    """One stream: a host-to-device copy 0-2 us, the GPU idle 2-12 us, a GEMM 12-17 us. Pieces, largest first:
    idle 10 us, compute 5 us, transfer 2 us (neither by name nor smallest first); the critical path walks back
    from the GEMM (5 us) over the 10 us gap to the copy (2 us): the same three, in the same order."""
    t = T.summarize([h2d(0, 2 * US, stream=7), gemm(12 * US, 17 * US)], [0])
    want = (("idle", pytest.approx(10e-6)), ("compute", pytest.approx(5e-6)), ("transfer", pytest.approx(2e-6)))
    assert t.pieces == want
    assert t.critical_path_s == want


def test_critical_path_over_two_calls_is_per_call():
    """Two calls at 0 and 20 us, each a copy (+0-2 us) then a GEMM (+12-17 us) on one stream: a call's critical
    path is idle 10 us, compute 5 us, transfer 2 us (the sum of both calls over 2)."""
    acts = [h2d(0, 2 * US, stream=7), gemm(12 * US, 17 * US), h2d(20 * US, 22 * US, stream=7), gemm(32 * US, 37 * US)]
    t = T.summarize(acts, [0, 20 * US])
    assert t.critical_path_s == (("idle", pytest.approx(10e-6)), ("compute", pytest.approx(5e-6)),
                                 ("transfer", pytest.approx(2e-6)))


# ------------------------------------------------------------------ communication, alone and at once, per call


def test_communication_overlap_and_pairs_are_per_call_over_two_calls():
    """Two calls at 0 and 20 us; in each, on GPU0: a GEMM +0-10 us (stream 7), an all-reduce +6-14 us (stream 8),
    a copy +2-4 us (stream 9, always beside the GEMM). A call: communication 8 us, 4 us of it beside the GEMM
    (6-10), 4 us alone (10-14); the GEMM alone 4 us (0-2, 4-6); the copy never alone (0 s); communication with
    compute 4 us, compute with transfer 2 us."""
    acts = []
    for t0 in (0, 20 * US):
        acts += [gemm(t0, t0 + 10 * US), nccl(t0 + 6 * US, t0 + 14 * US), h2d(t0 + 2 * US, t0 + 4 * US, stream=9)]
    t = T.summarize(acts, [0, 20 * US])
    assert t.calls == 2
    assert t.communication_s == pytest.approx(8e-6)
    assert t.overlapped_communication_s == pytest.approx(4e-6)
    assert t.exposed_communication_s == pytest.approx(4e-6)
    assert t.class_alone_s == (("communication", pytest.approx(4e-6)), ("transfer", 0.0),
                               ("compute", pytest.approx(4e-6)))
    assert t.overlap_s == (("communication", "compute", pytest.approx(4e-6)),
                           ("compute", "transfer", pytest.approx(2e-6)))


# ------------------------------------------------------------------ what shortening a class could save


def test_a_class_never_on_the_critical_path_saves_nothing_and_says_why():
    """A GEMM 0-10 us (stream 7) and a copy 2-5 us beside it (stream 8): the copy is never on the critical path,
    so freeing it saves 0 s, 'not on the critical path'; the GEMM's 10 us on the path less the copy's stream
    (3 us) could save 7 us."""
    t = T.summarize([gemm(0, 10 * US), h2d(2 * US, 5 * US)], [0])
    assert t.shorten_s == (
        ("transfer", 0.0, "not on the critical path: other work ran beside all of it"),
        ("compute", pytest.approx(7e-6),
         "its 10.0 us a call on the critical path, less what the other work's longest stream would still take"))


# ------------------------------------------------------------------ the kernels by name


def test_kernel_groups_by_time_with_their_launch_figures_per_call():
    """Two calls (0 and 100 us). A GEMM (grid 4x2x1, block 256) twice a call: 1, 2 us, then 3, 4 us; a copy once a
    call: 6 us of 1000 B, then 8 us of 3000 B. The copy (14 us in all) comes before the GEMM (10 us): 1 launch,
    7 us, median 8 us (the upper of two), 2000 B a call; the GEMM: 2 launches, 5 us a call, median 3 us (the
    upper middle of 1, 2, 3, 4 us), its grid and block, no bytes."""
    acts = [gemm(0, 1 * US, grid=(4, 2, 1), block=(256, 1, 1)), gemm(2 * US, 4 * US, grid=(4, 2, 1), block=(256, 1, 1)),
            h2d(5 * US, 11 * US, 1000),
            gemm(100 * US, 103 * US, grid=(4, 2, 1), block=(256, 1, 1)),
            gemm(104 * US, 108 * US, grid=(4, 2, 1), block=(256, 1, 1)), h2d(110 * US, 118 * US, 3000)]
    t = T.summarize(acts, [0, 100 * US])
    copy, mm = t.kernels
    assert (copy.name, copy.kind, mm.name, mm.kind) == ("Memcpy HtoD", "memcpy", "sm90_xmma_gemm", "kernel")
    assert copy.launches_per_call == 1.0
    assert copy.time_per_call_s == pytest.approx(7e-6)
    assert copy.median_s == pytest.approx(8e-6)
    assert copy.bytes_per_call == 2000.0
    assert mm.launches_per_call == 2.0
    assert mm.time_per_call_s == pytest.approx(5e-6)
    assert mm.median_s == pytest.approx(3e-6)
    assert mm.grid == (4, 2, 1)
    assert mm.block == (256, 1, 1)
    assert mm.bytes_per_call == 0.0


# ------------------------------------------------------------------ the intervals drawn


def test_intervals_drawn_are_ns_from_the_first_calls_start_with_their_class():
    """Calls at 1000 and 1100 us: a GEMM 1000-1010 us (stream 7), a copy 1005-1008 us (stream 8), a GEMM
    1100-1110 us: drawn as (device, stream, class, start, end) in ns from 1000 us, by start."""
    acts = [gemm(1_000 * US, 1_010 * US), h2d(1_005 * US, 1_008 * US), gemm(1_100 * US, 1_110 * US)]
    t = T.summarize(acts, [1_000 * US, 1_100 * US])
    assert t.intervals == ((0, 7, "compute", 0, 10_000), (0, 8, "transfer", 5_000, 8_000),
                           (0, 7, "compute", 100_000, 110_000))


def test_at_most_2000_intervals_are_drawn():
    """2001 kernels of 5 ns, one every 10 ns, in one call at 0: the first 2000 are drawn, the last of them
    19990-19995 ns; the 2001st (20000 ns) is not."""
    acts = [gemm(10 * i, 10 * i + 5) for i in range(2001)]
    t = T.summarize(acts, [0])
    assert len(t.intervals) == 2000
    assert t.intervals[-1] == (0, 7, "compute", 19_990, 19_995)


# ------------------------------------------------------------------ host_causes without a call


def test_no_call_has_no_launch_figures():
    """No call recorded: 0 s inside a launch call and 0 s of host time a launch (no figure, not 1 s, not None)."""
    h = T.host_causes([], [])
    assert h.launch_api_s == 0.0
    assert h.host_per_launch_s == 0.0


# ------------------------------------------------------------------ why_text: the edge of a share


ROOF = ": memory-bound at the roof; only moving fewer bytes helps (fusion, a narrower type) (ncu)"


def test_a_share_of_100_5_percent_is_still_a_share():
    """ncu's DRAM share 100.5 % (its rounding, at the edge kept): read, DRAM 100 % (rounded half to even)."""
    assert T.why_text({"why:dram_pct": 100.5}) == "DRAM 100% of its peak" + ROOF


def test_a_share_of_101_percent_alone_is_left_out_and_said_with_no_space_before():
    """ncu's DRAM share 101 % and nothing else: no rule is met, so the sentence is only the bracket saying the
    101 % is not a share, with no space before it."""
    assert T.why_text({"why:dram_pct": 101.0}) == (
        "[ncu's DRAM throughput 101%: not a share (outside 0-100 %), left out]")


# ------------------------------------------------------------------ Activities


def test_an_index_at_the_length_or_before_the_start_is_out_of_range():
    """Two activities: index 2 and index -3 are out of range, said as such; -2 is the first."""
    a, b = gemm(0, 10, corr=1), gemm(10, 20, corr=2)
    cols = Activities.of([a, b])
    with pytest.raises(IndexError, match="^activity index out of range$"):
        cols[2]
    with pytest.raises(IndexError, match="^activity index out of range$"):
        cols[-3]
    assert cols[-2] is a


def test_activities_starting_together_are_in_order_already():
    """Two activities both starting at 100 ns (ties, as read): in order already (None), the starts as they are."""
    cols = Activities.of([gemm(100, 200, corr=1), gemm(100, 150, corr=2)])
    assert cols.by_start() is None
    assert list(cols.starts_by_start()) == [100, 100]


def test_taken_rows_out_of_start_order_are_ordered_again():
    """Columns of starts 50 and 100 ns, taken as rows 1 then 0 (starts 100, 50): by start, row 1 then row 0, the
    starts 50 then 100 ns."""
    cols = Activities.of([gemm(50, 60, corr=1), gemm(100, 200, corr=2)])
    out = cols.take([1, 0])
    assert list(out.by_start()) == [1, 0]
    assert list(out.starts_by_start()) == [50, 100]
