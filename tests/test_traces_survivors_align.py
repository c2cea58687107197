"""Survivors of mutation testing in traces' _by_alignment and _by_seq (reached through
match_calls): which calls pair up across ranks, the reference rank the others are aligned
to, the exact clock-tolerance boundaries, that no call is ever in two matched calls, and
the Unmatched entries' keys, ranks (an unknown rank listed as none) and reasons, in the
order they are listed (rank by rank, an unknown rank counting as -1)."""

import pytest

from linkroof.roofline.traces import CollectiveCall, Unmatched, match_calls

US = 1000  # ns
TOL = 1_000_000  # the default clock tolerance, 1 ms, in ns
SIZE = 1 << 20
W = ("all_reduce", SIZE, "bf16")
KEY = ("aligned", "0") + W  # an unpaired call of rank r: its group, collective, size, type; no index
NO_OVERLAP = ("no call of its group, collective, size and type on the other ranks overlaps it in time (their "
              "windows may not cover it)")
ALONE = "no other rank has a call of this group, collective, size and type"
SEQ_ALONE = "no other rank has this call (its window may not cover it)"


def call(rank, t_us, dur_us=100, size=SIZE, seq=None, ranks=(), start_ns=None, end_ns=None):
    s = t_us * US if start_ns is None else start_ns
    e = s + dur_us * US if end_ns is None else end_ns
    return CollectiveCall(rank, "ncclDevKernel_AllReduce", 0, 20, s, e, "all_reduce", "bf16", None, None, size, 8,
                          "kernel args", "0", seq, group_ranks=tuple(ranks))


def sets(matched):
    """Each matched call as (key, its members' (rank, start in us)); an unknown rank is -1 there."""
    return [(m.key, sorted((x[0], x[3] // US) for x in m.members)) for m in matched]


def U(key, ranks, why=NO_OVERLAP):
    return Unmatched(key, ranks, why)


def listed(r):
    """An Unmatched entry's ranks for a call of rank r: an unknown rank lists none."""
    return (r,) if r is not None else ()


# ---------------------------------------------------------------- a kind on one rank only


@pytest.mark.parametrize("other", [1, None])
def test_a_kind_on_one_rank_only_is_unmatched_with_its_rank(other):
    """Rank 0 and the other rank each run one all-reduce, of different sizes: no kind is on
    two ranks, so each is unmatched alone, keyed by group and kind, listing its own rank
    (none for an unknown rank)."""
    matched, unmatched = match_calls([call(0, 0), call(other, 0, size=2 * SIZE)])
    assert matched == []
    assert len(unmatched) == 2
    assert set(unmatched) == {U(KEY, (0,), ALONE),
                              U(("aligned", "0", "all_reduce", 2 * SIZE, "bf16"), listed(other), ALONE)}


# ---------------------------------------------------------------- the reference rank


def test_the_reference_is_the_rank_with_the_most_calls():
    """Rank 1 has two calls (0 and 1000 us), rank 0 one (1000 us): rank 1 is the reference,
    so the sets are indexed by rank 1's calls; rank 0's call pairs with rank 1's second
    (it overlaps it; the first is 900 us away), and rank 1's first is left alone as set 0."""
    matched, unmatched = match_calls([call(0, 1000), call(1, 0), call(1, 1000)])
    assert sets(matched) == [(KEY + (1,), [(0, 1000), (1, 1000)])]
    assert unmatched == [U(KEY + (0,), (1,))]


def test_a_tie_in_calls_makes_the_lowest_rank_the_reference():
    """Ranks 0 and 1 have two calls each, rank 1's first starting first: rank 0 (the lowest)
    is the reference. Rank 1's first call pairs with rank 0's first; rank 1's second (5000 us)
    ends long before rank 0's second (10000 us) starts, so it is unmatched, and rank 0's
    second is set 1, alone."""
    calls = [call(1, 0), call(1, 5000), call(0, 10), call(0, 10000)]
    matched, unmatched = match_calls(calls)
    assert sets(matched) == [(KEY + (0,), [(0, 10), (1, 0)])]
    assert unmatched == [U(KEY, (1,)), U(KEY + (1,), (0,))]


def test_an_unknown_rank_counts_as_rank_minus_one_in_a_tie():
    """An unknown rank (None) and rank 0, two calls each, rank 0 first: the unknown rank,
    counted as -1, is the lowest and the reference. Rank 0's second call (5000 us) is
    unmatched; the reference's second (10000 us) is set 1, listing no rank."""
    calls = [call(0, 0), call(0, 5000), call(None, 10), call(None, 10000)]
    matched, unmatched = match_calls(calls)
    assert sets(matched) == [(KEY + (0,), [(-1, 10), (0, 0)])]
    assert [m.ranks for m in matched] == [(0,)]
    assert unmatched == [U(KEY, (0,)), U(KEY + (1,), ())]


def test_rank_minus_one_and_an_unknown_rank_tie_and_keep_their_time_order():
    """A trace that says rank -1 (the reader keeps any int) beside one that names no rank:
    both count as -1, so neither is lower and the one whose calls start first (rank -1) is
    the reference, as min keeps the first of equals; the unknown rank's second call
    (10000 us) is then the unmatched one, and rank -1's second is set 1."""
    calls = [call(-1, 0), call(-1, 5000), call(None, 10), call(None, 10000)]
    matched, unmatched = match_calls(calls)
    assert sets(matched) == [(KEY + (0,), [(-1, 0), (-1, 10)])]
    assert unmatched == [U(KEY, ()), U(KEY + (1,), (-1,))]


# ---------------------------------------------------------------- the other ranks, in rank order


@pytest.mark.parametrize("first,second", [(2, 1), (0, None), (-1, None)],
                         ids=["2-before-1", "0-before-unknown", "minus1-before-unknown"])
def test_the_other_ranks_are_aligned_in_rank_order(first, second):
    """Rank 5 has three calls (0, 1000, 2000 us), the reference; two other ranks have one
    call each long after them (`first` at 50000 us, `second` at 60000 us): each is unmatched,
    listed rank by rank (an unknown rank as -1; equal ones in time order), before the
    reference's three lone calls."""
    calls = [call(5, 0), call(5, 1000), call(5, 2000), call(first, 50000), call(second, 60000)]
    matched, unmatched = match_calls(calls)
    assert matched == []
    order = sorted([first, second], key=lambda r: r if r is not None else -1)  # stable: -1 before None
    assert unmatched == [U(KEY, listed(order[0])), U(KEY, listed(order[1])),
                         U(KEY + (0,), (5,)), U(KEY + (1,), (5,)), U(KEY + (2,), (5,))]


# ---------------------------------------------------------------- the clock tolerance's edges


@pytest.mark.parametrize("side", ["before", "after"])
def test_kernels_exactly_the_tolerance_apart_still_pair(side):
    """Rank 1's kernel ends exactly 1 ms (the tolerance) before rank 0's starts, or starts
    exactly 1 ms after it ends: within the tolerance, one call; skew 1100 us, no transfer
    (they do not overlap); the later starter is the last rank."""
    other = call(1, 900) if side == "before" else call(1, 3100)
    matched, unmatched = match_calls([call(0, 2000), other])
    assert unmatched == []
    start = 900 if side == "before" else 3100
    assert sets(matched) == [(KEY + (0,), sorted([(0, 2000), (1, start)]))]
    m = matched[0]
    assert round(m.skew_s * 1e9) == 1_100_000
    assert m.transfer_s == 0
    assert m.last_rank == (0 if side == "before" else 1)


@pytest.mark.parametrize("side", ["before", "after"])
def test_kernels_a_nanosecond_beyond_the_tolerance_do_not_pair(side):
    """One nanosecond farther than the tolerance: never one call; each unmatched."""
    if side == "before":
        other = call(1, 0, start_ns=899_999, end_ns=999_999)  # ends 1 ms + 1 ns before 2000 us
    else:
        other = call(1, 0, start_ns=3_100_001, end_ns=3_200_001)  # starts 1 ms + 1 ns after 2100 us
    matched, unmatched = match_calls([call(0, 2000), other])
    assert matched == []
    assert unmatched == [U(KEY, (1,)), U(KEY + (0,), (0,))]


# ---------------------------------------------------------------- calls that end before the reference's


@pytest.mark.parametrize("other", [1, None])
def test_a_call_long_before_the_reference_call_is_unmatched_and_the_next_pairs(other):
    """Rank 0 (three calls: 5000, 6000, 7000 us) is the reference; the other rank's call at
    0 us ends long before 5000 us: unmatched, with its rank (none if unknown); its call at
    5000 us pairs with rank 0's first; rank 0's other two are lone sets 1 and 2."""
    calls = [call(0, 5000), call(0, 6000), call(0, 7000), call(other, 0), call(other, 5000)]
    matched, unmatched = match_calls(calls)
    me = other if other is not None else -1
    assert sets(matched) == [(KEY + (0,), sorted([(0, 5000), (me, 5000)]))]
    assert unmatched == [U(KEY, listed(other)), U(KEY + (1,), (0,)), U(KEY + (2,), (0,))]


def test_a_call_is_never_reused_after_an_earlier_one_is_skipped():
    """Rank 1's second call is long (1000 to 4500 us) and pairs with rank 0's second; its
    third (1200 to 1300 us) pairs with nothing and ends long before rank 0's third (5000 us)
    starts: unmatched. Rank 1's long call, already in set 1, must not pair again with rank
    0's third, though it ends within the tolerance of it; sets 2 and 3 stay alone."""
    r0 = [call(0, 0), call(0, 1000), call(0, 5000), call(0, 9000)]
    r1 = [call(1, 0), call(1, 1000, dur_us=3500), call(1, 1200)]
    matched, unmatched = match_calls(r0 + r1)
    assert sets(matched) == [(KEY + (0,), [(0, 0), (1, 0)]), (KEY + (1,), [(0, 1000), (1, 1000)])]
    assert unmatched == [U(KEY, (1,)), U(KEY + (2,), (0,)), U(KEY + (3,), (0,))]


# ---------------------------------------------------------------- a better-fitting next call


@pytest.mark.parametrize("other", [1, None])
def test_a_call_whose_next_fits_better_is_unmatched(other):
    """Rank 0's first call is 2000 to 2100 us; the other rank's calls are 1500 to 1600 us
    (400 us away, within the tolerance) and 2010 to 2110 us (overlapping): the second fits
    better and pairs (skew 10 us, transfer 90 us); the first is unmatched, with its rank
    (none if unknown). It is the other rank's last call, with none after it."""
    calls = [call(0, 2000), call(0, 10000), call(0, 20000), call(other, 1500), call(other, 2010)]
    matched, unmatched = match_calls(calls)
    me = other if other is not None else -1
    assert sets(matched) == [(KEY + (0,), sorted([(0, 2000), (me, 2010)]))]
    assert round(matched[0].skew_s * 1e9) == 10_000 and round(matched[0].transfer_s * 1e9) == 90_000
    assert unmatched == [U(KEY, listed(other)), U(KEY + (1,), (0,)), U(KEY + (2,), (0,))]


def test_of_two_calls_that_fit_equally_the_earlier_pairs():
    """Rank 1's calls start 10 us before and 10 us after rank 0's (both overlap it): neither
    fits better, so the earlier one pairs and the later, ending long before rank 0's next
    call, is unmatched."""
    calls = [call(0, 2000), call(0, 10000), call(1, 1990), call(1, 2010)]
    matched, unmatched = match_calls(calls)
    assert sets(matched) == [(KEY + (0,), [(0, 2000), (1, 1990)])]
    assert unmatched == [U(KEY, (1,)), U(KEY + (1,), (0,))]


def test_a_better_fit_is_judged_by_its_gap_not_its_start():
    """Rank 0's first kernel is long (2000 to 5000 us). Rank 1's first ends 500 us before it
    starts; its second (3500 to 4000 us) overlaps it though it starts 1500 us later (more
    than the tolerance): the overlapping one fits better and pairs (skew 1500 us, transfer
    500 us), the other is unmatched."""
    calls = [call(0, 2000, dur_us=3000), call(0, 20000), call(1, 100, dur_us=1400), call(1, 3500, dur_us=500)]
    matched, unmatched = match_calls(calls)
    assert sets(matched) == [(KEY + (0,), [(0, 2000), (1, 3500)])]
    assert round(matched[0].skew_s * 1e9) == 1_500_000 and round(matched[0].transfer_s * 1e9) == 500_000
    assert unmatched == [U(KEY, (1,)), U(KEY + (1,), (0,))]


def test_a_better_fit_exactly_the_tolerance_away_still_counts():
    """Rank 1's two calls (800 to 1000 us and 900 to 1000 us) both end exactly 1 ms before
    rank 0's (2000 us) starts; the second starts closer, so fits better and pairs (skew
    1100 us, no transfer), the first is unmatched."""
    calls = [call(0, 2000), call(0, 10000), call(1, 800, dur_us=200), call(1, 900)]
    matched, unmatched = match_calls(calls)
    assert sets(matched) == [(KEY + (0,), [(0, 2000), (1, 900)])]
    assert round(matched[0].skew_s * 1e9) == 1_100_000 and matched[0].transfer_s == 0
    assert unmatched == [U(KEY, (1,)), U(KEY + (1,), (0,))]


def test_a_call_skipped_for_a_better_one_never_brings_back_an_earlier_one():
    """Rank 1's second call is long (1000 to 5050 us), paired with rank 0's second. At rank
    0's third (5000 us) rank 1's third (4200 to 4300 us) is passed over for its fourth
    (5000 us, overlapping): the third is unmatched, the fourth pairs; the long call, though
    it overlaps rank 0's third too, stays in set 1 only."""
    r0 = [call(0, 0), call(0, 1000), call(0, 5000), call(0, 20000)]
    r1 = [call(1, 0), call(1, 1000, dur_us=4050), call(1, 4200), call(1, 5000)]
    matched, unmatched = match_calls(r0 + r1)
    assert sets(matched) == [(KEY + (0,), [(0, 0), (1, 0)]), (KEY + (1,), [(0, 1000), (1, 1000)]),
                             (KEY + (2,), [(0, 5000), (1, 5000)])]
    assert unmatched == [U(KEY, (1,)), U(KEY + (3,), (0,))]


# ---------------------------------------------------------------- the next reference call fits better


def test_a_call_waits_for_the_reference_call_it_fits_better():
    """Rank 1's one call (1000 us) is 900 us after rank 0's first (within the tolerance) but
    overlaps rank 0's second, the last: it pairs with the second; the first is alone."""
    matched, unmatched = match_calls([call(0, 0), call(0, 1000), call(1, 1000)])
    assert sets(matched) == [(KEY + (1,), [(0, 1000), (1, 1000)])]
    assert unmatched == [U(KEY + (0,), (0,))]


def test_a_call_halfway_between_two_reference_calls_pairs_with_the_earlier():
    """Rank 1's call (500 to 600 us) is 400 us after rank 0's first ends and 400 us before its
    second starts: neither fits better, so it pairs with the first (skew 500 us, no
    transfer); the second is alone."""
    matched, unmatched = match_calls([call(0, 0), call(0, 1000), call(1, 500)])
    assert sets(matched) == [(KEY + (0,), [(0, 0), (1, 500)])]
    assert round(matched[0].skew_s * 1e9) == 500_000 and matched[0].transfer_s == 0
    assert unmatched == [U(KEY + (1,), (0,))]


# ---------------------------------------------------------------- calls after the reference's last


@pytest.mark.parametrize("other", [1, None])
def test_a_call_after_the_reference_calls_is_unmatched_with_its_rank(other):
    """Rank 0 (0 and 1000 us) is the reference; the other rank's one call, at 50000 us,
    is after them all: unmatched with its rank (none if unknown), and so are rank 0's two."""
    matched, unmatched = match_calls([call(0, 0), call(0, 1000), call(other, 50000)])
    assert matched == []
    assert unmatched == [U(KEY, listed(other)), U(KEY + (0,), (0,)), U(KEY + (1,), (0,))]


# ---------------------------------------------------------------- by Seq


@pytest.mark.parametrize("ranks,by", [((), "Seq 6 of group '0'"), ((0, 1), "Seq 6 of group '0' (ranks [0, 1])")])
def test_seq_matching_goes_on_past_a_seq_on_one_rank_only(ranks, by):
    """Seq 5 is on rank 0 only and Seq 7 on rank 1 only: each unmatched, listing its rank,
    saying no other rank has it. Seq 6 on both (after Seq 5 was found alone) is one call,
    matched by its Seq and group (its ranks named where the trace lists them)."""
    calls = [call(0, 0, seq=5, ranks=ranks), call(0, 1000, seq=6, ranks=ranks), call(1, 1000, seq=6, ranks=ranks),
             call(1, 2000, seq=7, ranks=ranks)]
    matched, unmatched = match_calls(calls)
    assert sets(matched) == [(("seq", "0", 6), [(0, 1000), (1, 1000)])]
    assert [m.matched_by for m in matched] == [by]
    assert unmatched == [U(("seq", "0", 5), (0,), SEQ_ALONE), U(("seq", "0", 7), (1,), SEQ_ALONE)]
