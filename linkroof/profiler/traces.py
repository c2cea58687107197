"""Reading PyTorch profiler (Kineto) traces for `linkroof trace`: one file per rank,
`.json` or `.json.gz`, read as a stream (ijson) so traces of several GB fit. What is
kept: the GPU's activities (kernels, copies, memsets) with the args torch copied onto
them, the runtime launches by correlation id, the host's comm ops (record_param_comms,
c10d::*), the steps (ProfilerStep#N), the GPUs (deviceProperties) and the process groups
(distributedInfo). The arithmetic on them is roofline/traces.py's.

A file that is not such a trace gets one line saying what it is instead: cut off
mid-file, a Chrome trace from another tool, a trace with no GPU events, ranks of
different jobs given together.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import LinkroofError
from ..files import regular_file
from ..roofline.timeline import Activity
from ..roofline.traces import CollectiveCall, CommOp, collective_call, collective_name, innermost, is_collective_kernel

MAX_TRACE = 16 << 30  # bytes on disk; a trace is streamed, never held whole


class TraceError(LinkroofError):
    """A file that is not a PyTorch profiler trace linkroof can read; the message says why."""


@dataclass
class Trace:
    """One rank's trace, as read."""

    path: str
    rank: int | None
    world_size: int | None
    backend: str
    devices: list[dict]
    activities: list[Activity]
    kernel_args: list[dict]  # beside each activity, the args torch copied onto it
    launches: dict[int, tuple[int, int]]  # correlation id -> (thread, start ns) of the runtime launch
    ops: list[CommOp]
    steps: list[tuple[str, int, int]]  # (name, start ns, end ns) on the GPU where the trace has them
    groups: dict[str, int]  # process group name -> size
    notes: list[str] = field(default_factory=list)
    _found: list | None = field(default=None, init=False, repr=False)  # (activity, call), found once

    def collectives(self) -> list[CollectiveCall]:
        """Each collective's GPU activity, with its facts from the best tier the trace
        has: an NCCL kernel or one carrying collective args, or any kernel or copy
        launched inside a record_param_comms op (a one-rank group's collective is a copy)."""
        return [c for _, c in self._scan()]

    def comm_ids(self) -> set[int]:
        """The activities that are collectives (by id), for the interval arithmetic."""
        return {id(a) for a, _ in self._scan()}

    def _scan(self) -> list[tuple[Activity, CollectiveCall]]:
        if self._found is None:
            found = []
            for a, args in zip(self.activities, self.kernel_args):
                launch = self.launches.get(a.correlation)
                if not is_collective_kernel(a, args):
                    op = innermost(self.ops, *launch) if launch else None
                    named = op.args.get("Collective name") if op is not None else None
                    if not named or collective_name(named) in (None, "barrier"):
                        continue
                found.append((a, collective_call(a, args, launch, self.ops, self.groups, self.rank)))
            self._found = found
        return self._found


def _ns(us: Any) -> int:
    return int(round(float(us) * 1000))


def _open(p: Path) -> Any:
    with open(p, "rb") as f:
        magic = f.read(2)
    return gzip.open(p, "rb") if magic == b"\x1f\x8b" else open(p, "rb")


COMM_OP_PREFIXES = ("record_param_comms", "c10d::", "nccl:")


def _stream(p: Path, on_event: Any) -> tuple[dict, int]:
    """One pass over the file: each traceEvents item given to `on_event` as it is read
    (never the whole list in memory), the other top-level keys returned; and how many
    events there were."""
    import ijson

    meta: dict = {}
    key, builder, item, n = None, None, None, 0

    def close() -> None:
        if key is not None and builder is not None:
            meta[key] = builder.value

    f = _open(p)
    try:
        for prefix, event, value in ijson.parse(f, use_float=True):
            if prefix == "":
                if event == "map_key":
                    close()
                    key, builder = value, (None if value == "traceEvents" else ijson.ObjectBuilder())
                elif event == "end_map":
                    close()
                    key, builder = None, None
                elif event == "start_array":
                    raise TraceError(f"{p}: a JSON list, not a trace object with traceEvents (a Chrome trace in "
                                     "the array form, from another tool)")
                continue
            if key == "traceEvents":
                if prefix == "traceEvents":
                    continue
                if prefix == "traceEvents.item" and event == "start_map":
                    item = ijson.ObjectBuilder()
                if item is not None:
                    item.event(event, value)
                    if prefix == "traceEvents.item" and event == "end_map":
                        n += 1
                        on_event(item.value)
                        item = None
            elif builder is not None:
                builder.event(event, value)
    except TraceError:
        raise
    except (ijson.common.JSONError, ValueError) as e:
        first, last = _ends(p)
        if first == b"{" and last != b"}":
            raise TraceError(f"{p}: the file ends mid-JSON after {n} events: a trace cut off before the profiler "
                             "finished writing it") from None
        raise TraceError(f"{p}: not a JSON trace (after {n} events: {str(e).splitlines()[0][:80]})") from None
    except EOFError:
        raise TraceError(f"{p}: the compressed file ends early after {n} events: a trace cut off before the "
                         "profiler finished writing it") from None
    except (OSError, UnicodeDecodeError) as e:
        raise TraceError(f"{p}: cannot be read as a trace ({type(e).__name__}: {str(e)[:100]})") from None
    finally:
        f.close()
    return meta, n


def _ends(p: Path) -> tuple[bytes, bytes]:
    """The first and last non-blank byte of the (decompressed) file: a trace cut off
    mid-write starts with '{' and does not end with '}'."""
    first, last = b"", b""
    try:
        with _open(p) as f:
            while chunk := f.read(1 << 20):
                stripped = chunk.strip()
                if stripped:
                    first = first or stripped[:1]
                    last = stripped[-1:]
    except (OSError, EOFError):
        pass  # a gzip stream cut off: what was read decides
    return first, last


def read_trace(path: str | Path) -> Trace:
    """One rank's trace file, or TraceError saying why it is not one."""
    p = regular_file(path, "trace")
    if p.stat().st_size > MAX_TRACE:
        raise TraceError(f"{p}: {p.stat().st_size} bytes is over the {MAX_TRACE}-byte limit for a trace")
    acts: list[Activity] = []
    kargs: list[dict] = []
    launches: dict[int, tuple[int, int]] = {}
    ops: list[CommOp] = []
    gpu_steps: list[tuple[str, int, int]] = []
    cpu_steps: list[tuple[str, int, int]] = []

    def on_event(e: Any) -> None:
        if not isinstance(e, dict) or e.get("ph") != "X":
            return
        cat, name, args = e.get("cat"), str(e.get("name", "")), e.get("args") or {}
        if not isinstance(args, dict):
            args = {}
        try:
            start = _ns(e["ts"])
            end = start + _ns(e.get("dur", 0))
        except (KeyError, TypeError, ValueError):
            return
        tid = e.get("tid", 0)
        tid = int(tid) if isinstance(tid, (int, float)) or str(tid).isdigit() else 0
        if cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            kind = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}[cat]
            words = name.split()
            copy_kind = words[1] if kind == "memcpy" and len(words) > 1 else ""
            grid = tuple(int(x) for x in (args.get("grid") or (0, 0, 0))[:3]) if kind == "kernel" else (0, 0, 0)
            block = tuple(int(x) for x in (args.get("block") or (0, 0, 0))[:3]) if kind == "kernel" else (0, 0, 0)
            acts.append(Activity(kind, name, int(args.get("device", 0) or 0), int(args.get("stream", 0) or 0),
                                 start, end, int(args.get("correlation", 0) or 0), grid, block,  # type: ignore[arg-type]
                                 int(args.get("bytes", 0) or 0), copy_kind))
            kargs.append(args)
        elif cat in ("cuda_runtime", "cuda_driver"):
            c = args.get("correlation")
            if isinstance(c, (int, float)):
                launches[int(c)] = (tid, start)
        elif cat == "gpu_user_annotation" and name.startswith("ProfilerStep#"):
            gpu_steps.append((name, start, end))
        elif cat in ("cpu_op", "user_annotation"):
            if name.startswith(COMM_OP_PREFIXES):
                ops.append(CommOp(name, tid, start, end, args))
            elif name.startswith("ProfilerStep#"):
                cpu_steps.append((name, start, end))

    meta, seen_events = _stream(p, on_event)
    if not seen_events and "traceEvents" not in meta:
        raise TraceError(f"{p}: no traceEvents: not a Chrome / PyTorch profiler trace")
    if not acts:
        kineto = "deviceProperties" in meta or "schemaVersion" in meta or launches
        raise TraceError(f"{p}: no GPU events (kernels, copies or memsets) in {seen_events} events: " +
                         ("a PyTorch profiler trace taken without ProfilerActivity.CUDA" if kineto else
                          "a Chrome trace from another tool, not a PyTorch profiler trace"))
    dist = meta.get("distributedInfo") if isinstance(meta.get("distributedInfo"), dict) else {}
    groups = {}
    for g in dist.get("pg_config") or []:
        if isinstance(g, dict) and isinstance(g.get("pg_size"), int) and g.get("pg_size") > 0:
            groups[str(g.get("pg_name", ""))] = g["pg_size"]
    # a step on the GPU: from the first to the last activity its host step launched (the
    # GPU's own ProfilerStep annotation leaves out copies, seen on torch 2.11), else that annotation
    steps = _gpu_windows(sorted(cpu_steps, key=lambda s: s[1]), acts, launches) or sorted(gpu_steps,
                                                                                          key=lambda s: s[1])
    rank = dist.get("rank") if isinstance(dist.get("rank"), int) else None
    world = dist.get("world_size") if isinstance(dist.get("world_size"), int) else None
    notes = []
    if not steps:
        notes.append("no ProfilerStep in the trace: the whole trace is one step")
    return Trace(str(p), rank, world, str(dist.get("backend", "")), list(meta.get("deviceProperties") or []),
                 acts, kargs, launches, ops, steps, groups, notes=notes)


def _gpu_windows(cpu_steps: list[tuple[str, int, int]], acts: list[Activity],
                 launches: dict[int, tuple[int, int]]) -> list[tuple[str, int, int]]:
    """Steps on the GPU where the trace has only the host's ProfilerStep ops: from the
    first to the last activity launched inside each."""
    out = []
    for name, lo, hi in cpu_steps:
        mine = [a for a in acts if a.correlation in launches and lo <= launches[a.correlation][1] <= hi]
        if mine:
            out.append((name, min(a.start_ns for a in mine), max(a.end_ns for a in mine)))
    return out


def read_job(paths: list[str]) -> list[Trace]:
    """Several ranks' traces of one job: refused when they cannot be (two files of one
    rank, world sizes or process groups that differ)."""
    traces = [read_trace(p) for p in paths]
    if len(traces) > 1:
        ranks = [t.rank for t in traces]
        known = [r for r in ranks if r is not None]
        if len(set(known)) != len(known):
            dup = sorted({r for r in known if known.count(r) > 1})
            raise TraceError(f"ranks {dup} appear in more than one file: traces of different jobs (or one rank's "
                             "twice) given together")
        worlds = {t.world_size for t in traces if t.world_size is not None}
        if len(worlds) > 1:
            raise TraceError(f"the traces' world sizes differ ({sorted(worlds)}): ranks of different jobs given "
                             "together")
        pgs = {tuple(sorted(t.groups.items())) for t in traces if t.groups}
        if len(pgs) > 1:
            raise TraceError("the traces' process groups differ: ranks of different jobs given together")
    return traces


# ------------------------------------------------------------------ against this machine


@dataclass
class CollectiveRow:
    """A collective call of the trace, and what this machine does at its size."""

    call: CollectiveCall
    nccl_s: float | None = None  # the profile's NCCL time at the call's collective, dtype, group and size
    nccl_how: str = ""
    bound_s: float | None = None  # the cost model's latency-aware bound
    exposed_s: float = 0.0  # the call's time with no other work beside it on its GPU (measured)
    placement: Any = None
    wait_s: float = 0.0  # matched across ranks: how long it waited for the last rank to arrive (measured)
    transfer_busbw: float | None = None  # matched: bus bandwidth of the transfer alone, the wait left out

    @property
    def fraction_of_nccl(self) -> float | None:
        return self.nccl_s / self.call.duration_s if self.nccl_s and self.call.duration_s > 0 else None

    @property
    def fraction_of_bound(self) -> float | None:
        return self.bound_s / self.call.duration_s if self.bound_s and self.call.duration_s > 0 else None

    def saving(self, target_s: float | None) -> float:
        """Inferred: what the step would lose if this call took `target_s`: the part of
        its transfer (its time less its wait for a late rank: no faster collective
        shortens that) above the target, no more than its exposed (measured) part."""
        if target_s is None:
            return 0.0
        return max(0.0, min(self.exposed_s, self.call.duration_s - self.wait_s - target_s))

    def to_dict(self) -> dict:
        c = self.call
        return {"rank": c.rank, "collective": c.collective, "dtype": c.dtype, "in_nelems": c.in_nelems,
                "out_nelems": c.out_nelems, "size_bytes": c.size_bytes, "group_size": c.group_size,
                "group_from": c.group_from, "process_group": c.process_group, "seq": c.seq, "source": c.source,
                "kernel": c.kernel, "device": c.device, "stream": c.stream, "start_ns": c.start_ns,
                "duration_s": c.duration_s, "algbw": c.algbw, "busbw": c.busbw, "exposed_s": self.exposed_s,
                "wait_s": self.wait_s, "transfer_busbw": self.transfer_busbw,
                "nccl_s": self.nccl_s, "nccl_how": self.nccl_how, "fraction_of_nccl": self.fraction_of_nccl,
                "bound_s": self.bound_s, "fraction_of_bound": self.fraction_of_bound, "notes": list(c.notes)}


@dataclass
class TraceReport:
    traces: list[Trace]
    rows: list[CollectiveRow]
    steps: list[Any]  # roofline.traces.StepSummary, with savings beside
    savings: list[tuple[float, float]]  # per step: (at NCCL's speed, at the bound), inferred
    matched: list[Any]
    warnings: list[str]
    unmatched: list[Any] = field(default_factory=list)

    def to_dict(self) -> dict:
        import dataclasses as dc

        return {"files": [t.path for t in self.traces], "ranks": [t.rank for t in self.traces],
                "collectives": [r.to_dict() for r in self.rows],
                "steps": [{**{k: v for k, v in dc.asdict(s).items()}, "span_s": s.span_s,
                           "saving_at_nccl_s": a, "saving_at_bound_s": b} for s, (a, b) in zip(self.steps,
                                                                                             self.savings)],
                "across_ranks": [{**dc.asdict(m), "busbw": m.busbw} for m in self.matched],
                "unmatched": [dc.asdict(u) for u in self.unmatched], "warnings": self.warnings}

    def to_dataframe(self) -> Any:
        import pandas as pd

        return pd.DataFrame([r.to_dict() for r in self.rows])


def machine_warnings(traces: list[Trace], topology: Any) -> list[str]:
    """Where the trace's GPUs are not this profile's: the trace names them
    (deviceProperties), the profile's topology names its own."""
    out = []
    if topology is None:
        return out
    mine = {g.name for g in topology.gpus}
    for t in traces:
        names = {str(d.get("name")) for d in t.devices if isinstance(d, dict) and d.get("name")}
        if names and mine and not names & mine:
            out.append(f"{Path(t.path).name} was recorded on {', '.join(sorted(names))}; the profile placed against "
                       f"describes {', '.join(sorted(mine))}: the figures compare another machine's run with this "
                       "one's")
    return out


def analyze(traces: list[Trace], profile: Any) -> TraceReport:
    """Every collective of the traces against the profile's NCCL figures and cost model;
    each step's time by class, overlapped and exposed communication; the ranks matched."""
    from ..roofline.baseline import nccl_baseline
    from ..roofline.cost import with_cost
    from ..roofline.model import MachineModel
    from ..roofline.place import PlacementError, place
    from ..roofline.traces import exposed_s, match_calls, step_summary
    from ..roofline.workload import WorkloadError, collective

    model = MachineModel.from_profile(profile)
    rows: list[CollectiveRow] = []
    steps, savings = [], []
    for t in traces:
        calls = t.collectives()
        comm_ids = t.comm_ids()
        trace_rows = []
        for c in calls:
            row = CollectiveRow(c, exposed_s=exposed_s(c, t.activities, comm_ids))
            if c.collective and c.size_bytes and c.group_size and c.group_size > 1:
                try:
                    wl = collective(c.collective, c.size_bytes, c.group_size)
                    import dataclasses as dc

                    wl = dc.replace(wl, params={"dtype": c.dtype or "fp32"},
                                    name=f"trace {c.collective} {c.size_bytes} B {c.dtype} x{c.group_size}"
                                         + (f" rank {c.rank}" if c.rank is not None else ""))
                    base = nccl_baseline(profile, wl)
                    if base is not None and base.ranks == c.group_size:
                        row.nccl_s, row.nccl_how = base.median_s, f"{base.dtype}, {base.how}"
                    elif base is not None:
                        row.nccl_how = f"the profile has NCCL on {base.ranks} ranks only, not {c.group_size}"
                    else:
                        row.nccl_how = "the profile has no NCCL figure for this collective"
                    p = with_cost(place(wl, c.duration_s, model, "measured"), profile, model, collective_s=row.nccl_s)
                    row.placement = p
                    row.bound_s = p.cost_bound_s or None
                except (WorkloadError, PlacementError) as e:
                    row.nccl_how = f"not placed: {e}"
            elif c.group_size == 1:
                row.nccl_how = "a one-rank group: nothing crosses a link"
            else:
                row.nccl_how = "not placed: " + ("size unknown" if not c.size_bytes else "group size unknown")
            trace_rows.append(row)
        rows += trace_rows
    matched, unmatched = match_calls([r.call for r in rows]) if len(traces) > 1 else ([], [])
    members = _member_index(rows)
    for m in matched:
        for rank, w in m.waits_s:
            for r in members(m, rank):
                r.wait_s, r.transfer_busbw = w, m.busbw
    for t in traces:
        comm_ids = t.comm_ids()
        mine = {id(c) for c in t.collectives()}
        trace_rows = [r for r in rows if id(r.call) in mine]
        windows = t.steps or [("whole trace", min(a.start_ns for a in t.activities),
                               max(a.end_ns for a in t.activities))]
        for name, lo, hi in windows:
            st = step_summary(t.rank, name, lo, hi, t.activities, comm_ids)
            steps.append(st)
            inside = [r for r in trace_rows if lo <= r.call.start_ns < hi]
            # calls that ran at once share their exposed time: the step saves at most its exposed
            # communication (the union), and never more than the step itself
            cap = min(st.exposed_s, st.span_s)
            savings.append((min(cap, sum(r.saving(r.nccl_s) for r in inside)),
                            min(cap, sum(r.saving(r.bound_s) for r in inside))))
    warnings = machine_warnings(traces, profile.topologies[0] if getattr(profile, "topologies", None) else None)
    for t in traces:
        warnings += [f"{Path(t.path).name}: {n}" for n in t.notes]
    if unmatched:
        warnings.append(f"{len(unmatched)} call(s) not matched across ranks (a rank lacks the call, or the ranks' "
                        "calls under one key differ); --json lists them with why")
    return TraceReport(traces, rows, steps, savings, matched, warnings, unmatched)


def _member_index(rows: list[CollectiveRow]) -> Any:
    """rows -> a function (matched call, rank) -> the rows of that rank it holds (its key:
    Seq, or the order among its process group's calls of one collective, size and type)."""
    by_seq: dict[tuple, list[CollectiveRow]] = {}
    by_what: dict[tuple, list[CollectiveRow]] = {}
    for r in sorted(rows, key=lambda r: r.call.start_ns):
        c = r.call
        if c.seq is not None:
            by_seq.setdefault((c.rank, c.process_group, c.seq), []).append(r)
        else:
            by_what.setdefault((c.rank, c.process_group, c.collective, c.size_bytes, c.dtype), []).append(r)

    def members(m: Any, rank: int) -> list[CollectiveRow]:
        if m.key[0] == "seq":
            return by_seq.get((rank, m.key[1], m.key[2]), [])
        pg, coll, size, dtype, i = m.key[1:]
        return by_what.get((rank, pg, coll, size, dtype), [])[i:i + 1]

    return members
