"""score.feedback, the plain text a candidate's author (a person or an agent) reads: made
only of the row's measured facts, in a fixed order of importance (verdict, peak fraction,
time, clock, reruns, placement verdicts, the time's decomposition, the timeline, why,
NVLink bytes, NCCL), the least important dropped first to stay within FEEDBACK_CHARS
(80 fewer where its own self-check found a contradiction, which is then said, never
hidden). Each row is built by hand and each sentence worked out from the code's intent.
"""

from linkroof.scoring import score as S

OK = {"correct": True}  # a correct row with nothing measured: nothing to say


def fb(**row):
    return S.feedback(row)


# --- the verdict ---------------------------------------------------------------------------


def test_a_failure_says_its_kind_and_the_first_300_characters_of_its_message_and_nothing_else():
    msg = "a" * 300 + "TAIL"
    row = {"failure": {"kind": "timeout", "message": msg}, "correct": True, "why": "never said",
           "peak_fraction": 0.5, "limiter": "memory"}
    assert S.feedback(row) == "failed (timeout): " + "a" * 300


def test_a_suspect_says_its_first_400_characters_of_reasons_and_every_likely_cause_and_is_not_called_wrong():
    row = {"correct": False,  # a suspect is never correct (score.py), yet not "wrong"
           "suspect": {"reasons": ["r" * 250, "s" * 250],
                       "likely_causes": ["a timer the candidate can touch", "a harness the candidate rewrote"]},
           "trials": [{"trial": 0, "result": "match"}],
           # a suspect's speedup is not told: it is not believed
           "speedup": 3.0, "trial_speedups": [3.0], "time_s": 1e-4, "reference_time_s": 3e-4, "protocol": "pkb"}
    assert S.feedback(row) == ("SUSPECT, not ranked: " + "r" * 250 + "; " + "s" * 148 +
                               " (likely: a timer the candidate can touch, a harness the candidate rewrote)")


def test_a_wrong_candidate_names_its_first_unmatched_trial_and_that_trials_reason():
    trials = [{"trial": 0, "result": "match"},
              {"trial": 1, "result": "mismatch", "reason": "values differ at [3]"},
              {"trial": 2, "result": "error", "reason": "later"}]
    assert fb(correct=False, trials=trials) == "wrong: trial 1: values differ at [3]"


def test_a_wrong_trial_without_a_reason_gives_its_result():
    trials = [{"trial": 0, "result": "match"}, {"trial": 2, "result": "shape"}]
    assert fb(correct=False, trials=trials) == "wrong: trial 2: shape"


def test_a_wrong_candidate_without_an_unmatched_trial_is_just_wrong():
    assert fb(correct=False) == "wrong"
    assert fb(correct=False, trials=[{"trial": 0, "result": "match"}]) == "wrong"


def test_a_correct_row_with_no_facts_says_no_facts_measured():
    assert S.feedback(dict(OK)) == "no facts measured"


def test_facts_absent_from_a_row_add_nothing():
    """No peak fraction, no speedup without both times, no link bytes note on one rank,
    no decomposition: nothing said of any."""
    row = {"correct": True, "reference_time_s": 1e-4, "speedup": 2.0,  # no time_s: no speedup sentence
           "link_bytes_note": "NVLink bytes unknown: NVML lists no active NVLink on GPU 0",  # one rank
           "decomposition": {}, "timeline": {}}
    assert S.feedback(row) == "no facts measured"
    assert fb(correct=True, speedup=2.0, time_s=1e-4) == "no facts measured"
    assert fb(correct=True, time_s=1e-4, reference_time_s=2e-4) == "no facts measured"


# --- peak fraction ------------------------------------------------------------------------


def test_a_peak_fraction_of_exactly_one_is_a_share_not_a_ratio():
    assert fb(correct=True, peak_fraction=1.0, limiter="memory") == "100% of what this machine allows (memory-bound)"


def test_a_peak_fraction_over_one_is_a_ratio_faster_than_the_roofline():
    assert fb(correct=True, peak_fraction=1.5, limiter="compute") == \
        "1.5x faster than the roofline allows (compute-bound)"


def test_a_peak_fraction_under_one_is_a_share_with_the_cost_model_bound_where_known():
    assert fb(correct=True, peak_fraction=0.5, limiter="memory", peak_fraction_of_cost_bound=0.8) == \
        "50% of what this machine allows (memory-bound), 80% of the cost-model bound"
    assert fb(correct=True, peak_fraction=0.25, limiter="link") == "25% of what this machine allows (link-bound)"


# --- speedup ------------------------------------------------------------------------------


def test_one_trial_says_its_speedup_with_both_times_in_us():
    row = {"correct": True, "protocol": "linkroof", "speedup": 3.0, "trial_speedups": [3.0],
           "time_s": 0.5, "reference_time_s": 1.5}
    assert S.feedback(row) == "3.00x the reference (500000.0 us against 1500000.0 us, linkroof protocol)"
    row.pop("trial_speedups")  # no trials listed: one
    assert S.feedback(row) == "3.00x the reference (500000.0 us against 1500000.0 us, linkroof protocol)"


def test_two_trials_give_the_total_time_ratio_then_pkbs_mean_and_the_last_trials_times():
    row = {"correct": True, "protocol": "pkb", "speedup": 1.5, "trial_speedups": [1.0, 2.0],
           "speedup_total_time": 1.25, "time_s": 2e-4, "reference_time_s": 4e-4}
    assert S.feedback(row) == ("1.25x the reference by total time over 2 trials, 1.50x as PKB's mean of the trials' "
                               "speedups (pkb protocol; the last trial 200.0 us against 400.0 us)")
    row.pop("speedup_total_time")  # not known: only PKB's mean
    assert S.feedback(row) == ("1.50x as PKB's mean of the trials' speedups (pkb protocol; the last trial 200.0 us "
                               "against 400.0 us)")


# --- clock --------------------------------------------------------------------------------


def test_the_clock_state_is_said_and_the_references_only_where_it_differs():
    burst = {"state": "burst", "sm_mhz_median": 1980}
    assert fb(correct=True, clock=burst, reference_clock=dict(burst)) == "clock: burst, SM 1980 MHz"
    assert fb(correct=True, clock=burst) == "clock: burst, SM 1980 MHz"
    assert fb(correct=True, clock={"state": "drifting", "sm_mhz_median": 1755}, reference_clock=burst) == \
        "clock: drifting, SM 1755 MHz (the reference's: burst, SM 1980 MHz)"
    assert fb(correct=True, reference_clock=burst) == "no facts measured"  # only the reference's: nothing


# --- reruns and placement verdicts ----------------------------------------------------------


def test_timed_again_names_each_sides_discarded_runs_in_name_order():
    row = {"correct": True, "time_reruns": {"reference": [1.0], "candidate": [1.0, 2.0]}}
    assert S.feedback(row) == ("timed again: the candidate's first 2 run(s), the reference's first 1 run(s) reported "
                               "a time short of the wall the judge saw (a host that kept the harness off the CPU); "
                               "the times are from the run after")


def test_placement_verdicts_follow_the_verdict_in_order():
    assert fb(correct=False, placement_verdicts=["v1", "v2"]) == "wrong; v1; v2"


# --- decomposition ------------------------------------------------------------------------


def test_the_two_largest_parts_of_the_explained_ranks_time_in_shares_of_the_positive_total():
    d = {"compute (alone)": 20e-6, "idle": 40e-6, "communication (alone)": 10e-6}
    row = {"correct": True, "ranks": 2, "explained_rank": 1, "decomposition": d}
    assert S.feedback(row) == "of rank 1's time: idle 57%, compute (alone) 29% (measured timeline)"


def test_one_rank_says_its_time_even_with_an_explained_rank():
    d = {"compute (alone)": 30e-6, "idle": 10e-6, "nothing": 0.0, "overlap": -5e-6}
    assert fb(correct=True, explained_rank=0, decomposition=d) == \
        "of its time: compute (alone) 75%, idle 25% (measured timeline)"
    assert fb(correct=True, ranks=1, explained_rank=0, decomposition=d) == \
        "of its time: compute (alone) 75%, idle 25% (measured timeline)"
    assert fb(correct=True, ranks=2, decomposition=d) == \
        "of its time: compute (alone) 75%, idle 25% (measured timeline)"


def test_an_unattributed_part_is_said_to_be_timed_not_seen_on_the_timeline():
    d = {"compute (alone)": 20e-6, "unattributed": 60e-6}
    assert fb(correct=True, decomposition=d) == ("of its time: unattributed 75%, compute (alone) 25% (timed; the "
                                                 "unattributed part was not seen on the recorded timeline)")


def test_an_other_part_is_said_to_be_a_kernel_of_no_named_class_and_how_to_class_it():
    d = {"other": 30e-6, "idle": 10e-6}
    assert fb(correct=True, decomposition=d) == (
        "of its time: other 75%, idle 25% ['other': a kernel whose name says nothing of its class; --counters "
        "classes it] (measured timeline)")
    assert fb(correct=True, counted=True, decomposition=d) == (
        "of its time: other 75%, idle 25% ['other': a kernel whose name says nothing of its class; its counted "
        "why below says what bounds it] (measured timeline)")


# --- timeline -----------------------------------------------------------------------------


def test_the_timelines_launch_verdict_is_said():
    assert fb(correct=True, timeline={"launch_verdict": "launch-bound: 12 launches a call"}) == \
        "launch-bound: 12 launches a call"


def test_a_call_with_no_kernel_names_its_other_operations_kinds():
    tl = {"kernels_per_call": 0, "activities_per_call": 2,
          "kernels": [{"name": "Memset", "kind": "memset"}, {"name": "Memcpy HtoD", "kind": "memcpy"},
                      {"name": "k", "kind": "kernel"}, {"name": "no kind"}, {"name": "Memset 2", "kind": "memset"}]}
    assert fb(correct=True, timeline=tl) == \
        "no kernel ran in the call: its GPU work was 2 memcpy/memset operation(s) a call (measured timeline)"


def test_a_call_with_no_kernel_and_no_kinds_listed_did_copies():
    assert fb(correct=True, timeline={"kernels_per_call": 0, "activities_per_call": 1.5}) == \
        "no kernel ran in the call: its GPU work was 1.5 copy operation(s) a call (measured timeline)"


def test_a_call_with_nothing_on_the_gpu_says_so():
    assert fb(correct=True, timeline={"kernels_per_call": 0}) == \
        "nothing ran on the GPU in the call (measured timeline): it returned without GPU work"
    assert fb(correct=True, timeline={"kernels_per_call": 0, "activities_per_call": 0}) == \
        "nothing ran on the GPU in the call (measured timeline): it returned without GPU work"


def test_a_call_with_one_kernel_a_call_is_not_said_to_have_none():
    assert fb(correct=True, timeline={"kernels_per_call": 1, "activities_per_call": 3}) == "no facts measured"


def test_the_longest_kernel_is_said_with_its_share_of_the_timed_call():
    tl = {"kernels": [{"name": "layer_norm_fwd", "class": "memory-bound", "time_per_call_s": 40e-6,
                       "launches_per_call": 2},
                      {"name": "small", "time_per_call_s": 10e-6}]}
    assert fb(correct=True, time_s=100e-6, timeline=tl) == \
        "its longest kernel: layer_norm_fwd (memory-bound) (2 launches), 40.0 us a call, 40% of the call " \
        "(measured timeline)"
    assert fb(correct=True, timeline=tl) == \
        "its longest kernel: layer_norm_fwd (memory-bound) (2 launches), 40.0 us a call (measured timeline)"


# --- why, NVLink, NCCL --------------------------------------------------------------------


def test_the_rows_why_is_said():
    assert fb(correct=True, why="memory-bound: 1.2 GB moved") == "memory-bound: 1.2 GB moved"


def test_nvlink_bytes_are_said_with_the_wire_efficiency_where_known():
    assert fb(correct=True, link_bytes_per_call=2000000, wire_efficiency=1.912, wire_note="two hops") == \
        "2,000,000 NVLink bytes a call (NVML's counters), wire efficiency 1.91x: two hops"
    assert fb(correct=True, link_bytes_per_call=0) == "0 NVLink bytes a call (NVML's counters)"


def test_unknown_link_bytes_are_said_only_for_several_ranks():
    note = "NVLink bytes unknown: NVML lists no active NVLink on GPU 0"
    assert fb(correct=True, ranks=2, link_bytes_note=note) == note
    assert fb(correct=True, ranks=1, link_bytes_note=note) == "no facts measured"
    assert fb(correct=True, link_bytes_note=note) == "no facts measured"
    assert fb(correct=True, ranks=2) == "no facts measured"


def test_the_nccl_sentence_is_said():
    assert fb(correct=True, nccl="NCCL on this machine: all_gather of 1048576 B") == \
        "NCCL on this machine: all_gather of 1048576 B"


def test_all_facts_in_their_order_of_importance():
    row = {"correct": False, "trials": [{"trial": 3, "result": "mismatch", "reason": "values differ"}],
           "peak_fraction": 0.4, "limiter": "memory", "clock": {"state": "burst", "sm_mhz_median": 1980},
           "placement_verdicts": ["placed"], "why": "why", "nccl": "nccl"}
    assert S.feedback(row) == ("wrong: trial 3: values differ; 40% of what this machine allows (memory-bound); "
                               "clock: burst, SM 1980 MHz; placed; why; nccl")


# --- the self-check and the length ---------------------------------------------------------

SHARE_150 = "50% of what this machine allows (memory-bound), 150% of the cost-model bound"
NOTE = " [self-check: 1 contradiction(s) in this feedback, a linkroof bug: feedback: a share of 150% (over 100 %): ]"


def _contradicting(**more):
    return dict({"correct": True, "peak_fraction": 0.5, "limiter": "memory", "peak_fraction_of_cost_bound": 1.5},
                **more)


def test_a_share_over_100_percent_is_said_as_a_linkroof_bug_with_the_first_finding_cut_to_40_characters():
    assert S.feedback(_contradicting()) == SHARE_150 + NOTE


def test_with_a_contradiction_the_facts_and_the_note_together_keep_within_feedback_chars():
    limit = S.FEEDBACK_CHARS - len(NOTE)
    fits = "w" * (limit - len(SHARE_150) - 2)  # exactly at the limit: kept
    assert S.feedback(_contradicting(why=fits)) == SHARE_150 + "; " + fits + NOTE
    over = "w" * (limit - len(SHARE_150) - 2 + 30)  # 30 over: the why is dropped
    assert S.feedback(_contradicting(why=over)) == SHARE_150 + NOTE


def test_without_a_contradiction_facts_up_to_feedback_chars_are_kept():
    a = "w" * 300
    b = "v" * (S.FEEDBACK_CHARS - 300 - 2)  # exactly FEEDBACK_CHARS together: kept
    assert S.feedback(dict(OK, why=a, nccl=b)) == a + "; " + b
    b = "v" * (S.FEEDBACK_CHARS - 300 - 2 - 50)  # 650: kept (no 80 held back)
    assert S.feedback(dict(OK, why=a, nccl=b)) == a + "; " + b


def test_over_feedback_chars_the_last_facts_are_dropped_first():
    a = "w" * 300
    b = "v" * (S.FEEDBACK_CHARS - 300 - 1)  # one over
    assert S.feedback(dict(OK, why=a, nccl=b)) == a
    assert S.feedback(dict(OK, why=a, nccl=b, placement_verdicts=["p"])) == "p; " + a


def test_a_single_fact_longer_than_feedback_chars_is_kept_whole():
    a = "w" * (S.FEEDBACK_CHARS + 100)
    assert S.feedback(dict(OK, why=a)) == a


def test_the_longest_self_check_note_still_keeps_the_feedback_within_feedback_chars():
    """The helper's case of 2026-12-05: a 542-character why beside a share over 100 % gave 728."""
    text = S.feedback(_contradicting(why="w" * 542))
    assert len(text) <= S.FEEDBACK_CHARS and text.endswith("]") and "w" * 542 not in text
