"""The cost model's terms beyond bandwidth, each measured on its own: launch (an empty
kernel by stream and by CUDA-graph replay, the host's issue cost, a host round trip,
NCCL's per-call host cost through CuPy), synchronisation (intra-SM mbarrier and
__syncthreads, an inter-SM barrier through global memory, a flag ping-pong between
GPUs by SM store and by TMA), reductions into peer memory (red.global.add and the
TMA's cp.reduce.async.bulk), and GEMM throughput while communication runs beside it
(copy engine, or k SMs copying: the inter-SM partition trade-off).

Times come from the one gate protocol (timing.py) where the GPU's clock measures them;
host costs, which no GPU event can see, from the host's clock, said so in their
parameters. Kernels live in kernels/terms.cu.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

from ..schema import BenchSpec, Measurement
from .buffers import DeviceBuffer, new_seed
from .copies import Transfer, _enqueue
from .cuda import BenchError, cp, compute_capability, kernel, launch, set_peer_access, sm_count
from .timing import GateTimeout, Lane, hold, stream, time_graph, time_kernel, time_lanes

PER_OP = "seconds per operation (no bytes counted)"
PER_ROUND = "seconds per round (no bytes counted)"
REDUCED = "bytes reduced (each fp32 of the source added once into the destination)"
TIMEOUT_NS = 2_000_000_000
HOST_CLOCK = "host clock (time.perf_counter): no GPU event sees the host's side"


def _m(name: str, mechanism: str, pattern: str, devices: tuple[int, ...], times: list[float], ok: bool, how: str,
       params: dict[str, Any], nbytes: int = 0, convention: str = PER_OP, flops: float = 0.0,
       message_bytes: int | None = None) -> Measurement:
    """A Measurement of `nbytes` per repetition (a message of `message_bytes`, the same
    unless a repetition holds several)."""
    spec = BenchSpec(name, mechanism, pattern, devices, nbytes if message_bytes is None else message_bytes,
                     len(times), params=params)
    return Measurement(spec=spec, times_s=tuple(times), bytes_per_rep=nbytes if convention not in (PER_OP, PER_ROUND)
                       else 0, bytes_convention=convention, verified=ok, verification=how, flops_per_rep=flops)


# ------------------------------------------------------------------------- launch


def launch_costs(gpu: int, reps: int = 10, per_batch: int = 100, per_gpu_batch: int = 1000) -> list[Measurement]:
    """An empty kernel: back to back on a stream behind the gate (the GPU's time per
    launch), replayed from a CUDA graph, issued by the host (its clock: CuPy's launch
    path), and one host round trip (launch, then wait for completion). The GPU-side
    figures take `per_gpu_batch` kernels a sample: a graph's own launch is spread over
    that many (on one H200: 0.523 us a kernel at 100, 0.502 at 1000, as a C++ program's
    0.50; benchmarks/RESULTS.md)."""
    cupy = cp()
    fn = kernel(gpu, "empty_kernel", "terms")
    s = stream(gpu, 0)

    def one(st: Any) -> None:
        fn((1,), (1,), (), stream=st)

    with cupy.cuda.Device(gpu):
        gated = time_lanes([Lane(gpu, one, per_gpu_batch)], reps)[0]
        graph_times, _, destroy, graph_gated = time_graph([gpu], [s], lambda ss: one(ss[0]), per_gpu_batch,
                                                          replays=reps)
        destroy()
        issue, round_trip = [], []
        for _ in range(3):
            one(s)
        s.synchronize()
        for _ in range(reps):  # the host's issue cost: launches held behind the gate, so none waits for the GPU
            issue.append(_issue_time([gpu], [s], lambda: one(s), per_batch))
        for _ in range(reps):
            t0 = time.perf_counter()
            for _ in range(per_batch // 10):
                one(s)
                s.synchronize()
            round_trip.append((time.perf_counter() - t0) / (per_batch // 10))
    how = "empty kernel: no data to check"
    base = {"grid": 1, "block": 1, "launches_per_sample": per_batch}
    gpu_side = {**base, "launches_per_sample": per_gpu_batch}
    return [
        _m("launch_latency", "launch", "stream", (gpu,), gated, True, how, {**gpu_side, "timing": "gated"}),
        _m("launch_latency", "launch", "graph", (gpu,), graph_times[0], True, how,
           {**gpu_side, "timing": "graph replay" if graph_gated else "graph replay, ungated"}),
        _m("launch_latency", "launch", "host_issue", (gpu,), issue, True, how,
           {**base, "timing": HOST_CLOCK, "path": "CuPy RawKernel call"}),
        _m("launch_latency", "launch", "host_roundtrip", (gpu,), round_trip, True, how,
           {**base, "launches_per_sample": per_batch // 10, "timing": HOST_CLOCK,
            "path": "CuPy RawKernel call + Stream.synchronize"}),
    ]


def _issue_time(devices: list[int], streams: list[Any], issue: Any, calls: int) -> float:
    """Host seconds per `issue()` while the gate holds every stream (nothing waits for
    the GPU), then the gate opens and the work runs."""
    flag = hold(devices, streams)
    t0 = time.perf_counter()
    for _ in range(calls):
        issue()
    seconds = (time.perf_counter() - t0) / calls
    flag.release()
    for s in streams:
        s.synchronize()
    if flag.timed_out:
        raise BenchError("the gate timed out while the calls were issued behind it")
    return seconds


def nccl_issue_cost(gpus: list[int], coll: str = "all_reduce", nbytes: int = 8, reps: int = 10,
                    per_batch: int = 50) -> list[Measurement]:
    """NCCL's per-call host cost through CuPy, one process issuing the grouped call of
    every GPU: `per_batch` calls issued while a gate holds the streams (nothing waits for
    the GPU), on the host's clock; and the Python interpreter's share of it (the same
    loop calling a no-op in place of each NCCL call)."""
    from . import nccl as N

    nc = N.nccl_module()
    key = tuple(gpus)
    if key not in N._COMMS:
        N._COMMS[key] = nc.NcclCommunicator.initAll(list(gpus))
    parts = [N._Participant(nc, c, d, r, len(gpus), coll, nbytes, "fp32", False)
             for r, (c, d) in enumerate(zip(N._COMMS[key], gpus))]
    streams = [stream(d, 0) for d in gpus]
    calls = [f for p, s in zip(parts, streams) for f in p.calls(s)]
    start, end = nc.groupStart, nc.groupEnd

    def issue() -> None:
        start()
        for f in calls:
            f()
        end()

    def noop() -> None:
        pass

    def python_only() -> None:
        noop()
        for _ in calls:
            noop()
        noop()

    for _ in range(3):
        issue()
    for s in streams:
        s.synchronize()
    host, interp = [], []
    for _ in range(reps):
        host.append(_issue_time(gpus, streams, issue, per_batch))
        t0 = time.perf_counter()
        for _ in range(per_batch):
            python_only()
        interp.append((time.perf_counter() - t0) / per_batch)
    wrong, checked = N._checked_run(parts, lambda ss: issue())
    ok = wrong == 0 and checked > 0
    how = f"#wrong {wrong} of {checked} sampled result elements after the issued calls"
    base = {"collective": coll, "bytes": nbytes, "ranks": len(gpus), "processes": 1, "calls_per_sample": per_batch,
            "timing": HOST_CLOCK}
    return [_m("nccl_issue_cost", "launch", "nccl_host", tuple(gpus), host, ok, how,
               {**base, "path": "CuPy NCCL binding, grouped calls of every GPU"}),
            _m("nccl_issue_cost", "launch", "python_share", tuple(gpus), interp, ok, how,
               {**base, "path": "the same Python loop calling a no-op per NCCL call"})]


# -------------------------------------------------------------------------- sync


def barrier_costs(gpu: int, reps: int = 5, rounds: int = 20000, threads: int = 1024) -> list[Measurement]:
    """Per round: an mbarrier of one block (`threads` threads), __syncthreads, and an
    inter-SM barrier through global memory (one block per SM)."""
    cupy = cp()
    sms = sm_count(gpu)
    out = []
    with cupy.cuda.Device(gpu):
        bad = cupy.zeros(1, dtype=cupy.uint32)
    for name in ("mbarrier_rounds", "syncthreads_rounds"):
        if name == "mbarrier_rounds" and compute_capability(gpu) < (9, 0):
            continue
        bad.fill(0)
        times = time_kernel(gpu, lambda s, name=name: launch(gpu, name, 1, threads, (np.uint64(rounds), bad),
                                                             stream=s, module="terms"), reps)
        errors = int(bad.get()[0])
        out.append(_m("sync_latency", "sync", name.split("_")[0], (gpu,), [t / rounds for t in times], errors == 0,
                      f"{errors} threads read a stale round number after the barrier" if errors else
                      f"every thread read the round's number after each of {rounds} barriers",
                      {"threads": threads, "blocks": 1, "rounds": rounds}, convention=PER_ROUND))
    grid_rounds = max(1, rounds // 10)
    with cupy.cuda.Device(gpu):
        counter = cupy.zeros(1, dtype=cupy.uint32)
        slots = cupy.zeros(2 * sms, dtype=cupy.uint32)
        status = cupy.zeros(2, dtype=cupy.uint32)
    launches = [0]

    def grid(s: Any) -> None:
        base = launches[0] * grid_rounds * sms
        launches[0] += 1
        launch(gpu, "grid_barrier_rounds", sms, 32, (counter, slots, np.uint32(base), np.uint32(grid_rounds),
                                                     np.uint64(TIMEOUT_NS), status), stream=s, module="terms")

    times = time_kernel(gpu, grid, reps)
    errors, timed_out = (int(x) for x in status.get())
    total = int(counter.get()[0])
    ok = errors == 0 and not timed_out and total == launches[0] * grid_rounds * sms
    out.append(_m("sync_latency", "sync", "grid_barrier", (gpu,), [t / grid_rounds for t in times], ok,
                  "timed out: not every block was resident" if timed_out else
                  f"{errors} stale reads of a neighbour's round; counter {total} of "
                  f"{launches[0] * grid_rounds * sms} arrivals", {"threads": 32, "blocks": sms, "rounds": grid_rounds,
                                                                  "through": "global memory (atomicAdd + acquire load)"},
                  convention=PER_ROUND))
    return out


def signal_latency(a: int, b: int, reps: int = 5, rounds: int = 2000) -> list[Measurement]:
    """A flag ping-pong between GPUs `a` and `b`: each writes the partner's flag (peer
    memory), then spins on its own until answered. Round trip = time / rounds, by SM
    store and by TMA bulk store; one-way is half of it."""
    cupy = cp()
    set_peer_access(a, b, True)
    set_peer_access(b, a, True)
    out = []
    modes = [("sm", 0, "st.relaxed.sys"), ("sm", 2, "st.release.sys")]
    if min(compute_capability(a), compute_capability(b)) >= (9, 0):
        modes.append(("tma", 1, "cp.async.bulk 16 B"))
    for mech, mode, signal in modes:
        flags, status = {}, {}
        for g in (a, b):
            with cupy.cuda.Device(g):
                flags[g] = cupy.zeros(4, dtype=cupy.uint32)
                status[g] = cupy.zeros(2, dtype=cupy.uint32)
        count = {a: 0, b: 0}

        def side(g: int, partner: int, initiator: int) -> Any:
            def run(s: Any) -> None:
                base = count[g] * rounds
                count[g] += 1
                launch(g, "flag_pingpong", 1, 32, (flags[g], flags[partner], np.uint32(base), np.uint32(rounds),
                                                   np.uint32(initiator), np.uint32(mode), np.uint64(TIMEOUT_NS),
                                                   status[g]), stream=s, module="terms")
            return run

        try:
            ta, tb = time_lanes([Lane(a, side(a, b, 1)), Lane(b, side(b, a, 0))], reps)
        except GateTimeout:
            raise BenchError("the ping-pong kernels could not be queued behind the gate") from None
        last = count[a] * rounds
        seen = {g: [int(x) for x in status[g].get()] for g in (a, b)}
        ok = all(seen[g][0] == last and seen[g][1] == 0 for g in (a, b))
        how = (f"both sides saw the last value {last}" if ok else
               f"GPU{a} saw {seen[a][0]}, GPU{b} {seen[b][0]} of {last}"
               + (" (timed out)" if seen[a][1] or seen[b][1] else ""))
        rt = [max(x, y) / rounds for x, y in zip(ta, tb)]
        params = {"rounds": rounds, "signal": signal, "wait": "ld.acquire.sys spin on local memory"}
        out.append(_m("signal_latency", mech, "pingpong", (a, b), rt, ok, how, {**params, "figure": "round trip"},
                      convention=PER_ROUND))
        out.append(_m("signal_latency", mech, "one_way", (a, b), [t / 2 for t in rt], ok, how,
                      {**params, "figure": "half of the round trip"}, convention=PER_ROUND))
    return out


# -------------------------------------------------------------------- reductions


def peer_reduce(src: int, dst: int, mechanism: str, nbytes: int, reps: int, blocks: int | None = None,
                threads: int = 512, chunk: int = 16384, loops: int = 1, smem: int = 0,
                sweep: bool = False) -> list[Measurement]:
    """dst += src (fp32), issued by `src`'s SMs into `dst`'s memory (peer when they
    differ): mechanism 'red' (red.global.add, 16 bytes per instruction on sm_90) or
    'tma_red' (cp.reduce.async.bulk .add.f32). Checked by a clean run after the timed
    ones: dst = d + s exactly (small integers)."""
    cupy = cp()
    if nbytes % 16:
        raise BenchError("reductions move 16-byte vectors: the size must be a multiple of 16")
    if src != dst:
        set_peer_access(src, dst, True)
    blocks = blocks or sm_count(src) * 2
    span = nbytes * loops
    with cupy.cuda.Device(src):
        s_buf = cupy.empty(span // 4, dtype=cupy.float32)
    with cupy.cuda.Device(dst):
        d_buf = cupy.empty(span // 4, dtype=cupy.float32)

    def fill(buf: Any, dev: int, mul: int) -> None:
        launch(dev, "fill_small_f32", sm_count(dev) * 4, 256, (buf, np.uint64(buf.size), np.uint32(mul)),
               module="terms")

    fill(s_buf, src, 7)
    fill(d_buf, dst, 3)
    if mechanism == "red":
        name = "red_add_f32<true>" if compute_capability(src) >= (9, 0) else "red_add_f32<false>"

        def run(s: Any) -> None:
            launch(src, name, blocks, threads, (s_buf, d_buf, np.uint64(nbytes // 16), np.uint32(loops)), stream=s,
                   module="terms", shared_mem=smem)
        params = {"blocks": blocks, "threads": threads, "instruction": "red.global.add.v4.f32"
                  if "true" in name else "atomicAdd f32"}
    elif mechanism == "tma_red":
        if compute_capability(src) < (9, 0):
            raise BenchError("cp.reduce.async.bulk needs compute capability 9.0+")
        stages = 4
        shared = max(stages * chunk + 8 * stages, smem)

        def run(s: Any) -> None:
            launch(src, "tma_red_add_f32<4>", blocks, 32, (s_buf, d_buf, np.uint64(nbytes), np.uint32(chunk),
                                                            np.uint32(loops)), stream=s, shared_mem=shared,
                   module="terms")
        params = {"blocks": blocks, "chunk": chunk, "stages": stages, "instruction": "cp.reduce.async.bulk .add.f32"}
    else:
        raise BenchError(f"unknown reduction mechanism {mechanism!r} (red, tma_red)")
    cupy.cuda.Device(src).synchronize()
    cupy.cuda.Device(dst).synchronize()
    times = time_kernel(src, run, reps)
    fill(d_buf, dst, 3)  # the check: from fresh inputs, one launch
    cupy.cuda.Device(dst).synchronize()
    with cupy.cuda.Device(src):
        run(cupy.cuda.get_current_stream())
        cupy.cuda.Device(src).synchronize()
    with cupy.cuda.Device(dst):
        n_bad = cupy.zeros(1, dtype=cupy.uint64)
        launch(dst, "check_sum_f32", sm_count(dst) * 4, 256, (d_buf, np.uint64(span // 4), np.uint32(3), np.uint32(7),
                                                               np.uint32(1), n_bad), module="terms")
        bad = int(n_bad.get()[0])
    ok = bad == 0
    pattern = "p2p_write" if src != dst else "local_reduce"
    return [_m("p2p_reduce_bandwidth" if src != dst else "local_reduce_bandwidth", mechanism, pattern,
               (src, dst) if src != dst else (src,), times, ok,
               f"all {span // 4} sums exact" if ok else f"{bad} of {span // 4} sums wrong",
               {**params, "loops": loops, "issuer": src, "dtype": "fp32", "op": "add", **({"sweep": True} if sweep
                                                                                          else {})},
               nbytes=nbytes * loops, message_bytes=nbytes,
               convention=REDUCED if loops == 1 else f"{REDUCED}; {loops} messages per launch")]


# ----------------------------------------------------- compute under communication

RESERVE_SMEM = 160 * 1024  # a copy block holding this much shared memory has its SM to itself


def gemm_under_comm(gpu: int, peer: int, mechanism: str = "ce", k: int | None = None, dtype: str = "bf16",
                    n: int = 8192, reps: int = 10) -> list[Measurement]:
    """GEMM throughput on `gpu` while it copies to `peer` at the same time, and the
    copy's bandwidth while the GEMM runs, each against itself alone (same call): with the
    copy engine ('ce'), or with `k` SMs copying ('sm', 'tma': one block per SM, each
    holding enough shared memory to keep GEMM blocks off its SM). Only repetitions that
    ran entirely beside the other lane count."""
    from .compute import gemm_setup

    cupy = cp()
    set_peer_access(gpu, peer, True)
    run_gemm, check_gemm = gemm_setup(gpu, dtype, n)
    params: dict[str, Any] = {"issuer": gpu, "while": mechanism}
    if mechanism in ("sm", "tma"):
        if not k:
            raise BenchError("a copy by SMs beside the GEMM needs k, its number of SMs")
        params.update(blocks=k, smem=RESERVE_SMEM)
        if mechanism == "sm":
            params.update(threads=1024, unroll=8)
        else:
            params.update(chunk=32768, stages=4)
    flops = 2.0 * n ** 3
    gemm_alone = time_kernel(gpu, run_gemm, reps)
    t_gemm = statistics.median(gemm_alone)
    probe_bytes = 64 << 20
    transfer = Transfer(gpu, peer, gpu, mechanism, params)
    src, dst = DeviceBuffer(gpu, probe_bytes), DeviceBuffer(peer, probe_bytes)
    copy_probe = time_lanes([Lane(gpu, _enqueue(transfer, src, dst, probe_bytes))], 3)[0]
    rate = probe_bytes / statistics.median(copy_probe)
    nbytes = int(min(1 << 30, max(probe_bytes, rate * t_gemm)) // (1 << 20)) << 20  # as long as one GEMM
    src, dst = DeviceBuffer(gpu, nbytes), DeviceBuffer(peer, nbytes)
    seed = new_seed()
    src.fill(seed)
    dst.poison()
    cupy.cuda.Device(gpu).synchronize()
    copy = _enqueue(transfer, src, dst, nbytes)
    copy_alone = time_lanes([Lane(gpu, copy)], reps)[0]
    g_times, c_times = time_lanes([Lane(gpu, run_gemm), Lane(gpu, copy)], reps)
    check = dst.check(seed)
    g_ok, g_how = check_gemm()
    g_in, c_in = _overlapped(g_times, c_times), _overlapped(c_times, g_times)
    if len(g_in) < 3 or len(c_in) < 3:
        raise BenchError(f"GEMM and copy overlapped in too few repetitions ({len(g_in)}, {len(c_in)})")
    what = f"{mechanism} copy to GPU{peer}" + (f" on {k} SMs" if k else "")
    base = {**params, "dtype": dtype, "m": n, "n": n, "k": n, "copy_bytes": nbytes}
    from .copies import COPIED

    return [
        _m("gemm_under_comm", "compute", "gemm", (gpu,), g_in, g_ok, g_how, {**base, "beside": what}, flops=flops,
           convention="no bytes counted (compute)"),
        _m("gemm_under_comm", "compute", "gemm", (gpu,), gemm_alone, g_ok, g_how, {**base, "beside": "nothing"},
           flops=flops, convention="no bytes counted (compute)"),
        _m("copy_under_compute", mechanism, "p2p_write", (gpu, peer), c_in, check.ok, check.text,
           {**base, "beside": f"{dtype} GEMM {n}^3"}, nbytes=nbytes, convention=COPIED),
        _m("copy_under_compute", mechanism, "p2p_write", (gpu, peer), copy_alone, check.ok, check.text,
           {**base, "beside": "nothing"}, nbytes=nbytes, convention=COPIED),
    ]


def _overlapped(mine: list[float], other: list[float]) -> list[float]:
    """The repetitions of one lane that ended before the other lane did (both start at
    the gate's release): those ran entirely beside it."""
    end_other = sum(other)
    out, t = [], 0.0
    for x in mine:
        t += x
        if t <= end_other:
            out.append(x)
    return out


def torch_issue_cost(device: int, rank: int, world: int, reps: int = 10, per_batch: int = 50) -> list[Measurement]:
    """Under torchrun: the time per call of `torch.distributed.all_reduce` of 4 bytes
    issued back to back from Python (one rank per GPU, NCCL), on the host's clock from
    the first call to the GPU's completion of the last: what a user's loop of small
    torch collectives costs, launch included. Checked: MAX over the ranks' rank + 1."""
    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:
        raise BenchError(f"torch is not importable here ({e})") from None
    if not dist.is_initialized():
        raise BenchError("torch.distributed is not initialised (run under torchrun)")
    t = torch.full((1,), float(rank + 1), device=f"cuda:{device}")
    for _ in range(5):
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
    torch.cuda.synchronize(device)
    times = []
    for _ in range(reps):
        t.fill_(float(rank + 1))
        torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        for _ in range(per_batch):
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
        torch.cuda.synchronize(device)
        times.append((time.perf_counter() - t0) / per_batch)
    got = float(t.item())
    ok = got == float(world)
    return [_m("torch_collective_cost", "launch", "torch_all_reduce", (rank,), times, ok,
               f"all-reduce MAX of rank + 1 gave {got:g}, expected {world}",
               {"collective": "all_reduce", "bytes": 4, "ranks": world, "processes": world,
                "calls_per_sample": per_batch, "timing": "host clock, back to back, until the GPU finished",
                "path": "torch.distributed all_reduce (NCCL backend)", "rank_time": "this rank"})]


# ------------------------------------------------------------- one-shot collectives


def oneshot_collective(coll: str, nbytes: int, a: int = 0, b: int = 1, reps: int = 20,
                       threads: int = 1024) -> list[Measurement]:
    """A small collective between GPUs `a` and `b` done in one kernel of one block each
    (`oneshot_exchange`: LL-style 8-byte slots of value + epoch, one 64-bit store each),
    fp32 in nccl-tests' sizes and layouts: what a hand-written kernel achieves where NCCL
    is latency-bound. Broadcast and reduce send a one-slot acknowledgement back (the flow
    control buffer reuse needs). Timed as NCCL's device time is: `reps` calls captured in
    a CUDA graph per GPU, the replays behind the gate. Checked against the exact sums."""
    from ..roofline.collectives import layout
    from .nccl import _value

    cupy = cp()
    set_peer_access(a, b, True)
    set_peer_access(b, a, True)
    n_send, n_recv = layout(coll, nbytes, 2, 4)
    if min(n_send, n_recv) < 1 or nbytes % 4:
        raise BenchError(f"{nbytes} bytes is too small for a one-shot {coll} of fp32 over 2 GPUs")
    gpus = (a, b)
    arrays: dict[int, dict[str, Any]] = {}
    for r, g in enumerate(gpus):
        with cupy.cuda.Device(g):
            x = cupy.asarray(_value(np.arange(n_send, dtype=np.int64), r), dtype=cupy.float32)
            arrays[g] = {"in": x, "out": cupy.full(n_recv, -1.0, dtype=cupy.float32), "scratch": cupy.zeros(1, cupy.float32),
                         "epoch": cupy.zeros(1, dtype=cupy.uint32), "status": cupy.zeros(2, dtype=cupy.uint32)}
    cap = max(n_send, n_recv, 1)
    for g in gpus:
        with cupy.cuda.Device(g):
            arrays[g]["recv"] = cupy.zeros(2 * cap, dtype=cupy.uint64)
    zero = np.uint64(0)

    def ptr(x: Any, offset: int = 0) -> np.uint64:
        return np.uint64(x.data.ptr + 4 * offset)

    def args(r: int) -> tuple:
        g, p = gpus[r], gpus[1 - r]
        A, P = arrays[g], arrays[p]
        half = n_recv if coll == "reduce_scatter" else n_send // 2
        # (send ptr, count, recv count, base, out, self src, self dst, self count)
        if coll == "all_reduce":
            s = (ptr(A["in"]), n_send, n_recv, ptr(A["in"]), ptr(A["out"]), zero, zero, 0)
        elif coll == "all_gather":
            s = (ptr(A["in"]), n_send, n_send, zero, ptr(A["out"], (1 - r) * n_send), ptr(A["in"]),
                 ptr(A["out"], r * n_send), n_send)
        elif coll == "reduce_scatter":
            s = (ptr(A["in"], (1 - r) * half), half, half, ptr(A["in"], r * half), ptr(A["out"]), zero, zero, 0)
        elif coll == "all_to_all":
            s = (ptr(A["in"], (1 - r) * half), half, half, zero, ptr(A["out"], (1 - r) * half), ptr(A["in"], r * half),
                 ptr(A["out"], r * half), half)
        elif coll == "sendrecv":
            s = (ptr(A["in"]), n_send, n_recv, zero, ptr(A["out"]), zero, zero, 0)
        elif coll == "broadcast":  # root 0 sends; the other acknowledges with one slot
            s = ((ptr(A["in"]), n_send, 1, zero, ptr(A["scratch"]), ptr(A["in"]), ptr(A["out"]), n_send) if r == 0
                 else (ptr(A["in"]), 1, n_recv, zero, ptr(A["out"]), zero, zero, 0))
        elif coll == "reduce":  # rank 1 sends to root 0, which acknowledges
            s = ((ptr(A["in"]), 1, n_recv, ptr(A["in"]), ptr(A["out"]), zero, zero, 0) if r == 0
                 else (ptr(A["in"]), n_send, 1, zero, ptr(A["scratch"]), zero, zero, 0))
        else:
            raise BenchError(f"no one-shot form of {coll!r}")
        send, count, rcount, base, out, ssrc, sdst, scount = s
        return (send, np.uint32(count), ptr(P["recv"]), ptr(A["recv"]), np.uint32(rcount), base, out, ssrc, sdst,
                np.uint32(scount), np.uint32(cap), A["epoch"], np.uint64(TIMEOUT_NS), A["status"])

    launch_args = [args(0), args(1)]
    streams = [stream(g, 0) for g in gpus]

    def rep(ss: list[Any]) -> None:
        for r, (g, s) in enumerate(zip(gpus, ss)):
            launch(g, "oneshot_exchange", 1, threads, launch_args[r], stream=s, module="terms")

    for _ in range(3):
        rep(streams)
    for s in streams:
        s.synchronize()
    graph_times, replay, destroy, gated = time_graph(list(gpus), streams, rep, reps, replays=10)
    destroy()
    for s in streams:
        s.synchronize()
    from .nccl import _expected

    wrong = checked = 0
    timed_out = False
    for r, g in enumerate(gpus):
        timed_out |= bool(int(arrays[g]["status"].get()[1]))
        if (coll == "broadcast" and r == 0) or (coll == "reduce" and r == 1):
            continue
        got = arrays[g]["out"].get().astype(np.float64)
        idx = np.arange(n_recv)
        want = _expected(coll, r, 2, idx, n_recv, 1 - r if coll == "sendrecv" else None)
        if coll == "broadcast":
            want = _value(idx, 0)
        wrong += int(np.count_nonzero(~np.isclose(got, want, rtol=1e-6, atol=0)))
        checked += n_recv
    ok = wrong == 0 and checked > 0 and not timed_out
    per_call = [max(x, y) for x, y in zip(*graph_times)]  # the slower GPU, replay by replay
    return [_m("oneshot_collective", "oneshot", coll, gpus, per_call, ok,
               ("timed out waiting for the peer; " if timed_out else "")
               + f"#wrong {wrong} of {checked} result elements", {
                   "dtype": "fp32", "threads": threads, "blocks": 1, "protocol": "LL (value + epoch per 8 bytes)",
                   "timing": "graph replay" + ("" if gated else ", ungated"), "calls_per_replay": reps},
               nbytes=nbytes, convention="nccl-tests' size (algbw = size / time)")]
