"""NCCL collectives through CuPy's NCCL binding, measured as nccl-tests defines them:
time, algbw = size / time, busbw = algbw x factor (all-reduce 2(n-1)/n; all-gather,
reduce-scatter, all-to-all (n-1)/n; broadcast, reduce, send/recv 1), every result
buffer checked (nccl-tests' #wrong).

Sizes follow nccl-tests: all-gather's size is the gathered output, reduce-scatter's
the input, all-to-all's the whole send buffer, send/recv's what each rank sends to the
next. One process driving all local GPUs (grouped calls) is the default; under a
launcher each rank drives its own GPU (`RankCollectives`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from ..roofline.collectives import COLLECTIVES, NO_IN_PLACE, actual_bytes, busbw_factor, layout
from ..schema import BenchSpec, Measurement, slowest_per_repetition
from .buffers import sorted_unique
from .cuda import BenchError, cp
from .timing import GateTimeout, stream, time_graph, time_grouped, time_host_loop

DTYPES = {"fp32": ("NCCL_FLOAT32", 4), "fp16": ("NCCL_FLOAT16", 2), "bf16": ("NCCL_BFLOAT16", 2)}
INTERNODE = "sendrecv_internode"  # send/recv between hosts, every rank with its partner at once
CONVENTION = "nccl-tests: algbw = size / time, busbw = algbw x factor"


# Timing definitions of a collective (params["timing"]): "device", the GPU's time per call
# (the better of the gated stream and CUDA-graph replay, as nccl-tests -G); "host_launch",
# the time per call of a Python loop issuing them back to back (as nccl-tests without -G).
DEVICE, HOST_LAUNCH = "device", "host_launch"


class _Buffers:
    """Collective buffers in memory from NCCL's own ncclMemAlloc (cuMem memory NCCL can
    register: under CUDA-graph capture it then moves data between user buffers directly,
    as nccl-tests >= 2.19, whose buffers come from ncclMemAlloc too). One growing buffer
    per device and role, reused across sizes and never freed while the process runs
    (NCCL may still hold it registered). Where ncclMemAlloc is missing (older NCCL, or
    LINKROOF_NCCL_BUFFERS=pool), CuPy's pool (cudaMalloc)."""

    def __init__(self) -> None:
        import ctypes
        import os

        self.lib = None
        self.kind = "cudaMalloc (CuPy pool)"
        if os.environ.get("LINKROOF_NCCL_BUFFERS", "ncclMemAlloc") != "pool":
            try:
                lib = ctypes.CDLL("libnccl.so.2")
                lib.ncclMemAlloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
                lib.ncclMemAlloc.restype = ctypes.c_int
                self.lib, self.kind = lib, "ncclMemAlloc"
            except (OSError, AttributeError):
                pass
        self.raw: dict[tuple[int, str], Any] = {}
        self.keep: list[Any] = []

    def get(self, device: int, role: str, n: int, dtype: str) -> Any:
        """A fresh-shaped array of `n` elements of `dtype` on `device` (contents undefined)."""
        import ctypes

        cupy = cp()
        storage = cupy.uint16 if dtype in ("fp16", "bf16") else cupy.float32
        nbytes = n * cupy.dtype(storage).itemsize
        if self.lib is None:
            with cupy.cuda.Device(device):
                return cupy.empty(n, storage)
        raw = self.raw.get((device, role))
        if raw is None or raw.size < nbytes:
            size = max(4 << 20, 1 << (nbytes - 1).bit_length())
            with cupy.cuda.Device(device):
                ptr = ctypes.c_void_p()
                rc = self.lib.ncclMemAlloc(ctypes.byref(ptr), size)
                if rc != 0:
                    raise BenchError(f"ncclMemAlloc of {size} bytes on GPU{device} failed (NCCL error {rc})")
                mem = cupy.cuda.UnownedMemory(ptr.value, size, None, device)
                raw = cupy.ndarray((size,), cupy.uint8, cupy.cuda.MemoryPointer(mem, 0))
            self.keep.append(raw)
            self.raw[(device, role)] = raw
        return raw[:nbytes].view(storage)


_BUFFERS: _Buffers | None = None


def _buffers() -> _Buffers:
    global _BUFFERS
    if _BUFFERS is None:
        _BUFFERS = _Buffers()
    return _BUFFERS


def nccl_module() -> Any:
    cp()
    try:
        from cupy.cuda import nccl
    except ImportError as e:
        raise BenchError(f"CuPy has no NCCL here ({e})") from None
    if not getattr(nccl, "available", True) or not hasattr(nccl, "NcclCommunicator"):
        raise BenchError("CuPy's NCCL binding is not available (install the nvidia-nccl package for your CUDA)")
    return nccl


def _value(index: Any, rank: int) -> Any:
    """The input element `index` of `rank`: small integers, exact in fp16/bf16/fp32 sums."""
    return ((index * 7 + rank * 13) % 31).astype(np.float64) if hasattr(index, "astype") else \
        float((index * 7 + rank * 13) % 31)


def _to_dtype(x64: Any, dtype: str) -> Any:
    cupy = cp()
    if dtype == "fp32":
        return x64.astype(cupy.float32)
    if dtype == "fp16":
        return x64.astype(cupy.float16)
    return (x64.astype(cupy.float32).view(cupy.uint32) >> 16).astype(cupy.uint16)  # bf16 bits


def _from_dtype(x: Any, dtype: str) -> np.ndarray:
    cupy = cp()
    if dtype == "bf16":
        return (x.astype(cupy.uint32) << 16).view(cupy.float32).get().astype(np.float64)
    return x.get().astype(np.float64)


def _expected(coll: str, rank: int, n: int, idx: np.ndarray, count: int, recv_from: int | None = None) -> np.ndarray:
    if coll in ("all_reduce", "reduce"):
        return sum(_value(idx, r) for r in range(n))
    if coll == "all_gather":
        per = count // n
        return _value(idx % per, idx // per)
    if coll == "reduce_scatter":
        per = count
        return sum(_value(rank * per + idx, r) for r in range(n))
    if coll == "all_to_all":
        chunk = count // n
        return _value(rank * chunk + idx % chunk, idx // chunk)
    if coll == "broadcast":
        return _value(idx, 0)
    if coll == "sendrecv":
        return _value(idx, (rank - 1) % n if recv_from is None else recv_from)
    raise BenchError(f"unknown collective {coll!r}")


class _Participant:
    """One rank's buffers and calls (a device of a single process, or a process)."""

    def __init__(self, nccl: Any, comm: Any, dev: int, rank: int, n: int, coll: str, nbytes: int, dtype: str,
                 in_place: bool, peers: tuple[int | None, int | None] | None = None):
        name, esize = DTYPES[dtype]
        self.nccl, self.comm, self.dev, self.rank, self.n, self.coll = nccl, comm, dev, rank, n, coll
        # send/recv partners: (send to, receive from); the ring's neighbours unless given
        self.send_to, self.recv_from = peers if peers is not None else ((rank + 1) % n, (rank - 1) % n)
        self.dtype, self.in_place = dtype, in_place
        self.ndt = getattr(nccl, name, None)
        if self.ndt is None:
            raise BenchError(f"this NCCL binding has no {name}")
        send_n, recv_n = layout(coll, nbytes, n, esize)
        if send_n == 0 or recv_n == 0:
            raise BenchError(f"{nbytes} bytes is too small for {coll} over {n} ranks")
        buffers = _buffers()
        self.buffers = buffers.kind
        if in_place:  # nccl-tests' layouts: the input is the rank's slice of the output, or vice versa
            buf = buffers.get(dev, "inout", max(send_n, recv_n), dtype)
            self.send = buf[rank * send_n:(rank + 1) * send_n] if coll == "all_gather" else buf[:send_n]
            self.recv = buf[rank * recv_n:(rank + 1) * recv_n] if coll == "reduce_scatter" else buf[:recv_n]
        else:
            self.send = buffers.get(dev, "send", send_n, dtype)
            self.recv = buffers.get(dev, "recv", recv_n, dtype)
        self.send_n, self.recv_n = send_n, recv_n
        self.reset()

    def reset(self) -> None:
        """Poison the result, then write the input (in place they overlap): the state
        before one collective. Timed repetitions of an in-place reduction accumulate, so
        the checked run starts from here again, as in nccl-tests."""
        cupy = cp()
        with cupy.cuda.Device(self.dev):
            self.recv[...] = _to_dtype(cupy.full(self.recv_n, -1.0), self.dtype)
            self.send[...] = _to_dtype(_value(cupy.arange(self.send_n, dtype=cupy.int64), self.rank), self.dtype)

    def calls(self, stream: Any) -> list[Any]:
        """This rank's NCCL calls of one collective on `stream`, bound to their arguments
        once: a loop then costs Python one call each (the host-launch figure is the launch,
        not the building of arguments)."""
        from functools import partial

        c, n, s, r = self.comm, self.n, self.send.data.ptr, self.recv.data.ptr
        op, sp, dt = self.nccl.NCCL_SUM, stream.ptr, self.ndt
        if self.coll == "all_reduce":
            return [partial(c.allReduce, s, r, self.send_n, dt, op, sp)]
        if self.coll == "all_gather":
            return [partial(c.allGather, s, r, self.send_n, dt, sp)]
        if self.coll == "reduce_scatter":
            return [partial(c.reduceScatter, s, r, self.recv_n, dt, op, sp)]
        if self.coll == "broadcast":
            return [partial(c.broadcast, s, r, self.send_n, dt, 0, sp)]
        if self.coll == "reduce":
            return [partial(c.reduce, s, r, self.send_n, dt, op, 0, sp)]
        if self.coll == "all_to_all":  # grouped send/recv (the binding has no all-to-all)
            chunk = self.send_n // n
            step = chunk * DTYPES[self.dtype][1]
            out = []
            for p in range(n):
                out += [partial(c.send, s + p * step, chunk, dt, p, sp), partial(c.recv, r + p * step, chunk, dt, p, sp)]
            return out
        if self.coll == "sendrecv":
            out = []
            if self.send_to is not None:
                out.append(partial(c.send, s, self.send_n, dt, self.send_to, sp))
            if self.recv_from is not None:
                out.append(partial(c.recv, r, self.recv_n, dt, self.recv_from, sp))
            return out
        raise BenchError(f"unknown collective {self.coll!r}")

    def check(self) -> tuple[int, int]:
        """(wrong elements, checked elements) over up to 1 M sampled elements; a reduce's
        non-root ranks check that their input was left untouched."""
        cupy = cp()
        if (self.coll == "reduce" and self.rank != 0) or (self.coll == "sendrecv" and self.recv_from is None):
            buf, count = self.send, self.send_n  # no result here: the input must be left as it was
        else:
            buf, count = self.recv, self.recv_n
        idx = sorted_unique(np.linspace(0, count - 1, num=min(count, 1 << 20)).astype(np.int64))
        with cupy.cuda.Device(self.dev):
            got = _from_dtype(buf[cupy.asarray(idx)], self.dtype)
        if buf is self.send:
            want = _value(idx, self.rank)
        else:
            want = _expected(self.coll, self.rank, self.n, idx, self.recv_n, self.recv_from)
        tol = 1e-2 if self.dtype == "bf16" else 1e-3
        wrong = int(np.count_nonzero(~np.isclose(got, want, rtol=tol, atol=0)))
        return wrong, len(idx)


def _measurement(coll: str, n: int, nbytes: int, dtype: str, in_place: bool, times: list[float], wrong: int,
                 checked: int, devices: tuple[int, ...], params: dict[str, Any] | None = None) -> Measurement:
    nbytes = actual_bytes(coll, nbytes, n, dtype)
    spec = BenchSpec(f"nccl_{coll}", "nccl", coll, devices, nbytes, len(times),
                     params={"dtype": dtype, "in_place": in_place, "redop": "sum", "root": 0, **(params or {})})
    return Measurement(spec=spec, times_s=tuple(times), bytes_per_rep=nbytes, bytes_convention=CONVENTION,
                       verified=wrong == 0 and checked > 0,
                       verification=f"#wrong {wrong} of {checked} sampled result elements" if checked
                       else "nothing to check on this rank",
                       busbw_factor=busbw_factor(coll, n))


_COMMS: dict[tuple[int, ...], list[Any]] = {}


def collective(gpus: list[int], coll: str, nbytes: int, dtype: str = "fp32", in_place: bool = False,
               reps: int = 20, graph: bool = True) -> Measurement:
    """One process driving every GPU in `gpus` (grouped calls): the device time per call
    (the slowest GPU's, per repetition); `graph=False` times the gated stream only."""
    return collective_timings(gpus, coll, nbytes, dtype, in_place, reps, host_launch=False, graph=graph)[0]


def collective_timings(gpus: list[int], coll: str, nbytes: int, dtype: str = "fp32", in_place: bool = False,
                       reps: int = 20, host_launch: bool = True, graph: bool = True) -> list[Measurement]:
    """Both timing definitions of one collective: the device time (the better of the
    gated stream and CUDA-graph replay) and, with `host_launch`, the per-call time of a
    Python loop. Every result is checked: after the eager run and after a graph replay."""
    if coll not in COLLECTIVES:
        raise BenchError(f"unknown collective {coll!r} (one of {', '.join(COLLECTIVES)})")
    if in_place and coll in NO_IN_PLACE:
        raise BenchError(f"{coll} has no in-place form here")
    if len(gpus) < 2:
        raise BenchError("collectives need at least two GPUs")
    nccl = nccl_module()
    key = tuple(gpus)
    if key not in _COMMS:
        _COMMS[key] = nccl.NcclCommunicator.initAll(list(gpus))
    comms = _COMMS[key]
    n = len(gpus)
    parts = [_Participant(nccl, c, d, r, n, coll, nbytes, dtype, in_place) for r, (c, d) in enumerate(zip(comms, gpus))]
    runs = _time_and_check(nccl, parts, reps, host_launch, graph)
    return [_measurement(coll, n, nbytes, dtype, in_place, slowest_per_repetition(per_dev), wrong, checked,
                         tuple(gpus), {"processes": 1, **params}) for per_dev, wrong, checked, params in runs]


def _time_and_check(nccl: Any, parts: list[_Participant], reps: int, host_launch: bool = False,
                    graph: bool = True, agree: Callable[[list[float]], list[float]] | None = None,
                    ) -> list[tuple[list[list[float]], int, int, dict[str, Any]]]:
    """Time `reps` grouped calls of every participant and check the results: for the
    device time, gated (else ungated) and, out of place, from a CUDA graph, keeping the
    better; with `host_launch`, a plain loop too. One (seconds per repetition per
    participant, wrong, checked, parameters) per timing definition.

    `agree` (ranks under a launcher) turns this rank's [gated, graph] medians into the
    slowest rank's, so that every rank keeps the same method."""
    bound: dict[tuple[int, ...], list[Any]] = {}

    def rep(streams: list[Any]) -> None:
        key = tuple(s.ptr for s in streams)
        calls = bound.get(key)
        if calls is None:
            calls = bound[key] = [f for p, s in zip(parts, streams) for f in p.calls(s)]
        group_start()  # send/recv pairs (all-to-all, send/recv) must be posted together
        for f in calls:
            f()
        group_end()

    group_start, group_end = nccl.groupStart, nccl.groupEnd

    ops = 2 * parts[0].n if parts[0].coll == "all_to_all" else 2
    devices = [p.dev for p in parts]
    streams = [stream(d, 0) for d in devices]
    common = {"buffers": parts[0].buffers}
    try:
        gated_times = time_grouped(devices, rep, reps, warmup=3, ops_per_rep=ops)
        gated = True
    except GateTimeout:
        gated_times = time_grouped(devices, rep, reps, warmup=0, settle=0, gated=False)
        gated = False
    wrong, count = _checked_run(parts, rep)
    device = (gated_times, wrong, count, {**common, "timing": DEVICE, "method": "gated" if gated else "ungated"})
    if graph and not parts[0].in_place:  # in place, repeated reductions would compound: the eager run only
        graph_times, replay, destroy, graph_gated = time_graph(devices, streams, rep, reps,
                                                                replays=_samples(gated_times, reps, 0.1, 5, 15))
        try:
            g_wrong, g_count = _checked_run(parts, lambda _: replay())  # what the graph computes, checked
        finally:
            destroy()
        medians = [_median(slowest_per_repetition(gated_times)), _median(slowest_per_repetition(graph_times))]
        if agree is not None:
            medians = agree(medians)
        graph_method = "graph" if graph_gated else "graph, ungated"
        if medians[1] < medians[0]:
            device = (graph_times, wrong + g_wrong, count + g_count,
                      {**common, "timing": DEVICE, "method": graph_method, "other_method_median_s": medians[0]})
        else:
            device = (gated_times, wrong + g_wrong, count + g_count,
                      {**device[3], "other_method_median_s": medians[1]})
    out = [device]
    if host_launch:
        loop_times = time_host_loop(devices, streams, rep, reps, loops=_samples(gated_times, reps, 0.05, 3, 15))
        out.append((loop_times, device[1], device[2], {**common, "timing": HOST_LAUNCH, "method": "python loop"}))
    return out


def _samples(times: list[list[float]], reps: int, budget_s: float, least: int, most: int) -> int:
    """How many samples of `reps` calls fit in `budget_s`, from the calls' timed median,
    between `least` and `most`: small collectives (noisier, cheap) get more."""
    per_sample = _median(slowest_per_repetition(times)) * reps
    return max(least, min(most, int(budget_s / max(per_sample, 1e-9))))


def _median(xs: Any) -> float:
    import statistics

    return statistics.median(xs)


def _sync(device: int) -> None:
    cp().cuda.Device(device).synchronize()


def _checked_run(parts: list[_Participant], rep: Any) -> tuple[int, int]:
    """After the timed repetitions: reset every input, run the collective once (`rep`:
    one grouped call, or one replay of its graph), check: (wrong, checked) over every
    participant."""
    for p in parts:
        _sync(p.dev)
        p.reset()
        _sync(p.dev)
    rep([stream(p.dev, 0) for p in parts])
    for p in parts:
        _sync(p.dev)
    results = [p.check() for p in parts]
    return sum(w for w, _ in results), sum(c for _, c in results)


class RankCollectives:
    """Under a launcher: this process's rank drives its own GPU; the NCCL unique id
    travels through the launcher's engine (`comm.bcast`)."""

    def __init__(self, comm: Any, device: int):
        nccl = nccl_module()
        self.nccl, self.comm, self.device = nccl, comm, device
        uid = nccl.get_unique_id() if comm.ctx.rank == 0 else None
        uid = comm.bcast(uid, root=0)
        with cp().cuda.Device(device):
            self.nc = nccl.NcclCommunicator(comm.ctx.world, uid, comm.ctx.rank)

    def run(self, coll: str, nbytes: int, dtype: str = "fp32", in_place: bool = False, reps: int = 20) -> Measurement:
        """The device time of one collective on this rank (see `timings`)."""
        return self.timings(coll, nbytes, dtype, in_place, reps, host_launch=False)[0]

    def timings(self, coll: str, nbytes: int, dtype: str = "fp32", in_place: bool = False, reps: int = 20,
                host_launch: bool = True) -> list[Measurement]:
        """Both timing definitions on this rank, as `collective_timings`. The device time's
        method (gated stream or graph replay) is chosen from the slowest rank's medians,
        exchanged over this communicator, so every rank keeps the same one."""
        n, rank = self.comm.ctx.world, self.comm.ctx.rank
        part = _Participant(self.nccl, self.nc, self.device, rank, n, coll, nbytes, dtype, in_place)
        runs = _time_and_check(self.nccl, [part], reps, host_launch=host_launch, agree=self._slowest)
        return [_measurement(coll, n, nbytes, dtype, in_place, times, wrong, checked, (rank,),
                             {"processes": n, "rank_time": "this rank", **params})
                for (times,), wrong, checked, params in runs]

    def _slowest(self, values: list[float]) -> list[float]:
        """Every rank's `values`, element-wise maximum over the ranks (an NCCL all-reduce)."""
        cupy = cp()
        with cupy.cuda.Device(self.device):
            buf = cupy.asarray(values, dtype=cupy.float64)
            s = stream(self.device, 0)
            self.nc.allReduce(buf.data.ptr, buf.data.ptr, buf.size, self.nccl.NCCL_FLOAT64, self.nccl.NCCL_MAX,
                              s.ptr)
            s.synchronize()
            return [float(x) for x in buf.get()]

    def run_internode(self, nbytes: int, peers: tuple[int | None, int | None], dtype: str = "fp32",
                      reps: int = 20) -> Measurement:
        """Every rank sends `nbytes` to its partner on the next host and receives from
        the previous one, all at once (every NIC rail busy): bytes sent per second."""
        n, rank = self.comm.ctx.world, self.comm.ctx.rank
        part = _Participant(self.nccl, self.nc, self.device, rank, n, "sendrecv", nbytes, dtype, False, peers)
        ((times,), wrong, checked, params), = _time_and_check(self.nccl, [part], reps, graph=False)
        m = _measurement("sendrecv", n, nbytes, dtype, False, times, wrong, checked, (rank,),
                         {"processes": n, "rank_time": "this rank", "send_to": peers[0], "recv_from": peers[1],
                          **params})
        return dataclasses.replace(m, spec=dataclasses.replace(m.spec, name="nccl_internode_sendrecv",
                                                               pattern=INTERNODE))
