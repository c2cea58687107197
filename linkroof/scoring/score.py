"""`linkroof score`: a reference and candidates for a kernel-generation loop, each run in
its own process (under torchrun for several ranks), checked over trials, timed, and
explained from what was measured.

Two protocols. `pkb` is ParallelKernelBench's (togethercomputer/ParallelKernelBench,
utils/performance.py, scripts/worker.py, run_local.py): 5 trials of different inputs,
`allclose(a.float(), b.float(), atol=1e-2, rtol=1e-2)` on every rank, stopping at the
first mismatch; 500 warm-up and 100 timed calls with an event after each, the mean; the
first tensor argument cycled through clones when it is under 3 x L2; 0.5 s between
reference and candidate; speedup = the reference's slowest rank / the candidate's.
`linkroof` times as `compare` does (ungated median of batches, the CUPTI timeline of the
calls, the measured decomposition). Each result says which protocol it came from, and
the PKB fields keep PKB's names.

A candidate that cannot be imported, raises, runs out of memory, returns a wrong shape
or NaN, or hangs past its deadline gets a row saying so; a hung rank is named and its
process group killed; each candidate runs in a fresh process, so nothing of one leaks
into the next one's timing.
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import LinkroofError
from .channel import DEFAULT_MAX_OUTPUT_BYTES

PKB_WARMUP, PKB_ITERS, PKB_TRIALS, PKB_ATOL, PKB_RTOL = 500, 100, 5, 1e-2, 1e-2
PKB_COOLDOWN_S = 0.5
PKB_MAX_GROUPS = 128
PKB_DEFAULT_L2 = 50 * 1024 * 1024
DEADLINE_S = 300.0
ERROR_GRACE_S = 10.0  # after one rank wrote its error, the others get this long to end by themselves


# ------------------------------------------------------------------ PKB's arithmetic


def num_input_groups(input_bytes: int, l2_bytes: int) -> int:
    """PKB's input groups: 1 when the timed tensor is at least 3 x L2 (or empty); else
    floor(3 x L2 / bytes) + 1, at least 2, at most 128."""
    if input_bytes <= 0:
        return 1
    threshold = 3 * l2_bytes
    if input_bytes >= threshold:
        return 1
    return int(min(max(2, threshold // input_bytes + 1), PKB_MAX_GROUPS))


def first_tensor_path(x: Sequence[Any], is_tensor: Any) -> tuple[int, int | None] | None:
    """Where PKB finds the tensor it times: the first tensor argument, else the first
    tensor one level inside a list/tuple argument; None if there is none."""
    for i, a in enumerate(x):
        if is_tensor(a):
            return i, None
    for i, a in enumerate(x):
        if isinstance(a, (list, tuple)):
            for j, b in enumerate(a):
                if is_tensor(b):
                    return i, j
    return None


def substitute(x: Sequence[Any], path: tuple[int, int | None], t: Any) -> list[Any]:
    """The arguments with the timed tensor replaced by `t` (a list/tuple keeps its type)."""
    args = list(x)
    i, j = path
    if j is None:
        args[i] = t
    else:
        inner = list(args[i])
        inner[j] = t
        args[i] = type(x[i])(inner)
    return args


def pkb_metrics(per_iter_ms: Sequence[float], total_ms: float, warmup: int, groups: int, l2_bytes: int,
                tensor_bytes: int) -> dict[str, float]:
    """PKB's perf fields from its samples: the mean is the total over the timed calls,
    the std (n - 1), min and max over the per-call samples."""
    n = len(per_iter_ms)
    mean = total_ms / n if n else float("nan")
    std = math.sqrt(sum((t - mean) ** 2 for t in per_iter_ms) / (n - 1)) if n > 1 else 0.0
    return {"wall_time_ms": mean, "wall_time_total_ms": total_ms, "wall_time_std_ms": std,
            "min_time_ms": min(per_iter_ms) if n else mean, "max_time_ms": max(per_iter_ms) if n else mean,
            "iterations": n, "warmup_iterations": warmup, "num_input_groups": float(groups),
            "l2_cache_size_bytes": float(l2_bytes), "timed_tensor_bytes": float(tensor_bytes)}


def slowest(per_rank: dict[int, float]) -> float | None:
    """The slowest rank's time (PKB's aggregate: max over ranks)."""
    return max(per_rank.values()) if per_rank else None


def compare_outputs(ref: Any, got: Any, atol: float, rtol: float) -> dict[str, Any]:
    """PKB's check of one rank's output (a tensor, a tuple/list or a dict of them, as
    NumPy arrays here): shapes equal, then allclose in float; the worst absolute and
    relative error, and why it failed (shape, NaN, values)."""
    import numpy as np

    def leaves(x: Any, key: str = "") -> list[tuple[str, Any]]:
        if isinstance(x, dict):
            return [kv for k in sorted(x) for kv in leaves(x[k], f"{key}.{k}")]
        if isinstance(x, (list, tuple)):
            return [kv for i, v in enumerate(x) for kv in leaves(v, f"{key}[{i}]")]
        return [(key or "output", x)]

    a, b = leaves(ref), leaves(got)
    if [k for k, _ in a] != [k for k, _ in b]:
        return {"match": False, "reason": f"the outputs' structure differs ({len(a)} against {len(b)} tensors)",
                "max_abs_err": None, "max_rel_err": None}
    worst_abs, worst_rel = 0.0, 0.0
    for (k, x), (_, y) in zip(a, b):
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape:
            return {"match": False, "reason": f"{k}: shape {tuple(y.shape)}, the reference's {tuple(x.shape)}",
                    "max_abs_err": None, "max_rel_err": None}
        if x.dtype.kind not in "biufc" or y.dtype.kind not in "biufc":
            if not np.array_equal(x, y):
                return {"match": False, "reason": f"{k}: not equal", "max_abs_err": None, "max_rel_err": None}
            continue
        c = _close(x.reshape(-1), y.reshape(-1), atol, rtol)
        worst_abs, worst_rel = max(worst_abs, c["abs"]), max(worst_rel, c["rel"])
        if c["nan_out"] and not c["nan_ref"]:
            return {"match": False, "reason": f"{k}: NaN in the output ({c['nan_out']} elements)",
                    "max_abs_err": None, "max_rel_err": None}
        if c["far"]:
            if c["nan_ref"] and not c["far_finite"]:  # every element not close has a NaN on one side at least
                why = "NaN in the reference and the output" if c["nan_out"] else \
                    "NaN in the reference, numbers in the output"  # not "and the output" (until 2026-12-05)
            else:
                why = f"values differ beyond atol {atol}, rtol {rtol}"
            return {"match": False, "reason": f"{k}: {why} ({c['far']} of {x.size} elements)",
                    "max_abs_err": worst_abs, "max_rel_err": worst_rel}
    return {"match": True, "reason": "", "max_abs_err": worst_abs, "max_rel_err": worst_rel}


CLOSE_CHUNK = 1 << 22  # elements compared at a time: memory stays a few chunks, whatever the output


def _close(x: Any, y: Any, atol: float, rtol: float) -> dict[str, Any]:
    """PKB's torch.allclose(ref.float(), out.float(), atol, rtol) on flat arrays, chunk by
    chunk in float32: |ref - out| <= atol + rtol * |out| (the tolerance scales with the
    second argument, the output, as torch's does), equal values (infinities too) close,
    NaN never close (torch's equal_nan=False). Counts the elements not close, those not
    close that are finite, the NaNs on each side, and the worst absolute and relative
    (to the reference) error over the finite elements."""
    import numpy as np

    far = far_finite = nan_ref = nan_out = 0
    worst_abs = worst_rel = 0.0
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        for s in range(0, x.size, CLOSE_CHUNK):
            a, b = x[s:s + CLOSE_CHUNK].astype(np.float32), y[s:s + CLOSE_CHUNK].astype(np.float32)
            d = np.abs(a - b)
            ok = (a == b) | (d <= atol + rtol * np.abs(b))
            na, nb = np.isnan(a), np.isnan(b)
            nan_ref, nan_out = nan_ref + int(na.sum()), nan_out + int(nb.sum())
            bad = ~ok
            far += int(bad.sum())
            far_finite += int((bad & ~na & ~nb).sum())
            fin = np.isfinite(d)
            if fin.any():
                worst_abs = max(worst_abs, float(d[fin].max()))
                worst_rel = max(worst_rel, float((d[fin] / np.maximum(np.abs(a[fin]), 1e-30)).max()))
    return {"far": far, "far_finite": far_finite, "nan_ref": nan_ref, "nan_out": nan_out,
            "abs": worst_abs, "rel": worst_rel}


# ------------------------------------------------------------------ candidates


@dataclass(frozen=True)
class Target:
    """What is scored: a Python file with `solution(*x)` (PKB's layout) or module:function."""

    spec: str
    name: str

    @staticmethod
    def of(spec: str) -> "Target":
        if spec.endswith(".py"):  # a file (a function is never named *.py), whose folders may hold a ':'
            return Target(f"{spec}:solution", Path(spec).stem)
        return Target(spec, spec.rsplit(":", 1)[-1] if ":" in spec else spec)


def pkb_problem_id(path: str) -> int:
    """PKB's problem id: the leading number of the file's stem (1 when there is none); the
    file is the spec's part before its last ':', as Target.of and check_target read it."""
    m = re.match(r"^(\d+)", Path(Target.of(path).spec.rsplit(":", 1)[0]).stem)
    return int(m.group(1)) if m else 1


@dataclass
class RunResult:
    """One target's child run: per rank, per trial outputs (files the parent wrote from the
    result channel), perf, the checks' findings, failures."""

    target: Target
    out_dir: str
    returncode: int | None
    ranks: int
    wall_s: float
    failure: dict | None = None  # {"kind", "message", "ranks"}
    perf: dict[int, dict] = field(default_factory=dict)
    trials_done: dict[int, int] = field(default_factory=dict)
    outputs: dict[int, dict[str, list[str]]] = field(default_factory=dict)  # rank -> trial -> .npy leaves
    checks: dict[int, dict] = field(default_factory=dict)
    leftover: int = 0  # processes of the target still alive at its end, then killed
    contained: str = ""  # how its processes were found ("" when fully: the subreaper and the mark)
    sandbox: dict = field(default_factory=dict)  # the mode it ran in (jail.py) and why
    listener: Any = None  # the channel's judge end: its memory files are freed once the row is made
    time_only: bool = False  # tampered for a time reported under the wall time seen, and for nothing else
    reruns: list[str] = field(default_factory=list)  # why it was run again (run_timed): each earlier run's finding


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def child_command(ranks: int, port: int, args: list[str]) -> list[tuple[list[str], dict[str, str]]]:
    """The child's processes, one per rank, each with the process-group variables
    torchrun would set (the judge starts them itself, so that each inherits only its own
    channel descriptor), and NVLink multicast off whatever the caller's environment says."""
    # no NVLink multicast, ever: set over the caller's own values (until 2026-12-05 they were only defaults,
    # so a caller's own values reached every candidate)
    env = dict(os.environ, TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NCCL_NVLS_ENABLE="0", NVSHMEM_DISABLE_NVLS="1")
    out = []
    for r in range(max(1, ranks)):
        e = dict(env, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(r), LOCAL_RANK=str(r),
                 WORLD_SIZE=str(max(1, ranks)), LOCAL_WORLD_SIZE=str(max(1, ranks)), GROUP_RANK="0", ROLE_RANK=str(r))
        out.append(([sys.executable, "-m", "linkroof.scoring.child", *args], e))
    return out


def clean_env(env: dict[str, str], scratch: str) -> dict[str, str]:
    """What a child may see: no linkroof setting (the store's path above all), its data
    and temporary directories a scratch folder (the default store lives under the data
    directory)."""
    out = {k: v for k, v in env.items() if not k.startswith("LINKROOF_")}
    out["XDG_DATA_HOME"] = scratch
    out["TMPDIR"] = scratch
    return out


SANDBOXES = ("auto", "namespaces", "none")
TIME_SLACK_S, TIME_OVER = 5e-3, 0.10  # a reported timed loop may exceed the judge's wall time by no more than these
TIME_UNDER, TIME_UNDER_SLACK_S = 0.5, 10e-3  # nor, under PKB's, be under this share of it less this (the
# judge's stamps may come late when its threads are busy, and a loaded host sleeps long: 2 ms called an honest
# stand-in's 5 ms loop seen as 14.4 ms tampered on a loaded 2-core machine; docs/scoring.md says 10 ms)
TIME_RERUNS = 2  # a target found only reporting under the wall time seen is run again this many times at most: a
# host that kept an honest harness off the CPU between its mark and its loop (76 ms, in CI beside 5 other tests)
# does not do it every run, a harness that forges its time does (run_timed)


def _opened_by_others(path: str) -> bool:
    """Whether a user of no group of the owner's can reach `path` (every folder on the way
    searchable by others, the file readable by them)."""
    p = os.path.realpath(path)
    try:
        parts = p.split(os.sep)
        for i in range(1, len(parts) + 1):  # from the root itself: "/" was never checked until 2026-12-05
            st = os.stat(os.sep.join(parts[:i]) or os.sep)
            last = i == len(parts)
            need = 0o004 if last and not os.path.isdir(p) else 0o005 if last else 0o001
            if st.st_mode & need != need:
                return False
    except OSError:
        return False
    return True


def sandbox_for(choice: str, paths: Sequence[str]) -> dict[str, Any]:
    """How a target runs: `auto` the strongest mode this machine allows (jail.probe), as
    uid 65534 only where every path it needs is readable by others (else namespaces
    without the drop, said); `namespaces` the same but an error if none are allowed;
    `none` a plain session of processes."""
    from . import jail

    if choice == "none":
        return {"mode": "none", "why": "--sandbox none"}
    got = dict(jail.probe())
    if got["mode"] == "none" and choice == "namespaces":
        raise ScoreError(f"--sandbox namespaces: {got['why']}")
    if got["mode"] == "namespaces+uid":
        closed = [p for p in paths if p and not _opened_by_others(p)]
        if closed:
            got = {"mode": "namespaces", "why": f"new PID, mount, IPC and network namespaces, as root in them: "
                   f"{closed[0]} is not readable by uid {jail.NOBODY}, so the uid is kept"}
    return got


def _needed_paths(target: Target, inputs: str, env: dict[str, str]) -> list[str]:
    """What a target's processes must read: the interpreter, linkroof, the working
    folder, the PYTHONPATH folders and the files its spec and the inputs name."""
    from .jail import python_paths

    out = [sys.executable, *python_paths(), os.getcwd()]
    out += [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    for spec in (target.spec, inputs[4:] if inputs.startswith("pkb:") else inputs):
        head = spec.rsplit(":", 1)[0]  # FILE.py:FUNCTION: the file's folders may hold a ':' (2026-12-05)
        if head.endswith(".py") or os.sep in head:
            out.append(head)
    return out


def exposed(paths: Sequence[str]) -> list[str]:
    """The folders a target's namespace keeps visible (read-only) where a fresh /tmp covers
    them: each existing folder, and each existing file's folder; never a missing path's
    parent (a PYTHONPATH entry /tmp/x that does not exist would expose all of /tmp)."""
    return sorted({p if os.path.isdir(p) else os.path.dirname(os.path.abspath(p))
                   for p in paths if p and os.path.exists(p)})


def make_seeds(n: int) -> list[int]:
    """Each trial's input seed, drawn by the judge: values a candidate cannot know before
    it runs (an output cached from an earlier run, or computed for a known seed, is wrong)."""
    return [secrets.randbelow(1 << 30) + 1000 for _ in range(n)]


def run_target(target: Target, inputs: str, ranks: int, protocol: str, out_dir: str, trials: int,
               deadline_s: float = DEADLINE_S, warmup: int = PKB_WARMUP, iters: int = PKB_ITERS,
               shape: tuple[int, int] = (1024, 1024), dtype: str = "bfloat16", command: Any = None,
               problem_id: int = 1, first_trial: int = 0, max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
               gpus: Sequence[Any] | None = None, seeds: Sequence[int] | None = None, reference: bool = False,
               sandbox: str = "auto", max_memory_bytes: int | None = None) -> RunResult:
    """Run one target with a deadline, in namespaces of its own where the machine allows
    (jail.py; `sandbox`), its results on sockets the judge connected before it started
    (channel.py); at its end every process of it is killed, daemons included (procs.py,
    and the PID namespace). `gpus`: the GPUs it may see (a batch gives each target its
    own), as CUDA_VISIBLE_DEVICES. `seeds`: the judge's per-trial input seeds (and one
    more, for the check after new values). `reference`: its outputs are the answers,
    kept in the judge's memory, never on disk. `max_memory_bytes`: the most host memory
    its processes may hold together (default: half this machine's), watched from the
    judge: an rlimit on address space cannot serve, as CUDA maps far more than it uses."""
    from .channel import Listener
    from .procs import MARK, become_subreaper, descendants, kill_mark, new_mark, rss_bytes, tree_of

    if not math.isfinite(deadline_s) or deadline_s <= 0:
        raise ValueError(f"a deadline must be a finite number of seconds, not {deadline_s!r}")
    os.makedirs(out_dir, mode=0o700, exist_ok=True)
    hide_self()
    subreaper = become_subreaper()
    args = ["--fn", target.spec, "--inputs", inputs, "--trials", str(trials), "--protocol",
            protocol, "--warmup", str(warmup), "--iters", str(iters), "--m", str(shape[0]), "--n", str(shape[1]),
            "--dtype", dtype, "--problem-id", str(problem_id), "--first-trial", str(first_trial),
            "--max-output-bytes", str(max_output_bytes)]
    if seeds:
        args += ["--seeds", ",".join(str(int(x)) for x in seeds)]
    port = free_port()
    made = (command or child_command)(ranks, port, args)
    # the sandbox is settled before the channel opens: its refusal (--sandbox namespaces where none are
    # allowed) left the channel's sockets, reader threads and a running mark behind until 2026-12-05
    box = sandbox_for(sandbox, _needed_paths(target, inputs, made[1] if isinstance(made, tuple) else made[0][1]))
    listener = Listener("", os.path.join(out_dir, secrets.token_hex(8)), ranks, max_output_bytes,
                        in_memory=reference)
    fds = listener.connect()
    mark = new_mark()
    if isinstance(made, tuple):  # a stand-in's (command, env): one process for every rank, holding every descriptor
        plans = [(made[0], made[1], fds)]
    else:
        plans = [(cmd, env, {r: fds[r]}) for r, (cmd, env) in enumerate(made)]
    scratch = "/tmp" if box["mode"] != "none" else os.path.join(out_dir, "scratch")
    os.makedirs(os.path.join(out_dir, "scratch"), mode=0o700, exist_ok=True)
    procs = []
    for cmd, env, mine in plans:
        e = clean_env(env, scratch) | listener.env(mine) | {MARK: mark}
        if box["mode"] != "none":  # a read-only file system but the fresh /tmp: home and caches there
            e.update(HOME="/tmp/home", XDG_CACHE_HOME="/tmp/home/.cache")
        if gpus is not None:
            e["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in gpus)
        procs.append({"argv": [str(x) for x in cmd], "env": e, "fds": listener.inherited(mine), "cwd": os.getcwd()})
    from . import jail

    expose = exposed(_needed_paths(target, inputs, plans[0][1]))
    plan = {"procs": procs, "unshare": box["mode"] != "none", "expose": expose, "userns": box["mode"] == "namespaces" and
            os.geteuid() != 0, "uid": jail.NOBODY if box["mode"] == "namespaces+uid" else None,
            "gid": jail.NOBODY if box["mode"] == "namespaces+uid" else None,
            "rlimits": {"nproc": 4096} if box["mode"] == "namespaces+uid" else {}}
    before = descendants(os.getpid())
    t0 = time.perf_counter()
    log = open(os.path.join(out_dir, "child.log"), "wb")
    proc = None
    rc: int | None = None
    over, limit = 0, 0
    try:
        proc = subprocess.Popen([sys.executable, "-m", "linkroof.scoring.jail"], stdin=subprocess.PIPE, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True, cwd=os.getcwd(),
                                pass_fds=listener.inherited(fds), env=_jail_env() | {MARK: mark})
        listener.release()  # the child holds its ends now
        try:
            proc.stdin.write(json.dumps(plan).encode())  # type: ignore[union-attr]
            proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass
        failed_at = None
        limit = max_memory_bytes if max_memory_bytes is not None else default_max_memory()
        while True:  # a rank that failed leaves the others waiting in a collective: end them soon after
            try:
                rc = proc.wait(timeout=0.25)
                break
            except subprocess.TimeoutExpired:
                pass
            held = rss_bytes(tree_of(proc.pid, mark)) if limit else 0
            if limit and held > limit:
                over = held
                _kill(proc)
                rc = None
                break
            now = time.perf_counter()
            if failed_at is None and (listener.failed_ranks() or listener.violations):
                failed_at = now
            if now - t0 > deadline_s or (failed_at is not None and now - failed_at > ERROR_GRACE_S):
                _kill(proc)
                rc = None
                break
    finally:
        log.close()
        listener.release()
        if proc is not None and proc.poll() is None:
            _kill(proc)
        leftover = kill_mark(mark, before)
        listener.close()
    res = RunResult(target, out_dir, rc, ranks, time.perf_counter() - t0, leftover=leftover,
                    contained="" if subreaper else "processes found by their mark only (no subreaper here)")
    res.sandbox = {"mode": box["mode"], "why": box["why"]}
    res.listener = listener
    if over:
        res.perf, res.outputs, res.checks, res.trials_done = {}, {}, {}, {}
        res.failure = {"kind": "memory", "ranks": list(range(ranks)),
                       "message": f"its processes held {over / 2**30:.1f} GiB of host memory, over the "
                                  f"{limit / 2**30:.1f} GiB limit: killed"}
        return res
    if rc == 125 and box["mode"] != "none" and not listener.reports:
        res.failure = {"kind": "sandbox", "ranks": list(range(ranks)),
                       "message": f"the sandbox could not start ({_tail(os.path.join(out_dir, 'child.log'))})"}
        return res
    for r, rep in listener.reports.items():
        if rep.perf is not None:
            res.perf[r] = rep.perf
        res.trials_done[r] = rep.trials_done
        res.outputs[r] = {k: [str(x) for x in v] for k, v in rep.outputs.items()}
        if rep.checks is not None:
            res.checks[r] = rep.checks
    timing = time_disagreements(listener, protocol, iters)
    violations = list(listener.violations) + timing
    errors = {r: rep.error for r, rep in listener.reports.items() if rep.error is not None}
    res.time_only = short_only(listener.violations, timing)
    if violations:  # nothing it sent is believed: no output, no time, no check
        res.perf, res.outputs, res.checks, res.trials_done = {}, {}, {}, {}
        res.failure = {"kind": "tampered", "ranks": sorted(listener.reports),
                       "message": "its results were not accepted: " + "; ".join(violations)}
    elif errors:
        first = errors[min(errors)]
        res.failure = {"kind": str(first.get("kind", "exception"))[:40],
                       "message": str(first.get("message", ""))[:2000], "ranks": sorted(errors)}
    elif rc is None:
        stuck = [r for r in range(ranks) if r not in res.perf]
        res.failure = {"kind": "hang", "ranks": stuck,
                       "message": f"rank(s) {stuck} did not finish within the {deadline_s:g} s deadline; the "
                                  "process group was killed"}
    elif rc != 0 or len(res.perf) < ranks:
        tail = _tail(os.path.join(out_dir, "child.log"))
        res.failure = {"kind": "crash", "ranks": [r for r in range(ranks) if r not in res.perf],
                       "message": f"exited {rc} without a result: {tail}"}
    return res


def default_max_memory() -> int:
    """Half this machine's memory (MemTotal), else 64 GiB: the most a target's processes
    may hold together unless `max_memory_bytes` says otherwise."""
    from .procs import total_memory_bytes

    total = total_memory_bytes()
    return total // 2 if total else 64 << 30


class Disagreement(str):
    """A time disagreement: its sentence, and its kind, which code reads (not the words):
    "short" (a time under the wall the judge saw), "long" (over it) or "marks" (a time
    without the harness's marks around its loop)."""

    kind: str

    def __new__(cls, text: str, kind: str) -> "Disagreement":
        self = super().__new__(cls, text)
        self.kind = kind
        return self


def time_disagreements(listener: Any, protocol: str, iters: int = PKB_ITERS) -> list[Disagreement]:
    """Where a rank's reported time disagrees with what the judge saw from outside: the
    judge's own clock at the arrival of the timed loop's start and end marks. A timed
    loop reported longer than that wall time (beyond TIME_OVER and TIME_SLACK_S) is
    impossible; under PKB's protocol (whose marks hold the loop and little else) one
    reported under TIME_UNDER of it was not what ran. A rank with a time and no marks
    hid them."""
    out = []
    for r, rep in sorted(listener.reports.items()):
        perf = rep.perf or {}
        per = perf.get("wall_time_ms") if protocol == "pkb" else perf.get("median_ms")
        if not isinstance(per, (int, float)) or isinstance(per, bool) or not math.isfinite(per):
            continue  # no time: nothing to believe or check (the row has no time)
        total = per * iters if protocol == "pkb" else per  # PKB: the mean over the judge's own count of calls
        a, b = rep.marks.get("timing_start"), rep.marks.get("timing_end")
        if a is None or b is None or b < a:
            out.append(Disagreement(f"rank {r} reported a time without the harness's marks around its timed loop",
                                    "marks"))
            continue
        wall, rep_s = b - a, float(total) / 1e3
        if rep_s > wall * (1 + TIME_OVER) + TIME_SLACK_S:
            out.append(Disagreement(f"rank {r} reported {rep_s * 1e3:.3f} ms for a timed loop the judge saw take "
                                    f"{wall * 1e3:.3f} ms", "long"))
        elif protocol == "pkb" and rep_s < wall * TIME_UNDER - TIME_UNDER_SLACK_S:
            out.append(Disagreement(f"rank {r} reported {rep_s * 1e3:.3f} ms for a timed loop the judge saw take "
                                    f"{wall * 1e3:.3f} ms (under {TIME_UNDER:.0%} of it)", "short"))
    return out


def short_only(violations: Sequence[str], timing: Sequence[str]) -> bool:
    """True when the channel found nothing (`violations`) and every time disagreement is
    a time reported short of the wall seen (kind "short", whatever the words say): worth
    a second run (run_timed)."""
    return bool(timing) and not violations and all(getattr(v, "kind", None) == "short" for v in timing)


def run_timed(*args: Any, **kwargs: Any) -> RunResult:
    """run_target, run again (TIME_RERUNS times at most) while the only thing found is a
    time reported under the wall time the judge saw: the one finding an honest harness
    can earn from a host that kept it off the CPU between a mark and its timed loop. Each
    earlier run's finding is kept in `reruns` (the row says it); a target that reports
    under its loop every time is tampered, as before."""
    tried = []
    while True:
        res = run_target(*args, **kwargs)
        if not isinstance(res, RunResult):
            return res
        res.reruns = tried
        if not (res.failure and res.failure.get("kind") == "tampered" and res.time_only) or len(tried) >= TIME_RERUNS:
            return res
        tried.append(res.failure["message"])
        free(res)


def free(res: Any) -> None:
    """Close a run's memory files (the reference's answers) once its rows are made."""
    lis = getattr(res, "listener", None)
    if lis is not None and hasattr(lis, "free"):
        lis.free()


def _jail_env() -> dict[str, str]:
    """The jail's own environment: enough to start Python and import linkroof, no more
    (each process of the plan gets its own, cleaned)."""
    keep = ("PATH", "PYTHONPATH", "HOME", "LANG", "LC_ALL", "VIRTUAL_ENV", "PYTHONHOME")
    return {k: v for k, v in os.environ.items() if k in keep}


_hidden = False


def hide_self() -> None:
    """Make the judge's process undumpable (PR_SET_DUMPABLE 0): its /proc entries
    (environment, descriptors, memory) belong to root, and no process of the same user
    may ptrace it. Where a candidate runs without namespaces as the same user, this is
    what keeps it from the judge's environment (the store's path) and its memory files
    (the reference's outputs)."""
    global _hidden
    if _hidden or not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE
        _hidden = True
    except (OSError, AttributeError):
        pass


def _kill(proc: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


def _tail(path: str, n: int = 600) -> str:
    try:
        return Path(path).read_text(errors="replace")[-n:].strip()
    except OSError:
        return ""


# ------------------------------------------------------------------ a row per candidate


def check_trials(ref: RunResult, cand: RunResult, trials: int | Sequence[int], atol: float, rtol: float,
                 load: Any = None) -> list[dict]:
    """Per trial, every rank's output against the reference's, stopping at the first
    mismatch (PKB). A comparison that fails on the files themselves is a mismatch
    naming why, never an error that loses the row."""
    load = load or _load_output
    out = []
    for t in (range(trials) if isinstance(trials, int) else trials):
        row: dict[str, Any] = {"trial": t}
        results = []
        for r in range(cand.ranks):
            a = ref.outputs.get(r, {}).get(str(t))
            b = cand.outputs.get(r, {}).get(str(t))
            if not a or not b:
                results = None
                break
            try:
                results.append(compare_outputs(load(a), load(b), atol, rtol))
            except Exception as e:  # noqa: BLE001 - an unreadable output fails its trial, with why
                results.append({"match": False, "reason": f"its output could not be compared ({type(e).__name__}: "
                                                          f"{str(e)[:200]})", "max_abs_err": None, "max_rel_err": None})
        if results is None:
            row.update(result="no_artifacts", reason="a rank left no output for this trial")
            out.append(row)
            break
        bad = [x for x in results if not x["match"]]
        row.update(result="mismatch" if bad else "match",
                   max_abs_err=max((x["max_abs_err"] or 0.0) for x in results),
                   max_rel_err=max((x["max_rel_err"] or 0.0) for x in results),
                   reason=bad[0]["reason"] if bad else "")
        out.append(row)
        if bad:
            break
    return out


def _load_output(paths: Sequence[str]) -> Any:
    """A rank's output of one trial: its leaves (.npy files) mapped, not read into memory:
    the comparison reads them chunk by chunk."""
    import numpy as np

    def one(p: str) -> Any:
        try:
            return np.load(p, mmap_mode="r", allow_pickle=False)
        except ValueError:  # an empty array cannot be mapped
            return np.load(p, allow_pickle=False)

    vals = [one(p) for p in paths]
    return vals[0] if len(vals) == 1 else vals


def time_of(res: RunResult, protocol: str) -> float | None:
    """The target's time by the protocol, slowest rank, seconds."""
    key = "wall_time_ms" if protocol == "pkb" else "median_ms"
    per = {r: p[key] for r, p in res.perf.items() if isinstance(p.get(key), (int, float))}
    t = slowest(per)
    return None if t is None else t / 1e3


def slowest_rank(res: RunResult, protocol: str) -> int | None:
    """The rank whose time is the target's (the slowest): its timeline explains the time."""
    key = "wall_time_ms" if protocol == "pkb" else "median_ms"
    per = {r: p[key] for r, p in res.perf.items() if isinstance(p.get(key), (int, float))}
    return max(per, key=lambda r: (per[r], -r)) if per else None


def spread(res: RunResult, protocol: str) -> float:
    """The measurement's relative spread at the slowest rank: PKB's per-call standard
    deviation over its mean, or the half-range of compare's batch medians; at least 2 %."""
    r = slowest_rank(res, protocol)
    p = res.perf.get(r, {}) if r is not None else {}
    s = 0.0
    if protocol == "pkb" and p.get("wall_time_ms"):
        s = float(p.get("wall_time_std_ms") or 0.0) / p["wall_time_ms"]
    elif p.get("times_ms") and p.get("median_ms"):
        s = (max(p["times_ms"]) - min(p["times_ms"])) / 2 / p["median_ms"]
    return max(FLOOR_MARGIN, s)


FLOOR_MARGIN = 0.02  # a time this far under the floor at least is suspect, whatever the noise
FLOOR_MARGIN_MAX = 0.10  # and at most this far: a noisy reference does not open a hole either


def floor_margin(ref: RunResult, protocol: str) -> float:
    """How far under the physical floor a time may be before it is suspect: the
    reference's measured noise (its spread), at least FLOOR_MARGIN and at most
    FLOOR_MARGIN_MAX. Never the candidate's own spread: a candidate that made itself
    noisy would widen its own margin."""
    return min(FLOOR_MARGIN_MAX, spread(ref, protocol))


def trial_times(res: RunResult, protocol: str) -> list[float]:
    """Every time of the target's slowest rank that a floor must hold for, seconds: the
    median and each batch's median under linkroof's protocol, the job's mean under PKB's
    (a PKB job is one trial; its earlier trials come as score_row's extra_times)."""
    r = slowest_rank(res, protocol)
    p = res.perf.get(r, {}) if r is not None else {}
    vals = [p.get("wall_time_ms")] if protocol == "pkb" else [p.get("median_ms"), *list(p.get("times_ms") or [])]
    return [float(v) / 1e3 for v in vals if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0]
TAIL_ABS_S, TAIL_SHARE = 50e-6, 0.2  # the device busy after the last timed event beyond both: work left unwaited
FEEDBACK_CHARS = 700  # the feedback fits a prompt: its least important facts go first


def _clock_words(c: dict) -> str:
    """'burst, SM 1980 MHz' or 'unknown (why)' from a row's clock state."""
    mhz = c.get("sm_mhz_median") or c.get("sm_mhz_last")
    return c["state"] + (f", SM {mhz:.0f} MHz" if isinstance(mhz, (int, float)) else "") + (
        f" ({c['note'][:80]})" if c["state"] == "unknown" and c.get("note") else "")


def feedback(row: dict) -> str:
    """Plain text made only of the row's measured facts, for a person or an agent: the
    verdict, peak fraction and time first; the least important facts are dropped to
    keep it under FEEDBACK_CHARS."""
    parts = []
    if row.get("failure"):
        f = row["failure"]
        return f"failed ({f['kind']}): {f['message'][:300]}"
    if row.get("suspect"):
        sus = row["suspect"]
        parts.append("SUSPECT, not ranked: " + "; ".join(sus["reasons"])[:400] +
                     f" (likely: {', '.join(sus['likely_causes'])})")
    if not row.get("correct") and not row.get("suspect"):
        bad = next((t for t in row.get("trials", []) if t["result"] != "match"), None)
        parts.append(f"wrong: trial {bad['trial']}: {bad.get('reason') or bad['result']}" if bad else "wrong")
    if row.get("peak_fraction") is not None and row["peak_fraction"] > 1:  # under the bound: no share, a ratio
        parts.append(f"{row['peak_fraction']:.1f}x faster than the roofline allows ({row.get('limiter')}-bound)")
    elif row.get("peak_fraction") is not None:
        parts.append(f"{row['peak_fraction']:.0%} of what this machine allows ({row.get('limiter')}-bound)"
                     + (f", {row['peak_fraction_of_cost_bound']:.0%} of the cost-model bound"
                        if row.get("peak_fraction_of_cost_bound") else ""))
    sp = row.get("speedup") if not row.get("suspect") else None
    each = row.get("trial_speedups") or []
    if sp and row.get("time_s") and row.get("reference_time_s"):
        times = f"{row['time_s'] * 1e6:.1f} us against {row['reference_time_s'] * 1e6:.1f} us"
        if len(each) > 1:
            total = row.get("speedup_total_time")
            parts.append((f"{total:.2f}x the reference by total time over {len(each)} trials, " if total else "") +
                         f"{sp:.2f}x as PKB's mean of the trials' speedups ({row['protocol']} protocol; the last "
                         f"trial {times})")
        else:
            parts.append(f"{sp:.2f}x the reference ({times}, {row['protocol']} protocol)")
    clk, rclk = row.get("clock") or {}, row.get("reference_clock") or {}
    if clk.get("state"):
        parts.append(f"clock: {_clock_words(clk)}" + (f" (the reference's: {_clock_words(rclk)})"
                                                     if rclk.get("state") and rclk.get("state") != clk.get("state")
                                                     else ""))
    again = row.get("time_reruns") or {}
    if again:  # the times above are from the run that counted; say that an earlier one was not believed
        parts.append("timed again: " + ", ".join(f"the {who}'s first {len(v)} run(s)" for who, v in sorted(again.items()))
                     + " reported a time short of the wall the judge saw (a host that kept the harness off the CPU); "
                       "the times are from the run after")
    parts += row.get("placement_verdicts") or []
    tl = row.get("timeline") or {}
    who = f"rank {row['explained_rank']}'s" if row.get("ranks", 1) > 1 and row.get("explained_rank") is not None \
        else "its"
    d = row.get("decomposition") or {}
    total = sum(v for v in d.values() if v > 0)
    if total > 0:
        top = sorted(d.items(), key=lambda kv: -kv[1])[:2]
        said = ", ".join(f"{k} {v / total:.0%}" for k, v in top) + _other_words([k for k, _ in top], row)
        parts.append(f"of {who} time: {said} (" + ("timed; the unattributed part was not seen on the recorded "
                                                   "timeline" if any("unattributed" in k for k, _ in top)
                                                   else "measured timeline") + ")")
    if tl.get("launch_verdict"):
        parts.append(tl["launch_verdict"])
    if tl.get("kernels_per_call") == 0:
        other = tl.get("activities_per_call") or 0
        kinds = sorted({k.get("kind") for k in tl.get("kernels") or [] if k.get("kind") and k.get("kind") != "kernel"})
        parts.append(f"no kernel ran in the call: its GPU work was {other:g} {'/'.join(kinds) or 'copy'} "
                     "operation(s) a call (measured timeline)" if other else
                     "nothing ran on the GPU in the call (measured timeline): it returned without GPU work")
    top_kernel = _top_kernel(tl, row.get("time_s"))
    if top_kernel:
        parts.append(top_kernel)
    if row.get("why"):
        parts.append(row["why"])
    if row.get("link_bytes_per_call") is not None:
        parts.append(f"{row['link_bytes_per_call']:,.0f} NVLink bytes a call (NVML's counters)"
                     + (f", wire efficiency {row['wire_efficiency']:.2f}x: {row['wire_note']}"
                        if row.get("wire_efficiency") else ""))
    elif row.get("link_bytes_note") and row.get("ranks", 1) > 1:  # several ranks: bytes crossed links, unseen
        parts.append(row["link_bytes_note"])
    if row.get("nccl"):
        parts.append(row["nccl"])
    from ..roofline.contradictions import check_text

    found = check_text("; ".join(parts), "feedback")  # on the whole, before any part is dropped for length
    # said, not hidden: a linkroof bug the reader should not act on; its own length held back (a fixed 80
    # let the text reach 728 characters, 2026-12-05)
    note = (f" [self-check: {len(found)} contradiction(s) in this feedback, a linkroof bug: {found[0][:40]}]"
            if found else "")
    while len(parts) > 1 and len("; ".join(parts)) + len(note) > FEEDBACK_CHARS:
        parts.pop()
    return ("; ".join(parts) or "no facts measured") + note


def _other_words(parts: list[str], row: dict) -> str:
    """Where a part is 'other': that is a kernel whose name says nothing of its class,
    never a class of its own (a Triton softmax named `_k` is memory-bound when counted):
    said so, and how to know."""
    if not any("other" in p.split(" (")[0].split(" + ") for p in parts):
        return ""
    how = "--counters classes it" if not row.get("counted") else "its counted why below says what bounds it"
    return f" ['other': a kernel whose name says nothing of its class; {how}]"


def _top_kernel(tl: dict, time_s: float | None) -> str | None:
    """The kernel that took the most GPU time a call, from the timeline, with its share of
    the timed call; None where the timeline lists none."""
    ks = [k for k in tl.get("kernels") or [] if k.get("time_per_call_s")]
    if not ks:
        return None
    from ..roofline.timeline import short_name

    k = max(ks, key=lambda k: k["time_per_call_s"])
    share = f", {k['time_per_call_s'] / time_s:.0%} of the call" if time_s else ""
    many = f" ({k['launches_per_call']:g} launches)" if k.get("launches_per_call", 1) != 1 else ""
    what = "kernel" if k.get("kind", "kernel") == "kernel" else k["kind"]
    return (f"its longest {what}: {short_name(k['name'])} ({k.get('class') or 'unclassified'}){many}, "
            f"{k['time_per_call_s'] * 1e6:.1f} us a call{share} (measured timeline)")


def suspicions(ref: RunResult, cand: RunResult, atol: float, rtol: float, load: Any = None) -> list[tuple[str, str]]:
    """What the checks after the timing saw, as (reason, likely cause): the timing
    functions replaced, work left on the device past the last timed event, an output that
    did not follow new input values (judged against the reference's on the same values),
    outputs aliasing inputs where the reference's do not."""
    out: list[tuple[str, str]] = []
    for r, c in sorted(cand.checks.items()):
        if c.get("replaced"):
            out.append((f"rank {r}: the candidate's code replaced {', '.join(map(str, c['replaced']))[:200]} (the "
                        "harness timed with the functions it held before the import)", "a timer the candidate can touch"))
        tail = c.get("tail") or {}
        after, ev = tail.get("device_busy_after_s"), tail.get("event_s")
        if isinstance(after, (int, float)) and isinstance(ev, (int, float)) and after > max(TAIL_ABS_S, TAIL_SHARE * ev):
            ref_tail = (ref.checks.get(r) or {}).get("tail") or {}
            also = " (the reference does too)" if (ref_tail.get("device_busy_after_s") or 0) > \
                max(TAIL_ABS_S, TAIL_SHARE * (ref_tail.get("event_s") or 0)) else ""
            out.append((f"rank {r}: the device stayed busy {after * 1e6:.0f} us after the last timed event of "
                        f"{tail.get('calls')} calls that the events timed at {ev * 1e6:.0f} us{also}",
                        "work on a stream the timing does not wait for"))
        ra = (ref.checks.get(r) or {}).get("aliases") or []
        if c.get("aliases") and not ra:
            out.append((f"rank {r}: {'; '.join(c['aliases'])[:200]} (the reference's outputs do not)",
                        "an output that aliases an input"))
    for r in range(cand.ranks):  # a check the reference's harness made and the candidate's did not: hidden
        rc, cc = ref.checks.get(r) or {}, cand.checks.get(r)
        if rc and cc is None:
            out.append((f"rank {r}: its harness's checks after the timing never reported (the reference's did)",
                        "a harness the candidate rewrote"))
        elif rc.get("post") and cc is not None and not cc.get("post") and not cc.get("post_note"):
            out.append((f"rank {r}: its harness skipped the check after new values without saying why (the "
                        "reference's made it)", "a harness the candidate rewrote"))
    post = [r for r in range(cand.ranks) if (cand.checks.get(r) or {}).get("post") and
            (ref.checks.get(r) or {}).get("post")]
    if post and len(post) == cand.ranks:
        [chk] = check_trials(ref, cand, ["post"], atol, rtol, load)
        if chk["result"] == "mismatch":
            out.append(("after new values were written into the tensors it was timed on, its output no longer "
                        f"matched the reference's on them ({chk['reason'][:160]})", "outputs cached from an earlier call"))
        elif chk["result"] != "match":
            out.append(("it said it made the check after new values but sent no output for it",
                        "a harness the candidate rewrote"))
    return out


def physical_floor(workload: Any, t: float, profile: Any, link_bytes: float | None) -> dict | None:
    """The least time this machine physically allows for the work: the roofline bound of
    the workload's FLOPs and bytes on the spec sheet's ceilings (where the spec lacks
    one, the measured ceiling), and the NVLink bytes NVML counted over the spec's link
    bandwidth. None when nothing bounds it."""
    from ..roofline.model import MachineModel
    from ..roofline.place import PlacementError, place

    model = MachineModel.from_profile(profile)
    best, basis = 0.0, ""
    if workload is not None:
        for kind in ("spec", "measured"):
            try:
                b = place(workload, t, model, kind).bound_time_s
            except PlacementError:
                continue
            if b > 0:
                best, basis = b, (f"the workload's FLOPs and bytes (stated) on the {kind} ceilings"
                                  if kind == "spec" else "the workload's FLOPs and bytes (stated) on the measured "
                                  "ceilings (the spec sheet has none for them)")
                break
    if link_bytes:
        bw = model.link("nvlink", "spec") or model.link("nvlink", "measured")
        if bw and bw[0] > 0 and link_bytes / bw[0] > best:
            best, basis = link_bytes / bw[0], f"{link_bytes:,.0f} NVLink bytes a call (NVML, measured) at {bw[1]}"
    return {"floor_s": best, "basis": basis} if best > 0 else None


def score_row(ref: RunResult, cand: RunResult, protocol: str, trials: int, atol: float, rtol: float,
              workload: Any = None, profile: Any = None, load: Any = None, checked: list[dict] | None = None,
              extra_times: Sequence[float] = ()) -> dict:
    """One candidate's result: PKB's fields (names kept), correctness per trial, the time
    and speedup, the checks against gamed timings and, where a workload and a profile are
    given, its placement and the physical floor; then the feedback made of those facts.
    A suspect row keeps its measured speedup under `suspect`, never in `speedup`, and is
    not `correct` (`outputs_match` says its outputs did). The floor holds for every time
    of every trial (`extra_times`: earlier trials' times, PKB's protocol), with the margin
    from the reference's noise (floor_margin)."""
    row: dict[str, Any] = {"candidate": cand.target.name, "spec": cand.target.spec, "protocol": protocol,
                           "ranks": cand.ranks, "wall_s": cand.wall_s}
    if cand.sandbox:
        row["sandbox"] = cand.sandbox
    if cand.leftover:
        row["processes_killed_after"] = cand.leftover
    again = {who: list(x.reruns) for who, x in (("reference", ref), ("candidate", cand)) if getattr(x, "reruns", None)}
    if again:  # run again for a time under the wall seen (run_timed): what each earlier run was found doing
        row["time_reruns"] = again
    if ref.failure:
        row["failure"] = {"kind": "reference_failed", "message": f"the reference failed: {ref.failure['message']}",
                          "ranks": ref.failure.get("ranks", [])}
        row.update(correct=False, outputs_match=False, trials=checked or [], feedback=feedback(row))
        return row
    if cand.failure:
        row["failure"] = cand.failure
    if checked is not None:  # the trials were checked already, one job each (PKB's protocol)
        row["trials"] = checked
    else:
        row["trials"] = check_trials(ref, cand, trials, atol, rtol, load) if not cand.failure or cand.trials_done else []
    row["trials_requested"] = trials
    row["correct"] = bool(row["trials"]) and len(row["trials"]) == trials and \
        all(t["result"] == "match" for t in row["trials"]) and not cand.failure
    t_ref, t = time_of(ref, protocol), time_of(cand, protocol)
    row["reference_time_s"], row["time_s"] = t_ref, t
    row["speedup"] = t_ref / t if t_ref and t else None
    rr = slowest_rank(ref, protocol)
    if rr is not None:
        row["reference_stats"] = _stats(ref.perf[rr], protocol)
    r_slow = slowest_rank(cand, protocol)
    per = cand.perf.get(r_slow, {}) if r_slow is not None else {}
    if per:
        row["explained_rank"] = r_slow
        row["stats"] = _stats(per, protocol)
    if protocol == "pkb" and per:
        row.update({k: per.get(k) for k in ("wall_time_ms", "wall_time_std_ms", "min_time_ms", "max_time_ms",
                                            "iterations", "warmup_iterations", "num_input_groups")})
    link = [p.get("link_bytes_per_call") for p in cand.perf.values() if p.get("link_bytes_per_call") is not None]
    notes = [p.get("link_bytes_note") for p in cand.perf.values() if p.get("link_bytes_note")]
    if not link and notes:
        row["link_bytes_note"] = f"NVLink bytes unknown: {notes[0]}"
    if link:  # NVML's counters around the timed calls: the most any rank's GPU sent a call
        row["link_bytes_per_call"] = max(link)
        given = workload.link_bytes.get("nvlink") if workload is not None else None
        if given:
            from ..roofline.baseline import wire_efficiency

            ratio, why = wire_efficiency(max(link), given, workload.message_bytes)
            row["wire_efficiency"], row["wire_note"] = ratio, why
    if per.get("timeline"):
        row["timeline"] = per["timeline"]
        row["decomposition"] = per["timeline"].get("parts", {})
    # the clock state each time was taken in (NVML sampled through the timed calls), the
    # candidate's slowest rank's and the reference's: a speedup across clock states says so
    row["clock"] = per.get("clock") or {"state": "unknown", "note": "the harness sent no clock state"}
    ref_clock = ref.perf.get(rr, {}).get("clock") if rr is not None else None
    row["reference_clock"] = ref_clock or {"state": "unknown", "note": "the harness sent no clock state"}
    if workload is not None and profile is not None and t:
        row.update(_placed(workload, t, profile))
    if t:
        row["spread"] = spread(cand, protocol)
        row["floor_margin"] = floor_margin(ref, protocol)
        row["floor_times_s"] = sorted(set(trial_times(cand, protocol) + list(extra_times or ())))
    row["outputs_match"] = row["correct"]
    if row["correct"] and t:  # a wrong candidate is wrong: what gamed its timing no longer matters
        found = suspicions(ref, cand, atol, rtol, load)
        if profile is not None:
            floor = physical_floor(workload, t, profile, row.get("link_bytes_per_call"))
            if floor:
                row["floor_s"], row["floor_basis"] = floor["floor_s"], floor["basis"]
                hit = below_floor(row, min([t] + row["floor_times_s"]), floor, row["floor_margin"], found)
                if hit:
                    found.insert(0, hit)
        _mark_suspect(row, found)
    row["feedback"] = feedback(row)
    return _lead(row)


def _mark_suspect(row: dict, found: list[tuple[str, str]]) -> None:
    """Add what was found to the row's suspicion (reasons, likely causes); a suspect
    row's speedup moves under `suspect`, never to be ranked."""
    if not found:
        return
    row["correct"] = False  # a suspect is never correct, in any format: its outputs matched (outputs_match)
    sus = row.setdefault("suspect", {"reasons": [], "likely_causes": [], "measured_speedup": row.get("speedup")})
    sus["reasons"] += [r for r, _ in found if r not in sus["reasons"]]
    sus["likely_causes"] = list(dict.fromkeys(sus["likely_causes"] + [c for _, c in found]))
    if row.get("speedup") is not None:
        sus["measured_speedup"] = row["speedup"]
    row["speedup"] = None
    if row.get("speedup_total_time") is not None:
        sus["measured_speedup_total_time"] = row.pop("speedup_total_time")


def below_floor(row: dict, t: float, floor: dict, margin: float, found: list[tuple[str, str]]) -> \
        tuple[str, str] | None:
    """The floor's finding, where the time is under it by more than the margin (the
    reference's noise, floor_margin)."""
    if t * (1 + margin) < floor["floor_s"]:
        return (f"measured {t * 1e6:.2f} us, under the physical floor of {floor['floor_s'] * 1e6:.2f} us "
                f"({floor['basis']}) by over the {margin:.0%} margin",
                _floor_cause(found))
    return None


COUNTED_OVER_L2 = 2  # counted DRAM bytes give a floor only when they are this many L2s (ncu flushes caches)


def with_counters(row: dict, spec: str, inputs: str, profile: Any, margin: float, work_dir: str,
                  count: Any = None, gpus: Sequence[Any] | None = None) -> dict:
    """One correct one-rank candidate's kernels counted by Nsight Compute (in a session
    of its own, marked, a clean environment, killed whole after): its DRAM bytes, FLOPs
    and NVLink bytes a call; the why-sentence of its longest kernel; and the physical
    floor of what it was counted to move (where that is more than COUNTED_OVER_L2 L2s:
    ncu flushes the caches before each kernel, so smaller counts include bytes a warm
    timed loop finds in L2)."""
    from ..profiler import ncu
    from .procs import MARK, kill_mark, new_mark

    if not row.get("outputs_match", row.get("correct")) or row.get("ranks", 1) != 1 or row.get("time_s") is None:
        return row
    if inputs.startswith("pkb:"):
        row["counters_note"] = "not counted: counters need --inputs MODULE:FUNCTION (ncu's child makes the inputs)"
        return row
    scratch = tempfile.mkdtemp(prefix="counted-", dir=work_dir)
    mark = new_mark()
    env = clean_env(dict(os.environ), scratch) | {MARK: mark}
    if gpus is not None:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in gpus)
    try:
        rep = (count or ncu.count)(Target.of(spec).spec, inputs, warmup=3, calls=1, env=env)
    except ncu.CountersUnavailable as e:
        row["counters_note"] = str(e)
        return row
    finally:
        kill_mark(mark)
    from ..roofline.baseline import counted_workload
    from ..roofline.timeline import short_name, why_text

    per = rep.per_name()
    totals = ncu.CounterReport.sum_names(per)
    wl = counted_workload(row["candidate"], totals)
    row["counted"] = {"dram_bytes": wl.hbm_bytes, "flops": dict(wl.flops), "nvlink_bytes": wl.link_bytes.get("nvlink"),
                      "kernels": len(per), "how": rep.how}
    top = max(per, key=lambda k: per[k].get("gpu_time_s", 0.0)) if per else None
    if top is not None and why_text(per[top]):
        row["why"] = f"{short_name(top)}: {why_text(per[top])}"
    t = row["time_s"]
    if profile is not None:
        # DRAM bytes within COUNTED_OVER_L2 L2s never bound the floor, FLOPs beside them or not (one counted FLOP
        # let a warm loop's L2 hits make an honest candidate suspect, until 2026-12-05)
        small = not wl.hbm_bytes > COUNTED_OVER_L2 * PKB_DEFAULT_L2
        bounded = replace(wl, hbm_bytes=0.0) if small else wl
        floor = physical_floor(bounded, t, profile, None) if bounded.hbm_bytes or bounded.flops else None
        if floor is not None and small and wl.hbm_bytes:
            row["counters_note"] = (f"the floor is the FLOPs' alone: {wl.hbm_bytes:,.0f} DRAM bytes fit in "
                                    f"{COUNTED_OVER_L2} L2s, and ncu counts them from a flushed cache")
        if floor is not None:
            floor["basis"] = floor["basis"].replace("the workload's FLOPs and bytes (stated)",
                                                    "the FLOPs ncu counted (measured)" if small else
                                                    "the FLOPs and DRAM bytes ncu counted (measured)")
            row["counted_floor_s"], row["counted_floor_basis"] = floor["floor_s"], floor["basis"]
            known = [("", c) for c in (row.get("suspect") or {}).get("likely_causes", [])]
            hit = below_floor(row, t, floor, margin, known)
            if hit:
                _mark_suspect(row, [hit])
        elif wl.hbm_bytes:
            row["counters_note"] = (f"no floor from the counts: {wl.hbm_bytes:,.0f} DRAM bytes fit in "
                                    f"{COUNTED_OVER_L2} L2s, and ncu counts them from a flushed cache")
    row["feedback"] = feedback(row)
    return _lead(row)


def _floor_cause(found: list[tuple[str, str]]) -> str:
    """The floor's likely cause: what a check saw, else the three known ways."""
    if found:
        return found[0][1]
    return "a timer the candidate can touch, work on an unwaited stream, or cached outputs"


def _stats(perf: dict, protocol: str) -> dict:
    """One rank's timing statistics in ms (KernelBench's runtime_stats keys)."""
    if protocol == "pkb":
        return {"mean": perf.get("wall_time_ms"), "std": perf.get("wall_time_std_ms"), "min": perf.get("min_time_ms"),
                "max": perf.get("max_time_ms"), "num_trials": perf.get("iterations")}
    ts = perf.get("times_ms") or []
    if not ts:
        return {"mean": perf.get("median_ms"), "num_trials": 0}
    m = sum(ts) / len(ts)
    sd = math.sqrt(sum((x - m) ** 2 for x in ts) / len(ts))
    return {"mean": m, "std": sd, "min": min(ts), "max": max(ts), "num_trials": len(ts),
            "median": perf.get("median_ms")}


LEAD = ("candidate", "peak_fraction", "peak_fraction_of_cost_bound", "correct", "suspect", "speedup", "failure")


def _lead(row: dict) -> dict:
    """The row with what a loop reads first, first: peak fraction, correctness, suspicion."""
    return {**{k: row[k] for k in LEAD if k in row}, **{k: v for k, v in row.items() if k not in LEAD}}


def kernelbench_row(row: dict) -> dict:
    """The row as KernelBench's KernelExecResult (src/kernelbench/eval.py: compiled,
    correctness, metadata, runtime and ref_runtime in ms with their stats); a suspect row is
    not correct here, and metadata says why (as KernelBench's excessive_speedup does)."""
    f = row.get("failure") or {}
    trials = row.get("trials") or []
    meta: dict[str, Any] = {"correctness_trials": f"({sum(t['result'] == 'match' for t in trials)} / "
                                                  f"{row.get('trials_requested', len(trials))})",
                            "linkroof_protocol": row.get("protocol"), "linkroof_feedback": row.get("feedback")}
    if f:
        name = "compilation_error" if f.get("kind") == "import_error" else "runtime_error"
        meta[name], meta[f"{name}_name"] = f.get("message", ""), f.get("kind")
    bad = next((t for t in trials if t["result"] != "match"), None)
    if bad is not None:
        meta["correctness_issue"] = bad.get("reason") or bad["result"]
    if row.get("suspect"):
        meta["excessive_speedup"] = True
        meta["linkroof_suspect"] = row["suspect"]
    for k in ("peak_fraction", "peak_fraction_of_cost_bound", "limiter", "floor_s"):
        if row.get(k) is not None:
            meta[f"linkroof_{k}"] = row[k]
    stats, ref_stats = row.get("stats") or {}, row.get("reference_stats") or {}
    timed = row.get("time_s") is not None and not f
    return {"compiled": f.get("kind") != "import_error", "correctness": bool(row.get("correct")) and not row.get("suspect"),
            "metadata": meta, "runtime": stats.get("mean", -1.0) if timed else -1.0,
            "runtime_stats": stats if timed else {}, "ref_runtime": ref_stats.get("mean", -1.0) if ref_stats else -1.0,
            "ref_runtime_stats": ref_stats}


def _placed(workload: Any, t: float, profile: Any) -> dict:
    from ..roofline.advise import advise
    from ..roofline.baseline import nccl_baseline
    from ..roofline.cost import with_cost
    from ..roofline.model import MachineModel
    from ..roofline.place import PlacementError, place

    model = MachineModel.from_profile(profile)
    out: dict[str, Any] = {}
    try:
        base = nccl_baseline(profile, workload)
        p = with_cost(place(workload, t, model, "measured"), profile, model,
                      collective_s=base.median_s if base else None)
    except PlacementError as e:
        return {"placement_note": str(e)}
    cost = p.fraction_of_cost_bound if p.cost_bound_s else None
    out.update(peak_fraction=p.fraction_of_roofline, peak_fraction_of_cost_bound=cost,
               fraction_of_roofline=p.fraction_of_roofline, limiter=p.limiter, bound_time_s=p.bound_time_s,
               cost_bound_s=p.cost_bound_s or None, fraction_of_cost_bound=cost)
    if p.verdicts:  # the placement's flags as every view shows them (a time below its bound, first)
        out["placement_verdicts"] = list(p.verdicts)
    if base is not None and workload.pattern:
        text = (f"NCCL on this machine: {workload.pattern} of {workload.message_bytes} B over {base.ranks} ranks in "
                f"{base.median_s * 1e6:.1f} us ({base.how})")
        # a size under 1 byte, which advise refuses, never gets here: place() refuses a negative one and
        # nccl_baseline has no figure for 0 (the try around this call was dead code, 2026-12-05)
        best = advise(profile, workload.message_bytes, workload.pattern).fastest
        if best is not None:
            text += (f"; the fastest mechanism this profile measured at this size: {best.mechanism} "
                     f"({best.time_s * 1e6:.1f} us)")
        out["nccl"] = text
    return out


class ScoreError(LinkroofError):
    """What was asked cannot be scored: a reference or inputs that cannot be found, an
    option out of range. Raised before any child starts."""


EXIT_REFERENCE_FAILED, EXIT_NOTHING_SCORED = 5, 4


def check_target(spec: str) -> str | None:
    """Why a target cannot be run, found without running any of its code: a file that is
    missing, does not parse or defines no such top-level name; a module not found on the
    path. None when it looks runnable."""
    import ast
    import importlib.machinery

    full = Target.of(spec).spec
    if ":" not in full:
        return f"{spec!r}: expected FILE.py, FILE.py:FUNCTION or MODULE:FUNCTION"
    where, name = full.rsplit(":", 1)
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            return f"{spec}: no file {where}"
        try:
            tree = ast.parse(path.read_bytes(), filename=where)
        except (SyntaxError, ValueError) as e:
            return f"{spec}: {where} does not parse ({type(e).__name__}: {str(e)[:160]})"
        except OSError as e:
            return f"{spec}: {where} cannot be read ({e.strerror})"
        names = set()
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                for tgt in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                    names |= {n.id for n in ast.walk(tgt) if isinstance(n, ast.Name)}
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names |= {(al.asname or al.name).split(".")[0] for al in node.names}
        if name not in names and not any(isinstance(n, ast.ImportFrom) and any(al.name == "*" for al in n.names)
                                         for n in tree.body):
            return f"{spec}: {where} defines no top-level {name!r} (read, not run)"
        return None
    top = where.split(".")[0]
    if not top.isidentifier():
        return f"{spec}: {where!r} is not a module name"
    if top in sys.builtin_module_names or importlib.machinery.PathFinder.find_spec(top, [os.getcwd(), *sys.path]):
        return None
    return f"{spec}: no module named {top!r} here (looked in the working directory and sys.path)"


def check_inputs(spec: str) -> str | None:
    if spec.startswith("pkb:"):
        root = Path(spec[4:])
        return None if (root / "utils" / "input_output_tensors.py").is_file() else \
            f"--inputs {spec}: {root} is not a ParallelKernelBench checkout (no utils/input_output_tensors.py)"
    why = check_target(spec)
    return None if why is None else f"--inputs {why}"


MAX_RANKS = 64  # score --ranks' range: one node's GPUs


def check_options(ranks: int, trials: int, atol: float, rtol: float, deadline_s: float,
                  max_output_bytes: int, warmup: int = 0, iters: int = 1) -> None:
    """The options of a score or of a manifest's problem, by the same rules (score's
    command line ranges): a ScoreError naming each fault."""
    bad = []
    if not (isinstance(ranks, int) and not isinstance(ranks, bool) and 1 <= ranks <= MAX_RANKS):
        bad.append(f"ranks {ranks!r}: from 1 to {MAX_RANKS}")
    if not (isinstance(iters, int) and not isinstance(iters, bool) and iters >= 1):
        bad.append(f"iters {iters!r}: at least 1")
    if not (isinstance(warmup, int) and not isinstance(warmup, bool) and warmup >= 0):
        bad.append(f"warmup {warmup!r}: at least 0")
    if not (isinstance(trials, int) and trials >= 1):
        bad.append(f"trials {trials!r}: at least 1")
    for name, v in (("atol", atol), ("rtol", rtol)):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
            bad.append(f"{name} {v!r}: a finite number, not negative")
    if not (isinstance(deadline_s, (int, float)) and math.isfinite(deadline_s) and deadline_s > 0):
        bad.append(f"deadline {deadline_s!r}: a finite number of seconds above 0")
    if not (isinstance(max_output_bytes, int) and max_output_bytes > 0):
        bad.append(f"max output bytes {max_output_bytes!r}: a positive integer")
    if bad:
        raise ScoreError("cannot score: " + "; ".join(bad))


def _unrunnable(spec: str, why: str, ranks: int, protocol: str) -> dict:
    row = {"candidate": Target.of(spec).name, "spec": spec, "protocol": protocol, "ranks": ranks, "wall_s": 0.0,
           "correct": False, "trials": [], "failure": {"kind": "import_error", "ranks": [],
                                                       "message": f"checked before running: {why}"}}
    row["feedback"] = feedback(row)
    return _lead(row)


def score(reference: str, candidates: Sequence[str], inputs: str, ranks: int = 1, protocol: str = "linkroof",
          trials: int = PKB_TRIALS, atol: float = PKB_ATOL, rtol: float = PKB_RTOL, deadline_s: float = DEADLINE_S,
          workload: Any = None, profile: Any = None, warmup: int = PKB_WARMUP, iters: int = PKB_ITERS,
          shape: tuple[int, int] = (1024, 1024), dtype: str = "bfloat16", work_dir: str | None = None,
          on_row: Any = None, command: Any = None, max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
          validate: bool | None = None, counters: bool = False, count: Any = None, sandbox: str = "auto",
          max_memory_bytes: int | None = None) -> list[dict]:
    """Score every candidate against the reference; `on_row` gets each row as it is made.

    Everything is checked before any child starts (`validate`; by default unless a
    stand-in `command` resolves the targets itself): options, the reference and the
    inputs (a ScoreError), each candidate (a failure row, no child started).
    `counters`: each correct one-rank candidate's kernels counted by Nsight Compute
    afterwards (with_counters: the counted floor and the why-sentence).
    `max_memory_bytes`: the host memory a target's processes may hold (run_target)."""
    if max_memory_bytes is not None and (type(max_memory_bytes) is not int or max_memory_bytes < 1 << 20):
        raise ScoreError(f"max_memory_bytes {max_memory_bytes!r}: a whole number of bytes, at least 1 MiB")
    check_options(ranks, trials, atol, rtol, deadline_s, max_output_bytes, warmup, iters)
    if validate if validate is not None else command is None:
        problems = [w for w in (check_target(reference), check_inputs(inputs)) if w]
        if problems:
            raise ScoreError("cannot score: " + "; ".join(problems))
        unrunnable = {spec: why for spec in candidates if (why := check_target(spec))}
    else:
        unrunnable = {}
    rows = []

    def emit(row: dict, spec: str | None = None) -> None:
        if counters and spec is not None:
            row = with_counters(row, spec, inputs, profile, row.get("floor_margin", FLOOR_MARGIN), tmp, count)
        rows.append(row)
        if on_row is not None:
            on_row(row)

    pid = pkb_problem_id(reference)  # every target gets the reference's problem's inputs
    seeds = make_seeds(trials + 1)  # drawn now: the same inputs for the reference and every candidate
    common = dict(deadline_s=deadline_s, warmup=warmup, iters=iters, shape=shape, dtype=dtype, command=command,
                  problem_id=pid, max_output_bytes=max_output_bytes, sandbox=sandbox, max_memory_bytes=max_memory_bytes)
    with tempfile.TemporaryDirectory(prefix="linkroof-score-", dir=work_dir) as tmp:
        ref = None
        for i, spec in enumerate(candidates):
            if spec in unrunnable:
                emit(_unrunnable(spec, unrunnable[spec], ranks, protocol))
                continue
            if protocol == "pkb":
                emit(_pkb_candidate(reference, spec, i, inputs, ranks, trials, atol, rtol, workload, profile, tmp,
                                    dict(common, seeds=seeds)), spec)
                continue
            if ref is None:
                ref = run_timed(Target.of(reference), inputs, ranks, protocol, os.path.join(tmp, "reference"),
                                 trials, seeds=seeds, reference=True, **common)
            time.sleep(PKB_COOLDOWN_S)  # PKB's cool-down between reference and solution
            cand = run_timed(Target.of(spec), inputs, ranks, protocol, os.path.join(tmp, f"candidate_{i}"), trials,
                              seeds=seeds, **common)
            emit(score_row(ref, cand, protocol, trials, atol, rtol, workload, profile), spec)
            free(cand)
        free(ref)
    return rows


def exit_code(rows: Sequence[dict]) -> int:
    """0: the reference ran and at least one candidate was scored (correct or not, timed
    or found wrong); EXIT_REFERENCE_FAILED: the reference failed, nothing could be scored;
    EXIT_NOTHING_SCORED: the reference ran but every candidate failed to run."""
    if rows and all((r.get("failure") or {}).get("kind") == "reference_failed" for r in rows):
        return EXIT_REFERENCE_FAILED
    if not any(not r.get("failure") for r in rows):
        return EXIT_NOTHING_SCORED
    return 0


def _pkb_candidate(reference: str, spec: str, i: int, inputs: str, ranks: int, trials: int, atol: float, rtol: float,
                   workload: Any, profile: Any, tmp: str, common: dict) -> dict:
    """PKB's eval of one candidate, step for step: per trial a reference job, 0.5 s, a
    candidate job, each checking and timing that trial's inputs; the trial's speedup is
    the reference's slowest rank over the candidate's; it stops at the first mismatch
    or failure. The row's `speedup` is the mean of the trials' (PKB prints one a trial);
    `speedup_total_time` is the trials' total reference time over their total time."""
    trial_rows: list[dict] = []
    last_ref = last_cand = None
    again: dict[str, list[str]] = {}  # every trial's reruns (run_timed), the reference's and the candidate's
    common = dict(common)
    seeds = common.pop("seeds", None) or list(range(trials + 1))
    for t in range(trials):
        mine = [seeds[t], seeds[trials]]  # this trial's inputs, and the check's after new values
        if last_ref is not None:
            free(last_ref)
            free(last_cand)
        ref = run_timed(Target.of(reference), inputs, ranks, "pkb", os.path.join(tmp, f"c{i}_t{t}_reference"), 1,
                         first_trial=t, seeds=mine, reference=True, **common)
        time.sleep(PKB_COOLDOWN_S)
        cand = run_timed(Target.of(spec), inputs, ranks, "pkb", os.path.join(tmp, f"c{i}_t{t}_candidate"), 1,
                          first_trial=t, seeds=mine, **common)
        last_ref, last_cand = ref, cand
        for who, x in (("reference", ref), ("candidate", cand)):
            again.setdefault(who, []).extend(f"trial {t}: {m}" for m in getattr(x, "reruns", []) or [])
        if ref.failure or cand.failure:
            break
        [check] = check_trials(ref, cand, [t], atol, rtol) or [{"trial": t, "result": "no_artifacts"}]
        t_ref, t_c = time_of(ref, "pkb"), time_of(cand, "pkb")
        check.update(reference_wall_time_ms=t_ref * 1e3 if t_ref else None, wall_time_ms=t_c * 1e3 if t_c else None,
                     speedup=t_ref / t_c if t_ref and t_c else None)
        trial_rows.append(check)
        if check["result"] != "match":
            break
    assert last_ref is not None and last_cand is not None
    earlier = [x["wall_time_ms"] / 1e3 for x in trial_rows if x.get("wall_time_ms")]  # every trial, not the last
    row = score_row(last_ref, last_cand, "pkb", trials, atol, rtol, workload, profile, checked=trial_rows,
                    extra_times=earlier)
    free(last_ref)
    free(last_cand)
    speedups = [x["speedup"] for x in trial_rows if x.get("speedup")]
    row["trial_speedups"] = speedups
    row.pop("time_reruns", None)
    if any(again.values()):
        row["time_reruns"] = {k: v for k, v in again.items() if v}
    timed = [x for x in trial_rows if x.get("speedup")]
    mean = sum(speedups) / len(speedups) if speedups else None
    total = sum(x["reference_wall_time_ms"] for x in timed) / sum(x["wall_time_ms"] for x in timed) if timed else None
    if row.get("suspect"):
        row["suspect"].update(measured_speedup=mean, measured_speedup_total_time=total)
        row.pop("speedup_total_time", None)
    else:
        row["speedup"], row["speedup_total_time"] = mean, total
    row["feedback"] = feedback(row)
    return _lead(row)
