"""PyTorch's Flight Recorder dumps (pickle or JSON, one per rank), read from what its
writer writes (torch's FlightRecorderDetail.hpp); moved out of telemetry.py, which
imports these names from here."""

from __future__ import annotations

import io
import json
import math
import pickle
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..roofline.traces import c10_dtype, collective_name

if TYPE_CHECKING:
    from .telemetry import Telemetry

FR_STATES = {"completed", "started", "scheduled"}


def _tel():  # telemetry.py imports this module: its names are taken at call time
    from . import telemetry

    return telemetry


def _err(path: str, where: str | int | None, msg: str) -> Exception:
    return _tel()._err(path, where, msg)


def _opt_int(x: Any) -> int | None:
    return _tel()._opt_int(x)


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
        raise pickle.UnpicklingError(f"the dump asks for {module}.{name}; a Flight Recorder dump holds plain data")


def _fr_doc(data: bytes, path: str) -> dict:
    head = data.lstrip()[:1]
    try:
        if head == b"{":
            doc = json.loads(data)
        else:
            doc = _SafeUnpickler(io.BytesIO(data)).load()
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise _err(path, None, f"not a Flight Recorder dump (not JSON: {getattr(e, 'msg', e)})") from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError,
            MemoryError, RecursionError, OverflowError, UnicodeDecodeError) as e:
        raise _err(path, None, f"not a Flight Recorder dump (pickle: {e})") from None
    if not isinstance(doc, dict) or "version" not in doc or not ({"entries", "pg_config"} & set(doc)):
        raise _err(path, None, "not a Flight Recorder dump (no version with entries or pg_config)")
    return doc


def _ranks_of(spec: Any) -> list[int] | None:
    if isinstance(spec, list):
        return [int(r) for r in spec if isinstance(r, int)]
    if isinstance(spec, str):
        found = re.findall(r"\d+", spec)
        return [int(r) for r in found] if found else None
    return None


def _numel(shape: Any) -> int:
    n = 1
    for d in shape:
        if not isinstance(d, int) or isinstance(d, bool) or d < 0:
            raise ValueError(f"dimension {d!r}")
        n *= d
    return n


def _fr_bytes(sizes: Any, dtypes: Any) -> tuple[int, str | None]:
    if not isinstance(sizes, list) or not isinstance(dtypes, list):
        raise ValueError("sizes and dtypes must be lists")
    total, names = 0, set()
    for shape, dt in zip(sizes, dtypes):
        known = c10_dtype(dt)
        if known is None:
            raise ValueError(f"data type {dt!r}")
        names.add(known[0])
        total += _numel(shape) * known[1]
    return total, (names.pop() if len(names) == 1 else None)


def _rank_from_name(path: str) -> int | None:
    m = re.search(r"(\d+)(?:\.json|\.pkl|\.pickle)?$", Path(path).name)
    return int(m.group(1)) if m else None


def parse_flight_recorder(data: bytes, path: str = "<dump>", rank: int | None = None) -> Telemetry:
    """One rank's Flight Recorder dump (`TORCH_NCCL_DEBUG_INFO_TEMP_FILE<rank>`: a pickle,
    or JSON). The rank is the file name's trailing number unless given. A call's time is
    `duration_ms` (CUDA events, only with TORCH_NCCL_ENABLE_TIMING=1); its start is
    `time_discovered_started_ns`, when the watchdog saw it start (host clock, coarse)."""
    doc = _fr_doc(data, path)
    rank = _rank_from_name(path) if rank is None else rank
    pgs = doc.get("pg_config") or {}
    if not isinstance(pgs, dict):
        raise _err(path, "pg_config", "not a mapping of process groups")
    sizes = {}
    for name, cfg in pgs.items():
        ranks = _ranks_of(cfg.get("ranks")) if isinstance(cfg, dict) else None
        if ranks:
            sizes[str(name)] = len(ranks)
    entries = doc.get("entries") or []
    if not isinstance(entries, list):
        raise _err(path, "entries", "not a list")
    calls, timed = [], 0
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise _err(path, f"entries[{i}]", "not an entry")
        try:
            pg = e.get("process_group") or ("", "")
            pg_name = str(pg[0]) if isinstance(pg, (list, tuple)) and pg else str(pg)
            name = str(e["profiling_name"])
            p2p = bool(e.get("is_p2p", False))
            seq = int(e["p2p_seq_id"] if p2p else e["collective_seq_id"])
            in_b, in_t = _fr_bytes(e.get("input_sizes", []), e.get("input_dtypes", []))
            out_b, out_t = _fr_bytes(e.get("output_sizes", []), e.get("output_dtypes", []))
            state = str(e.get("state", ""))
            dur = e.get("duration_ms")
            dur = float(dur) if dur is not None else None
            started = _opt_int(e.get("time_discovered_started_ns")) or None
        except (KeyError, TypeError, ValueError, IndexError) as ex:
            raise _err(path, f"entries[{i}]", f"missing or bad field ({ex})") from None
        if state not in FR_STATES:
            raise _err(path, f"entries[{i}]", f"state {state!r} is not one of {sorted(FR_STATES)}")
        if dur is not None and not (math.isfinite(dur) and dur >= 0):
            raise _err(path, f"entries[{i}]", f"duration_ms {dur} is not a time")
        coll = collective_name(name.split()[0])
        notes = [] if coll else [f"{name!r}: not a collective linkroof knows"]
        group = 2 if p2p else sizes.get(pg_name)
        if group is None:
            notes.append(f"process group {pg_name!r} not in pg_config: group size unknown")
        size = max(in_b, out_b) or None  # nccl-tests: an all-gather's output, a reduce-scatter's input
        time_s = dur * 1e-3 if dur else None
        timed += time_s is not None
        calls.append(_tel().TelemetryCall("Flight Recorder", rank, "", pg_name, seq, coll, in_t or out_t, size, group,
                                   time_s, None, "CUDA events (duration_ms)" if time_s else "", state,
                                   start_us=started / 1e3 if started else None, notes=tuple(notes)))
    progress = []
    status = doc.get("pg_status") or {}
    if isinstance(status, dict):
        for pg_id, s in status.items():
            if isinstance(s, dict):
                progress.append({"rank": rank, "pg_id": str(pg_id),
                                 **{k: _opt_int(s.get(k)) for k in ("last_enqueued_collective",
                                                                    "last_started_collective",
                                                                    "last_completed_collective")}})
    notes = [f"Flight Recorder dump version {doc.get('version')}, {doc.get('comm_lib_version', '?')}"]
    if calls and not timed:
        notes.append("no entry has duration_ms (TORCH_NCCL_ENABLE_TIMING was off): states and order only, no "
                     "bandwidth")
    return _tel().Telemetry("Flight Recorder", path, calls, notes, progress=progress)


def _progress_warnings(tels: list[Telemetry]) -> list[str]:
    """Flight Recorder: a rank whose last completed collective is behind its peers' in one
    process group (the rank a hang waits for)."""
    by_pg: dict[str, list[dict]] = {}
    for t in tels:
        for p in t.progress:
            by_pg.setdefault(p["pg_id"], []).append(p)
    out = []
    for pg, ps in sorted(by_pg.items()):
        done = [p for p in ps if p.get("last_completed_collective") is not None]
        if len(done) < 2:
            continue
        top = max(p["last_completed_collective"] for p in done)
        behind = sorted((p["rank"], p["last_completed_collective"]) for p in done
                        if p["last_completed_collective"] < top)
        if behind:
            out.append(f"process group {pg}: rank(s) " + ", ".join(f"{r} (last completed #{n})" for r, n in behind)
                       + f" behind the others (#{top}): the ranks a stuck collective waits for")
    return out
