"""NCCL's own telemetry, read and placed against this machine: the NCCL Inspector
profiler plugin (one JSON object per collective per line, or its Prometheus textfile),
PyTorch's Flight Recorder dumps (pickle or JSON), and nccl-tests' per-iteration JSON
(`-I 1 -J`). Each format is read from what its writer writes (the field names of
NCCL's ext-profiler/inspector, torch's FlightRecorderDetail.hpp, nccl-tests'
util.cu); docs/telemetry.md lists them.

Every call becomes a TelemetryCall in nccl-tests' size convention (an all-gather's
whole output, a reduce-scatter's whole input), placed against the profile's NCCL curve
and cost bound at its size, type and rank count; across ranks the calls of one
communicator and sequence number are compared: the skew, and the rank that held the
others up (measured where the format records when each rank's kernel started, else
inferred and labelled so)."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import LinkroofError
from ..files import read_bytes, regular_file
from ..roofline.collectives import busbw_factor
from ..roofline.traces import c10_dtype, collective_name
from .flightrec import (FR_STATES, _fr_bytes, _fr_doc, _numel, _progress_warnings, _rank_from_name,  # noqa: F401
                       _ranks_of, _SafeUnpickler, parse_flight_recorder)

MAX_LINE = 1 << 20  # an Inspector record is a few hundred bytes (a verbose one a few KB)
MAX_CALLS = 5_000_000
MAX_DUMP = 256 * 1024 * 1024

# the Inspector's ncclFuncToString -> linkroof's collective; AllGather and ReduceScatter
# record the per-rank message (the send / receive count), so nccl-tests' size is that x ranks
INSPECTOR_COLLECTIVES = {"AllReduce": "all_reduce", "AllGather": "all_gather", "ReduceScatter": "reduce_scatter",
                         "Broadcast": "broadcast", "Reduce": "reduce", "SendRecv": "sendrecv", "Send": "sendrecv",
                         "Recv": "sendrecv"}
PER_RANK_MESSAGE = {"all_gather", "reduce_scatter"}
PROM_METRICS = {"nccl_algorithm_bandwidth_gbs": "algbw", "nccl_bus_bandwidth_gbs": "busbw",
                "nccl_collective_exec_time_microseconds": "time_us"}


class TelemetryError(LinkroofError):
    """A telemetry file that cannot be read; the message names the file and the place."""


def _err(path: str, where: str | int | None, msg: str) -> TelemetryError:
    at = f" line {where}" if isinstance(where, int) else (f" {where}" if where else "")
    return TelemetryError(f"{path}{at}: {msg}")


@dataclass(frozen=True)
class TelemetryCall:
    """One collective as one rank's telemetry recorded it."""

    source: str  # "NCCL Inspector" | "NCCL Inspector (Prometheus)" | "Flight Recorder" | "nccl-tests -I 1"
    rank: int | None
    host: str
    comm: str  # communicator hash or process group
    seq: int | None
    collective: str | None
    dtype: str | None
    size_bytes: int | None  # nccl-tests' convention
    group_size: int | None
    time_s: float | None  # the recorded execution time
    recorded_busbw: float | None = None  # B/s, as the tool printed it
    timing: str = ""  # how the tool timed it (Inspector's coll_timing_source, FR's duration, ...)
    state: str = "completed"
    nodes: int | None = None
    start_us: float | None = None  # when its kernel started, on its host's clock (measured), if recorded
    stats: dict = field(default_factory=dict)  # nccl-tests: min/p50/p95/p99/max/avg/stdev us, per-process rows
    notes: tuple[str, ...] = ()

    @property
    def busbw(self) -> float | None:
        if not (self.size_bytes and self.time_s and self.time_s > 0 and self.collective and self.group_size):
            return None
        return self.size_bytes / self.time_s * busbw_factor(self.collective, self.group_size)

    @property
    def duration_s(self) -> float:  # what placement and rows call the measured time
        return self.time_s or 0.0


@dataclass
class Telemetry:
    """One file's reading."""

    source: str
    path: str
    calls: list[TelemetryCall]
    notes: list[str] = field(default_factory=list)
    progress: list[dict] = field(default_factory=list)  # Flight Recorder: per process group, the last seq of each state
    processes: list[dict] = field(default_factory=list)  # nccl-tests: the processes (host, devices) in row order


# ------------------------------------------------------------------ NCCL Inspector, JSON lines


def _inspector_call(rec: Any, path: str, no: int) -> TelemetryCall:
    if not isinstance(rec, dict) or not isinstance(rec.get("coll_perf"), dict):
        raise _err(path, no, "not an NCCL Inspector record (no coll_perf object)")
    head, meta, perf = rec.get("header") or {}, rec.get("metadata") or {}, rec["coll_perf"]
    if not isinstance(head, dict) or not isinstance(meta, dict):
        raise _err(path, no, "header and metadata must be objects")
    try:
        ranks, rank = int(head["n_ranks"]), int(head["rank"])
        raw, sn = str(perf["coll"]), int(perf["coll_sn"])
        msg, t_us = int(perf["coll_msg_size_bytes"]), float(perf["coll_exec_time_us"])
        busbw = float(perf["coll_busbw_gbs"]) * 1e9 if perf.get("coll_busbw_gbs") is not None else None
    except (KeyError, TypeError, ValueError) as e:
        raise _err(path, no, f"missing or bad field ({e}) in an Inspector record") from None
    if not (1 <= ranks <= 1 << 20 and 0 <= rank < ranks and msg >= 0 and t_us >= 0 and math.isfinite(t_us)):
        raise _err(path, no, f"rank {rank} of {ranks}, {msg} B, {t_us} us: not a collective's record")
    coll = INSPECTOR_COLLECTIVES.get(raw)
    notes = [] if coll else [f"collective {raw!r} unknown to linkroof"]
    size = msg * ranks if coll in PER_RANK_MESSAGE else msg
    start = None
    trace = perf.get("event_trace_ts")
    events = trace.get("kernel_events") if isinstance(trace, dict) else None
    if isinstance(events, list):  # verbose: each channel's kernel start on the host's clock (us)
        starts = [k.get("kernel_start_ts") for k in events if isinstance(k, dict)]
        starts = [float(s) for s in starts if isinstance(s, (int, float)) and not isinstance(s, bool) and s > 0]
        start = min(starts) if starts else None
    time_s = t_us * 1e-6 if t_us > 0 else None
    if time_s is None:
        notes.append("an execution time of 0 us (under the Inspector's 1 us resolution)")
    return TelemetryCall("NCCL Inspector", rank, str(meta.get("hostname", "")), str(head.get("id", "")), sn, coll,
                         None, size, ranks, time_s, busbw, str(perf.get("coll_timing_source", "")),
                         nodes=_opt_int(head.get("nnodes")), start_us=start, notes=tuple(notes))


def _opt_int(x: Any) -> int | None:
    try:
        return int(x) if x is not None and not isinstance(x, bool) else None
    except (TypeError, ValueError):
        return None


def read_inspector_jsonl(path: str | Path) -> Telemetry:
    """An Inspector log (`<host>-pid<pid>.log`): one record per line, streamed. A last
    line cut off (the job still writing) is left out and said; any other bad line is
    refused with its number."""
    p = regular_file(path, "NCCL Inspector log")
    calls, notes = [], []
    with open(p, "rb") as f:
        lines = iter(f)
        no, pending = 0, None
        for raw in lines:
            no += 1
            if len(raw) > MAX_LINE:
                raise _err(str(p), no, f"a line of {len(raw)} bytes: not an Inspector record")
            text = raw.strip()
            if not text:
                continue
            if pending is not None:  # a bad line with records after it: not a cut-off end
                raise pending
            try:
                rec = json.loads(text)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                # only the last line may be cut off: remember, raise if another line follows
                pending = _err(str(p), no, f"not JSON ({getattr(e, 'msg', e)})")
                cut = no
                continue
            calls.append(_inspector_call(rec, str(p), no))
            if len(calls) > MAX_CALLS:
                raise _err(str(p), no, f"more than {MAX_CALLS} records")
        if pending is not None:
            notes.append(f"line {cut} cut off (the job still writing?): left out")
    if not calls:
        raise _err(str(p), None, "no Inspector records")
    return Telemetry("NCCL Inspector", str(p), calls, notes)


# ------------------------------------------------------------------ NCCL Inspector, Prometheus textfile

_PROM_LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\}\s+(\S+)(?:\s+\d+)?$')
_PROM_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(?:,|$)')
_SIZE = re.compile(r"^([0-9.]+)(B|KB|MB|GB|TB)$")


def _labels(text: str, path: str, no: int) -> dict[str, str]:
    out, pos = {}, 0
    while pos < len(text):
        m = _PROM_LABEL.match(text, pos)
        if not m or m.end() == pos:
            raise _err(path, no, f"labels not in Prometheus' form at {text[pos:pos + 30]!r}")
        out[m.group(1)] = m.group(2)
        pos = m.end()
    return out


def parse_inspector_prom(text: str, path: str = "<prom>") -> Telemetry:
    """The Inspector's Prometheus textfile: three gauges per communicator's latest
    collective, one label set. The size is algbw x time (six significant digits each);
    the `message_size` label (1024-based, two decimals) only checks it."""
    groups: dict[tuple, dict] = {}
    for no, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _PROM_LINE.match(line)
        if not m:
            raise _err(path, no, "not a Prometheus sample line (name{labels} value)")
        if m.group(1) not in PROM_METRICS:
            continue
        labels = _labels(m.group(2), path, no)
        try:
            value = float(m.group(3))
        except ValueError:
            raise _err(path, no, f"value {m.group(3)!r} is not a number") from None
        if not math.isfinite(value) or value < 0:
            raise _err(path, no, f"value {value} is not a bandwidth or a time")
        key = tuple(sorted((k, v) for k, v in labels.items() if k != "timestamp"))
        groups.setdefault(key, {"labels": labels, "line": no})[PROM_METRICS[m.group(1)]] = value
    calls, notes = [], []
    for g in groups.values():
        lab, no = g["labels"], g["line"]
        missing = [k for k in ("algbw", "busbw", "time_us") if k not in g]
        if missing:
            raise _err(path, no, f"the sample of {lab.get('collective', '?')} #{lab.get('coll_sn', '?')} lacks "
                                 f"{', '.join(missing)}")
        ranks = _opt_int(lab.get("nranks", lab.get("n_ranks")))
        rank = _opt_int(lab.get("rank"))
        if ranks is None or rank is None or not 0 <= rank < ranks:
            raise _err(path, no, "labels rank and nranks (or n_ranks) are needed, rank below nranks")
        coll = INSPECTOR_COLLECTIVES.get(lab.get("collective", ""))
        t_s = g["time_us"] * 1e-6
        size = round(g["algbw"] * 1e9 * t_s) if t_s > 0 else None
        cnotes = ["size from algbw x time (six significant digits each)"]
        ms = _SIZE.match(lab.get("message_size", ""))
        if ms and size:
            label = float(ms.group(1)) * 1024 ** ("B", "KB", "MB", "GB", "TB").index(ms.group(2))
            label *= ranks if coll in PER_RANK_MESSAGE else 1
            if abs(label - size) > 0.01 * size + 1024:
                raise _err(path, no, f"message_size {lab['message_size']} disagrees with algbw x time ({size} B)")
        calls.append(TelemetryCall("NCCL Inspector (Prometheus)", rank, lab.get("hostname", ""),
                                   lab.get("comm_id", ""), _opt_int(lab.get("coll_sn")), coll, None, size, ranks,
                                   t_s if t_s > 0 else None, g["busbw"] * 1e9, lab.get("coll_timing_source", ""),
                                   nodes=_opt_int(lab.get("n_nodes")), notes=tuple(cnotes)))
    if not calls:
        raise _err(path, None, "no nccl_*_gbs / nccl_collective_exec_time_microseconds samples")
    notes.append("a Prometheus textfile holds each communicator's latest collective only")
    return Telemetry("NCCL Inspector (Prometheus)", path, calls, notes)


# ------------------------------------------------------------------ nccl-tests -I 1 -J


def parse_nccl_tests_iterations(text: str, path: str = "<nccl-tests>") -> Telemetry:
    """nccl-tests' JSON with per-iteration timing: per size and placement, the
    iterations' percentiles (the slowest process row per iteration), and each
    process's own row where there are several."""
    from .tools import ImportFormatError

    try:
        return _nccl_tests_iterations(text, path)
    except ImportFormatError as e:
        raise TelemetryError(str(e)) from None
    except (TypeError, ValueError, KeyError, AttributeError, IndexError) as e:
        raise _err(path, None, f"not nccl-tests -I 1 -J output ({type(e).__name__}: {e})") from None


def _nccl_tests_iterations(text: str, path: str) -> Telemetry:
    from .tools import _parse_nccl_json

    imported = _parse_nccl_json(text, path)  # the whole file checked as nccl-tests -J output
    doc = json.loads(text)
    devices = doc["config"].get("devices") or []
    processes = [{"row": i, "host": str(d.get("hostname", "")), "rank": _opt_int(d.get("rank"))}
                 for i, d in enumerate(devices)]
    by_size = {(m.spec.message_bytes, m.spec.params.get("in_place")): m for m in imported.measurements}
    calls = []
    for k, r in enumerate(doc["results"]):
        for in_place, key in ((False, "out_of_place_per_iter"), (True, "in_place_per_iter")):
            per = r.get(key)
            if per is None:
                continue
            m = by_size.get((int(r["size"]), in_place))
            if m is None:
                continue
            where = f"results[{k}].{key}"
            try:
                stats = {s: float(per[s]) for s in ("min_us", "max_us", "avg_us", "p50_us", "p95_us", "p99_us")}
                times = [float(t) for t in per.get("times_us", [])]
                rows = [[float(t) for t in row] for row in per.get("per_process_max_times_us", [])]
                skipped = int(per.get("skipped_iterations", 0))
            except (TypeError, ValueError, KeyError) as e:
                raise _err(path, where, f"missing or bad field ({e})") from None
            if not all(math.isfinite(v) and v >= 0 for v in [*stats.values(), *times, *(t for r_ in rows for t in r_)]):
                raise _err(path, where, "a time that is not a finite, non-negative number")
            if not stats["min_us"] <= stats["p50_us"] <= stats["p95_us"] <= stats["p99_us"] <= stats["max_us"]:
                raise _err(path, where, "min <= p50 <= p95 <= p99 <= max does not hold")
            if rows and len(rows) != len(devices) and devices:
                raise _err(path, where, f"{len(rows)} process rows for {len(devices)} processes")
            stats.update(times_us=times, per_process_us=rows, skipped=skipped)
            calls.append(TelemetryCall("nccl-tests -I 1", None, processes[0]["host"] if processes else "",
                                       "nccl-tests", k, m.spec.pattern, m.spec.params.get("dtype"),
                                       m.spec.message_bytes, len(m.spec.devices), stats["p50_us"] * 1e-6,
                                       None, "CUDA events per iteration (slowest process)", stats=stats,
                                       notes=("in place",) if in_place else ()))
    if not calls:
        raise _err(path, None, "no per-iteration results (run nccl-tests with -I 1 and -J FILE.json)")
    return Telemetry("nccl-tests -I 1", path, calls, list(imported.notes), processes=processes)


# ------------------------------------------------------------------ any of them


def read_telemetry(path: str | Path) -> Telemetry:
    """One telemetry file, its format told from its contents."""
    p = regular_file(path, "telemetry file")
    with open(p, "rb") as f:
        head = f.read(4096)
    text_head = head.decode("utf-8", "replace").lstrip()
    if head[:1] == b"\x80":
        return parse_flight_recorder(read_bytes(p, "Flight Recorder dump", MAX_DUMP), str(p))
    if text_head.startswith("{") and '"coll_perf"' in text_head:
        return read_inspector_jsonl(p)
    if "nccl_bus_bandwidth_gbs{" in text_head or "nccl_collective_exec_time_microseconds{" in text_head \
            or p.suffix == ".prom":
        return parse_inspector_prom(read_bytes(p, "Prometheus textfile", MAX_DUMP).decode("utf-8", "replace"),
                                    str(p))
    if text_head.startswith("{"):
        data = read_bytes(p, "telemetry file", MAX_DUMP)
        try:
            doc = json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise _err(str(p), None, f"not JSON ({getattr(e, 'msg', e)}); truncated?") from None
        if isinstance(doc, dict) and "results" in doc and "config" in doc:
            return parse_nccl_tests_iterations(data.decode("utf-8"), str(p))
        return parse_flight_recorder(data, str(p))
    raise _err(str(p), None, "not NCCL Inspector output, a Flight Recorder dump or nccl-tests JSON")


# ------------------------------------------------------------------ against this machine, across ranks


@dataclass
class TelemetryRow:
    call: TelemetryCall
    nccl_s: float | None = None
    nccl_how: str = ""
    bound_s: float | None = None
    placement: Any = None

    @property
    def fraction_of_nccl(self) -> float | None:
        t = self.call.time_s
        return self.nccl_s / t if self.nccl_s and t else None

    @property
    def fraction_of_bound(self) -> float | None:
        t = self.call.time_s
        return self.bound_s / t if self.bound_s and t else None

    def to_dict(self) -> dict:
        c = self.call
        d = {k: v for k, v in dataclasses.asdict(c).items() if k != "stats"}
        d.update(busbw=c.busbw, nccl_s=self.nccl_s, nccl_how=self.nccl_how, fraction_of_nccl=self.fraction_of_nccl,
                 bound_s=self.bound_s, fraction_of_bound=self.fraction_of_bound, notes=list(c.notes))
        if c.stats:
            d["stats"] = {k: v for k, v in c.stats.items() if k not in ("times_us", "per_process_us")}
        return d


@dataclass(frozen=True)
class Skew:
    """One collective across the ranks that recorded it: the spread of their start (or
    of their times) and the rank that held the others up."""

    comm: str
    seq: int
    collective: str | None
    size_bytes: int | None
    ranks: tuple[int, ...]
    skew_s: float
    last_rank: int | None
    how: str  # "measured: ..." | "inferred: ..."


@dataclass(frozen=True)
class RankSummary:
    """Per rank (or per nccl-tests process row): its calls, its median time, how often
    it was the one the others waited for, and by how much on average."""

    rank: int | None
    host: str
    calls: int
    median_s: float | None
    times_last: int
    mean_lateness_s: float
    how: str


@dataclass
class TelemetryReport:
    files: list[Telemetry]
    rows: list[TelemetryRow]
    skews: list[Skew]
    per_rank: list[RankSummary]
    per_node: list[dict]
    warnings: list[str]

    def to_dict(self) -> dict:
        return {"files": [{"path": t.path, "source": t.source, "notes": t.notes, "progress": t.progress}
                          for t in self.files],
                "collectives": [r.to_dict() for r in self.rows],
                "skews": [dataclasses.asdict(s) for s in self.skews],
                "per_rank": [dataclasses.asdict(r) for r in self.per_rank], "per_node": self.per_node,
                "warnings": self.warnings}


def _skews(calls: list[TelemetryCall]) -> list[Skew]:
    groups: dict[tuple, list[TelemetryCall]] = {}
    for c in calls:
        if c.rank is not None and c.seq is not None and c.source != "nccl-tests -I 1":
            groups.setdefault((c.source, c.comm, c.seq), []).append(c)
    out = []
    for (_src, comm, seq), cs in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][2])):
        if len({c.rank for c in cs}) < 2:
            continue
        kinds = {(c.collective, c.size_bytes) for c in cs}
        if len(kinds) > 1:  # one sequence number, different calls: never compared
            continue
        coll, size = kinds.pop()
        ranks = tuple(sorted(c.rank for c in cs))
        starts = [c for c in cs if c.start_us is not None]
        if len(starts) == len(cs):
            first, last = min(starts, key=lambda c: c.start_us), max(starts, key=lambda c: c.start_us)
            how = ("measured: kernel starts on the hosts' clocks" if cs[0].source.startswith("NCCL Inspector")
                   else "measured, coarse: when each rank's watchdog saw the call start (host clocks)")
            out.append(Skew(comm, seq, coll, size, ranks, (last.start_us - first.start_us) * 1e-6, last.rank, how))
            continue
        timed = [c for c in cs if c.time_s]
        if len(timed) == len(cs):
            # a collective waits for every rank: the one that came last waited least
            short, long_ = min(timed, key=lambda c: c.time_s), max(timed, key=lambda c: c.time_s)
            out.append(Skew(comm, seq, coll, size, ranks, long_.time_s - short.time_s, short.rank,
                            "inferred: the rank with the shortest time arrived last (the others waited for it)"))
    return out


def _per_rank(tels: list[Telemetry], calls: list[TelemetryCall], skews: list[Skew]) -> list[RankSummary]:
    out = []
    tests = [t for t in tels if t.source == "nccl-tests -I 1"]
    for t in tests:  # the per-process rows of each size: the slowest row per iteration is the straggler
        rows_by_proc: dict[int, list[float]] = {}
        late: dict[int, list[float]] = {}
        for c in t.calls:
            rows = c.stats.get("per_process_us") or []
            if len(rows) < 2:
                continue
            for i in range(min(len(r) for r in rows)):
                col = [r[i] for r in rows]
                worst = max(range(len(col)), key=col.__getitem__)
                late.setdefault(worst, []).append((col[worst] - min(col)) * 1e-6)
            for p, r in enumerate(rows):
                rows_by_proc.setdefault(p, []).extend(r)
        for p, times in sorted(rows_by_proc.items()):
            info = t.processes[p] if p < len(t.processes) else {}
            lat = late.get(p, [])
            out.append(RankSummary(info.get("rank", p), info.get("host", ""), len(times),
                                   statistics.median(times) * 1e-6 if times else None, len(lat),
                                   sum(lat) / len(lat) if lat else 0.0,
                                   "measured: per iteration, the process row with the longest time (nccl-tests' "
                                   "per-process maxima)"))
    by_rank: dict[int, list[TelemetryCall]] = {}
    for c in calls:
        if c.rank is not None and c.source != "nccl-tests -I 1":
            by_rank.setdefault(c.rank, []).append(c)
    lateness: dict[int, list[float]] = {}
    hows = {s.how.split(":")[0] for s in skews}
    for s in skews:
        if s.last_rank is not None:
            lateness.setdefault(s.last_rank, []).append(s.skew_s)
    how = " and ".join(sorted(hows)) or "no call recorded on two ranks"
    for rank, cs in sorted(by_rank.items()):
        times = [c.time_s for c in cs if c.time_s]
        lat = lateness.get(rank, [])
        out.append(RankSummary(rank, cs[0].host, len(cs), statistics.median(times) if times else None, len(lat),
                               sum(lat) / len(lat) if lat else 0.0, how))
    return out


def _per_node(per_rank: list[RankSummary]) -> list[dict]:
    nodes: dict[str, list[RankSummary]] = {}
    for r in per_rank:
        nodes.setdefault(r.host or "unknown host", []).append(r)
    out = []
    for host, rs in sorted(nodes.items()):
        meds = [r.median_s for r in rs if r.median_s]
        out.append({"host": host, "ranks": [r.rank for r in rs], "times_last": sum(r.times_last for r in rs),
                    "median_s": statistics.median(meds) if meds else None,
                    "worst_rank": max(rs, key=lambda r: (r.times_last, r.mean_lateness_s)).rank})
    return out


def analyze_telemetry(tels: list[Telemetry], profile: Any) -> TelemetryReport:
    """Every call against the profile's NCCL figure and cost bound at its collective,
    size, type and rank count; the skew of each call recorded on several ranks; per
    rank and node, how often each held the others up."""
    from ..roofline.model import MachineModel
    from .traces import place_row

    model = MachineModel.from_profile(profile)
    placed: dict[tuple, Any] = {}
    rows = []
    for t in tels:
        for c in t.calls:
            row = TelemetryRow(c)
            if c.collective and c.size_bytes and c.group_size and c.group_size > 1:
                place_row(row, dataclasses.replace(c, rank=None), c.time_s, profile, model, placed,
                          (c.collective, c.size_bytes, c.group_size, c.dtype))
                if c.dtype is None and not row.nccl_how.startswith("not placed"):
                    row.nccl_how += "; the call's data type is not recorded: the profile's figure at fp32"
            elif c.group_size == 1:
                row.nccl_how = "a one-rank group: nothing crosses a link"
            else:
                row.nccl_how = "not placed: " + ("collective unknown" if not c.collective else
                                                 "size unknown" if not c.size_bytes else "group size unknown")
            rows.append(row)
    calls = [c for t in tels for c in t.calls]
    skews = _skews(calls)
    per_rank = _per_rank(tels, calls, skews)
    warnings = []
    for t in tels:
        warnings += [f"{Path(t.path).name}: {n}" for n in t.notes]
    warnings += _progress_warnings(tels)
    ranks = [c.rank for c in calls if c.rank is not None]
    if tels and len({t.source for t in tels}) > 1:
        warnings.append("files of different formats given together: each is read as its own, skews within one "
                        "format only")
    if ranks and len({c.host for c in calls if c.host}) > 1 and any(s.how.startswith("measured") for s in skews):
        warnings.append("ranks on several hosts: skews compare the hosts' clocks, which may differ by more than the "
                        "skew")
    return TelemetryReport(tels, rows, skews, per_rank, _per_node(per_rank), warnings)
