"""A stand-in for linkroof.scoring.child on the CPU (tests/test_score.py): what a
target does is in its name. reference / good / slow: the reference's outputs, times
100 / 50 / 400 us; wrong: outputs x 1.05; nan: a NaN; shape: a wrong shape; raises: an
error; hangs: sleeps; crash: exits 3 with nothing; halfhang: rank 1 hangs. It reports on
the result channel as the real child does (one connection per rank it stands for);
`post` outputs (the check after the timing) follow the inputs except for 'cached'."""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from linkroof.scoring.channel import Reporter

p = argparse.ArgumentParser()
for a in ("--fn", "--inputs", "--protocol", "--dtype", "--seeds"):
    p.add_argument(a)
for a in ("--trials", "--warmup", "--iters", "--m", "--n", "--problem-id", "--first-trial", "--max-output-bytes"):
    p.add_argument(a, type=int)
a = p.parse_args()
rank = int(os.environ.get("RANK", 0))
ranks = int(os.environ.get("FAKE_RANKS", 1))
fds = Reporter.fds_from_env()  # rank -> the descriptor the judge connected for it
seeds = [int(x) for x in (a.seeds or "").split(",") if x.strip().isdigit()]


def seed(t):  # the judge's seed of trial t (the trial number where it drew none)
    k = t - a.first_trial
    return seeds[k] if 0 <= k < len(seeds) else t


started = time.time()
if os.environ.get("FAKE_SLEEP"):  # a batch test's stand-in for the time a GPU is busy
    time.sleep(float(os.environ["FAKE_SLEEP"]))
reps = {r: Reporter(r, fds[r]) for r in range(ranks)}
name = a.fn.split(":")[-1] if not a.fn.endswith(":solution") else Path(a.fn.split(":")[0]).stem
acts = set(name.split("__"))  # a fuzzed candidate does several things: daemon__forge__nan


def does(*what):
    return any(w in acts for w in what)

times = {"reference": 100.0, "good": 50.0, "slow": 400.0, "wrong": 90.0, "nan": 80.0, "shape": 70.0,
         "cached": 40.0, "sidestream": 45.0, "patched": 30.0}
# hostile candidates (tests/test_score_hostile.py), each doing what its name says
if does("raises"):
    reps[0].send("error", {"kind": "exception", "message": "ValueError: no"})
    sys.exit(1)
if does("escapes"):  # an error message meant to rewrite the terminal
    reps[0].send("error", {"kind": "exception", "message": "ValueError: \x1b]0;owned\x07\x1b[2J\x1b[31mred"})
    sys.exit(1)
if does("forgefile"):  # PKB's old door: a perf file written where the harness once wrote it, then exit 0
    for d in (Path.cwd(), Path(os.environ["XDG_DATA_HOME"]), Path(os.environ["XDG_DATA_HOME"]).parent):
        (d / "rank_0_perf.json").write_text(json.dumps({"wall_time_ms": 1e-9, "median_ms": 1e-9}))
    sys.exit(0)
if does("exit0"):  # sys.exit(0) at import: the harness reports it
    reps[0].send("error", {"kind": "exit", "message": "the candidate called sys.exit(0) during import"})
    sys.exit(0)
if does("huge"):  # past the harness: an output frame over the limit
    reps[0].send_array("0", 0, np.zeros((a.max_output_bytes // 4) + 16, dtype=np.float32))
    time.sleep(1)
    sys.exit(0)
if does("store"):  # reach for linkroof's store: the path it was given, and the default one
    for f in (os.environ.get("LINKROOF_STORE"), os.path.join(os.environ.get("XDG_DATA_HOME", "/nonexistent"),
                                                           "linkroof", "store.sqlite")):
        if f and os.path.exists(f):
            os.remove(f)
if does("daemon", "daemon_clean"):  # double fork, setsid, outlive the scorer (clean: an empty environment)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            if does("daemon_clean"):
                os.execve(sys.executable, [sys.executable, "-c", "import time; time.sleep(120)"], {})
            time.sleep(120)
            os._exit(0)
        os._exit(0)
# ---- attacks on the judge (tests/test_hostile_suite.py): each does damage only where it got through
CANARY = os.environ.get("FAKE_CANARY", "")  # a file of the judge's: gone or changed means an attack got through


def append_forged_rows():
    """A forged row appended to every results file in the working folder it can write."""
    for f in Path.cwd().glob("*.jsonl"):
        try:
            with open(f, "a") as out:
                out.write(json.dumps({"job": "x", "correct": True, "speedup": 1e9}) + "\n")
        except OSError:
            pass


def hit():
    """An attack got through: spoil the judge's canary (the test sees it)."""
    try:
        with open(CANARY, "a") as f:
            f.write("hit\n")
    except OSError:
        pass


if does("canary"):  # delete a file of the judge's by its path
    try:
        os.remove(CANARY)
    except OSError:
        pass
if does("procscan"):  # the judge's environment (the store's path) or anyone's, through /proc
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                if b"LINKROOF_STORE=" in Path(f"/proc/{pid}/environ").read_bytes():
                    hit()
            except OSError:
                pass
if does("ptrace"):  # attach to every other process it can see (the judge first)
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for pid in [os.getppid()] + [int(p) for p in os.listdir("/proc") if p.isdigit()]:
        if pid not in (os.getpid(), 0) and libc.ptrace(16, pid, 0, 0) == 0:  # PTRACE_ATTACH (the jail's init too)
            if b"LINKROOF_STORE=" in Path(f"/proc/{pid}/environ").read_bytes():
                hit()
            libc.ptrace(17, pid, 0, 0)  # PTRACE_DETACH
privileged = False  # caps, remount: an attack that held a privilege makes its row wrong (the test sees it)
if does("caps"):  # any capability in force or to be regained at exec (root in the namespaces keeps none)
    status = Path("/proc/self/status").read_text()
    if any(int(line.split()[1], 16) for line in status.splitlines() if line.startswith(("CapEff", "CapPrm", "CapBnd", "CapAmb"))):
        privileged = True
if does("remount"):  # every mount made writable again (CAP_SYS_ADMIN), then the judge's canary and results
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4]
        if libc.mount(b"none", point.encode(), None, 32 | 4096, None) == 0:  # MS_REMOUNT | MS_BIND, not MS_RDONLY
            privileged = True
    hit()
    append_forged_rows()
if does("signal"):  # stop every process it can signal but its own (the judge, other candidates)
    import signal as _signal

    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    if len(pids) < 12:  # only ever inside a PID namespace of its own: never run this on a shared machine
        for pid in pids:
            if pid not in (os.getpid(), 1):
                try:
                    os.kill(pid, _signal.SIGSTOP)
                except OSError:
                    pass
if does("persist"):  # code for later runs: a .pth and usercustomize in site-packages, a shell profile
    import site

    for d in site.getsitepackages() + [site.getusersitepackages(), os.path.expanduser("~")]:
        for name in ("zz_linkroof_evil.pth", "usercustomize.py", ".bashrc"):
            try:
                with open(os.path.join(d, name), "a") as f:
                    f.write("import os  # persisted\n")
                hit()
            except OSError:
                pass
if does("appendresults"):  # forged rows appended to a results file in the working folder
    append_forged_rows()
if does("exfiltrate"):  # a TCP connection to the judge's machine (the test listens on its loopback)
    import socket as _socket

    try:
        with _socket.create_connection(("127.0.0.1", int(os.environ.get("FAKE_PORT", "9"))), timeout=1) as c:
            c.sendall(b"stolen")
    except OSError:
        pass
if does("tmpfill"):  # 64 MB into the temporary folder, left behind
    try:
        with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "linkroof-fill.bin"), "wb") as f:
            f.write(b"\0" * (64 << 20))
    except OSError:
        pass
if does("undumpable"):  # a daemon that hides its environment (PR_SET_DUMPABLE 0) and outlives the scorer
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            import ctypes

            ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
            os.environ.clear()
            time.sleep(120)
            os._exit(0)
        os._exit(0)
if does("memhog"):  # 600 MiB of host memory held by a child in a session of its own, its environment (and
    # so the judge's mark) cleared by an exec: found only as the target's descendant; then a slow report
    rd, wr = os.pipe()
    os.set_inheritable(wr, True)
    if os.fork() == 0:
        os.setsid()
        code = f"import os, time\nhog = b'\\x01' * (600 << 20)\nos.write({wr}, b'x')\ntime.sleep(120)\n"
        os.execve(sys.executable, [sys.executable, "-c", code], {})
    os.read(rd, 1)
    time.sleep(float(os.environ.get("FAKE_HOG_HOLD", "0.1")))
if does("forkmany"):  # 40 sleeping children, each in a session of its own
    for _ in range(40):
        if os.fork() == 0:
            os.setsid()
            time.sleep(120)
            os._exit(0)
found_ref = None
if does("readref"):  # the reference's outputs: any .npy or memory file it can reach
    import glob

    paths = []
    for root in ("/tmp", "/var/tmp", "/dev/shm", str(Path.cwd())):
        paths += glob.glob(os.path.join(root, "**", "*.npy"), recursive=True)[:200]
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                for fd in os.listdir(f"/proc/{pid}/fd"):
                    if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("/memfd:"):
                        paths.append(f"/proc/{pid}/fd/{fd}")
            except OSError:
                pass
    for path in paths:
        try:
            found_ref = np.load(path)
            hit()
            break
        except Exception:  # noqa: BLE001
            continue
if does("hangs"):  # for good: a sleep of 60 s ended inside a deadline stretched by four suites at once
    time.sleep(3600)
if does("crash"):
    sys.exit(3)
for r in range(ranks):
    if does("halfhang") and r == 1:
        continue
    for t in range(a.first_trial, a.first_trial + a.trials):
        y = np.arange(12, dtype=np.float32).reshape(3, 4) + seed(t) % 997 + r
        if does("wrong", "wrongcached") or (does("wronglate") and t >= 1):  # wronglate: from the second trial
            y = y * 1.05
        if privileged:
            y = y * 1.05
        if does("nan"):
            y[0, 0] = np.nan
        if does("shape"):
            y = y.reshape(4, 3)
        if does("trialcache"):  # outputs made for the trial's number, not the judge's seed (cached from a run)
            y = np.arange(12, dtype=np.float32).reshape(3, 4) + t % 997 + r
        if does("readref"):  # what it found, or nothing to go on
            y = found_ref if found_ref is not None else np.zeros((3, 4), np.float32)
        reps[r].send_array(str(t), 0, y)
    reps[r].send("trials", {"done": a.trials})
    post = np.arange(12, dtype=np.float32).reshape(3, 4) + (0 if does("cached", "wrongcached") else
                                                             seed(a.first_trial + a.trials) % 997) + r
    tail = {"calls": 10, "event_s": 1e-3, "device_busy_after_s": 5e-3 if does("sidestream") else 1e-5}
    if not does("hidecheck"):  # hidecheck: a rewritten harness that drops the check after new values
        reps[r].send_array("post", 0, post)
        reps[r].send("checks", {"replaced": ["torch.cuda.Event.elapsed_time"] if does("patched") else [],
                                "aliases": [], "tail": tail, "post": True})
    ms = min((times.get(x, 60.0) for x in acts), default=60.0) / 1e3 * (1.2 if r == 1 else 1.0)  # rank 1 the slower
    if does("drift"):  # each trial (one job each under PKB's protocol) slower than the last: 1x, 2x, 4x
        ms *= 2 ** a.first_trial
    clock = None if does("noclock") else {"state": "drifting" if does("drift") else "burst", "samples": 12,
                                           "sm_mhz_median": 1755.0 if does("drift") else 1980.0}
    perf = {"clock": clock, "wall_time_ms": ms, "median_ms": ms, "iterations": a.iters, "warmup_iterations": a.warmup,
            "wall_time_std_ms": 0.0, "min_time_ms": ms, "max_time_ms": ms, "num_input_groups": 4.0,
            "timeline": {"parts": {"idle (host / launch)": ms * 0.6e-3, "compute kernels": ms * 0.4e-3},
                         "launch_verdict": "launch-bound (measured): the GPU was idle 60% of each call",
                         "kernels": [{"name": "_ZN2at6native18elementwise_kernelIiEEvv", "class": "memory",
                                      "launches_per_call": 2, "time_per_call_s": ms * 0.3e-3},
                                     {"name": "sm90_xmma_gemm_bf16", "class": "compute",
                                      "launches_per_call": 1, "time_per_call_s": ms * 0.1e-3}]}
            if does("slow") else None, "link_bytes_per_call": 2.0e6 if does("good") else None,
            "link_bytes_note": None if does("good") else "NVML lists no active NVLink on GPU 0"}
    # the timed loop between the judge's marks: as long as the time reported (forgetime: 20 ms for a
    # reported 1 ns a call; nomarks: no marks at all)
    loop_s = 0.1 if does("forgetime") else ms * (a.iters if a.protocol == "pkb" else 1) / 1e3
    if does("slowmarks"):  # the loop run before the start mark: the judge sees a loop of no time
        time.sleep(loop_s)
        reps[r].mark("timing_start")
        reps[r].mark("timing_end")
    elif does("forgetime"):
        reps[r].mark("timing_start")
        time.sleep(loop_s)
        reps[r].mark("timing_end")
    elif not does("nomarks"):
        # an honest loop: the host may keep it asleep far past its time (a 30 ms sleep seen as 106 ms in CI
        # beside 5 other tests); the judge then runs it again (score.run_timed), as it would a real harness
        reps[r].mark("timing_start")
        time.sleep(loop_s)
        reps[r].mark("timing_end")
    if does("forgetime"):
        perf.update(wall_time_ms=1e-6, median_ms=1e-6, min_time_ms=1e-6)
    reps[r].send("perf", perf)
if does("halfhang"):
    time.sleep(3600)
if does("forge"):  # a second report for rank 0 on its own socket, found in /proc/self/fd: a frame unsigned
    import socket as _socket
    import struct as _struct

    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                sk = _socket.socket(fileno=os.dup(int(fd)))
                body = json.dumps({"type": "perf", "bytes": 2, "mac": "0" * 64}).encode()
                sk.sendall(_struct.pack(">I", len(body)) + body + b"{}")
        except OSError:
            pass
if os.environ.get("FAKE_LOG"):  # which GPUs this target was given, and when it held them
    with open(os.environ["FAKE_LOG"], "a") as f:
        f.write(f"{os.environ.get('CUDA_VISIBLE_DEVICES')} {started} {time.time()}\n")
