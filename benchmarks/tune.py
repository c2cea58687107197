"""Sweep the knobs behind the headline figures on one GPU pair, to find the plateau of
each mechanism: copy sizes and batching (CE), loads in flight / blocks / threads /
in-kernel loops (SM), chunk / stages / blocks / loops (TMA), host memory sizes,
pointer-chase load kinds, GEMM inputs. One JSON line per variant; JSON file with --out.

    python benchmarks/tune.py --sections ce,sm,tma,host,local,latency,gemm --out tune.json
"""

import argparse
import itertools
import json
import sys
import time

from linkroof.microbench import compute, copies, latency

GiB = 1 << 30
MiB = 1 << 20


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", type=int, default=0)
    ap.add_argument("--dst", type=int, default=1)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--sections", default="ce,sm,tma,host,local,latency,gemm")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    sections = set(args.sections.split(","))
    rows = []
    a, b = args.src, args.dst

    def record(section, label, fn, **kw):
        t0 = time.perf_counter()
        try:
            got = fn(**kw)
            ms = got if isinstance(got, list) else [got]
            for m in ms:
                row = {"section": section, "label": label, "name": m.spec.name, "params": m.spec.params,
                       "bytes": m.spec.message_bytes, "verified": m.verified, "cv": round(m.cv, 5)}
                if m.flops_per_rep:
                    row["TFLOPs"] = m.flop_rate / 1e12
                elif m.bytes_per_rep:
                    row["GBps"] = m.bandwidth_bytes_per_s / 1e9
                else:
                    row["ns"] = m.median_s * 1e9
                rows.append(row)
                print(json.dumps(row), flush=True)
        except Exception as e:  # noqa: BLE001
            row = {"section": section, "label": label, "error": f"{type(e).__name__}: {e}", "kw": str(kw)}
            rows.append(row)
            print(json.dumps(row), flush=True)
        return time.perf_counter() - t0

    r = args.reps
    if "ce" in sections:
        for mode, size in itertools.product(("read", "write"), (512 * MiB, GiB, 2 * GiB)):
            record("ce", f"ce {mode}", copies.peer_copy, src=a, dst=b, mode=mode, mechanism="ce", nbytes=size, reps=r)
        for mode in ("read", "write"):
            record("ce", f"ce bidir {mode}", copies.peer_bidir, a=a, b=b, mode=mode, mechanism="ce", nbytes=GiB, reps=r)
    if "sm" in sections:
        for mode, u, blocks, threads, loops in itertools.product(("read", "write"), (8, 12), (132, 264), (512, 1024),
                                                                 (1, 8)):
            record("sm", f"sm {mode}", copies.peer_copy, src=a, dst=b, mode=mode, mechanism="sm", nbytes=512 * MiB,
                   reps=r, unroll=u, blocks=blocks, threads=threads, loops=loops)
        for mode in ("read", "write"):
            record("sm", f"sm bidir {mode}", copies.peer_bidir, a=a, b=b, mode=mode, mechanism="sm", nbytes=512 * MiB,
                   reps=r, unroll=8, blocks=132, threads=1024, loops=8)
    if "tma" in sections:
        for mode, chunk, stages, blocks, loops in itertools.product(("read", "write"), (16384, 32768), (2, 4),
                                                                    (132, 264), (1, 8)):
            record("tma", f"tma {mode}", copies.peer_copy, src=a, dst=b, mode=mode, mechanism="tma", nbytes=512 * MiB,
                   reps=r, chunk=chunk, stages=stages, blocks=blocks, loops=loops)
    if "host" in sections:
        for d, size in itertools.product(("h2d", "d2h"), (256 * MiB, 512 * MiB, GiB)):
            record("host", f"{d} pinned", copies.host_copy, gpu=a, direction=d, nbytes=size, reps=r)
        record("host", "bidir", copies.host_bidir, gpu=a, nbytes=512 * MiB, reps=r)
    if "hostflags" in sections:  # page-locked memory without the mapped/portable flags
        from linkroof.microbench import cuda

        saved = cuda.PinnedHost.FLAGS
        cuda.PinnedHost.FLAGS = 0
        for d, size in itertools.product(("h2d", "d2h"), (512 * MiB, GiB)):
            record("hostflags", f"{d} pinned default flags", copies.host_copy, gpu=a, direction=d, nbytes=size, reps=r)
        cuda.PinnedHost.FLAGS = saved
        for d in ("h2d", "d2h"):
            record("hostflags", f"{d} pinned 2 GiB", copies.host_copy, gpu=a, direction=d, nbytes=2 * GiB, reps=r)
    if "h2dplace" in sections:  # is H2D variation per buffer (placement) or over time (noise)?
        import statistics

        from linkroof.microbench import cuda
        from linkroof.microbench.buffers import DeviceBuffer
        from linkroof.microbench.timing import Lane, time_lanes

        cupy = cuda.cp()
        rt = cupy.cuda.runtime
        n = 512 * MiB
        bufs = [cuda.PinnedHost(n) for _ in range(4)]
        for hb in bufs[:2]:
            hb.numpy("uint32")[:] = 7  # CPU-touched
        dev = DeviceBuffer(a, n)
        for rnd in range(3):
            for i, hb in enumerate(bufs):
                for kind, (dst, src, k) in {"h2d": (dev.ptr, hb.ptr, rt.memcpyHostToDevice),
                                            "d2h": (hb.ptr, dev.ptr, rt.memcpyDeviceToHost)}.items():
                    ts = time_lanes([Lane(a, lambda s, dst=dst, src=src, k=k: rt.memcpyAsync(dst, src, n, k, s.ptr))], 10)[0]
                    bws = [n / t / 1e9 for t in ts]
                    row = {"section": "h2dplace", "label": f"{kind} buf{i} round{rnd}", "median": statistics.median(bws),
                           "min": min(bws), "max": max(bws), "cpu_touched": i < 2}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    if "local" in sections:
        for size in (512 * MiB, GiB, 2 * GiB):
            record("local", "ce local", copies.local_copy, gpu=a, mechanism="ce", nbytes=size, reps=r)
        record("local", "sm local", copies.local_copy, gpu=a, mechanism="sm", nbytes=GiB, reps=r, loops=4, blocks=528)
    if "latency" in sections:
        for sms in (33, 132):
            record("latency", f"peer {sms} SMs", latency.pointer_chase, runner=a, where="peer", target=b, sms=sms)
            record("latency", f"host {sms} SMs", latency.pointer_chase, runner=a, where="host", sms=sms)
        record("latency", "local 2M", latency.pointer_chase, runner=a, where="local")
        record("latency", "ce rt", latency.ce_roundtrip, src=a, dst=b)
        record("latency", "tma rt", latency.tma_roundtrip, runner=a, target=b)
    if "gemm" in sections:
        for dist in ("uniform", "normal"):
            record("gemm", f"fp16 {dist}", compute.gemm, dev=a, dtype="fp16", reps=20, dist=dist, warmup=10)
        for dt in ("bf16", "tf32", "fp32", "fp64"):
            record("gemm", dt, compute.gemm, dev=a, dtype=dt, reps=10)
        record("gemm", "fma", compute.fma_peak, dev=a)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)
    print("\nbest verified per label:", file=sys.stderr)
    labels = dict.fromkeys(r["label"] for r in rows)
    for label in labels:
        ok = [x for x in rows if x["label"] == label and x.get("verified")]
        key = "TFLOPs" if ok and "TFLOPs" in ok[0] else ("GBps" if ok and "GBps" in ok[0] else "ns")
        if ok:
            best = (min if key == "ns" else max)(ok, key=lambda x: x[key])
            print(f"  {label:16s} {key} {best[key]:9.2f}  {best['name']} {best['params']}", file=sys.stderr)


if __name__ == "__main__":
    main()
