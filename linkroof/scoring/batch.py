"""`linkroof batch`: many problems x candidates, scored concurrently across a node's GPUs,
resumable, and split across nodes by shard.

A manifest (TOML or JSON) lists problems: a reference, the inputs, the candidates, and
optionally ranks, protocol, trials, tolerances, deadline, a workload (for the roofline
place and the physical floor) and PKB's shape options; a `[defaults]` table sets them for
every problem. Each (problem, candidate) is one job with a stable key.

- GPUs: a job takes `ranks` GPUs from the pool (one for a one-rank candidate) and sees
  only those (CUDA_VISIBLE_DEVICES); never two timings on one GPU at once. Under the
  linkroof protocol a problem's reference runs once, before its candidates, and the
  rows say on which GPUs; under PKB's it runs beside each candidate, trial by trial, as
  PKB does.
- Results: one JSON line per job, appended and flushed as each ends. Started again with
  the same results file, the jobs already there are skipped (a torn last line, from an
  interruption mid-write, is ignored and its job run again).
- Shards: `--shard i/N` runs the jobs whose position in the manifest is i modulo N, so
  Slurm job arrays and Kubernetes indexed jobs split one manifest; `batch-merge` joins
  the shards' files into one, in manifest order, and one table.
- Each candidate runs in a fresh process (score.run_target): the isolation the hostile
  checks rely on (a candidate's import can replace timing functions, leave CUDA state, an
  illegal address poisons its context for good, a daemon outlives it) is a process's; a
  reused worker would carry one candidate's damage into the next one's timing. The
  start-up this costs is measured beside PKB's harness (benchmarks/RESULTS.md)."""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from . import score as S


@dataclass(frozen=True)
class Problem:
    name: str
    reference: str
    inputs: str
    candidates: tuple[str, ...]
    ranks: int = 1
    protocol: str = "linkroof"
    trials: int = S.PKB_TRIALS
    atol: float = S.PKB_ATOL
    rtol: float = S.PKB_RTOL
    deadline_s: float = S.DEADLINE_S
    workload: str | None = None
    warmup: int = S.PKB_WARMUP
    iters: int = S.PKB_ITERS
    m: int = 1024
    n: int = 1024
    dtype: str = "bfloat16"
    max_output_bytes: int = S.DEFAULT_MAX_OUTPUT_BYTES
    counters: bool = False  # each correct one-rank candidate counted by Nsight Compute (score --counters)


@dataclass(frozen=True)
class Job:
    problem: Problem
    candidate: str
    position: int  # in the manifest, over every problem's candidates

    @property
    def key(self) -> str:
        return f"{self.problem.name}::{self.candidate}"


KNOWN = {f.name for f in fields(Problem)} | {"deadline"}


def load_manifest(path: str) -> list[Problem]:
    """The problems of a TOML or JSON manifest; every problem's fields checked (types,
    ranges, that its files exist) before any job runs: a ScoreError names every fault."""
    from ..files import FileInputError, read_bytes

    p = Path(path)
    try:  # a regular file of at most MAX_MANIFEST bytes: a FIFO or /dev/zero is refused, never read
        raw = read_bytes(p, "manifest", MAX_MANIFEST)
    except FileInputError as e:
        raise S.ScoreError(str(e)) from None
    try:
        doc = json.loads(raw) if p.suffix == ".json" else tomllib.loads(raw.decode())
    except (ValueError, UnicodeDecodeError) as e:
        raise S.ScoreError(f"{path}: not a {'JSON' if p.suffix == '.json' else 'TOML'} manifest ({e})") from None
    except RecursionError:
        raise S.ScoreError(f"{path}: nested too deep to be a manifest") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("problem"), list) or not doc["problem"]:
        raise S.ScoreError(f"{path}: a manifest lists its problems as [[problem]] tables (a 'problem' list)")
    defaults = doc.get("defaults", {})
    if not isinstance(defaults, dict):
        raise S.ScoreError(f"{path}: [defaults] must be a table")
    base = p.parent
    faults, out, names = [], [], set()
    for i, entry in enumerate(doc["problem"]):
        if not isinstance(entry, dict):
            faults.append(f"problem {i + 1}: not a table")
            continue
        d = {**defaults, **entry}
        unknown = sorted(set(d) - KNOWN)
        if unknown:
            faults.append(f"problem {i + 1}: unknown field(s) {', '.join(unknown)}")
            continue
        if "deadline" in d:
            d["deadline_s"] = d.pop("deadline")
        name = d.get("name") or (Path(str(d.get("reference", f"problem{i + 1}")).split(":")[0]).stem)
        d["name"] = str(name)
        if d["name"] in names:
            faults.append(f"problem {i + 1}: the name {d['name']!r} is used twice")
        names.add(d["name"])
        try:
            prob = _problem(d, base)
        except (TypeError, ValueError) as e:
            faults.append(f"problem {d['name']!r}: {e}")
            continue
        why = [w for w in (S.check_target(prob.reference), S.check_inputs(prob.inputs)) if w]
        if prob.workload and not Path(prob.workload).is_file():
            why.append(f"no workload file {prob.workload}")
        if len(set(prob.candidates)) != len(prob.candidates):
            why.append("a candidate is listed twice")
        try:
            S.check_options(prob.ranks, prob.trials, prob.atol, prob.rtol, prob.deadline_s, prob.max_output_bytes,
                            prob.warmup, prob.iters)
        except S.ScoreError as e:
            why.append(str(e).removeprefix("cannot score: "))
        faults += [f"problem {prob.name!r}: {w}" for w in why]
        out.append(prob)
    if faults:
        raise S.ScoreError(f"{path}: " + "; ".join(faults[:20]) + (f"; and {len(faults) - 20} more" if len(faults) > 20
                                                                   else ""))
    return out


def _problem(d: dict, base: Path) -> Problem:
    def path(x: Any) -> str:
        """A file path relative to the manifest's folder (a module:function stays as it is)."""
        x = str(x)
        where = x.split(":")[0]
        if where.endswith((".py", ".toml")) and not os.path.isabs(where) and not Path(where).exists():
            return str(base / x)
        return x

    cands = d.get("candidates")
    if not isinstance(cands, list) or not cands or not all(isinstance(c, str) for c in cands):
        raise ValueError("candidates must be a non-empty list of strings")
    for k in ("reference", "inputs"):
        if not isinstance(d.get(k), str):
            raise ValueError(f"{k} must be a string")
    kw = {k: d[k] for k in ("ranks", "trials", "warmup", "iters", "m", "n", "max_output_bytes") if k in d}
    for k, v in kw.items():
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"{k} must be an integer")
    for k in ("atol", "rtol", "deadline_s"):
        if k in d:
            if not isinstance(d[k], (int, float)) or isinstance(d[k], bool):
                raise TypeError(f"{k} must be a number")
            kw[k] = float(d[k])
    if "counters" in d:
        if not isinstance(d["counters"], bool):
            raise TypeError("counters must be true or false")
        kw["counters"] = d["counters"]
    if d.get("protocol", "linkroof") not in ("linkroof", "pkb"):
        raise ValueError("protocol must be linkroof or pkb")
    return Problem(name=d["name"], reference=path(d["reference"]), inputs=path(d["inputs"]) if not
                   str(d["inputs"]).startswith("pkb:") else d["inputs"], candidates=tuple(path(c) for c in cands),
                   protocol=d.get("protocol", "linkroof"), workload=path(d["workload"]) if d.get("workload") else None,
                   dtype=str(d.get("dtype", "bfloat16")), **kw)


def jobs_of(problems: Sequence[Problem], shard: tuple[int, int] = (0, 1)) -> list[Job]:
    """The jobs of this shard, in manifest order: position i belongs to shard i mod N."""
    i, n = shard
    out, pos = [], 0
    for p in problems:
        for c in p.candidates:
            if pos % n == i:
                out.append(Job(p, c, pos))
            pos += 1
    return out


def parse_shard(text: str) -> tuple[int, int]:
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise S.ScoreError(f"--shard {text!r}: expected I/N, as 0/4") from None
    if not 0 <= i < n:
        raise S.ScoreError(f"--shard {text!r}: I must be 0 to N - 1")
    return i, n


KEY_BYTES = 32
MAX_MANIFEST = 16 << 20  # a manifest larger than this is not one
MAX_ROW_BYTES = 64 << 20  # a results line longer than this is not a row: refused, never held whole


def key_path() -> Path:
    """The results key's default file: linkroof/results.key under the user's config folder."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "linkroof" / "results.key"


def results_key(path: str | Path | None = None) -> bytes:
    """The secret `--results` rows are signed with: read from `path` (default key_path()),
    made there (32 random bytes, mode 0600) on first use. It lives in a file only, never in
    an environment or on a command line, so no candidate's process is handed it (in a
    sandbox as uid 65534 it cannot read it either)."""
    import secrets

    p = Path(path) if path is not None else key_path()
    if path is None and not p.exists():
        try:
            p.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(secrets.token_bytes(KEY_BYTES))
        except FileExistsError:
            pass
        except OSError as e:
            raise S.ScoreError(f"cannot make the results key {p}: {e.strerror or e}") from None
    from ..files import FileInputError, read_bytes

    try:
        key = read_bytes(p, "results key", max_bytes=4096)
    except FileInputError as e:
        raise S.ScoreError(str(e)) from None
    if len(key) < 16:
        raise S.ScoreError(f"{p}: a results key of {len(key)} bytes is too short (at least 16)")
    return key


def _finite(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {str(k): _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x


def _mac(doc: dict, key: bytes) -> str:
    import hashlib
    import hmac

    body = json.dumps({k: v for k, v in doc.items() if k != "mac"}, sort_keys=True, separators=(",", ":"),
                      allow_nan=False)
    return hmac.new(key, body.encode(), hashlib.sha256).hexdigest()


def signed_line(row: dict, key: bytes) -> str:
    """A row as its results line: JSON (no NaN: null in its place), with its MAC."""
    doc = _finite(json.loads(json.dumps(row, default=str)))
    doc["mac"] = _mac(doc, key)
    return json.dumps(doc, allow_nan=False) + "\n"


def verified(row: Any, key: bytes) -> bool:
    import hmac

    return isinstance(row, dict) and isinstance(row.get("mac"), str) and \
        hmac.compare_digest(row["mac"], _mac(row, key))


def done_keys(results: str, key: bytes | None = None, refused: list[str] | None = None) -> dict[str, dict]:
    """The rows already in a results file, by job key; a torn last line is left out.
    With `key`, a row whose MAC fails (forged, edited, or signed with another key), a
    torn line before the last, or a row that is not a job's is refused: not taken, and
    said in `refused` (one line per file)."""
    from ..files import FileInputError, regular_file

    out: dict[str, dict] = {}
    bad: dict[str, list[int]] = {}
    if not os.path.lexists(results):
        return out
    try:
        regular_file(results, "results file")  # a FIFO or /dev/zero is refused, never read
    except FileInputError as e:
        raise S.ScoreError(str(e)) from None
    lines: list[bytes | None] = []
    try:
        with open(results, "rb") as f:
            while True:
                line = f.readline(MAX_ROW_BYTES + 1)
                if not line:
                    break
                if len(line) > MAX_ROW_BYTES and not line.endswith(b"\n"):
                    while line and not line.endswith(b"\n"):  # skip the rest of the over-long line, bounded reads
                        line = f.readline(1 << 20)
                    lines.append(None)
                    continue
                lines.append(line)
    except OSError as e:
        raise S.ScoreError(f"cannot read {results}: {e.strerror or e}") from None
    for n, line in enumerate(lines, 1):
        if line is None:
            bad.setdefault(f"over {MAX_ROW_BYTES} bytes, not a row", []).append(n)
            continue
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):
            if n < len(lines) and key is not None:
                bad.setdefault("torn or not JSON", []).append(n)
            continue  # an interrupted write: that job runs again
        if not (isinstance(row, dict) and isinstance(row.get("job"), str)):
            if key is not None:
                bad.setdefault("not a job's row", []).append(n)
            continue
        if key is not None and not verified(row, key):
            bad.setdefault("no valid MAC (forged, edited, or written with another key)", []).append(n)
            continue
        out.setdefault(row["job"], row)
    if refused is not None:
        for why, ns in bad.items():
            refused.append(f"{results}: {len(ns)} row(s) refused (line(s) {', '.join(map(str, ns[:10]))}"
                           f"{' ...' if len(ns) > 10 else ''}): {why}")
    return out


class GpuPool:
    """GPUs handed out whole: a job waits until it can have `n` of them at once."""

    def __init__(self, gpus: Sequence[Any]):
        self.free = list(gpus)
        self.size = len(self.free)
        self.cond = threading.Condition()

    def take(self, n: int) -> list[Any]:
        if n > self.size:
            raise S.ScoreError(f"a job needs {n} GPUs; this batch has {self.size}")
        with self.cond:
            self.cond.wait_for(lambda: len(self.free) >= n)
            got, self.free = self.free[:n], self.free[n:]
            return got

    def give(self, gpus: Sequence[Any]) -> None:
        with self.cond:
            self.free += list(gpus)
            self.cond.notify_all()


@dataclass
class Summary:
    total: int
    skipped: int
    done: int = 0
    correct: int = 0
    failed: int = 0
    suspect: int = 0
    best: dict[str, tuple[str, float]] = field(default_factory=dict)  # problem -> (candidate, speedup)

    def add(self, row: dict, before: bool = False) -> None:
        """A row into the running figures (`before`: a row of an earlier run, resumed)."""
        if not before:
            self.done += 1
        self.correct += bool(row.get("correct")) and not row.get("suspect")
        self.failed += bool(row.get("failure"))
        self.suspect += bool(row.get("suspect"))
        sp = row.get("speedup")
        if row.get("correct") and not row.get("suspect") and sp and sp > self.best.get(row["problem"], ("", 0.0))[1]:
            self.best[row["problem"]] = (row["candidate"], sp)

    def line(self) -> str:
        best = ", ".join(f"{p}: {c} {s:.2f}x" for p, (c, s) in sorted(self.best.items()))
        return (f"{self.done + self.skipped}/{self.total} jobs ({self.skipped} from before): {self.correct} correct, "
                f"{self.failed} failed, {self.suspect} suspect" + (f"; best: {best}" if best else ""))


def run_batch(problems: Sequence[Problem], results: str, gpus: Sequence[Any], shard: tuple[int, int] = (0, 1),
              profile_for: Callable[[Problem], tuple[Any, Any]] | None = None, command: Any = None,
              progress: Callable[[str], None] | None = None, work_dir: str | None = None,
              stop: threading.Event | None = None, sandbox: str = "auto",
              key: bytes | None = None) -> tuple[list[dict], Summary]:
    """Run this shard's jobs not yet in `results`, concurrently on `gpus`; each row is
    appended to `results` as it ends. Returns every row of the shard (old and new, in
    manifest order) and the summary."""
    jobs = jobs_of(problems, shard)
    key = key if key is not None else results_key()
    refused: list[str] = []
    before = done_keys(results, key, refused)
    for line in refused:  # rows that fail their MAC are not believed: those jobs run again
        if progress is not None:
            progress(line)
    todo = [j for j in jobs if j.key not in before]
    summary = Summary(total=len(jobs), skipped=len(jobs) - len(todo))
    for j in jobs:
        if j.key in before:
            summary.add(before[j.key], before=True)
    pool = GpuPool(gpus)
    write = threading.Lock()
    refs: dict[str, Any] = {}
    ref_locks = {p.name: threading.Lock() for p in problems}
    placed = {p.name: (profile_for(p) if profile_for else (None, None)) for p in {j.problem for j in todo}}
    Path(results).parent.mkdir(parents=True, exist_ok=True)
    _end_torn_line(results)
    new: dict[str, dict] = {}
    stop = stop or threading.Event()

    def reference(p: Problem, tmp: str) -> tuple[Any, list[Any]]:
        with ref_locks[p.name]:
            if p.name not in refs:
                got = pool.take(p.ranks)
                try:
                    refs[p.name] = (S.run_target(S.Target.of(p.reference), p.inputs, p.ranks, p.protocol,
                                                 os.path.join(tmp, f"ref_{len(refs)}"), p.trials,
                                                 **_common(p, command), sandbox=sandbox, gpus=got, reference=True), got)
                finally:
                    pool.give(got)
            return refs[p.name]

    def one(job: Job, tmp: str) -> None:
        if stop.is_set():
            return
        p = job.problem
        wl, profile = placed[p.name]
        got: list[Any] | None = None
        ref_gpus: list[Any] | None = None
        if S.check_target(job.candidate) and command is None:
            row = S._unrunnable(job.candidate, S.check_target(job.candidate) or "", p.ranks, p.protocol)
        elif p.protocol == "pkb":
            got = pool.take(p.ranks)
            try:
                row = S._pkb_candidate(p.reference, job.candidate, job.position, p.inputs, p.ranks, p.trials, p.atol,
                                       p.rtol, wl, profile, tmp,
                                       {**_common(p, command), "sandbox": sandbox, "gpus": got})
            finally:
                pool.give(got)
            ref_gpus = got
        else:
            ref, ref_gpus = reference(p, tmp)
            got = pool.take(p.ranks)
            try:
                cand = S.run_target(S.Target.of(job.candidate), p.inputs, p.ranks, p.protocol,
                                    os.path.join(tmp, f"job_{job.position}"), p.trials, **_common(p, command),
                                    sandbox=sandbox, gpus=got)
            finally:
                pool.give(got)
            row = S.score_row(ref, cand, p.protocol, p.trials, p.atol, p.rtol, wl, profile)
            S.free(cand)
        if p.counters and row.get("outputs_match", row.get("correct")):
            held = pool.take(p.ranks)  # counting runs the candidate again: its GPU is held meanwhile
            try:
                row = S.with_counters(row, job.candidate, p.inputs, profile, row.get("floor_margin", S.FLOOR_MARGIN), tmp,
                                      gpus=held)
            finally:
                pool.give(held)
        row = {"job": job.key, "problem": p.name, "position": job.position, **row, "gpus": got,
               "reference_gpus": ref_gpus,
               "shard": f"{shard[0]}/{shard[1]}", "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        with write:
            with open(results, "a", encoding="utf-8") as f:
                f.write(signed_line(row, key))
                f.flush()
                os.fsync(f.fileno())
            new[job.key] = row
            summary.add(row)
            if progress:
                progress(f"{job.key}: " + ("correct" if row.get("correct") else "NOT correct") +
                         (" (suspect)" if row.get("suspect") else "") + f" | {summary.line()}")

    with tempfile.TemporaryDirectory(prefix="linkroof-batch-", dir=work_dir) as tmp:
        workers = max(1, len(gpus) // max(1, min((j.problem.ranks for j in todo), default=1)))
        with ThreadPoolExecutor(max_workers=workers) as ex:
            futures = [ex.submit(one, j, tmp) for j in todo]
            try:
                for f in futures:
                    f.result()
            except BaseException:
                stop.set()
                for f in futures:
                    f.cancel()
                raise
    rows = [new.get(j.key) or before[j.key] for j in jobs if j.key in new or j.key in before]
    return rows, summary


def _end_torn_line(results: str) -> None:
    """A results file cut off mid-line (an interrupted write) gets its line ended, so the
    next row starts a line of its own; the torn row is ignored and its job runs again."""
    try:
        with open(results, "rb+") as f:
            f.seek(0, os.SEEK_END)
            if f.tell():
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    f.write(b"\n")
    except FileNotFoundError:
        pass


_SEEDS: dict[tuple[int, str], list[int]] = {}
_SEEDS_LOCK = threading.Lock()


def _common(p: Problem, command: Any) -> dict:
    """What every run of a problem shares, the judge's input seeds included (drawn once per
    problem and batch process: the reference and each candidate see the same inputs)."""
    with _SEEDS_LOCK:
        seeds = _SEEDS.setdefault((id(p), p.name), S.make_seeds(p.trials + 1))
    return dict(deadline_s=p.deadline_s, warmup=p.warmup, iters=p.iters, shape=(p.m, p.n), dtype=p.dtype,
                command=command, problem_id=S.pkb_problem_id(p.reference), max_output_bytes=p.max_output_bytes,
                seeds=seeds)


def merge(files: Sequence[str], problems: Sequence[Problem] | None = None,
          key: bytes | None = None) -> tuple[list[dict], list[str]]:
    """The rows of several shards' results, one per job (the first seen where a job is in
    two files, with a note), in manifest order (by position, as the rows carry it). Rows
    whose MAC fails under `key` (default: results_key()) are refused, each file's said in
    a note; the rest are kept."""
    rows: dict[str, dict] = {}
    notes: list[str] = []
    mac_key = key if key is not None else results_key()
    for f in files:
        if not Path(f).is_file():
            raise S.ScoreError(f"{f}: no such results file")
        for job_key, row in done_keys(f, mac_key, notes).items():
            if job_key in rows:
                notes.append(f"{job_key}: in more than one file; the first kept")
                continue
            rows[job_key] = row
    order = {j.key: j.position for j in jobs_of(problems)} if problems else {}
    def place(r: dict) -> tuple[int, str]:
        pos = r.get("position")
        return order.get(r["job"], pos if isinstance(pos, int) and not isinstance(pos, bool) else sys.maxsize), r["job"]

    out = sorted(rows.values(), key=place)
    if problems:
        missing = [k for k in order if k not in rows]
        if missing:
            notes.append(f"{len(missing)} job(s) of the manifest have no row yet: {', '.join(missing[:5])}"
                         + (" ..." if len(missing) > 5 else ""))
    return out, notes


def visible_gpus() -> list[str]:
    """The GPUs this node lets a batch use: CUDA_VISIBLE_DEVICES where set (indices or
    UUIDs, as given), else NVML's list; none on a machine without GPUs."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        return [x.strip() for x in env.split(",") if x.strip()]
    try:
        from ..profiler.probe import probe

        return [str(g.index) for g in probe().gpus]
    except Exception:  # noqa: BLE001 - no GPU here: the caller says so
        return []


__all__ = ["GpuPool", "Job", "Problem", "Summary", "done_keys", "jobs_of", "load_manifest", "merge", "parse_shard",
           "run_batch", "visible_gpus"]
