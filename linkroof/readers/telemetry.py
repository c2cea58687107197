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
import hashlib
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

SNIFF = 4096  # a file's format is told from its first 4 KB (and the whole of a JSON first line)
MAX_LINE = 1 << 20  # an Inspector record is a few hundred bytes (a verbose one a few KB)
MAX_CALLS = 5_000_000
MAX_DUMP = 256 * 1024 * 1024

# the Inspector's ncclFuncToString -> linkroof's collective; AllGather and ReduceScatter
# record the per-rank message (the send / receive count), so nccl-tests' size is that x ranks
INSPECTOR_COLLECTIVES = {"AllReduce": "all_reduce", "AllGather": "all_gather", "ReduceScatter": "reduce_scatter",
                         "Broadcast": "broadcast", "Reduce": "reduce", "SendRecv": "sendrecv", "Send": "sendrecv",
                         "Recv": "sendrecv", "AllGatherV": "all_gather"}
PER_RANK_MESSAGE = {"all_gather", "reduce_scatter"}


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
    # a size the tool recorded only as a bucket: [low, high) bytes in nccl-tests' convention (size_bytes then None)
    size_range: tuple[int, int] | None = None
    recorded_algbw: float | None = None  # B/s, as the tool printed it or derived from its busbw (notes say which)
    device: str = ""  # the GPU the tool names (Prometheus' gpu label), where it names no rank

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
    digest: str = ""  # sha256 of the file's bytes: the same file given twice is read once


# ------------------------------------------------------------------ JSON, taken strictly

MAX_INT_DIGITS = 20  # the writers write uint64 at most (20 digits)
MAX_FLOAT_CHARS = 64  # a double printed in full is under 30 characters
MAX_MESSAGE = 1 << 50  # bytes: a collective's message over 1 PiB is not one
MAX_TIME_US = 86_400e6  # a collective that took over a day did not complete


class JSONRefused(ValueError):
    """A JSON document linkroof will not take although it parses: a number too long or
    beyond a double, NaN or Infinity, nesting deeper than Python's recursion limit."""


def _parse_int(s: str) -> int:
    digits = len(s) - s.startswith("-")
    if digits > MAX_INT_DIGITS:
        raise JSONRefused(f"an integer of {digits} digits (the writers write 20 at most)")
    return int(s)


def _parse_float(s: str) -> float:
    if len(s) > MAX_FLOAT_CHARS:
        raise JSONRefused(f"a number of {len(s)} characters")
    v = float(s)
    if not math.isfinite(v):
        raise JSONRefused(f"{s} is beyond a double")
    return v


def _parse_constant(s: str) -> Any:
    raise JSONRefused(f"{s} is not a number (JSON has no NaN or Infinity)")


def loads_strict(text: str) -> Any:
    """json.loads, refusing (JSONRefused) what none of these writers writes; a syntax
    error stays a json.JSONDecodeError (a cut-off last line is one)."""
    try:
        return json.loads(text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant)
    except RecursionError:
        raise JSONRefused("nested too deep") from None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _name(x: Any, bad: list[str]) -> str:
    """A name from a file: a lone surrogate (a JSON escape of half a character) becomes
    U+FFFD and is said, so that printing and writing it never fails."""
    s = x if isinstance(x, str) else "" if x is None else str(x)
    if _SURROGATE.search(s):
        bad.append(ascii(s)[:60])
        s = _SURROGATE.sub("\ufffd", s)
    return s


def _int(x: Any, what: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int):  # true is not 1
        raise ValueError(f"{what} is {str(x)[:40]!r}, not an integer")
    return x


def _number(x: Any, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"{what} is {str(x)[:40]!r}, not a number")
    return float(x)


# ------------------------------------------------------------------ NCCL Inspector, JSON lines

# inspector_json.cc's inspector_output_format_version, as NVIDIA/nccl's plugins/profiler/inspector
# wrote it: v4.0 (header, metadata and coll_perf or p2p_perf on each line), v4.1 and v4.2 (a
# dump_stats marker line first in each communicator's dump; v4.2 adds coll_algo, coll_proto),
# v4.3 (coll_user_tag; or, in the branch inspector_json_reader.py reads, records after the
# marker without header or metadata), v4.4 (headerless records after the marker, proxy_trace)
INSPECTOR_JSON_VERSIONS = ("v4.0", "v4.1", "v4.2", "v4.3", "v4.4")
INSPECTOR_PAYLOADS = ("coll_perf", "p2p_perf", "proxy_trace")


def _inspector_version(meta: Any, path: str, no: int) -> str:
    v = meta.get("inspector_output_format_version") if isinstance(meta, dict) else None
    if not isinstance(v, str):
        raise _err(path, no, "missing or bad field (metadata.inspector_output_format_version) in an Inspector record")
    if v not in INSPECTOR_JSON_VERSIONS:
        raise _err(path, no, f"NCCL Inspector output format {v[:20]!r}: linkroof reads {INSPECTOR_JSON_VERSIONS[0]} "
                             f"to {INSPECTOR_JSON_VERSIONS[-1]} (a newer Inspector wrote this file)")
    return v


def _inspector_call(head: dict, meta: dict, kind: str, perf: Any, path: str, no: int,
                    bad: list[str]) -> TelemetryCall:
    """One coll_perf or p2p_perf object (inspectorCompletedColl / inspectorCompletedP2p),
    with the header and metadata it carries or inherits from its dump_stats marker."""
    p = "coll" if kind == "coll_perf" else "p2p"
    try:
        if not isinstance(perf, dict):
            raise ValueError(f"{kind} is not an object")
        ranks, rank = _int(head.get("n_ranks"), "header.n_ranks"), _int(head.get("rank"), "header.rank")
        raw = perf.get(p)
        if not isinstance(raw, str):
            raise ValueError(f"{kind}.{p} is {str(raw)[:40]!r}")
        sn, msg = _int(perf.get(f"{p}_sn"), f"{p}_sn"), _int(perf.get(f"{p}_msg_size_bytes"), f"{p}_msg_size_bytes")
        t_us = _number(perf.get(f"{p}_exec_time_us"), f"{p}_exec_time_us")
        # json.cc's jsonDouble writes a NaN as the string "nan": no figure
        bw = {k: _number(perf[f"{p}_{k}_gbs"], f"{p}_{k}_gbs") * 1e9 for k in ("algobw", "busbw")
              if perf.get(f"{p}_{k}_gbs") not in (None, "nan")}
        peer = _int(perf.get("p2p_peer"), "p2p_peer") if p == "p2p" else None
    except ValueError as e:
        raise _err(path, no, f"missing or bad field ({e}) in an Inspector record") from None
    if not (1 <= ranks <= 1 << 20 and 0 <= rank < ranks and 0 <= t_us <= MAX_TIME_US):
        raise _err(path, no, f"rank {rank} of {ranks}, {msg} B, {t_us} us: not a collective's record")
    if not 0 <= msg <= MAX_MESSAGE:
        raise _err(path, no, f"a message of {msg} B (over 1 PiB): not a collective's record")
    if any(v < 0 for v in bw.values()) or (peer is not None and not 0 <= peer < ranks):
        raise _err(path, no, f"a negative bandwidth or a peer outside the {ranks} ranks: not an Inspector record")
    raw = _name(raw, bad)
    if p == "p2p":  # p2p_sn counts per operation and peer: never compared across ranks
        coll, size, group, seq = "sendrecv", msg, 2, None
        notes = [f"{raw} #{sn} with peer {peer} (point-to-point)"]
    else:
        coll = INSPECTOR_COLLECTIVES.get(raw)
        size, group, seq = (msg * ranks if coll in PER_RANK_MESSAGE else msg), ranks, sn
        notes = [] if coll else [f"collective {raw!r} unknown to linkroof"]
    algo = [_name(perf.get(k), bad) for k in ("coll_algo", "coll_proto") if isinstance(perf.get(k), str)]
    if algo:
        notes.append("algorithm " + "/".join(algo))
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
    return TelemetryCall("NCCL Inspector", rank, _name(meta.get("hostname", ""), bad), _name(head.get("id", ""), bad),
                         seq, coll, None, size, group, time_s, bw.get("busbw"),
                         _name(perf.get(f"{p}_timing_source", ""), bad), nodes=_opt_int(head.get("nnodes")),
                         start_us=start, notes=tuple(notes), recorded_algbw=bw.get("algobw"))


def _opt_int(x: Any) -> int | None:
    try:
        return int(x) if x is not None and not isinstance(x, bool) else None
    except (TypeError, ValueError):
        return None


def read_inspector_jsonl(path: str | Path) -> Telemetry:
    """An Inspector log (`<host>-pid<pid>.log`): one record per line, streamed, each line
    read to at most MAX_LINE bytes. Every format inspector_json.cc has written is read:
    from v4.1 each communicator's dump starts with a `dump_stats` marker (records written
    and dropped), and from the headerless form (v4.3 in one branch, v4.4) the records after
    it carry no header or metadata: they take the marker's, and are as many as it
    announced. A last line cut off (the job still writing) is left out and said; any other
    bad line is refused with its number. The same record twice is counted once, and said."""
    p = regular_file(path, "NCCL Inspector log")
    path_s = str(p)
    calls, notes, bad = [], [], []
    digest = hashlib.sha256()
    seen: set[tuple] = set()
    versions: set[str] = set()
    drops: dict[tuple, dict[str, int]] = {}
    repeated = proxy = 0
    marker = None  # the last dump_stats: its header, metadata, line, records still to come, whether any came
    no, pending, cut, reason = 0, None, 0, ""

    def owed(m: dict | None) -> int:
        return sum(m["left"].values()) if m and m["used"] else 0

    with open(p, "rb") as f:
        while True:
            raw = f.readline(MAX_LINE + 1)  # bounded: a line of 5 GB is never held
            if not raw:
                break
            no += 1
            if len(raw) > MAX_LINE:
                raise _err(path_s, no, f"a line of over {MAX_LINE} bytes: not an Inspector record (read no further)")
            digest.update(raw)
            text = raw.strip()
            if not text:
                continue
            if pending is not None:  # a bad line with records after it: not a cut-off end
                raise pending
            try:
                rec = loads_strict(text.decode("utf-8"))
            except UnicodeDecodeError as e:  # only the last line may be cut off: remember, raise if one follows
                reason = f"not UTF-8 (byte {e.start + 1} is 0x{text[e.start]:02x})"
                pending, cut = _err(path_s, no, reason), no
                continue
            except JSONRefused as e:
                raise _err(path_s, no, f"{e}: not an Inspector record") from None
            except json.JSONDecodeError as e:
                reason = f"not JSON ({e.msg})"
                pending, cut = _err(path_s, no, reason), no
                continue
            if not isinstance(rec, dict):
                raise _err(path_s, no, "not an NCCL Inspector record (not an object)")
            if "dump_stats" in rec:  # inspectorCommInfoDumpStats: the start of one communicator's dump
                if owed(marker):
                    raise _err(path_s, no, f"the dump of line {marker['no']} announced {owed(marker)} more records "
                                           "than followed it (interleaved or broken dumps)")
                head, meta, stats = rec.get("header"), rec.get("metadata"), rec["dump_stats"]
                if not (isinstance(head, dict) and isinstance(stats, dict)):
                    raise _err(path_s, no, "a dump_stats marker without its header and counts")
                versions.add(_inspector_version(meta, path_s, no))
                try:
                    mrank = _int(head.get("rank"), "header.rank")
                    left = {k: _int(stats.get(f"{k.split('_')[0]}_records", 0), f"{k.split('_')[0]}_records")
                            for k in INSPECTOR_PAYLOADS}
                    dropped = {k: _int(stats.get(f"{k}_dropped_total", 0), f"{k}_dropped_total")
                               for k in ("coll", "p2p")}
                except ValueError as e:
                    raise _err(path_s, no, f"missing or bad field ({e}) in a dump_stats marker") from None
                if not all(0 <= n <= MAX_CALLS for n in [*left.values(), *dropped.values()]):
                    raise _err(path_s, no, f"dump_stats counts {left | dropped} out of range")
                marker = {"head": head, "meta": meta, "no": no, "left": left, "used": False}
                d = drops.setdefault((_name(head.get("id", ""), bad), mrank), {})
                for k, n in dropped.items():  # cumulative totals: the last marker's is the file's
                    d[k] = max(d.get(k, 0), n)
                continue
            kinds = [k for k in INSPECTOR_PAYLOADS if k in rec]
            if len(kinds) != 1:
                raise _err(path_s, no, "not an NCCL Inspector record (" + (
                    "none of dump_stats, coll_perf, p2p_perf, proxy_trace)" if not kinds else
                    f"both {kinds[0]} and {kinds[1]})"))
            kind = kinds[0]
            if "header" in rec or "metadata" in rec:
                head, meta = rec.get("header"), rec.get("metadata")
                if not isinstance(head, dict):
                    raise _err(path_s, no, "missing or bad field (header) in an Inspector record")
                versions.add(_inspector_version(meta, path_s, no))
            else:  # headerless: the marker's header and metadata, within the number it announced
                if marker is None:
                    raise _err(path_s, no, f"a {kind} record without header before any dump_stats marker")
                if len(rec) != 1:
                    raise _err(path_s, no, f"a {kind} record without header carries other fields")
                if marker["left"][kind] <= 0:
                    raise _err(path_s, no, f"more {kind} records than the dump_stats marker of line "
                                           f"{marker['no']} announced")
                marker["left"][kind] -= 1
                marker["used"] = True
                head, meta = marker["head"], marker["meta"]
            if kind == "proxy_trace":
                proxy += 1
                continue
            call = _inspector_call(head, meta, kind, rec[kind], path_s, no, bad)
            key = (call.comm, call.rank, kind, call.notes[0] if kind == "p2p_perf" else call.collective,
                   rec[kind].get("coll"), call.seq)
            if key in seen:
                repeated += 1
                continue
            seen.add(key)
            calls.append(call)
            if len(calls) > MAX_CALLS:
                raise _err(path_s, no, f"more than {MAX_CALLS} records")
    if pending is not None:
        notes.append(f"line {cut} cut off ({reason}; the job still writing?): left out")
    if owed(marker):
        notes.append(f"the last dump (line {marker['no']}) lacks {owed(marker)} of the records it announced (the job "
                     "still writing?)")
    if not calls:
        raise _err(path_s, None, "no Inspector records" + (f" (only {proxy} proxy_trace records)" if proxy else ""))
    notes.insert(0, "NCCL Inspector JSON format " + ", ".join(sorted(versions)))
    for (comm, rank), d in sorted(drops.items(), key=lambda kv: kv[0]):
        lost = {k: n for k, n in d.items() if n}
        if lost:
            notes.append(f"the Inspector dropped {' and '.join(f'{n} {k}' for k, n in lost.items())} records of "
                         f"communicator {comm} rank {rank} before writing them (its ring was full: raise "
                         "NCCL_INSPECTOR_DUMP_COLL_RING_SIZE / _P2P_RING_SIZE): those calls are missing here")
    if proxy:
        notes.append(f"{proxy} proxy_trace records (the network proxy's steps) not read")
    if repeated:
        notes.append(f"{repeated} records repeated (same communicator, rank, collective and sequence number): "
                     "counted once")
    if bad:
        notes.append(f"{len(bad)} names with a lone surrogate (half a UTF-16 character), e.g. {bad[0]}: shown with "
                     "U+FFFD")
    return Telemetry("NCCL Inspector", path_s, calls, notes, digest=digest.hexdigest())


# ------------------------------------------------------------------ NCCL Inspector, Prometheus textfile

MAX_PROM = 64 * 1024 * 1024  # a textfile holds a few lines per bucket: kilobytes
MAX_PROM_LINE = 64 * 1024  # inspector_prom.cc writes each sample from a 2 KB buffer
# inspector_prom.cc's version label, "v<profiler interface>.<kInspectorPromFormatMinor>": v5.1 in
# NCCL 2.30; NCCL 2.29 wrote no version label (algbw, busbw and time of each communicator's
# latest collective, with rank and coll_sn)
PROM_VERSIONS = ("v5.0", "v5.1")
PROM_COLL = {"nccl_algorithm_bandwidth_gbs": "algbw", "nccl_bus_bandwidth_gbs": "busbw",
             "nccl_collective_exec_time_microseconds": "time_us"}
PROM_P2P = {"nccl_p2p_bus_bandwidth_gbs": "busbw", "nccl_p2p_exec_time_microseconds": "time_us"}
PROM_METRICS = PROM_COLL | PROM_P2P
_UNITS = ("B", "KB", "MB", "GB", "TB")
_BUCKET = re.compile(r"^(\d{1,7})-(\d{1,7})(B|KB|MB|GB|TB)$")
_SIZE = re.compile(r"^([0-9.]{1,20})(B|KB|MB|GB|TB)$")


def prom_bucket(label: str) -> tuple[int, int] | None:
    """inspectorPromFormatMessageSizeRange's label as bytes [low, high): "4-5GB" is
    [4 GiB, 5 GiB) (1024-based units, the size floored to a whole unit), "0B" is [0, 1);
    None if `label` is not one."""
    if label == "0B":
        return (0, 1)
    m = _BUCKET.match(label)
    if not m:
        return None
    lo, hi, unit = int(m[1]), int(m[2]), _UNITS.index(m[3])
    if hi != lo + 1 or lo < 1 or (lo >= 1024 and m[3] != "TB"):
        return None
    return lo * 1024 ** unit, hi * 1024 ** unit


def _prom_groups(text: str, path: str) -> tuple[dict, int]:
    """The exposition parsed by prometheus_client's own parser: per label set (and
    collective or p2p), its gauges; how many samples repeated one already read."""
    from prometheus_client.parser import text_string_to_metric_families

    for no, line in enumerate(text.split("\n"), 1):
        if len(line) > MAX_PROM_LINE:
            raise _err(path, no, f"a line of {len(line)} characters: the Inspector writes lines under 2 KB")
    groups: dict[tuple, dict] = {}
    repeated = 0
    try:
        for fam in text_string_to_metric_families(text):
            for s in fam.samples:
                kind = PROM_METRICS.get(s.name)
                if kind is None:
                    continue
                try:
                    value = float(s.value)
                except (OverflowError, TypeError, ValueError):  # an integer of hundreds of digits
                    value = math.inf
                if not math.isfinite(value) or value < 0:
                    raise _err(path, None, f"{s.name}: value {str(s.value)[:20]} is not a bandwidth or a time")
                labels = {str(k): str(v) for k, v in s.labels.items()}
                key = (s.name in PROM_P2P, tuple(sorted((k, v) for k, v in labels.items() if k != "timestamp")))
                g = groups.setdefault(key, {"labels": labels})
                if kind in g:  # the same gauge of one label set twice: the first is kept
                    repeated += 1
                    continue
                g[kind] = float(value)
    except TelemetryError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError, OverflowError) as e:
        raise _err(path, None, f"not a Prometheus exposition ({type(e).__name__}: {str(e)[:120]})") from None
    return groups, repeated


def parse_inspector_prom(text: str, path: str = "<prom>") -> Telemetry:
    """The Inspector's Prometheus textfile, parsed with prometheus_client's parser. v5.x
    (NCCL 2.30, inspector_prom.cc): per GPU and dump window, one pair of gauges per
    bucket of calls (communicator, collective, 1024-based message-size range, algorithm
    and protocol): their busbw's geometric mean and their mean time; no rank, sequence
    number or algbw. The size is the bucket, a range (size_range), placed at its lower
    bound; algbw is busbw over the collective's busbw factor, said. NCCL 2.29's form (no
    version label): algbw, busbw and time of each communicator's latest collective; its
    size is algbw x time, checked against `message_size`."""
    groups, repeated = _prom_groups(text, path)
    calls, bad = [], []
    versions = set()
    for (p2p, _key), g in groups.items():
        lab = g["labels"]
        what = f"{lab.get('p2p_operation' if p2p else 'collective', '?')} ({lab.get('message_size', '?')})"
        missing = [k for k in ("busbw", "time_us") if k not in g]
        version = lab.get("version")
        if version is None and p2p:
            raise _err(path, None, f"the samples of {what} have no version label: NCCL 2.29's unversioned form "
                                   "records collectives only (p2p samples come with v5's label)")
        if version is None and "algbw" not in g:
            missing.insert(0, "algbw")
        if missing:
            raise _err(path, None, f"the samples of {what} lack {', '.join(missing)}")
        if g["time_us"] > MAX_TIME_US:
            raise _err(path, None, f"{what}: {g['time_us']} us is over a day: not a collective's time")
        if version is None:
            calls.append(_prom_latest(g, lab, path, bad))
            versions.add("NCCL 2.29's form, without a version label")
            continue
        if version not in PROM_VERSIONS:
            raise _err(path, None, f"Inspector Prometheus format {version[:20]!r}: linkroof reads "
                                   f"{', '.join(PROM_VERSIONS)} and NCCL 2.29's unversioned form (a newer Inspector "
                                   "wrote this file)")
        versions.add(version)
        calls.append(_prom_bucket_call(g, lab, p2p, path, bad))
    if not calls:
        raise _err(path, None, "no nccl_bus_bandwidth_gbs / nccl_collective_exec_time_microseconds samples")
    notes = ["NCCL Inspector Prometheus format " + ", ".join(sorted(versions))]
    if any(v in PROM_VERSIONS for v in versions):
        notes.append("v5: per GPU, the last dump window's calls in buckets (collective, size range, algorithm): "
                     "no rank or sequence number, so no skews; how many calls a bucket holds is not recorded")
    else:
        notes.append("a Prometheus textfile holds each communicator's latest collective only")
    if repeated:
        notes.append(f"{repeated} samples repeated one of the same name and labels: the first kept")
    if bad:
        notes.append(f"{len(bad)} names with a lone surrogate, e.g. {bad[0]}: shown with U+FFFD")
    return Telemetry("NCCL Inspector (Prometheus)", path, calls, notes)


def _prom_bucket_call(g: dict, lab: dict, p2p: bool, path: str, bad: list[str]) -> TelemetryCall:
    """One v5 bucket (inspectorPromWriteCollBucket / inspectorPromWriteP2pBucket)."""
    raw = lab.get("p2p_operation" if p2p else "collective", "")
    ranks = _opt_int(lab.get("nranks"))
    if ranks is None or not 1 <= ranks <= 1 << 20:
        raise _err(path, None, f"{raw}: nranks {lab.get('nranks')!r} is not a rank count")
    rng = prom_bucket(lab.get("message_size", ""))
    if rng is None:
        raise _err(path, None, f"{raw}: message_size {lab.get('message_size', '')[:30]!r} is not one of the "
                               "Inspector's buckets (like 4-5GB)")
    coll = "sendrecv" if p2p else INSPECTOR_COLLECTIVES.get(raw)
    per_rank = coll in PER_RANK_MESSAGE  # the bucket is of the per-rank message (the Inspector's msgSizeBytes)
    lo, hi = (rng[0] * ranks, rng[1] * ranks) if per_rank else rng
    if lo > MAX_MESSAGE:
        raise _err(path, None, f"{raw}: a message of {lo} B or more (over 1 PiB): not a collective's")
    busbw, t_us = g["busbw"], g["time_us"]
    notes = [f"size recorded only as the bucket {lab['message_size']}" + (" of each rank's message" if per_rank else "")
             + f": [{lo}, {hi}) B in nccl-tests' convention"]
    if not coll:
        notes.append(f"collective {raw!r} unknown to linkroof")
    factor = 1.0 if p2p else busbw_factor(coll, ranks) if coll else None
    algbw = busbw / factor if busbw > 0 and factor else None
    if algbw is not None:
        notes.append(f"algbw {algbw:.6g} GB/s derived: busbw / {factor:.6g}, the Inspector's busbw factor for "
                     f"{coll} on {ranks} ranks (v5 records no algbw)")
        implied = algbw * 1e9 * t_us * 1e-6
        if implied < lo * (1 - 1e-5) - 1:  # GM(size/time) x mean(time) >= GM(size) >= lo when every call was timed
            notes.append(f"algbw x time is {implied:.0f} B, under the bucket: some calls were timed 0 us")
    elif busbw == 0:
        notes.append("busbw 0: no call in the bucket had a bandwidth (all timed 0 us?)")
    notes.append("time: the mean of the bucket's calls in the dump window, busbw their geometric mean")
    if lab.get("algo_proto"):
        notes.append(f"algorithm and protocol {_name(lab['algo_proto'], bad)}")
    return TelemetryCall("NCCL Inspector (Prometheus)", None, _name(lab.get("node", ""), bad),
                         _name(lab.get("comm_name", ""), bad), None, coll, None, None, 2 if p2p else ranks,
                         t_us * 1e-6 if t_us > 0 else None, busbw * 1e9, "mean of the bucket's calls",
                         nodes=_opt_int(lab.get("n_nodes")), notes=tuple(notes), size_range=(lo, hi),
                         recorded_algbw=algbw * 1e9 if algbw is not None else None,
                         device=_name(lab.get("gpu", ""), bad))


def _prom_latest(g: dict, lab: dict, path: str, bad: list[str]) -> TelemetryCall:
    """NCCL 2.29's sample of one communicator's latest collective: the size is algbw x
    time (six significant digits each); the `message_size` label (1024-based, two
    decimals) only checks it."""
    ranks = _opt_int(lab.get("nranks", lab.get("n_ranks")))
    rank = _opt_int(lab.get("rank"))
    if ranks is None or rank is None or not 0 <= rank < ranks <= 1 << 20:
        raise _err(path, None, "labels rank and nranks (or n_ranks) are needed, rank below nranks")
    coll = INSPECTOR_COLLECTIVES.get(lab.get("collective", ""))
    t_s = g["time_us"] * 1e-6
    size = round(g["algbw"] * 1e9 * t_s) if t_s > 0 else None
    if size is not None and size > MAX_MESSAGE:
        raise _err(path, None, f"algbw x time is {size} B (over 1 PiB): not a collective's")
    ms = _SIZE.match(lab.get("message_size", ""))
    if ms and size:
        label = float(ms.group(1)) * 1024 ** _UNITS.index(ms.group(2))
        label *= ranks if coll in PER_RANK_MESSAGE else 1
        if abs(label - size) > 0.01 * size + 1024:
            raise _err(path, None, f"message_size {lab['message_size']} disagrees with algbw x time ({size} B)")
    return TelemetryCall("NCCL Inspector (Prometheus)", rank, _name(lab.get("hostname", ""), bad),
                         _name(lab.get("comm_id", ""), bad), _opt_int(lab.get("coll_sn")), coll, None, size, ranks,
                         t_s if t_s > 0 else None, g["busbw"] * 1e9, _name(lab.get("coll_timing_source", ""), bad),
                         nodes=_opt_int(lab.get("n_nodes")),
                         notes=("size from algbw x time (six significant digits each)",),
                         recorded_algbw=g["algbw"] * 1e9, device=_name(lab.get("gpu_device_id", ""), bad))


# ------------------------------------------------------------------ nccl-tests -I 1 -J


def parse_nccl_tests_iterations(text: str, path: str = "<nccl-tests>") -> Telemetry:
    """nccl-tests' JSON with per-iteration timing: per size and placement, the
    iterations' percentiles (the slowest process row per iteration), and each
    process's own row where there are several."""
    from .tools import ImportFormatError

    try:
        doc = loads_strict(text)  # before tools' parser: long numbers, NaN, deep nesting refused in one line
    except JSONRefused as e:
        raise _err(path, None, f"{e}: not nccl-tests output") from None
    except json.JSONDecodeError as e:
        raise _err(path, e.lineno, f"not valid JSON ({e.msg}); truncated?") from None
    try:
        return _nccl_tests_iterations(text, path, doc)
    except ImportFormatError as e:
        raise TelemetryError(str(e)) from None
    except (TypeError, ValueError, KeyError, AttributeError, IndexError) as e:
        raise _err(path, None, f"not nccl-tests -I 1 -J output ({type(e).__name__}: {e})") from None


def _nccl_tests_iterations(text: str, path: str, doc: Any) -> Telemetry:
    from .tools import _parse_nccl_json

    imported = _parse_nccl_json(text, path)  # the whole file checked as nccl-tests -J output
    devices = doc["config"].get("devices") or []
    bad: list[str] = []
    processes = [{"row": i, "host": _name(d.get("hostname", ""), bad), "rank": _opt_int(d.get("rank"))}
                 for i, d in enumerate(devices)]
    by_size = {(m.spec.message_bytes, m.spec.params.get("in_place")): m for m in imported.measurements}
    calls = []
    for k, r in enumerate(doc["results"]):
        for in_place, key in ((False, "out_of_place_per_iter"), (True, "in_place_per_iter")):
            per = r.get(key)
            if per is None:
                continue
            m = by_size.get((_int(r["size"], f"results[{k}].size"), in_place))
            if m is None:
                continue
            where = f"results[{k}].{key}"
            if m.spec.message_bytes > MAX_MESSAGE:
                raise _err(path, where, f"a message of {m.spec.message_bytes} B (over 1 PiB): not a run of nccl-tests")
            try:  # numbers only: true is not 1 us
                stats = {s: _number(per[s], s) for s in ("min_us", "max_us", "avg_us", "p50_us", "p95_us", "p99_us")}
                times = [_number(t, "times_us[]") for t in per.get("times_us", [])]
                rows = [[_number(t, "per_process_max_times_us[][]") for t in row]
                        for row in per.get("per_process_max_times_us", [])]
                skipped = _int(per.get("skipped_iterations", 0), "skipped_iterations")
            except (TypeError, ValueError, KeyError) as e:
                raise _err(path, where, f"missing or bad field ({e})") from None
            if not all(0 <= v <= MAX_TIME_US for v in [*stats.values(), *times, *(t for r_ in rows for t in r_)]):
                raise _err(path, where, "a time that is negative or over a day")
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
    notes = list(imported.notes)
    if bad:
        notes.append(f"{len(bad)} host names with a lone surrogate, e.g. {bad[0]}: shown with U+FFFD")
    return Telemetry("nccl-tests -I 1", path, calls, notes, processes=processes)


# ------------------------------------------------------------------ any of them


def read_telemetry(path: str | Path) -> Telemetry:
    """One telemetry file, its format told from its contents; its sha256 kept (digest),
    so that the same file given twice is read once."""
    p = regular_file(path, "telemetry file")
    with open(p, "rb") as f:
        head = f.read(SNIFF)
        if head.lstrip()[:1] == b"{" and b"\n" not in head.lstrip():
            # the first record runs past 4 KB (an Inspector header with a long comm_name): its whole line tells
            head += f.readline(MAX_LINE)
    text_head = head.decode("utf-8", "replace").lstrip()
    if head[:1] == b"\x80":
        data = read_bytes(p, "Flight Recorder dump", MAX_DUMP)
        return _digested(parse_flight_recorder(data, str(p)), data)
    if text_head.startswith("{") and any(f'"{k}"' in text_head for k in ("dump_stats", *INSPECTOR_PAYLOADS)):
        return read_inspector_jsonl(p)
    if "nccl_bus_bandwidth_gbs{" in text_head or "nccl_collective_exec_time_microseconds{" in text_head \
            or "nccl_p2p_bus_bandwidth_gbs{" in text_head or p.suffix == ".prom":
        data = read_bytes(p, "Prometheus textfile", MAX_PROM)
        return _digested(parse_inspector_prom(_utf8(data, str(p)), str(p)), data)
    if text_head.startswith("{"):
        data = read_bytes(p, "telemetry file", MAX_DUMP)
        text = _utf8(data, str(p))
        try:
            doc = loads_strict(text)
        except JSONRefused as e:
            raise _err(str(p), None, f"{e}: not a telemetry file") from None
        except json.JSONDecodeError as e:
            raise _err(str(p), None, f"not JSON ({e.msg}); truncated?") from None
        if isinstance(doc, dict) and "results" in doc and "config" in doc:
            return _digested(parse_nccl_tests_iterations(text, str(p)), data)
        return _digested(parse_flight_recorder(data, str(p)), data)
    raise _err(str(p), None, f"not NCCL Inspector output, a Flight Recorder dump or nccl-tests JSON (told from its "
                             f"first {SNIFF // 1024} KB; a Prometheus textfile is read whatever comes first if named *.prom)")


def _utf8(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _err(path, None, f"not UTF-8 (byte {e.start + 1} is 0x{data[e.start]:02x}): these formats are UTF-8 "
                               "text") from None


def _digested(t: Telemetry, data: bytes) -> Telemetry:
    t.digest = hashlib.sha256(data).hexdigest()
    return t


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
        """The report as JSON-ready data: a figure that is not finite becomes null and a
        lone surrogate U+FFFD, each said in warnings (JSON has no NaN, UTF-8 no half
        characters)."""
        doc = {"files": [{"path": t.path, "source": t.source, "notes": t.notes, "progress": t.progress}
                         for t in self.files],
               "collectives": [r.to_dict() for r in self.rows],
               "skews": [dataclasses.asdict(s) for s in self.skews],
               "per_rank": [dataclasses.asdict(r) for r in self.per_rank], "per_node": self.per_node}
        fixed: list[str] = []
        doc = _json_safe(doc, "", fixed)
        doc["warnings"] = _json_safe(list(self.warnings), "warnings", fixed)
        doc["warnings"] += [f"{where}: not a finite number or not text, written as null or with U+FFFD"
                            for where in fixed[:20]]
        return doc


def _json_safe(x: Any, where: str, fixed: list[str]) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        fixed.append(where)
        return None
    if isinstance(x, str) and _SURROGATE.search(x):
        fixed.append(where)
        return _SURROGATE.sub("\ufffd", x)
    if isinstance(x, dict):
        return {str(k): _json_safe(v, f"{where}.{k}" if where else str(k), fixed) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v, f"{where}[{i}]", fixed) for i, v in enumerate(x)]
    return x


def _skews(calls: list[TelemetryCall]) -> list[Skew]:
    groups: dict[tuple, list[TelemetryCall]] = {}
    for c in calls:
        if c.rank is not None and c.seq is not None and c.source != "nccl-tests -I 1":
            # the Inspector's coll_sn counts per collective type (NCCL's comm->seqNumber[func])
            per_type = c.collective if c.source == "NCCL Inspector" else None
            groups.setdefault((c.source, c.comm, per_type, c.seq), []).append(c)
    out = []
    for (_src, comm, _type, seq), cs in sorted(groups.items(), key=lambda kv: (kv[0][1], str(kv[0][2]), kv[0][3])):
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
            skew = (last.start_us - first.start_us) * 1e-6
            tied = sum(1 for c in starts if last.start_us - c.start_us <= TIE_US) > 1
            out.append(Skew(comm, seq, coll, size, ranks, skew, None if tied else last.rank,
                            how + ("; a tie: several ranks started last together, none named" if tied else "")))
            continue
        timed = [c for c in cs if c.time_s]
        if len(timed) == len(cs):
            # a collective waits for every rank: the one that came last waited least
            short, long_ = min(timed, key=lambda c: c.time_s), max(timed, key=lambda c: c.time_s)
            tied = sum(1 for c in timed if c.time_s - short.time_s <= TIE_US * 1e-6) > 1
            out.append(Skew(comm, seq, coll, size, ranks, long_.time_s - short.time_s, None if tied else short.rank,
                            "inferred: the rank with the shortest time arrived last (the others waited for it)"
                            + ("; a tie: several ranks had the shortest time, none named" if tied else "")))
    return out


TIE_US = 1.0  # ranks within this of the last arrival arrived together: none of them is named last
APART_S = 600.0  # ranks whose first recorded starts lie further apart than this are said to


def _apart_warnings(calls: list[TelemetryCall]) -> list[str]:
    """Ranks whose recordings start hours apart (another day, another job): said, as no
    skew between them means anything."""
    first: dict[int, float] = {}
    for c in calls:
        if c.rank is not None and c.start_us is not None and math.isfinite(c.start_us):
            first[c.rank] = min(first.get(c.rank, c.start_us), c.start_us)
    if len(first) < 2:
        return []
    lo, hi = min(first, key=first.__getitem__), max(first, key=first.__getitem__)
    apart = (first[hi] - first[lo]) * 1e-6
    if apart <= APART_S:
        return []
    return [f"rank {hi}'s calls start {apart / 3600:.1f} h after rank {lo}'s: not one window of one job; skews "
            "between them mean nothing"]


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
                if sum(1 for x in col if col[worst] - x <= TIE_US) > 1:
                    continue  # a tie at the top: no process was the slowest
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
    if hows:
        how = " and ".join(sorted(hows))
    elif len(by_rank) > 1:
        how = ("not measured: the calls recorded ({}) carry no start or time that two ranks share"
               .format(", ".join(f"rank {r}: {len(cs)}" for r, cs in sorted(by_rank.items())[:4])
                       + (" ..." if len(by_rank) > 4 else "")))
    else:
        how = "one rank's calls only: no other rank to compare with"
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
                    "worst_rank": max(rs, key=lambda r: (r.times_last, r.mean_lateness_s)).rank
                    if any(r.times_last for r in rs) else None})  # no rank last: none named (never rank 0 by order)
    return out


def analyze_telemetry(tels: list[Telemetry], profile: Any) -> TelemetryReport:
    """Every call against the profile's NCCL figure and cost bound at its collective,
    size, type and rank count; the skew of each call recorded on several ranks; per
    rank and node, how often each held the others up."""
    from ..roofline.model import MachineModel
    from .traces import place_row

    model = MachineModel.from_profile(profile)
    tels, warnings = _read_once(tels)
    placed: dict[tuple, Any] = {}
    rows = []
    for t in tels:
        for c in t.calls:
            row = TelemetryRow(c)
            # a size recorded only as a bucket [low, high) is placed at its low end, and said
            size = c.size_bytes or (c.size_range[0] if c.size_range else None)
            if c.collective and size and c.group_size and c.group_size > 1:
                place_row(row, dataclasses.replace(c, rank=None, size_bytes=size), c.time_s, profile, model, placed,
                          (c.collective, size, c.group_size, c.dtype))
                if c.dtype is None and not row.nccl_how.startswith("not placed"):
                    row.nccl_how += "; the call's data type is not recorded: the profile's figure at fp32"
                if c.size_bytes is None:
                    row.nccl_how += (f"; the size is a bucket [{c.size_range[0]}, {c.size_range[1]}) B: placed at its "
                                     "lower bound, where NCCL's time and the bound are at most those at the calls' "
                                     "sizes, so both fractions are lower bounds")
            elif c.group_size == 1:
                row.nccl_how = "a one-rank group: nothing crosses a link"
            else:
                row.nccl_how = "not placed: " + ("collective unknown" if not c.collective else
                                                 "size unknown" if not c.size_bytes else "group size unknown")
            rows.append(row)
    calls = [c for t in tels for c in t.calls]
    skews = _skews(calls)
    per_rank = _per_rank(tels, calls, skews)
    for t in tels:
        warnings += [f"{Path(t.path).name}: {n}" for n in t.notes]
    warnings += _progress_warnings(tels)
    warnings += _apart_warnings(calls)
    ranks = [c.rank for c in calls if c.rank is not None]
    if tels and len({t.source for t in tels}) > 1:
        warnings.append("files of different formats given together: each is read as its own, skews within one "
                        "format only")
    if ranks and len({c.host for c in calls if c.host}) > 1 and any(s.how.startswith("measured") for s in skews):
        warnings.append("ranks on several hosts: skews compare the hosts' clocks, which may differ by more than the "
                        "skew")
    return TelemetryReport(tels, rows, skews, per_rank, _per_node(per_rank), warnings)


def _read_once(tels: list[Telemetry]) -> tuple[list[Telemetry], list[str]]:
    """Each file once, and each record once: a file whose bytes equal an earlier one's is
    left out; an Inspector record (communicator, rank, collective, sequence number) or a
    Prometheus bucket (node, GPU, communicator, collective, size, algorithm) already read
    from another file is left out of the later one. Both are said."""
    out, warnings = [], []
    by_digest: dict[str, str] = {}
    owner: dict[tuple, str] = {}
    for t in tels:
        name = Path(t.path).name
        if t.digest and t.digest in by_digest:
            warnings.append(f"{name} has the same contents as {by_digest[t.digest]}: read once")
            continue
        if t.digest:
            by_digest[t.digest] = name
        kept, twice = [], {}
        for c in t.calls:
            key = _record_key(c)
            first = owner.get(key) if key else None
            if first is not None and first != name:
                twice.setdefault(first, []).append(c)
                continue
            if key:
                owner[key] = name
            kept.append(c)
        for first, cs in twice.items():
            ranks = sorted({c.rank for c in cs if c.rank is not None})
            of = f" of rank(s) {', '.join(map(str, ranks))}" if ranks else ""
            warnings.append(f"{name}: {len(cs)} records{of} are also in {first}: counted once")
        if len(kept) != len(t.calls):
            t = dataclasses.replace(t, calls=kept)
        out.append(t)
    return out, warnings


def _record_key(c: TelemetryCall) -> tuple | None:
    if c.source == "NCCL Inspector" and c.rank is not None:
        return (c.source, c.comm, c.rank, c.collective, c.seq,
                c.notes[0] if (c.seq is None or c.collective is None) and c.notes else None)
    if c.source == "NCCL Inspector (Prometheus)":
        return (c.source, c.host, c.device, c.comm, c.rank, c.seq, c.collective, c.size_range, c.size_bytes,
                c.group_size, c.notes)
    return None
