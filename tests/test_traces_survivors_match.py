"""Survivors of mutation testing in traces' match_calls, _set_fault, _matched, member and
_int: which calls of several ranks pair up into one call (by a group's Seq, else aligned
in time), what the matched call says (its ranks, who arrived last or a tie, its members),
why a call is left unmatched (in the words the user reads), the order of the results
(never the order the calls were given in), and _int's reading of a trace's counts.
Calls are built by hand, small: one kernel of 100 ns per rank unless said."""

import itertools

import pytest

from linkroof.roofline.traces import TIE_NS, CollectiveCall, Unmatched, _int, match_calls

ALONE = "no other rank has a call of this group, collective, size and type"


def call(rank, t, *, pg="pg", granks=(), seq=None, dur=100, coll="all_reduce", size=64, dtype="fp32", dev=0,
         stream=20, group=2):
    return CollectiveCall(rank, "ncclDevKernel_AllReduce", dev, stream, t, t + dur, coll, dtype, None, None, size,
                          group, "kernel args", pg, seq, group_ranks=granks)


# ------------------------------------------------------------------ _int


@pytest.mark.parametrize("raw, want", [
    (0, 0),  # torch's Seq counts from 0, and a call may move 0 elements: 0 is a count, not "unknown"
    ("0", 0),
    ("12", 12),  # a count written as a string is read as its number
    (" 7 ", 7),
])
def test_int_reads_zero_and_digit_strings_as_counts(raw, want):
    assert _int(raw) == want


@pytest.mark.parametrize("raw", [-1, True, "x", "-3", None, 1.5])
def test_int_says_unknown_for_what_is_no_count(raw):
    assert _int(raw) is None


# ------------------------------------------------------------------ _matched: a tie names no rank


@pytest.mark.parametrize("apart_ns, last", [
    (500, None),  # within 1 us: a tie, no one was last
    (TIE_NS, None),  # exactly 1 us is still a tie
    (TIE_NS + 1, 1),  # past it: rank 1 arrived last
])
def test_ranks_starting_within_a_microsecond_tie_and_name_no_last_rank(apart_ns, last):
    """Far from time 0 (1 ms), so that only the starts' difference can decide."""
    t0 = 1_000_000
    matched, unmatched = match_calls([call(0, t0, seq=4, dur=10_000), call(1, t0 + apart_ns, seq=4, dur=10_000)])
    assert unmatched == []
    (m,) = matched
    assert m.key == ("seq", "pg", 4) and m.ranks == (0, 1)
    assert m.last_rank == last
    if apart_ns != TIE_NS:  # at exactly TIE_NS last_words says "unknown" (float rounding): reported, not enshrined
        assert m.last_words == ("none (a tie)" if last is None else "1")
    assert m.skew_s == pytest.approx(apart_ns * 1e-9, rel=1e-12)
    assert m.transfer_s == pytest.approx((10_000 - apart_ns) * 1e-9, rel=1e-12)  # last arrival to first end


def test_a_rank_unknown_call_matched_at_the_same_start_as_rank_0():
    """A trace that names no rank (rank None) and rank 0's, one call under Seq 3, both
    starting at 0 on different devices: a tie; the unknown rank is -1 in the members
    (before every rank), and has no wait of its own (only known ranks are listed)."""
    for calls in ([call(None, 0, seq=3), call(0, 0, seq=3, dev=1)], [call(0, 0, seq=3, dev=1), call(None, 0, seq=3)]):
        matched, unmatched = match_calls(calls)
        assert unmatched == []
        (m,) = matched
        assert m.key == ("seq", "pg", 3) and m.matched_by == "Seq 3 of group 'pg'"
        assert m.ranks == (0,)
        assert m.last_rank is None and m.skew_s == 0.0
        assert m.transfer_s == pytest.approx(100e-9, rel=1e-12)
        assert m.waits_s == ((0, 0.0),)
        assert m.members == ((-1, 0, 20, 0), (0, 1, 20, 0))
        assert (m.collective, m.size_bytes, m.dtype, m.group_size) == ("all_reduce", 64, "fp32", 2)


# ------------------------------------------------------------------ _set_fault: why one Seq is not one call


@pytest.mark.parametrize("other, words", [
    (dict(coll="all_to_all", size=400, dtype="uint8"), "all_reduce 64 B fp32; all_to_all 400 B uint8"),
    # a kernel known by nothing (collective, size and type None) beside a known one: listed, never a crash
    (dict(coll=None, size=None, dtype=None), "all_reduce 64 B fp32; None None B None"),
])
def test_one_seq_holding_different_calls_is_not_one_call_and_says_which(other, words):
    matched, unmatched = match_calls([call(0, 0, seq=7), call(1, 10, seq=7, **other)])
    assert matched == []
    assert unmatched == [Unmatched(("seq", "pg", 7), (0, 1), "the ranks' calls differ: " + words)]


@pytest.mark.parametrize("tolerance_s, apart_ns, words", [
    (1e-3, 1_000_000, None),  # exactly the tolerance apart: still one call
    (1e-3, 1_000_001, "their kernels are 1.000 ms apart (none overlaps the last to start), more than the 1 ms clock "
                      "tolerance: not one call"),
    (1e-3, 2_000_000, "their kernels are 2.000 ms apart (none overlaps the last to start), more than the 1 ms clock "
                      "tolerance: not one call"),
    (1.0, 1_000_000_000, None),  # 1 s is 1e9 ns, not a nanosecond more
    (1.0, 1_000_000_001, "their kernels are 1000.000 ms apart (none overlaps the last to start), more than the "
                         "1000 ms clock tolerance: not one call"),
])
def test_kernels_further_apart_than_the_clock_tolerance_are_not_one_call(tolerance_s, apart_ns, words):
    """Rank 0's kernel ends at 100 ns; rank 1's starts `apart_ns` later."""
    calls = [call(0, 0, seq=9), call(1, 100 + apart_ns, seq=9)]
    matched, unmatched = match_calls(calls, tolerance_s)
    if words is None:
        assert unmatched == []
        assert [(m.key, m.ranks, m.last_rank) for m in matched] == [(("seq", "pg", 9), (0, 1), 1)]
        assert matched[0].transfer_s == 0.0  # rank 0 had ended before rank 1 started
    else:
        assert matched == []
        assert unmatched == [Unmatched(("seq", "pg", 9), (0, 1), words)]


# ------------------------------------------------------------------ match_calls: groups


def test_ranks_outside_their_groups_listed_ranks_are_each_said_unpaired_and_the_rest_still_match():
    """Group 'pg' lists ranks 0 and 1; ranks 2 and 3 claim it too (earliest, so their
    bucket comes first): each is listed unmatched with why, and ranks 0 and 1 still
    match by their Seq."""
    calls = [call(2, 0, granks=(0, 1), seq=7), call(3, 5, granks=(0, 1), seq=7),
             call(0, 10, granks=(0, 1), seq=7), call(1, 20, granks=(0, 1), seq=7)]
    matched, unmatched = match_calls(calls)
    assert [(m.key, m.ranks, m.matched_by) for m in matched] == [
        (("seq", "pg", 7), (0, 1), "Seq 7 of group 'pg' (ranks [0, 1])")]
    assert unmatched == [
        Unmatched(("unpaired", "pg", "all_reduce", 64, "fp32"), (2,), "rank 2 is not among its group's ranks [0, 1]"),
        Unmatched(("unpaired", "pg", "all_reduce", 64, "fp32"), (3,), "rank 3 is not among its group's ranks [0, 1]"),
    ]


@pytest.mark.parametrize("name", ["XX!not-a-memberXX", "!NOT-A-MEMBER", "not-a-member"])
def test_a_group_named_like_the_internal_tag_is_still_a_named_group_matched_by_seq(name):
    matched, unmatched = match_calls([call(0, 0, pg=name, seq=2), call(1, 10, pg=name, seq=2)])
    assert unmatched == []
    assert [(m.key, m.ranks, m.matched_by) for m in matched] == [(("seq", name, 2), (0, 1), f"Seq 2 of group {name!r}")]


# ------------------------------------------------------------------ match_calls: order


def test_calls_at_the_same_time_give_the_same_result_in_any_order_given_ranks_first_unknown_first():
    """Three calls at one instant on the same device and stream number (three hosts),
    each on a group of its own: each is unmatched, listed in rank order (a rank not
    known first), however the calls are given."""
    calls = [call(None, 0, pg="c"), call(0, 0, pg="b"), call(1, 0, pg="a")]
    want = [Unmatched(("aligned", "c", "all_reduce", 64, "fp32"), (), ALONE),
            Unmatched(("aligned", "b", "all_reduce", 64, "fp32"), (0,), ALONE),
            Unmatched(("aligned", "a", "all_reduce", 64, "fp32"), (1,), ALONE)]
    for given in itertools.permutations(calls):
        assert match_calls(list(given)) == ([], want)


def test_matched_calls_are_listed_by_group_name_then_time():
    """Group 'b' ran first, group 'a' later: listed 'a' then 'b'."""
    calls = [call(0, 0, pg="b", seq=1), call(1, 10, pg="b", seq=1),
             call(0, 1_000_000, pg="a", seq=1), call(1, 1_000_010, pg="a", seq=1)]
    matched, unmatched = match_calls(calls)
    assert unmatched == []
    assert [(m.key, min(x[3] for x in m.members)) for m in matched] == [(("seq", "a", 1), 1_000_000),
                                                                       (("seq", "b", 1), 0)]


def test_calls_of_one_group_at_one_start_are_listed_aligned_before_seq():
    """One group, one start: a call with Seq 5 on stream 20 and one without a Seq on
    stream 21, on both ranks. Group and time tie; the key's kind decides, 'aligned'
    before 'seq', not the order they were matched in."""
    calls = [call(0, 0, seq=5), call(1, 0, seq=5), call(0, 0, stream=21, size=128), call(1, 0, stream=21, size=128)]
    matched, unmatched = match_calls(calls)
    assert unmatched == []
    assert [(m.key, m.ranks, m.last_rank) for m in matched] == [
        (("aligned", "pg", "all_reduce", 128, "fp32", 0), (0, 1), None),
        (("seq", "pg", 5), (0, 1), None)]


@pytest.mark.parametrize("x", ["²", "١٢", "½"])
def test_a_unicode_digit_is_no_count(x):
    # str.isdigit() holds for "²", which int() refuses: a ValueError out of the reader's facts until 2026-12-05
    assert _int(x) is None
