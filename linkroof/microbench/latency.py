"""Latency: pointer chases in local, peer and pinned host memory, and the round trip of
the smallest copy-engine and TMA transfers."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..schema import BenchSpec, Measurement
from .buffers import DeviceBuffer
from .copies import HOST, Transfer, run_transfers
from .cuda import BenchError, PinnedHost, compute_capability, cp, launch, set_peer_access, sm_count
from .timing import time_kernel

PER_HOP = "seconds per dependent load (time / hops); no bytes counted"


def pointer_chase(runner: int, where: str, target: int | None = None, working_set: int = 2 << 20,
                  stride: int = 128, hops: int = 4000, reps: int = 3, sms: int | None = None) -> Measurement:
    """One thread on `runner` follows a chain of `working_set / stride` links laid out
    `stride` bytes apart (a 2 MiB set with 128-byte steps, as nvbandwidth) in local
    ('local'), peer ('peer', on GPU `target`) or pinned host ('host') memory.

    Latency differs with an SM's place on the die, so each repetition sweeps the chase
    over every SM (or `sms` of them, spread out), one kernel each, and its value is
    the mean latency over those SMs (total time / total hops), nvbandwidth's figure."""
    cupy = cp()
    n_nodes = working_set // stride
    owner = {"local": runner, "peer": target, "host": runner}[where]
    if owner is None:
        raise BenchError("a peer pointer chase needs a target GPU")
    if where == "peer":
        set_peer_access(runner, target, True)
    n_sm = sm_count(runner)
    sms = min(sms or n_sm, n_sm)
    targets = sorted({round(i * (n_sm - 1) / max(1, sms - 1)) for i in range(sms)})
    host = None
    dev_buf = None
    if where == "host":
        host = PinnedHost(working_set)
        base = host.ptr
    else:
        dev_buf = DeviceBuffer(owner, working_set)
        base = dev_buf.ptr
    try:
        if host is not None:  # written by the CPU, as a host program would (and as nvbandwidth does)
            words = host.numpy("uint64")
            nodes = np.arange(n_nodes, dtype=np.uint64)
            words[nodes * (stride // 8)] = ((nodes + 1) % n_nodes) * stride
        else:
            launch(owner, "chase_init", max(1, min(1024, n_nodes // 256 + 1)), 256,
                   (np.uint64(base), np.uint64(n_nodes), np.uint64(stride)))
            cupy.cuda.Device(owner).synchronize()
        with cupy.cuda.Device(runner):
            sink = cupy.zeros(1, dtype=cupy.uint64)
        order = iter([targets[0]] + targets * reps)  # one warm-up run, then `reps` sweeps over the SMs
        per_sm = time_kernel(runner, lambda s: launch(runner, "pointer_chase", n_sm, 32,
                                                      (np.uint64(base), np.uint64(hops), np.uint32(next(order)), sink),
                                                      stream=s), len(targets) * reps, warmup=1)
        k = len(targets)
        times = [sum(per_sm[r * k:(r + 1) * k]) / k for r in range(reps)]
        end = int(sink.get()[0])
    finally:
        if host is not None:
            host.free()
        dev_buf = None
    expected = (hops % n_nodes) * stride
    ok = end == expected
    devices = (runner,) if where != "peer" else (runner, target)
    spec = BenchSpec("pointer_chase_latency", "latency", where, devices, stride, reps,
                     params={"working_set_bytes": working_set, "stride_bytes": stride, "hops": hops,
                             "sms_sampled": len(targets), "per_rep": "mean over the SMs"})
    return Measurement(spec=spec, times_s=tuple(t / hops for t in times), bytes_per_rep=0, bytes_convention=PER_HOP,
                       verified=ok, verification=(f"chain ended at offset {end} as expected" if ok
                                                  else f"chain ended at offset {end}, expected {expected}"))


def ce_roundtrip(src: int, dst: int, reps: int = 20) -> Measurement:
    """Time per back-to-back 4-byte copy-engine copy src -> dst (issue + completion)."""
    (m,) = run_transfers("ce_roundtrip_latency", [Transfer(src, dst, src, "ce")], 4, reps,
                         pattern="p2p_write" if HOST not in (src, dst) and src != dst else None)
    return dataclasses.replace(m, bytes_per_rep=0, bytes_convention="seconds per 4-byte copy, back to back")


def tma_roundtrip(runner: int, target: int, n: int = 4000, reps: int = 5) -> Measurement:
    """One thread on `runner` loads 16 bytes from `target`'s memory with TMA and waits,
    `n` times: seconds per round trip."""
    cupy = cp()
    if compute_capability(runner) < (9, 0):
        raise BenchError(f"TMA needs compute capability 9.0+ (GPU{runner})")
    if runner != target:
        set_peer_access(runner, target, True)
    buf = DeviceBuffer(target, 64 * 128)
    buf.fill(12345)
    cupy.cuda.Device(target).synchronize()
    with cupy.cuda.Device(runner):
        sink = cupy.zeros(1, dtype=cupy.uint32)
    times = time_kernel(runner, lambda s: launch(runner, "tma_roundtrip", 1, 32, (np.uint64(buf.ptr), np.uint64(n), sink),
                                                 stream=s), reps)
    got = int(sink.get()[0])
    expected = int(buf.array[((n - 1) % 64) * 32].get())
    ok = got == expected
    spec = BenchSpec("tma_roundtrip_latency", "tma", "p2p_read" if runner != target else "local", (runner, target)
                     if runner != target else (runner,), 16, reps, params={"transfers": n})
    return Measurement(spec=spec, times_s=tuple(t / n for t in times), bytes_per_rep=0, bytes_convention=PER_HOP,
                       verified=ok, verification="last word loaded matches the source" if ok
                       else f"last word loaded {got:#x}, expected {expected:#x}")
