"""score.run_timed: a target found only reporting a time short of the wall the judge saw
is run again, TIME_RERUNS times at most (a loaded host can keep an honest harness off the
CPU between a mark and its loop: a 30 ms loop seen as 106 ms in CI); anything else found
is final at once. The runs are stand-ins (no child): what run_target returned, in order."""

import pytest

from linkroof.scoring import score as S

SHORT = "its results were not accepted: rank 0 reported 30.000 ms for a timed loop the judge saw take 106.559 ms " \
        "(under 50% of it)"


def result(failure=None, time_only=False):
    r = S.RunResult(S.Target.of("m:x"), "", 0, 1, 1.0, failure=failure)
    r.time_only = time_only
    return r


def short():
    return result({"kind": "tampered", "message": SHORT, "ranks": [0]}, time_only=True)


def runs(monkeypatch, *results):
    queue, calls, freed = list(results), [], []
    monkeypatch.setattr(S, "run_target", lambda *a, **k: calls.append((a, k)) or queue.pop(0))
    monkeypatch.setattr(S, "free", freed.append)
    return calls, freed


def test_a_short_time_once_is_run_again_and_the_second_run_counts(monkeypatch):
    ok = result()
    calls, freed = runs(monkeypatch, short(), ok)
    got = S.run_timed("target", "inputs", 1, "pkb", "/tmp/x", 1, iters=7)
    assert got is ok and got.failure is None
    assert got.reruns == [SHORT]
    assert len(calls) == 2 and calls[1] == (("target", "inputs", 1, "pkb", "/tmp/x", 1), {"iters": 7})
    assert len(freed) == 1  # the first run's memory files


def test_short_every_time_is_tampered_after_two_more_runs(monkeypatch):
    assert S.TIME_RERUNS == 2
    last = short()
    calls, _ = runs(monkeypatch, short(), short(), last, result())
    got = S.run_timed()
    assert got is last and got.failure["kind"] == "tampered"
    assert got.reruns == [SHORT, SHORT] and len(calls) == 3


@pytest.mark.parametrize("failure,time_only", [
    ({"kind": "tampered", "message": "rank 0's frame failed its signature"}, False),  # found by the channel
    ({"kind": "hang", "message": "did not finish"}, False),
    ({"kind": "exception", "message": "ValueError"}, True),  # time_only without tampered: not a finding of time
])
def test_anything_else_is_final_at_once(monkeypatch, failure, time_only):
    first = result(failure, time_only)
    calls, freed = runs(monkeypatch, first, result())
    got = S.run_timed()
    assert got is first and got.reruns == [] and len(calls) == 1 and freed == []


def test_a_clean_run_is_run_once(monkeypatch):
    first = result()
    calls, _ = runs(monkeypatch, first, result())
    assert S.run_timed() is first and len(calls) == 1


def test_the_row_says_each_earlier_runs_finding():
    ref, cand = result(), result()
    ref.reruns, cand.reruns = [SHORT], []
    row = S.score_row(ref, cand, "linkroof", 1, 1e-2, 1e-2)
    assert row["time_reruns"] == {"reference": [SHORT]}
    ref.reruns = []
    assert "time_reruns" not in S.score_row(ref, cand, "linkroof", 1, 1e-2, 1e-2)


def test_pkbs_row_gathers_every_trials_reruns(monkeypatch):
    """Under PKB's protocol each trial is a job of its own: the row names the trial of each rerun."""
    import numpy as np

    def run(target, inputs, ranks, protocol, out_dir, trials, first_trial=0, **k):
        r = result()
        r.target = target
        r.perf = {0: {"wall_time_ms": 1.0, "median_ms": 1.0}}
        r.trials_done = {0: 1}
        r.reruns = [SHORT] if (first_trial == 1 and target.name == "c") else []
        return r

    monkeypatch.setattr(S, "run_timed", run)
    monkeypatch.setattr(S, "check_trials", lambda ref, cand, ts, *a: [{"trial": ts[0], "result": "match"}])
    row = S._pkb_candidate("m:reference", "m:c", 0, "m:inputs", 1, 3, 1e-2, 1e-2, None, None, "/tmp", {})
    assert row["time_reruns"] == {"candidate": [f"trial 1: {SHORT}"]}
    assert np.isclose(row["speedup"], 1.0)


def test_the_feedback_says_the_time_is_from_the_run_after():
    row = {"candidate": "c", "correct": True, "protocol": "pkb", "speedup": 2.0, "time_s": 50e-6,
           "reference_time_s": 100e-6, "trial_speedups": [2.0], "time_reruns": {"reference": [SHORT, SHORT]}}
    text = S.feedback(row)
    assert ("timed again: the reference's first 2 run(s) reported a time short of the wall the judge saw (a host "
            "that kept the harness off the CPU); the times are from the run after") in text
    assert "2.00x the reference (50.0 us against 100.0 us, pkb protocol)" in text
    row.pop("time_reruns")
    assert "timed again" not in S.feedback(row)


def test_a_rerun_is_earned_by_the_disagreements_kind_not_its_words():
    """short_only reads each time disagreement's kind: a long time whose sentence happens
    to hold the short one's words earns no rerun, and the kinds are those the judge made."""
    from types import SimpleNamespace

    class Rep:
        def __init__(self, ms, wall_s, marks=True):
            self.perf = {"wall_time_ms": ms}
            self.marks = {"timing_start": 10.0, "timing_end": 10.0 + wall_s} if marks else {}

    def kinds(rep):
        return [d.kind for d in S.time_disagreements(SimpleNamespace(reports={0: rep}), "pkb", 100)]

    assert kinds(Rep(0.01, 0.100)) == ["short"]  # 1 ms reported for 100 ms seen
    assert kinds(Rep(1.0, 0.080)) == ["long"]  # 100 ms reported in 80 ms
    assert kinds(Rep(1.0, 0.1, marks=False)) == ["marks"]
    worded = S.Disagreement("rank 0 reported 9 ms for a loop seen take 1 ms (under 50% of it)", "long")
    assert not S.short_only([], [worded])
    assert S.short_only([], [S.Disagreement("rank 0 reported 1 ms", "short")])
    assert not S.short_only([], ["rank 0 reported 1 ms for 100 ms (under 50% of it)"])  # a bare sentence: no kind
    assert not S.short_only(["the channel was written to"], [S.Disagreement("x", "short")])
    assert not S.short_only([], [])
