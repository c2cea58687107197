"""Planning: from a Topology, the benchmarks that make sense on this machine.

No CuPy is touched here (the instruments import it only when they run), so plans are
tested on recorded and synthetic topologies. Each planned item holds the benchmark
function itself and its arguments; `runner.py` calls them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..microbench import compute, copies, latency, local, multicast, nccl, terms
from ..roofline.collectives import COLLECTIVES, NO_IN_PLACE
from ..schema import Skipped, Topology, known

FAMILIES = ("host", "local", "peer_ce", "peer_sm", "peer_tma", "reduce", "concurrency", "latency", "launch", "sync",
            "sweep", "compute", "overlap", "nccl", "oneshot", "multicast")
SUITES = ("quick", "default", "full")

MiB = 1 << 20
# Pointer chases in the quick and default suites sample this many SMs spread over the
# die (the full suite every SM): on 2xH200 the mean over 33 agreed with all 132 within
# 0.3 % (host 1196.6 / 1200.2 ns, peer 829.2 / 829.8 ns; benchmarks/RESULTS.md).
CHASE_SMS = 33
GiB = 1 << 30
SWEEP_SIZES = [8 << k for k in range(28)]  # collectives: nccl-tests' default grid, -b 8 -e 1G -f 2


@dataclass(frozen=True)
class PlannedBench:
    family: str
    title: str  # for the progress bar
    fn: Callable[..., Any]  # the benchmark function, e.g. copies.peer_copy
    kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def function_name(self) -> str:
        """'copies.peer_copy': the function's module inside linkroof.microbench, and name."""
        return f"{self.fn.__module__.rsplit('.', 1)[-1]}.{self.fn.__name__}"


@dataclass
class Plan:
    items: list[PlannedBench]
    skipped: list[Skipped]
    gpus: list[int]
    suite: str

    def families(self) -> list[str]:
        return list(dict.fromkeys(i.family for i in self.items))


def _peer_ok(topo: Topology, a: int, b: int) -> bool:
    p = topo.pair(a, b)
    return p.p2p_read == "OK" or p.p2p_write == "OK" or p.nvlink_via in ("switch", "direct")


def _sized(params: dict[str, Any], topo: Topology, gpu: int, per_sm: int = 2) -> dict[str, Any]:
    """Fill in a block count from the issuing GPU's SM count (2 blocks per SM by default)."""
    sms = topo.gpus[gpu].sm_count if known(topo.gpus[gpu].sm_count) else 132
    return {k: (sms * per_sm if k == "blocks" and v is None else v) for k, v in params.items()}


def scaled_parallelism(mechanism: str, size: int, sms: int) -> dict[str, Any]:
    """A small message's parallelism scaled to the message, the same rule for SM and TMA:
    every issuing unit gets work (SM: 512 threads a block, 16 bytes a thread at least;
    TMA: one issuing thread a block, chunks of size / (2 x SMs) between 1 and 16 KiB),
    at most 2 blocks per SM. The active threads and blocks go into the parameters, so
    a crossover between mechanisms reflects the mechanism, not the split of work."""
    if mechanism == "sm":
        blocks = max(1, min(2 * sms, -(-size // (512 * 16))))
        return {"blocks": blocks, "threads": 512, "active_blocks": blocks,
                "active_threads": min(blocks * 512, max(1, size // 16))}
    chunk = 1024
    while chunk < 16384 and chunk * 2 * sms < size:
        chunk *= 2
    blocks = max(1, min(2 * sms, -(-size // chunk)))
    return {"blocks": blocks, "chunk": chunk, "active_blocks": blocks, "active_threads": blocks}


def _block_counts(sms: int, suite: str) -> list[int]:
    """Block counts of the saturation sweeps: from an eighth of the SMs to 2 blocks per SM;
    the full suite from 1 block to 4 per SM (where each mechanism reaches 90 % of its peak)."""
    if suite == "full":
        return sorted({1, 2, 4, 8, max(1, sms // 8), sms // 4, sms // 2, sms, 2 * sms, 4 * sms})
    return sorted({max(1, sms // 8), sms // 4, sms // 2, sms, 2 * sms})


def default_sizes(suite: str) -> list[int]:
    """Message sizes of the sweeps: bytes to 1 GiB."""
    if suite == "full":
        return [1 << k for k in range(2, 31)]  # 4 B .. 1 GiB, every power of two
    return [1 << k for k in range(4, 31, 2)]  # 16 B .. 1 GiB, every factor of 4


def nccl_grid(suite: str, sizes: list[int] | None = None) -> list[tuple[str, int, bool, str]]:
    """(collective, bytes, in-place, dtype) for a suite: quick = all-reduce at 8 B and
    512 MiB; default = every collective at 8 B, 1 MiB, 512 MiB (+ in-place all-gather);
    full = nccl-tests' sweep (8 B - 1 GiB, x2) out of place, in place at every other
    size, and all-reduce in bf16 and fp16.
    `sizes` (--sizes) sweeps every collective out-of-place in any suite."""
    if sizes:
        return [(c, s_, False, "fp32") for c in COLLECTIVES for s_ in sizes]
    if suite == "quick":
        return [("all_reduce", s_, False, "fp32") for s_ in (8, 512 * MiB)]
    if suite == "default":
        return [(c, s_, False, "fp32") for c in COLLECTIVES for s_ in (8, MiB, 512 * MiB)] + \
            [("all_gather", 512 * MiB, True, "fp32")]
    grid = [(c, s_, False, "fp32") for c in COLLECTIVES for s_ in SWEEP_SIZES] + \
        [(c, s_, True, "fp32") for c in COLLECTIVES if c not in NO_IN_PLACE for s_ in SWEEP_SIZES[::2] + [GiB]]
    return grid + [("all_reduce", s_, False, dt) for dt in ("bf16", "fp16") for s_ in SWEEP_SIZES]


def make_plan(topo: Topology, suite: str = "default", gpus: Iterable[int] | None = None,
              only: Iterable[str] | None = None, sizes: list[int] | None = None, reps: int | None = None,
              allow_multicast: bool = False) -> Plan:
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r} (one of {', '.join(SUITES)})")
    all_gpus = [g.index for g in topo.gpus]
    chosen = sorted(set(gpus)) if gpus is not None else all_gpus
    bad = [g for g in chosen if g not in all_gpus]
    if bad:
        raise ValueError(f"no GPU {bad[0]} on this machine (GPUs: {', '.join(map(str, all_gpus))})")
    families = list(only) if only else [f for f in FAMILIES if f != "multicast" or allow_multicast]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        raise ValueError(f"unknown benchmark family {unknown[0]!r} (families: {', '.join(FAMILIES)})")
    r = reps or {"quick": 5, "default": 10, "full": 20}[suite]
    big = 512 * MiB
    # Settings at the plateau found by benchmarks/tune.py (see benchmarks/RESULTS.md):
    ce_big = GiB  # copy-engine copies keep gaining up to ~1 GiB
    sm_best = {"unroll": 8, "blocks": None, "threads": 1024, "loops": 8}
    tma_best = {"chunk": 32768, "stages": 4, "blocks": None, "loops": 8}
    items: list[PlannedBench] = []
    skipped: list[Skipped] = []

    usable = []
    for g in chosen:
        gpu = topo.gpus[g]
        if gpu.mig.enabled is True:
            skipped.append(Skipped("all", "MIG is enabled: linkroof benchmarks whole GPUs only", (g,)))
        else:
            usable.append(g)
    headline = usable[:1] if suite == "quick" else usable
    ordered_pairs = [(a, b) for a in usable for b in usable if a != b]
    peer_pairs = [(a, b) for a, b in ordered_pairs if _peer_ok(topo, a, b)]
    for a, b in ordered_pairs:
        if (a, b) not in peer_pairs:
            skipped.append(Skipped("peer copies", f"no peer path GPU{a} -> GPU{b} (P2P {topo.pair(a, b).p2p_read}); "
                                   "only the host-staged copy runs", (a, b)))
    first_pair = peer_pairs[:1]
    pairs = first_pair if suite == "quick" else (peer_pairs if suite == "full" else
                                                 [p for p in peer_pairs if p[0] < p[1]] + [p for p in peer_pairs if p[0] > p[1]][:1])
    hopper = {g for g in usable if known(topo.gpus[g].compute_capability) and
              tuple(int(x) for x in topo.gpus[g].compute_capability.split(".")) >= (9, 0)}

    def add(family: str, title: str, fn: Callable[..., Any], **kwargs: Any) -> None:
        if family in families:
            items.append(PlannedBench(family, title, fn, kwargs))

    # 1. host links
    for g in headline:
        add("host", f"H2D pinned GPU{g}", copies.host_copy, gpu=g, direction="h2d", nbytes=big, reps=r)
        add("host", f"D2H pinned GPU{g}", copies.host_copy, gpu=g, direction="d2h", nbytes=big, reps=r)
        if suite != "quick":
            add("host", f"H2D pageable GPU{g}", copies.host_copy, gpu=g, direction="h2d", nbytes=big // 4,
                reps=max(3, r // 2), pinned=False)
            add("host", f"D2H pageable GPU{g}", copies.host_copy, gpu=g, direction="d2h", nbytes=big // 4,
                reps=max(3, r // 2), pinned=False)
            add("host", f"host bidirectional GPU{g}", copies.host_bidir, gpu=g, nbytes=big, reps=r)
    if suite != "quick" and len(usable) > 1:
        for d in ("h2d", "d2h"):
            add("host", f"{d.upper()} all GPUs at once", copies.host_all_gpus, gpus=usable, direction=d, nbytes=big, reps=r)

    # 2. local HBM. The read-only kernel first: right after a local copy (CE or SM) a read
    # pass runs 12.6 % slow for seconds (3890 against 4451 GB/s on one H200, clocks, power
    # and throttle counters unchanged; benchmarks/read_after_copies.py), which is how the
    # bundled reference's GPU0 read came out at 3.93 TB/s
    for g in headline:
        if suite != "quick":
            add("local", f"local read-only GPU{g}", local.read_only, gpu=g, nbytes=2 * big, reps=r)
            add("local", f"local write-only GPU{g}", local.write_only, gpu=g, nbytes=2 * big, reps=r)
        add("local", f"local copy CE GPU{g}", copies.local_copy, gpu=g, mechanism="ce", nbytes=2 * GiB, reps=r)
        if suite != "quick":
            add("local", f"local copy SM GPU{g}", copies.local_copy, gpu=g, mechanism="sm", nbytes=2 * big, reps=r,
                **_sized({"unroll": 8, "blocks": None, "threads": 512, "loops": 4}, topo, g, per_sm=4))

    # 3-5. peer copies
    if ordered_pairs and not peer_pairs:
        skipped.append(Skipped("peer copies", "no GPU pair has a peer path", tuple(usable)))
    for a, b in pairs:
        for mode in ("read", "write"):
            add("peer_ce", f"CE {mode} GPU{a}->GPU{b}", copies.peer_copy, src=a, dst=b, mode=mode, mechanism="ce",
                nbytes=ce_big, reps=r)
            add("peer_sm", f"SM {mode} GPU{a}->GPU{b}", copies.peer_copy, src=a, dst=b, mode=mode, mechanism="sm",
                nbytes=big, reps=r, **_sized(sm_best, topo, a if mode == "write" else b))
            if a in hopper and b in hopper:
                add("peer_tma", f"TMA {mode} GPU{a}->GPU{b}", copies.peer_copy, src=a, dst=b, mode=mode,
                    mechanism="tma", nbytes=big, reps=r, **_sized(tma_best, topo, a if mode == "write" else b))
        if a < b or suite == "quick":
            add("peer_ce", f"CE both directions GPU{a}<->GPU{b}", copies.peer_bidir, a=a, b=b, mode="write",
                mechanism="ce", nbytes=ce_big, reps=r)
            if suite != "quick":
                add("peer_ce", f"CE both directions (read) GPU{a}<->GPU{b}", copies.peer_bidir, a=a, b=b, mode="read",
                    mechanism="ce", nbytes=ce_big, reps=r)
                for mode in ("read", "write"):
                    add("peer_sm", f"SM both directions ({mode}) GPU{a}<->GPU{b}", copies.peer_bidir, a=a, b=b,
                        mode=mode, mechanism="sm", nbytes=big, reps=r, **_sized(sm_best, topo, a))
                if suite == "full" or (a, b) == first_pair[0]:  # the driver's staging: ~2 s a pair
                    add("peer_ce", f"CE without peer access GPU{a}->GPU{b}", copies.peer_copy, src=a, dst=b,
                        mode="write", mechanism="ce", nbytes=big // 4, reps=max(3, r // 2), peer_access=False)
    if "peer_tma" in families and pairs and not any(a in hopper and b in hopper for a, b in pairs):
        skipped.append(Skipped("peer_tma", "TMA bulk copies need compute capability 9.0+", tuple(usable)))
    for a, b in ordered_pairs:
        if (a, b) not in peer_pairs and suite != "quick":
            add("peer_ce", f"CE staged through host GPU{a}->GPU{b}", copies.peer_copy, src=a, dst=b, mode="write",
                mechanism="ce", nbytes=big // 4, reps=max(3, r // 2), peer_access=False)

    # SM count sweep (blocks) and TMA chunk sweep, on the first pair
    if suite != "quick" and first_pair:
        a, b = first_pair[0]
        sms = topo.gpus[a].sm_count if known(topo.gpus[a].sm_count) else 132
        block_counts = _block_counts(sms, suite)
        for blocks in block_counts:
            add("peer_sm", f"SM read, {blocks} blocks", copies.peer_copy, src=a, dst=b, mode="read", mechanism="sm",
                nbytes=big, reps=max(3, r // 2), blocks=blocks)
        if suite == "full" and a in hopper and b in hopper:
            for blocks in block_counts:
                add("peer_tma", f"TMA read, {blocks} blocks", copies.peer_copy, src=a, dst=b, mode="read",
                    mechanism="tma", nbytes=big, reps=max(3, r // 2), blocks=blocks)
        if a in hopper and b in hopper:
            for chunk in ((8192, 16384, 32768) if suite == "full" else (16384,)):
                for stages in ((2, 3, 4) if suite == "full" else (2, 4)):
                    add("peer_tma", f"TMA read, {chunk // 1024} KiB x {stages} stages", copies.peer_copy, src=a,
                        dst=b, mode="read", mechanism="tma", nbytes=big, reps=max(3, r // 2), chunk=chunk,
                        stages=stages)

    # reductions into peer memory (red.global.add, cp.reduce.async.bulk), first pair
    if suite != "quick" and first_pair:
        a, b = first_pair[0]
        mechs = ("red", "tma_red") if (a in hopper and b in hopper) else ("red",)
        for mech in mechs:
            add("reduce", f"{mech} into GPU{b} from GPU{a}", terms.peer_reduce, src=a, dst=b, mechanism=mech,
                nbytes=big, reps=r)
        if suite == "full":
            sms = topo.gpus[a].sm_count if known(topo.gpus[a].sm_count) else 132
            for mech in mechs:
                for size in [1 << k for k in range(12, 30, 3)]:
                    add("reduce", f"{mech} into GPU{b}, {size} B", terms.peer_reduce, src=a, dst=b, mechanism=mech,
                        nbytes=size, reps=max(5, r // 2), loops=max(1, min(1024, (16 * MiB) // size)), sweep=True,
                        **{k: v for k, v in scaled_parallelism("sm" if mech == "red" else "tma", size, sms).items()
                           if k in ("blocks", "chunk")})
                for blocks in _block_counts(sms, suite):
                    add("reduce", f"{mech} into GPU{b}, {blocks} blocks", terms.peer_reduce, src=a, dst=b,
                        mechanism=mech, nbytes=big, reps=max(3, r // 2), blocks=blocks)

    # 6. concurrency patterns
    if len(usable) >= 2 and suite != "quick":
        add("concurrency", "all-to-all at once", copies.concurrent, pattern="all_to_all", gpus=usable, nbytes=big // 2,
            reps=r)
        if len(usable) >= 3:
            add("concurrency", f"all-to-one GPU{usable[0]}", copies.concurrent, pattern="all_to_one", gpus=usable,
                target=usable[0], nbytes=big // 2, reps=r)
            add("concurrency", f"one-to-all GPU{usable[0]}", copies.concurrent, pattern="one_to_all", gpus=usable,
                target=usable[0], nbytes=big // 2, reps=r)

    # 7. latency
    for a, b in first_pair:
        add("latency", f"pointer chase GPU{a} -> GPU{b} memory", latency.pointer_chase, runner=a, where="peer", target=b,
            reps=2 if suite == "quick" else 3, sms=None if suite == "full" else CHASE_SMS)
        if suite != "quick":
            add("latency", f"CE round trip GPU{a}->GPU{b}", latency.ce_roundtrip, src=a, dst=b)
            if a in hopper and b in hopper:
                add("latency", f"TMA round trip GPU{a} <- GPU{b}", latency.tma_roundtrip, runner=a, target=b)
    for g in headline[:1]:
        add("latency", f"pointer chase pinned host from GPU{g}", latency.pointer_chase, runner=g, where="host",
            reps=2 if suite == "quick" else 5,  # host round trips see the host's noise: more repetitions
            sms=None if suite == "full" else CHASE_SMS)
        if suite != "quick":
            add("latency", f"pointer chase GPU{g} local (2 MiB, L2)", latency.pointer_chase, runner=g, where="local")

    # launch and synchronisation: the cost model's fixed terms
    if suite != "quick":
        for g in headline[:1]:
            add("launch", f"kernel launch GPU{g}", terms.launch_costs, gpu=g)
            add("sync", f"barriers GPU{g}", terms.barrier_costs, gpu=g)
        if len(usable) >= 2:
            add("launch", "NCCL host cost per call", terms.nccl_issue_cost, gpus=usable)
        for a, b in first_pair:
            add("sync", f"flag ping-pong GPU{a} <-> GPU{b}", terms.signal_latency, a=a, b=b)

    # 9. compute peaks
    for g in headline[:1] if suite != "full" else headline:
        dtypes = ("fp16",) if suite == "quick" else compute.GEMM_DTYPES
        for dt in dtypes:
            add("compute", f"GEMM {dt} GPU{g}", compute.gemm, dev=g, dtype=dt, reps=5 if suite == "quick" else r)
        if suite != "quick":
            add("compute", f"fp32 FMA GPU{g}", compute.fma_peak, dev=g)

    # compute under communication: GEMM beside a copy engine, then beside k copying SMs
    if suite == "full" and first_pair:
        a, b = first_pair[0]
        add("overlap", f"GEMM beside CE copy GPU{a}->GPU{b}", terms.gemm_under_comm, gpu=a, peer=b, mechanism="ce")
        sms = topo.gpus[a].sm_count if known(topo.gpus[a].sm_count) else 132
        for mech in (("sm", "tma") if (a in hopper and b in hopper) else ("sm",)):
            for k in sorted({max(1, sms // 16), sms // 8, sms // 4, sms // 2}):
                add("overlap", f"GEMM beside {mech.upper()} copy on {k} SMs", terms.gemm_under_comm, gpu=a, peer=b,
                    mechanism=mech, k=k)

    # NCCL collectives, one process driving every GPU (grouped calls)
    if len(usable) >= 2 and "nccl" in families:
        grid = nccl_grid(suite, sizes)
        for coll, size, ip, dt in grid:
            add("nccl", f"NCCL {coll} {size} B {dt}{' in-place' if ip else ''}", nccl.collective_timings, gpus=usable,
                coll=coll, nbytes=size, in_place=ip, reps=20, dtype=dt)

    # one-shot collectives on the first pair: what a hand-written kernel achieves where NCCL is
    # latency-bound (full suite)
    if suite == "full" and first_pair and len(usable) == 2:
        a, b = first_pair[0]
        for coll in COLLECTIVES:
            for size in (8, 64, 512, 4096, 32768):
                add("oneshot", f"one-shot {coll} {size} B", terms.oneshot_collective, coll=coll, nbytes=size, a=a, b=b)

    # 8. message-size sweeps per mechanism, on the first pair (last: the longest family)
    if suite != "quick" and first_pair:
        a, b = first_pair[0]
        for size in sizes or default_sizes(suite):
            for mech in ("ce", "sm", "tma"):
                if mech == "tma" and not (a in hopper and b in hopper):
                    continue
                if mech != "ce" and size % 16:
                    continue
                # SM and TMA: back-to-back messages inside one launch (device-initiated, as in a
                # fused kernel); the copy engine: back-to-back copies from the host.
                sms = topo.gpus[a].sm_count if known(topo.gpus[a].sm_count) else 132
                extra = {"loops": max(1, min(4096, (16 * MiB) // size)), **scaled_parallelism(mech, size, sms)} \
                    if mech != "ce" else {}
                for mode in (("write", "read") if suite == "full" else ("write",)):
                    add("sweep", f"{mech.upper()} {mode} {size} B", copies.peer_copy, src=a, dst=b, mode=mode,
                        mechanism=mech, nbytes=size, reps=max(5, r // 2), sweep=True, **extra)
    elif suite != "quick" and "sweep" in families:
        skipped.append(Skipped("sweep", "message-size sweeps need a GPU pair with a peer path", tuple(usable)))

    # 10. multicast, only on request
    if "multicast" in families:
        add("multicast", "NVSwitch multicast (opt-in)", multicast.multicast_bench, gpus=usable, nbytes=big, reps=r)

    return Plan(items=items, skipped=skipped, gpus=usable, suite=suite)
