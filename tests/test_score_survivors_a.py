"""Guards the judge's physical-floor finding, a candidate's placement and the KernelBench
view of a row (linkroof/scoring/score.py: _floor_cause, below_floor, _placed and
kernelbench_row), each rule pinned at its boundary with facts worked out by hand:

- _floor_cause: the first finding's cause, else the three known ways in a fixed sentence;
- below_floor: suspect only strictly under the floor by more than the margin (a time
  exactly at floor / (1 + margin) is not), its reason in us to two decimals, the
  cause handed over from what a check already saw;
- _placed: every figure of the placement under its key, the cost model's only where
  it computed a bound (None, never NaN or 0, where it did not); NCCL's own time at the
  size is handed to the cost model (a time under it is flagged); the NCCL sentence only
  where the profile has a figure, without the fastest mechanism where advise refuses;
  a workload that cannot be placed gives its note;
- kernelbench_row: KernelBench's KernelExecResult field by field (compiled,
  correctness, metadata, runtime and ref_runtime in ms with their stats, -1.0 when not
  timed), the trials' "(matched / requested)" count, a failure as a compilation error
  (import_error) or a runtime error, a suspect never correct.
"""

import pytest

from linkroof.profiler.session import bundled_profile
from linkroof.roofline import workload as W
from linkroof.schema import Workload
from linkroof.scoring import score as S


@pytest.fixture(scope="module")
def profile():
    return bundled_profile()


# ------------------------------------------------------------------ _floor_cause

KNOWN_WAYS = "a timer the candidate can touch, work on an unwaited stream, or cached outputs"


def test_the_floors_cause_is_the_first_findings_cause():
    found = [("output cached", "cached outputs"), ("timer patched", "a timer the candidate can touch")]
    assert S._floor_cause(found) == "cached outputs"
    assert S._floor_cause(found[1:]) == "a timer the candidate can touch"


def test_with_no_finding_the_floors_cause_is_the_three_known_ways():
    assert S._floor_cause([]) == KNOWN_WAYS


# ------------------------------------------------------------------ below_floor


def test_below_the_floor_says_the_time_and_floor_in_us_to_two_decimals():
    """12.34499 us against a floor of 20.004999 us: "12.34" and "20.00" (a scale off by
    a millionth would round them up to 12.35 and 20.01); the margin as a whole percent;
    the cause is what a check already saw."""
    floor = {"floor_s": 20.004999e-6, "basis": "the workload's FLOPs and bytes (stated) on spec ceilings"}
    hit = S.below_floor({}, 12.34499e-6, floor, 0.02, [("timer patched", "a timer the candidate can touch")])
    assert hit == ("measured 12.34 us, under the physical floor of 20.00 us (the workload's FLOPs and bytes "
                   "(stated) on spec ceilings) by over the 2% margin", "a timer the candidate can touch")
    hit = S.below_floor({}, 12.34499e-6, floor, 0.10, [])
    assert hit == ("measured 12.34 us, under the physical floor of 20.00 us (the workload's FLOPs and bytes "
                   "(stated) on spec ceilings) by over the 10% margin", KNOWN_WAYS)


def test_a_time_exactly_at_the_floor_less_its_margin_is_not_below_it():
    """0.5 s with a margin of 100 % is 1.0 s exactly: not under a 1.0 s floor; a hair
    less is."""
    floor = {"floor_s": 1.0, "basis": "b"}
    assert S.below_floor({}, 0.5, floor, 1.0, []) is None
    assert S.below_floor({}, 0.4999, floor, 1.0, []) == (
        "measured 499900.00 us, under the physical floor of 1000000.00 us (b) by over the 100% margin", KNOWN_WAYS)


# ------------------------------------------------------------------ _placed

# all_reduce of 1441427 B over 2 ranks: the bundled profile's NCCL time there is
# interpolated between its 1 MiB and 2 MiB figures to 18.74999 us, a hair under 18.75:
# "18.7" to one decimal (a scale off by a millionth gives "18.8"). Its link term moves
# 2 (n - 1) / n x 1441427 B = 1441427 B over NVLink: 3.8314 us on the measured ceiling;
# the cost model adds launch and sync: 4.5485 us.
SIZE = 1441427
BOUND_S = 3.831391121861038e-06
COST_S = 4.548511143442688e-06
NCCL_TEXT = ("NCCL on this machine: all_reduce of 1441427 B over 2 ranks in 18.7 us (interpolated between 1048576 "
             "and 2097152 B); the fastest mechanism this profile measured at this size: nccl fp32 (18.7 us)")


def test_the_nccl_time_sits_a_hair_under_the_rounding_edge(profile):
    from linkroof.roofline.baseline import nccl_baseline

    base = nccl_baseline(profile, W.collective("all_reduce", SIZE, 2))
    assert 18.7499 < base.median_s * 1e6 < 18.75 and base.median_s * 1e6 * 1.000001 > 18.75


def test_a_placement_gives_every_figure_under_its_key(profile):
    """10 us for a call NCCL itself takes 18.75 us for: the cost model, given NCCL's own
    time, says it is faster than its terms (by 18.75 us + launch + sync - 10 us)."""
    t = 10e-6
    out = S._placed(W.collective("all_reduce", SIZE, 2), t, profile)
    assert out == {
        "peak_fraction": pytest.approx(BOUND_S / t, rel=1e-9),
        "peak_fraction_of_cost_bound": pytest.approx(COST_S / t, rel=1e-9),
        "fraction_of_roofline": pytest.approx(BOUND_S / t, rel=1e-9),
        "limiter": "link:nvlink",
        "bound_time_s": pytest.approx(BOUND_S, rel=1e-9),
        "cost_bound_s": pytest.approx(COST_S, rel=1e-9),
        "fraction_of_cost_bound": pytest.approx(COST_S / t, rel=1e-9),
        "placement_verdicts": ["faster than the cost model's terms: the measured time is 9467 ns shorter than the "
                               "model's terms add up to: check the workload's counts, its launch path and syncs"],
        "nccl": NCCL_TEXT,
    }
    assert list(out) == ["peak_fraction", "peak_fraction_of_cost_bound", "fraction_of_roofline", "limiter",
                         "bound_time_s", "cost_bound_s", "fraction_of_cost_bound", "placement_verdicts", "nccl"]


def test_a_placement_that_cannot_be_made_gives_its_note(profile):
    wl = W.collective("all_reduce", SIZE, 2)
    assert S._placed(wl, 0.0, profile) == {"placement_note": "measured time must be positive"}
    assert S._placed(Workload(name="x"), 1e-5, profile) == {
        "placement_note": "workload 'x': nothing to bound: it gives no FLOPs and no bytes"}


def test_without_a_cost_bound_its_figures_are_none_never_nan(profile, monkeypatch):
    """A profile without the cost model's terms: with_cost leaves the bound at 0 and says
    so; the row's cost figures are None (the placement's own fraction would be NaN)."""
    import linkroof.roofline.cost as C

    def no_terms(*a, **k):
        raise C.CostError("this profile has no graph launch figure")

    monkeypatch.setattr(C, "cost_bound", no_terms)
    t = 100e-6
    out = S._placed(Workload(name="copy", hbm_bytes=1 << 28), t, profile)
    hbm_s = 5.9515999630093574e-05  # 256 MiB over the bundled profile's measured HBM ceiling, 4.51 TB/s
    assert out == {"peak_fraction": pytest.approx(hbm_s / t, rel=1e-9), "peak_fraction_of_cost_bound": None,
                   "fraction_of_roofline": pytest.approx(hbm_s / t, rel=1e-9), "limiter": "memory",
                   "bound_time_s": pytest.approx(hbm_s, rel=1e-9), "cost_bound_s": None,
                   "fraction_of_cost_bound": None,
                   "placement_verdicts": ["cost model not computed: this profile has no graph launch figure"]}


def test_a_collective_without_an_nccl_figure_has_no_nccl_sentence(profile):
    """A pattern of size 0: nccl_baseline has nothing for it; the row is placed on its
    bytes and says nothing of NCCL."""
    wl = Workload(name="x", hbm_bytes=1 << 28, pattern="all_reduce", message_bytes=0, ranks=2)
    out = S._placed(wl, 100e-6, profile)
    assert "nccl" not in out and out["limiter"] == "memory"


def test_a_negative_message_size_is_a_placement_note_not_a_row_of_figures(profile):
    """A size of -1 B: place() refuses it by name (since 2026-12-05; before, nccl_baseline
    held its smallest figure and advise refused the size), and the row says why."""
    wl = Workload(name="x", hbm_bytes=1e6, pattern="all_reduce", message_bytes=-1, ranks=2)
    assert S._placed(wl, 10e-6, profile) == {
        "placement_note": "workload 'x': counts must be zero or more, not message size -1"}


# ------------------------------------------------------------------ kernelbench_row

MATCH = {"trial": 0, "result": "match"}
STATS = {"mean": 1.5, "std": 0.1, "min": 1.4, "max": 1.6, "num_trials": 3, "median": 1.5}
REF_STATS = {"mean": 3.0, "std": 0.2, "min": 2.8, "max": 3.2, "num_trials": 3, "median": 3.0}


def test_a_correct_timed_row_is_kernelbenchs_result_field_by_field():
    row = {"protocol": "linkroof", "feedback": "speedup 2.00x", "trials": [MATCH, dict(MATCH, trial=1)],
           "trials_requested": 2, "correct": True, "time_s": 1.5e-3, "stats": dict(STATS),
           "reference_stats": dict(REF_STATS), "peak_fraction": 0.25, "peak_fraction_of_cost_bound": 0.3,
           "limiter": "memory", "floor_s": 1e-4}
    assert S.kernelbench_row(row) == {
        "compiled": True, "correctness": True,
        "metadata": {"correctness_trials": "(2 / 2)", "linkroof_protocol": "linkroof",
                     "linkroof_feedback": "speedup 2.00x", "linkroof_peak_fraction": 0.25,
                     "linkroof_peak_fraction_of_cost_bound": 0.3, "linkroof_limiter": "memory",
                     "linkroof_floor_s": 1e-4},
        "runtime": 1.5, "runtime_stats": STATS, "ref_runtime": 3.0, "ref_runtime_stats": REF_STATS}


def test_an_untimed_row_with_a_mismatch_counts_matches_over_the_trials_requested():
    """Two trials of three asked for ran, one matched: "(1 / 3)"; not timed (no time_s),
    so its stats are not KernelBench's runtime; reference stats without a mean give -1.0."""
    row = {"protocol": "pkb", "feedback": None,
           "trials": [MATCH, {"trial": 1, "result": "mismatch", "reason": "max abs diff 0.5 > atol"}],
           "trials_requested": 3, "correct": False, "time_s": None, "stats": dict(STATS),
           "reference_stats": {"num_trials": 0}}
    assert S.kernelbench_row(row) == {
        "compiled": True, "correctness": False,
        "metadata": {"correctness_trials": "(1 / 3)", "linkroof_protocol": "pkb", "linkroof_feedback": None,
                     "correctness_issue": "max abs diff 0.5 > atol"},
        "runtime": -1.0, "runtime_stats": {}, "ref_runtime": -1.0, "ref_runtime_stats": {"num_trials": 0}}


def test_without_trials_requested_the_count_is_over_the_trials_run_and_no_mean_is_minus_one():
    """No trials_requested: three matched of the three run, "(3 / 3)"; timed, but its stats
    have no mean (a run without batch times): runtime -1.0, its stats as they are; no
    reference stats: ref_runtime -1.0 and {}."""
    row = {"trials": [MATCH, dict(MATCH, trial=1), dict(MATCH, trial=2)], "correct": True, "time_s": 2e-3,
           "stats": {"num_trials": 0, "median": 2.0}}
    assert S.kernelbench_row(row) == {
        "compiled": True, "correctness": True,
        "metadata": {"correctness_trials": "(3 / 3)", "linkroof_protocol": None, "linkroof_feedback": None},
        "runtime": -1.0, "runtime_stats": {"num_trials": 0, "median": 2.0}, "ref_runtime": -1.0,
        "ref_runtime_stats": {}}


def test_an_import_error_is_a_compilation_error():
    row = {"protocol": "pkb", "feedback": "fb", "failure": {"kind": "import_error", "message": "No module named 'kern'"},
           "trials": [], "trials_requested": 3, "correct": False, "time_s": None}
    assert S.kernelbench_row(row) == {
        "compiled": False, "correctness": False,
        "metadata": {"correctness_trials": "(0 / 3)", "linkroof_protocol": "pkb", "linkroof_feedback": "fb",
                     "compilation_error": "No module named 'kern'", "compilation_error_name": "import_error"},
        "runtime": -1.0, "runtime_stats": {}, "ref_runtime": -1.0, "ref_runtime_stats": {}}


def test_a_timed_row_that_failed_otherwise_is_a_runtime_error_and_not_timed():
    row = {"protocol": "pkb", "feedback": "fb", "failure": {"kind": "timeout", "message": "ran past 300 s"},
           "trials": [MATCH], "trials_requested": 1, "correct": False, "time_s": 1.5e-3, "stats": dict(STATS),
           "reference_stats": dict(REF_STATS)}
    assert S.kernelbench_row(row) == {
        "compiled": True, "correctness": False,
        "metadata": {"correctness_trials": "(1 / 1)", "linkroof_protocol": "pkb", "linkroof_feedback": "fb",
                     "runtime_error": "ran past 300 s", "runtime_error_name": "timeout"},
        "runtime": -1.0, "runtime_stats": {}, "ref_runtime": 3.0, "ref_runtime_stats": REF_STATS}


def test_a_suspect_row_is_never_correct_even_marked_correct():
    """A row still marked correct (an older file, a hand-edited one) but suspect: not
    correct for KernelBench, and its metadata says why."""
    sus = {"reasons": ["measured 5.00 us, under the physical floor"], "likely_causes": [KNOWN_WAYS],
           "measured_speedup": 20.0}
    row = {"protocol": "pkb", "feedback": "fb", "trials": [MATCH], "trials_requested": 1, "correct": True,
           "suspect": sus, "time_s": 5e-6, "stats": {"mean": 0.005}}
    assert S.kernelbench_row(row) == {
        "compiled": True, "correctness": False,
        "metadata": {"correctness_trials": "(1 / 1)", "linkroof_protocol": "pkb", "linkroof_feedback": "fb",
                     "excessive_speedup": True, "linkroof_suspect": sus},
        "runtime": 0.005, "runtime_stats": {"mean": 0.005}, "ref_runtime": -1.0, "ref_runtime_stats": {}}
