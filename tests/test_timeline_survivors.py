"""What mutation testing of roofline/timeline.py left unguarded (benchmarks/data/
2026-12-04c-mutation/timeline-open-diffs.txt): the rules of `why_text`, each at the exact
edge where it starts or stops holding (ncu's shares in %, atomics in sectors a second),
with the whole sentence a rule writes; and the columns of `Activities`: extending,
taking and unpickling keep every activity, its bytes, the caller's own (pinned) objects
and the order by start, and it compares equal only to the same activities.

The sentences are written out by hand from the rules' words, never taken from the code."""

import pickle

import pytest

from linkroof.roofline import timeline as T
from linkroof.roofline.timeline import Activities, Activity


def why(**shares):
    """ncu's counters as why_text reads them: 'why:<name>' for each share given."""
    return {f"why:{k}": float(v) for k, v in shares.items()}


# The rules' fixed words, written out by hand.
TENSOR = ": at the compute roof; only fewer FLOPs or a lower precision are left (ncu)"
STRIDED = ("% of each loaded 32-byte sector is used (strided or scattered loads): bound by bytes it does not need; "
           "make the accesses contiguous (ncu)")
ROOF = ": memory-bound at the roof; only moving fewer bytes helps (fusion, a narrower type) (ncu)"
COALESCE = ": coalesce the accesses (a transpose: tile through shared memory) (ncu)"
CORES = ": bound by instructions on the CUDA cores (math or index arithmetic), not by memory (ncu)"
L2 = ": DRAM is not its limit (ncu)"
SPINS = (", no global loads or stores: the kernel spins (a clock or flag loop) or waits on other work; no roof sets "
         "its time (ncu)")
IN_FLIGHT = ": latency-bound; more warps or more independent loads per thread (ncu)"
NEITHER = ": neither at its peak: latency-bound (dependent accesses, too few loads in flight) (ncu)"
ATOMICS = (": atomics to the same addresses wait for each other in L2; spread them (a partial sum a block, then one "
           "atomic a block) (ncu)")


# ------------------------------------------------------------------ why_text: a share ncu did not give


def test_no_dram_share_says_dram_not_read():
    """SM 90 % busy and no DRAM share from ncu: the sentence names the CUDA cores and says 'DRAM not read'."""
    assert T.why_text(why(sm_pct=90)) == "SM pipelines 90% busy, DRAM not read" + CORES


def test_a_share_of_nan_is_no_share():
    """ncu's DRAM share NaN beside SM 90 %: the NaN is not read (never 'DRAM nan%'): 'DRAM not read'."""
    c = {**why(sm_pct=90), "why:dram_pct": float("nan")}
    assert T.why_text(c) == "SM pipelines 90% busy, DRAM not read" + CORES


# ------------------------------------------------------------------ why_text: tensor pipes


def test_tensor_pipes_at_exactly_80_percent_are_at_the_compute_roof():
    """HMMA pipe 80 % busy (the rule's edge), DRAM 30 %: at the compute roof."""
    assert T.why_text(why(tensor_pct=80, dram_pct=30)) == "tensor pipes busy 80% of its time" + TENSOR


@pytest.mark.parametrize("pipe", ["tensor_pct", "tensor_gmma_pct"])
def test_either_tensor_pipe_alone_is_read(pipe):
    """Only one tensor pipe given (HMMA or GMMA), 90 % busy, no other share: at the compute roof."""
    assert T.why_text(why(**{pipe: 90})) == "tensor pipes busy 90% of its time" + TENSOR


# ------------------------------------------------------------------ why_text: DRAM at its peak


def test_dram_at_exactly_80_percent_with_strided_loads_names_the_wasted_sectors():
    """DRAM 80 % of its peak (the edge) and 30 % of each loaded sector used: bound by bytes it does not need."""
    assert T.why_text(why(dram_pct=80, ld_use_pct=30)) == "DRAM 80% of its peak, but only 30" + STRIDED


def test_dram_at_its_peak_with_strided_loads_and_no_sm_share():
    """DRAM 85 %, loads use 30 % of each sector, SM 20 %: the strided-loads sentence, not 'memory-bound at the roof'."""
    assert T.why_text(why(dram_pct=85, ld_use_pct=30, sm_pct=20)) == "DRAM 85% of its peak, but only 30" + STRIDED


def test_loads_using_1_percent_of_each_sector_are_strided():
    """DRAM 90 % and loads use 1 % of each sector (over 0): strided loads."""
    assert T.why_text(why(dram_pct=90, ld_use_pct=1)) == "DRAM 90% of its peak, but only 1" + STRIDED


@pytest.mark.parametrize("ld", [0, 50])
def test_dram_at_its_peak_with_loads_using_0_or_50_percent_is_memory_bound(ld):
    """DRAM 90 % with 0 % (no loads measured) or exactly 50 % of each loaded sector used: not 'strided'
    (that needs over 0 and under 50 %): memory-bound at the roof."""
    assert T.why_text(why(dram_pct=90, ld_use_pct=ld)) == "DRAM 90% of its peak" + ROOF


def test_dram_at_exactly_80_percent_with_no_load_share_is_memory_bound_at_the_roof():
    """DRAM 80 % of its peak (the edge), no load share: memory-bound at the roof."""
    assert T.why_text(why(dram_pct=80)) == "DRAM 80% of its peak" + ROOF


def test_dram_at_its_peak_without_a_load_share_is_memory_bound():
    """DRAM 85 %, SM 40 %, no load share: memory-bound at the roof (no load figure is said)."""
    assert T.why_text(why(dram_pct=85, sm_pct=40)) == "DRAM 85% of its peak" + ROOF


# ------------------------------------------------------------------ why_text: uncoalesced


def test_uncoalesced_loads_with_sectors_a_request():
    """DRAM 40 %, loads use 30 % of each sector at 8 sectors a request: uncoalesced, both figures said."""
    assert T.why_text(why(dram_pct=40, ld_use_pct=30, ld_sectors_per_req=8)) == (
        "uncoalesced: loads use 30% of each 32-byte sector (8 sectors a load request), DRAM 40% of its peak" + COALESCE)


def test_uncoalesced_loads_without_sectors_a_request_say_none():
    """DRAM 40 %, loads use 30 % of each sector, no sectors-a-request figure (or 0): nothing said of it."""
    want = "uncoalesced: loads use 30% of each 32-byte sector, DRAM 40% of its peak" + COALESCE
    assert T.why_text(why(dram_pct=40, ld_use_pct=30)) == want
    assert T.why_text(why(dram_pct=40, ld_use_pct=30, ld_sectors_per_req=0)) == want


def test_uncoalesced_stores_alone_and_with_loads():
    """Stores using 25 % of each sector are uncoalesced alone; with loads at 1 % both are named, loads first."""
    assert T.why_text(why(dram_pct=40, st_use_pct=25)) == (
        "uncoalesced: stores use 25% of each 32-byte sector, DRAM 40% of its peak" + COALESCE)
    assert T.why_text(why(dram_pct=40, ld_use_pct=1, st_use_pct=25)) == (
        "uncoalesced: loads use 1% of each 32-byte sector and stores use 25% of each 32-byte sector, "
        "DRAM 40% of its peak" + COALESCE)


def test_accesses_using_exactly_half_of_each_sector_are_not_uncoalesced():
    """DRAM 40 %, SM 30 %, occupancy 60 %, loads and stores each using 50 % of each sector: not uncoalesced
    (under 50 % is): neither at its peak."""
    assert T.why_text(why(dram_pct=40, sm_pct=30, occupancy_pct=60, ld_use_pct=50, st_use_pct=50)) == (
        "DRAM 40% of its peak, SM 30%" + NEITHER)


# ------------------------------------------------------------------ why_text: SM pipelines


def test_sm_at_exactly_80_percent_is_bound_by_instructions():
    """SM 80 % busy (the edge), DRAM 20 %: bound by instructions on the CUDA cores."""
    assert T.why_text(why(sm_pct=80, dram_pct=20)) == "SM pipelines 80% busy, DRAM 20% of its peak" + CORES


# ------------------------------------------------------------------ why_text: served from L2


def test_l2_hits_at_exactly_80_percent_are_served_from_l2():
    """L2 hit 80 % (the edge), DRAM 40 %: served from L2."""
    assert T.why_text(why(l2_hit_pct=80, dram_pct=40)) == "served from L2 (80% hits), DRAM 40% of its peak" + L2


def test_l2_hits_without_a_dram_share_are_served_from_l2():
    """L2 hit 90 %, no DRAM share: served from L2, 'DRAM not read'."""
    assert T.why_text(why(l2_hit_pct=90)) == "served from L2 (90% hits), DRAM not read" + L2


@pytest.mark.parametrize("dram", [50, 60])
def test_l2_hits_with_dram_at_half_its_peak_or_more_are_not_served_from_l2(dram):
    """L2 hit 90 % but DRAM at 50 % or 60 % of its peak (DRAM must be under 50 %), SM 30 %, occupancy 70 %:
    neither at its peak."""
    assert T.why_text(why(l2_hit_pct=90, dram_pct=dram, sm_pct=30, occupancy_pct=70)) == (
        f"DRAM {dram}% of its peak, SM 30%" + NEITHER)


# ------------------------------------------------------------------ why_text: waiting, not working


def test_sm_at_1_percent_is_not_waiting():
    """SM 1 % and DRAM 0 %, no loads or stores: waiting needs SM under 1 %; neither at its peak."""
    assert T.why_text(why(sm_pct=1, dram_pct=0)) == "DRAM 0% of its peak, SM 1%" + NEITHER


@pytest.mark.parametrize("dram", [1, 5])
def test_dram_at_1_percent_or_more_is_not_waiting(dram):
    """SM 0 % but DRAM 1 % or 5 % of its peak (waiting needs DRAM under 1 %): neither at its peak."""
    assert T.why_text(why(sm_pct=0, dram_pct=dram)) == f"DRAM {dram}% of its peak, SM 0%" + NEITHER


def test_no_sm_work_and_no_dram_share_is_waiting():
    """SM 0.4 %, no DRAM share, no loads or stores: waiting, not working."""
    assert T.why_text(why(sm_pct=0.4)) == "waiting, not working: SM 0%, DRAM not read" + SPINS


# ------------------------------------------------------------------ why_text: little work in flight


def test_occupancy_of_exactly_half_is_not_little_work_in_flight():
    """Occupancy 50 % (little work needs under 50 %), DRAM 30 %, SM 20 %: neither at its peak."""
    assert T.why_text(why(occupancy_pct=50, dram_pct=30, sm_pct=20)) == "DRAM 30% of its peak, SM 20%" + NEITHER


def test_high_occupancy_is_not_little_work_in_flight():
    """Occupancy 70 %, DRAM 30 %, SM 20 %: neither at its peak."""
    assert T.why_text(why(occupancy_pct=70, dram_pct=30, sm_pct=20)) == "DRAM 30% of its peak, SM 20%" + NEITHER


def test_little_work_in_flight_says_the_sm_share_where_given():
    """Occupancy 30 %, DRAM 20 %, SM 40 %: little work in flight, SM 40 % said."""
    assert T.why_text(why(occupancy_pct=30, dram_pct=20, sm_pct=40)) == (
        "little work in flight: 30% of warp slots active, DRAM 20% of its peak, SM 40%" + IN_FLIGHT)


def test_little_work_in_flight_without_an_sm_share_says_none():
    """Occupancy 30 %, DRAM 20 %, no SM share: little work in flight, no SM figure."""
    assert T.why_text(why(occupancy_pct=30, dram_pct=20)) == (
        "little work in flight: 30% of warp slots active, DRAM 20% of its peak" + IN_FLIGHT)


# ------------------------------------------------------------------ why_text: neither at its peak


def test_neither_at_its_peak_without_an_sm_share_says_none():
    """DRAM 30 %, occupancy 70 %, no SM share: neither at its peak, no SM figure."""
    assert T.why_text(why(dram_pct=30, occupancy_pct=70)) == "DRAM 30% of its peak" + NEITHER


def test_neither_at_its_peak_without_a_dram_share():
    """Occupancy 70 % and SM 30 %, no DRAM share: 'DRAM not read, SM 30%', neither at its peak."""
    assert T.why_text(why(occupancy_pct=70, sm_pct=30)) == "DRAM not read, SM 30%" + NEITHER


# ------------------------------------------------------------------ why_text: contended atomics


def test_atomic_sectors_alone_are_contended_atomics():
    """2,000,000 atomic sectors (no reductions) in 1 ms is 2.0 G/s, SM 10 %, DRAM 5 %: contended atomics."""
    c = {"atom_sectors": 2e6, "gpu_time_s": 1e-3, **why(sm_pct=10, dram_pct=5, occupancy_pct=90)}
    assert T.why_text(c) == ("contended atomics: 2,000,000 atomic and reduction sectors to L2 a call at only 2.0 G/s, "
                             "SM 10%, DRAM 5%" + ATOMICS)


def test_one_atomic_sector_is_contended_atomics():
    """1 atomic sector a call in 1 ms (0.0 G/s), SM 10 %, DRAM 5 %: still contended atomics."""
    c = {"atom_sectors": 1.0, "gpu_time_s": 1e-3, **why(sm_pct=10, dram_pct=5, occupancy_pct=90)}
    assert T.why_text(c) == ("contended atomics: 1 atomic and reduction sectors to L2 a call at only 0.0 G/s, "
                             "SM 10%, DRAM 5%" + ATOMICS)


@pytest.mark.parametrize("busy", [{}, {"gpu_time_s": 0.0}])
def test_atomics_without_a_gpu_time_are_not_judged(busy):
    """2,000,000 atomic sectors but no GPU time (absent or 0 s): no rate, so no 'contended atomics';
    occupancy 90 %, SM 10 %, DRAM 5 %: neither at its peak."""
    c = {"atom_sectors": 2e6, **busy, **why(sm_pct=10, dram_pct=5, occupancy_pct=90)}
    assert T.why_text(c) == "DRAM 5% of its peak, SM 10%" + NEITHER


def test_atomics_at_exactly_20_g_sectors_a_second_are_not_contended():
    """19,531,250 reduction sectors in 0.9765625 ms is exactly 20 G/s: contention needs under 20 G/s;
    occupancy 90 %, SM 10 %, DRAM 5 %: neither at its peak."""
    c = {"red_sectors": 19_531_250.0, "gpu_time_s": 0.0009765625, **why(sm_pct=10, dram_pct=5, occupancy_pct=90)}
    assert T.why_text(c) == "DRAM 5% of its peak, SM 10%" + NEITHER


@pytest.mark.parametrize("shares, want", [
    (dict(sm_pct=50, dram_pct=5, occupancy_pct=90), "DRAM 5% of its peak, SM 50%" + NEITHER),
    (dict(sm_pct=10, dram_pct=50, occupancy_pct=90), "DRAM 50% of its peak, SM 10%" + NEITHER),
    (dict(sm_pct=10, dram_pct=60, occupancy_pct=90), "DRAM 60% of its peak, SM 10%" + NEITHER),
])
def test_slow_atomics_beside_sm_or_dram_at_half_their_peak_are_not_contended(shares, want):
    """2,000,000 reduction sectors in 1 ms (2 G/s) but SM or DRAM at 50 % or more of its peak: the atomics
    are not the limit (contention needs both under 50 %)."""
    c = {"red_sectors": 2e6, "gpu_time_s": 1e-3, **why(**shares)}
    assert T.why_text(c) == want


# ------------------------------------------------------------------ Activities


def act(name, start_ns, end_ns, corr, nbytes=0, kind="kernel", device=0, stream=7):
    return Activity(kind, name, device, stream, start_ns, end_ns, corr, bytes=nbytes)


def test_activities_equal_only_the_same_activities():
    """Activities of a and b equal [a, b]; not [a] (one fewer), not [a, c] (c another activity), not [b, a]."""
    a, b, c = act("gemm", 0, 10, 1), act("copy", 10, 20, 2, 64, "memcpy"), act("gemm", 30, 40, 3)
    cols = Activities.of([a, b])
    assert cols == [a, b]
    assert cols != [a]
    assert cols != [a, c]
    assert cols != [b, a]
    assert Activities.of([a]) != [c]


def test_no_activities_equal_no_string_and_no_number():
    """No activities equal the empty list, but neither '' nor b'' (a string is no list of activities), nor 0 or None."""
    empty = Activities()
    assert empty == []
    assert empty != ""
    assert empty != b""
    assert empty != 0
    assert empty != None  # noqa: E711 (the == of Activities is what is tested)


def test_extend_keeps_every_activity_and_its_bytes():
    """Kernel 0-10 ns and a 64 B copy 10-20 ns, extended with a 128 B copy 30-40 ns and a kernel 40-50 ns of the
    same kind and name as the first ones: the four activities in order, each with its bytes; 2 distinct."""
    a, b = act("gemm", 0, 10, 1), act("copy", 10, 20, 2, 64, "memcpy")
    c, d = act("copy", 30, 40, 3, 128, "memcpy"), act("gemm", 40, 50, 4)
    cols = Activities.of([a, b])
    rest = Activities()
    for x in (c, d):
        rest.add(x.kind, x.name, x.device, x.stream, x.start_ns, x.end_ns, x.correlation, x.grid, x.block, x.bytes,
                 x.copy_kind)
    cols.extend(rest)
    assert list(cols) == [a, b, c, d]
    assert [x.bytes for x in cols] == [0, 64, 128, 0]
    assert [x.correlation for x in cols] == [1, 2, 3, 4]
    assert len(cols) == 4 and cols == [a, b, c, d]
    assert len(cols.table) == 2
    assert repr(cols) == "Activities(4 activities, 2 distinct)"


def test_extend_keeps_the_other_columns_pinned_objects_at_their_new_places():
    """Two of ours, then two pinned of the other's (a collective's kernels): at places 2 and 3 they are the
    caller's very objects, and ours at 0 and 1 stay ours; the collective's ids still mark places 2 and 3."""
    a, b = act("gemm", 0, 10, 1), act("gemm", 10, 20, 2)
    c, d = act("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 20, 30, 3), act("ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                                                                           30, 40, 4)
    cols = Activities.of([a, b])
    cols.extend(Activities.of([c, d]))
    assert cols[0] is a and cols[1] is b and cols[2] is c and cols[3] is d
    assert [x is y for x, y in zip(cols, [a, b, c, d])] == [True] * 4
    assert list(cols.comm_mask({id(c), id(d)})) == [0, 0, 1, 1]


def test_extend_with_earlier_starts_orders_them_again():
    """A kernel at 100 ns, extended with one at 50 ns: by start, row 1 then row 0; the starts 50 then 100 ns."""
    cols = Activities.of([act("gemm", 100, 200, 1)])
    assert cols.by_start() is None  # one activity: in order already
    cols.extend(Activities.of([act("gemm", 50, 60, 2)]))
    assert list(cols.by_start()) == [1, 0]
    assert list(cols.starts_by_start()) == [50, 100]


def test_take_keeps_the_callers_objects_and_makes_the_rest():
    """Taking rows 2 and 0 of [kernel, pinned collective, kernel made in the columns]: the row-0 object is the
    caller's; row 2's is made equal to what was added; only the collective's id marks anything."""
    a, b = act("gemm", 0, 10, 1), act("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 10, 20, 2)
    cols = Activities.of([a, b])
    cols.add("kernel", "gemm", 0, 7, 20, 30, 3, (0, 0, 0), (0, 0, 0), 0, "")
    out = cols.take([2, 0, 1])
    assert out == [act("gemm", 20, 30, 3), a, b]
    assert out[1] is a and out[2] is b
    assert list(out.comm_mask({id(b)})) == [0, 0, 1]


def test_unpickled_columns_take_new_activities_and_know_their_kinds():
    """Pickled and read back, two kernels of one kind take a third of that kind (still 1 distinct) and a copy
    (2 distinct), all four in order."""
    a, b = act("gemm", 0, 10, 1), act("gemm", 10, 20, 2)
    cols = pickle.loads(pickle.dumps(Activities.of([a, b])))
    cols.add("kernel", "gemm", 0, 7, 20, 30, 3, (0, 0, 0), (0, 0, 0), 0, "")
    assert repr(cols) == "Activities(3 activities, 1 distinct)"
    cols.add("memcpy", "copy", 0, 7, 30, 40, 4, (0, 0, 0), (0, 0, 0), 256, "HtoD")
    assert repr(cols) == "Activities(4 activities, 2 distinct)"
    assert cols == [a, b, act("gemm", 20, 30, 3), Activity("memcpy", "copy", 0, 7, 30, 40, 4, bytes=256,
                                                           copy_kind="HtoD")]
