"""`linkroof bench` under a launcher: one rank per GPU. Every rank probes its host,
runs its GPU's own benchmarks and its part of the collectives; rank 0 gathers every
rank's results (with a deadline), merges hosts and measurements (each tagged with host
and rank) into one Profile and saves it. Other ranks save nothing.

`standin=True` replaces the GPU work by a CPU copy (NumPy), so the orchestration --
rank detection, planning, gathering, merging, a failing or hanging rank -- runs for
real on machines without GPUs (CI runs it under `mpirun -n 2`).
"""

from __future__ import annotations

import dataclasses
import os
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..microbench.nccl import CONVENTION, INTERNODE
from ..schema import BenchSpec, Environment, Measurement, Profile, Skipped, Topology, slowest_per_repetition
from .launch import Comm

LOCAL_FAMILIES = ("host", "local", "latency", "launch", "sync", "compute")
# What differs between the ranks' measurements of one collective
RANK_FIELDS = ("devices", "repetitions", "params.send_to", "params.recv_from", "params.rank_time")


@dataclass
class RankReport:
    rank: int
    host: str
    topology: Topology | None = None
    environment: Environment | None = None
    measurements: list[Measurement] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0


def standin_work(rank: int, nbytes: int = 8 << 20, reps: int = 5) -> list[Measurement]:
    """A CPU copy timed with perf_counter and checked: a stand-in for a rank's GPU work."""
    if os.environ.get("LINKROOF_STANDIN_FAIL_RANK") == str(rank):
        raise RuntimeError(f"injected failure on rank {rank}")
    if os.environ.get("LINKROOF_STANDIN_HANG_RANK") == str(rank):
        time.sleep(3600)
    src = np.arange(nbytes // 8, dtype=np.uint64) ^ np.uint64(rank + 1)
    dst = np.zeros_like(src)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        times.append(time.perf_counter() - t0)
    ok = bool(np.array_equal(src, dst))
    spec = BenchSpec("cpu_standin_copy", "cpu", "local", (rank,), nbytes, reps, params={"standin": True})
    return [Measurement(spec=spec, times_s=tuple(times), bytes_per_rep=nbytes,
                        bytes_convention="bytes copied (CPU stand-in, host clock)", verified=ok,
                        verification="destination equals source" if ok else "copy mismatch")]


def _rank_work(comm: Comm, suite: str, only: list[str] | None, reps: int | None, standin: bool,
               host_of: dict[int, str] | None = None, sizes: list[int] | None = None) -> RankReport:
    ctx = comm.ctx
    t0 = time.perf_counter()
    rep = RankReport(ctx.rank, ctx.hostname)
    try:
        from .environment import collect_environment
        from .probe import probe

        if standin:
            rep.topology = dataclasses.replace(probe(replay="h200x2"), notes=("CPU stand-in: recorded topology",))
            rep.environment = dataclasses.replace(collect_environment(), hostname=ctx.hostname)
            rep.measurements = standin_work(ctx.rank)
        else:
            rep.topology = probe()
            from .recording import live_source
            from .runner import cuda_versions

            source = live_source()
            try:  # NCCL version and the NCCL_* variables in force travel with each rank's figures
                rep.environment = dataclasses.replace(collect_environment(source.nvml, len(rep.topology.gpus)),
                                                      **cuda_versions())
            finally:
                source.close()
            rep.measurements, rep.skipped = _gpu_work(comm, rep.topology, suite, only, reps, host_of or {},
                                                      sizes)
    except Exception as e:  # noqa: BLE001 - reported to rank 0, which names the rank and host
        rep.error = f"{type(e).__name__}: {e}"
        if os.environ.get("LINKROOF_DEBUG"):
            rep.error += "\n" + traceback.format_exc()
    rep.seconds = time.perf_counter() - t0
    rep.measurements = [dataclasses.replace(m, host=ctx.hostname, rank=ctx.rank) for m in rep.measurements]
    return rep


def internode_sizes(suite: str, sizes: list[int] | None = None) -> list[int]:
    from .plan import SWEEP_SIZES

    return sizes or {"quick": [512 << 20], "default": [1 << 20, 512 << 20]}.get(suite, SWEEP_SIZES)


def _gpu_work(comm: Comm, topo: Topology, suite: str, only: list[str] | None,
              reps: int | None, host_of: dict[int, str],
              sizes: list[int] | None = None) -> tuple[list[Measurement], list[Skipped]]:
    from .plan import make_plan
    from .runner import run_plan

    gpu = comm.ctx.local_rank % max(1, len(topo.gpus))
    families = [f for f in (only or LOCAL_FAMILIES + ("nccl",)) if f in LOCAL_FAMILIES]
    out: list[Measurement] = []
    skipped: list[Skipped] = []
    if families:
        plan = make_plan(topo, suite, [gpu], families, sizes, reps)
        res = run_plan(plan)
        out += res.measurements
        skipped += res.skipped
    if comm.ctx.kind == "torchrun" and suite != "quick" and (only is None or "launch" in only):
        from ..microbench.terms import torch_issue_cost

        try:  # a user's loop of small torch collectives: launch included
            out += torch_issue_cost(gpu, comm.ctx.rank, comm.ctx.world)
        except Exception as e:  # noqa: BLE001
            skipped.append(Skipped("torch.distributed all-reduce cost per call", f"{type(e).__name__}: {e}", (gpu,)))
    if only is None or "nccl" in only:
        from ..microbench.nccl import RankCollectives

        from .plan import nccl_grid

        rc = RankCollectives(comm, gpu)
        for coll, size, ip, dt in nccl_grid(suite, sizes):
            try:
                out += rc.timings(coll, size, dtype=dt, reps=reps or 20, in_place=ip)
            except Exception as e:  # noqa: BLE001
                skipped.append(Skipped(f"nccl {coll} {size} B {dt}", f"{type(e).__name__}: {e}", (gpu,)))
        peers = internode_peers(host_of, comm.ctx.rank)
        if peers != (None, None):  # several hosts: every rank with its partner on the next host, at once
            for size in internode_sizes(suite, sizes):
                try:
                    out.append(rc.run_internode(size, peers, reps=reps or 20))
                except Exception as e:  # noqa: BLE001
                    skipped.append(Skipped(f"nccl send/recv between hosts {size} B", f"{type(e).__name__}: {e}",
                                           (gpu,)))
    return out, skipped


def run_distributed(comm: Comm, suite: str = "default", only: list[str] | None = None, reps: int | None = None,
                    label: str = "", standin: bool = False, timeout_s: float = 600.0, sizes: list[int] | None = None) -> Profile | None:
    """Every rank calls this; rank 0 returns the merged Profile, the others None."""
    ctx = comm.ctx
    hosts = comm.gather(ctx.hostname, timeout_s)  # who is there, before any work
    host_of: dict[int, str] = comm.bcast(dict(hosts or []) if ctx.rank == 0 else None)  # every rank: who is where
    report = _rank_work(comm, suite, only, reps, standin, host_of, sizes)
    got = comm.gather(report, timeout_s)
    if ctx.rank != 0:
        return None
    host_of = dict(hosts or [])
    reports: dict[int, RankReport] = {r: rep for r, rep in (got or [])}
    notes = [f"{ctx.world} ranks under {ctx.kind}" + (" (CPU stand-in for the GPU work)" if standin else "")]
    measurements: list[Measurement] = []
    skipped: list[Skipped] = []
    topologies: dict[str, Topology] = {}
    environments: dict[str, Environment] = {}
    for r in range(ctx.world):
        rep = reports.get(r)
        if rep is None:
            notes.append(f"rank {r} on host {host_of.get(r, 'unknown')} did not report within {timeout_s:g} s; "
                         "its results are missing")
            skipped.append(Skipped(f"rank {r}", f"no report within {timeout_s:g} s (host {host_of.get(r, 'unknown')})"))
            continue
        if rep.error:
            notes.append(f"rank {r} on host {rep.host} failed: {rep.error}")
            skipped.append(Skipped(f"rank {r}", f"failed on host {rep.host}: {rep.error}"))
        if rep.topology is not None:
            topologies.setdefault(rep.host, dataclasses.replace(rep.topology, host=dataclasses.replace(
                rep.topology.host, hostname=rep.host)))
        if rep.environment is not None:
            environments.setdefault(rep.host, rep.environment)
        measurements += rep.measurements
        skipped += rep.skipped
    if not standin:
        # ranks with a partner on another host (a rank without one sits the exchange out)
        paired = sum(1 for r in host_of if internode_peers(host_of, r) != (None, None))
        groups: dict[tuple[Any, ...], list[Measurement]] = {}
        for m in measurements:
            if m.spec.mechanism == "nccl":  # one collective: the same spec on every rank but its device
                groups.setdefault(m.spec.key(ignore=RANK_FIELDS), []).append(m)
        measurements += [slowest_rank(ms) for ms in groups.values()
                         if len(ms) == (paired if ms[0].spec.pattern == INTERNODE else ctx.world)]
    if not topologies:
        return None
    from .session import make_profile

    return make_profile(list(topologies.values()), list(environments.values()), measurements, skipped,
                        label=label or f"bench:{suite}:{ctx.world} ranks", notes=notes)


def incomplete(profile: Profile, world: int) -> bool:
    return any(s.name.startswith("rank ") for s in profile.skipped) or len({m.rank for m in profile.measurements}) < world


def internode_peers(host_of: dict[int, str], rank: int) -> tuple[int | None, int | None]:
    """Rail-aligned partners across hosts: the rank with the same local index on the
    next host (send to) and on the previous one (receive from); (None, None) on one
    host. Hosts are ordered by their lowest rank, local indices by rank."""
    hosts: list[str] = []
    ranks_on: dict[str, list[int]] = {}
    for r in sorted(host_of):
        h = host_of[r]
        if h not in ranks_on:
            hosts.append(h)
            ranks_on[h] = []
        ranks_on[h].append(r)
    if len(hosts) < 2 or rank not in host_of:
        return None, None
    here = hosts.index(host_of[rank])
    local = ranks_on[host_of[rank]].index(rank)

    def at(h: str) -> int | None:
        return ranks_on[h][local] if local < len(ranks_on[h]) else None

    return at(hosts[(here + 1) % len(hosts)]), at(hosts[(here - 1) % len(hosts)])


def slowest_rank(per_rank: list[Measurement]) -> Measurement:
    """Merge one collective's per-rank measurements: per repetition the slowest rank."""
    first = per_rank[0]
    times = slowest_per_repetition([m.times_s for m in per_rank])
    n = len(per_rank)
    ok = all(m.verified or "nothing to check" in m.verification for m in per_rank)
    ranks = tuple(sorted({d for m in per_rank for d in m.spec.devices})) if len(per_rank) > 1 else tuple(range(n))
    spec = BenchSpec(first.spec.name, "nccl", first.spec.pattern, ranks, first.spec.message_bytes, len(times),
                     params={**{k: v for k, v in first.spec.params.items()
                                if k not in ("rank_time", "send_to", "recv_from")},
                             "rank_time": "slowest rank per repetition"})
    return Measurement(spec=spec, times_s=times, bytes_per_rep=first.bytes_per_rep, bytes_convention=CONVENTION,
                       verified=ok, verification="every rank checked its result" if ok else "a rank found wrong results",
                       busbw_factor=first.busbw_factor)
