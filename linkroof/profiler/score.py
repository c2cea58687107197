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
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
            why = "NaN in the reference and the output" if c["nan_ref"] and not c["far_finite"] else \
                f"values differ beyond atol {atol}, rtol {rtol}"
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
        if spec.endswith(".py") and ":" not in spec:
            return Target(f"{spec}:solution", Path(spec).stem)
        return Target(spec, spec.rsplit(":", 1)[-1] if ":" in spec else spec)


def pkb_problem_id(path: str) -> int:
    """PKB's problem id: the leading number of the file's stem (1 when there is none)."""
    m = re.match(r"^(\d+)", Path(path.split(":", 1)[0]).stem)
    return int(m.group(1)) if m else 1


@dataclass
class RunResult:
    """One target's child run: per rank, per trial outputs (files), perf, failures."""

    target: Target
    out_dir: str
    returncode: int | None
    ranks: int
    wall_s: float
    failure: dict | None = None  # {"kind", "message", "ranks"}
    perf: dict[int, dict] = field(default_factory=dict)
    trials_done: dict[int, int] = field(default_factory=dict)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def child_command(ranks: int, port: int, args: list[str]) -> tuple[list[str], dict[str, str]]:
    """The child's command line and environment: one process for one rank (the
    process-group variables set, as torchrun would), torchrun for several."""
    env = dict(os.environ)
    env.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")  # no NVLink multicast, ever
    env.setdefault("NCCL_NVLS_ENABLE", "0")
    if ranks <= 1:
        env.update({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": "0", "LOCAL_RANK": "0",
                    "WORLD_SIZE": "1", "LOCAL_WORLD_SIZE": "1"})
        return [sys.executable, "-m", "linkroof.profiler.score_child", *args], env
    return [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(ranks), "--master-addr",
            "127.0.0.1", "--master-port", str(port), "-m", "linkroof.profiler.score_child", *args], env


def run_target(target: Target, inputs: str, ranks: int, protocol: str, out_dir: str, trials: int,
               deadline_s: float = DEADLINE_S, warmup: int = PKB_WARMUP, iters: int = PKB_ITERS,
               shape: tuple[int, int] = (1024, 1024), dtype: str = "bfloat16", command: Any = None,
               problem_id: int = 1, first_trial: int = 0) -> RunResult:
    """Run one target in its own process group with a deadline; read what each rank
    left in `out_dir` (outputs per trial, perf, an error)."""
    os.makedirs(out_dir, exist_ok=True)
    args = ["--fn", target.spec, "--inputs", inputs, "--out", out_dir, "--trials", str(trials), "--protocol",
            protocol, "--warmup", str(warmup), "--iters", str(iters), "--m", str(shape[0]), "--n", str(shape[1]),
            "--dtype", dtype, "--problem-id", str(problem_id), "--first-trial", str(first_trial)]
    cmd, env = (command or child_command)(ranks, free_port(), args)
    t0 = time.perf_counter()
    log = open(os.path.join(out_dir, "child.log"), "wb")
    try:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        rc: int | None = None
        failed_at = None
        while True:  # a rank that failed leaves the others waiting in a collective: end them soon after
            try:
                rc = proc.wait(timeout=0.25)
                break
            except subprocess.TimeoutExpired:
                pass
            now = time.perf_counter()
            if failed_at is None and any(Path(out_dir).glob("rank_*_error.json")):
                failed_at = now
            if now - t0 > deadline_s or (failed_at is not None and now - failed_at > ERROR_GRACE_S):
                _kill(proc)
                rc = None
                break
    finally:
        log.close()
    res = RunResult(target, out_dir, rc, ranks, time.perf_counter() - t0)
    for r in range(ranks):
        p = Path(out_dir) / f"rank_{r}_perf.json"
        if p.exists():
            res.perf[r] = json.loads(p.read_text())
        s = Path(out_dir) / f"rank_{r}_trials.json"
        if s.exists():
            res.trials_done[r] = int(json.loads(s.read_text()).get("done", 0))
    errors = {}
    for r in range(ranks):
        p = Path(out_dir) / f"rank_{r}_error.json"
        if p.exists():
            errors[r] = json.loads(p.read_text())
    if errors:
        first = errors[min(errors)]
        res.failure = {"kind": first.get("kind", "exception"), "message": first.get("message", "")[:2000],
                       "ranks": sorted(errors)}
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
    mismatch (PKB)."""
    load = load or _load_output
    out = []
    for t in (range(trials) if isinstance(trials, int) else trials):
        row: dict[str, Any] = {"trial": t}
        results = []
        for r in range(cand.ranks):
            a = Path(ref.out_dir) / f"trial_{t}_rank_{r}.npz"
            b = Path(cand.out_dir) / f"trial_{t}_rank_{r}.npz"
            if not a.exists() or not b.exists():
                results = None
                break
            results.append(compare_outputs(load(a), load(b), atol, rtol))
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


def _load_output(path: Path) -> Any:
    import numpy as np

    with np.load(path, allow_pickle=False) as z:
        keys = sorted(z.files, key=lambda k: int(k.split("_")[1]) if k.startswith("out_") else 0)
        vals = [z[k] for k in keys]
    return vals[0] if len(vals) == 1 else vals


def time_of(res: RunResult, protocol: str) -> float | None:
    """The target's time by the protocol, slowest rank, seconds."""
    key = "wall_time_ms" if protocol == "pkb" else "median_ms"
    per = {r: p[key] for r, p in res.perf.items() if isinstance(p.get(key), (int, float))}
    t = slowest(per)
    return None if t is None else t / 1e3


def feedback(row: dict) -> str:
    """Plain text made only of the row's measured facts, for a person or an agent."""
    parts = []
    if row.get("failure"):
        f = row["failure"]
        return f"failed ({f['kind']}): {f['message'][:300]}"
    if not row.get("correct"):
        bad = next((t for t in row.get("trials", []) if t["result"] != "match"), None)
        parts.append(f"wrong: trial {bad['trial']}: {bad.get('reason') or bad['result']}" if bad else "wrong")
    sp, each = row.get("speedup"), row.get("trial_speedups") or []
    if sp and row.get("time_s") and row.get("reference_time_s"):
        times = f"{row['time_s'] * 1e6:.1f} us against {row['reference_time_s'] * 1e6:.1f} us"
        parts.append(f"{sp:.2f}x the reference (the mean of {len(each)} trials' speedups, {row['protocol']} "
                     f"protocol; the last trial {times})" if len(each) > 1 else
                     f"{sp:.2f}x the reference ({times}, {row['protocol']} protocol)")
    if row.get("fraction_of_roofline") is not None:
        parts.append(f"{row['fraction_of_roofline']:.0%} of what this machine allows ({row.get('limiter')}-bound)"
                     + (f", {row['fraction_of_cost_bound']:.0%} of the cost-model bound"
                        if row.get("fraction_of_cost_bound") else ""))
    parts += row.get("placement_verdicts") or []
    d = row.get("decomposition") or {}
    total = sum(v for v in d.values() if v > 0)
    if total > 0:
        top = sorted(d.items(), key=lambda kv: -kv[1])[:2]
        parts.append("of its time: " + ", ".join(f"{k} {v / total:.0%}" for k, v in top) + " (measured timeline)")
    tl = row.get("timeline") or {}
    if tl.get("launch_verdict"):
        parts.append(tl["launch_verdict"])
    if tl.get("kernels_per_call") == 0:
        parts.append("no GPU kernel ran in the call (measured timeline): it returned without work on the GPU")
    top_kernel = _top_kernel(tl, row.get("time_s"))
    if top_kernel:
        parts.append(top_kernel)
    if row.get("link_bytes_per_call") is not None:
        parts.append(f"{row['link_bytes_per_call']:,.0f} NVLink bytes a call (NVML's counters)"
                     + (f", wire efficiency {row['wire_efficiency']:.2f}x: {row['wire_note']}"
                        if row.get("wire_efficiency") else ""))
    elif row.get("link_bytes_note") and row.get("ranks", 1) > 1:  # several ranks: bytes crossed links, unseen
        parts.append(row["link_bytes_note"])
    if row.get("nccl"):
        parts.append(row["nccl"])
    return "; ".join(parts) or "no facts measured"


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
    return (f"its longest kernel: {short_name(k['name'])} ({k.get('class') or 'unclassified'}){many}, "
            f"{k['time_per_call_s'] * 1e6:.1f} us a call{share} (measured timeline)")


def score_row(ref: RunResult, cand: RunResult, protocol: str, trials: int, atol: float, rtol: float,
              workload: Any = None, profile: Any = None, load: Any = None, checked: list[dict] | None = None) -> dict:
    """One candidate's result: PKB's fields (names kept), correctness per trial, the time
    and speedup, and where a workload and a profile are given its placement; then the
    feedback made of those facts."""
    row: dict[str, Any] = {"candidate": cand.target.name, "spec": cand.target.spec, "protocol": protocol,
                           "ranks": cand.ranks, "wall_s": cand.wall_s}
    if ref.failure:
        row["failure"] = {"kind": "reference_failed", "message": f"the reference failed: {ref.failure['message']}",
                          "ranks": ref.failure.get("ranks", [])}
        row.update(correct=False, trials=checked or [], feedback=feedback(row))
        return row
    if cand.failure:
        row["failure"] = cand.failure
    if checked is not None:  # the trials were checked already, one job each (PKB's protocol)
        row["trials"] = checked
    else:
        row["trials"] = check_trials(ref, cand, trials, atol, rtol, load) if not cand.failure or cand.trials_done else []
    row["correct"] = bool(row["trials"]) and len(row["trials"]) == trials and \
        all(t["result"] == "match" for t in row["trials"]) and not cand.failure
    t_ref, t = time_of(ref, protocol), time_of(cand, protocol)
    row["reference_time_s"], row["time_s"] = t_ref, t
    row["speedup"] = t_ref / t if t_ref and t else None
    if protocol == "pkb" and cand.perf:
        worst = max(cand.perf.values(), key=lambda p: p.get("wall_time_ms", 0.0))
        row.update({k: worst.get(k) for k in ("wall_time_ms", "wall_time_std_ms", "min_time_ms", "max_time_ms",
                                              "iterations", "warmup_iterations", "num_input_groups")})
    per = cand.perf.get(0, {})
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
    if workload is not None and profile is not None and t:
        row.update(_placed(workload, t, profile))
    row["feedback"] = feedback(row)
    return row


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
    out.update(fraction_of_roofline=p.fraction_of_roofline, limiter=p.limiter, bound_time_s=p.bound_time_s,
               cost_bound_s=p.cost_bound_s or None,
               fraction_of_cost_bound=p.fraction_of_cost_bound if p.cost_bound_s else None)
    if p.verdicts:  # the placement's flags as every view shows them (a time below its bound, first)
        out["placement_verdicts"] = list(p.verdicts)
    if base is not None and workload.pattern:
        text = (f"NCCL on this machine: {workload.pattern} of {workload.message_bytes} B over {base.ranks} ranks in "
                f"{base.median_s * 1e6:.1f} us ({base.how})")
        try:
            best = advise(profile, workload.message_bytes, workload.pattern).fastest
        except ValueError:
            best = None
        if best is not None:
            text += (f"; the fastest mechanism this profile measured at this size: {best.mechanism} "
                     f"({best.time_s * 1e6:.1f} us)")
        out["nccl"] = text
    return out


def score(reference: str, candidates: Sequence[str], inputs: str, ranks: int = 1, protocol: str = "linkroof",
          trials: int = PKB_TRIALS, atol: float = PKB_ATOL, rtol: float = PKB_RTOL, deadline_s: float = DEADLINE_S,
          workload: Any = None, profile: Any = None, warmup: int = PKB_WARMUP, iters: int = PKB_ITERS,
          shape: tuple[int, int] = (1024, 1024), dtype: str = "bfloat16", work_dir: str | None = None,
          on_row: Any = None, command: Any = None) -> list[dict]:
    """Score every candidate against the reference; `on_row` gets each row as it is made."""
    rows = []
    pid = pkb_problem_id(reference)  # every target gets the reference's problem's inputs
    if protocol == "pkb":
        with tempfile.TemporaryDirectory(prefix="linkroof-score-", dir=work_dir) as tmp:
            for i, spec in enumerate(candidates):
                row = _pkb_candidate(reference, spec, i, inputs, ranks, trials, atol, rtol, deadline_s, workload,
                                     profile, warmup, iters, shape, dtype, command, pid, tmp)
                rows.append(row)
                if on_row is not None:
                    on_row(row)
        return rows
    with tempfile.TemporaryDirectory(prefix="linkroof-score-", dir=work_dir) as tmp:
        ref = run_target(Target.of(reference), inputs, ranks, protocol, os.path.join(tmp, "reference"), trials,
                         deadline_s, warmup, iters, shape, dtype, command, pid)
        for i, spec in enumerate(candidates):
            time.sleep(PKB_COOLDOWN_S)  # PKB's cool-down between reference and solution
            cand = run_target(Target.of(spec), inputs, ranks, protocol, os.path.join(tmp, f"candidate_{i}"), trials,
                              deadline_s, warmup, iters, shape, dtype, command, pid)
            row = score_row(ref, cand, protocol, trials, atol, rtol, workload, profile)
            rows.append(row)
            if on_row is not None:
                on_row(row)
    return rows


def _pkb_candidate(reference: str, spec: str, i: int, inputs: str, ranks: int, trials: int, atol: float, rtol: float,
                   deadline_s: float, workload: Any, profile: Any, warmup: int, iters: int, shape: tuple[int, int],
                   dtype: str, command: Any, pid: int, tmp: str) -> dict:
    """PKB's eval of one candidate, step for step: per trial a reference job, 0.5 s, a
    candidate job, each checking and timing that trial's inputs; the trial's speedup is
    the reference's slowest rank over the candidate's; it stops at the first mismatch
    or failure. The row's speedup is the mean of the trials' (PKB prints one a trial)."""
    trial_rows: list[dict] = []
    last_ref = last_cand = None
    for t in range(trials):
        ref = run_target(Target.of(reference), inputs, ranks, "pkb", os.path.join(tmp, f"c{i}_t{t}_reference"), 1,
                         deadline_s, warmup, iters, shape, dtype, command, pid, t)
        time.sleep(PKB_COOLDOWN_S)
        cand = run_target(Target.of(spec), inputs, ranks, "pkb", os.path.join(tmp, f"c{i}_t{t}_candidate"), 1,
                          deadline_s, warmup, iters, shape, dtype, command, pid, t)
        last_ref, last_cand = ref, cand
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
    row = score_row(last_ref, last_cand, "pkb", trials, atol, rtol, workload, profile, checked=trial_rows)
    speedups = [x["speedup"] for x in trial_rows if x.get("speedup")]
    row["trial_speedups"] = speedups
    row["speedup"] = sum(speedups) / len(speedups) if speedups else None
    row["feedback"] = feedback(row)
    return row

