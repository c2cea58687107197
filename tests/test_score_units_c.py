"""Guards score_row (linkroof/scoring/score.py), the row one candidate gets, field by
field, with results built by hand (no child process; outputs are named by fake paths
that a stand-in `load` maps to arrays):

- a failed reference fails the row: its kind, message and ranks ([] when it named
  none), not correct, the trials checked already kept (else none), the feedback says it;
- the trials: those checked already are kept as they are, else they are checked here
  (the tolerances and the loader handed over), never for a failed candidate that did
  not finish a trial; correct only when every requested trial matched and it did not fail;
- the times by the protocol (PKB's mean, linkroof's median) at the slowest rank, the
  speedup their ratio (None where one is missing), both stats blocks, PKB's own fields
  under PKB's protocol only, the NVLink bytes (the most any rank sent; else the first
  rank's note on why unknown) and the wire efficiency against the workload's bytes, the
  timeline and its parts, both clock states (unknown, said so, where none was sent);
- the floor: the spread, the reference's margin and every time (extra_times too); a
  correct candidate's checks after the timing and the physical floor (at its least
  time) make it suspect, the floor's finding first, its speedup moved under `suspect`;
  a wrong candidate is wrong, whatever gamed its timing;
- time reruns of either target are said, by who ran again.
"""

import math

import numpy as np
import pytest

from linkroof.scoring import score as S

UNKNOWN_CLOCK = {"state": "unknown", "note": "the harness sent no clock state"}

# fake output paths -> values (the stand-in loader)
VALUES = {"ref": np.array([1.0, 2.0]), "near": np.array([1.05, 2.05]), "far": np.array([1.5, 2.0])}


def load(paths):
    return VALUES[paths[0].split("/")[0]]


def result(name, perf=None, ranks=1, outputs=None, **kw):
    r = S.RunResult(S.Target.of(f"m:{name}"), "/nonexistent", 0, ranks, 1.5, **kw)
    r.perf.update(perf or {})
    r.outputs.update(outputs or {})
    return r


def outs(kind, ranks, trials):
    """Each rank's output of each trial, every one the array VALUES[kind]."""
    return {r: {str(t): [f"{kind}/r{r}/t{t}"] for t in trials} for r in range(ranks)}


def same(got, want, path="row"):
    """Equal, floats to 1e-12 relative; True/False/None by identity; dict keys exact."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and list(sorted(got)) == list(sorted(want)), (path, got, want)
        for k in want:
            same(got[k], want[k], f"{path}[{k!r}]")
    elif isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want), (path, got, want)
        for i, (a, b) in enumerate(zip(got, want)):
            same(a, b, f"{path}[{i}]")
    elif isinstance(want, bool) or want is None:
        assert got is want, (path, got, want)
    elif isinstance(want, float):
        assert isinstance(got, (int, float)) and not isinstance(got, bool) and \
            math.isclose(got, want, rel_tol=1e-12, abs_tol=0.0), (path, got, want)
    else:
        assert got == want and type(got) is type(want), (path, got, want)


# ------------------------------------------------------------------ scenarios


def pkb_two_ranks():
    """Two ranks under PKB's protocol, correct in both trials within atol 0.1. The
    reference's slowest rank by PKB's mean is rank 0 (0.1 ms), the candidate's rank 1
    (0.05 ms); by linkroof's median it would be the other rank of each (a protocol
    mixed up anywhere shows)."""
    ref = result("reference", ranks=2, outputs=outs("ref", 2, [0, 1]), perf={
        0: {"wall_time_ms": 0.1, "wall_time_std_ms": 0.005, "min_time_ms": 0.09, "max_time_ms": 0.12,
            "iterations": 100, "median_ms": 0.2, "times_ms": [0.2, 0.26],
            "clock": {"state": "burst", "sm_mhz_median": 1980}},
        1: {"wall_time_ms": 0.08, "median_ms": 0.4, "times_ms": [0.4, 0.41],
            "clock": {"state": "sustained", "sm_mhz_median": 1500}}})
    cand = result("good", ranks=2, outputs=outs("near", 2, [0, 1]), perf={
        0: {"wall_time_ms": 0.04, "median_ms": 0.09, "times_ms": [0.08, 0.1], "link_bytes_per_call": 3e6,
            "clock": {"state": "sustained", "sm_mhz_median": 1600}, "timeline": {"parts": {"compute (alone)": 3e-5}}},
        1: {"wall_time_ms": 0.05, "wall_time_std_ms": 0.003, "min_time_ms": 0.045, "max_time_ms": 0.06,
            "iterations": 100, "warmup_iterations": 500, "num_input_groups": 2.0, "median_ms": 0.03,
            "times_ms": [0.03, 0.031], "link_bytes_per_call": 4e6, "clock": {"state": "burst", "sm_mhz_median": 1980},
            "timeline": {"parts": {"idle": 1e-5, "compute (alone)": 4e-5}}}})
    return ref, cand


def linkroof_one_rank():
    """One rank under linkroof's protocol: the medians count (the PKB means beside them
    would give other times), the batches' half-range the spread."""
    ref = result("reference", outputs=outs("ref", 1, [0]), perf={
        0: {"median_ms": 0.2, "times_ms": [0.19, 0.2, 0.222], "wall_time_ms": 0.5}})
    cand = result("good", outputs=outs("ref", 1, [0]), perf={
        0: {"median_ms": 0.1, "times_ms": [0.09, 0.1, 0.12], "wall_time_ms": 0.7, "wall_time_std_ms": 0.07,
            "min_time_ms": 0.6, "max_time_ms": 0.8, "iterations": 100,
            "link_bytes_note": "NVML lists no active NVLink on GPU 0", "timeline": {"kernels_per_call": 1}}})
    return ref, cand


F32_ERR = float(np.float32(1.05) - np.float32(1.0))  # |1.05 - 1.0| in float32, PKB's check; 2.05 - 2.0 is less


def test_a_correct_pkb_row_is_the_slowest_ranks_means_with_pkbs_fields_and_every_time_for_the_floor():
    ref, cand = pkb_two_ranks()
    row = S.score_row(ref, cand, "pkb", 2, 0.1, 0.0, load=load, extra_times=[0.06e-3, 0.05 / 1e3])
    match = {"result": "match", "max_abs_err": F32_ERR, "max_rel_err": F32_ERR, "reason": ""}
    same(row, {
        "candidate": "good", "spec": "m:good", "protocol": "pkb", "ranks": 2, "wall_s": 1.5,
        "trials": [{"trial": 0, **match}, {"trial": 1, **match}], "trials_requested": 2, "correct": True,
        "reference_time_s": 0.1e-3, "time_s": 0.05e-3, "speedup": 2.0,
        "reference_stats": {"mean": 0.1, "std": 0.005, "min": 0.09, "max": 0.12, "num_trials": 100},
        "explained_rank": 1, "stats": {"mean": 0.05, "std": 0.003, "min": 0.045, "max": 0.06, "num_trials": 100},
        "wall_time_ms": 0.05, "wall_time_std_ms": 0.003, "min_time_ms": 0.045, "max_time_ms": 0.06,
        "iterations": 100, "warmup_iterations": 500, "num_input_groups": 2.0,
        "link_bytes_per_call": 4e6,  # the most any rank sent
        "timeline": {"parts": {"idle": 1e-5, "compute (alone)": 4e-5}},
        "decomposition": {"idle": 1e-5, "compute (alone)": 4e-5},
        "clock": {"state": "burst", "sm_mhz_median": 1980}, "reference_clock": {"state": "burst", "sm_mhz_median": 1980},
        "spread": 0.06,  # 0.003 / 0.05
        "floor_margin": 0.05,  # the reference's: 0.005 / 0.1
        "floor_times_s": [0.05e-3, 0.06e-3],  # the job's mean and the earlier trials' times, each once
        "outputs_match": True,
        "feedback": "2.00x the reference (50.0 us against 100.0 us, pkb protocol); clock: burst, SM 1980 MHz; of rank "
                    "1's time: compute (alone) 80%, idle 20% (measured timeline); 4,000,000 NVLink bytes a call "
                    "(NVML's counters)"})
    assert list(row)[:3] == ["candidate", "correct", "speedup"]  # what a loop reads first, first


def test_a_correct_linkroof_row_is_the_medians_its_batches_spread_and_no_pkb_fields():
    ref, cand = linkroof_one_rank()
    row = S.score_row(ref, cand, "linkroof", 1, 0.0, 0.0, load=load)
    same(row, {
        "candidate": "good", "spec": "m:good", "protocol": "linkroof", "ranks": 1, "wall_s": 1.5,
        "trials": [{"trial": 0, "result": "match", "max_abs_err": 0.0, "max_rel_err": 0.0, "reason": ""}],
        "trials_requested": 1, "correct": True,
        "reference_time_s": 0.2e-3, "time_s": 0.1e-3, "speedup": 2.0,
        "reference_stats": {"mean": 0.204, "std": float(np.std([0.19, 0.2, 0.222])), "min": 0.19, "max": 0.222,
                            "num_trials": 3, "median": 0.2},
        "explained_rank": 0,
        "stats": {"mean": 0.31 / 3, "std": float(np.std([0.09, 0.1, 0.12])), "min": 0.09, "max": 0.12,
                  "num_trials": 3, "median": 0.1},
        "link_bytes_note": "NVLink bytes unknown: NVML lists no active NVLink on GPU 0",
        "timeline": {"kernels_per_call": 1}, "decomposition": {},  # a timeline without parts: none
        "clock": UNKNOWN_CLOCK, "reference_clock": UNKNOWN_CLOCK,
        "spread": 0.15,  # (0.12 - 0.09) / 2 / 0.1
        "floor_margin": 0.08,  # the reference's (0.222 - 0.19) / 2 / 0.2
        "floor_times_s": [0.09e-3, 0.1e-3, 0.12e-3],  # the median and each batch's, each once
        "outputs_match": True,
        "feedback": "2.00x the reference (100.0 us against 200.0 us, linkroof protocol); clock: unknown (the harness "
                    "sent no clock state)"})


def one_rank(name, wall_ms, kind="ref", trials=(0,), **perf):
    """One rank under PKB's protocol: its mean, its outputs (every trial VALUES[kind])."""
    return result(name, outputs=outs(kind, 1, list(trials)), perf={0: {"wall_time_ms": wall_ms, **perf}})


def pkb_fields(mean):
    return {"stats": {"mean": mean, "std": None, "min": None, "max": None, "num_trials": None},
            "wall_time_ms": mean, "wall_time_std_ms": None, "min_time_ms": None, "max_time_ms": None,
            "iterations": None, "warmup_iterations": None, "num_input_groups": None, "explained_rank": 0}


EXACT = {"result": "match", "max_abs_err": 0.0, "max_rel_err": 0.0, "reason": ""}
UNKNOWN_FEEDBACK = "clock: unknown (the harness sent no clock state)"


def test_a_wrong_candidate_is_wrong_at_its_first_mismatch_and_what_gamed_its_timing_no_longer_matters():
    """Trial 1 of 3 mismatches: checking stops there, the row is wrong (not suspect) though
    its code replaced the timer, its speedup stays as measured."""
    ref = one_rank("reference", 0.1, trials=(0, 1, 2))
    cand = result("wrong", outputs={0: {"0": ["ref/0"], "1": ["far/1"], "2": ["ref/2"]}}, perf={0: {"wall_time_ms": 0.05}})
    cand.checks[0] = {"replaced": ["time.perf_counter"]}
    row = S.score_row(ref, cand, "pkb", 3, 0.1, 0.0, load=load)
    reason = "output: values differ beyond atol 0.1, rtol 0.0 (1 of 2 elements)"
    same(row, {
        "candidate": "wrong", "spec": "m:wrong", "protocol": "pkb", "ranks": 1, "wall_s": 1.5,
        "trials": [{"trial": 0, **EXACT},
                   {"trial": 1, "result": "mismatch", "max_abs_err": 0.5, "max_rel_err": 0.5, "reason": reason}],
        "trials_requested": 3, "correct": False, "reference_time_s": 0.1e-3, "time_s": 0.05e-3, "speedup": 2.0,
        "reference_stats": {"mean": 0.1, "std": None, "min": None, "max": None, "num_trials": None},
        **pkb_fields(0.05), "clock": UNKNOWN_CLOCK, "reference_clock": UNKNOWN_CLOCK,
        "spread": 0.02, "floor_margin": 0.02, "floor_times_s": [0.05e-3], "outputs_match": False,
        "feedback": f"wrong: trial 1: {reason}; 2.00x the reference (50.0 us against 100.0 us, pkb protocol); "
                    f"{UNKNOWN_FEEDBACK}"})


def test_trials_checked_already_are_kept_and_fewer_than_requested_are_not_correct():
    ref = one_rank("reference", 0.1)
    cand = result("good", perf={0: {"wall_time_ms": 0.05}})  # no outputs here: the trials were checked by the jobs
    checked = [{"trial": 0, **EXACT}]
    row = S.score_row(ref, cand, "pkb", 2, 0.1, 0.0, load=load, checked=checked)
    assert row["trials"] is checked and row["trials_requested"] == 2
    assert row["correct"] is False and row["outputs_match"] is False and "suspect" not in row
    assert row["feedback"].startswith("wrong; 2.00x the reference")
    row = S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, load=load, checked=checked)
    assert row["trials"] is checked and row["correct"] is True and row["outputs_match"] is True
    row = S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, load=load,
                      checked=[{"trial": 0, "result": "mismatch", "reason": "values"}])
    assert row["correct"] is False and row["feedback"].startswith("wrong: trial 0: values; 2.00x")


def test_a_candidate_without_outputs_has_trials_without_artifacts_and_is_wrong():
    ref = one_rank("reference", 0.1, trials=(0, 1))
    cand = result("silent", perf={0: {"wall_time_ms": 0.05}})
    row = S.score_row(ref, cand, "pkb", 2, 0.1, 0.0, load=load)
    assert row["trials"] == [{"trial": 0, "result": "no_artifacts", "reason": "a rank left no output for this trial"}]
    assert row["correct"] is False


def test_a_failed_candidate_is_not_correct_and_its_trials_are_checked_only_where_it_finished_one():
    ref = one_rank("reference", 0.1)
    failure = {"kind": "raised", "message": "ValueError: no", "ranks": [0]}
    cand = result("raises", outputs=outs("ref", 1, [0]), failure=failure)
    base = {"candidate": "raises", "spec": "m:raises", "protocol": "pkb", "ranks": 1, "wall_s": 1.5, "failure": failure,
            "trials_requested": 1, "correct": False, "reference_time_s": 0.1e-3, "time_s": None, "speedup": None,
            "reference_stats": {"mean": 0.1, "std": None, "min": None, "max": None, "num_trials": None},
            "clock": UNKNOWN_CLOCK, "reference_clock": UNKNOWN_CLOCK, "outputs_match": False,
            "feedback": "failed (raised): ValueError: no"}
    same(S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, load=load), {**base, "trials": []})
    cand.trials_done[0] = 1  # it finished trial 0 before it raised: that trial is checked, and matched
    same(S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, load=load), {**base, "trials": [{"trial": 0, **EXACT}]})


def test_a_reference_without_a_time_gives_no_speedup():
    ref = result("reference", outputs=outs("ref", 1, [0]))
    cand = one_rank("good", 0.05)
    row = S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, load=load)
    assert row["reference_time_s"] is None and row["speedup"] is None and row["correct"] is True
    assert "reference_stats" not in row and row["reference_clock"] == UNKNOWN_CLOCK
    assert row["time_s"] == pytest.approx(0.05e-3, rel=1e-12)


def test_a_failed_reference_fails_the_row_with_its_message_and_ranks_and_keeps_the_trials_checked():
    ref = result("reference", failure={"kind": "hang", "message": "rank 1 hung", "ranks": [1]}, reruns=["r1"])
    cand = result("good", sandbox={"mode": "jail"}, leftover=2, reruns=["c1", "c2"])
    checked = [{"trial": 0, "result": "match"}]
    row = S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, load=load, checked=checked)
    same(row, {"candidate": "good", "spec": "m:good", "protocol": "pkb", "ranks": 1, "wall_s": 1.5,
               "sandbox": {"mode": "jail"}, "processes_killed_after": 2,
               "time_reruns": {"reference": ["r1"], "candidate": ["c1", "c2"]},
               "failure": {"kind": "reference_failed", "message": "the reference failed: rank 1 hung", "ranks": [1]},
               "correct": False, "outputs_match": False, "trials": checked,
               "feedback": "failed (reference_failed): the reference failed: rank 1 hung"})
    ref = result("reference", failure={"kind": "raised", "message": "boom"})  # no ranks named: none
    row = S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, load=load)
    assert row["failure"] == {"kind": "reference_failed", "message": "the reference failed: boom", "ranks": []}
    assert row["trials"] == [] and row["correct"] is False and row["outputs_match"] is False
    assert row["time_reruns"] == {"candidate": ["c1", "c2"]}


def test_time_reruns_are_said_by_who_ran_again_and_a_result_without_reruns_is_not():
    ref, cand = one_rank("reference", 0.1), one_rank("good", 0.05)
    assert "time_reruns" not in S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, load=load)
    ref.reruns.append("timed 1 us under a wall of 2 s")
    row = S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, load=load)
    assert row["time_reruns"] == {"reference": ["timed 1 us under a wall of 2 s"]}
    assert "timed again: the reference's first 1 run(s) reported a time short of the wall" in row["feedback"]
    del ref.reruns, cand.reruns  # results made without the field (older callers): as if never run again
    row = S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, load=load)
    assert "time_reruns" not in row and row["correct"] is True


def test_nvlink_bytes_unknown_say_the_first_ranks_why_and_counted_bytes_need_no_note():
    ref = result("reference", ranks=2, outputs=outs("ref", 2, [0]), perf={0: {"wall_time_ms": 0.1}, 1: {"wall_time_ms": 0.1}})
    cand = result("good", ranks=2, outputs=outs("ref", 2, [0]), perf={
        0: {"wall_time_ms": 0.05, "link_bytes_note": "NVML lists no active NVLink on GPU 0"},
        1: {"wall_time_ms": 0.05, "link_bytes_note": "NVML lists no active NVLink on GPU 1"}})
    row = S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, load=load)
    assert row["link_bytes_note"] == "NVLink bytes unknown: NVML lists no active NVLink on GPU 0"
    assert "link_bytes_per_call" not in row
    assert row["feedback"].endswith("; NVLink bytes unknown: NVML lists no active NVLink on GPU 0")
    cand.perf[1] = {"wall_time_ms": 0.05, "link_bytes_per_call": 2e6}  # one rank counted: bytes known, no note
    row = S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, load=load)
    assert "link_bytes_note" not in row and row["link_bytes_per_call"] == 2e6 and "wire_efficiency" not in row
    del cand.perf[0]["link_bytes_note"]
    row = S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, load=load)  # rank 0 sent none: the most counted
    assert "link_bytes_note" not in row and row["link_bytes_per_call"] == 2e6
    del cand.perf[1]["link_bytes_per_call"]
    row = S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, load=load)
    assert "link_bytes_note" not in row and "link_bytes_per_call" not in row


def test_the_wire_efficiency_is_the_counted_bytes_over_the_workloads_at_its_message_size():
    """4 MB counted against a workload of 2 MB over NVLink in 1 MiB messages: 2x, NCCL's LL
    protocol at a small message size. A workload without a profile is not placed."""
    from linkroof.roofline.baseline import LL_SIZE
    from linkroof.schema import Workload

    wl = Workload(name="all-gather 1 MiB", link_bytes={"nvlink": 2e6}, message_bytes=1 << 20)
    assert (1 << 20) <= LL_SIZE
    ref, cand = one_rank("reference", 0.1), one_rank("good", 0.05, link_bytes_per_call=4e6)
    row = S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, wl, load=load)
    assert row["link_bytes_per_call"] == 4e6 and row["wire_efficiency"] == 2.0
    assert row["wire_note"].startswith("protocol overhead at a small message size: NCCL's LL protocol")
    assert "4,000,000 NVLink bytes a call (NVML's counters), wire efficiency 2.00x: protocol overhead" in row["feedback"]
    assert "peak_fraction" not in row and "floor_s" not in row and row["correct"] is True
    wl = Workload(name="nothing over NVLink", message_bytes=1 << 20)
    row = S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, wl, load=load)
    assert row["link_bytes_per_call"] == 4e6 and "wire_efficiency" not in row and "wire_note" not in row


def test_a_reference_clock_comes_from_its_slowest_rank_and_the_feedback_says_where_they_differ():
    ref, cand = pkb_two_ranks()
    cand.perf[1]["clock"] = {"state": "sustained", "sm_mhz_median": 1600}
    row = S.score_row(ref, cand, "pkb", 2, 0.1, 0.0, load=load)
    assert row["reference_clock"] == {"state": "burst", "sm_mhz_median": 1980}
    assert "clock: sustained, SM 1600 MHz (the reference's: burst, SM 1980 MHz)" in row["feedback"]


REPLACED = ("rank 0: the candidate's code replaced {} (the harness timed with the functions it held before the "
            "import)")


def test_a_correct_candidate_that_replaced_the_timer_is_suspect_and_its_speedup_moves_under_suspect():
    """Its check after new values matched the reference's (within atol 0.1, the same
    tolerances and loader as the trials): only the replaced timer is found."""
    ref = result("reference", outputs={0: {"0": ["ref/0"], "post": ["ref/post"]}}, perf={0: {"wall_time_ms": 0.1}})
    cand = result("timer", outputs={0: {"0": ["near/0"], "post": ["near/post"]}}, perf={0: {"wall_time_ms": 0.04}})
    ref.checks[0] = {"post": True}
    cand.checks[0] = {"post": True, "replaced": ["torch.cuda.Event.elapsed_time"]}
    row = S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, load=load)
    reason = REPLACED.format("torch.cuda.Event.elapsed_time")
    same(row, {
        "candidate": "timer", "spec": "m:timer", "protocol": "pkb", "ranks": 1, "wall_s": 1.5,
        "trials": [{"trial": 0, "result": "match", "max_abs_err": F32_ERR, "max_rel_err": F32_ERR, "reason": ""}],
        "trials_requested": 1, "correct": False, "outputs_match": True,
        "suspect": {"reasons": [reason], "likely_causes": ["a timer the candidate can touch"], "measured_speedup": 2.5},
        "speedup": None, "reference_time_s": 0.1e-3, "time_s": 0.04e-3,
        "reference_stats": {"mean": 0.1, "std": None, "min": None, "max": None, "num_trials": None},
        **pkb_fields(0.04), "clock": UNKNOWN_CLOCK, "reference_clock": UNKNOWN_CLOCK,
        "spread": 0.02, "floor_margin": 0.02, "floor_times_s": [0.04e-3],
        "feedback": f"SUSPECT, not ranked: {reason} (likely: a timer the candidate can touch); {UNKNOWN_FEEDBACK}"})
    assert list(row)[:4] == ["candidate", "correct", "suspect", "speedup"]


def test_an_output_cached_from_an_earlier_call_is_suspect():
    ref = result("reference", outputs={0: {"0": ["ref/0"], "post": ["ref/post"]}}, perf={0: {"wall_time_ms": 0.1}})
    cand = result("cached", outputs={0: {"0": ["ref/0"], "post": ["far/post"]}}, perf={0: {"wall_time_ms": 0.05}})
    ref.checks[0] = cand.checks[0] = {"post": True}
    row = S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, load=load)
    assert row["correct"] is False and row["outputs_match"] is True and row["speedup"] is None
    assert row["suspect"] == {
        "reasons": ["after new values were written into the tensors it was timed on, its output no longer matched the "
                    "reference's on them (output: values differ beyond atol 0.1, rtol 0.0 (1 of 2 elements))"],
        "likely_causes": ["outputs cached from an earlier call"], "measured_speedup": 2.0}




def hbm_wl():
    from linkroof.schema import Workload

    return Workload(name="copy 256 MiB", hbm_bytes=1 << 28)


SPEC_FLOOR_S = (1 << 28) / 4.8e12  # 256 MiB through the spec sheet's 4.8 TB/s: 55.92 us
SPEC_BASIS = "the workload's FLOPs and bytes (stated) on the spec ceilings"


@pytest.fixture(scope="module")
def profile():
    from linkroof.profiler.session import bundled_profile  # imported here: most tests need no profile

    return bundled_profile()


def floored(extra_times=(), replaced=False, link=None):
    """60 us against a floor of 55.92 us, the reference's margin 5 % (0.006 / 0.12)."""
    ref = one_rank("reference", 0.12, wall_time_std_ms=0.006)
    cand = one_rank("fast", 0.06, **({"link_bytes_per_call": link} if link else {}))
    if replaced:
        cand.checks[0] = {"replaced": ["time.perf_counter"]}
    return ref, cand


def test_the_floor_holds_for_every_trials_time_and_its_finding_comes_first_with_the_cause_a_check_saw(profile):
    """60 us is over the floor of 55.92 us, but an earlier trial's 50 us is under it by
    more than the reference's 5 % margin: suspect, the floor's finding first (its cause
    the replaced timer's); the row keeps the placement of its own time."""
    ref, cand = floored(replaced=True)
    row = S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, hbm_wl(), profile, load=load, extra_times=[0.05e-3])
    floor_reason = ("measured 50.00 us, under the physical floor of 55.92 us (the workload's FLOPs and bytes (stated) "
                    "on the spec ceilings) by over the 5% margin")
    placed = S._placed(hbm_wl(), row["time_s"], profile)
    assert placed["limiter"] == "memory" and placed["peak_fraction"] > 0.9
    same(row, {
        "candidate": "fast", "spec": "m:fast", "protocol": "pkb", "ranks": 1, "wall_s": 1.5,
        "trials": [{"trial": 0, **EXACT}], "trials_requested": 1, "correct": False, "outputs_match": True,
        "suspect": {"reasons": [floor_reason, REPLACED.format("time.perf_counter")],
                    "likely_causes": ["a timer the candidate can touch"], "measured_speedup": 2.0},
        "speedup": None, "reference_time_s": 0.12e-3, "time_s": 0.06e-3,
        "reference_stats": {"mean": 0.12, "std": 0.006, "min": None, "max": None, "num_trials": None},
        **pkb_fields(0.06), "clock": UNKNOWN_CLOCK, "reference_clock": UNKNOWN_CLOCK, **placed,
        "spread": 0.02, "floor_margin": 0.05, "floor_times_s": [0.05e-3, 0.06e-3],
        "floor_s": SPEC_FLOOR_S, "floor_basis": SPEC_BASIS, "feedback": row["feedback"]})
    assert row["feedback"].startswith(f"SUSPECT, not ranked: {floor_reason}; {REPLACED.format('time.perf_counter')} "
                                      "(likely: a timer the candidate can touch); 99% of what this machine allows")
    assert list(row)[:5] == ["candidate", "peak_fraction", "peak_fraction_of_cost_bound", "correct", "suspect"]


def test_under_the_floor_with_nothing_else_found_the_cause_is_the_three_known_ways(profile):
    ref, cand = floored()
    row = S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, hbm_wl(), profile, load=load, extra_times=[0.05e-3])
    assert row["suspect"]["likely_causes"] == [
        "a timer the candidate can touch, work on an unwaited stream, or cached outputs"]
    assert len(row["suspect"]["reasons"]) == 1 and row["suspect"]["reasons"][0].startswith("measured 50.00 us")


def test_over_the_floor_at_every_time_is_not_suspect_and_says_its_floor(profile):
    ref, cand = floored()
    row = S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, hbm_wl(), profile, load=load)
    assert row["correct"] is True and "suspect" not in row and row["speedup"] == pytest.approx(2.0, rel=1e-12)
    assert row["floor_s"] == pytest.approx(SPEC_FLOOR_S, rel=1e-12) and row["floor_basis"] == SPEC_BASIS
    assert row["floor_times_s"] == [pytest.approx(0.06e-3, rel=1e-12)]


def test_the_nvlink_bytes_counted_raise_the_floor(profile):
    """30 MB a call over the spec's 450 GB/s NVLink takes 66.67 us: 60 us is under it by
    more than 5 % (the workload's 55.92 us alone would not be)."""
    ref, cand = floored(link=3e7)
    row = S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, hbm_wl(), profile, load=load)
    assert row["floor_s"] == pytest.approx(3e7 / 450e9, rel=1e-12)
    assert row["floor_basis"].startswith("30,000,000 NVLink bytes a call (NVML, measured) at spec")
    assert row["correct"] is False and row["suspect"]["reasons"][0].startswith(
        "measured 60.00 us, under the physical floor of 66.67 us (30,000,000 NVLink bytes a call")


def test_a_wrong_candidate_gets_no_floor_check(profile):
    ref = one_rank("reference", 0.12, wall_time_std_ms=0.006)
    cand = one_rank("wrong", 0.01, kind="far")
    row = S.score_row(ref, cand, "pkb", 1, 0.1, 0.0, hbm_wl(), profile, load=load)
    assert row["correct"] is False and row["outputs_match"] is False
    assert "suspect" not in row and "floor_s" not in row and row["speedup"] == pytest.approx(12.0, rel=1e-12)
    assert row["limiter"] == "memory"  # placed all the same: the placement is of the time, right or wrong
