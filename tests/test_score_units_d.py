"""score() and _pkb_candidate() (linkroof/scoring/score.py) on their own: every function
they call to start, check, time, free or count a target is replaced by a recording
stand-in, so what is checked is their own logic, exactly, from their docstrings:

- score: the options are checked before anything (max_memory_bytes: a whole number of
  bytes, at least 1 MiB; the rest by check_options); the reference, the inputs and every
  candidate are checked first unless a stand-in `command` resolves them (`validate`
  overrides), all problems named in one ScoreError; an unrunnable candidate gets its
  failure row and no child; the reference is run once (lazily) and every candidate with
  the same seeds, drawn once for trials + 1, and the same options; PKB's 0.5 s cool-down
  between them; one row per candidate in order, each handed to `on_row` (counted first
  where `counters`, with the row's floor margin); the pkb protocol goes candidate by
  candidate through _pkb_candidate; every run freed; the scratch folder is a
  "linkroof-score-" one under `work_dir`, gone afterwards.
- _pkb_candidate: per trial a reference job, the cool-down, a candidate job, with the
  trial's seed and the check's seed; stop at the first failure or mismatch; the trial's
  speedup is the reference's time over the candidate's; the row's speedup is the mean of
  the trials', speedup_total_time the total reference time over the total time (both put
  in `suspect` instead when the row is suspect); every trial's reruns said per target.
"""

import os
from types import SimpleNamespace

import pytest

from linkroof.scoring import score as S

CMD = object()  # a stand-in child command: the targets are not checked by default
WL, PROF, COUNT = object(), object(), object()


class Run:
    """A stand-in RunResult: a name, its time (s) as the pkb protocol reads it, a failure
    and, unless left out, the reasons it was run again."""

    def __init__(self, name, t=None, failure=None, reruns=()):
        self.name, self.t, self.failure = name, t, failure
        if reruns is not None:
            self.reruns = list(reruns)

    def __repr__(self):
        return f"Run({self.name})"


# ------------------------------------------------------------------ score


@pytest.fixture
def judge(monkeypatch):
    """score()'s collaborators, recording: each run_timed returns a fresh Run named run0,
    run1, ..; score_row returns the next of `rows_out` (else {"scored": the candidate's
    run}); make_seeds gives 1000, 1001, ..; the targets' checks answer from `bad`."""
    rec = SimpleNamespace(runs=[], results=[], sleeps=[], scored=[], rows_out=[], freed=[], counted=[], pkb=[],
                          seeds_n=[], targets=[], inputs=[], bad={}, options=[])

    def run_timed(*args, **kwargs):
        rec.runs.append((args, dict(kwargs)))
        rec.results.append(Run(f"run{len(rec.results)}"))
        return rec.results[-1]

    def score_row(*args, **kwargs):
        rec.scored.append((args, kwargs))
        return dict(rec.rows_out.pop(0)) if rec.rows_out else {"scored": args[1].name}

    def with_counters(*args, **kwargs):
        rec.counted.append((args, kwargs))
        return {"counted": args[0]}

    def pkb_candidate(*args, **kwargs):
        rec.pkb.append((args, kwargs))
        return {"pkb": args[1]}

    def make_seeds(n):
        rec.seeds_n.append(n)
        return [1000 + k for k in range(n)]

    def check_target(spec):
        rec.targets.append(spec)
        return rec.bad.get(spec)

    def check_inputs(spec):
        rec.inputs.append(spec)
        return rec.bad.get(spec)

    monkeypatch.setattr(S, "run_timed", run_timed)
    monkeypatch.setattr(S, "score_row", score_row)
    monkeypatch.setattr(S, "with_counters", with_counters)
    monkeypatch.setattr(S, "_pkb_candidate", pkb_candidate)
    monkeypatch.setattr(S, "make_seeds", make_seeds)
    monkeypatch.setattr(S, "check_target", check_target)
    monkeypatch.setattr(S, "check_inputs", check_inputs)
    monkeypatch.setattr(S, "free", rec.freed.append)
    monkeypatch.setattr(S.time, "sleep", rec.sleeps.append)
    return rec


def _scratch(path, tmp_path):
    """The scratch folder of a run's out_dir: a linkroof-score- folder in work_dir."""
    tmp = os.path.dirname(path)
    assert os.path.dirname(tmp) == str(tmp_path) and os.path.basename(tmp).startswith("linkroof-score-")
    return tmp


def test_score_with_its_defaults_runs_the_reference_once_then_each_candidate_with_the_same_seeds(judge, tmp_path):
    rows = S.score("ref:fn", ["a:x", "b:y"], "inp:make", command=CMD, work_dir=str(tmp_path))
    tmp = _scratch(judge.runs[0][0][4], tmp_path)
    seeds = [1000, 1001, 1002, 1003, 1004, 1005]  # trials + 1: PKB's 5 trials and the check's
    common = dict(deadline_s=S.DEADLINE_S, warmup=S.PKB_WARMUP, iters=S.PKB_ITERS, shape=(1024, 1024),
                  dtype="bfloat16", command=CMD, problem_id=1, max_output_bytes=S.DEFAULT_MAX_OUTPUT_BYTES,
                  sandbox="auto", max_memory_bytes=None)
    assert judge.seeds_n == [6]
    assert judge.runs == [
        ((S.Target.of("ref:fn"), "inp:make", 1, "linkroof", os.path.join(tmp, "reference"), 5),
         dict(seeds=seeds, reference=True, **common)),
        ((S.Target.of("a:x"), "inp:make", 1, "linkroof", os.path.join(tmp, "candidate_0"), 5),
         dict(seeds=seeds, **common)),
        ((S.Target.of("b:y"), "inp:make", 1, "linkroof", os.path.join(tmp, "candidate_1"), 5),
         dict(seeds=seeds, **common)),
    ]
    ref, a, b = judge.results
    assert judge.sleeps == [S.PKB_COOLDOWN_S, S.PKB_COOLDOWN_S] == [0.5, 0.5]
    assert judge.scored == [((ref, a, "linkroof", 5, 0.01, 0.01, None, None), {}),
                            ((ref, b, "linkroof", 5, 0.01, 0.01, None, None), {})]
    assert rows == [{"scored": "run1"}, {"scored": "run2"}]
    assert judge.freed == [a, b, ref]  # each candidate once its row is made, the reference at the end
    assert judge.counted == [] and judge.pkb == []  # counters are off by default
    assert judge.targets == [] and judge.inputs == []  # a stand-in command: nothing checked by default
    assert not os.path.exists(tmp)


def test_score_hands_every_option_to_each_run_and_row_and_each_row_to_on_row(judge, tmp_path, monkeypatch):
    options = []
    monkeypatch.setattr(S, "check_options", lambda *a, **k: options.append((a, k)))
    seen = []
    rows = S.score("problems/17_allreduce.py", ["a.py", "m:b"], "inp:make", ranks=3, protocol="linkroof", trials=2,
                   atol=0.5, rtol=0.25, deadline_s=9.0, workload=WL, profile=PROF, warmup=4, iters=6, shape=(8, 16),
                   dtype="float32", work_dir=str(tmp_path), on_row=seen.append, command=CMD,
                   max_output_bytes=12345, validate=False, counters=False, count=COUNT, sandbox="none",
                   max_memory_bytes=1 << 20)
    assert options == [((3, 2, 0.5, 0.25, 9.0, 12345, 4, 6), {})]
    tmp = _scratch(judge.runs[0][0][4], tmp_path)
    seeds = [1000, 1001, 1002]
    common = dict(deadline_s=9.0, warmup=4, iters=6, shape=(8, 16), dtype="float32", command=CMD, problem_id=17,
                  max_output_bytes=12345, sandbox="none", max_memory_bytes=1 << 20)
    assert judge.seeds_n == [3]
    assert judge.runs == [
        ((S.Target.of("problems/17_allreduce.py"), "inp:make", 3, "linkroof", os.path.join(tmp, "reference"), 2),
         dict(seeds=seeds, reference=True, **common)),
        ((S.Target.of("a.py"), "inp:make", 3, "linkroof", os.path.join(tmp, "candidate_0"), 2),
         dict(seeds=seeds, **common)),
        ((S.Target.of("m:b"), "inp:make", 3, "linkroof", os.path.join(tmp, "candidate_1"), 2),
         dict(seeds=seeds, **common)),
    ]
    ref, a, b = judge.results
    assert judge.scored == [((ref, a, "linkroof", 2, 0.5, 0.25, WL, PROF), {}),
                            ((ref, b, "linkroof", 2, 0.5, 0.25, WL, PROF), {})]
    assert rows == seen == [{"scored": "run1"}, {"scored": "run2"}]
    assert judge.freed == [a, b, ref] and judge.counted == []


def test_score_counts_each_candidates_row_with_its_floor_margin_else_the_default(judge, tmp_path):
    judge.rows_out = [{"name": "a", "floor_margin": 0.25}, {"name": "b"}]
    seen = []
    rows = S.score("ref:fn", ["a:x", "b:y"], "inp:make", trials=1, command=CMD, work_dir=str(tmp_path),
                   profile=PROF, counters=True, count=COUNT, on_row=seen.append)
    tmp = _scratch(judge.runs[0][0][4], tmp_path)
    assert judge.counted == [
        (({"name": "a", "floor_margin": 0.25}, "a:x", "inp:make", PROF, 0.25, tmp, COUNT), {}),
        (({"name": "b"}, "b:y", "inp:make", PROF, S.FLOOR_MARGIN, tmp, COUNT), {}),
    ]
    assert S.FLOOR_MARGIN == 0.02
    assert rows == seen == [{"counted": {"name": "a", "floor_margin": 0.25}}, {"counted": {"name": "b"}}]


def test_score_by_pkb_goes_candidate_by_candidate_through_pkbs_eval_with_the_seeds(judge, tmp_path):
    seen = []
    rows = S.score("problems/17_allreduce.py", ["a.py", "b.py"], "inp:make", ranks=2, protocol="pkb", trials=2,
                   atol=0.5, rtol=0.25, deadline_s=9.0, workload=WL, profile=PROF, warmup=4, iters=6,
                   shape=(8, 16), dtype="float32", work_dir=str(tmp_path), on_row=seen.append, command=CMD,
                   max_output_bytes=12345, counters=True, count=COUNT, sandbox="none", max_memory_bytes=1 << 21)
    tmp = judge.pkb[0][0][10]
    assert os.path.dirname(tmp) == str(tmp_path) and os.path.basename(tmp).startswith("linkroof-score-")
    common = dict(deadline_s=9.0, warmup=4, iters=6, shape=(8, 16), dtype="float32", command=CMD, problem_id=17,
                  max_output_bytes=12345, sandbox="none", max_memory_bytes=1 << 21, seeds=[1000, 1001, 1002])
    assert judge.pkb == [
        (("problems/17_allreduce.py", "a.py", 0, "inp:make", 2, 2, 0.5, 0.25, WL, PROF, tmp, common), {}),
        (("problems/17_allreduce.py", "b.py", 1, "inp:make", 2, 2, 0.5, 0.25, WL, PROF, tmp, common), {}),
    ]
    assert judge.runs == [] and judge.sleeps == [] and judge.scored == []  # PKB's eval runs its own jobs
    assert judge.counted == [(({"pkb": "a.py"}, "a.py", "inp:make", PROF, 0.02, tmp, COUNT), {}),
                             (({"pkb": "b.py"}, "b.py", "inp:make", PROF, 0.02, tmp, COUNT), {})]
    assert rows == seen == [{"counted": {"pkb": "a.py"}}, {"counted": {"pkb": "b.py"}}]
    assert [f for f in judge.freed if f is not None] == []


def test_score_by_default_checks_the_targets_first_and_names_every_problem(judge, tmp_path):
    judge.bad = {"ref:fn": "ref:fn: no module named 'ref'", "inp:make": "--inputs inp:make: no module"}
    with pytest.raises(S.ScoreError) as e:
        S.score("ref:fn", ["a:x"], "inp:make", trials=1, work_dir=str(tmp_path))
    assert str(e.value) == "cannot score: ref:fn: no module named 'ref'; --inputs inp:make: no module"
    assert judge.targets == ["ref:fn"] and judge.inputs == ["inp:make"] and judge.runs == []


def test_score_validate_true_checks_the_targets_even_with_a_stand_in_command(judge, tmp_path):
    judge.bad = {"inp:make": "--inputs inp:make: no module"}
    with pytest.raises(S.ScoreError) as e:
        S.score("ref:fn", ["a:x"], "inp:make", trials=1, work_dir=str(tmp_path), command=CMD, validate=True)
    assert str(e.value) == "cannot score: --inputs inp:make: no module"
    assert judge.targets == ["ref:fn"] and judge.runs == []


def test_score_validate_false_checks_nothing_and_runs_every_candidate(judge, tmp_path):
    judge.bad = {"ref:fn": "bad", "inp:make": "bad", "a:x": "bad"}
    rows = S.score("ref:fn", ["a:x"], "inp:make", trials=1, work_dir=str(tmp_path), validate=False)
    assert judge.targets == [] and judge.inputs == []
    assert [r[0][0] for r in judge.runs] == [S.Target.of("ref:fn"), S.Target.of("a:x")]
    assert rows == [{"scored": "run1"}]


def test_an_unrunnable_candidate_gets_its_failure_row_and_no_child_and_the_next_one_runs(judge, tmp_path):
    judge.bad = {"bad.py": "bad.py: no file bad.py"}
    seen = []
    rows = S.score("ref:fn", ["bad.py", "a:x"], "inp:make", ranks=2, trials=1, work_dir=str(tmp_path),
                   counters=True, on_row=seen.append)
    assert judge.targets == ["ref:fn", "bad.py", "a:x"] and judge.inputs == ["inp:make"]
    tmp = _scratch(judge.runs[0][0][4], tmp_path)
    assert [r[0][:5] for r in judge.runs] == [
        (S.Target.of("ref:fn"), "inp:make", 2, "linkroof", os.path.join(tmp, "reference")),
        (S.Target.of("a:x"), "inp:make", 2, "linkroof", os.path.join(tmp, "candidate_1"))]
    failed = rows[0]
    assert failed == S._unrunnable("bad.py", "bad.py: no file bad.py", 2, "linkroof")
    assert (failed["candidate"], failed["spec"], failed["ranks"], failed["protocol"], failed["correct"]) == \
        ("bad", "bad.py", 2, "linkroof", False)
    assert failed["failure"] == {"kind": "import_error", "ranks": [],
                                 "message": "checked before running: bad.py: no file bad.py"}
    assert rows[1] == {"counted": {"scored": "run1"}}
    assert [c[0][1] for c in judge.counted] == ["a:x"]  # a failure row is not counted
    assert seen == rows


def test_an_unrunnable_candidate_by_pkb_gets_its_failure_row_too(judge, tmp_path):
    judge.bad = {"bad.py": "bad.py: no file bad.py"}
    rows = S.score("ref:fn", ["bad.py", "a:x"], "inp:make", protocol="pkb", trials=1, work_dir=str(tmp_path))
    assert rows[0] == S._unrunnable("bad.py", "bad.py: no file bad.py", 1, "pkb")
    assert rows[1] == {"pkb": "a:x"} and [c[0][:3] for c in judge.pkb] == [("ref:fn", "a:x", 1)]


@pytest.mark.parametrize("bad", [(1 << 20) - 1, 1000, 4194304.0, True, "2097152"])
def test_max_memory_bytes_must_be_a_whole_number_of_bytes_of_at_least_one_mib(judge, tmp_path, bad):
    with pytest.raises(S.ScoreError) as e:
        S.score("ref:fn", ["a:x"], "inp:make", trials=1, command=CMD, work_dir=str(tmp_path), max_memory_bytes=bad)
    assert str(e.value) == f"max_memory_bytes {bad!r}: a whole number of bytes, at least 1 MiB"
    assert judge.runs == [] and judge.seeds_n == []


@pytest.mark.parametrize("good", [1 << 20, (1 << 20) + 1, 1 << 21, 3 << 20])
def test_max_memory_bytes_of_one_mib_or_more_goes_to_every_run(judge, tmp_path, good):
    S.score("ref:fn", ["a:x"], "inp:make", trials=1, command=CMD, work_dir=str(tmp_path), max_memory_bytes=good)
    assert [r[1]["max_memory_bytes"] for r in judge.runs] == [good, good]


@pytest.mark.parametrize("option, value, words", [
    ("ranks", 0, "ranks 0: from 1 to 64"), ("trials", 0, "trials 0: at least 1"),
    ("atol", -1.0, "atol -1.0: a finite number, not negative"), ("rtol", -1.0, "rtol -1.0: a finite number, not negative"),
    ("deadline_s", 0.0, "deadline 0.0: a finite number of seconds above 0"),
    ("max_output_bytes", 0, "max output bytes 0: a positive integer"),
    ("warmup", -1, "warmup -1: at least 0"), ("iters", 0, "iters 0: at least 1")])
def test_each_option_out_of_range_stops_the_score_before_any_run(judge, tmp_path, option, value, words):
    with pytest.raises(S.ScoreError) as e:
        S.score("ref:fn", ["a:x"], "inp:make", command=CMD, work_dir=str(tmp_path), **{option: value})
    assert str(e.value) == "cannot score: " + words
    assert judge.runs == []


# ------------------------------------------------------------------ _pkb_candidate


@pytest.fixture
def pkb(monkeypatch):
    """_pkb_candidate's collaborators, recording: run_timed returns the next of `results`;
    check_trials answers the trial's `verdict` ([] where it is None); time_of gives a
    Run's t for the pkb protocol (None for any other); score_row returns a copy of
    `row_out`; feedback records the row it is given."""
    rec = SimpleNamespace(runs=[], results=[], sleeps=[], checks=[], verdict={}, times=[], scored=[], row_out={},
                          freed=[], fed=[])

    def run_timed(*args, **kwargs):
        rec.runs.append((args, {k: (list(v) if k == "seeds" and v is not None else v) for k, v in kwargs.items()}))
        return rec.results.pop(0)

    def check_trials(ref, cand, trials, atol, rtol):
        rec.checks.append((ref, cand, list(trials), atol, rtol))
        v = rec.verdict.get(trials[0], "match")
        return [{"trial": trials[0], "result": v}] if v else []

    def time_of(res, protocol):
        rec.times.append((res.name, protocol))
        return res.t if protocol == "pkb" else None

    def score_row(ref, cand, protocol, trials, atol, rtol, workload=None, profile=None, load=None, checked=None,
                  extra_times=()):
        rec.scored.append(dict(ref=ref, cand=cand, protocol=protocol, trials=trials, atol=atol, rtol=rtol,
                               workload=workload, profile=profile, load=load,
                               checked=None if checked is None else [dict(c) for c in checked],
                               extra_times=extra_times))
        return {k: (dict(v) if isinstance(v, dict) else v) for k, v in rec.row_out.items()}

    def feedback(row):
        rec.fed.append(dict(row))
        return "the feedback"

    monkeypatch.setattr(S, "run_timed", run_timed)
    monkeypatch.setattr(S, "check_trials", check_trials)
    monkeypatch.setattr(S, "time_of", time_of)
    monkeypatch.setattr(S, "score_row", score_row)
    monkeypatch.setattr(S, "feedback", feedback)
    monkeypatch.setattr(S, "free", rec.freed.append)
    monkeypatch.setattr(S.time, "sleep", rec.sleeps.append)
    return rec


def _pkb(trials=2, common=None, i=3):
    return S._pkb_candidate("problems/17_ar.py", "m:cand", i, "inp:make", 2, trials, 0.5, 0.25, WL, PROF, "/scratch",
                            {"deadline_s": 7.0, "marker": "m", "seeds": [11 * (k + 1) for k in range(trials + 1)]}
                            if common is None else common)


def test_pkb_runs_each_trial_as_a_reference_job_the_cool_down_and_a_candidate_job(pkb):
    """Two trials, seeds 11, 22 and the check's 33: trial t gets [seeds[t], 33]; its jobs'
    folders are c{i}_t{t}_reference and c{i}_t{t}_candidate; the earlier trial's runs are
    freed as the next one starts, the last ones once the row is made."""
    r0, c0, r1, c1 = Run("r0", 2e-3), Run("c0", 1e-3), Run("r1", 3e-3), Run("c1", 4e-3)
    pkb.results = [r0, c0, r1, c1]
    pkb.row_out = {"candidate": "cand", "correct": True}
    common = {"deadline_s": 7.0, "marker": "m", "seeds": [11, 22, 33]}
    _pkb(common=common)
    assert common == {"deadline_s": 7.0, "marker": "m", "seeds": [11, 22, 33]}  # the caller's dict is left alone
    ref_t, cand_t = S.Target.of("problems/17_ar.py"), S.Target.of("m:cand")
    assert pkb.runs == [
        ((ref_t, "inp:make", 2, "pkb", "/scratch/c3_t0_reference", 1),
         dict(first_trial=0, seeds=[11, 33], reference=True, deadline_s=7.0, marker="m")),
        ((cand_t, "inp:make", 2, "pkb", "/scratch/c3_t0_candidate", 1),
         dict(first_trial=0, seeds=[11, 33], deadline_s=7.0, marker="m")),
        ((ref_t, "inp:make", 2, "pkb", "/scratch/c3_t1_reference", 1),
         dict(first_trial=1, seeds=[22, 33], reference=True, deadline_s=7.0, marker="m")),
        ((cand_t, "inp:make", 2, "pkb", "/scratch/c3_t1_candidate", 1),
         dict(first_trial=1, seeds=[22, 33], deadline_s=7.0, marker="m")),
    ]
    assert pkb.sleeps == [0.5, 0.5]
    assert pkb.checks == [(r0, c0, [0], 0.5, 0.25), (r1, c1, [1], 0.5, 0.25)]
    assert pkb.times == [("r0", "pkb"), ("c0", "pkb"), ("r1", "pkb"), ("c1", "pkb")]
    assert pkb.freed == [r0, c0, r1, c1]


def test_without_seeds_trial_t_gets_seed_t_and_the_check_seed_trials(pkb):
    pkb.results = [Run("r0", 1e-3), Run("c0", 1e-3), Run("r1", 1e-3), Run("c1", 1e-3), Run("r2", 1e-3),
                   Run("c2", 1e-3)]
    pkb.row_out = {"candidate": "cand"}
    _pkb(trials=3, common={"deadline_s": 7.0})
    assert [r[1]["seeds"] for r in pkb.runs] == [[0, 3], [0, 3], [1, 3], [1, 3], [2, 3], [2, 3]]
    assert [r[1]["first_trial"] for r in pkb.runs] == [0, 0, 1, 1, 2, 2]
    assert all(r[1]["deadline_s"] == 7.0 for r in pkb.runs)


def test_pkbs_speedup_is_the_mean_of_the_trials_and_the_total_time_ratio_beside_it(pkb):
    """Trials of 2 ms against 1 ms (2x) and 3 ms against 4 ms (0.75x): PKB's speedup is
    their mean, 1.375; the total-time ratio (2 + 3) / (1 + 4) = 1.0; the row is made from
    the last trial's runs with every trial checked and each trial's time."""
    r0, c0, r1, c1 = Run("r0", 2e-3), Run("c0", 1e-3), Run("r1", 3e-3), Run("c1", 4e-3)
    pkb.results = [r0, c0, r1, c1]
    pkb.row_out = {"candidate": "cand", "correct": True, "speedup": 99.0, "speedup_total_time": 98.0, "time_s": 4e-3}
    row = _pkb()
    checked = [{"trial": 0, "result": "match", "reference_wall_time_ms": 2.0, "wall_time_ms": 1.0, "speedup": 2.0},
               {"trial": 1, "result": "match", "reference_wall_time_ms": 3.0, "wall_time_ms": 4.0, "speedup": 0.75}]
    assert pkb.scored == [dict(ref=r1, cand=c1, protocol="pkb", trials=2, atol=0.5, rtol=0.25, workload=WL,
                               profile=PROF, load=None, checked=checked, extra_times=[1e-3, 4e-3])]
    want = {"candidate": "cand", "correct": True, "speedup": 1.375, "speedup_total_time": 1.0, "time_s": 4e-3,
            "trial_speedups": [2.0, 0.75]}
    assert pkb.fed == [want]
    assert row == dict(want, feedback="the feedback")
    assert list(row)[:3] == ["candidate", "correct", "speedup"]


def test_every_trials_reruns_are_said_per_target_and_a_rows_own_are_replaced(pkb):
    """The reference of trial 0 and the candidate of trial 1 were run again: the row says
    so by trial; a run with no `reruns` at all counts as none."""
    pkb.results = [Run("r0", 2e-3, reruns=["short by 5 us"]), Run("c0", 1e-3), Run("r1", 3e-3, reruns=None),
                   Run("c1", 4e-3, reruns=["short by 7 us", "short by 8 us"])]
    pkb.row_out = {"candidate": "cand", "time_reruns": {"candidate": ["stale"]}}
    row = _pkb()
    assert row["time_reruns"] == {"reference": ["trial 0: short by 5 us"],
                                  "candidate": ["trial 1: short by 7 us", "trial 1: short by 8 us"]}
    assert list(row["time_reruns"]) == ["reference", "candidate"]


def test_with_no_reruns_the_row_says_none(pkb):
    pkb.results = [Run("r0", 2e-3), Run("c0", 1e-3)]
    pkb.row_out = {"candidate": "cand", "time_reruns": {"candidate": ["stale"]}}
    row = _pkb(trials=1)
    assert "time_reruns" not in row
    pkb.results = [Run("r0", 2e-3), Run("c0", 1e-3)]
    pkb.row_out = {"candidate": "cand"}
    assert "time_reruns" not in _pkb(trials=1)


def test_pkb_stops_at_the_first_mismatch(pkb):
    """Trial 0 of 3 does not match: no more trials; its speedup (2x) still counts."""
    r0, c0 = Run("r0", 2e-3), Run("c0", 1e-3)
    pkb.results = [r0, c0, Run("r1", 1e-3), Run("c1", 1e-3)]
    pkb.verdict = {0: "mismatch"}
    pkb.row_out = {"candidate": "cand", "correct": False}
    row = _pkb(trials=3)
    assert len(pkb.runs) == 2 and pkb.checks == [(r0, c0, [0], 0.5, 0.25)]
    assert pkb.scored[0]["ref"] is r0 and pkb.scored[0]["cand"] is c0
    assert pkb.scored[0]["checked"] == [{"trial": 0, "result": "mismatch", "reference_wall_time_ms": 2.0,
                                         "wall_time_ms": 1.0, "speedup": 2.0}]
    assert row == {"candidate": "cand", "correct": False, "speedup": 2.0, "speedup_total_time": 2.0,
                   "trial_speedups": [2.0], "feedback": "the feedback"}
    assert pkb.freed == [r0, c0]


def test_a_trial_without_artifacts_is_said_so_and_ends_the_trials(pkb):
    r0, c0 = Run("r0", 2e-3), Run("c0", 1e-3)
    pkb.results = [r0, c0, Run("r1", 1e-3), Run("c1", 1e-3)]
    pkb.verdict = {0: None}
    pkb.row_out = {"candidate": "cand"}
    _pkb(trials=2)
    assert len(pkb.runs) == 2
    assert pkb.scored[0]["checked"] == [{"trial": 0, "result": "no_artifacts", "reference_wall_time_ms": 2.0,
                                         "wall_time_ms": 1.0, "speedup": 2.0}]


@pytest.mark.parametrize("who", ["reference", "candidate"])
def test_pkb_stops_at_the_first_failed_run_and_makes_the_row_from_it(pkb, who):
    """Trial 0 matches at 2x; in trial 1 one side fails: that trial is not checked, and
    the row is made from its runs with trial 0 checked and timed."""
    r0, c0 = Run("r0", 2e-3), Run("c0", 1e-3)
    r1 = Run("r1", 3e-3, failure={"kind": "crash"} if who == "reference" else None)
    c1 = Run("c1", 4e-3, failure={"kind": "crash"} if who == "candidate" else None)
    pkb.results = [r0, c0, r1, c1, Run("r2", 1e-3), Run("c2", 1e-3)]
    pkb.row_out = {"candidate": "cand", "correct": False}
    row = _pkb(trials=3, common={"seeds": [11, 22, 33, 44]})
    assert len(pkb.runs) == 4 and len(pkb.checks) == 1
    assert pkb.scored[0]["ref"] is r1 and pkb.scored[0]["cand"] is c1
    assert pkb.scored[0]["checked"] == [{"trial": 0, "result": "match", "reference_wall_time_ms": 2.0,
                                         "wall_time_ms": 1.0, "speedup": 2.0}]
    assert pkb.scored[0]["extra_times"] == [1e-3]
    assert row["speedup"] == 2.0 and row["speedup_total_time"] == 2.0 and row["trial_speedups"] == [2.0]
    assert pkb.freed == [r0, c0, r1, c1]


def test_a_failed_first_trial_has_no_speedup(pkb):
    r0, c0 = Run("r0", 2e-3), Run("c0", None, failure={"kind": "crash"})
    pkb.results = [r0, c0]
    pkb.row_out = {"candidate": "cand", "correct": False}
    row = _pkb(trials=2)
    assert pkb.checks == [] and pkb.scored[0]["checked"] == [] and pkb.scored[0]["extra_times"] == []
    assert row == {"candidate": "cand", "correct": False, "speedup": None, "speedup_total_time": None,
                   "trial_speedups": [], "feedback": "the feedback"}


def test_a_trial_with_a_time_missing_has_no_speedup_and_counts_in_neither_ratio(pkb):
    """Trial 0: the reference gave no time; trial 1: the candidate gave none. Each known
    time is kept (in ms), no speedup is made up, and neither ratio has anything to use."""
    pkb.results = [Run("r0", None), Run("c0", 1e-3), Run("r1", 2e-3), Run("c1", None)]
    pkb.row_out = {"candidate": "cand", "correct": True}
    row = _pkb(trials=2)
    assert pkb.scored[0]["checked"] == [
        {"trial": 0, "result": "match", "reference_wall_time_ms": None, "wall_time_ms": 1.0, "speedup": None},
        {"trial": 1, "result": "match", "reference_wall_time_ms": 2.0, "wall_time_ms": None, "speedup": None}]
    assert pkb.scored[0]["extra_times"] == [1e-3]
    assert (row["speedup"], row["speedup_total_time"], row["trial_speedups"]) == (None, None, [])


def test_a_trial_whose_candidate_took_no_time_has_no_speedup(pkb):
    """A time of 0 (nothing measured) makes no speedup and no division by it."""
    pkb.results = [Run("r0", 2e-3), Run("c0", 0.0)]
    pkb.row_out = {"candidate": "cand"}
    row = _pkb(trials=1)
    assert pkb.scored[0]["checked"] == [
        {"trial": 0, "result": "match", "reference_wall_time_ms": 2.0, "wall_time_ms": None, "speedup": None}]
    assert row["speedup"] is None


@pytest.mark.parametrize("own_total", [True, False])
def test_a_suspect_rows_measured_speedups_go_in_its_suspicion_not_its_speedup(pkb, own_total):
    r0, c0, r1, c1 = Run("r0", 2e-3), Run("c0", 1e-3), Run("r1", 3e-3), Run("c1", 4e-3)
    pkb.results = [r0, c0, r1, c1]
    pkb.row_out = {"candidate": "cand", "correct": False, "suspect": {"reason": "under the floor"}}
    if own_total:
        pkb.row_out["speedup_total_time"] = 7.0
    row = _pkb()
    assert row == {"candidate": "cand", "correct": False, "trial_speedups": [2.0, 0.75], "feedback": "the feedback",
                   "suspect": {"reason": "under the floor", "measured_speedup": 1.375,
                               "measured_speedup_total_time": 1.0}}
    assert pkb.fed[0]["suspect"]["measured_speedup"] == 1.375
