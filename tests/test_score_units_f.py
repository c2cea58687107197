"""Unit rules of the judge (linkroof/scoring/score.py) that the end-to-end tests reach only
through stand-ins: _close (PKB's allclose, chunk by chunk in float32), check_trials (each
trial's outputs against the reference's, stopping at the first mismatch), _unrunnable (the
row of a candidate found unrunnable before any child starts), _opened_by_others (whether
uid 65534 can read a path) and with_counters (ncu's counts of a correct one-rank candidate:
the counted floor and the why-sentence). Each called in-process, its inputs built by hand,
the values worked out from the docstrings."""

import os
import shutil
import stat
import tempfile
import warnings

import numpy as np
import pytest

from linkroof.profiler import ncu
from linkroof.profiler.ncu import CounterReport, KernelCount
from linkroof.scoring import procs
from linkroof.scoring import score as S

# ------------------------------------------------------------------ _close


def _f32(values):
    return np.array(values, dtype=np.float32)


def test_close_counts_every_chunk_with_the_tolerance_scaled_by_the_output(monkeypatch):
    """Ten elements in chunks of 4 (0-3, 4-7, 8-9), atol 0.25, rtol 0.5: |ref - out| <=
    0.25 + 0.5 |out| is close (at the boundary too: 3.25 against 2 is 1.25 off, allowed
    1.25; 4 against 8 is 4 off, allowed 4.25 by the output, 2.25 by the reference); NaN on
    either side never close; equal infinities close. Far: 5 vs 0.5, 1 vs NaN, NaN vs 1,
    1 vs 4 (the last chunk); two of them finite. Worst absolute error 4.5 (first element),
    worst relative 3 (|1 - 4| / 1, the last chunk)."""
    monkeypatch.setattr(S, "CLOSE_CHUNK", 4)
    x = _f32([5.0, 1.0, 4.0, 3.25, 1.0, np.nan, 2.0, np.inf, 7.0, 1.0])
    y = _f32([0.5, 1.0, 8.0, 2.0, np.nan, 1.0, 2.0, np.inf, 7.0, 4.0])
    assert S._close(x, y, 0.25, 0.5) == {"far": 4, "far_finite": 2, "nan_ref": 1, "nan_out": 1,
                                          "abs": 4.5, "rel": 3.0}


def test_close_counts_nans_on_each_side_and_both(monkeypatch):
    """NaN against NaN is not close (torch's equal_nan=False) and is counted on both sides;
    nothing finite is far; with no finite difference the worst errors stay 0."""
    monkeypatch.setattr(S, "CLOSE_CHUNK", 2)
    x = _f32([np.nan, np.nan, np.inf, 1.0, np.nan])
    y = _f32([np.nan, 2.0, np.inf, np.nan, np.nan])
    assert S._close(x, y, 0.01, 0.01) == {"far": 4, "far_finite": 0, "nan_ref": 3, "nan_out": 3,
                                          "abs": 0.0, "rel": 0.0}


def test_close_relative_error_is_to_the_reference_floored_at_1e30_not_at_1():
    """0.5 against 0.75: 0.25 off, relative to the reference's 0.5 is 0.5 (a floor of 1 would
    say 0.25); with no tolerance it is far and finite."""
    assert S._close(_f32([0.5]), _f32([0.75]), 0.0, 0.0) == {"far": 1, "far_finite": 1, "nan_ref": 0, "nan_out": 0,
                                                              "abs": 0.25, "rel": 0.5}


def test_close_compares_in_float32():
    """1 + 1e-9 is 1 in float32: both directions compare equal, no error at all."""
    x = np.array([1.0 + 1e-9, 1.0], dtype=np.float64)
    y = np.array([1.0, 1.0 + 1e-9], dtype=np.float64)
    assert S._close(x, y, 0.0, 0.0) == {"far": 0, "far_finite": 0, "nan_ref": 0, "nan_out": 0, "abs": 0.0, "rel": 0.0}


def test_close_meets_infinities_and_overflow_without_a_warning():
    """inf - inf (invalid), 1e300 cast to float32 (overflow: inf, equal to inf), a 1e10 error
    over a zero reference (1e40 overflows float32: relative error inf) and 3e38 - (-3e38)
    (overflow: an infinite difference, left out of the worst errors): no RuntimeWarning
    escapes the comparison."""
    x = np.array([np.inf, 1e300, 0.0, 3e38], dtype=np.float64)
    y = np.array([np.inf, 1e300, 1e10, -3e38], dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = S._close(x, y, 0.0, 0.0)
    assert got == {"far": 2, "far_finite": 2, "nan_ref": 0, "nan_out": 0, "abs": 1e10, "rel": float("inf")}


# ------------------------------------------------------------------ check_trials

ARRAYS = {
    "ref-t0-r0": [4.0], "cand-t0-r0": [4.03125],  # 0.03125 off (rel 1/128): within 0.01 + 0.01 * 4.03
    "ref-t0-r1": [2.0], "cand-t0-r1": [2.0],
    "ref-t1-r0": [8.0], "cand-t1-r0": [8.0625],  # 0.0625 off (rel 1/128)
    "ref-t1-r1": [1.0], "cand-t1-r1": [1.015625],  # 0.015625 off (rel 1/64)
    "ref-t2-r0": [3.0, 5.0], "cand-t2-r0": [3.0, 5.0],
    "ref-t2-r1": [6.0], "cand-t2-r1": [6.0],
    "wrong-t1-r1": [1.0, 3.0], "ref-pair-r1": [1.0, 2.0],  # 1 off out of 2 (rel 0.5)
    "shape-r0": [8.0, 8.0, 8.0], "half-r1": [1.0, 2.5],  # 0.5 off (rel 0.25)
}


def _load(paths):
    vals = [np.array(ARRAYS[p], dtype=np.float32) for p in paths]
    return vals[0] if len(vals) == 1 else vals


def _run(role, outputs, ranks=2):
    return S.RunResult(target=S.Target.of(f"m:{role}"), out_dir="", returncode=0, ranks=ranks, wall_s=1.0,
                       outputs=outputs)


def _outs(role, trials=(0, 1, 2), ranks=(0, 1)):
    return {r: {str(t): [f"{role}-t{t}-r{r}"] for t in trials} for r in ranks}


MATCH = [{"trial": 0, "result": "match", "max_abs_err": 0.03125, "max_rel_err": 0.0078125, "reason": ""},
         {"trial": 1, "result": "match", "max_abs_err": 0.0625, "max_rel_err": 0.015625, "reason": ""},
         {"trial": 2, "result": "match", "max_abs_err": 0.0, "max_rel_err": 0.0, "reason": ""}]


def test_every_trial_matches_with_the_worst_errors_over_the_ranks():
    """Three trials (a count) on two ranks at PKB's tolerances: each row the worst absolute
    and relative error over its ranks (trial 1: the absolute from rank 0, the relative from
    rank 1), its reason empty."""
    got = S.check_trials(_run("ref", _outs("ref")), _run("cand", _outs("cand")), 3, 1e-2, 1e-2, load=_load)
    assert got == MATCH


def test_the_default_loader_reads_each_ranks_npy_files(tmp_path):
    """Without a loader the outputs are .npy files (trial 7 of a list of trial numbers; a
    rank's output of two leaves): they load and compare."""
    files = {}
    for name, vals in (("r0a", [1.0, 2.0]), ("r0b", [3.0]), ("c0a", [1.0, 2.015625]), ("c0b", [3.0])):
        files[name] = str(tmp_path / f"{name}.npy")
        np.save(files[name], np.array(vals, dtype=np.float32))
    ref = _run("ref", {0: {"7": [files["r0a"], files["r0b"]]}}, ranks=1)
    cand = _run("cand", {0: {"7": [files["c0a"], files["c0b"]]}}, ranks=1)
    assert S.check_trials(ref, cand, [7], 1e-2, 1e-2) == [
        {"trial": 7, "result": "match", "max_abs_err": 0.015625, "max_rel_err": 0.0078125, "reason": ""}]


def test_checking_stops_at_the_first_mismatching_trial_with_its_reason():
    """Trial 1's rank 1 is 1 off in one of two elements: that trial is the last row, a
    mismatch with compare_outputs' reason; its worst errors over both ranks."""
    cand = _outs("cand")
    cand[1]["1"] = ["wrong-t1-r1"]
    ref = _outs("ref")
    ref[1]["1"] = ["ref-pair-r1"]
    got = S.check_trials(_run("ref", ref), _run("cand", cand), 3, 1e-2, 1e-2, load=_load)
    assert got == [MATCH[0], {"trial": 1, "result": "mismatch", "max_abs_err": 1.0, "max_rel_err": 0.5,
                              "reason": "output: values differ beyond atol 0.01, rtol 0.01 (1 of 2 elements)"}]


def test_a_mismatch_names_the_first_bad_rank_and_a_shape_fault_counts_as_no_error():
    """Trial 0: rank 0's output has the wrong shape (no error figures: they count as 0),
    rank 1's values are 0.5 off: the reason is rank 0's, the worst errors rank 1's."""
    ref = {0: {"0": ["ref-t2-r0"]}, 1: {"0": ["ref-pair-r1"]}}
    cand = {0: {"0": ["shape-r0"]}, 1: {"0": ["half-r1"]}}
    got = S.check_trials(_run("ref", ref), _run("cand", cand), 2, 1e-2, 1e-2, load=_load)
    assert got == [{"trial": 0, "result": "mismatch", "max_abs_err": 0.5, "max_rel_err": 0.25,
                    "reason": "output: shape (3,), the reference's (2,)"}]


def _without(outputs, rank, trial=None):
    if trial is None:
        outputs.pop(rank)
    else:
        outputs[rank].pop(str(trial))
    return outputs


@pytest.mark.parametrize("ref,cand", [
    (_outs("ref"), _without(_outs("cand"), 1, 1)),  # the candidate's rank 1 left no trial 1
    (_without(_outs("ref"), 1, 1), _outs("cand")),  # the reference's rank 1 left none
    ({**_outs("ref"), 1: {"0": ["ref-t0-r1"], "1": [], "2": ["ref-t2-r1"]}}, _outs("cand")),  # an empty list
], ids=["candidate-trial", "reference-trial", "reference-empty"])
def test_a_rank_without_output_ends_the_check_as_no_artifacts(ref, cand):
    got = S.check_trials(_run("ref", ref), _run("cand", cand), 3, 1e-2, 1e-2, load=_load)
    assert got == [MATCH[0], {"trial": 1, "result": "no_artifacts", "reason": "a rank left no output for this trial"}]


@pytest.mark.parametrize("side", ["ref", "cand"])
def test_a_rank_missing_altogether_is_no_artifacts_from_the_first_trial(side):
    outs = {"ref": _outs("ref"), "cand": _outs("cand")}
    outs[side].pop(1)
    got = S.check_trials(_run("ref", outs["ref"]), _run("cand", outs["cand"]), 3, 1e-2, 1e-2, load=_load)
    assert got == [{"trial": 0, "result": "no_artifacts", "reason": "a rank left no output for this trial"}]


def test_an_output_that_cannot_be_loaded_fails_its_trial_naming_why():
    """The loader raises on rank 1's file of trial 0 with a 300-character message: a
    mismatch whose reason names the exception and its first 200 characters; no error
    figures (0); the check stops there."""
    message = "".join(str(i % 10) for i in range(300))

    def load(paths):
        if paths == ["cand-t0-r1"]:
            raise ValueError(message)
        return _load(paths)

    got = S.check_trials(_run("ref", _outs("ref")), _run("cand", _outs("cand")), 3, 1e-2, 1e-2, load=load)
    assert got == [{"trial": 0, "result": "mismatch", "max_abs_err": 0.03125, "max_rel_err": 0.0078125,
                    "reason": f"its output could not be compared (ValueError: {message[:200]})"}]


def test_an_unloadable_output_alone_gives_zero_error_figures():
    def load(paths):
        raise OSError("gone")

    got = S.check_trials(_run("ref", _outs("ref"), ranks=1), _run("cand", _outs("cand", ranks=(0,)), ranks=1),
                         3, 1e-2, 1e-2, load=load)
    assert got == [{"trial": 0, "result": "mismatch", "max_abs_err": 0.0, "max_rel_err": 0.0,
                    "reason": "its output could not be compared (OSError: gone)"}]


# ------------------------------------------------------------------ _unrunnable


def test_an_unrunnable_file_candidate_is_an_import_error_row_named_by_its_stem():
    why = "kernels/12_fused.py: no file kernels/12_fused.py"
    row = S._unrunnable("kernels/12_fused.py", why, 4, "pkb")
    failure = {"kind": "import_error", "ranks": [], "message": f"checked before running: {why}"}
    assert row == {"candidate": "12_fused", "correct": False, "failure": failure, "spec": "kernels/12_fused.py",
                   "protocol": "pkb", "ranks": 4, "wall_s": 0.0, "trials": [],
                   "feedback": f"failed (import_error): checked before running: {why}"}
    assert list(row) == ["candidate", "correct", "failure", "spec", "protocol", "ranks", "wall_s", "trials",
                         "feedback"]


def test_an_unrunnable_module_candidate_is_named_by_its_function():
    row = S._unrunnable("pkg.mod:fast", "no module named 'pkg'", 1, "linkroof")
    assert (row["candidate"], row["spec"], row["protocol"], row["ranks"]) == ("fast", "pkg.mod:fast", "linkroof", 1)
    assert row["feedback"] == "failed (import_error): checked before running: no module named 'pkg'"


# ------------------------------------------------------------------ _opened_by_others

D, F = stat.S_IFDIR, stat.S_IFREG
FAKE = {  # a file system of modes only; its top folders exist nowhere on the real one
    "/": D | 0o755,
    "/lf-open": D | 0o755,
    "/lf-open/sub": D | 0o755,
    "/lf-open/sub/f644": F | 0o644,
    "/lf-open/sub/f640": F | 0o640,
    "/lf-open/sub/d755": D | 0o755,
    "/lf-open/sub/d711": D | 0o711,
    "/lf-open/sub/d744": D | 0o744,
    "/lf-open/xonly": D | 0o711,
    "/lf-open/xonly/f644": F | 0o644,
    "/lf-open/closed": D | 0o750,
    "/lf-open/closed/f644": F | 0o644,
    "/lf-shut": D | 0o700,
    "/lf-shut/f644": F | 0o644,
}


def _opened_in_fake(path, monkeypatch):
    def fake_stat(p, *a, **k):
        p = os.fspath(p)
        if p in FAKE:
            return os.stat_result((FAKE[p], 0, 0, 1, 0, 0, 0, 0, 0, 0))
        raise FileNotFoundError(2, "No such file or directory", p)

    with monkeypatch.context() as m:
        m.setattr(os, "stat", fake_stat)
        return S._opened_by_others(path)


@pytest.mark.parametrize("path,opened", [
    ("/lf-open/sub/f644", True),  # every folder searchable, the file readable by others
    ("/lf-open/sub/f640", False),  # the file not readable by others
    ("/lf-open/xonly/f644", True),  # a folder on the way needs only search (x), not read
    ("/lf-open/sub/d755", True),  # a folder asked for itself: read and search
    ("/lf-open/sub/d711", False),  # ... not search alone
    ("/lf-open/sub/d744", False),  # ... nor read alone
    ("/lf-open/closed/f644", False),  # a folder on the way others cannot search
    ("/lf-shut/f644", False),  # the first folder below the root closed
    ("/lf-open/sub/missing", False),  # what cannot be looked at is not opened
])
def test_opened_by_others_needs_each_folder_searchable_and_the_target_readable(path, opened, monkeypatch):
    assert _opened_in_fake(path, monkeypatch) is opened


def test_opened_by_others_starts_at_the_root_folder(monkeypatch):
    """Every folder on the way, the root too: a root others cannot search closes everything."""
    monkeypatch.setitem(FAKE, "/", D | 0o700)
    assert _opened_in_fake("/lf-open/sub/f644", monkeypatch) is False
    monkeypatch.setitem(FAKE, "/", D | 0o711)
    assert _opened_in_fake("/lf-open/sub/f644", monkeypatch) is True


def test_opened_by_others_on_real_files_follows_links_to_where_they_lead():
    """Real files in a folder of /tmp (searchable by all): a 0644 file is opened, a 0600
    file is not, and a link in the open folder to a file in a 0700 folder is not either."""
    base = tempfile.mkdtemp(prefix="linkroof-opened-", dir="/tmp")
    try:
        os.chmod(base, 0o755)
        shut = os.path.join(base, "shut")
        os.mkdir(shut)
        os.chmod(shut, 0o700)
        for where, name, mode in ((base, "open.txt", 0o644), (base, "private.txt", 0o600), (shut, "in.txt", 0o644)):
            p = os.path.join(where, name)
            with open(p, "w") as f:
                f.write("x")
            os.chmod(p, mode)
        os.symlink(os.path.join(shut, "in.txt"), os.path.join(base, "link.txt"))
        assert S._opened_by_others(os.path.join(base, "open.txt")) is True
        assert S._opened_by_others(base) is True
        assert S._opened_by_others(os.path.join(base, "private.txt")) is False
        assert S._opened_by_others(os.path.join(base, "link.txt")) is False
        assert S._opened_by_others(os.path.join(base, "nothing-here")) is False
    finally:
        shutil.rmtree(base)


# ------------------------------------------------------------------ with_counters

HOW = "Nsight Compute (stand-in), 1 call"
PROFILE = object()  # physical_floor is replaced: the profile is only handed over
KNOWN_WAYS = "a timer the candidate can touch, work on an unwaited stream, or cached outputs"
STATED = "the workload's FLOPs and bytes (stated) on the spec ceilings"
COUNTED = "the FLOPs and DRAM bytes ncu counted (measured) on the spec ceilings"
SOFTMAX_WHY = ("softmax_kernel: DRAM 91% of its peak: memory-bound at the roof; only moving fewer bytes helps "
               "(fusion, a narrower type) (ncu)")
THREE = [  # the longest kernel (softmax) is neither the first nor the last by name; one has no time
    KernelCount("_Z6copierPf", values={"dram_read_bytes": float(1 << 28), "dram_write_bytes": float(1 << 27),
                                       "gpu_time_s": 20e-6, "nvlink_tx_bytes": 4096.0}),
    KernelCount("_Z14softmax_kernelPK6__half", values={
        "dram_read_bytes": float(1 << 27), "dram_write_bytes": float(1 << 27), "gpu_time_s": 120e-6,
        "flops:fp16": 5e9, "why:dram_pct": 91.0, "why:sm_pct": 30.0}),
    KernelCount("_Z4tinyv", values={"dram_read_bytes": 4096.0}),
]
THREE_BYTES = float((1 << 28) + (1 << 27) + (1 << 28) + 4096)  # 671,092,736


class Counting:
    """The stand-ins with_counters calls: a counter recording its calls, the marks given
    and killed, physical_floor recording what it was asked."""

    def __init__(self, monkeypatch, kernels, floor_s=112e-6):
        self.calls, self.killed, self.floors = [], [], []
        self.kernels, self.floor_s = kernels, floor_s
        monkeypatch.setattr(procs, "new_mark", lambda: "mark-F")
        monkeypatch.setattr(procs, "kill_mark", lambda mark, *a, **k: self.killed.append(mark) or 0)
        monkeypatch.setattr(S, "physical_floor", self.physical_floor)
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)

    def count(self, spec, inputs, warmup, calls, env):
        self.calls.append((spec, inputs, warmup, calls, env))
        return CounterReport(list(self.kernels), 1, HOW)

    def physical_floor(self, workload, t, profile, link_bytes):
        self.floors.append((workload, t, profile, link_bytes))
        return {"floor_s": self.floor_s, "basis": STATED}


def _row(**kw):
    row = {"candidate": "fast", "spec": "k.py:solution", "protocol": "linkroof", "ranks": 1, "wall_s": 2.5,
           "correct": True, "outputs_match": True, "trials": [{"trial": 0, "result": "match"}], "time_s": 45e-6,
           "reference_time_s": 90e-6, "speedup": 2.0}
    row.update(kw)
    return {k: v for k, v in row.items() if v is not ...}


def _feedback_of(out):
    return S.feedback({k: v for k, v in out.items() if k != "feedback"})


@pytest.mark.parametrize("row", [
    _row(outputs_match=False, correct=False),  # wrong outputs
    _row(outputs_match=False, correct=True),  # outputs_match decides over correct
    _row(outputs_match=..., correct=False),  # neither says the outputs matched
    _row(ranks=2),  # several ranks
    _row(time_s=None),  # not timed
    _row(time_s=...),
], ids=["wrong", "match-false-correct-true", "not-correct", "two-ranks", "untimed", "no-time"])
def test_only_a_matching_one_rank_timed_candidate_is_counted(row, monkeypatch, tmp_path):
    c = Counting(monkeypatch, THREE)
    before = dict(row)
    out = S.with_counters(row, "k.py", "m:inputs", PROFILE, 0.02, str(tmp_path), count=c.count)
    assert out is row and row == before
    assert c.calls == [] and c.killed == [] and list(tmp_path.iterdir()) == []


ONE = [KernelCount("_Z6copierPf", values={"dram_read_bytes": 4096.0, "gpu_time_s": 1e-5})]
ONE_COUNTED = {"dram_bytes": 4096.0, "flops": {}, "nvlink_bytes": None, "kernels": 1, "how": HOW}


@pytest.mark.parametrize("row", [
    _row(outputs_match=..., correct=True),  # no outputs_match: correct says it
    _row(correct=False),  # a suspect's outputs matched: it is counted
    _row(ranks=...),  # no ranks: one
], ids=["correct-only", "outputs-match-only", "no-ranks"])
def test_a_matching_one_rank_candidate_is_counted(row, monkeypatch, tmp_path):
    """One kernel without a why-sentence (no why), no profile (no floor, no note)."""
    c = Counting(monkeypatch, ONE)
    out = S.with_counters(row, "k.py", "m:inputs", None, 0.02, str(tmp_path), count=c.count)
    assert len(c.calls) == 1 and c.killed == ["mark-F"] and c.floors == []
    assert out["counted"] == ONE_COUNTED
    assert "why" not in out and "counters_note" not in out and "counted_floor_s" not in out
    assert out["feedback"] == _feedback_of(out)


def test_pkb_inputs_are_not_counted_and_the_row_says_why(monkeypatch, tmp_path):
    c = Counting(monkeypatch, THREE)
    row = _row()
    out = S.with_counters(row, "k.py", "pkb:/src/ParallelKernelBench", PROFILE, 0.02, str(tmp_path), count=c.count)
    assert out is row and out == {**_row(), "counters_note": "not counted: counters need --inputs MODULE:FUNCTION "
                                                             "(ncu's child makes the inputs)"}
    assert c.calls == [] and list(tmp_path.iterdir()) == []


def test_ncu_runs_the_targets_spec_marked_in_a_clean_scratch_environment_on_the_gpus_given(monkeypatch, tmp_path):
    """The child of ncu: the spec as Target.of makes it (a file's `solution`), the inputs, 3
    warm-up calls then 1 counted; its environment the judge's without LINKROOF_ settings,
    its data and temporary folders a fresh `counted-` folder in the work folder, the mark,
    and CUDA_VISIBLE_DEVICES the GPUs given; the mark killed after."""
    c = Counting(monkeypatch, ONE)
    monkeypatch.setenv("LINKROOF_STORE", "/secret/store")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "7")
    S.with_counters(_row(), "k.py", "m:inputs", None, 0.02, str(tmp_path), count=c.count, gpus=[2, 3])
    (scratch,) = tmp_path.iterdir()
    assert scratch.is_dir() and scratch.name.startswith("counted-")
    want = {k: v for k, v in os.environ.items() if not k.startswith("LINKROOF_")}
    want.update(XDG_DATA_HOME=str(scratch), TMPDIR=str(scratch), LINKROOF_SCORE_JOB="mark-F",
                CUDA_VISIBLE_DEVICES="2,3")
    assert c.calls == [("k.py:solution", "m:inputs", 3, 1, want)]
    assert c.killed == ["mark-F"]


def test_without_gpus_given_the_environment_names_none(monkeypatch, tmp_path):
    c = Counting(monkeypatch, ONE)
    S.with_counters(_row(), "m:fast", "m:inputs", None, 0.02, str(tmp_path), count=c.count)
    ((spec, inputs, warmup, calls, env),) = c.calls
    assert (spec, inputs, warmup, calls) == ("m:fast", "m:inputs", 3, 1)
    assert "CUDA_VISIBLE_DEVICES" not in env and env["LINKROOF_SCORE_JOB"] == "mark-F"


def test_without_a_counter_given_ncus_own_count_runs(monkeypatch, tmp_path):
    c = Counting(monkeypatch, ONE)
    monkeypatch.setattr(ncu, "count", c.count)
    out = S.with_counters(_row(), "k.py", "m:inputs", None, 0.02, str(tmp_path))
    assert len(c.calls) == 1 and out["counted"] == ONE_COUNTED


def test_counters_unavailable_leave_the_row_with_the_reason_and_the_mark_killed(monkeypatch, tmp_path):
    c = Counting(monkeypatch, ONE)

    def count(spec, inputs, warmup, calls, env):
        raise ncu.CountersUnavailable("not counted: Nsight Compute (ncu) was not found")

    row = _row()
    out = S.with_counters(row, "k.py", "m:inputs", PROFILE, 0.02, str(tmp_path), count=count)
    assert out is row and out == {**_row(), "counters_note": "not counted: Nsight Compute (ncu) was not found"}
    assert c.killed == ["mark-F"] and c.floors == []


def test_a_time_under_the_counted_floor_is_suspect_with_the_longest_kernels_why(monkeypatch, tmp_path):
    """Three kernels counted moving 671,092,736 DRAM bytes (over 2 L2s), 5e9 fp16 FLOPs and
    4096 NVLink bytes a call; the floor of that work (112 us, its basis said as counted) is
    over the 45 us measured by more than the 5 % margin: suspect, not correct, its speedup
    kept under `suspect`; the why-sentence is the longest kernel's (softmax, 120 us); the
    row's lead keys first; the feedback made of the row."""
    c = Counting(monkeypatch, THREE)
    out = S.with_counters(_row(), "k.py", "m:inputs", PROFILE, 0.05, str(tmp_path), count=c.count)
    ((wl, t, profile, link_bytes),) = c.floors
    assert (wl.name, wl.hbm_bytes, dict(wl.flops), t, profile, link_bytes) == (
        "fast", THREE_BYTES, {"fp16": 5e9}, 45e-6, PROFILE, None)
    reason = (f"measured 45.00 us, under the physical floor of 112.00 us ({COUNTED}) by over the 5% margin")
    want = {"candidate": "fast", "correct": False,
            "suspect": {"reasons": [reason], "likely_causes": [KNOWN_WAYS], "measured_speedup": 2.0},
            "speedup": None, "spec": "k.py:solution", "protocol": "linkroof", "ranks": 1, "wall_s": 2.5,
            "outputs_match": True, "trials": [{"trial": 0, "result": "match"}], "time_s": 45e-6,
            "reference_time_s": 90e-6,
            "counted": {"dram_bytes": THREE_BYTES, "flops": {"fp16": 5e9}, "nvlink_bytes": 4096.0, "kernels": 3,
                        "how": HOW},
            "why": SOFTMAX_WHY, "counted_floor_s": 112e-6, "counted_floor_basis": COUNTED}
    assert {k: v for k, v in out.items() if k != "feedback"} == want
    assert list(out) == [*want, "feedback"]
    assert out["feedback"] == _feedback_of(out)
    assert out["feedback"].startswith(f"SUSPECT, not ranked: {reason}") and SOFTMAX_WHY in out["feedback"]


def test_a_suspects_known_cause_is_the_counted_floors_cause(monkeypatch, tmp_path):
    """Already suspect for a patched timer: the floor's finding joins its reasons, its cause
    the one already seen (not the three known ways); the measured speedup kept."""
    c = Counting(monkeypatch, THREE)
    sus = {"reasons": ["timer patched"], "likely_causes": ["a timer the candidate can touch"], "measured_speedup": 3.0}
    row = _row(correct=False, speedup=None, suspect=sus)
    out = S.with_counters(row, "k.py", "m:inputs", PROFILE, 0.02, str(tmp_path), count=c.count)
    reason = f"measured 45.00 us, under the physical floor of 112.00 us ({COUNTED}) by over the 2% margin"
    assert out["suspect"] == {"reasons": ["timer patched", reason], "likely_causes": ["a timer the candidate can touch"],
                              "measured_speedup": 3.0}
    assert out["correct"] is False and out["speedup"] is None


def test_a_time_over_the_counted_floor_is_not_suspect(monkeypatch, tmp_path):
    c = Counting(monkeypatch, THREE, floor_s=40e-6)
    out = S.with_counters(_row(), "k.py", "m:inputs", PROFILE, 0.02, str(tmp_path), count=c.count)
    assert (out["counted_floor_s"], out["counted_floor_basis"]) == (40e-6, COUNTED)
    assert "suspect" not in out and out["correct"] is True and out["speedup"] == 2.0
    assert list(out)[:3] == ["candidate", "correct", "speedup"]


@pytest.mark.parametrize("dram,floored", [(2 * 50 * 1024 * 1024, False), (2 * 50 * 1024 * 1024 + 1, True),
                                          (8 << 20, False)])
def test_counted_bytes_give_a_floor_only_over_two_l2s(dram, floored, monkeypatch, tmp_path):
    """Exactly 2 x 50 MiB of DRAM bytes and no FLOPs: no floor (ncu counts from a flushed
    cache), the note says the bytes; one byte more: the floor."""
    c = Counting(monkeypatch, [KernelCount("_Z6copierPf", values={"dram_read_bytes": float(dram),
                                                                   "gpu_time_s": 1e-5})], floor_s=10e-6)
    out = S.with_counters(_row(), "k.py", "m:inputs", PROFILE, 0.02, str(tmp_path), count=c.count)
    if floored:
        assert len(c.floors) == 1 and out["counted_floor_s"] == 10e-6 and "counters_note" not in out
    else:
        assert c.floors == [] and "counted_floor_s" not in out
        assert out["counters_note"] == (f"no floor from the counts: {dram:,} DRAM bytes fit in 2 L2s, and ncu counts "
                                        f"them from a flushed cache")


def test_counted_flops_give_a_floor_whatever_the_bytes_but_bytes_within_two_l2s_never_bound_it(
        monkeypatch, tmp_path):
    """FLOPs always give a floor; DRAM bytes within 2 L2s are left out of it, FLOPs beside them or
    not (ncu counts them from a flushed cache: a warm loop finds them in L2), and the note says so.
    Until 2026-12-05 one counted FLOP let them in, and an honest L2-resident candidate was suspect."""
    c = Counting(monkeypatch, [KernelCount("_Z4gemmv", values={"dram_read_bytes": 4096.0, "flops:fp32": 1e6,
                                                                "gpu_time_s": 1e-5})], floor_s=10e-6)
    out = S.with_counters(_row(), "k.py", "m:inputs", PROFILE, 0.02, str(tmp_path), count=c.count)
    assert len(c.floors) == 1 and out["counted_floor_s"] == 10e-6
    assert c.floors[0][0].hbm_bytes == 0.0 and c.floors[0][0].flops == {"fp32": 1e6}
    assert "DRAM bytes" not in out["counted_floor_basis"]  # the basis says what the floor used
    assert out["counters_note"] == ("the floor is the FLOPs' alone: 4,096 DRAM bytes fit in 2 L2s, and ncu counts "
                                    "them from a flushed cache")
    assert out["counted"]["dram_bytes"] == 4096.0  # the count itself is still reported


def test_bytes_over_two_l2s_bound_the_floor_beside_flops(monkeypatch, tmp_path):
    big = 2 * 50 * 1024 * 1024 + 1
    c = Counting(monkeypatch, [KernelCount("_Z4gemmv", values={"dram_read_bytes": float(big), "flops:fp32": 1e6,
                                                                "gpu_time_s": 1e-5})], floor_s=10e-6)
    out = S.with_counters(_row(), "k.py", "m:inputs", PROFILE, 0.02, str(tmp_path), count=c.count)
    assert c.floors[0][0].hbm_bytes == float(big) and "counters_note" not in out


def test_an_honest_l2_resident_candidate_with_a_flop_counted_is_not_suspect(monkeypatch, tmp_path):
    """The helper's case, with the real physical_floor: 40 MiB read, one FLOP, 4 us measured."""
    monkeypatch.setattr(procs, "new_mark", lambda: "mark-F")
    monkeypatch.setattr(procs, "kill_mark", lambda mark, *a, **k: 0)
    rep = CounterReport([KernelCount("_Z4copyv", values={"dram_read_bytes": 40 * 2**20, "gpu_time_s": 4e-6,
                                                         "flops:fp32": 1.0})], 1, HOW)
    from linkroof.profiler.session import bundled_profile

    row = {"candidate": "c", "ranks": 1, "correct": True, "outputs_match": True, "time_s": 4e-6, "speedup": 3.0}
    out = S.with_counters(row, "m:c", "m:inputs", bundled_profile(), 0.02, str(tmp_path), count=lambda *a, **k: rep)
    assert "suspect" not in out and out["counted_floor_s"] < 1e-9


def test_without_a_profile_there_is_no_floor_nor_note(monkeypatch, tmp_path):
    c = Counting(monkeypatch, THREE)
    out = S.with_counters(_row(), "k.py", "m:inputs", None, 0.02, str(tmp_path), count=c.count)
    assert c.floors == [] and "counted_floor_s" not in out and "counters_note" not in out
    assert out["why"] == SOFTMAX_WHY and out["correct"] is True and out["feedback"] == _feedback_of(out)


def test_no_kernel_counted_gives_no_why_and_no_floor(monkeypatch, tmp_path):
    c = Counting(monkeypatch, [])
    out = S.with_counters(_row(), "k.py", "m:inputs", PROFILE, 0.02, str(tmp_path), count=c.count)
    assert out["counted"] == {"dram_bytes": 0.0, "flops": {}, "nvlink_bytes": None, "kernels": 0, "how": HOW}
    assert c.floors == [] and "why" not in out and "counters_note" not in out
