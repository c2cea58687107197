"""Where NCCL time goes at mid sizes: one process driving both GPUs,
each collective and size timed several ways in one run:

  gated      linkroof's method: repetitions queued behind a spin kernel (settle 5)
  gated0     the same without the untimed settle repetitions
  graph      N grouped calls captured in one CUDA graph per GPU, the graphs replayed
             (nccl-tests -G 1); time per call from events around the replay
  plain      N grouped calls launched back to back from Python, events around the
             loop (nccl-tests without -G: the host's launch is in the time)

Every variant runs the same communicator and buffers; results are checked once at the
end of each (collective, size). `--alloc ncclmem` allocates every buffer with NCCL's
own ncclMemAlloc (cuMem memory NCCL can register, as nccl-tests >= 2.19 does) instead
of CuPy's pool.

    python3 benchmarks/nccl_timing.py [--sizes 1M,16M,64M,256M] [--iters 20] [--runs 3] [--alloc pool|ncclmem]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys


def main() -> None:
    from linkroof.microbench import nccl as N
    from linkroof.microbench.cuda import cp
    from linkroof.microbench.timing import _marks, stream, time_grouped
    from linkroof.units import parse_size_range

    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1M,16M,64M,256M")
    ap.add_argument("--colls", default="all_to_all,sendrecv,all_gather,all_reduce")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", dest="json_out")
    ap.add_argument("--alloc", choices=["pool", "ncclmem"], default="pool")
    args = ap.parse_args()
    cupy = cp()
    nccl_array = _nccl_arrays(cupy) if args.alloc == "ncclmem" else None
    nccl = N.nccl_module()
    gpus = [0, 1]
    comms = nccl.NcclCommunicator.initAll(gpus)
    streams = [stream(d, 0) for d in gpus]
    rt = cupy.cuda.runtime
    rows = []

    def mark() -> list:
        return _marks(gpus, streams)

    def per_call(evs: list, ends: list, calls: int) -> float:
        for e in ends:
            e.synchronize()
        return max(cupy.cuda.get_elapsed_time(a, b) for a, b in zip(evs, ends)) / 1e3 / calls

    for coll in args.colls.split(","):
        for size in parse_size_range(args.sizes):
            parts = [N._Participant(nccl, c, d, r, 2, coll, size, "fp32", False) for r, (c, d) in
                     enumerate(zip(comms, gpus))]
            if nccl_array is not None:  # the same buffers, in memory from ncclMemAlloc
                for p in parts:
                    p.send = nccl_array(p.send_n, p.send.dtype, p.dev)
                    p.recv = nccl_array(p.recv_n, p.recv.dtype, p.dev)
                    p.reset()

            def rep(ss, parts=parts):
                nccl.groupStart()
                for p, s in zip(parts, ss):
                    for f in p.calls(s):
                        f()
                nccl.groupEnd()

            ops = 4 if coll == "all_to_all" else 2
            out: dict[str, list[float]] = {}
            for run in range(args.runs):
                for name, settle in (("gated", 5), ("gated0", 0)):
                    per = time_grouped(gpus, rep, args.iters, warmup=3, ops_per_rep=ops, settle=settle)
                    out.setdefault(name, []).append(statistics.median(
                        [max(a, b) for a, b in zip(per[0], per[1])]))
                # plain: back-to-back from Python, events around the loop on each stream
                for _ in range(3):
                    rep(streams)
                for d in gpus:
                    cupy.cuda.Device(d).synchronize()
                evs = mark()
                for _ in range(args.iters):
                    rep(streams)
                out.setdefault("plain", []).append(per_call(evs, mark(), args.iters))
                # graph: capture iters grouped calls on both streams, replay
                try:
                    for d, s in zip(gpus, streams):
                        with cupy.cuda.Device(d):
                            rt.streamBeginCapture(s.ptr, rt.streamCaptureModeRelaxed)
                    for _ in range(args.iters):
                        rep(streams)
                    execs = []
                    for d, s in zip(gpus, streams):
                        with cupy.cuda.Device(d):
                            g = rt.streamEndCapture(s.ptr)
                            execs.append((d, rt.graphInstantiate(g)))
                    for d, x in execs:  # warm-up replay
                        with cupy.cuda.Device(d):
                            rt.graphLaunch(x, streams[d].ptr)
                    for d in gpus:
                        cupy.cuda.Device(d).synchronize()
                    evs = mark()
                    for d, x in execs:
                        with cupy.cuda.Device(d):
                            rt.graphLaunch(x, streams[d].ptr)
                    out.setdefault("graph", []).append(per_call(evs, mark(), args.iters))
                except Exception as e:  # noqa: BLE001
                    out.setdefault("graph_error", []).append(f"{type(e).__name__}: {e}")
            wrong, _ = N._checked_run(parts, rep)
            row = {"coll": coll, "size": size, "wrong": wrong,
                   **{k: v for k, v in out.items()}}
            rows.append(row)
            cells = "  ".join(f"{k} " + ",".join(f"{x * 1e6:.1f}" for x in v) for k, v in out.items()
                              if not k.endswith("error"))
            print(f"{coll:<14} {size >> 20:>5} MiB  {cells}  wrong {row['wrong']}"
                  + (f"  {out['graph_error'][0]}" if "graph_error" in out else ""), flush=True)
    if args.json_out:
        json.dump(rows, open(args.json_out, "w"), indent=1)


_KEEP: list = []  # ncclMemAlloc'd memory stays mapped for the whole run (NCCL may keep it registered)


def _nccl_arrays(cupy):
    """Arrays in memory from ncclMemAlloc (the same libnccl CuPy uses), on a given GPU."""
    import ctypes

    lib = ctypes.CDLL("libnccl.so.2")
    lib.ncclMemAlloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]

    def array(n, dtype, device):
        nbytes = max(1, n * cupy.dtype(dtype).itemsize)
        with cupy.cuda.Device(device):
            ptr = ctypes.c_void_p()
            rc = lib.ncclMemAlloc(ctypes.byref(ptr), nbytes)
            if rc != 0:
                raise MemoryError(f"ncclMemAlloc({nbytes}) failed: {rc}")
            mem = cupy.cuda.UnownedMemory(ptr.value, nbytes, None, device)
            _KEEP.append(mem)
            return cupy.ndarray((n,), dtype, cupy.cuda.MemoryPointer(mem, 0))

    return array


if __name__ == "__main__":
    sys.exit(main())
