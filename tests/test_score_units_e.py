"""Guards the judge's output comparison, its loading of a rank's output, the checks after
the timing and the marking of a suspect row (linkroof/scoring/score.py: compare_outputs,
_load_output, suspicions and _mark_suspect), each rule pinned with values worked out by
hand from the docstrings and the callers (check_trials, score_row, the counted floor):

- compare_outputs: leaves named by their path (".key[i]", "output" for a bare tensor),
  the structure first, then shape, then equality for non-numeric leaves (both sides
  numeric, or compared for equality), then NaN in the output, then values beyond
  atol + rtol x |out|; the worst absolute and relative error over the leaves compared;
- _load_output: a .npy leaf mapped read-only, not read; one leaf as itself, several as a
  list in order; pickled data refused (ValueError, never unpickled);
- suspicions: replaced timers, the device busy past the last event beyond
  max(50 us, 20 % of the events' time) (strictly), aliasing the reference does not do,
  a harness that never reported or skipped the check after new values without a note,
  and the check after new values itself, only when every rank made it on both sides;
- _mark_suspect: nothing found changes nothing; else never correct, the speedup moved
  under `suspect` (and the total-time speedup), reasons and causes added without
  repeats to any suspicion already there.
"""

import pickle

import numpy as np
import pytest

from linkroof.scoring import score as S

ATOL, RTOL = 1e-2, 1e-2
WHY = "values differ beyond atol 0.01, rtol 0.01"


# ------------------------------------------------------------------ compare_outputs


def test_close_outputs_match_with_the_worst_errors_over_all_leaves():
    """{"s": 2x3, "w": [2, 1]}: every element within 0.01 + 0.01 x |out| but not equal.
    The worst absolute error (0.03125, 4.0 against 4.03125 in w[0]) and the worst relative
    one (0.0078125 / 0.5 = 0.015625, in s) come from different leaves."""
    s_ref = np.array([[0.5, 1.0, 2.0], [3.0, 5.0, 6.0]])
    s_out = np.array([[0.5078125, 1.0, 2.0], [3.0, 5.0, 6.0]])
    ref = {"w": [np.array([4.0, 1.0]), np.array([7.0])], "s": s_ref}
    got = {"s": s_out, "w": [np.array([4.03125, 1.0]), np.array([7.0])]}
    assert S.compare_outputs(ref, got, ATOL, RTOL) == {
        "match": True, "reason": "", "max_abs_err": 0.03125, "max_rel_err": 0.015625}


def test_equal_outputs_match_with_zero_errors():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert S.compare_outputs(x, x.copy(), ATOL, RTOL) == {
        "match": True, "reason": "", "max_abs_err": 0.0, "max_rel_err": 0.0}


def test_a_leaf_off_by_more_than_the_tolerance_is_named_by_its_path():
    """.w[1] is off: 1 of its 2x3 elements, by 1.0 on 2.0 (relative 0.5); the leaf before
    it was close (abs 0.03125) and the worst errors are those seen up to the failure."""
    ref = {"w": [np.array([4.0, 1.0]), np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])]}
    got = {"w": [np.array([4.03125, 1.0]), np.array([[1.0, 3.0, 3.0], [4.0, 5.0, 6.0]])]}
    assert S.compare_outputs(ref, got, ATOL, RTOL) == {
        "match": False, "reason": f".w[1]: {WHY} (1 of 6 elements)", "max_abs_err": 1.0, "max_rel_err": 0.5}


def test_a_bare_tensor_is_called_output():
    ref, got = np.array([1.0, 2.0, 4.0]), np.array([1.0, 2.0, 5.0])
    assert S.compare_outputs(ref, got, ATOL, RTOL) == {
        "match": False, "reason": f"output: {WHY} (1 of 3 elements)", "max_abs_err": 1.0, "max_rel_err": 0.25}


def test_the_tolerance_in_the_reason_is_the_one_given():
    ref, got = np.array([1.0, 2.0]), np.array([1.0, 2.5])
    r = S.compare_outputs(ref, got, 0.25, 0.0)
    assert r == {"match": False, "reason": "output: values differ beyond atol 0.25, rtol 0.0 (1 of 2 elements)",
                 "max_abs_err": 0.5, "max_rel_err": 0.25}
    assert S.compare_outputs(ref, got, 0.5, 0.0)["match"] is True  # |2 - 2.5| <= 0.5


def test_a_different_number_of_leaves_is_a_structure_mismatch():
    ref = [np.ones(2), np.ones(2)]
    assert S.compare_outputs(ref, [np.ones(2)], ATOL, RTOL) == {
        "match": False, "reason": "the outputs' structure differs (2 against 1 tensors)",
        "max_abs_err": None, "max_rel_err": None}


def test_differently_named_leaves_are_a_structure_mismatch():
    assert S.compare_outputs({"a": np.ones(2)}, {"b": np.ones(2)}, ATOL, RTOL) == {
        "match": False, "reason": "the outputs' structure differs (1 against 1 tensors)",
        "max_abs_err": None, "max_rel_err": None}


def test_a_shape_mismatch_names_both_shapes():
    assert S.compare_outputs(np.ones((2, 3)), np.ones((3, 2)), ATOL, RTOL) == {
        "match": False, "reason": "output: shape (3, 2), the reference's (2, 3)",
        "max_abs_err": None, "max_rel_err": None}
    assert S.compare_outputs({"k": [np.ones(3)]}, {"k": [np.ones(2)]}, ATOL, RTOL)["reason"] == \
        ".k[0]: shape (2,), the reference's (3,)"


def test_equal_non_numeric_leaves_match_and_compare_no_values():
    ref = [np.array(["a", "b"]), np.array([1.0, 2.0])]
    assert S.compare_outputs(ref, [np.array(["a", "b"]), np.array([1.0, 2.0])], ATOL, RTOL) == {
        "match": True, "reason": "", "max_abs_err": 0.0, "max_rel_err": 0.0}


def test_unequal_non_numeric_leaves_are_not_equal():
    assert S.compare_outputs(np.array(["a", "b"]), np.array(["a", "c"]), ATOL, RTOL) == {
        "match": False, "reason": "output: not equal", "max_abs_err": None, "max_rel_err": None}


def test_a_numeric_leaf_against_text_is_compared_for_equality_not_closeness():
    """"1.0" as text is not the number 1.0, whichever side holds it."""
    assert S.compare_outputs(np.array(["1.0"]), np.array([1.0]), ATOL, RTOL) == {
        "match": False, "reason": "output: not equal", "max_abs_err": None, "max_rel_err": None}
    assert S.compare_outputs(np.array([1.0]), np.array(["1.0"]), ATOL, RTOL) == {
        "match": False, "reason": "output: not equal", "max_abs_err": None, "max_rel_err": None}


def test_the_leaves_after_an_equal_non_numeric_leaf_are_still_checked():
    ref = [np.array(["a", "b"]), np.array([1.0, 2.0])]
    got = [np.array(["a", "b"]), np.array([1.0, 3.0])]
    assert S.compare_outputs(ref, got, ATOL, RTOL) == {
        "match": False, "reason": f"[1]: {WHY} (1 of 2 elements)", "max_abs_err": 1.0, "max_rel_err": 0.5}


def test_nan_in_the_output_only_is_said_with_its_count():
    assert S.compare_outputs(np.array([1.0, 2.0, 3.0]), np.array([1.0, np.nan, np.nan]), ATOL, RTOL) == {
        "match": False, "reason": "output: NaN in the output (2 elements)", "max_abs_err": None, "max_rel_err": None}


def test_nan_on_both_sides_and_nothing_else_off_is_said_as_nan_in_both():
    """NaN is never close (torch's equal_nan=False); the finite elements are equal."""
    assert S.compare_outputs(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), ATOL, RTOL) == {
        "match": False, "reason": "output: NaN in the reference and the output (1 of 2 elements)",
        "max_abs_err": 0.0, "max_rel_err": 0.0}


def test_nan_on_both_sides_with_a_finite_element_off_is_a_value_difference():
    assert S.compare_outputs(np.array([np.nan, 1.0]), np.array([np.nan, 3.0]), ATOL, RTOL) == {
        "match": False, "reason": f"output: {WHY} (2 of 2 elements)", "max_abs_err": 2.0, "max_rel_err": 2.0}


# ------------------------------------------------------------------ _load_output


def test_nan_in_the_reference_only_says_the_output_has_numbers_there():
    """The helper's case of 2026-12-05: the reason said the output had NaN too, which it had not."""
    got = S.compare_outputs(np.array([np.nan, 1.0]), np.array([5.0, 1.0]), 1e-2, 1e-2)
    assert got["match"] is False
    assert got["reason"] == "output: NaN in the reference, numbers in the output (1 of 2 elements)"


def test_one_leaf_is_mapped_read_only_not_read(tmp_path):
    p = tmp_path / "o.npy"
    np.save(p, np.arange(6, dtype=np.float32).reshape(2, 3))
    v = S._load_output([str(p)])
    assert isinstance(v, np.memmap) and v.mode == "r"
    assert v.shape == (2, 3) and v.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_several_leaves_are_a_list_in_their_order(tmp_path):
    paths = []
    for i, a in enumerate((np.array([1.0, 2.0]), np.array([[3]], dtype=np.int64), np.zeros((0, 2)))):
        paths.append(str(tmp_path / f"{i}.npy"))
        np.save(paths[-1], a)
    vals = S._load_output(paths)
    assert isinstance(vals, list) and len(vals) == 3
    assert all(isinstance(v, np.memmap) for v in vals)
    assert [v.tolist() for v in vals] == [[1.0, 2.0], [[3]], []]
    assert vals[2].shape == (0, 2)
    two = S._load_output(paths[:2])
    assert isinstance(two, list) and [v.tolist() for v in two] == [[1.0, 2.0], [[3]]]


def test_pickled_data_is_refused_never_unpickled(tmp_path):
    p = tmp_path / "p.npy"
    p.write_bytes(pickle.dumps({"x": [1, 2, 3]}))
    with pytest.raises(ValueError, match="pickled"):
        S._load_output([str(p)])


def test_an_object_array_is_refused(tmp_path):
    p = tmp_path / "obj.npy"
    np.save(p, np.array([1, "a", None], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="allow_pickle=False"):
        S._load_output([str(p)])


def test_an_unloadable_output_fails_its_trial_naming_why(tmp_path):
    """Through check_trials with the default loader: the ValueError is named in the row."""
    good, bad = tmp_path / "ref.npy", tmp_path / "cand.npy"
    np.save(good, np.ones(3))
    np.save(bad, np.array([1, None], dtype=object), allow_pickle=True)
    ref = S.RunResult(S.Target.of("m:reference"), "", 0, 1, 1.0, outputs={0: {"0": [str(good)]}})
    cand = S.RunResult(S.Target.of("m:c"), "", 0, 1, 1.0, outputs={0: {"0": [str(bad)]}})
    [row] = S.check_trials(ref, cand, 1, ATOL, RTOL)
    assert row["result"] == "mismatch"
    assert row["reason"].startswith("its output could not be compared (ValueError: Object arrays cannot be loaded "
                                    "when allow_pickle=False")


# ------------------------------------------------------------------ suspicions


def run(name, ranks=1, checks=None, outputs=None):
    return S.RunResult(S.Target.of(f"m:{name}"), "", 0, ranks, 1.0, checks=checks or {}, outputs=outputs or {})


def sus(ref_checks, cand_checks, ranks=1, ref_out=None, cand_out=None, load=None):
    ref = run("reference", ranks, ref_checks, ref_out)
    cand = run("c", ranks, cand_checks, cand_out)
    return S.suspicions(ref, cand, ATOL, RTOL, load)


TIMER = "a timer the candidate can touch"
STREAM = "work on a stream the timing does not wait for"
ALIAS = "an output that aliases an input"
REWROTE = "a harness the candidate rewrote"
CACHED = "outputs cached from an earlier call"


def test_nothing_seen_is_no_suspicion():
    assert sus({0: {"tail": {}}}, {0: {"tail": {}}}) == []
    assert sus({}, {}) == []  # neither harness reported a check: nothing hidden


def test_replaced_timing_functions_are_named():
    found = sus({0: {}}, {0: {"replaced": ["time.perf_counter", "torch.cuda.Event"]}})
    assert found == [("rank 0: the candidate's code replaced time.perf_counter, torch.cuda.Event (the harness "
                      "timed with the functions it held before the import)", TIMER)]


def test_the_replaced_names_are_cut_at_200_characters():
    found = sus({0: {}}, {0: {"replaced": ["f" * 150, "g" * 150]}})
    assert found == [(f"rank 0: the candidate's code replaced {'f' * 150}, {'g' * 48} (the harness timed with the "
                      "functions it held before the import)", TIMER)]


def test_device_busy_past_the_last_event_is_said_in_us_with_the_calls():
    """1 s busy after events timing 2 s (threshold max(50 us, 0.4 s)): 1000000 us and
    2000000 us exactly; the reference not busy."""
    cand = {0: {"tail": {"device_busy_after_s": 1.0, "event_s": 2.0, "calls": 100}}}
    found = sus({0: {"tail": {"device_busy_after_s": 1e-5, "event_s": 2.0}}}, cand)
    assert found == [("rank 0: the device stayed busy 1000000 us after the last timed event of 100 calls that the "
                      "events timed at 2000000 us", STREAM)]


def test_the_tail_threshold_is_a_fifth_of_the_events_time_when_over_50_us():
    """Events 1 ms: busy 300 us > 200 us is flagged; 100 us (over 50 us, under 200 us) is not."""
    found = sus({}, {0: {"tail": {"device_busy_after_s": 3e-4, "event_s": 1e-3, "calls": 5}}})
    assert found == [("rank 0: the device stayed busy 300 us after the last timed event of 5 calls that the events "
                      "timed at 1000 us", STREAM)]
    assert sus({}, {0: {"tail": {"device_busy_after_s": 1e-4, "event_s": 1e-3, "calls": 5}}}) == []


def test_busy_exactly_at_the_threshold_is_not_flagged():
    assert sus({}, {0: {"tail": {"device_busy_after_s": 50e-6, "event_s": 1e-4, "calls": 5}}}) == []
    assert sus({}, {0: {"tail": {"device_busy_after_s": 0.2 * 1e-3, "event_s": 1e-3, "calls": 5}}}) == []


def test_a_tail_without_both_times_is_not_judged():
    assert sus({}, {0: {"tail": {"device_busy_after_s": 1.0, "calls": 5}}}) == []
    assert sus({}, {0: {"tail": {"event_s": 1.0, "calls": 5}}}) == []


def busy(ref_tail):
    cand = {0: {"tail": {"device_busy_after_s": 1.0, "event_s": 2.0, "calls": 3}}}
    ref = {0: {"tail": ref_tail}} if ref_tail is not None else {}
    [(reason, cause)] = sus(ref, cand)
    assert cause == STREAM
    head = "rank 0: the device stayed busy 1000000 us after the last timed event of 3 calls that the events timed " \
           "at 2000000 us"
    assert reason.startswith(head)
    return reason[len(head):]


def test_the_reference_busy_too_is_said():
    assert busy({"device_busy_after_s": 0.5, "event_s": 2.0}) == " (the reference does too)"


def test_a_reference_without_a_tail_is_not_busy():
    assert busy(None) == ""
    assert busy({}) == ""


def test_the_reference_busy_exactly_at_its_threshold_is_not_busy():
    assert busy({"device_busy_after_s": 50e-6, "event_s": 1e-4}) == ""


def test_the_references_threshold_is_a_fifth_of_its_events_time():
    assert busy({"device_busy_after_s": 1e-4, "event_s": 1e-3}) == ""  # 100 us under 200 us
    assert busy({"device_busy_after_s": 3e-4, "event_s": 1e-3}) == " (the reference does too)"


def test_the_references_threshold_without_its_events_time_is_50_us():
    assert busy({"device_busy_after_s": 1e-4}) == " (the reference does too)"
    assert busy({"device_busy_after_s": 4e-5}) == ""


def test_aliasing_the_reference_does_not_do_is_named():
    found = sus({0: {"aliases": []}}, {0: {"aliases": ["output 0 is input 1", "output 1 is input 0"]}})
    assert found == [("rank 0: output 0 is input 1; output 1 is input 0 (the reference's outputs do not)", ALIAS)]


def test_aliasing_the_reference_does_too_is_no_suspicion():
    assert sus({0: {"aliases": ["output 0 is input 0"]}}, {0: {"aliases": ["output 0 is input 0"]}}) == []


def test_the_aliases_are_cut_at_200_characters():
    found = sus({}, {0: {"aliases": ["a" * 150, "b" * 150]}})
    assert found == [(f"rank 0: {'a' * 150}; {'b' * 48} (the reference's outputs do not)", ALIAS)]


def test_findings_come_rank_by_rank_in_order():
    cand = {1: {"aliases": ["output 0 is input 0"]},
            0: {"replaced": ["time.time"], "tail": {"device_busy_after_s": 1.0, "event_s": 2.0, "calls": 7}}}
    found = sus({}, cand, ranks=2)
    assert found == [
        ("rank 0: the candidate's code replaced time.time (the harness timed with the functions it held before the "
         "import)", TIMER),
        ("rank 0: the device stayed busy 1000000 us after the last timed event of 7 calls that the events timed at "
         "2000000 us", STREAM),
        ("rank 1: output 0 is input 0 (the reference's outputs do not)", ALIAS)]


def test_a_candidates_harness_that_never_reported_its_checks_is_suspect():
    found = sus({0: {"post": False}, 1: {"aliases": []}}, {1: {"aliases": []}}, ranks=2)
    assert found == [("rank 0: its harness's checks after the timing never reported (the reference's did)", REWROTE)]


def test_skipping_the_check_after_new_values_without_a_note_is_suspect():
    found = sus({0: {"post": True}}, {0: {}})
    assert found == [("rank 0: its harness skipped the check after new values without saying why (the reference's "
                      "made it)", REWROTE)]


def test_skipping_the_check_after_new_values_with_a_note_is_no_suspicion():
    assert sus({0: {"post": True}}, {0: {"post_note": "no tensor argument to write new values into"}}) == []


def store_loader(store):
    return lambda paths: store[paths[0]]


POST_OUT = ({0: {"post": ["ref-post-0.npy"]}}, {0: {"post": ["cand-post-0.npy"]}})


def post_check(ref_val, cand_val):
    load = store_loader({"ref-post-0.npy": ref_val, "cand-post-0.npy": cand_val})
    return sus({0: {"post": True}}, {0: {"post": True}}, ref_out=POST_OUT[0], cand_out=POST_OUT[1], load=load)


def test_an_output_that_follows_new_values_is_no_suspicion():
    """The check after new values uses the loader and the tolerance given (1.0 against
    1.005 is within atol 0.01)."""
    assert post_check(np.array([1.0, 2.0]), np.array([1.005, 2.0])) == []


def test_an_output_that_no_longer_matches_after_new_values_is_cached():
    found = post_check(np.array([1.0, 2.0]), np.array([1.0, 3.0]))
    assert found == [("after new values were written into the tensors it was timed on, its output no longer matched "
                      f"the reference's on them (output: {WHY} (1 of 2 elements))", CACHED)]


def test_the_mismatch_after_new_values_is_cut_at_160_characters():
    key = "k" * 170
    found = post_check({key: np.array([1.0, 2.0])}, {key: np.array([1.0, 3.0])})
    assert found == [("after new values were written into the tensors it was timed on, its output no longer matched "
                      f"the reference's on them (.{key[:159]})", CACHED)]


def test_saying_the_check_after_new_values_was_made_without_its_output_is_suspect():
    found = sus({0: {"post": True}}, {0: {"post": True}}, ref_out=POST_OUT[0], cand_out={0: {"0": ["x"]}},
                load=store_loader({}))
    assert found == [("it said it made the check after new values but sent no output for it", REWROTE)]


def test_the_check_after_new_values_needs_every_rank_on_both_sides():
    """Rank 1 of the candidate did not make it (and said why): no check, so no output is
    asked for."""
    found = sus({0: {"post": True}, 1: {"post": True}}, {0: {"post": True}, 1: {"post_note": "skipped: no input"}},
                ranks=2, load=store_loader({}))
    assert found == []


# ------------------------------------------------------------------ _mark_suspect


def test_nothing_found_leaves_the_row_as_it_is():
    row = {"correct": True, "speedup": 2.0, "speedup_total_time": 1.5}
    S._mark_suspect(row, [])
    assert row == {"correct": True, "speedup": 2.0, "speedup_total_time": 1.5}


def test_a_suspect_is_never_correct_and_its_speedups_move_under_suspect():
    row = {"correct": True, "outputs_match": True, "speedup": 2.5, "speedup_total_time": 2.25}
    S._mark_suspect(row, [("r1", "c1"), ("r2", "c1"), ("r3", "c2")])
    assert row == {"correct": False, "outputs_match": True, "speedup": None,
                   "suspect": {"reasons": ["r1", "r2", "r3"], "likely_causes": ["c1", "c2"],
                               "measured_speedup": 2.5, "measured_speedup_total_time": 2.25}}


def test_a_suspect_without_a_speedup_keeps_none_under_suspect():
    row = {"correct": True, "speedup": None}
    S._mark_suspect(row, [("r", "c")])
    assert row == {"correct": False, "speedup": None,
                   "suspect": {"reasons": ["r"], "likely_causes": ["c"], "measured_speedup": None}}


def test_a_second_finding_is_added_to_the_suspicion_already_there():
    """The counted floor's finding after the timing's: the reasons and causes add up
    without repeats, the speedup measured earlier stays (the row's is None by then)."""
    row = {"correct": False, "speedup": None,
           "suspect": {"reasons": ["timer"], "likely_causes": ["a timer"], "measured_speedup": 3.0}}
    S._mark_suspect(row, [("timer", "a timer"), ("floor", "cached")])
    assert row == {"correct": False, "speedup": None,
                   "suspect": {"reasons": ["timer", "floor"], "likely_causes": ["a timer", "cached"],
                               "measured_speedup": 3.0}}


def test_a_speedup_on_a_row_already_suspect_moves_under_suspect():
    row = {"correct": False, "speedup": 1.5,
           "suspect": {"reasons": ["timer"], "likely_causes": ["a timer"], "measured_speedup": 3.0}}
    S._mark_suspect(row, [("floor", "cached")])
    assert row == {"correct": False, "speedup": None,
                   "suspect": {"reasons": ["timer", "floor"], "likely_causes": ["a timer", "cached"],
                               "measured_speedup": 1.5}}
