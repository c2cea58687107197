"""Bandwidth benchmarks: host links, local HBM, peer copies by copy engine, SM and TMA,
and concurrency patterns. Each function returns `Measurement`s.

One engine (`run_transfers`) runs any set of simultaneous transfers: it allocates and
fills a source per transfer with a pattern new to this run, poisons each destination,
times the repetitions (gated, see timing.py), then checks every destination. Bytes are
counted as copied (a copy of N bytes is N bytes); a set of simultaneous transfers also
gets a total: the sum of their bandwidths measured at the same time (as nvbandwidth).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..schema import BenchSpec, Measurement
from .buffers import Check, DeviceBuffer, HostBuffer, new_seed
from .cuda import BenchError, cp, launch, set_peer_access, sm_count
from .timing import GateTimeout, Lane, time_lanes

COPIED = "bytes copied (a copy of N bytes counts N)"
SUM_SIMULTANEOUS = "bytes of every simultaneous transfer over their common window (each counted as bytes copied)"

HOST = -1  # endpoint id of host memory
WINDOW = "window: from the lanes' common start to the last lane's end"


def window_slots(lanes: list[tuple[float, ...]]) -> tuple[float, ...]:
    """The time of a set of simultaneous lanes as one window (as nvbandwidth's totals):
    the lanes start together at the gate's release and run their repetitions back to
    back, so after repetition r the window has lasted W_r = the longest lane's time so
    far; repetition r's slot is W_r - W_(r-1). The slots add up to the whole window, from
    the common start to the last lane's end, so a lane that finishes early (and leaves
    the other to run alone) does not count its bytes as if both ran the whole time, as
    pairing repetitions by index did."""
    reps = min(len(t) for t in lanes)
    ends = [0.0] * len(lanes)
    out = []
    window = 0.0
    for r in range(reps):
        ends = [e + t[r] for e, t in zip(ends, lanes)]
        now = max(ends)
        out.append(now - window)
        window = now
    return tuple(out)


@dataclass
class Transfer:
    """One transfer: from `src` to `dst` (GPU index, or HOST), issued by `issuer`."""

    src: int
    dst: int
    issuer: int
    mechanism: str = "ce"  # ce | sm | tma
    params: dict[str, Any] = field(default_factory=dict)


def _pattern_of(t: Transfer) -> str:
    if t.src == HOST:
        return "h2d"
    if t.dst == HOST:
        return "d2h"
    if t.src == t.dst:
        return "local"
    return "p2p_read" if t.issuer == t.dst else "p2p_write"


def _loops(t: Transfer) -> int:
    """Messages per kernel launch (SM and TMA copies); the copy engine has none."""
    return int(t.params.get("loops", 1)) if t.mechanism in ("sm", "tma") else 1


def _inner(nbytes: int) -> int:
    """Operations per timed repetition: small messages are timed in batches."""
    return 1 if nbytes >= (4 << 20) else int(min(64, max(1, (4 << 20) // max(nbytes, 1))))


def _enqueue(t: Transfer, src: Any, dst: Any, nbytes: int) -> Any:
    cupy = cp()
    rt = cupy.cuda.runtime
    if t.mechanism == "ce":
        if t.src != HOST and t.dst != HOST and t.src != t.dst:
            return lambda s: rt.memcpyPeerAsync(dst.ptr, t.dst, src.ptr, t.src, nbytes, s.ptr)
        return lambda s: rt.memcpyAsync(dst.ptr, src.ptr, nbytes, rt.memcpyDefault, s.ptr)
    if nbytes % 16:
        raise BenchError(f"{t.mechanism} copies move 16-byte vectors; {nbytes} bytes is not a multiple of 16")
    n_vec = np.uint64(nbytes // 16)
    if t.mechanism == "sm":
        unroll = int(t.params.get("unroll", 8))
        blocks = int(t.params.get("blocks", sm_count(t.issuer) * 2))
        threads = int(t.params.get("threads", 512))
        loops = np.uint32(t.params.get("loops", 1))
        name = f"copy_v4_l2pf<{unroll}>" if t.params.get("l2_prefetch") else f"copy_v4<{unroll}>"
        smem = int(t.params.get("smem", 0))  # held, unused: one block per SM (compute beside the copy)
        return lambda s: launch(t.issuer, name, blocks, threads, (np.uint64(src.ptr), np.uint64(dst.ptr), n_vec, loops),
                                stream=s, shared_mem=smem)
    if t.mechanism == "tma":
        from .cuda import compute_capability

        if compute_capability(t.issuer) < (9, 0):
            raise BenchError(f"TMA bulk copies need compute capability 9.0+; GPU{t.issuer} is "
                             f"{'.'.join(map(str, compute_capability(t.issuer)))}")
        stages = int(t.params.get("stages", 4))
        chunk = int(t.params.get("chunk", 16384))
        blocks = int(t.params.get("blocks", sm_count(t.issuer) * 2))
        if chunk % 16:
            raise BenchError("TMA chunk must be a multiple of 16 bytes")
        smem = max(stages * chunk + 8 * stages, int(t.params.get("smem", 0)))
        loops = np.uint32(t.params.get("loops", 1))
        name = f"tma_copy<{stages}>"
        return lambda s: launch(t.issuer, name, blocks, 32, (np.uint64(src.ptr), np.uint64(dst.ptr), np.uint64(nbytes),
                                                              np.uint32(chunk), loops), stream=s, shared_mem=smem)
    raise BenchError(f"unknown copy mechanism {t.mechanism!r}")


def _alloc(endpoint: int, nbytes: int, pinned: bool) -> Any:
    cupy = cp()
    try:
        return HostBuffer(nbytes, pinned) if endpoint == HOST else DeviceBuffer(endpoint, nbytes)
    except cupy.cuda.memory.OutOfMemoryError:
        raise BenchError(f"out of memory allocating {nbytes} bytes on GPU{endpoint}") from None
    except cupy.cuda.runtime.CUDARuntimeError as e:
        where = "host (pinned)" if endpoint == HOST else f"GPU{endpoint}"
        raise BenchError(f"cannot allocate {nbytes} bytes on {where}: {e}") from None


def run_transfers(name: str, transfers: list[Transfer], nbytes: int, reps: int, *, pinned: bool = True,
                  peer_access: bool = True, total_name: str | None = None, pattern: str | None = None,
                  extra: dict[str, Any] | None = None) -> list[Measurement]:
    """Run `transfers` simultaneously; one Measurement per transfer (+ a total if several)."""
    cupy = cp()
    for t in transfers:
        if HOST in (t.src, t.dst) or t.src == t.dst:
            continue
        if peer_access:
            for a, b in ((t.issuer, t.src), (t.issuer, t.dst)):
                if a != b:
                    set_peer_access(a, b, True)
        else:  # neither side may map the other, or the driver takes the peer path anyway
            set_peer_access(t.src, t.dst, False)
            set_peer_access(t.dst, t.src, False)
    seeds = [new_seed() for _ in transfers]
    buffers = []
    try:
        for t, seed in zip(transfers, seeds):
            span = nbytes * _loops(t)  # one slice per message of a launch
            src, dst = _alloc(t.src, span, pinned), _alloc(t.dst, span, pinned)
            buffers.append((src, dst))
            src.fill(seed) if isinstance(src, DeviceBuffer) else src.fill(seed, t.issuer)
            dst.poison()
        for dev in {t.src for t in transfers} | {t.dst for t in transfers}:
            if dev != HOST:
                cupy.cuda.Device(dev).synchronize()
        inner = _inner(nbytes)
        lanes = [Lane(t.issuer, _enqueue(t, src, dst, nbytes), inner) for t, (src, dst) in zip(transfers, buffers)]
        # Copies from pageable memory are synchronous with the host: they cannot wait behind a gate.
        gated = pinned or all(HOST not in (t.src, t.dst) for t in transfers)
        # Host links reach their steady rate only after a while of traffic (seen on the
        # 2xH200 VM: H2D rose from ~53 to ~55 GB/s over the first few hundred copies).
        warmup = 10 if any(HOST in (t.src, t.dst) for t in transfers) else 2
        ungated_note = ""
        try:
            times = time_lanes(lanes, reps, warmup=warmup, gated=gated)
        except GateTimeout:
            times = time_lanes(lanes, reps, warmup=warmup, gated=False)
            gated = False
            ungated_note = ("timed without the spin gate: the driver runs this copy synchronously with the host, "
                            "so the figure includes the host's issue time")
        checks: list[Check] = [dst.check(seed) for (src, dst), seed in zip(buffers, seeds)]
    finally:
        for src, dst in buffers:
            src.free()
            dst.free()

    out = []
    concurrency = len(transfers)
    for t, ts, check in zip(transfers, times, checks):
        params = {"issuer": t.issuer, **t.params, **(extra or {})}
        if HOST in (t.src, t.dst):
            params["host_memory"] = "pinned" if pinned else "pageable"
        if t.src != HOST and t.dst != HOST and t.src != t.dst:
            params["peer_access"] = peer_access
        if inner > 1:
            params["ops_per_timed_batch"] = inner
        if not gated:
            params["gated"] = False
        devices = tuple(d for d in (t.src, t.dst) if d != HOST)
        devices = devices if len(set(devices)) == len(devices) else devices[:1]
        spec = BenchSpec(name=name, mechanism=t.mechanism, pattern=pattern or _pattern_of(t), devices=devices,
                         message_bytes=nbytes, repetitions=reps, concurrency=concurrency, params=params)
        loops = _loops(t)
        convention = COPIED if loops == 1 else f"{COPIED}; {loops} messages (distinct slices) per timed launch"
        out.append(Measurement(spec=spec, times_s=tuple(ts), bytes_per_rep=nbytes * loops, bytes_convention=convention,
                               verified=check.ok, verification=check.text,
                               warnings=(ungated_note,) if ungated_note else ()))
    if concurrency > 1 and total_name:
        total_bytes = sum(m.bytes_per_rep for m in out)
        spec = BenchSpec(name=total_name, mechanism=transfers[0].mechanism, pattern=pattern or "concurrent",
                         devices=tuple(sorted({d for t in transfers for d in (t.src, t.dst) if d != HOST})),
                         message_bytes=nbytes, repetitions=reps, concurrency=concurrency,
                         params={**transfers[0].params, **(extra or {}), "parts": concurrency, "total": WINDOW})
        ok = all(c.ok for c in checks)
        out.append(Measurement(spec=spec, times_s=window_slots([m.times_s for m in out]),
                               bytes_per_rep=total_bytes, bytes_convention=SUM_SIMULTANEOUS, verified=ok,
                               verification="every part verified" if ok else "a part failed verification: "
                               + "; ".join(c.text for c in checks if not c.ok)))
    return out


# ------------------------------------------------------------------ families


def host_copy(gpu: int, direction: str, nbytes: int, reps: int, pinned: bool = True) -> list[Measurement]:
    t = Transfer(HOST, gpu, gpu) if direction == "h2d" else Transfer(gpu, HOST, gpu)
    return run_transfers(f"{direction}_bandwidth", [t], nbytes, reps, pinned=pinned)


def host_bidir(gpu: int, nbytes: int, reps: int) -> list[Measurement]:
    return run_transfers("host_bidir_bandwidth", [Transfer(HOST, gpu, gpu), Transfer(gpu, HOST, gpu)], nbytes, reps,
                         total_name="host_bidir_total_bandwidth", pattern="bidir_host")


def host_all_gpus(gpus: list[int], direction: str, nbytes: int, reps: int) -> list[Measurement]:
    ts = [Transfer(HOST, g, g) if direction == "h2d" else Transfer(g, HOST, g) for g in gpus]
    return run_transfers(f"{direction}_all_gpus_bandwidth", ts, nbytes, reps,
                         total_name=f"{direction}_all_gpus_total_bandwidth", pattern=f"{direction}_all")


def local_copy(gpu: int, mechanism: str, nbytes: int, reps: int, **params: Any) -> list[Measurement]:
    return run_transfers("local_copy_bandwidth", [Transfer(gpu, gpu, gpu, mechanism, params)], nbytes, reps)


def peer_copy(src: int, dst: int, mode: str, mechanism: str, nbytes: int, reps: int, peer_access: bool = True,
              **params: Any) -> list[Measurement]:
    """mode 'read': the destination pulls from peer memory; 'write': the source pushes."""
    issuer = dst if mode == "read" else src
    name = f"p2p_{mode}_bandwidth" if peer_access else "p2p_staged_bandwidth"
    return run_transfers(name, [Transfer(src, dst, issuer, mechanism, params)], nbytes, reps, peer_access=peer_access)


def peer_bidir(a: int, b: int, mode: str, mechanism: str, nbytes: int, reps: int, **params: Any) -> list[Measurement]:
    issuers = (b, a) if mode == "read" else (a, b)
    ts = [Transfer(a, b, issuers[0], mechanism, params), Transfer(b, a, issuers[1], mechanism, params)]
    return run_transfers(f"p2p_bidir_{mode}_bandwidth", ts, nbytes, reps,
                         total_name=f"p2p_bidir_{mode}_total_bandwidth", pattern="bidir", extra={"mode": mode})


def concurrent(pattern: str, gpus: list[int], nbytes: int, reps: int, target: int = 0,
               mechanism: str = "ce") -> list[Measurement]:
    """all_to_one (every GPU writes to `target`), one_to_all (`target` writes to every
    GPU), all_to_all (every GPU writes to every other), all at once."""
    if pattern == "all_to_one":
        pairs = [(g, target) for g in gpus if g != target]
    elif pattern == "one_to_all":
        pairs = [(target, g) for g in gpus if g != target]
    elif pattern == "all_to_all":
        pairs = [(a, b) for a in gpus for b in gpus if a != b]
    else:
        raise BenchError(f"unknown concurrency pattern {pattern!r}")
    if not pairs:
        raise BenchError(f"{pattern} needs at least two GPUs")
    ts = [Transfer(a, b, a, mechanism) for a, b in pairs]
    out = run_transfers(f"{pattern}_bandwidth", ts, nbytes, reps, total_name=f"{pattern}_total_bandwidth",
                        pattern=pattern)
    return out + per_gpu_egress(out, pattern)


def per_gpu_egress(parts: list[Measurement], pattern: str) -> list[Measurement]:
    """Per-GPU figures of a concurrent run: the sum of what each GPU sent, per repetition."""
    singles = [m for m in parts if "parts" not in m.spec.params]
    by_src: dict[int, list[Measurement]] = {}
    for m in singles:
        by_src.setdefault(m.spec.devices[0], []).append(m)
    out = []
    for gpu, ms in sorted(by_src.items()):
        if len(ms) < 2:
            continue
        reps = min(len(m.times_s) for m in ms)
        total = sum(m.bytes_per_rep for m in ms)
        spec = BenchSpec(name=f"{pattern}_per_gpu_egress_bandwidth", mechanism=ms[0].spec.mechanism, pattern=pattern,
                         devices=(gpu,), message_bytes=ms[0].spec.message_bytes, repetitions=reps,
                         concurrency=ms[0].spec.concurrency, params={"parts": len(ms), "total": WINDOW})
        ok = all(m.verified for m in ms)
        out.append(Measurement(spec=spec, times_s=window_slots([m.times_s for m in ms]), bytes_per_rep=total,
                               bytes_convention=SUM_SIMULTANEOUS, verified=ok,
                               verification="every part verified" if ok else "a part failed verification"))
    return out
