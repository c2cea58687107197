"""score.py's small helpers, each held to what its docstring or its caller promises: the
environment a child and the jail see, the paths a target needs and the folders its
namespace keeps, the sandbox chosen, the refusals of --target and --inputs (read, never
run), reruns for a time reported short, the exit status, the judge's hiding of itself and
the killing of a process group. Values worked out from the rules, not read off the code."""

import ctypes
import os
import secrets
import signal
import socket
import subprocess
import sys

import pytest

from linkroof.scoring import jail
from linkroof.scoring import procs
from linkroof.scoring import score as S

# ------------------------------------------------------------------ pkb_problem_id


@pytest.mark.parametrize("spec, pid", [
    ("/bench/problems/12_allreduce.py", 12),
    ("problems/7_ring.py:solution", 7),
    ("my dir/12_x.py:solution", 12),  # a path with a space is still one path
    ("12_a.py:ns/3_b", 12),  # the function part never counts, whatever it looks like
    ("0042_scan.py", 42),
    # the file is the part before the last ':', as Target.of and check_target read it: a folder's ':'
    # took problem 1's inputs for problem 3 until 2026-12-05
    ("runs:7/3_c.py:solution", 3),
    ("runs:7/3_c.py", 3),
    ("/data/runs:7/12_x.py:solution", 12),
])
def test_the_problem_id_is_the_leading_number_of_the_files_stem(spec, pid):
    assert S.pkb_problem_id(spec) == pid


@pytest.mark.parametrize("spec", ["ring.py", "pkg.mod:fn", "/bench/x12.py:solution"])
def test_a_stem_without_a_leading_number_is_problem_1(spec):
    assert S.pkb_problem_id(spec) == 1


# ------------------------------------------------------------------ free_port


def test_free_port_is_a_kernel_chosen_ephemeral_port_that_can_be_bound_again():
    lo, hi = map(int, open("/proc/sys/net/ipv4/ip_local_port_range").read().split())
    port = S.free_port()
    assert isinstance(port, int) and lo <= port <= hi
    with socket.socket() as s:  # closed again: free for the child
        s.bind(("127.0.0.1", port))


# ------------------------------------------------------------------ clean_env


def test_clean_env_drops_linkroof_settings_and_points_data_and_temp_at_the_scratch_folder():
    env = {"PATH": "/bin", "LINKROOF_STORE": "/secret/store.sqlite", "LINKROOF_X": "1",
           "linkroof_lower": "kept", "MY_LINKROOF_Y": "kept", "XDG_DATA_HOME": "/home/u/.local/share",
           "TMPDIR": "/var/tmp"}
    got = S.clean_env(env, "/scratch")
    assert got == {"PATH": "/bin", "linkroof_lower": "kept", "MY_LINKROOF_Y": "kept",
                   "XDG_DATA_HOME": "/scratch", "TMPDIR": "/scratch"}
    assert env["LINKROOF_STORE"] == "/secret/store.sqlite"  # the caller's dict is left alone


# ------------------------------------------------------------------ _jail_env

KEPT = ("PATH", "PYTHONPATH", "HOME", "LANG", "LC_ALL", "VIRTUAL_ENV", "PYTHONHOME")


def test_the_jail_sees_only_what_starting_python_needs(monkeypatch):
    for i, k in enumerate(KEPT):
        monkeypatch.setenv(k, f"/v{i}")
    monkeypatch.setenv("LINKROOF_STORE", "/secret/store.sqlite")
    monkeypatch.setenv("SECRET_TOKEN_H", "t")
    assert S._jail_env() == {k: f"/v{i}" for i, k in enumerate(KEPT)}


def test_the_jail_env_has_no_variable_the_judge_lacks(monkeypatch):
    for k in KEPT:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("PATH", "/usr/bin")
    assert S._jail_env() == {"PATH": "/usr/bin"}


# ------------------------------------------------------------------ _needed_paths


@pytest.fixture
def fixed_python_paths(monkeypatch, tmp_path):
    monkeypatch.setattr(jail, "python_paths", lambda: ["/py/prefix", "/py/site"])
    monkeypatch.chdir(tmp_path)
    return [sys.executable, "/py/prefix", "/py/site", str(tmp_path)]


def test_needed_paths_are_python_the_folder_pythonpath_and_the_named_files(fixed_python_paths):
    got = S._needed_paths(S.Target.of("probs/12_x.py"), "pkb:/data/PKB", {"PYTHONPATH": "/p1::/p2"})
    assert got == fixed_python_paths + ["/p1", "/p2", "probs/12_x.py", "/data/PKB"]


def test_needed_paths_name_a_relative_py_file_and_no_module(fixed_python_paths):
    got = S._needed_paths(S.Target("mymod:fn", "fn"), "local.py", {})
    assert got == fixed_python_paths + ["local.py"]


def test_needed_paths_name_a_folder_module_by_its_path_and_the_inputs_file(fixed_python_paths):
    got = S._needed_paths(S.Target("tools/mod:fn", "fn"), "/abs/inp.py:make", {"PYTHONPATH": ""})
    assert got == fixed_python_paths + ["tools/mod", "/abs/inp.py"]


def test_needed_paths_name_a_file_in_a_folder_with_a_colon_whole(fixed_python_paths):
    """The target's file is what runs (check_target read it at its last ':'): a folder's ':' once named
    the folder's first part, /data/runs, which does not exist, and the file was never exposed."""
    got = S._needed_paths(S.Target.of("/data/runs:7/3_c.py"), "/in:puts/mk.py:make", {})
    assert got == fixed_python_paths + ["/data/runs:7/3_c.py", "/in:puts/mk.py"]


def test_check_target_and_the_problem_id_agree_on_a_file_in_a_folder_with_a_colon(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs:7").mkdir()
    (tmp_path / "runs:7" / "3_c.py").write_text("def solution(x):\n    return x\n")
    assert S.check_target("runs:7/3_c.py") is None and S.check_target("runs:7/3_c.py:solution") is None
    assert S.pkb_problem_id("runs:7/3_c.py") == 3


# ------------------------------------------------------------------ exposed


def test_exposed_keeps_existing_folders_and_existing_files_folders_only(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lib").mkdir()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.py").write_text("")
    (tmp_path / "rel").mkdir()
    (tmp_path / "rel" / "r.py").write_text("")
    paths = ["", str(tmp_path / "lib"), str(tmp_path / "src" / "k.py"), "rel/r.py",
             str(tmp_path / "missing" / "nope"), str(tmp_path / "gone"), str(tmp_path / "lib")]
    assert S.exposed(paths) == [str(tmp_path / "lib"), str(tmp_path / "rel"), str(tmp_path / "src")]


def test_nothing_existing_exposes_nothing():
    assert S.exposed(["", "/no/such/dir/h", "/no/such/file.py"]) == []


# ------------------------------------------------------------------ make_seeds


def test_each_seed_is_a_fresh_secret_draw_below_2_30_lifted_by_1000(monkeypatch):
    asked = []
    draws = iter([0, 5, (1 << 30) - 1])

    def randbelow(n):
        asked.append(n)
        return next(draws)

    monkeypatch.setattr(secrets, "randbelow", randbelow)
    assert S.make_seeds(3) == [1000, 1005, (1 << 30) + 999]
    assert asked == [1 << 30] * 3


def test_no_trial_no_seed():
    assert S.make_seeds(0) == []


# ------------------------------------------------------------------ default_max_memory


def test_the_default_memory_limit_is_half_the_machines_memory_rounded_down(monkeypatch):
    monkeypatch.setattr(procs, "total_memory_bytes", lambda: 3 * 2**30 + 1)
    got = S.default_max_memory()
    assert got == 1610612736 and isinstance(got, int)


@pytest.mark.parametrize("total", [None, 0])
def test_where_the_machine_does_not_say_its_memory_the_limit_is_64_gib(monkeypatch, total):
    monkeypatch.setattr(procs, "total_memory_bytes", lambda: total)
    assert S.default_max_memory() == 68719476736


# ------------------------------------------------------------------ short_only


def D(kind):
    return S.Disagreement(f"rank 0 reported a time ({kind})", kind)


def test_only_short_times_and_no_violation_are_worth_a_second_run():
    assert S.short_only([], [D("short"), D("short")]) is True


def test_no_time_disagreement_is_not_worth_a_second_run():
    assert S.short_only([], []) is False
    assert S.short_only(["it wrote outside its channel"], []) is False


def test_a_violation_beside_short_times_is_not_worth_a_second_run():
    assert S.short_only(["it wrote outside its channel"], [D("short")]) is False


@pytest.mark.parametrize("other", ["long", "marks"])
def test_a_time_disagreement_of_another_kind_is_not_worth_a_second_run(other):
    assert S.short_only([], [D("short"), D(other)]) is False


def test_the_kind_decides_not_the_words():
    assert S.short_only([], ["a time reported short of the wall"]) is False  # a plain string has no kind
    assert S.short_only([], [S.Disagreement("long long long", "short")]) is True


# ------------------------------------------------------------------ free and run_timed


class FakeListener:
    def __init__(self):
        self.freed = 0

    def free(self):
        self.freed += 1


def result(failure=None, time_only=False):
    return S.RunResult(S.Target.of("c.py"), "/out", 0, 1, 0.1, failure=failure, listener=FakeListener(),
                       time_only=time_only)


def test_free_closes_the_runs_memory_files_once():
    res = result()
    S.free(res)
    assert res.listener.freed == 1


def test_free_of_a_run_without_a_listener_or_of_anything_else_does_nothing():
    res = result()
    res.listener = None
    S.free(res)  # no error
    res.listener = object()  # a listener without memory files
    S.free(res)
    S.free(object())
    S.free(None)


SHORT = {"kind": "tampered", "message": "its results were not accepted: rank 0 reported 1 ms (under 50%)",
         "ranks": [0]}


def short(i):
    return result(dict(SHORT, message=f"short {i}"), time_only=True)


@pytest.fixture
def runs(monkeypatch):
    """run_target replaced by the results given, in turn; its calls recorded."""
    calls, queue = [], []

    def fake(*args, **kwargs):
        calls.append((args, kwargs))
        return queue.pop(0)

    monkeypatch.setattr(S, "run_target", fake)
    return calls, queue


def test_a_clean_run_is_run_once_with_the_callers_arguments(runs):
    calls, queue = runs
    first = result()
    queue.append(first)
    got = S.run_timed("t", "inputs", 2, protocol="pkb")
    assert got is first and got.reruns == [] and first.listener.freed == 0
    assert calls == [(("t", "inputs", 2), {"protocol": "pkb"})]


def test_what_is_not_a_run_result_is_given_back_as_is(runs):
    calls, queue = runs
    queue.append({"not": "a run"})
    assert S.run_timed("t") == {"not": "a run"} and len(calls) == 1


def test_a_time_reported_short_is_run_again_at_most_twice_keeping_each_finding(runs):
    calls, queue = runs
    made = [short(0), short(1), short(2), short(3)]
    queue.extend(made)
    got = S.run_timed("t", k=1)
    assert got is made[2] and len(calls) == S.TIME_RERUNS + 1 == 3
    assert got.reruns == ["short 0", "short 1"]
    assert [r.listener.freed for r in made] == [1, 1, 0, 0]  # earlier runs freed, the one returned kept


def test_a_run_clean_after_a_short_one_is_kept_with_the_earlier_finding(runs):
    calls, queue = runs
    first, second = short(0), result()
    queue.extend([first, second])
    got = S.run_timed("t")
    assert got is second and got.reruns == ["short 0"] and len(calls) == 2
    assert first.listener.freed == 1 and second.listener.freed == 0


def test_tampered_for_more_than_a_short_time_is_not_run_again(runs):
    calls, queue = runs
    queue.append(result(dict(SHORT), time_only=False))
    got = S.run_timed("t")
    assert len(calls) == 1 and got.reruns == []


def test_another_failure_is_not_run_again_even_flagged_time_only(runs):
    calls, queue = runs
    queue.append(result({"kind": "crash", "message": "exited 1", "ranks": [0]}, time_only=True))
    got = S.run_timed("t")
    assert len(calls) == 1 and got.failure["kind"] == "crash" and got.reruns == []


# ------------------------------------------------------------------ exit_code


def test_every_row_a_failed_reference_exits_5():
    rows = [{"failure": {"kind": "reference_failed", "message": "x"}}] * 2
    assert S.exit_code(rows) == S.EXIT_REFERENCE_FAILED == 5


def test_every_candidate_failed_to_run_exits_4():
    rows = [{"failure": {"kind": "crash"}}, {"failure": {"kind": "hang"}}]
    assert S.exit_code(rows) == S.EXIT_NOTHING_SCORED == 4


def test_no_row_at_all_exits_4():
    assert S.exit_code([]) == 4


def test_one_candidate_scored_exits_0_even_wrong():
    assert S.exit_code([{"failure": {"kind": "crash"}}, {"failure": None, "correct": False}]) == 0
    assert S.exit_code([{"failure": {"kind": "reference_failed"}}, {"correct": True}]) == 0


# ------------------------------------------------------------------ _tail


def test_the_tail_is_the_last_600_characters_stripped(tmp_path):
    p = tmp_path / "child.log"
    p.write_text("a" * 100 + "b" * 598 + "\n\n")
    assert S._tail(str(p)) == "b" * 598
    p.write_text("  " + "a" * 50 + "c" * 650)
    assert S._tail(str(p)) == "c" * 600
    assert S._tail(str(p), 3) == "ccc"


def test_undecodable_bytes_in_the_log_are_replaced_not_raised(tmp_path):
    p = tmp_path / "child.log"
    p.write_bytes(b"oops \xff\xfe end\n")
    assert S._tail(str(p)) == "oops \ufffd\ufffd end"


def test_a_log_that_cannot_be_read_has_an_empty_tail(tmp_path):
    assert S._tail(str(tmp_path / "none.log")) == ""
    assert S._tail(str(tmp_path)) == ""  # a folder


# ------------------------------------------------------------------ _kill


class FakeProc:
    pid = 424242

    def __init__(self, ends_on):
        self.ends_on = ends_on  # how many waits time out before it ends
        self.waits = []

    def wait(self, timeout=None):
        self.waits.append(timeout)
        if len(self.waits) <= self.ends_on:
            raise subprocess.TimeoutExpired("x", timeout)
        return 0


@pytest.fixture
def killpg(monkeypatch):
    sent = []
    monkeypatch.setattr(os, "killpg", lambda pid, sig: sent.append((pid, sig)))
    return sent


def test_kill_asks_the_group_to_end_and_waits_5_s(killpg):
    proc = FakeProc(ends_on=0)
    S._kill(proc)
    assert killpg == [(424242, signal.SIGTERM)] and proc.waits == [5]


def test_kill_sends_sigkill_to_a_group_that_outlives_sigterm_by_5_s(killpg):
    proc = FakeProc(ends_on=1)
    S._kill(proc)
    assert killpg == [(424242, signal.SIGTERM), (424242, signal.SIGKILL)] and proc.waits == [5, 5]


@pytest.mark.parametrize("err", [ProcessLookupError, PermissionError])
def test_kill_stops_at_a_group_that_is_gone_or_not_its_own(monkeypatch, err):
    sent = []

    def refuse(pid, sig):
        sent.append(sig)
        raise err()

    monkeypatch.setattr(os, "killpg", refuse)
    proc = FakeProc(ends_on=0)
    S._kill(proc)
    assert sent == [signal.SIGTERM] and proc.waits == []


def test_kill_ends_a_real_process_group(leaves_no_process):
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    S._kill(proc)
    assert proc.returncode == -signal.SIGTERM


# ------------------------------------------------------------------ hide_self

PR_GET_DUMPABLE, PR_SET_DUMPABLE = 3, 4


def _dumpable() -> int:
    return ctypes.CDLL(None).prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)


def _set_dumpable(v: int) -> None:
    assert ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, v, 0, 0, 0) == 0


def in_fork(fn) -> str:
    """fn run in a forked copy of this process (its undumpable flag and S._hidden stay
    there); what it returns, as text."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(r)
            try:
                out = repr(fn())
            except BaseException as e:  # noqa: BLE001
                out = f"raised {e!r}"
            os.write(w, out.encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        got = f.read().decode()
    os.waitpid(pid, 0)
    return got


def _fresh():
    S._hidden = False
    _set_dumpable(1)  # whatever the test process is (an earlier test may have hidden it)


def test_hide_self_makes_the_judge_undumpable():
    def go():
        _fresh()
        S.hide_self()
        return _dumpable()

    assert in_fork(go) == "0"


def test_hide_self_acts_once_per_process():
    def go():
        _fresh()
        S.hide_self()
        _set_dumpable(1)  # undone behind its back: a second call does not look again
        S.hide_self()
        return _dumpable()

    assert in_fork(go) == "1"


def test_hide_self_does_nothing_once_hidden():
    def go():
        _fresh()
        S._hidden = True
        S.hide_self()
        return _dumpable()

    assert in_fork(go) == "1"


def test_hide_self_does_nothing_off_linux():
    def go():
        _fresh()
        sys.platform = "darwin"
        S.hide_self()
        return (_dumpable(), S._hidden)

    assert in_fork(go) == "(1, False)"


# ------------------------------------------------------------------ sandbox_for

UID = {"mode": "namespaces+uid", "why": "new PID, mount, IPC and network namespaces, as uid 65534"}
NS = {"mode": "namespaces", "why": "new user, PID, mount, IPC and network namespaces (not root)"}
NONE = {"mode": "none", "why": "namespaces are not allowed here (EPERM)"}


def probing(monkeypatch, got):
    monkeypatch.setattr(jail, "probe", lambda: got)


@pytest.fixture
def closed(tmp_path):
    d = tmp_path / "closed"
    d.mkdir()
    os.chmod(d, 0o700)
    a, b = d / "a.py", d / "b.py"
    a.write_text("")
    b.write_text("")
    return str(a), str(b)


def test_sandbox_none_is_a_plain_session_without_probing(monkeypatch):
    def no_probe():
        raise AssertionError("probed")

    monkeypatch.setattr(jail, "probe", no_probe)
    assert S.sandbox_for("none", ["/"]) == {"mode": "none", "why": "--sandbox none"}


@pytest.mark.parametrize("choice", ["auto", "namespaces"])
@pytest.mark.parametrize("probed", [UID, NS])
def test_the_strongest_mode_allowed_is_taken_where_every_path_is_open(monkeypatch, choice, probed):
    probing(monkeypatch, probed)
    got = S.sandbox_for(choice, ["", "/"])
    assert got == probed and got is not probed  # a copy: the probe's answer is not changed by the caller


def test_auto_falls_back_to_no_sandbox_where_none_is_allowed(monkeypatch):
    probing(monkeypatch, NONE)
    assert S.sandbox_for("auto", ["/"]) == NONE


def test_namespaces_asked_where_none_are_allowed_is_an_error(monkeypatch):
    probing(monkeypatch, NONE)
    with pytest.raises(S.ScoreError) as e:
        S.sandbox_for("namespaces", ["/"])
    assert str(e.value) == "--sandbox namespaces: namespaces are not allowed here (EPERM)"


@pytest.mark.parametrize("choice", ["auto", "namespaces"])
def test_a_path_others_cannot_read_keeps_the_uid_and_names_the_first_such_path(monkeypatch, closed, choice):
    probing(monkeypatch, UID)
    a, b = closed
    got = S.sandbox_for(choice, ["", "/", a, b])
    assert got == {"mode": "namespaces", "why": "new PID, mount, IPC and network namespaces, as root in them: "
                   f"{a} is not readable by uid 65534, so the uid is kept"}


def test_without_the_uid_drop_closed_paths_change_nothing(monkeypatch, closed):
    probing(monkeypatch, NS)
    assert S.sandbox_for("auto", list(closed)) == NS


# ------------------------------------------------------------------ check_target


def test_a_spec_without_a_function_or_file_is_refused():
    assert S.check_target("foo") == "'foo': expected FILE.py, FILE.py:FUNCTION or MODULE:FUNCTION"


def test_a_missing_file_is_refused(tmp_path):
    where = str(tmp_path / "nope.py")
    assert S.check_target(where) == f"{where}: no file {where}"
    assert S.check_target(f"{where}:fn") == f"{where}:fn: no file {where}"


SOURCE = """\
import os.path
import numpy as np
from collections import OrderedDict as OD
def solution(x):
    return x
async def asol():
    pass
class K:
    inner = 1
a, (b, c) = 1, (2, 3)
d: int = 4
e = f = 5
if True:
    hidden = 6
import json
"""


@pytest.fixture
def source(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sol.py").write_text(SOURCE)
    return "sol.py"


@pytest.mark.parametrize("name", ["solution", "asol", "K", "a", "b", "c", "d", "e", "f", "os", "np", "OD", "json"])
def test_a_top_level_name_of_the_file_is_accepted(source, name):
    assert S.check_target(f"{source}:{name}") is None


def test_a_file_alone_is_its_solution(source):
    assert S.check_target(source) is None


@pytest.mark.parametrize("name", ["x", "path", "numpy", "OrderedDict", "inner", "hidden", "collections"])
def test_a_name_the_file_does_not_define_at_top_level_is_refused(source, name):
    assert S.check_target(f"{source}:{name}") == f"{source}:{name}: {source} defines no top-level {name!r} " \
                                                 "(read, not run)"


def test_a_file_without_solution_given_alone_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.py").write_text("from os import path\ndef other():\n    pass\n")
    assert S.check_target("k.py") == "k.py: k.py defines no top-level 'solution' (read, not run)"


def test_a_star_import_may_define_any_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "star.py").write_text("def g():\n    pass\nfrom os import *\n")
    assert S.check_target("star.py:getcwd") is None


def _parse_error(data: bytes, where: str) -> str:
    try:
        compile(data, where, "exec", flags=0x400)  # ast.PyCF_ONLY_AST
    except (SyntaxError, ValueError) as e:
        return f"{type(e).__name__}: {str(e)[:160]}"
    raise AssertionError("parsed")


def test_a_file_that_does_not_parse_is_refused_with_pythons_reason(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.py").write_bytes(b"def solution(:\n")
    got = S.check_target("bad.py")
    assert got == f"bad.py: bad.py does not parse ({_parse_error(b'def solution(:', 'bad.py')})"
    assert got.startswith("bad.py: bad.py does not parse (SyntaxError: ") and "bad.py, line 1)" in got


def test_a_file_with_null_bytes_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = b"def solution():\n    pass\0\n"
    (tmp_path / "nul.py").write_bytes(data)
    err = _parse_error(data, "nul.py")
    assert S.check_target("nul.py:solution") == f"nul.py:solution: nul.py does not parse ({err})"


def test_the_parse_error_is_cut_at_160_characters(tmp_path):
    where = str(tmp_path / ("b" * 200 + ".py"))  # the reason names the file: over 160 characters
    open(where, "wb").write(b"def solution(:\n")
    err = _parse_error(b"def solution(:\n", where)
    assert len(err) == len("SyntaxError: ") + 160
    assert S.check_target(where) == f"{where}: {where} does not parse ({err})"


def test_a_file_that_cannot_be_read_is_refused(source, monkeypatch):
    from pathlib import Path

    def refuse(self):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_bytes", refuse)
    assert S.check_target(source) == "sol.py: sol.py cannot be read (Permission denied)"


@pytest.mark.parametrize("spec", ["os.path:join", "sys:exit", "linkroof.scoring.score:check_target"])
def test_a_module_found_on_the_path_or_built_in_is_accepted(spec):
    assert S.check_target(spec) is None


def test_a_module_in_the_working_directory_is_accepted(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "here_mod_h.py").write_text("")
    assert S.check_target("here_mod_h:fn") is None


def test_a_module_found_nowhere_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert S.check_target("no_such_mod_h.sub:fn") == \
        "no_such_mod_h.sub:fn: no module named 'no_such_mod_h' here (looked in the working directory and sys.path)"


@pytest.mark.parametrize("spec, where", [("3bad:f", "3bad"), ("x:y:z", "x:y"), ("a-b.c:f", "a-b.c")])
def test_a_module_part_that_is_no_name_is_refused(spec, where):
    assert S.check_target(spec) == f"{spec}: {where!r} is not a module name"


# ------------------------------------------------------------------ check_inputs


@pytest.fixture
def pkb(tmp_path, monkeypatch):
    root = tmp_path / "PKB"
    (root / "utils").mkdir(parents=True)
    (root / "utils" / "input_output_tensors.py").write_text("")
    monkeypatch.chdir(tmp_path / "PKB" / "utils")
    return root


def test_a_parallelkernelbench_checkout_is_accepted_as_inputs(pkb):
    assert S.check_inputs(f"pkb:{pkb}") is None


def test_a_folder_without_pkbs_inputs_file_is_refused_as_inputs(pkb, tmp_path):
    (pkb / "utils" / "input_output_tensors.py").unlink()
    (pkb / "utils" / "input_output_tensors.py").mkdir()  # a folder of that name is no file either
    assert S.check_inputs(f"pkb:{pkb}") == (f"--inputs pkb:{pkb}: {pkb} is not a ParallelKernelBench checkout "
                                            "(no utils/input_output_tensors.py)")
    other = tmp_path / "other"
    assert S.check_inputs(f"pkb:{other}") == (f"--inputs pkb:{other}: {other} is not a ParallelKernelBench "
                                              "checkout (no utils/input_output_tensors.py)")


def test_other_inputs_are_checked_as_a_target_and_accepted(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "inp.py").write_text("def make(seed):\n    return seed\n")
    assert S.check_inputs("inp.py:make") is None
    assert S.check_inputs("os:getcwd") is None


def test_other_inputs_are_refused_for_the_targets_reason_said_as_inputs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert S.check_inputs("no_inputs_h:make") == \
        "--inputs no_inputs_h:make: no module named 'no_inputs_h' here (looked in the working directory and sys.path)"
    assert S.check_inputs("inp.py") == "--inputs inp.py: no file inp.py"
