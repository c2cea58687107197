"""`linkroof score` against hostile candidates, through the stand-in child
(tests/tools/fake_score_child.py speaks the real result channel): every one gets one
honest row, no process outlives the run, the store is untouched, nothing raw reaches
the terminal. The channel, the output checks and the process keeping are tested on
their own below; the same cases run on one H200 through the real child
(benchmarks/score_hostile.py)."""

import contextlib
import math
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from linkroof.cli import cli
from linkroof.scoring import score as S
from linkroof.scoring import procs as score_procs
from linkroof.scoring.channel import Listener, Reporter

from fakes import deadline  # noqa: E402

FAKE = str(Path(__file__).parent / "tools" / "fake_score_child.py")


def fake(ranks=1):
    def command(n, port, args):
        return [sys.executable, FAKE, *args], dict(os.environ, FAKE_RANKS=str(ranks),
                                                   PYTHONPATH=str(Path(__file__).parents[1]))
    return command


@contextlib.contextmanager
def store_and_cwd(store, work):
    """LINKROOF_STORE pointing at `store` and the working directory `work`, both restored after."""
    old, cwd = os.environ.get("LINKROOF_STORE"), os.getcwd()
    os.environ["LINKROOF_STORE"] = str(store)
    os.chdir(work)
    try:
        yield
    finally:
        os.chdir(cwd)
        if old is None:
            os.environ.pop("LINKROOF_STORE")
        else:
            os.environ["LINKROOF_STORE"] = old


def marked():
    """Every live process carrying the mark of a target this test process started: never
    another judge's (a second copy of the suite running beside this one)."""
    mine = score_procs.issued_marks()
    out = []
    for pid, (_, state) in score_procs.processes().items():
        if state != "Z" and score_procs._mark_of(pid) in mine:
            out.append(pid)
    return out


HOSTILE = {  # what it does -> the row's failure kind (None: scored, with the check's finding)
    "raises": "exception", "hangs": "hang", "crash": "crash", "forge": "tampered", "forgefile": "crash",
    "huge": "tampered", "nan": None, "shape": None, "escapes": "exception", "exit0": "exit", "store": None,
    "daemon": None, "daemon_clean": None, "cached": None, "sidestream": None, "patched": None, "wrongcached": None,
}


@pytest.fixture(scope="module", params=["auto", "none"])
def battery(tmp_path_factory, request):
    """The hostile stand-ins, in the strongest sandbox this machine allows and in none
    (where the subreaper and the marks alone must hold)."""
    store = tmp_path_factory.mktemp("store") / "store.sqlite"
    store.write_bytes(b"SQLite format 3\0 stand-in")
    with store_and_cwd(store, tmp_path_factory.mktemp("work")):  # where the candidates run (one writes a file)
        rows = S.score("m:reference", [f"m:{n}" for n in HOSTILE], "m:inputs", protocol="linkroof", trials=2,
                       deadline_s=deadline(6.0), command=fake(), max_output_bytes=4096, sandbox=request.param)
    return {r["candidate"]: r for r in rows}, store


def test_one_honest_row_each(battery):
    by, _ = battery
    assert list(by) == list(HOSTILE)
    for name, kind in HOSTILE.items():
        got = (by[name].get("failure") or {}).get("kind")
        assert got == kind, (name, by[name].get("failure"))
        assert by[name]["feedback"]


def test_a_forged_result_is_never_accepted(battery):
    by, _ = battery
    forge = by["forge"]
    # a frame of its own on the socket it found in /proc/self/fd: unsigned, so the whole target is not believed
    assert forge["failure"]["kind"] == "tampered" and "failed its signature" in forge["failure"]["message"]
    assert not forge["correct"]
    assert forge.get("speedup") is None
    # a perf file written where results once went is not read: no result came on the channel
    ff = by["forgefile"]
    assert ff["failure"]["kind"] == "crash" and ff.get("time_s") is None and ff.get("speedup") is None


def test_an_output_over_the_limit_is_refused_by_the_parent(battery):
    by, _ = battery
    assert "over the 4,096 B limit" in by["huge"]["failure"]["message"]


def test_no_process_outlives_the_run(battery):
    assert marked() == []
    by = battery[0]
    if by["daemon"]["sandbox"]["mode"] == "none":
        # the daemon that cleared its environment was found as the scorer's adopted descendant
        assert by_killed(battery, "daemon_clean") >= 1 and by_killed(battery, "daemon") >= 1
    else:  # in a PID namespace of its own: gone with it, nothing left for the scorer to find
        assert by_killed(battery, "daemon_clean") == 0 and by_killed(battery, "daemon") == 0


def by_killed(battery, name):
    return battery[0][name].get("processes_killed_after", 0)


def test_the_store_is_out_of_reach(battery):
    by, store = battery
    assert store.exists() and by["store"]["correct"]


def test_the_checks_after_the_timing_mark_rows_suspect(battery):
    by, _ = battery
    for name, cause in (("cached", "outputs cached from an earlier call"),
                        ("sidestream", "work on a stream the timing does not wait for"),
                        ("patched", "a timer the candidate can touch")):
        row = by[name]
        assert row["outputs_match"] and not row["correct"] and row["suspect"]["likely_causes"] == [cause], (name, row.get("suspect"))
        assert row["speedup"] is None and row["suspect"]["measured_speedup"] > 1
        assert row["feedback"].startswith("SUSPECT, not ranked")
    assert "suspect" not in by["store"] and by["store"]["speedup"] == pytest.approx(100 / 60)
    # a wrong candidate is wrong: the checks after the timing judge correct ones only
    assert not by["wrongcached"]["correct"] and "suspect" not in by["wrongcached"]


def test_nothing_raw_reaches_the_terminal(monkeypatch, tmp_path):
    monkeypatch.setattr(S, "child_command", fake())
    monkeypatch.chdir(tmp_path)
    Path("m.py").write_text("def reference(): pass\ndef escapes(): pass\ndef inputs(): pass\n")
    res = CliRunner().invoke(cli, ["score", "m:reference", "m:escapes", "--inputs", "m:inputs", "--trials", "1"])
    assert "\x1b" not in res.output and "\x07" not in res.output
    assert "\\x1b]0;owned\\x07" in res.output  # shown escaped, on the feedback line


def test_deadlines_must_be_finite():
    for bad in (math.nan, math.inf, 0.0, -1.0):
        with pytest.raises(S.ScoreError, match="deadline"):
            S.score("m:reference", ["m:good"], "m:inputs", deadline_s=bad, command=fake())
    res = CliRunner().invoke(cli, ["score", "a.py", "b.py", "--inputs", "m:i", "--deadline", "nan"])
    assert res.exit_code == 2 and "nan" in res.output.lower()


def test_everything_is_checked_before_any_child_starts(monkeypatch, tmp_path):
    started = []
    monkeypatch.setattr(S, "run_target", lambda *a, **k: started.append(a) or (_ for _ in ()).throw(AssertionError))
    monkeypatch.chdir(tmp_path)
    Path("ref.py").write_text("def solution(x):\n    return x\n")
    Path("broken.py").write_text("def solution(x)\n")
    Path("other.py").write_text("def something_else(x):\n    return x\n")
    with pytest.raises(S.ScoreError, match="no file missing_ref.py"):
        S.score("missing_ref.py", ["ref.py"], "inputs_mod:make")
    with pytest.raises(S.ScoreError, match="no module named 'inputs_mod'"):
        S.score("ref.py", ["ref.py"], "inputs_mod:make")
    with pytest.raises(S.ScoreError, match="not a ParallelKernelBench checkout"):
        S.score("ref.py", ["ref.py"], f"pkb:{tmp_path}")
    Path("inputs_mod.py").write_text("def make(rank, world, trial):\n    return (1,)\n")
    rows = S.score("ref.py", ["broken.py", "other.py", "gone.py"], "inputs_mod:make")
    assert [r["failure"]["kind"] for r in rows] == ["import_error"] * 3 and started == []
    assert "does not parse" in rows[0]["failure"]["message"]
    assert "defines no top-level 'solution'" in rows[1]["failure"]["message"]
    assert "no file gone.py" in rows[2]["failure"]["message"]
    assert S.exit_code(rows) == S.EXIT_NOTHING_SCORED


def test_exit_codes_say_what_was_scored(monkeypatch, tmp_path):
    monkeypatch.setattr(S, "child_command", fake())
    monkeypatch.chdir(tmp_path)
    Path("m.py").write_text("".join(f"def {n}(): pass\n" for n in ("reference", "good", "raises", "inputs")))
    run = CliRunner().invoke
    assert run(cli, ["score", "m:reference", "m:good", "--inputs", "m:inputs", "--trials", "1"]).exit_code == 0
    assert run(cli, ["score", "m:reference", "m:raises", "--inputs", "m:inputs", "--trials", "1"]).exit_code == \
        S.EXIT_NOTHING_SCORED
    res = run(cli, ["score", "m:raises", "m:good", "--inputs", "m:inputs", "--trials", "1", "--json"])
    assert res.exit_code == S.EXIT_REFERENCE_FAILED
    res = run(cli, ["score", "m:reference", "m:good", "--inputs", "missing:inputs"])
    assert res.exit_code == 1 and "no module named 'missing'" in res.output


# ------------------------------------------------------------------ the pieces alone


def _open(ch):
    """The child's ends of a listener's connections, as the child would inherit them."""
    fds = ch.connect()
    dup = {r: os.dup(fd) for r, fd in fds.items()}
    ch.release()
    return dup


def test_the_channel_takes_one_report_per_rank_and_signed_frames_only(tmp_path):
    """One connection per rank, made by the judge; a hello claiming another rank on it,
    or a frame without the key, is a violation; the reference's outputs (in_memory) are
    in memfd files, on no file system."""
    ch = Listener("", str(tmp_path / "o"), 2, max_output_bytes=1 << 20, in_memory=True)
    fds = _open(ch)
    try:
        rep = Reporter(0, fds[0])
        rep.send("perf", {"wall_time_ms": 1.0})
        rep.send_array("0", 0, np.arange(6.0).reshape(2, 3))
        rep.mark("timing_start")
        rep.mark("timing_end")
        with pytest.raises(EOFError):
            Reporter(0, fds[1])  # rank 1's connection claiming rank 0: refused, and said
        rep.close()
    finally:
        ch.close()
    assert ch.reports[0].perf == {"wall_time_ms": 1.0}
    assert set(ch.reports[0].marks) == {"timing_start", "timing_end"}
    [path] = ch.reports[0].outputs["0"]
    assert str(path).startswith(f"/proc/{os.getpid()}/fd/") and not list((tmp_path).rglob("*.npy"))
    assert np.load(path, mmap_mode="r").tolist() == [[0, 1, 2], [3, 4, 5]]
    assert any("made for rank 1 claimed rank" in v for v in ch.violations)
    ch.free()
    assert not ch.memfds


def test_a_frame_with_a_wrong_signature_is_a_violation(tmp_path):
    ch = Listener("", str(tmp_path / "o"), 1)
    fds = _open(ch)
    try:
        rep = Reporter(0, fds[0])
        rep._key = b"\0" * 32  # what a forger without the key would sign with
        rep.send("perf", {"wall_time_ms": 1e-9})
        rep.close()
    finally:
        ch.close()
    assert ch.reports[0].perf is None and ch.violations == ["rank 0's perf frame failed its signature"]



def test_the_marks_carry_the_time_they_were_sent_however_late_the_judge_reads_them(tmp_path, monkeypatch):
    """The judge's mark reader kept from running for the whole timed loop (as a loaded
    machine delays it): the start and end marks, sent 200 ms apart, are still 200 ms
    apart in the judge's record, stamped by its kernel as they were sent. Stamped when
    read, both would carry the moment the reader ran (a wall of ~0 ms: an honest time
    called impossible, as under 4 suites on 2 cores)."""
    import threading
    import time

    gate = threading.Event()
    serve = Listener._serve_marks

    def late(self, conn, rank):
        gate.wait(10)
        serve(self, conn, rank)

    monkeypatch.setattr(Listener, "_serve_marks", late)
    ch = Listener("", str(tmp_path / "o"), 1)
    fds = ch.connect()
    assert 0 in ch.mark_fds and ch.inherited(fds) == sorted([fds[0], ch.mark_fds[0]])
    mine, mark = os.dup(fds[0]), os.dup(ch.mark_fds[0])
    ch.release()
    try:
        rep = Reporter(0, mine, mark_fd=mark)
        rep.mark("timing_start")
        time.sleep(0.2)
        rep.mark("timing_end")
        time.sleep(0.1)
        gate.set()  # the reader runs only now, 300 ms after the first mark
        rep.close()
    finally:
        gate.set()
        ch.close()
    marks = ch.reports[0].marks
    assert 0.19 <= marks["timing_end"] - marks["timing_start"] < 0.29, marks
    assert not ch.violations


def test_a_mark_not_signed_with_the_ranks_key_is_a_violation(tmp_path):
    import json
    import socket

    ch = Listener("", str(tmp_path / "o"), 1)
    fds = ch.connect()
    mine, mark = os.dup(fds[0]), os.dup(ch.mark_fds[0])
    ch.release()
    try:
        rep = Reporter(0, mine, mark_fd=mark)
        raw = socket.socket(fileno=os.dup(mark))
        raw.send(json.dumps({"name": "timing_start", "mac": "0" * 64}).encode())  # a forger without the key
        raw.send(b"not json")
        raw.close()
        rep.mark("timing_end")
        rep.close()
    finally:
        ch.close()
    assert set(ch.reports[0].marks) == {"timing_end"}
    assert any("mark frame failed its signature" in v for v in ch.violations)
    assert any("malformed mark" in v for v in ch.violations)


def test_the_mark_sockets_travel_in_the_environment(monkeypatch):
    ch = Listener("", "/nonexistent-never-written", 2, in_memory=True)
    fds = ch.connect()
    try:
        env = ch.env(fds)
        monkeypatch.setenv("LINKROOF_SCORE_FDS", env["LINKROOF_SCORE_FDS"])
        monkeypatch.setattr(Reporter, "MARK_FDS", {})
        assert Reporter.fds_from_env() == fds
        assert Reporter.MARK_FDS == ch.mark_fds and "LINKROOF_SCORE_FDS" not in os.environ
    finally:
        ch.release()
        ch.close()


class _Sink:
    def __init__(self):
        self.sent = []

    def send_array(self, trial, i, a):
        self.sent.append((trial, i, a.shape, a.dtype.str))


@pytest.mark.parametrize("y, why", [
    (None, "returned None, not a tensor"),
    (object(), "returned a object, not a tensor"),
    ({"a": None}, "returned None inside its output"),
    ((), "returned an empty tuple"),
    (np.broadcast_to(np.zeros(1, np.float32), (1 << 31,)), "over the limit of 1,048,576 B"),
    (np.array(["a", "b"]), "data type <U1"),
    (np.array([object(), 1], dtype=object), "data type object"),
])
def test_an_output_that_cannot_be_sent_is_a_row_saying_why(y, why):
    from linkroof.scoring.child import BadOutput, send_outputs

    with pytest.raises(BadOutput, match=why.replace("(", r"\(").replace(")", r"\)")):
        send_outputs(_Sink(), 0, y, 1 << 20)


def test_outputs_are_sent_leaf_by_leaf_without_a_copy_of_a_view_limit():
    from linkroof.scoring.child import send_outputs

    sink = _Sink()
    send_outputs(sink, 3, {"b": np.ones((2, 2)), "a": [np.zeros(3, np.int8), 1.5]}, 1 << 20)
    assert sink.sent == [("3", 0, (3,), "|i1"), ("3", 1, (), "<f8"), ("3", 2, (2, 2), "<f8")]


def test_the_child_env_has_no_linkroof_setting_and_a_scratch_data_dir():
    env = S.clean_env({"LINKROOF_STORE": "/x", "LINKROOF_PROFILE": "y", "PATH": "/bin", "XDG_DATA_HOME": "/h"}, "/s")
    assert env == {"PATH": "/bin", "XDG_DATA_HOME": "/s", "TMPDIR": "/s"}


def test_compare_looks_for_the_gpu_before_running_user_code(monkeypatch, tmp_path):
    """On a machine without a GPU, compare ends with NoGpuError before importing anything
    of the user's (the module would have left a file)."""
    from linkroof.errors import NoGpuError
    from linkroof.profiler import probe
    from linkroof.profiler.compare import run_compare

    def no_gpu(*a, **k):
        raise NoGpuError("no NVIDIA driver here")

    monkeypatch.setattr(probe, "probe", no_gpu)
    monkeypatch.chdir(tmp_path)
    Path("k.py").write_text("open('imported', 'w').close()\ndef f(x):\n    return x\ndef make():\n    return (1,)\n")
    with pytest.raises(NoGpuError):
        run_compare("k.py:f", "k.py:make")
    assert not Path("imported").exists()


def test_compare_reports_a_user_sys_exit_as_such(tmp_path, monkeypatch):
    from linkroof.profiler.compare import CompareError, run_compare
    from linkroof.profiler.probe import probe

    monkeypatch.chdir(tmp_path)
    Path("k.py").write_text("import sys\nsys.exit(0)\n")
    with pytest.raises(CompareError, match=r"the user's code called sys.exit\(0\)"):
        run_compare("k.py:f", "k.py:make", topology=probe(replay="h200x1"))


def _counted(dram_bytes, seen):
    from linkroof.profiler.ncu import CounterReport, KernelCount

    def count(spec, inputs, warmup, calls, env):
        seen.append((spec, inputs, env))
        k = KernelCount("_Z14softmax_kernelPK6__half", values={
            "dram_read_bytes": dram_bytes / 2, "dram_write_bytes": dram_bytes / 2, "gpu_time_s": 120e-6,
            "why:dram_pct": 91.0, "why:sm_pct": 30.0})
        return CounterReport([k], 1, "Nsight Compute (stand-in), 1 call")
    return count


def test_counters_give_a_floor_of_their_own_and_the_why(tmp_path):
    """A side-stream candidate timed at 45 us whose kernels ncu counted moving 512 MiB:
    under the 112 us that takes at the spec's 4.8 TB/s, suspect with the counted basis;
    the why-sentence of its longest kernel in the feedback; ncu's child ran marked, in a
    clean environment."""
    from linkroof.profiler.session import bundled_profile

    seen = []
    rows = S.score("m:reference", ["m:sidestream", "m:wrong"], "m:inputs", trials=1, command=fake(),
                   profile=bundled_profile(), counters=True, count=_counted(512 << 20, seen))
    side, wrong = rows
    assert side["counted"]["dram_bytes"] == 512 << 20
    assert side["counted_floor_s"] == pytest.approx((512 << 20) / 4.8e12, rel=0.01)
    assert "ncu counted (measured)" in side["counted_floor_basis"]
    assert any("under the physical floor" in r and "ncu counted" in r for r in side["suspect"]["reasons"])
    assert "memory-bound at the roof" in side["why"] and side["why"] in side["feedback"]
    assert len(seen) == 1 and seen[0][0] == "m:sidestream"  # the wrong one is not counted
    env = seen[0][2]
    assert score_procs.MARK in env and not any(k.startswith("LINKROOF_") and k != score_procs.MARK for k in env)
    assert "counted" not in wrong


def test_counts_that_fit_in_l2_give_no_floor():
    from linkroof.profiler.session import bundled_profile

    rows = S.score("m:reference", ["m:good"], "m:inputs", trials=1, command=fake(), profile=bundled_profile(),
                   counters=True, count=_counted(8 << 20, []))
    assert "counted_floor_s" not in rows[0] and "fit in 2 L2s" in rows[0]["counters_note"]
    assert "suspect" not in rows[0]


# ------------------------------------------------------------------ a fuzz harness

ACTS = ["raises", "escapes", "forgefile", "exit0", "huge", "hangs", "crash", "forge", "daemon", "daemon_clean",
        "store", "nan", "shape", "wrong", "cached", "sidestream", "patched"]
FIRST = {"raises": "exception", "escapes": "exception", "forgefile": "crash", "exit0": "exit", "huge": "tampered",
         "hangs": "hang", "crash": "crash"}  # the stand-in does these in this order, and each ends it


def expected(acts):
    """What the row must say for a stand-in doing `acts` (the order it does them in)."""
    first = next((a for a in FIRST if a in acts), None)
    if first:
        return "failure:" + FIRST[first]
    if "forge" in acts:
        return "failure:tampered"
    if acts & {"nan", "shape", "wrong"}:
        return "wrong"
    if acts & {"cached", "sidestream", "patched"}:
        return "suspect"
    return "correct"


def verdict(row):
    if row.get("failure"):
        return "failure:" + row["failure"]["kind"]
    if row.get("suspect"):
        return "suspect"
    return "correct" if row["correct"] else "wrong"


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@pytest.mark.long
@settings(max_examples=5, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sets(st.sampled_from(ACTS), min_size=1, max_size=3), min_size=2, max_size=4, unique_by=frozenset))
def test_fuzzed_hostile_candidates_each_get_one_honest_row(tmp_path_factory, cands):
    """Random candidates each doing one to three hostile things at once: one row each, in
    order, saying what the first decisive thing was; afterwards no process of theirs
    alive and the store untouched."""
    work = tmp_path_factory.mktemp("fuzz")
    store = work / "store.sqlite"
    store.write_text("a store")
    names = ["__".join(sorted(c)) for c in cands]
    with store_and_cwd(store, work):
        rows = S.score("m:reference", [f"m:{n}" for n in names], "m:inputs", trials=1, deadline_s=deadline(3.0),
                       command=fake(), max_output_bytes=4096)
    assert [r["candidate"] for r in rows] == names
    for c, r in zip(cands, rows):
        assert verdict(r) == expected(set(c)), (sorted(c), r.get("failure"), r.get("suspect"))
        if r.get("suspect"):
            assert r["speedup"] is None and r["suspect"]["measured_speedup"]
    assert marked() == [] and store.exists()


def test_a_target_over_its_host_memory_is_killed_and_says_so(monkeypatch, tmp_path):
    """A candidate whose child holds 600 MiB: under a 256 MiB limit it is killed within a
    watch (0.25 s) and its row is a memory failure, never scored; its processes are gone.
    Under the default limit (half this machine's memory) the same candidate is scored."""
    from linkroof.scoring import procs

    monkeypatch.setenv("FAKE_HOG_HOLD", "8")
    with store_and_cwd(tmp_path / "store.sqlite", tmp_path):
        [hog] = S.score("m:reference", ["m:memhog"], "m:inputs", trials=1, command=fake(),
                        deadline_s=deadline(20.0), max_memory_bytes=256 << 20)
    assert hog["failure"]["kind"] == "memory" and not hog["correct"] and hog.get("speedup") is None
    held = float(hog["failure"]["message"].split("held ")[1].split(" GiB")[0])
    assert 0.25 < held < 2.0 and "over the 0.2 GiB limit" in hog["failure"]["message"]  # caught as it grew
    assert marked() == []
    monkeypatch.setenv("FAKE_HOG_HOLD", "0.1")
    with store_and_cwd(tmp_path / "store.sqlite", tmp_path):
        [ok] = S.score("m:reference", ["m:memhog"], "m:inputs", trials=1, command=fake(), deadline_s=deadline(20.0))
    assert ok["correct"] and not ok.get("failure"), ok.get("failure")
    assert S.default_max_memory() == procs.total_memory_bytes() // 2
    with pytest.raises(S.ScoreError, match="at least 1 MiB"):
        S.score("m:reference", ["m:good"], "m:inputs", command=fake(), max_memory_bytes=1000)
