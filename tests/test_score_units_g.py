"""score.py's small rules, each pinned with values worked out by hand from its docstring:

- time_disagreements: a rank's reported timed loop against the judge's own marks (longer
  than the wall seen beyond TIME_OVER and TIME_SLACK_S: "long"; under PKB's protocol,
  under TIME_UNDER of it less TIME_UNDER_SLACK_S: "short"; a time without both marks in
  order: "marks"); PKB's per-call mean times the judge's own count of calls; no time, or
  a time that is not a finite number, is nothing to check;
- slowest, time_of, slowest_rank: the slowest rank by the protocol's key (PKB's
  wall_time_ms, linkroof's median_ms), in seconds; the lowest rank on a tie;
- spread, floor_margin, trial_times: the slowest rank's relative spread (at least 2 %),
  the reference's margin (at most 10 %), every positive time of the slowest rank;
- _stats: one rank's KernelBench runtime_stats; check_options: each fault named;
- Target.of, _clock_words, _other_words, _top_kernel, _lead: names and words.
"""

import math
from types import SimpleNamespace

import pytest

from linkroof.scoring import score as S


def run(perf):
    return S.RunResult(target=S.Target("m:f", "f"), out_dir="/nonexistent", returncode=0, ranks=len(perf) or 1,
                       wall_s=1.0, perf=perf)


def listener(*reports):
    """reports: (rank, perf, marks) each."""
    return SimpleNamespace(reports={r: SimpleNamespace(perf=perf, marks=marks) for r, perf, marks in reports})


def exact_ms(seconds):
    """A time in ms whose float(ms) / 1e3 is exactly `seconds` (a boundary test needs the
    very value the rule compares against)."""
    x = seconds * 1e3
    for _ in range(8):
        if x / 1e3 == seconds:
            return x
        x = math.nextafter(x, math.inf if x / 1e3 < seconds else -math.inf)
    raise AssertionError("no exact ms for the boundary")


MARKS_WORDS = "rank {} reported a time without the harness's marks around its timed loop"


# ------------------------------------------------------------------ time_disagreements


def test_an_honest_linkroof_time_within_the_wall_is_believed():
    lis = listener((0, {"median_ms": 90.0}, {"timing_start": 1.0, "timing_end": 1.1}))
    assert S.time_disagreements(lis, "linkroof") == []


def test_a_linkroof_time_longer_than_the_wall_beyond_the_over_share_and_slack_is_long():
    """Wall 100 ms: the limit is 100 * 1.10 + 5 = 115 ms; 200 ms is over it (but under a
    limit of 2.1 x the wall); 112 ms is not (it is over 1.1 x wall - 5, wall / 1.1 + 5
    and 0.9 x wall + 5)."""
    lis = listener((0, {"median_ms": 200.0}, {"timing_start": 0.0, "timing_end": 0.1}),
                   (1, {"median_ms": 112.0}, {"timing_start": 0.0, "timing_end": 0.1}))
    got = S.time_disagreements(lis, "linkroof")
    assert got == ["rank 0 reported 200.000 ms for a timed loop the judge saw take 100.000 ms"]
    assert [d.kind for d in got] == ["long"]


def test_the_wall_is_the_end_mark_less_the_start_mark():
    """Marks at 1.0 s and 1.1 s: a wall of 100 ms (not their sum), so 200 ms is long."""
    lis = listener((0, {"median_ms": 200.0}, {"timing_start": 1.0, "timing_end": 1.1}))
    got = S.time_disagreements(lis, "linkroof")
    assert got == ["rank 0 reported 200.000 ms for a timed loop the judge saw take 100.000 ms"]


def test_a_time_exactly_at_the_long_limit_is_believed():
    wall = 0.1
    at = exact_ms(wall * (1 + S.TIME_OVER) + S.TIME_SLACK_S)
    lis = listener((0, {"median_ms": at}, {"timing_start": 0.0, "timing_end": wall}))
    assert S.time_disagreements(lis, "linkroof") == []


def test_linkroofs_median_is_the_whole_loop_and_never_short():
    """Under linkroof's protocol the median is compared as it is (not times iters), and a
    time far under the wall is not flagged (its marks hold more than the loop)."""
    lis = listener((0, {"median_ms": 2.0, "wall_time_ms": 500.0}, {"timing_start": 0.0, "timing_end": 0.1}))
    assert S.time_disagreements(lis, "linkroof") == []
    assert S.time_disagreements(lis, "linkroof", iters=100) == []


def test_pkbs_mean_times_the_judges_count_of_calls_is_checked_against_the_wall():
    """0.9 ms a call over 100 calls is 90 ms in a 100 ms wall: believed; 2 ms a call is
    200 ms: long; median_ms is not PKB's key."""
    ok = listener((0, {"wall_time_ms": 0.9, "median_ms": 900.0}, {"timing_start": 0.0, "timing_end": 0.1}))
    assert S.time_disagreements(ok, "pkb") == []
    bad = listener((3, {"wall_time_ms": 2.0, "median_ms": 0.9}, {"timing_start": 0.0, "timing_end": 0.1}))
    got = S.time_disagreements(bad, "pkb")
    assert got == ["rank 3 reported 200.000 ms for a timed loop the judge saw take 100.000 ms"]
    assert got[0].kind == "long"


def test_pkb_with_its_own_count_of_calls():
    """iters=4: 20 ms a call is 80 ms in a 100 ms wall (believed); 30 ms a call is 120 ms (long)."""
    lis = listener((0, {"wall_time_ms": 20.0}, {"timing_start": 0.0, "timing_end": 0.1}),
                   (1, {"wall_time_ms": 30.0}, {"timing_start": 0.0, "timing_end": 0.1}))
    got = S.time_disagreements(lis, "pkb", iters=4)
    assert got == ["rank 1 reported 120.000 ms for a timed loop the judge saw take 100.000 ms"]


def test_a_pkb_time_under_half_the_wall_less_the_slack_is_short():
    """Wall 100 ms: under 100 * 0.5 - 10 = 40 ms is short; 30 ms is; 45 ms is not (it is
    under 0.5 x wall + 10 and wall / 0.5 - 10)."""
    lis = listener((0, {"wall_time_ms": 0.3}, {"timing_start": 0.0, "timing_end": 0.1}),
                   (1, {"wall_time_ms": 0.45}, {"timing_start": 0.0, "timing_end": 0.1}))
    got = S.time_disagreements(lis, "pkb")
    assert got == ["rank 0 reported 30.000 ms for a timed loop the judge saw take 100.000 ms (under 50% of it)"]
    assert got[0].kind == "short"


def test_a_pkb_time_exactly_at_the_short_limit_is_believed():
    wall = 0.1
    at = exact_ms(wall * S.TIME_UNDER - S.TIME_UNDER_SLACK_S)
    lis = listener((0, {"wall_time_ms": at}, {"timing_start": 0.0, "timing_end": wall}))
    assert S.time_disagreements(lis, "pkb", iters=1) == []
    under = listener((0, {"wall_time_ms": math.nextafter(at, 0.0)}, {"timing_start": 0.0, "timing_end": wall}))
    assert [d.kind for d in S.time_disagreements(under, "pkb", iters=1)] == ["short"]


def test_a_time_without_both_marks_in_order_hid_them_for_every_such_rank():
    """Rank 0 no marks, rank 1 only a start, rank 2 only an end, rank 3 an end before its
    start, rank 4 both at the same instant (an empty loop is in order: believed)."""
    lis = listener((4, {"median_ms": 1.0}, {"timing_start": 2.0, "timing_end": 2.0}),
                   (0, {"median_ms": 1.0}, {}),
                   (1, {"median_ms": 1.0}, {"timing_start": 1.0}),
                   (2, {"median_ms": 1.0}, {"timing_end": 1.0}),
                   (3, {"median_ms": 1.0}, {"timing_start": 2.0, "timing_end": 1.0}))
    got = S.time_disagreements(lis, "linkroof")
    assert got == [MARKS_WORDS.format(r) for r in (0, 1, 2, 3)]
    assert [d.kind for d in got] == ["marks"] * 4


def test_a_rank_without_a_finite_number_for_a_time_is_skipped_not_the_ranks_after_it():
    """No perf, no key, None, a bool, NaN, infinity, a string: nothing to check; rank 9
    after them has a time and no marks."""
    lis = listener((0, None, {}), (1, {}, {}), (2, {"median_ms": None}, {}), (3, {"median_ms": True}, {}),
                   (4, {"median_ms": float("nan")}, {}), (5, {"median_ms": float("inf")}, {}),
                   (6, {"median_ms": "5"}, {}), (9, {"median_ms": 3}, {}))
    got = S.time_disagreements(lis, "linkroof")
    assert got == [MARKS_WORDS.format(9)] and got[0].kind == "marks"


def test_no_reports_no_disagreement():
    assert S.time_disagreements(listener(), "pkb") == []


# ------------------------------------------------------------------ slowest, time_of, slowest_rank


def test_slowest_is_the_max_over_ranks_and_none_without_ranks():
    assert S.slowest({0: 1.0, 1: 3.0, 2: 2.0}) == 3.0
    assert S.slowest({}) is None


def test_time_of_is_the_slowest_ranks_time_by_the_protocols_key_in_seconds():
    res = run({0: {"median_ms": 3.0, "wall_time_ms": 8.0}, 1: {"median_ms": 7.0, "wall_time_ms": 1.0},
               2: {"median_ms": None, "wall_time_ms": "x"}})
    assert S.time_of(res, "linkroof") == 0.007
    assert S.time_of(res, "pkb") == 0.008


def test_time_of_without_a_timed_rank_is_none():
    assert S.time_of(run({}), "linkroof") is None
    assert S.time_of(run({0: {"median_ms": 4.0}}), "pkb") is None
    assert S.time_of(run({0: {"wall_time_ms": 4.0}}), "linkroof") is None


def test_slowest_rank_is_the_rank_with_the_longest_time_by_the_protocols_key():
    res = run({0: {"median_ms": 3.0, "wall_time_ms": 9.0}, 1: {"median_ms": 7.0, "wall_time_ms": 1.0},
               2: {"median_ms": 5.0, "wall_time_ms": 2.0}, 3: {"median_ms": "slow"}})
    assert S.slowest_rank(res, "linkroof") == 1
    assert S.slowest_rank(res, "pkb") == 0


def test_slowest_rank_on_a_tie_is_the_lowest_rank():
    res = run({0: {"median_ms": 2.0}, 1: {"median_ms": 5.0}, 2: {"median_ms": 5.0}})
    assert S.slowest_rank(res, "linkroof") == 1


def test_slowest_rank_without_a_timed_rank_is_none():
    assert S.slowest_rank(run({}), "linkroof") is None
    assert S.slowest_rank(run({0: {"median_ms": None}}), "linkroof") is None


# ------------------------------------------------------------------ spread, floor_margin


def test_pkbs_spread_is_the_slowest_ranks_std_over_its_mean():
    """Rank 1 is the slowest by wall_time_ms (20 ms, std 5 ms): 0.25 (rank 0's would be 0.1)."""
    res = run({0: {"wall_time_ms": 10.0, "wall_time_std_ms": 1.0, "median_ms": 50.0},
               1: {"wall_time_ms": 20.0, "wall_time_std_ms": 5.0, "median_ms": 1.0}})
    assert S.spread(res, "pkb") == 0.25


def test_pkbs_spread_without_a_std_is_the_minimum():
    """std missing: 0, so 2 % (20 ms and a std of 1 would give 5 %)."""
    assert S.spread(run({0: {"wall_time_ms": 20.0, "times_ms": [1.0, 9.0], "median_ms": 4.0}}), "pkb") == 0.02


def test_linkroofs_spread_is_the_half_range_of_the_batches_over_the_median():
    """Batches 2, 4, 6 ms, median 4 ms: (6 - 2) / 2 / 4 = 0.5; PKB's fields are not read
    (their std over mean would be 0.25)."""
    res = run({0: {"median_ms": 4.0, "times_ms": [2.0, 4.0, 6.0], "wall_time_ms": 8.0, "wall_time_std_ms": 2.0},
               1: {"median_ms": 1.0, "times_ms": [0.5, 1.5]}})
    assert S.spread(res, "linkroof") == 0.5


def test_spread_is_at_least_two_percent():
    assert S.spread(run({0: {"median_ms": 4.0, "times_ms": [4.0, 4.0]}}), "linkroof") == S.FLOOR_MARGIN == 0.02
    assert S.spread(run({0: {"median_ms": 4.0}}), "linkroof") == 0.02
    assert S.spread(run({}), "linkroof") == 0.02
    assert S.spread(run({}), "pkb") == 0.02


def test_the_floor_margin_is_the_references_spread_capped_at_ten_percent():
    assert S.floor_margin(run({0: {"wall_time_ms": 20.0, "wall_time_std_ms": 1.0}}), "pkb") == 0.05
    assert S.floor_margin(run({0: {"wall_time_ms": 20.0, "wall_time_std_ms": 5.0}}), "pkb") == S.FLOOR_MARGIN_MAX
    assert S.floor_margin(run({0: {"median_ms": 4.0, "times_ms": [3.8, 4.0, 4.2]}}), "linkroof") == pytest.approx(0.05)
    assert S.floor_margin(run({}), "linkroof") == 0.02


# ------------------------------------------------------------------ trial_times


def test_linkroofs_trial_times_are_the_median_and_each_positive_batch_in_seconds():
    res = run({0: {"median_ms": 4.0, "times_ms": [2.0, 0.5, 0, -1.0, True, None, "3"], "wall_time_ms": 9.0},
               1: {"median_ms": 1.0, "times_ms": [7.0]}})
    assert S.trial_times(res, "linkroof") == [0.004, 0.002, 0.0005]


def test_pkbs_trial_times_are_the_slowest_ranks_mean_only():
    res = run({0: {"wall_time_ms": 3.0, "median_ms": 9.0, "times_ms": [7.0]},
               1: {"wall_time_ms": 6.0, "median_ms": 1.0, "times_ms": [8.0]}})
    assert S.trial_times(res, "pkb") == [0.006]


def test_no_timed_rank_no_trial_times():
    assert S.trial_times(run({}), "linkroof") == []
    assert S.trial_times(run({0: {"median_ms": 4.0}}), "pkb") == []


# ------------------------------------------------------------------ _stats


def test_pkbs_stats_are_its_own_fields():
    perf = {"wall_time_ms": 2.0, "wall_time_std_ms": 0.1, "min_time_ms": 1.5, "max_time_ms": 2.5, "iterations": 100,
            "median_ms": 9.0, "times_ms": [1.0]}
    assert S._stats(perf, "pkb") == {"mean": 2.0, "std": 0.1, "min": 1.5, "max": 2.5, "num_trials": 100}


def test_linkroofs_stats_are_over_its_batches_with_the_population_std():
    """Batches 1 and 3 ms: mean 2, std 1 (over n), min 1, max 3, 2 trials; the median kept."""
    perf = {"median_ms": 2.5, "times_ms": [1.0, 3.0], "wall_time_ms": 7.0}
    assert S._stats(perf, "linkroof") == {"mean": 2.0, "std": 1.0, "min": 1.0, "max": 3.0, "num_trials": 2,
                                          "median": 2.5}


def test_linkroofs_stats_without_batches_are_the_median_and_no_trial():
    assert S._stats({"median_ms": 2.5}, "linkroof") == {"mean": 2.5, "num_trials": 0}
    assert S._stats({"median_ms": 2.5, "times_ms": None}, "linkroof") == {"mean": 2.5, "num_trials": 0}


# ------------------------------------------------------------------ check_options


def test_options_at_the_edges_of_their_ranges_are_accepted():
    assert S.check_options(1, 1, 0.0, 0.5, 0.5, 1, warmup=0, iters=1) is None
    assert S.check_options(S.MAX_RANKS, 5, 0.5, 0, 300, 1 << 20, warmup=500, iters=100) is None
    assert S.check_options(2, 1, 0, 0.0, 1e-3, 1) is None


def test_every_fault_is_named_in_order():
    with pytest.raises(S.ScoreError) as e:
        S.check_options(0, 0, -1.0, float("nan"), 0, 0, warmup=-1, iters=0)
    assert str(e.value) == ("cannot score: ranks 0: from 1 to 64; iters 0: at least 1; warmup -1: at least 0; "
                            "trials 0: at least 1; atol -1.0: a finite number, not negative; rtol nan: a finite "
                            "number, not negative; deadline 0: a finite number of seconds above 0; max output "
                            "bytes 0: a positive integer")


@pytest.mark.parametrize("kw, words", [
    (dict(ranks=65), "ranks 65: from 1 to 64"),
    (dict(ranks=True), "ranks True: from 1 to 64"),
    (dict(ranks=2.0), "ranks 2.0: from 1 to 64"),
    (dict(iters=True), "iters True: at least 1"),
    (dict(iters=1.5), "iters 1.5: at least 1"),
    (dict(warmup=True), "warmup True: at least 0"),
    (dict(warmup=0.0), "warmup 0.0: at least 0"),
    (dict(trials=1.0), "trials 1.0: at least 1"),
    (dict(atol=float("inf")), "atol inf: a finite number, not negative"),
    (dict(rtol="0.1"), "rtol '0.1': a finite number, not negative"),
    (dict(rtol=-1e-9), "rtol -1e-09: a finite number, not negative"),
    (dict(deadline_s=float("inf")), "deadline inf: a finite number of seconds above 0"),
    (dict(deadline_s="5"), "deadline '5': a finite number of seconds above 0"),
    (dict(deadline_s=-1.0), "deadline -1.0: a finite number of seconds above 0"),
    (dict(max_output_bytes=1.5), "max output bytes 1.5: a positive integer"),
    (dict(max_output_bytes=-3), "max output bytes -3: a positive integer"),
])
def test_one_fault_is_named_alone(kw, words):
    args = dict(ranks=1, trials=1, atol=0.0, rtol=0.0, deadline_s=1.0, max_output_bytes=1, warmup=0, iters=1)
    args.update(kw)
    with pytest.raises(S.ScoreError) as e:
        S.check_options(**args)
    assert str(e.value) == "cannot score: " + words


# ------------------------------------------------------------------ Target.of


@pytest.mark.parametrize("spec, target", [
    ("problems/12_allreduce.py", ("problems/12_allreduce.py:solution", "12_allreduce")),
    ("problems/x.py:fused", ("problems/x.py:fused", "fused")),
    ("pkg.mod:fn", ("pkg.mod:fn", "fn")),
    ("a:b:c", ("a:b:c", "c")),
    ("plain_module", ("plain_module", "plain_module")),
    ("problems/x.PY", ("problems/x.PY", "problems/x.PY")),
    # a spec ending in .py is a file, whatever ':' its folders hold (a function is never named *.py; until
    # 2026-12-05 this read as module 'pkg', function 'x.py')
    ("pkg:x.py", ("pkg:x.py:solution", "pkg:x")),
    ("runs:7/3_c.py", ("runs:7/3_c.py:solution", "3_c")),
    ("runs:7/3_c.py:fast", ("runs:7/3_c.py:fast", "fast")),
])
def test_a_targets_spec_and_name(spec, target):
    assert S.Target.of(spec) == S.Target(*target)


# ------------------------------------------------------------------ _clock_words


def test_clock_words_say_the_state_and_the_median_sm_clock_else_the_last():
    assert S._clock_words({"state": "burst", "sm_mhz_median": 1980.4, "sm_mhz_last": 1410}) == "burst, SM 1980 MHz"
    assert S._clock_words({"state": "burst", "sm_mhz_median": 1980}) == "burst, SM 1980 MHz"
    assert S._clock_words({"state": "throttled", "sm_mhz_last": 1410.0}) == "throttled, SM 1410 MHz"
    assert S._clock_words({"state": "burst"}) == "burst"


def test_clock_words_give_the_note_only_for_an_unknown_state_cut_to_80():
    note = "a" * 80 + "b" * 20
    assert S._clock_words({"state": "unknown", "note": note}) == f"unknown ({'a' * 80})"
    assert S._clock_words({"state": "unknown", "note": "no NVML", "sm_mhz_last": 1500}) == \
        "unknown, SM 1500 MHz (no NVML)"
    assert S._clock_words({"state": "unknown"}) == "unknown"
    assert S._clock_words({"state": "unknown", "note": ""}) == "unknown"
    assert S._clock_words({"state": "burst", "note": "ignored"}) == "burst"


# ------------------------------------------------------------------ _other_words

OTHER = " ['other': a kernel whose name says nothing of its class; {}]"


def test_no_other_part_no_words():
    assert S._other_words(["compute", "memory + transfer"], {}) == ""
    assert S._other_words([], {}) == ""


def test_a_caller_class_whose_name_has_the_word_other_is_not_other():
    assert S._other_words(["compute + other stream"], {}) == ""


def test_other_alone_or_with_a_class_says_how_to_know():
    assert S._other_words(["compute", "memory + other"], {}) == OTHER.format("--counters classes it")
    assert S._other_words(["other"], {"counted": False}) == OTHER.format("--counters classes it")
    assert S._other_words(["other (unattributed)"], {"counted": True}) == \
        OTHER.format("its counted why below says what bounds it")


# ------------------------------------------------------------------ _top_kernel


def test_the_top_kernel_is_the_longest_with_its_class_launches_and_share():
    tl = {"kernels": [{"name": "small", "time_per_call_s": 2e-6, "class": "memory"},
                      {"name": "gemm", "time_per_call_s": 12.5e-6, "launches_per_call": 3, "class": "compute",
                       "kind": "kernel"},
                      {"name": "idle", "time_per_call_s": 0.0},
                      {"name": "tail", "time_per_call_s": 5e-6}]}
    assert S._top_kernel(tl, 25e-6) == ("its longest kernel: gemm (compute) (3 launches), 12.5 us a call, 50% of the "
                                        "call (measured timeline)")


def test_the_top_kernel_without_a_call_time_has_no_share_and_unclassified_without_a_class():
    tl = {"kernels": [{"name": "k", "time_per_call_s": 1e-6, "launches_per_call": 1}]}
    assert S._top_kernel(tl, None) == "its longest kernel: k (unclassified), 1.0 us a call (measured timeline)"
    assert S._top_kernel(tl, 0.0) == "its longest kernel: k (unclassified), 1.0 us a call (measured timeline)"


def test_the_top_activity_names_its_kind_and_fractional_launches():
    tl = {"kernels": [{"name": "copy", "time_per_call_s": 0.1, "launches_per_call": 2.5, "kind": "memcpy",
                       "class": "transfer"}]}
    assert S._top_kernel(tl, 0.2) == ("its longest memcpy: copy (transfer) (2.5 launches), 100000.0 us a call, "
                                      "50% of the call (measured timeline)")


def test_the_top_kernels_mangled_name_is_its_own_identifier():
    tl = {"kernels": [{"name": "_ZN2at6native28vectorized_layer_norm_kernelIfEEvv", "time_per_call_s": 4e-6}]}
    assert S._top_kernel(tl, 8e-6) == ("its longest kernel: vectorized_layer_norm_kernel (unclassified), 4.0 us a "
                                       "call, 50% of the call (measured timeline)")


def test_no_timed_kernel_no_top_kernel():
    assert S._top_kernel({}, 1.0) is None
    assert S._top_kernel({"kernels": None}, 1.0) is None
    assert S._top_kernel({"kernels": [{"name": "k", "time_per_call_s": 0.0}, {"name": "j"}]}, 1.0) is None


# ------------------------------------------------------------------ _lead


def test_lead_puts_what_a_loop_reads_first_in_leads_order_and_keeps_the_rest():
    row = {"z": 1, "speedup": 2.0, "candidate": "c", "correct": True, "a": 0}
    got = S._lead(row)
    assert list(got.items()) == [("candidate", "c"), ("correct", True), ("speedup", 2.0), ("z", 1), ("a", 0)]
