"""Flight Recorder dumps of a simulated job, written in the writer's format (torch's
FlightRecorder.hpp / FlightRecorderDetail.hpp, and NCCLUtils.hpp before it), for the
versions whose source we read:

- "2.3" (torch 2.5): pg_config {name: {name, desc, ranks}}, pg_status by rank-local pg id,
  entries with is_p2p, dtypes and timeout_ms; no library version; the pickle writes an
  unset time_discovered_* as None.
- "2.7" (torch 2.7 / 2.8) and "2.9": as 2.3, with the top-level `nccl_version`.
- "2.10" (torch 2.9 on): `comm_lib_version` instead, and thread_name / thread_id per entry.
dump_json (any version) writes pg_status counters as strings, an unset time as 0, and
leaves `entries` out when the ring is empty; the pickle writes `process_group` as a tuple.

A job is one program per rank: steps (group, op, shape, dtype[, peer]). A step completes
when every participant reaches its matching step (a collective: each member's step of the
same collective_seq_id in the group; a send: the peer's matching receive). A rank stops at
its first step that cannot complete (that one is enqueued, 'started'), or at its program's
end (a rank stuck outside any collective). Each rank numbers its groups' pg_id in the order
it created the groups it is a member of: the same id names different groups on different
ranks, as in torch."""

from __future__ import annotations

import json
import pickle
from dataclasses import dataclass, field

DTYPE_BYTES = {"Float": 4, "BFloat16": 2, "Half": 2, "Long": 8, "Int": 4}


@dataclass
class Step:
    group: str
    op: str  # all_reduce, _allgather_base, broadcast, send, recv, ...
    shape: tuple = (1024,)
    dtype: str = "BFloat16"
    peer: int | None = None  # send / recv: the other end, a global rank


@dataclass
class Job:
    groups: dict  # name -> (desc, ranks), in creation order
    programs: dict = field(default_factory=dict)  # rank -> [Step]

    @property
    def world(self) -> int:
        return max(r for _, rs in self.groups.values() for r in rs) + 1

    def add(self, ranks, *steps: Step) -> Job:
        for r in ranks:
            self.programs.setdefault(r, []).extend(steps)
        return self

    # ---------------------------------------------------------------- who gets how far

    def _numbered(self) -> dict:
        """rank -> [(step, collective_seq, p2p_seq, key)]: key names the matching step on the
        other participants: ("coll", group, seq) or ("p2p", group, src, dst, n)."""
        out = {}
        for r, prog in self.programs.items():
            coll, p2p, pair = {}, {}, {}
            rows = []
            for s in prog:
                if s.op in ("send", "recv"):
                    p2p[s.group] = p2p.get(s.group, 0) + 1
                    src, dst = (r, s.peer) if s.op == "send" else (s.peer, r)
                    pair[(s.group, src, dst)] = pair.get((s.group, src, dst), 0) + 1
                    rows.append((s, coll.get(s.group, 0), p2p[s.group], ("p2p", s.group, src, dst,
                                                                          pair[(s.group, src, dst)])))
                else:
                    coll[s.group] = coll.get(s.group, 0) + 1
                    rows.append((s, coll[s.group], p2p.get(s.group, 0), ("coll", s.group, coll[s.group])))
            out[r] = rows
        return out

    def progress(self) -> dict:
        """rank -> index of the step it is blocked at (== len: it ran its whole program)."""
        rows = self._numbered()
        reach = {r: len(v) for r, v in rows.items()}
        while True:
            enq = {r: {row[3] for row in rows[r][:reach[r] + 1]} for r in rows}
            changed = False
            for r, rs in rows.items():
                for i, (s, _c, _p, key) in enumerate(rs[:reach[r]]):
                    others = ([p for p in self.groups[s.group][1] if p != r] if key[0] == "coll" else [s.peer])
                    if not all(key in enq.get(p, set()) for p in others):
                        if i < reach[r]:
                            reach[r], changed = i, True
                        break
            if not changed:
                return reach

    # ---------------------------------------------------------------- the writer

    def dump(self, rank: int, version: str = "2.10", ring: int = 2000, fmt: str = "pickle", lib: str = "2.21.5",
             started: bool = True, empty: bool = False, stack: bool = False, timing: bool = False,
             reach: dict | None = None) -> bytes:
        reach = self.progress() if reach is None else reach
        mine = [n for n, (_, rs) in self.groups.items() if rank in rs]
        pg_id = {n: i for i, n in enumerate(mine)}
        rows = self._numbered().get(rank, [])
        stop = reach.get(rank, 0)
        entries, status = [], {}
        t0 = 1_700_000_000_000_000_000 + rank * 7919  # each rank's clock and queue apart
        for i, (s, cseq, pseq, _key) in enumerate(rows[:stop + 1]):
            done = i < stop
            p2p = s.op in ("send", "recv")
            order = sorted(self.groups[s.group][1])
            name = s.op
            if p2p:
                me, peer = order.index(rank), order.index(s.peer)
                name = f"send {me}->{peer}" if s.op == "send" else f"recv {me}<-{peer}"
            state = "completed" if done else ("started" if started else "scheduled")
            t = t0 + i * 1_000_000
            e = {"record_id": i, "pg_id": pg_id[s.group], "process_group": (s.group, self.groups[s.group][0]),
                 "collective_seq_id": cseq, "p2p_seq_id": pseq, "op_id": i + 1, "profiling_name": f"nccl:{name}",
                 "time_created_ns": t, "input_sizes": [list(s.shape)], "input_dtypes": [s.dtype],
                 "output_sizes": [list(s.shape)], "output_dtypes": [s.dtype], "state": state,
                 "time_discovered_started_ns": t + 1000 if state != "scheduled" else None,
                 "time_discovered_completed_ns": t + 5000 if done else None, "retired": done,
                 "timeout_ms": 600000, "is_p2p": p2p}
            if s.op == "recv":
                e["input_sizes"], e["input_dtypes"] = [], []
            if timing and done:
                e["duration_ms"] = 0.05
            if version == "2.10":
                e["thread_name"], e["thread_id"] = "pt_main_thread", "140000000000000"
            if stack and fmt == "pickle":
                e["frames"] = [{"name": "train_step", "filename": "train.py", "line": 42}]
            entries.append(e)
            if not p2p:
                st = status.setdefault(pg_id[s.group], [-1, -1, -1])
                st[0] = cseq
                if state != "scheduled":
                    st[1] = cseq
                if done:
                    st[2] = cseq
        entries = entries[-ring:] if ring else []
        if empty:
            entries = []
        doc = {"version": version,
               "pg_config": {n: {"name": n, "desc": d, "ranks": "[" + ", ".join(map(str, rs)) + "]"}
                             for n, (d, rs) in self.groups.items() if rank in rs},
               "pg_status": {str(k): {"last_enqueued_collective": v[0], "last_started_collective": v[1],
                                      "last_completed_collective": v[2]} for k, v in sorted(status.items())}}
        if version in ("2.7", "2.8", "2.9"):
            doc["nccl_version"] = lib
        elif version == "2.10":
            doc["comm_lib_version"] = lib
        if fmt == "json":
            for e in entries:
                e["process_group"] = list(e["process_group"])
                for k in ("time_discovered_started_ns", "time_discovered_completed_ns"):
                    e[k] = e[k] or 0
                e.pop("frames", None)
            for st in doc["pg_status"].values():
                for k in st:
                    st[k] = str(st[k])
            if entries:
                doc["entries"] = entries
            return json.dumps(doc).encode()
        doc["entries"] = entries
        return pickle.dumps(doc, protocol=2)

    def write(self, folder, prefix: str = "nccl_trace_rank_", ranks=None, **kw) -> list:
        reach = self.progress()
        paths = []
        folder.mkdir(parents=True, exist_ok=True)
        for r in sorted(self.programs if ranks is None else ranks):
            opts = {k: (v(r) if callable(v) else v) for k, v in kw.items()}
            p = folder / f"{prefix}{r}"
            p.write_bytes(self.dump(r, reach=reach, **opts))
            paths.append(p)
        return paths


def coll(group: str, op: str = "all_reduce", n: int = 1024, dtype: str = "BFloat16") -> Step:
    return Step(group, op, (n,), dtype)


def send(group: str, peer: int, n: int = 1024, dtype: str = "Float") -> Step:
    return Step(group, "send", (n,), dtype, peer)


def recv(group: str, peer: int, n: int = 1024, dtype: str = "Float") -> Step:
    return Step(group, "recv", (n,), dtype, peer)


def sixteen_rank_hang(stuck=(3, 7), steps: int = 40) -> Job:
    """The issue's shape: 16 ranks, tensor parallel over 8 ('tp:0' = 0-7, 'tp:1' = 8-15),
    data parallel over pairs ('dp:i' = i, i+8), a world group created first. Each step: a
    bf16 all-reduce of 8 MiB in the rank's tp group, then one of 1 MiB in its dp group;
    'tp:1' also runs 20 more small all-reduces first (its counters run ahead). The ranks
    in `stuck` stop before the tp all-reduce #steps+1 (a rank holding the GIL)."""
    groups = {"0": ("default_pg", list(range(16))), "tp:0": ("tp", list(range(8))),
              "tp:1": ("tp", list(range(8, 16)))}
    for i in range(8):
        groups[f"dp:{i}"] = ("dp", [i, i + 8])
    job = Job(groups)
    job.add(range(8, 16), *[coll("tp:1", n=256) for _ in range(20)])
    for r in range(16):
        tp, dp = ("tp:0" if r < 8 else "tp:1"), f"dp:{r % 8}"
        prog = [coll("0", n=1)]
        for _ in range(steps):
            prog += [coll(tp, n=4 << 20), coll(dp, n=512 << 10)]
        if r not in stuck:
            prog += [coll(tp, n=4 << 20), coll(dp, n=512 << 10)]
        job.add([r], *prog)
    return job
