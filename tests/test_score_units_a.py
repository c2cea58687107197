"""score.run_target, in process: its whole exchange with what it drives, each part a
stand-in that records what it was given (the result channel's Listener, the jail's
process, the process helpers, the sandbox choice) and a clock the test moves, so that
every rule of the docstring and of its callers is pinned without a child, a GPU or a
sleep:

- a deadline must be a finite, positive number of seconds, refused before anything runs;
- the output folder (and its scratch folder) are private (0o700) and may already exist;
- the child's arguments say every option given (the judge's seeds as integers);
- the channel is the target's own (a fresh folder under out_dir), in memory for a reference;
- each process of the plan sees a cleaned environment, its own descriptors, the job's
  mark, a fresh /tmp home where sandboxed, the GPUs it was given;
- the jail is started in a session of its own with only its descriptors, and reads the
  plan (namespaces, uid drop and rlimits per the sandbox mode) on its stdin;
- the judge looks every 0.25 s: kills at the deadline, ERROR_GRACE_S after a rank
  failed or the channel saw a violation, and when the processes hold more memory than
  allowed; a child that ended is never killed;
- the row's failure: memory, sandbox (exit 125 with nothing reported), tampered, the
  first rank's error, hang (naming the ranks without a result), crash (the log's tail).
"""

import json
import math
import os
import stat
import subprocess
import sys
import types
from pathlib import Path

import pytest

from linkroof.scoring import channel, procs
from linkroof.scoring import score as S
from linkroof.scoring.channel import DEFAULT_MAX_OUTPUT_BYTES, RankReport

MARK = procs.MARK
NOBODY = 65534
PID = 4321
GIB = 1 << 30


class Stdin:
    def __init__(self):
        self.data, self.closed = b"", False

    def write(self, b):
        if not isinstance(b, bytes):
            raise TypeError(f"a bytes-like object is required, not {type(b).__name__!r}")
        self.data += b

    def close(self):
        self.closed = True


class Judge:
    """The stand-ins of one run_target call, and what they saw."""

    def __init__(self, tmp_path, monkeypatch):
        self.tmp = tmp_path
        self.now = 100.0  # the judge's clock (perf_counter), moved by each wait that times out
        self.step = 0.5
        self.script: list = [0]  # per wait: an int (the jail's exit status) or None/a callable (a timeout)
        self.box = {"mode": "none", "why": "--sandbox none"}
        self.subreaper = True
        self.euid = 1000
        self.default_limit = 64 * GIB
        self.rss: list = []
        self.log_text = b""
        self.popen_error = None
        self.rss_error = None
        # what was seen
        self.commands, self.sandbox_calls, self.kills, self.waits = [], [], [], []
        self.tree_calls, self.rss_calls, self.kill_marks, self.descendants = [], [], [], []
        self.listener = self.popen = None
        judge = self

        class Listener:
            def __init__(self, folder, outputs, ranks, max_output_bytes=DEFAULT_MAX_OUTPUT_BYTES, in_memory=False):
                self.args = {"folder": folder, "outputs": outputs, "ranks": ranks,
                             "max_output_bytes": max_output_bytes, "in_memory": in_memory}
                self.reports, self.violations = {}, []
                self.released = self.closed = 0
                self.mark_fds = {}
                judge.listener = self

            def connect(self):
                self.mark_fds = {r: 60 + r for r in range(self.args["ranks"])}
                return {r: 40 + r for r in range(self.args["ranks"])}

            def inherited(self, fds):
                return sorted(list(fds.values()) + [self.mark_fds[r] for r in fds])

            def env(self, fds):
                return {"FAKE_FDS": ",".join(f"{r}:{fd}" for r, fd in sorted(fds.items()))}

            def release(self):
                self.released += 1

            def close(self):
                self.closed += 1

            def failed_ranks(self):
                return sorted(r for r, rep in self.reports.items() if rep.error is not None)

        class Popen:
            def __init__(self, argv, **kw):
                if judge.popen_error is not None:
                    raise judge.popen_error
                judge.popen = self
                self.argv, self.kw = argv, kw
                self.stdin, self.pid, self.returncode = Stdin(), PID, None
                log = kw.get("stdout")
                if judge.log_text:
                    log.write(judge.log_text)
                    log.flush()

            def wait(self, timeout=None):
                judge.waits.append(timeout)
                if not judge.script:
                    raise AssertionError("the judge waited past the end of the test's script")
                step = judge.script.pop(0)
                if isinstance(step, int):
                    self.returncode = step
                    return step
                judge.now += judge.step
                if callable(step):
                    step(judge.listener)
                raise subprocess.TimeoutExpired("jail", timeout)

            def poll(self):
                return self.returncode

        def kill(proc):
            judge.kills.append(proc)
            if proc is not None:
                proc.returncode = -9

        def rss_bytes(pids):
            judge.rss_calls.append(pids)
            if judge.rss_error is not None:
                raise judge.rss_error
            return judge.rss.pop(0) if judge.rss else 0

        def tree_of(root, mark):
            judge.tree_calls.append((root, mark))
            return {root, 77}

        def kill_mark(mark, before=frozenset(), rounds=50):
            judge.kill_marks.append((mark, before))
            return 3

        def descendants(root, table=None):
            judge.descendants.append(root)
            return {7, 8}

        def sandbox_for(choice, paths):
            judge.sandbox_calls.append((choice, list(paths)))
            return dict(judge.box)

        monkeypatch.setattr(channel, "Listener", Listener)
        monkeypatch.setattr(procs, "become_subreaper", lambda: judge.subreaper)
        monkeypatch.setattr(procs, "new_mark", lambda: "mark-abc")
        monkeypatch.setattr(procs, "descendants", descendants)
        monkeypatch.setattr(procs, "kill_mark", kill_mark)
        monkeypatch.setattr(procs, "rss_bytes", rss_bytes)
        monkeypatch.setattr(procs, "tree_of", tree_of)
        monkeypatch.setattr(S.subprocess, "Popen", Popen)
        monkeypatch.setattr(S, "time", types.SimpleNamespace(perf_counter=lambda: judge.now))
        monkeypatch.setattr(S, "_kill", kill)
        monkeypatch.setattr(S, "hide_self", lambda: None)
        monkeypatch.setattr(S, "_jail_env", lambda: {"PATH": "/usr/bin"})
        monkeypatch.setattr(S, "free_port", lambda: 29999)
        monkeypatch.setattr(S, "sandbox_for", sandbox_for)
        monkeypatch.setattr(S, "default_max_memory", lambda: judge.default_limit)
        monkeypatch.setattr(S.os, "geteuid", lambda: judge.euid)

        # what the target's processes must read: its file, the inputs' file, a PYTHONPATH folder
        for d in ("cand", "inp", "pp0", "pp1"):
            (tmp_path / d).mkdir()
        (tmp_path / "cand" / "k.py").write_text("def solution(): pass\n")
        (tmp_path / "inp" / "i.py").write_text("def make(): pass\n")
        self.target = S.Target.of(str(tmp_path / "cand" / "k.py"))
        self.inputs = "pkb:" + str(tmp_path / "inp" / "i.py")
        self.out = str(tmp_path / "run" / "t0")

    def env_of(self, r):
        return {"PATH": "/bin", "HOME": "/home/u", "LINKROOF_STORE": "/secret/store.sqlite",
                "PYTHONPATH": str(self.tmp / f"pp{r}"), "RANK": str(r)}

    def ranks_command(self):
        """The judge's own layout: one (argv, env) per rank."""
        def command(ranks, port, args):
            self.commands.append((ranks, port, list(args)))
            return [([sys.executable, Path("/x/child.py"), 7, "--rank", r], self.env_of(r)) for r in range(ranks)]
        return command

    def one_process_command(self):
        """A stand-in's layout: one (argv, env) holding every rank."""
        def command(ranks, port, args):
            self.commands.append((ranks, port, list(args)))
            return [sys.executable, "stand_in.py", 5], self.env_of(0)
        return command

    def run(self, ranks=1, protocol="pkb", trials=1, command=None, **kw):
        return S.run_target(self.target, self.inputs, ranks, protocol, self.out, trials,
                            command=command or self.ranks_command(), **kw)

    def plan(self):
        assert self.popen.stdin.closed
        return json.loads(self.popen.stdin.data.decode())


@pytest.fixture
def judge(tmp_path, monkeypatch):
    return Judge(tmp_path, monkeypatch)


def report(perf=None, error=None, trials_done=0, outputs=None, checks=None, marks=None):
    return RankReport(outputs=outputs or {}, trials_done=trials_done, perf=perf, error=error, checks=checks,
                      marks=marks or {})


def reporting(reports, violations=()):
    """A wait that times out, the channel having received these by then."""
    def step(listener):
        listener.reports.update(reports)
        listener.violations.extend(violations)
    return step


def exiting(rc, reports=None, violations=()):
    """The script of a child that reports (at once) and exits with rc."""
    return [reporting(reports or {}, violations), rc]


# ------------------------------------------------------------------ the deadline


@pytest.mark.parametrize("deadline", [math.nan, math.inf, -math.inf, 0.0, -1.0])
def test_a_deadline_not_finite_and_positive_is_refused_before_anything_runs(judge, deadline):
    with pytest.raises(ValueError) as err:
        judge.run(deadline_s=deadline)
    assert str(err.value) == f"a deadline must be a finite number of seconds, not {deadline!r}"
    assert not os.path.exists(judge.out) and judge.commands == [] and judge.popen is None


def test_a_deadline_under_a_second_is_kept_and_a_child_past_it_is_killed_as_hung(judge):
    """0.75 s, the judge looking every 0.25 s: at 0.75 s the child is not yet past it,
    at 1.0 s it is: four waits, one kill, rank 1 (no result) named, the deadline said
    with :g."""
    judge.step = 0.25
    judge.script = [reporting({0: report(perf={"clock": None})}), None, None, None]
    res = judge.run(ranks=2, deadline_s=0.75)
    assert judge.waits == [0.25] * 4
    assert judge.kills == [judge.popen]
    assert res.returncode is None and res.wall_s == 1.0
    assert res.failure == {"kind": "hang", "ranks": [1],
                           "message": "rank(s) [1] did not finish within the 0.75 s deadline; the process group "
                                      "was killed"}


def test_a_child_that_ends_within_its_deadline_is_waited_for_and_never_killed(judge):
    """Fifteen quarter-second looks of nothing wrong (past ERROR_GRACE_S from the first
    look: no rank failed, so no grace runs out), then exit 0: no kill, rc 0, the wall
    time the clock's."""
    judge.step = 1.0
    judge.script = [reporting({0: report(perf={"a": 1}), 1: report(perf={"b": 2})})] + [None] * 14 + [0]
    res = judge.run(ranks=2)
    assert judge.kills == [] and len(judge.waits) == 16 and set(judge.waits) == {0.25}
    assert res.returncode == 0 and res.failure is None and res.wall_s == 15.0
    assert res.perf == {0: {"a": 1}, 1: {"b": 2}}


# ------------------------------------------------------------------ folders


def test_the_output_folder_and_its_scratch_are_made_private(judge):
    old = os.umask(0o022)
    try:
        judge.run()
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(judge.out).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(os.path.join(judge.out, "scratch")).st_mode) == 0o700
    assert os.path.isfile(os.path.join(judge.out, "child.log"))


def test_a_folder_used_before_is_used_again(judge):
    os.makedirs(os.path.join(judge.out, "scratch"))
    judge.script = exiting(0, {0: report(perf={"a": 1})})
    res = judge.run()
    assert res.failure is None and res.out_dir == judge.out


# ------------------------------------------------------------------ the child's arguments and the channel


def test_the_child_is_told_every_option_and_the_judges_seeds_as_integers(judge):
    judge.run(ranks=2, protocol="linkroof", trials=3, warmup=5, iters=10, shape=(3, 5), dtype="float32",
              problem_id=12, first_trial=2, max_output_bytes=4096, seeds=(11, 22.0, 33))
    (ranks, port, args), = judge.commands
    assert (ranks, port) == (2, 29999)
    assert args == ["--fn", judge.target.spec, "--inputs", judge.inputs, "--trials", "3", "--protocol", "linkroof",
                    "--warmup", "5", "--iters", "10", "--m", "3", "--n", "5", "--dtype", "float32",
                    "--problem-id", "12", "--first-trial", "2", "--max-output-bytes", "4096",
                    "--seeds", "11,22,33"]
    assert judge.listener.args["ranks"] == 2 and judge.listener.args["max_output_bytes"] == 4096


def test_the_defaults_are_pkbs_bf16_1024_square_problem_1_from_trial_0_no_seeds(judge):
    judge.run()
    (_, _, args), = judge.commands
    assert args == ["--fn", judge.target.spec, "--inputs", judge.inputs, "--trials", "1", "--protocol", "pkb",
                    "--warmup", "500", "--iters", "100", "--m", "1024", "--n", "1024", "--dtype", "bfloat16",
                    "--problem-id", "1", "--first-trial", "0", "--max-output-bytes", str(DEFAULT_MAX_OUTPUT_BYTES)]
    assert judge.sandbox_calls[0][0] == "auto"  # the strongest sandbox the machine allows, by default
    assert judge.listener.args["in_memory"] is False  # a candidate's outputs: files, not the judge's memory


def test_the_channel_is_a_fresh_folder_under_out_dir_and_a_references_stays_in_memory(judge):
    judge.run(ranks=3, reference=True, max_output_bytes=1234)
    a = judge.listener.args
    assert a["folder"] == "" and a["ranks"] == 3 and a["max_output_bytes"] == 1234 and a["in_memory"] is True
    assert os.path.dirname(a["outputs"]) == judge.out
    name = os.path.basename(a["outputs"])
    assert len(name) == 16 and all(c in "0123456789abcdef" for c in name)
    first = a["outputs"]
    judge.script = [0]
    judge.run(ranks=3, reference=True)
    assert judge.listener.args["outputs"] != first  # never a folder of an earlier run


def test_the_child_command_is_the_judges_own_unless_one_is_given(judge, monkeypatch):
    seen = []

    def own(ranks, port, args):
        seen.append((ranks, port, args[:2]))
        return [([sys.executable, "-c", "pass"], judge.env_of(r)) for r in range(ranks)]

    monkeypatch.setattr(S, "child_command", own)
    S.run_target(judge.target, judge.inputs, 2, "pkb", judge.out, 1)
    assert seen == [(2, 29999, ["--fn", judge.target.spec])]
    judge.script = [0]
    judge.run(ranks=2)
    assert len(seen) == 1 and len(judge.commands) == 1  # a command given: the judge's own is not asked


# ------------------------------------------------------------------ the plan each process is started from


def test_without_a_sandbox_each_rank_sees_a_cleaned_environment_its_own_descriptors_and_the_mark(judge):
    judge.box = {"mode": "none", "why": "--sandbox none"}
    res = judge.run(ranks=2, sandbox="none")
    scratch = os.path.join(judge.out, "scratch")
    assert judge.sandbox_calls == [("none", S._needed_paths(judge.target, judge.inputs, judge.env_of(0)))]
    assert str(judge.tmp / "pp0") in judge.sandbox_calls[0][1] and str(judge.tmp / "pp1") not in \
        judge.sandbox_calls[0][1]
    plan = judge.plan()
    expose = S.exposed(S._needed_paths(judge.target, judge.inputs, judge.env_of(0)))
    assert str(judge.tmp / "pp0") in expose and str(judge.tmp / "cand") in expose and str(judge.tmp / "inp") in expose
    assert str(judge.tmp / "pp1") not in expose
    assert plan == {
        "procs": [{"argv": [sys.executable, "/x/child.py", "7", "--rank", str(r)],
                   "env": {"PATH": "/bin", "HOME": "/home/u", "PYTHONPATH": str(judge.tmp / f"pp{r}"), "RANK": str(r),
                           "XDG_DATA_HOME": scratch, "TMPDIR": scratch, "FAKE_FDS": f"{r}:{40 + r}", MARK: "mark-abc"},
                   "fds": [40 + r, 60 + r], "cwd": os.getcwd()} for r in range(2)],
        "unshare": False, "expose": expose, "userns": False, "uid": None, "gid": None, "rlimits": {}}
    assert res.sandbox == {"mode": "none", "why": "--sandbox none"}


def test_in_namespaces_home_caches_and_temporary_files_live_in_the_fresh_tmp_and_the_gpus_are_given(judge):
    judge.box = {"mode": "namespaces", "why": "as root in them"}
    judge.euid = 1000
    res = judge.run(ranks=2, sandbox="namespaces", gpus=[0, 2])
    plan = judge.plan()
    for r, p in enumerate(plan["procs"]):
        assert p["env"] == {"PATH": "/bin", "HOME": "/tmp/home", "XDG_CACHE_HOME": "/tmp/home/.cache",
                            "PYTHONPATH": str(judge.tmp / f"pp{r}"), "RANK": str(r), "XDG_DATA_HOME": "/tmp",
                            "TMPDIR": "/tmp", "FAKE_FDS": f"{r}:{40 + r}", MARK: "mark-abc",
                            "CUDA_VISIBLE_DEVICES": "0,2"}
    assert (plan["unshare"], plan["userns"], plan["uid"], plan["gid"], plan["rlimits"]) == (True, True, None, None, {})
    assert res.sandbox == {"mode": "namespaces", "why": "as root in them"}
    assert judge.sandbox_calls[0][0] == "namespaces"


def test_no_user_namespace_is_asked_for_where_the_judge_is_root(judge):
    judge.box = {"mode": "namespaces", "why": "w"}
    judge.euid = 0
    judge.run()
    assert judge.plan()["userns"] is False
    judge.euid, judge.script = 1, [0]
    judge.run()
    assert judge.plan()["userns"] is True


def test_dropping_to_nobody_sets_its_uid_gid_and_a_process_limit_and_no_user_namespace(judge):
    judge.box = {"mode": "namespaces+uid", "why": "as uid 65534"}
    judge.euid = 1000
    judge.run(gpus=[])
    plan = judge.plan()
    assert (plan["unshare"], plan["userns"], plan["uid"], plan["gid"], plan["rlimits"]) == \
        (True, False, NOBODY, NOBODY, {"nproc": 4096})
    assert plan["procs"][0]["env"]["CUDA_VISIBLE_DEVICES"] == ""  # no GPU given: none visible
    assert plan["procs"][0]["env"]["HOME"] == "/tmp/home"


def test_a_stand_in_of_one_process_holds_every_ranks_descriptors(judge):
    res = judge.run(ranks=2, command=judge.one_process_command())
    plan = judge.plan()
    scratch = os.path.join(judge.out, "scratch")
    assert plan["procs"] == [{"argv": [sys.executable, "stand_in.py", "5"],
                              "env": {"PATH": "/bin", "HOME": "/home/u", "PYTHONPATH": str(judge.tmp / "pp0"),
                                      "RANK": "0", "XDG_DATA_HOME": scratch, "TMPDIR": scratch,
                                      "FAKE_FDS": "0:40,1:41", MARK: "mark-abc"},
                              "fds": [40, 41, 60, 61], "cwd": os.getcwd()}]
    assert judge.sandbox_calls[0][1] == S._needed_paths(judge.target, judge.inputs, judge.env_of(0))
    assert plan["expose"] == S.exposed(S._needed_paths(judge.target, judge.inputs, judge.env_of(0)))
    assert res.ranks == 2


def test_the_jail_is_started_in_its_own_session_with_only_its_descriptors_and_the_mark(judge):
    res = judge.run(ranks=2)
    p = judge.popen
    assert p.argv == [sys.executable, "-m", "linkroof.scoring.jail"]
    log = p.kw.pop("stdout")
    assert log.name == os.path.join(judge.out, "child.log") and log.mode == "wb" and log.closed
    assert p.kw == {"stdin": subprocess.PIPE, "stderr": subprocess.STDOUT, "start_new_session": True,
                    "cwd": os.getcwd(), "pass_fds": [40, 41, 60, 61], "env": {"PATH": "/usr/bin", MARK: "mark-abc"}}
    assert judge.listener.released >= 2 and judge.listener.closed == 1 and res.listener is judge.listener
    # what was running before the target is never its: kill_mark spares it
    assert judge.descendants == [os.getpid()] and judge.kill_marks == [("mark-abc", {7, 8})]
    assert res.leftover == 3 and res.contained == ""
    assert (res.target, res.out_dir, res.returncode, res.ranks) == (judge.target, judge.out, 0, 2)


def test_without_a_subreaper_the_row_says_its_processes_were_found_by_their_mark_only(judge):
    judge.subreaper = False
    res = judge.run()
    assert res.contained == "processes found by their mark only (no subreaper here)"


def test_a_jail_that_cannot_start_raises_and_leaves_the_channel_closed(judge):
    judge.popen_error = FileNotFoundError("no python")
    with pytest.raises(FileNotFoundError):
        judge.run()
    assert judge.kills == [] and judge.listener.closed == 1 and judge.kill_marks == [("mark-abc", {7, 8})]


def test_a_sandbox_refused_raises_before_the_channel_opens_or_a_mark_is_given(judge, monkeypatch):
    """--sandbox namespaces where none are allowed: the refusal comes before the channel and the mark,
    so nothing is left open or running (the channel's sockets, reader threads and a live mark were,
    until 2026-12-05)."""
    marks = []
    monkeypatch.setattr(procs, "new_mark", lambda: marks.append(1) or "mark-abc")

    def refuse(choice, paths):
        raise S.ScoreError(f"--sandbox {choice}: no user namespaces here")

    monkeypatch.setattr(S, "sandbox_for", refuse)
    with pytest.raises(S.ScoreError, match="^--sandbox namespaces: no user namespaces here$"):
        judge.run(sandbox="namespaces")
    assert judge.listener is None and marks == [] and judge.popen is None and judge.commands


def test_an_error_while_watching_still_kills_the_running_child(judge):
    judge.rss_error = RuntimeError("proc vanished")
    judge.script = [None]
    with pytest.raises(RuntimeError):
        judge.run(max_memory_bytes=GIB)
    assert judge.kills == [judge.popen] and judge.listener.closed == 1 and judge.popen.kw["stdout"].closed
    assert judge.kill_marks == [("mark-abc", {7, 8})]


# ------------------------------------------------------------------ a failed rank, a violation: the grace


def test_ranks_left_waiting_after_one_failed_are_ended_error_grace_s_later(judge):
    """Rank 0 writes its error at 103 s; the others are killed at the first look past
    103 + ERROR_GRACE_S (114 s: 14 waits); the row is rank 0's error, not a hang."""
    judge.step = 1.0
    judge.script = [None, None, reporting({0: report(error={"kind": "exception", "message": "ValueError: no"})})]
    judge.script += [None] * 20
    res = judge.run(ranks=2)
    assert len(judge.waits) == 14 and judge.kills == [judge.popen] and res.returncode is None
    assert res.failure == {"kind": "exception", "message": "ValueError: no", "ranks": [0]}


def test_a_violation_on_the_channel_also_starts_the_grace(judge):
    judge.step = 1.0
    judge.script = [None, None, reporting({}, ["rank 0 sent a frame unsigned"])] + [None] * 20
    res = judge.run(ranks=2)
    assert len(judge.waits) == 14 and judge.kills == [judge.popen]
    assert res.failure == {"kind": "tampered", "ranks": [],
                           "message": "its results were not accepted: rank 0 sent a frame unsigned"}


# ------------------------------------------------------------------ host memory


def test_processes_over_the_memory_limit_are_killed_and_said_in_gib(judge):
    judge.script = [reporting({0: report(perf={"a": 1}, trials_done=1)}), None, None]
    judge.rss = [1 * GIB, int(3.5 * GIB)]
    res = judge.run(ranks=2, max_memory_bytes=2 * GIB)
    assert judge.tree_calls == [(PID, "mark-abc")] * 2 and judge.rss_calls == [{PID, 77}] * 2
    assert judge.kills == [judge.popen] and res.returncode is None
    assert res.failure == {"kind": "memory", "ranks": [0, 1],
                           "message": "its processes held 3.5 GiB of host memory, over the 2.0 GiB limit: killed"}
    assert (res.perf, res.outputs, res.checks, res.trials_done) == ({}, {}, {}, {})  # nothing it sent is kept
    assert res.listener is judge.listener and res.sandbox == {"mode": "none", "why": "--sandbox none"}


def test_memory_exactly_at_the_limit_is_allowed(judge):
    judge.script = [None, None, 0]
    judge.rss = [2 * GIB, 2 * GIB]
    res = judge.run(max_memory_bytes=2 * GIB)
    assert judge.kills == [] and res.failure is not None and res.failure["kind"] == "crash"  # no perf: not memory


def test_the_default_limit_is_half_the_machines_memory(judge):
    judge.default_limit = 2 * GIB
    judge.script = [None, None]
    judge.rss = [int(2.25 * GIB)]
    res = judge.run()
    assert res.failure["message"] == "its processes held 2.2 GiB of host memory, over the 2.0 GiB limit: killed"


def test_a_given_limit_replaces_the_default(judge):
    judge.default_limit = 64 * GIB
    judge.script = [None, None]
    judge.rss = [int(2.25 * GIB)]
    res = judge.run(max_memory_bytes=GIB)
    assert res.failure["message"] == "its processes held 2.2 GiB of host memory, over the 1.0 GiB limit: killed"


def test_a_limit_of_zero_watches_no_memory(judge):
    judge.script = [None, None, 0]
    judge.rss = [100 * GIB] * 3
    res = judge.run(max_memory_bytes=0)
    assert judge.rss_calls == [] and judge.tree_calls == [] and judge.kills == []
    assert res.returncode == 0 and res.failure["kind"] == "crash"


# ------------------------------------------------------------------ the sandbox that could not start


def test_exit_125_with_nothing_reported_in_a_sandbox_is_a_sandbox_failure_with_the_logs_tail(judge):
    judge.box = {"mode": "namespaces", "why": "w"}
    judge.log_text = b"jail: unshare failed: EPERM\n"
    judge.script = [125]
    res = judge.run(ranks=2)
    assert res.failure == {"kind": "sandbox", "ranks": [0, 1],
                           "message": "the sandbox could not start (jail: unshare failed: EPERM)"}
    assert res.returncode == 125


def test_exit_125_without_a_sandbox_is_the_childs_own_crash(judge):
    judge.box = {"mode": "none", "why": "--sandbox none"}
    judge.log_text = b"Traceback: boom\n"
    judge.script = [125]
    res = judge.run(ranks=2)
    assert res.failure == {"kind": "crash", "ranks": [0, 1], "message": "exited 125 without a result: Traceback: boom"}


def test_exit_125_after_a_report_in_a_sandbox_is_what_the_rank_reported(judge):
    judge.box = {"mode": "namespaces+uid", "why": "w"}
    judge.script = exiting(125, {0: report(error={"kind": "exit", "message": "sys.exit(125)"})})
    res = judge.run()
    assert res.failure == {"kind": "exit", "message": "sys.exit(125)", "ranks": [0]}


def test_another_exit_with_nothing_reported_in_a_sandbox_is_a_crash(judge):
    judge.box = {"mode": "namespaces", "why": "w"}
    judge.log_text = b"Segmentation fault\n"
    judge.script = [126]
    res = judge.run()
    assert res.failure == {"kind": "crash", "ranks": [0], "message": "exited 126 without a result: Segmentation fault"}


# ------------------------------------------------------------------ what the ranks reported


def test_each_ranks_report_is_kept_its_outputs_as_path_strings(judge):
    judge.script = exiting(0, {
        0: report(perf={"wall": 1}, trials_done=3, outputs={"0": [Path("/a/r0_t0_0.npy")], "post": []},
                  checks={"post": True}),
        1: report(perf=None, trials_done=2, outputs={"0": [Path("/a/r1_t0_0.npy"), Path("/a/r1_t0_1.npy")]},
                  checks=None)})
    res = judge.run(ranks=2, protocol="linkroof")
    assert res.perf == {0: {"wall": 1}} and res.checks == {0: {"post": True}}
    assert res.trials_done == {0: 3, 1: 2}
    assert res.outputs == {0: {"0": ["/a/r0_t0_0.npy"], "post": []}, 1: {"0": ["/a/r1_t0_0.npy", "/a/r1_t0_1.npy"]}}
    assert res.failure == {"kind": "crash", "ranks": [1], "message": "exited 0 without a result: "}


def test_an_honest_pkb_time_is_the_mean_over_the_judges_count_of_calls(judge):
    """10 calls of 1 ms between marks 10 ms apart: believed (with the default 100 calls
    it would be 100 ms, over the wall seen)."""
    judge.script = exiting(0, {0: report(perf={"wall_time_ms": 1.0}, marks={"timing_start": 5.0,
                                                                            "timing_end": 5.01})})
    res = judge.run(iters=10)
    assert res.failure is None and res.perf == {0: {"wall_time_ms": 1.0}} and res.time_only is False


def test_a_pkb_time_longer_than_the_wall_seen_is_tampered_and_nothing_is_kept(judge):
    """10 calls of 1 ms between marks 1 ms apart: impossible; rank 1 had a time without
    marks. Every rank's results are dropped; the listener's own violations go first."""
    judge.script = exiting(0, {
        1: report(perf={"wall_time_ms": 0.5}, trials_done=1, outputs={"0": [Path("/a/x.npy")]}, checks={"c": 1}),
        0: report(perf={"wall_time_ms": 1.0}, trials_done=1, marks={"timing_start": 5.0, "timing_end": 5.001})},
        ["rank 1 sent two perf frames"])
    judge.script.insert(1, None)  # the violation seen once: the grace starts, the child ends before it runs out
    res = judge.run(ranks=2, iters=10)
    assert (res.perf, res.outputs, res.checks, res.trials_done) == ({}, {}, {}, {})
    assert res.failure == {"kind": "tampered", "ranks": [0, 1], "message": (
        "its results were not accepted: rank 1 sent two perf frames; rank 0 reported 10.000 ms for a timed loop "
        "the judge saw take 1.000 ms; rank 1 reported a time without the harness's marks around its timed loop")}
    assert res.time_only is False and judge.kills == []


def test_a_time_only_short_of_the_wall_seen_is_tampered_and_marked_worth_a_rerun(judge):
    judge.script = exiting(0, {0: report(perf={"wall_time_ms": 0.1}, marks={"timing_start": 5.0, "timing_end": 6.0})})
    res = judge.run(iters=10)
    assert res.failure == {"kind": "tampered", "ranks": [0], "message": (
        "its results were not accepted: rank 0 reported 1.000 ms for a timed loop the judge saw take "
        "1000.000 ms (under 50% of it)")}
    assert res.time_only is True


def test_a_short_time_beside_a_channel_violation_is_not_worth_a_rerun(judge):
    judge.script = exiting(0, {0: report(perf={"wall_time_ms": 0.1}, marks={"timing_start": 5.0, "timing_end": 6.0})},
                           ["rank 0 sent a frame unsigned"])
    res = judge.run(iters=10)
    assert res.failure["kind"] == "tampered" and res.time_only is False


def test_the_first_ranks_error_is_the_rows_and_every_failed_rank_is_named(judge):
    judge.script = exiting(1, {1: report(error={"kind": "oom", "message": "CUDA out of memory"}),
                               2: report(perf={"a": 1}),
                               0: report(error={"kind": "exception", "message": "ValueError: no"})})
    res = judge.run(ranks=3)
    assert res.failure == {"kind": "exception", "message": "ValueError: no", "ranks": [0, 1]}


def test_an_error_without_kind_or_message_is_an_exception_with_no_message(judge):
    judge.script = exiting(1, {0: report(error={})})
    res = judge.run()
    assert res.failure == {"kind": "exception", "message": "", "ranks": [0]}


def test_an_errors_kind_is_cut_to_40_characters_and_its_message_to_2000(judge):
    judge.script = exiting(1, {0: report(error={"kind": "k" * 39 + "XY", "message": "m" * 1999 + "XY"})})
    res = judge.run()
    assert res.failure == {"kind": "k" * 39 + "X", "message": "m" * 1999 + "X", "ranks": [0]}


def test_a_non_string_kind_is_said_as_text(judge):
    judge.script = exiting(1, {0: report(error={"kind": 7, "message": 8})})
    assert judge.run().failure == {"kind": "7", "message": "8", "ranks": [0]}


# ------------------------------------------------------------------ crashes


def test_a_nonzero_exit_after_every_rank_reported_is_a_crash_naming_no_rank(judge):
    judge.log_text = b"  warning: leaked semaphore\n"
    judge.script = exiting(3, {0: report(perf={"a": 1}), 1: report(perf={"b": 1})})
    res = judge.run(ranks=2)
    assert res.failure == {"kind": "crash", "ranks": [], "message": "exited 3 without a result: warning: leaked semaphore"}


def test_exit_1_is_a_crash_too(judge):
    judge.script = exiting(1, {0: report(perf={"a": 1})})
    res = judge.run()
    assert res.failure == {"kind": "crash", "ranks": [], "message": "exited 1 without a result: "}


def test_exit_0_with_a_rank_missing_its_result_is_a_crash_naming_it(judge):
    judge.log_text = b"bye"
    judge.script = exiting(0, {0: report(perf={"a": 1})})
    res = judge.run(ranks=2)
    assert res.failure == {"kind": "crash", "ranks": [1], "message": "exited 0 without a result: bye"}


def test_exit_0_with_every_ranks_result_is_no_failure(judge):
    judge.script = exiting(0, {0: report(perf={"a": 1}), 1: report(perf={"b": 1})})
    res = judge.run(ranks=2)
    assert res.failure is None and res.returncode == 0 and judge.kills == []
