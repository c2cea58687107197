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

import contextlib
import hashlib
import json
import math
import os
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable, Iterator, Sequence
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
    manifest_sha256: str = ""  # the manifest's identity (sha256 of its bytes): set by load_manifest, never by it


@dataclass(frozen=True)
class Job:
    problem: Problem
    candidate: str
    position: int  # in the manifest, over every problem's candidates

    @property
    def key(self) -> str:
        return f"{self.problem.name}::{self.candidate}"


KNOWN = {f.name for f in fields(Problem)} - {"manifest_sha256"} | {"deadline"}
MAX_DEPTH = 32  # a manifest or a row nested deeper than this is not one


def load_manifest(path: str) -> list[Problem]:
    """The problems of a TOML or JSON manifest; every problem's fields checked (types,
    ranges, that its files exist) before any job runs: a ScoreError names every fault."""
    from ..files import FileInputError, read_bytes

    p = Path(path)
    what = "JSON" if p.suffix == ".json" else "TOML"
    try:  # a regular file of at most MAX_MANIFEST bytes: a FIFO or /dev/zero is refused, never read
        raw = read_bytes(p, "manifest", MAX_MANIFEST)
    except FileInputError as e:
        raise S.ScoreError(str(e)) from None
    try:
        doc = json.loads(raw, parse_constant=_no_constant) if what == "JSON" else tomllib.loads(raw.decode())
    except RecursionError:
        raise S.ScoreError(f"{path}: nested too deep to be a manifest") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise S.ScoreError(f"{path}: not a {what} manifest ({_short(e)})") from None
    if too_deep(doc, MAX_DEPTH):
        raise S.ScoreError(f"{path}: nested too deep to be a manifest (over {MAX_DEPTH} levels)")
    sha = hashlib.sha256(raw).hexdigest()
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
            prob = _problem(d, base, sha)
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


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _short(e: BaseException) -> str:
    return str(e)[:200]


def too_deep(doc: Any, limit: int) -> bool:
    """Whether `doc` (lists and dicts) nests deeper than `limit`: walked without recursion,
    so a deep document is an answer, never a RecursionError."""
    stack = [(doc, 1)]
    while stack:
        x, d = stack.pop()
        if isinstance(x, dict):
            x = list(x.values())
        elif not isinstance(x, list):
            continue
        if d > limit:
            return True
        stack.extend((v, d + 1) for v in x if isinstance(v, (list, dict)))
    return False


def _problem(d: dict, base: Path, sha: str = "") -> Problem:
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
                   dtype=str(d.get("dtype", "bfloat16")), manifest_sha256=sha, **kw)


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


def positions(problems: Sequence[Problem]) -> dict[str, int]:
    """Each job's position in the manifest, by its key (jobs_of's, without a Job made for each)."""
    out: dict[str, int] = {}
    for p in problems:
        for c in p.candidates:
            out[f"{p.name}::{c}"] = len(out)
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
MAX_ROW_BYTES = 8 << 20  # a results line longer than this is not a row: refused, never held whole
MAC_HEX = 64  # an HMAC-SHA256 in hex


def key_path() -> Path:
    """The results key's default file: linkroof/results.key under the user's config folder."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "linkroof" / "results.key"


def results_key(path: str | Path | None = None) -> bytes:
    """The secret `--results` rows are signed with: read from `path` (default key_path(),
    made there on first use: 32 random bytes, mode 0600, O_EXCL). It lives in a file only,
    never in an environment or on a command line, so no candidate's process is handed it
    (in a sandbox as uid 65534 it cannot read it either). A key file others may read is
    refused, as ssh refuses such a private key. A `path` given is never made: a typo would
    make a new key, and every row signed before would be refused."""
    import secrets
    import stat

    from ..files import FileInputError, read_bytes

    p = Path(path) if path is not None else key_path()
    if path is None and not os.path.lexists(p):
        try:
            p.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(secrets.token_bytes(KEY_BYTES))
        except FileExistsError:
            pass  # made meanwhile by another batch: read it
        except OSError as e:
            raise S.ScoreError(f"cannot make the results key {p}: {e.strerror or e}") from None
    try:
        key = read_bytes(p, "results key", max_bytes=4096)
        mode = os.stat(p).st_mode
    except FileInputError as e:
        raise S.ScoreError(str(e) + ("" if path is None else " (--key-file: the key the rows were signed with)")) \
            from None
    except OSError as e:
        raise S.ScoreError(f"cannot read {p}: {e.strerror or e}") from None
    if mode & stat.S_IROTH:
        raise S.ScoreError(f"{p}: a results key others may read (a candidate run as another user could sign "
                           f"rows): chmod 600 {p}")
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


def _canonical(doc: dict) -> bytes:
    """What a row's MAC covers: its JSON without the mac field, keys sorted, no spaces,
    no NaN (ValueError for a row holding one)."""
    return json.dumps({k: v for k, v in doc.items() if k != "mac"}, sort_keys=True, separators=(",", ":"),
                      allow_nan=False).encode()


def _mac(body: bytes, key: bytes) -> str:
    import hmac

    return hmac.digest(key, body, "sha256").hex()


def signed_doc(row: dict, key: bytes) -> dict:
    """A row as it is written: plain JSON values (non-finite numbers null), with its MAC."""
    doc = _finite(json.loads(json.dumps({k: v for k, v in row.items() if k != "mac"}, default=str)))
    doc["mac"] = _mac(_canonical(doc), key)
    return doc


def line_of(doc: dict) -> str:
    """A signed row's line: its canonical JSON with the MAC last, so a reader checks the
    bytes it read without writing the row out again (verified_line)."""
    body = _canonical(doc).decode()
    return body[:-1] + ("," if len(body) > 2 else "") + f'"mac":"{doc["mac"]}"}}\n'


def signed_line(row: dict, key: bytes) -> str:
    """A row as its results line: JSON (no NaN: null in its place), with its MAC."""
    return line_of(signed_doc(row, key))


def verified(row: Any, key: bytes) -> bool:
    """Whether `row` carries a valid MAC under `key` (its canonical JSON's)."""
    import hmac

    if not (isinstance(row, dict) and isinstance(row.get("mac"), str)):
        return False
    try:
        body = _canonical(row)
    except (ValueError, TypeError, RecursionError):
        return False
    return hmac.compare_digest(row["mac"], _mac(body, key))


_SUFFIX = b',"mac":"'


def verified_line(line: bytes, row: dict, key: bytes) -> bool:
    """Whether the line `row` was read from is signed under `key`: the bytes as written
    (line_of), else the row's canonical JSON (a line written otherwise, as by an earlier
    version or a tool that re-spaced it)."""
    import hmac

    raw = line.rstrip(b"\r\n")
    cut = len(raw) - len(_SUFFIX) - MAC_HEX - 2
    if cut > 0 and raw[cut:cut + len(_SUFFIX)] == _SUFFIX and raw.endswith(b'"}'):
        if hmac.compare_digest(raw[cut + len(_SUFFIX):-2], _mac(raw[:cut] + b"}", key).encode()):
            return True  # the bytes as the judge wrote them (the row parsed from them holds this MAC last)
    return verified(row, key)


_TEXT = ("job", "problem", "candidate", "protocol")
_NUMBERS = ("speedup", "time_s", "fraction_of_roofline")
_NUMBER = (int, float)


def row_fault(row: dict) -> str | None:
    """Why a signed row is not a row of batch's shape (what the table, the summary and
    the merge read), or None. (JSON gives exact types: `type(x) is` suffices.)"""
    get = row.get
    for k in _TEXT:
        if type(get(k)) is not str:
            return f"{k} is not text"
    pos = get("position")
    if type(pos) is not int or pos < 0:
        return "position is not a whole number"
    for k in _NUMBERS:
        v = get(k)
        if v is not None and type(v) not in _NUMBER:
            return f"{k} is not a number"
    fb = get("feedback")
    if fb is not None and type(fb) is not str:
        return "feedback is not text"
    f = get("failure")
    if f and not (type(f) is dict and type(f.get("kind")) is str and type(f.get("message")) is str):
        return "failure is not a kind and a message"
    sus = get("suspect")
    if sus and not (type(sus) is dict and type(sus.get("likely_causes", [])) is list and
                    all(type(c) is str for c in sus.get("likely_causes", []))):
        return "suspect is not a table of likely causes"
    trials = get("trials", [])
    if type(trials) is not list:
        return "trials are not a list of checks"
    for t in trials:
        if type(t) is not dict or any(t.get(k) is not None and type(t.get(k)) not in _NUMBER
                                      for k in ("max_abs_err", "max_rel_err")):
            return "trials are not a list of checks"
    return None


NO_MAC = "no valid MAC (forged, edited, or written with another key)"


def done_keys(results: str, key: bytes | None = None, refused: list[str] | None = None,
              manifest_sha256: str | None = None, lines: dict[str, bytes] | None = None) -> dict[str, dict]:
    """The rows already in a results file, by job key; a torn last line is left out (an
    interrupted write: that job runs again). Read line by line, a line over MAX_ROW_BYTES
    never held whole. With `key`, a row whose MAC fails (forged, edited, or signed with
    another key), a torn line before the last, a row that is not a job's or not of a
    row's shape, and (with `manifest_sha256`) a row of another manifest is refused: not
    taken, and said in `refused`, one line for the file. `lines`: each row's line as read
    (a signed line, to be written again as it is), by job key."""
    import stat

    from ..files import FileInputError, regular_file

    out: dict[str, dict] = {}
    bad: dict[str, list[int]] = {}
    if not os.path.lexists(results):
        return out
    try:
        regular_file(results, "results file")  # a FIFO or /dev/zero is refused, never read
        fd = os.open(results, os.O_RDONLY | os.O_NONBLOCK)  # swapped for a FIFO meanwhile: no hang either
    except FileInputError as e:
        raise S.ScoreError(str(e)) from None
    except OSError as e:
        raise S.ScoreError(f"cannot read {results}: {e.strerror or e}") from None
    torn: int | None = None  # a line that is not JSON: torn if it is the last, refused if another follows
    try:
        with os.fdopen(fd, "rb") as f, _gc_paused():
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise S.ScoreError(f"{results} is not a regular file (a pipe, socket or device): a results file is "
                                   "read from a file")
            n = 0
            while True:
                line = f.readline(MAX_ROW_BYTES + 1)
                if not line:
                    break
                n += 1
                if torn is not None:
                    bad.setdefault("torn or not JSON", []).append(torn)
                    torn = None
                if len(line) > MAX_ROW_BYTES and not line.endswith(b"\n"):
                    _skip_line(f)
                    bad.setdefault(f"over {MAX_ROW_BYTES} bytes, not a row", []).append(n)
                    continue
                if not line.strip():
                    continue
                try:  # NaN and Infinity parse, but no row holding one has a valid MAC (none is written so)
                    row = json.loads(line)
                except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
                    torn = n
                    continue
                if not (isinstance(row, dict) and isinstance(row.get("job"), str)):
                    bad.setdefault("not a job's row", []).append(n)
                    continue
                if key is not None:
                    if not verified_line(line, row, key):
                        bad.setdefault(NO_MAC, []).append(n)
                        continue
                    why = row_fault(row)
                    if why:
                        bad.setdefault(f"not a row ({why})", []).append(n)
                        continue
                    if manifest_sha256 and row.get("manifest_sha256") != manifest_sha256:
                        bad.setdefault("written for another manifest (its manifest_sha256 is not this one's)",
                                       []).append(n)
                        continue
                if row["job"] not in out:
                    out[row["job"]] = row
                    if lines is not None:
                        lines[row["job"]] = line.rstrip(b"\r\n") + b"\n"
    except OSError as e:
        raise S.ScoreError(f"cannot read {results}: {e.strerror or e}") from None
    if refused is not None and key is not None and bad:
        refused.append(refusal(results, bad))
    return out


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """The cycle collector held while rows are read: they make no cycles, and its passes
    over hundreds of thousands of fresh dicts cost a fifth of a large merge."""
    import gc

    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _skip_line(f: Any) -> None:
    """Past the end of the line `f` is in, read in pieces of 1 MiB: never held whole."""
    while True:
        chunk = f.read(1 << 20)
        if not chunk:
            return
        i = chunk.find(b"\n")
        if i >= 0:
            f.seek(i + 1 - len(chunk), os.SEEK_CUR)
            return


def refusal(results: str, bad: dict[str, list[int]]) -> str:
    """One line for a file's refused rows: how many, which lines, why."""
    def lines(ns: list[int]) -> str:
        shown = ", ".join(map(str, ns[:10])) + (f" and {len(ns) - 10} more" if len(ns) > 10 else "")
        return f"line{'s' if len(ns) > 1 else ''} {shown}"

    total = sum(len(ns) for ns in bad.values())
    head = f"{results}: {total} row{'s' if total > 1 else ''} refused"
    if len(bad) == 1:
        [(why, ns)] = bad.items()
        return f"{head} ({lines(ns)}): {why}"
    return head + ": " + "; ".join(f"{len(ns)} ({lines(ns)}) {why}" for why, ns in bad.items())


def open_results(results: str) -> Any:
    """The results file, opened to append (made if missing): one ScoreError line where it
    cannot be (a read-only folder, a missing folder, a folder or a FIFO in its place)."""
    import errno
    import stat

    try:
        fd = os.open(results, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o644)
    except OSError as e:
        why = e.strerror or str(e)
        parent = os.path.dirname(os.path.abspath(results))
        if e.errno == errno.ENOENT and not os.path.isdir(parent):
            why = f"its folder {parent} does not exist"
        elif e.errno == errno.ENXIO:
            why = "a pipe no one reads"
        raise S.ScoreError(f"cannot write the results file {results}: {why}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise S.ScoreError(f"cannot write the results file {results}: not a regular file")
    return os.fdopen(fd, "ab")


class GpuPool:
    """GPUs handed out whole: a job waits until it can have `n` of them at once."""

    def __init__(self, gpus: Sequence[Any]):
        if len(set(map(str, gpus))) != len(gpus):
            raise S.ScoreError(f"GPUs {list(gpus)}: one is given twice (two jobs would time on it at once)")
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

    def line(self, merged: bool = False) -> str:
        """The running summary (`merged`: of rows merged, none run here)."""
        best = ", ".join(f"{p}: {c} {s:.2f}x" for p, (c, s) in sorted(self.best.items()))
        head = f"{self.total} rows" if merged else \
            f"{self.done + self.skipped}/{self.total} jobs ({self.skipped} from before)"
        return (f"{head}: {self.correct} correct, {self.failed} failed, {self.suspect} suspect" +
                (f"; best: {best}" if best else ""))


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
    sha = next((p.manifest_sha256 for p in problems if p.manifest_sha256), "")
    refused: list[str] = []
    before = done_keys(results, key, refused, sha or None)
    with open_results(results):  # writable, before any job runs: a read-only folder is one line, not a lost job
        pass
    for line in refused:  # rows that fail their MAC, or are another manifest's, are not believed: those jobs run again
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
    _end_torn_line(results)
    new: dict[str, dict] = {}
    stop = stop or threading.Event()

    def reference(p: Problem, tmp: str) -> tuple[Any, list[Any]]:
        with ref_locks[p.name]:
            if p.name not in refs:
                got = pool.take(p.ranks)
                try:
                    refs[p.name] = (S.run_timed(S.Target.of(p.reference), p.inputs, p.ranks, p.protocol,
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
                cand = S.run_timed(S.Target.of(job.candidate), p.inputs, p.ranks, p.protocol,
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
               "shard": f"{shard[0]}/{shard[1]}", "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
               "manifest_sha256": sha or None}
        doc = signed_doc(row, key)  # as written: NaN null, the MAC with it
        with write:
            with open_results(results) as f:
                try:
                    f.write(line_of(doc).encode())
                    f.flush()
                    os.fsync(f.fileno())
                except OSError as e:
                    raise S.ScoreError(f"cannot write the results file {results}: {e.strerror or e}") from None
            new[job.key] = doc
            row = doc
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
    except OSError as e:
        raise S.ScoreError(f"cannot write the results file {results}: {e.strerror or e}") from None


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
          key: bytes | None = None, lines: dict[str, bytes] | None = None) -> tuple[list[dict], list[str]]:
    """The rows of several shards' results, one per job (the first seen where a job is in
    two files, with a note), in manifest order (by position, as the rows carry it). Rows
    whose MAC fails under `key` (default: results_key()), torn lines before a file's last,
    rows not of a row's shape and, with `problems`, rows of another manifest are refused,
    each file's said in one note ("FILE: N rows refused (lines ...): why"); the rest are
    kept. Linear in the rows: each line is read, parsed and checked once. `lines`: each
    kept row's signed line as read, by job key (to write the merge without signing again)."""
    with _gc_paused():
        return _merge(files, problems, key if key is not None else results_key(), lines)


def _merge(files: Sequence[str], problems: Sequence[Problem] | None, mac_key: bytes,
           lines: dict[str, bytes] | None) -> tuple[list[dict], list[str]]:
    rows: dict[str, dict] = {}
    notes: list[str] = []
    sha = next((p.manifest_sha256 for p in problems if p.manifest_sha256), None) if problems else None
    twice: list[str] = []
    for f in files:
        if not os.path.lexists(f):
            raise S.ScoreError(f"{f}: no such results file")
        mine: dict[str, bytes] | None = {} if lines is not None else None
        for job_key, row in done_keys(f, mac_key, notes, sha, mine).items():
            if job_key in rows:
                twice.append(job_key)
                continue
            rows[job_key] = row
            if lines is not None and mine is not None:
                lines[job_key] = mine[job_key]
    if twice:
        notes.append(f"{len(twice)} job(s) in more than one file, the first file's row kept: {', '.join(twice[:5])}"
                     + (" ..." if len(twice) > 5 else ""))
    manifests = {r.get("manifest_sha256") for r in rows.values()}
    if not problems and len(manifests) > 1:
        notes.append(f"rows of {len(manifests)} manifests here (manifest_sha256): give --manifest to keep one's only")
    order = positions(problems) if problems else {}

    def place(r: dict) -> tuple[int, str]:
        return order.get(r["job"], r["position"]), r["job"]

    out = sorted(rows.values(), key=place)
    if problems:
        missing = [k for k in order if k not in rows]
        if missing:
            notes.append(f"{len(missing)} job(s) of the manifest have no row yet: {', '.join(missing[:5])}"
                         + (" ..." if len(missing) > 5 else ""))
    return out, notes


def check_gpus(items: Sequence[str]) -> list[str]:
    """A batch's GPUs, as --gpus or CUDA_VISIBLE_DEVICES give them: indices (0, 1, ...) or
    UUIDs (GPU-..., MIG-...). An empty item, a negative or other non-GPU, or a GPU given
    twice (0,0 or 0,00: two jobs would time on one GPU at once) is a ValueError."""
    out = []
    for g in (x.strip() for x in items):
        if not g:
            raise ValueError("an empty item (give GPUs as 0,1,2)")
        if g.isdigit() and g.isascii():
            out.append(str(int(g)))
        elif g.startswith(("GPU-", "MIG-")) and len(g) > 4 and not any(c.isspace() for c in g):
            out.append(g)
        else:
            raise ValueError(f"{g!r} is not a GPU (an index from 0, or a GPU-/MIG- UUID)")
    twice = sorted({g for g in out if out.count(g) > 1}, key=lambda g: (len(g), g))
    if twice:
        raise ValueError(f"GPU {', '.join(twice)} given twice: each GPU runs one timing at a time")
    return out


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


__all__ = ["GpuPool", "Job", "Problem", "Summary", "check_gpus", "done_keys", "jobs_of", "load_manifest", "merge",
           "parse_shard", "results_key", "row_fault", "run_batch", "signed_line", "verified", "visible_gpus"]
