"""PyTorch's Flight Recorder dumps (pickle or JSON, one per rank), read from what its
writer writes (torch's FlightRecorder.hpp / FlightRecorderDetail.hpp), and a hang
diagnosed from them: which process group, which call, which ranks are behind and which
wait.

The diagnosis keys every group by its name and global ranks (`pg_config`; the entries'
`process_group`), never by the rank-local `pg_id` that keys `pg_status`: the same id
names unrelated communicators on different ranks. Within a group it compares
`collective_seq_id` (and `pg_status`'s last enqueued / started / completed collective,
tied to the group through the rank's own entries); a send or receive is checked against
its peer only; a member with no dump or an empty ring is a suspect, never dropped. The
answer does not depend on the order of the files.

telemetry.py imports the reader's names from here (read_telemetry, analyze_telemetry)."""

from __future__ import annotations

import hashlib
import io
import json
import math
import pickle
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..roofline.traces import c10_dtype, collective_name

if TYPE_CHECKING:
    from .telemetry import Telemetry

FR_STATES = {"completed", "started", "scheduled"}
MAX_ENTRIES = 200_000  # per dump; torch's ring holds TORCH_FR_BUFFER_SIZE entries (2000 by default)
MAX_GROUPS = 100_000
MAX_RANKS = 1 << 20
MAX_TENSORS = 4096  # tensors in one entry's input or output list
MAX_DIMS = 64
MAX_NUMEL = 1 << 40  # elements in one tensor: a trillion is already 2 TB of bf16
INT64 = 1 << 63
MAX_TEXT = 512  # characters kept of any name read from a dump


def _tel():  # telemetry.py imports this module: its names are taken at call time
    from . import telemetry

    return telemetry


def _err(path: str, where: str | int | None, msg: str) -> Exception:
    return _tel()._err(path, where, msg)


def _opt_int(x: Any) -> int | None:
    """An int64 as the writer writes it (a number, or a numeric string in dump_json's
    pg_status); never a bool, a float that is not whole, or a number past int64."""
    if x is None or isinstance(x, bool):
        return None
    if isinstance(x, str) and re.fullmatch(r"-?\d{1,19}", x.strip()):
        x = int(x.strip())
    if isinstance(x, float) and math.isfinite(x) and x.is_integer() and abs(x) < 2 ** 53:
        x = int(x)
    if isinstance(x, int) and -INT64 <= x < INT64:
        return x
    return None


def _int(x: Any, what: str) -> int:
    v = _opt_int(x)
    if v is None:
        raise ValueError(f"{what} {_short(x)} is not an integer")
    return v


def _text(x: Any) -> str:
    """A name from the dump as printable-safe text: lone surrogates and other
    unencodable characters replaced, long names cut."""
    s = x if isinstance(x, str) else str(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else ""
    s = s[:MAX_TEXT]
    return s.encode("utf-8", "replace").decode("utf-8")


def _short(x: Any) -> str:
    if isinstance(x, (dict, list, tuple)):
        return type(x).__name__
    if isinstance(x, int) and not isinstance(x, bool) and abs(x) >= 10 ** 30:
        return f"a number of {len(str(abs(x))) if abs(x) < 10 ** 4000 else 'over 4000'} digits"
    return repr(_text(x) if isinstance(x, str) else x)[:60]


class _SafeUnpickler(pickle.Unpickler):
    """Builds dicts, lists, tuples, strings and numbers only: a dump's helpers from
    torch.jit._pickle become plain lists; any other class is refused (a pickle can run
    code, a Flight Recorder dump never needs to)."""

    ALLOWED = {"build_intlist", "build_doublelist", "build_boollist", "build_genericlist", "build_tensorlist"}

    def find_class(self, module: str, name: str) -> Any:
        if module == "torch.jit._pickle" and name in self.ALLOWED:
            return lambda x: list(x)
        if module == "torch.jit._pickle" and name == "restore_type_tag":
            return lambda value, _type: value
        raise pickle.UnpicklingError(f"the dump asks for {_text(module)}.{_text(name)}; a Flight Recorder dump "
                                     "holds plain data")


def _fr_doc(data: bytes, path: str) -> dict:
    is_json = data.lstrip()[:1] in (b"{", b"[")  # a JSON list is refused below, not sent to the unpickler
    try:
        if is_json:
            doc = json.loads(data)
        else:
            doc = _SafeUnpickler(io.BytesIO(data)).load()
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise _err(path, None, f"not a Flight Recorder dump (not JSON: {getattr(e, 'msg', e)})") from None
    except RecursionError:
        raise _err(path, None, "not a Flight Recorder dump (nested too deep)") from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError,
            MemoryError, OverflowError) as e:
        what = "JSON" if is_json else "pickle"
        raise _err(path, None, f"not a Flight Recorder dump ({what}: {_text(str(e))[:200]})") from None
    if not isinstance(doc, dict) or "version" not in doc or not ({"entries", "pg_config"} & set(doc)):
        raise _err(path, None, "not a Flight Recorder dump (no version with entries or pg_config)")
    return doc


def _ranks_of(spec: Any) -> list[int] | None:
    """A group's global ranks: the writer's string "[0, 1, 2]" (ranks_str), or a list."""
    if isinstance(spec, list):
        ranks = [r for r in (_opt_int(x) for x in spec[:MAX_RANKS + 1]) if r is not None]
    elif isinstance(spec, str):
        ranks = [int(r) for r in re.findall(r"\d{1,7}", spec[:16 * MAX_RANKS])]
    else:
        return None
    if not ranks or len(ranks) > MAX_RANKS or any(not 0 <= r < MAX_RANKS for r in ranks):
        return None
    return ranks


def _numel(shape: Any) -> int:
    if not isinstance(shape, (list, tuple)) or len(shape) > MAX_DIMS:
        raise ValueError(f"shape {_short(shape)}")
    n = 1
    for d in shape:
        if not isinstance(d, int) or isinstance(d, bool) or d < 0:
            raise ValueError(f"dimension {_short(d)}")
        if d > MAX_NUMEL:
            raise ValueError(f"dimension {_short(d)} (over 2^40 elements: not a tensor a rank holds)")
        n *= d
    if n > MAX_NUMEL:
        raise ValueError(f"a tensor of {n:.3g} elements (over 2^40: not a tensor a rank holds)")
    return n


def _fr_bytes(sizes: Any, dtypes: Any) -> tuple[int, str | None]:
    if not isinstance(sizes, list) or not isinstance(dtypes, list):
        raise ValueError("sizes and dtypes must be lists")
    if len(sizes) > MAX_TENSORS:
        raise ValueError(f"{len(sizes)} tensors in one call")
    if dtypes and len(dtypes) != len(sizes):  # one data type a tensor (an old dump may give none at all)
        raise ValueError(f"{len(sizes)} shapes for {len(dtypes)} data types")
    for shape in sizes[len(dtypes):]:  # shapes without data types: checked all the same, their bytes not known
        _numel(shape)
    total, names = 0, set()
    for shape, dt in zip(sizes, dtypes):
        known = c10_dtype(dt) if isinstance(dt, str) else None
        if known is None:
            raise ValueError(f"data type {_short(dt)}")
        names.add(known[0])
        total += _numel(shape) * known[1]
    return total, (names.pop() if len(names) == 1 else None)


def _rank_from_name(path: str) -> int | None:
    m = re.search(r"(\d{1,7})(?:\.json|\.pkl|\.pickle)?$", Path(path).name)
    return int(m.group(1)) if m else None


# ------------------------------------------------------------------ one dump, as written


_P2P_NAME = re.compile(r"^(send|recv)\s+(\d{1,7})\s*(->|<-)\s*(\d{1,7})$")


@dataclass(frozen=True)
class FREntry:
    """One ring entry of one rank. `peer` is a send's or receive's other end as a
    group-local rank (the writer's "send 0->1" / "recv 1<-0"), when the name gives it."""

    record_id: int
    pg_id: int | None
    group: str  # the process group's name (process_group[0])
    desc: str
    collective_seq: int
    p2p_seq: int
    op_id: int | None
    profiling_name: str
    op: str  # "all_reduce", "send", "recv", "coalesced", ... (the name after the backend)
    is_p2p: bool
    peer: int | None  # group-local
    input_sizes: tuple
    input_dtypes: tuple
    output_sizes: tuple
    output_dtypes: tuple
    size_bytes: int | None
    dtype: str | None
    state: str
    duration_ms: float | None
    started_ns: int | None
    completed_ns: int | None

    @property
    def seq(self) -> int:
        return self.p2p_seq if self.is_p2p else self.collective_seq


@dataclass
class FRDump:
    """One rank's dump, read: its groups (name -> global ranks, desc), its pg_status
    counters (by the rank-local id the writer keys them by), its entries in ring order."""

    path: str
    rank: int | None
    version: str
    lib_version: str | None  # comm_lib_version (2.10 on) or nccl_version (2.7 - 2.9); absent before
    groups: dict[str, tuple[tuple[int, ...] | None, str]]
    status: dict[str, dict[str, int | None]]
    entries: list[FREntry]
    digest: str
    notes: list[str] = field(default_factory=list)

    def status_by_group(self) -> dict[str, dict[str, int | None]]:
        """pg_status re-keyed by group name, through this rank's own entries (each carries
        pg_id and process_group); an id no entry names stays unmapped."""
        names: dict[str, set[str]] = {}
        for e in self.entries:
            if e.pg_id is not None:
                names.setdefault(str(e.pg_id), set()).add(e.group)
        out = {}
        for pg_id, s in self.status.items():
            n = names.get(pg_id)
            if n and len(n) == 1:
                out[next(iter(n))] = s
        return out


def _entry(e: Any, i: int, path: str) -> FREntry:
    if not isinstance(e, dict):
        raise _err(path, f"entries[{i}]", "not an entry")
    try:
        pg = e.get("process_group") or ("", "")
        if isinstance(pg, (list, tuple)):
            group, desc = _text(pg[0]) if pg else "", _text(pg[1]) if len(pg) > 1 else ""
        else:
            group, desc = _text(pg), ""
        name = e["profiling_name"]
        if not isinstance(name, str):
            raise ValueError(f"profiling_name {_short(name)}")
        name = _text(name)
        bare = name.split(":", 1)[1] if ":" in name else name
        m = _P2P_NAME.match(bare.strip())
        op = m.group(1) if m else (bare.split() or [""])[0]
        is_p2p = e.get("is_p2p")
        is_p2p = op in ("send", "recv") if is_p2p is None else is_p2p
        if not isinstance(is_p2p, bool):
            raise ValueError(f"is_p2p {_short(is_p2p)}")
        peer = None
        if m:  # "send me->peer", "recv me<-peer": group-local ranks
            peer = int(m.group(4))
        coll = _int(e.get("collective_seq_id", e.get("seq_id", 0)), "collective_seq_id")
        p2p = _int(e.get("p2p_seq_id", 0), "p2p_seq_id")
        in_b, in_t = _fr_bytes(e.get("input_sizes", []), e.get("input_dtypes", []))
        out_b, out_t = _fr_bytes(e.get("output_sizes", []), e.get("output_dtypes", []))
        state = e.get("state", "")
        if not isinstance(state, str) or state not in FR_STATES:
            raise _err(path, f"entries[{i}]", f"state {_short(state)} is not one of {sorted(FR_STATES)}")
        dur = e.get("duration_ms")
        if dur is not None:
            if isinstance(dur, bool) or not isinstance(dur, (int, float)) or not math.isfinite(dur) or dur < 0:
                raise _err(path, f"entries[{i}]", f"duration_ms {_short(dur)} is not a time")
            dur = float(dur)
        rid = _int(e["record_id"], "record_id")
    except (KeyError, TypeError, ValueError, IndexError, OverflowError) as ex:  # OverflowError: an int past float
        raise _err(path, f"entries[{i}]", f"missing or bad field ({_text(str(ex))[:200]})") from None
    started, done = _opt_int(e.get("time_discovered_started_ns")), _opt_int(e.get("time_discovered_completed_ns"))
    return FREntry(rid, _opt_int(e.get("pg_id")), group, desc, coll, p2p, _opt_int(e.get("op_id")), name, op, is_p2p,
                   peer, tuple(map(tuple, e.get("input_sizes", []))), tuple(map(_text, e.get("input_dtypes", []))),
                   tuple(map(tuple, e.get("output_sizes", []))), tuple(map(_text, e.get("output_dtypes", []))),
                   max(in_b, out_b) or None, in_t or out_t, state, dur, started or None, done or None)


def read_dump(data: bytes, path: str = "<dump>", rank: int | None = None) -> FRDump:
    """One rank's dump: the pickle `dump()` writes or the JSON `dump_json()` writes, any
    version from 2.3 on (older ones without `is_p2p` are read from the name)."""
    doc = _fr_doc(data, path)
    rank = _rank_from_name(path) if rank is None else rank
    version = _text(doc.get("version"))
    lib = next((_text(doc[k]) for k in ("comm_lib_version", "nccl_version") if isinstance(doc.get(k), str)), None)
    pgs = doc.get("pg_config") or {}
    if not isinstance(pgs, dict):
        raise _err(path, "pg_config", "not a mapping of process groups")
    if len(pgs) > MAX_GROUPS:
        raise _err(path, "pg_config", f"{len(pgs)} process groups (over {MAX_GROUPS})")
    groups: dict[str, tuple[tuple[int, ...] | None, str]] = {}
    for key, cfg in pgs.items():
        if isinstance(cfg, dict):  # 2.2 on: {name, desc, ranks}
            ranks = _ranks_of(cfg.get("ranks"))
            name, desc = _text(cfg.get("name", key)), _text(cfg.get("desc", ""))
        else:  # a bare ranks list or string
            ranks, name, desc = _ranks_of(cfg), _text(key), ""
        groups[name] = (tuple(ranks) if ranks else None, desc)
    entries = doc.get("entries") or []  # dump_json leaves the key out when the ring is empty
    if not isinstance(entries, list):
        raise _err(path, "entries", "not a list")
    if len(entries) > MAX_ENTRIES:
        raise _err(path, "entries", f"{len(entries)} entries (over {MAX_ENTRIES}; torch's ring holds "
                   "TORCH_FR_BUFFER_SIZE, 2000 by default)")
    read = [_entry(e, i, path) for i, e in enumerate(entries)]
    status: dict[str, dict[str, int | None]] = {}
    raw = doc.get("pg_status") or {}
    if isinstance(raw, dict) and len(raw) <= MAX_GROUPS:
        for pg_id, s in raw.items():
            if isinstance(s, dict):
                status[_text(pg_id)] = {k: _opt_int(s.get(f"last_{k}_collective"))
                                        for k in ("enqueued", "started", "completed")}
    digest = hashlib.sha256(data).hexdigest()
    return FRDump(path, rank, version, lib, groups, status, read, digest)


@cache
def _telemetry_class() -> type:
    from dataclasses import dataclass as dc

    @dc
    class FlightRecorderTelemetry(_tel().Telemetry):
        """A Flight Recorder file's reading, with the dump as read (for the hang diagnosis)."""

        dump: FRDump | None = None

    return FlightRecorderTelemetry


def status_lag(dump: FRDump) -> list[tuple[str, int, int]]:
    """(group, pg_status's last completed, the ring's last completed) where the ring is
    ahead: seen on torch 2.11, whose dump right after a synchronize counted 2 of 16."""
    out = []
    for g, st in sorted(dump.status_by_group().items()):
        done = [e.collective_seq for e in dump.entries if e.group == g and not e.is_p2p and e.state == "completed"]
        if done and st.get("completed") is not None and max(done) > st["completed"]:
            out.append((g, st["completed"], max(done)))
    return out


def parse_flight_recorder(data: bytes, path: str = "<dump>", rank: int | None = None) -> Telemetry:
    """One rank's Flight Recorder dump (`TORCH_NCCL_DEBUG_INFO_TEMP_FILE<rank>`: a pickle,
    or JSON). The rank is the file name's trailing number unless given. A call's time is
    `duration_ms` (CUDA events, only with TORCH_NCCL_ENABLE_TIMING=1); its start is
    `time_discovered_started_ns`, when the watchdog saw it start (host clock, coarse)."""
    dump = read_dump(data, path, rank)
    T = _tel()
    calls, timed = [], 0
    for e in dump.entries:
        coll = collective_name(e.profiling_name.split()[0]) if e.profiling_name.split() else None
        notes = [] if coll else [f"{e.profiling_name!r}: not a collective linkroof knows"]
        ranks = dump.groups.get(e.group, (None, ""))[0]
        group = 2 if e.is_p2p else (len(ranks) if ranks else None)
        if group is None:
            notes.append(f"process group {e.group!r} not in pg_config: group size unknown")
        time_s = e.duration_ms * 1e-3 if e.duration_ms else None
        timed += time_s is not None
        calls.append(T.TelemetryCall("Flight Recorder", dump.rank, "", e.group, e.seq, coll, e.dtype, e.size_bytes,
                                     group, time_s, None, "CUDA events (duration_ms)" if time_s else "", e.state,
                                     start_us=e.started_ns / 1e3 if e.started_ns else None, notes=tuple(notes)))
    progress = []
    by_name = {v: k for k, v in _status_names(dump).items()}
    for pg_id, s in sorted(dump.status.items()):
        progress.append({"rank": dump.rank, "pg_id": pg_id, "group": by_name.get(pg_id),
                         **{f"last_{k}_collective": v for k, v in s.items()}})
    lib = f", {'NCCL' if dump.lib_version and dump.lib_version[:1].isdigit() else 'library'} {dump.lib_version}" \
        if dump.lib_version else ""
    notes = [f"Flight Recorder dump version {dump.version or '?'}{lib}"]
    if dump.entries and not timed:
        notes.append(f"{len(dump.entries)} entries, none with duration_ms (TORCH_NCCL_ENABLE_TIMING was off): states "
                     "and order only, no bandwidth")
    if not dump.entries:
        notes.append("an empty ring: no entry recorded (a suspect when its groups hang)")
    lag = status_lag(dump)
    if lag:
        notes.append("pg_status lags the ring (the watchdog had not yet counted them): " + "; ".join(
            f"group {g!r} says last completed #{st} while its ring has #{ring} completed" for g, st, ring in lag)
            + "; a position is read from the newer of the two")
    return _telemetry_class()("Flight Recorder", path, calls, notes, progress=progress, dump=dump)


def _status_names(dump: FRDump) -> dict[str, str]:
    """group name -> the rank-local pg_id its pg_status is keyed by (through the entries)."""
    ids: dict[str, set[str]] = {}
    for e in dump.entries:
        if e.pg_id is not None:
            ids.setdefault(e.group, set()).add(str(e.pg_id))
    return {g: next(iter(i)) for g, i in ids.items() if len(i) == 1}


# ------------------------------------------------------------------ the hang, across ranks


@dataclass(frozen=True)
class Stuck:
    """One process group's stuck call: the call, the ranks that reached it (and wait),
    and the ranks behind (that never enqueued it), each with its evidence."""

    group: str
    desc: str
    ranks: tuple[int, ...]  # the group's global ranks
    kind: str  # "collective" | "p2p"
    seq: int  # collective_seq_id (a collective) or the sender's p2p_seq_id
    op: str | None
    input_sizes: tuple
    dtypes: tuple
    size_bytes: int | None
    behind: tuple[int, ...]
    waiting: tuple[int, ...]
    evidence: dict  # rank -> how its position is known ("pg_status: ...", "ring: ...", "no dump", "empty ring")
    held: tuple[int, ...] = ()  # behind here because they wait in another group (not a cause)

    def sentence(self) -> str:
        what = self.op or "a call"
        size = f", {_fmt_size(self.size_bytes)}" if self.size_bytes else ""
        dt = f" ({', '.join(sorted(set(self.dtypes)))}{size})" if self.dtypes else (f" ({size[2:]})" if size else "")
        label = f"{self.group!r}" + (f" ({self.desc})" if self.desc and self.desc != self.group else "")
        who = f"rank{'s' if len(self.behind) > 1 else ''} {_ranges(self.behind)}"
        if self.kind == "p2p":
            head = f"group {label}: {who} never posted the matching {what}{dt}"
        else:
            head = f"group {label}: {who} {'are' if len(self.behind) > 1 else 'is'} behind at {what} #{self.seq}{dt}"
        if not self.behind:
            head = f"group {label}: at {what} #{self.seq}{dt}"
        many = len(self.waiting) > 1
        wait = f"; rank{'s' if many else ''} {_ranges(self.waiting)} wait{'' if many else 's'}" if self.waiting else ""
        if self.held:
            wait += f"; rank{'s' if len(self.held) > 1 else ''} {_ranges(self.held)} not there: waiting in another group"
        ev = "; ".join(f"rank {r}: {self.evidence[r]}" for r in sorted(self.evidence))
        return f"{head}{wait} [{ev}]"

    def to_dict(self) -> dict:
        return {"group": self.group, "desc": self.desc, "ranks": list(self.ranks), "kind": self.kind, "seq": self.seq,
                "op": self.op, "input_sizes": [list(s) for s in self.input_sizes], "dtypes": list(self.dtypes),
                "size_bytes": self.size_bytes, "behind": list(self.behind), "waiting": list(self.waiting),
                "held": list(self.held),
                "evidence": {str(r): v for r, v in sorted(self.evidence.items())}, "sentence": self.sentence()}


@dataclass
class HangDiagnosis:
    """Flight Recorder dumps of one job, read together: each group's stuck call, the
    ranks behind (only those), the ranks expected but without a dump, and warnings."""

    ranks: tuple[int, ...]  # ranks with a dump
    expected: tuple[int, ...]  # every rank some group names
    missing: tuple[int, ...]  # expected, no dump
    empty: tuple[int, ...]  # a dump with no entry
    stuck: list[Stuck]
    versions: dict  # rank -> "version, library"
    warnings: list[str]

    @property
    def behind(self) -> tuple[int, ...]:
        return tuple(sorted({r for s in self.stuck for r in s.behind}))

    def sentences(self) -> list[str]:
        if not self.stuck:
            return ["no process group has a call that some of its ranks reached and others did not: no rank is "
                    "behind in these dumps"]
        return [s.sentence() for s in self.stuck]

    def to_dict(self) -> dict:
        return {"behind": list(self.behind), "stuck": [s.to_dict() for s in self.stuck], "ranks": list(self.ranks),
                "expected": list(self.expected), "missing": list(self.missing), "empty_rings": list(self.empty),
                "versions": {str(k): v for k, v in sorted(self.versions.items())}, "warnings": self.warnings}


def _fmt_size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


def _ranges(ranks: tuple[int, ...] | list[int]) -> str:
    out, rs = [], sorted(ranks)
    i = 0
    while i < len(rs):
        j = i
        while j + 1 < len(rs) and rs[j + 1] == rs[j] + 1:
            j += 1
        out.append(str(rs[i]) if j == i else f"{rs[i]},{rs[j]}" if j == i + 1 else f"{rs[i]}-{rs[j]}")
        i = j + 1
    return ",".join(out)


def _dedupe(dumps: list[FRDump]) -> tuple[dict[int, FRDump], list[str]]:
    """One dump per rank: the same file given twice is read once; one rank in two files
    keeps the later dump (the larger last record_id, then the path), said."""
    warnings, seen, by_rank = [], {}, {}
    for d in sorted(dumps, key=lambda d: (d.digest, d.rank is None, d.rank or 0, d.path)):
        if (d.digest, d.rank) in seen:
            warnings.append(f"{Path(d.path).name} is the same dump as {Path(seen[d.digest, d.rank]).name}: read once")
            continue
        twin = next((p for (dg, r), p in seen.items() if dg == d.digest), None)
        if twin:
            warnings.append(f"{Path(d.path).name} has the same contents as {Path(twin).name}, under another rank: "
                            "a copy?")
        seen[d.digest, d.rank] = d.path
        if d.rank is None:
            warnings.append(f"{Path(d.path).name}: no rank in the file name: left out of the hang diagnosis")
            continue
        by_rank.setdefault(d.rank, []).append(d)
    out = {}
    for rank, ds in sorted(by_rank.items()):
        ds.sort(key=lambda d: (max((e.record_id for e in d.entries), default=-1), d.path))
        out[rank] = ds[-1]
        if len(ds) > 1:
            warnings.append(f"rank {rank} is in {len(ds)} files ({', '.join(Path(d.path).name for d in ds)}): "
                            f"{Path(ds[-1].path).name}, the later dump, is used; the rank is counted once")
    return out, warnings


def _group_ranks(dumps: dict[int, FRDump]) -> dict[str, tuple[tuple[int, ...], str]]:
    """Every group's global ranks and desc, by name, from all dumps' pg_config; the same
    name with other ranks on another rank is a split group and keyed apart."""
    seen: dict[str, set[tuple[tuple[int, ...], str]]] = {}
    for d in dumps.values():
        for name, (ranks, desc) in d.groups.items():
            if ranks:
                seen.setdefault(name, set()).add((tuple(sorted(set(ranks))), desc))
    out = {}
    for name, variants in sorted(seen.items()):
        if len({r for r, _ in variants}) == 1:
            out[name] = sorted(variants)[0]
        else:  # split groups share a name; each rank's own pg_config says which it is in
            for ranks, desc in sorted(variants):
                out[f"{name}@{_ranges(ranks)}"] = (ranks, desc)
    return out


def _member_key(d: FRDump, name: str, groups: dict) -> str | None:
    if name in groups:
        return name
    ranks = d.groups.get(name, (None, ""))[0]
    key = f"{name}@{_ranges(tuple(sorted(set(ranks))))}" if ranks else None
    return key if key in groups else None


def diagnose_hang(dumps: list[FRDump]) -> HangDiagnosis:
    """Which group, which call, which ranks are behind and which wait; the same for any
    order of the dumps. Each rank's position in a group is its last enqueued and last
    completed collective: from pg_status (tied to the group by the rank's entries) where
    it can be, else from its ring; a member with no dump or an empty ring is a suspect,
    named only where its group has a stuck call."""
    by_rank, warnings = _dedupe(dumps)
    groups = _group_ranks(by_rank)
    # entries that name a group no pg_config lists: the default group is the world
    world = tuple(sorted({r for ranks, _ in groups.values() for r in ranks} | set(by_rank)))
    per: dict[str, dict[int, list[FREntry]]] = {}
    descs: dict[str, str] = {}
    for rank, d in by_rank.items():
        for e in d.entries:
            key = _member_key(d, e.group, groups)
            if key is None:
                if e.desc == "default_pg" and world:
                    key = e.group
                    groups.setdefault(key, (world, e.desc))
                else:
                    key = e.group
                    groups.setdefault(key, ((), e.desc))
            per.setdefault(key, {}).setdefault(rank, []).append(e)
            descs.setdefault(key, e.desc)
    stuck: list[Stuck] = []
    for key in sorted(groups):
        ranks, desc = groups[key]
        members = ranks or tuple(sorted(per.get(key, {})))
        desc = desc or descs.get(key, "")
        entries = per.get(key, {})
        name = key.split("@")[0]
        s = _stuck_collective(key, name, desc, members, entries, by_rank)
        if s:
            stuck.append(s)
        if ranks:
            stuck += _stuck_p2p(key, desc, members, entries, by_rank)
        elif any(e.is_p2p and e.state != "completed" for es in entries.values() for e in es):
            # a send's peer is a rank within its group: without the group's ranks, it names no rank
            warnings.append(f"group {key!r} is in no dump's pg_config: its ranks are not known, so its pending "
                            "sends and receives are not matched to their peers")
    stuck = _causes(stuck)
    expected = tuple(sorted({r for ranks, _ in groups.values() for r in ranks}))
    missing = tuple(r for r in expected if r not in by_rank)
    empty = tuple(sorted(r for r, d in by_rank.items() if not d.entries))
    versions = {r: d.version + (f", {d.lib_version}" if d.lib_version else "") for r, d in by_rank.items()}
    if len(set(versions.values())) > 1:
        warnings.append("the dumps were written by different versions: " + "; ".join(
            f"rank {r}: {v}" for r, v in sorted(versions.items())))
    return HangDiagnosis(tuple(sorted(by_rank)), expected, missing, empty, stuck, versions, warnings)


def _causes(stuck: list[Stuck]) -> list[Stuck]:
    """A rank behind in one group because it waits in another is held, not a cause: the
    ranks behind are those that wait nowhere. Where every rank behind waits somewhere (a
    cycle), each stays named."""
    import dataclasses

    waiting = {r for s in stuck for r in s.waiting}
    first = (lambda s: (-len(s.behind), -len(s.waiting), s.group))  # the widest stuck call first
    if not any(r not in waiting for s in stuck for r in s.behind):
        return sorted(stuck, key=first)
    out = []
    for s in stuck:
        held = tuple(r for r in s.behind if r in waiting)
        out.append(dataclasses.replace(s, behind=tuple(r for r in s.behind if r not in waiting), held=held))
    return sorted(out, key=first)


def _position(rank: int, name: str, es: list[FREntry], d: FRDump | None) -> tuple[int | None, int | None, str]:
    """(last enqueued, last completed) collective of `rank` in group `name`, and how it is
    known. pg_status counts collectives only; the ring is the fallback."""
    if d is None:
        return None, None, "no dump"
    coll = [e for e in es if not e.is_p2p]
    st = d.status_by_group().get(name)
    # the counters follow the last work enqueued, a send's p2p_seq_id too: used where the
    # group's newest entry on this rank is a collective
    newest = max(es, key=lambda e: e.record_id) if es else None
    if st and st.get("enqueued") is not None and st.get("completed") is not None and newest is not None \
            and not newest.is_p2p:
        enq, done = st["enqueued"], st["completed"]
        if coll:  # the ring can be newer than a counter the watchdog has not yet updated
            enq = max(enq, max(e.collective_seq for e in coll))
            done = max([done] + [e.collective_seq for e in coll if e.state == "completed"])
        started = f", started #{st['started']}" if (st.get("started") is not None and st["started"] >= 0) else ""
        return enq, done, f"pg_status: last enqueued #{enq}{started}, completed #{done}"
    if not d.entries:
        return None, None, "empty ring"
    if not coll:
        return None, None, "no collective of this group in its ring"
    enq = max(e.collective_seq for e in coll)
    completed = [e.collective_seq for e in coll if e.state == "completed"]
    # entries older than the ring's oldest were retired: completed
    done = max(completed) if completed else min(e.collective_seq for e in coll) - 1
    last = max(coll, key=lambda e: e.collective_seq)
    return enq, done, f"ring: last {last.op} #{enq} {last.state}, {len(coll)} entries"


def _stuck_collective(key: str, name: str, desc: str, members: tuple[int, ...], entries: dict[int, list[FREntry]],
                      by_rank: dict[int, FRDump]) -> Stuck | None:
    pos = {r: _position(r, name, entries.get(r, []), by_rank.get(r)) for r in members}
    known = {r: p for r, p in pos.items() if p[0] is not None}
    if not known:
        return None
    # the first call some member reached and not every member completed
    k = min(p[1] + 1 for p in known.values())
    reached = [r for r, p in known.items() if p[0] >= k]
    if not reached:
        return None
    behind = [r for r, p in known.items() if p[0] < k]
    suspects = [r for r in members if r not in known]
    # the call itself, as a member that reached it recorded it
    call = None
    for r in sorted(reached):
        call = next((e for e in entries.get(r, []) if not e.is_p2p and e.collective_seq == k), None)
        if call:
            break
    if not behind and not suspects:
        return None  # every member reached it: not a rank behind (a call stuck inside the library)
    evidence = {r: pos[r][2] for r in members if r in behind or r in suspects or r in reached}
    return Stuck(key, desc, members, "collective", k, call.op if call else None,
                 call.input_sizes if call else (), (call.dtype,) if call and call.dtype else (),
                 call.size_bytes if call else None, tuple(sorted(behind + suspects)), tuple(sorted(reached)),
                 evidence)


def _stuck_p2p(key: str, desc: str, members: tuple[int, ...], entries: dict[int, list[FREntry]],
               by_rank: dict[int, FRDump]) -> list[Stuck]:
    """A send or receive not completed, against its peer only: the peer that never posted
    the matching receive or send is behind; the rest of the group is no part of it. The
    group is named by its key, as a collective's is: a split group's name and ranks."""
    order = sorted(members)
    out = []
    pending: dict[tuple[int, int, str], list[FREntry]] = {}
    for r, es in entries.items():
        for e in es:
            if e.is_p2p and e.op in ("send", "recv") and e.peer is not None and e.state != "completed" \
                    and e.peer < len(order):
                pending.setdefault((r, order[e.peer], e.op), []).append(e)
    for (r, peer, op), es in sorted(pending.items()):
        want = "recv" if op == "send" else "send"
        theirs = len(pending.get((peer, r, want), []))
        if theirs >= len(es):
            continue  # both ends posted: matched, nobody behind
        pd = by_rank.get(peer)
        peer_es = [e for e in entries.get(peer, []) if e.is_p2p]
        if pd is None:
            why = "no dump"
        elif not pd.entries:
            why = "empty ring"
        else:
            done = sum(1 for e in peer_es if e.op == want and e.state == "completed"
                       and e.peer is not None and e.peer < len(order) and order[e.peer] == r)
            why = f"ring: no pending {want} from rank {r} ({done} completed)"
        first = min(es, key=lambda e: e.p2p_seq)
        out.append(Stuck(key, desc, members, "p2p", first.p2p_seq, want, first.input_sizes or first.output_sizes,
                         (first.dtype,) if first.dtype else (), first.size_bytes, (peer,), (r,),
                         {peer: why, r: f"ring: {op} p2p #{first.p2p_seq} {first.state} to rank {peer}"
                          if op == "send" else f"ring: {op} p2p #{first.p2p_seq} {first.state} from rank {peer}"}))
    return out


def dumps_of(tels: list[Telemetry]) -> list[FRDump]:
    return [d for t in tels if (d := getattr(t, "dump", None)) is not None]


def _progress_warnings(tels: list[Telemetry]) -> list[str]:
    """Flight Recorder: the hang diagnosis in a sentence per stuck call (the ranks that
    are behind, and only those), with its warnings."""
    dumps = dumps_of(tels)
    if not dumps:
        return []
    diag = diagnose_hang(dumps)
    if not diag.stuck:
        return diag.warnings
    return [f"hang: {s}" for s in diag.sentences()] + diag.warnings
