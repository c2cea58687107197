"""What moves the cost model's launch term and the HBM read-only figure on one GPU
(kind nvidia-h200), with the SM clock and NVML's throttle counters read around each
step:

- launch: the empty-kernel figures (stream, CUDA graph) taken cold (the GPU idle for
  seconds first), again at once, and after the GPU was kept busy (clocks up), with 100
  and 1000 kernels per sample;
- HBM read-only: the read kernel at several block counts, unrolls and thread counts,
  cold and warm, against the write-only and copy figures of the same GPU.

    python3 benchmarks/one_gpu_terms_and_hbm.py --json $OUT/one_gpu.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", required=True)
    ap.add_argument("--gpu", type=int, default=0)
    args = ap.parse_args()
    g = args.gpu

    import cupy

    from linkroof.microbench import local, terms
    from linkroof.profiler.environment import throttle_counters
    from linkroof.profiler.nvml import CLOCK_SM
    from linkroof.profiler.recording import live_source

    src = live_source()
    nvml = src.nvml
    rows: list[dict] = []

    def clock() -> object:
        return nvml.get("clock", g, CLOCK_SM)

    def busy(seconds: float) -> None:
        """Keep the GPU busy (bf16 GEMMs) so its clocks are up."""
        with cupy.cuda.Device(g):
            a = cupy.random.standard_normal((8192, 8192), dtype=cupy.float32).astype(cupy.float16)
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < seconds:
                for _ in range(10):
                    a @ a
                cupy.cuda.Device().synchronize()

    def step(what: str, fn, **info) -> None:
        before_c, before_t = clock(), throttle_counters(nvml, g + 1).get(g, {})
        t0 = time.perf_counter()
        ms = fn()
        wall = time.perf_counter() - t0
        after_c, after_t = clock(), throttle_counters(nvml, g + 1).get(g, {})
        grew = {k: (v - before_t.get(k, v)) * 1e-9 for k, v in after_t.items()}
        for m in ms:
            rows.append({"step": what, **info, "name": m.spec.name, "pattern": m.spec.pattern,
                         "params": dict(m.spec.params), "median_s": m.median_s, "min_s": m.min_s, "cv": m.cv,
                         "bandwidth_GBps": m.bandwidth_bytes_per_s / 1e9 if m.bytes_per_rep else None,
                         "verified": m.verified, "sm_clock_before": str(before_c), "sm_clock_after": str(after_c),
                         "throttled_s": grew, "wall_s": wall, "counters_known": sorted(after_t)})

    # ---------------------------------------------------------------- launch
    time.sleep(5)
    step("launch cold (after 5 s idle)", lambda: terms.launch_costs(g), order=0)
    step("launch again at once", lambda: terms.launch_costs(g), order=1)
    step("launch again at once", lambda: terms.launch_costs(g), order=2)
    step("launch 1000 per sample", lambda: terms.launch_costs(g, per_batch=1000), order=3)
    busy(3.0)
    step("launch right after 3 s of GEMMs", lambda: terms.launch_costs(g), order=4)
    busy(3.0)
    step("launch 1000 per sample after GEMMs", lambda: terms.launch_costs(g, per_batch=1000), order=5)
    time.sleep(5)
    step("launch cold again", lambda: terms.launch_costs(g), order=6)

    # ---------------------------------------------------------------- HBM read
    size = 1 << 30
    time.sleep(5)
    step("read cold, default shape", lambda: local.read_only(g, size, 20), order=10)
    step("write, default shape", lambda: local.write_only(g, size, 20), order=11)
    sms = 132
    with cupy.cuda.Device(g):
        sms = int(cupy.cuda.runtime.getDeviceProperties(g)["multiProcessorCount"])
    for threads in (256, 512, 1024):
        for per_sm in (1, 2, 4, 8):
            if threads * per_sm > 2048:
                continue
            for unroll in (1, 2, 4, 8, 16):
                step("read shape", lambda: local.read_only(g, size, 10, unroll=unroll, blocks=sms * per_sm,
                                                            threads=threads),
                     blocks=sms * per_sm, threads=threads, unroll=unroll)
    busy(3.0)
    step("read warm, default shape", lambda: local.read_only(g, size, 20), order=12)
    step("read warm, 2 GiB", lambda: local.read_only(g, 2 * size, 20), order=13)
    src.close()

    with open(args.json, "w") as f:
        json.dump(rows, f, indent=1, default=str)
    # the short table last
    for r in rows:
        if r["name"] == "launch_latency" and r["pattern"] in ("graph", "stream"):
            print(f"{r['step']:<40} {r['pattern']:<7} per_batch {r['params'].get('launches_per_sample'):>5} "
                  f"median {r['median_s'] * 1e6:7.3f} us  min {r['min_s'] * 1e6:7.3f}  clock {r['sm_clock_before']}"
                  f"->{r['sm_clock_after']}  throttled {r['throttled_s']}")
    reads = [r for r in rows if r["name"] == "local_read_bandwidth"]
    best = max(reads, key=lambda r: r["bandwidth_GBps"])
    print(f"read: best {best['bandwidth_GBps']:.1f} GB/s at {best['params']}")
    for r in rows:
        if r["name"] in ("local_read_bandwidth", "local_write_bandwidth") and r["step"] != "read shape":
            print(f"{r['step']:<40} {r['bandwidth_GBps']:8.1f} GB/s cv {r['cv']:.4f} clock {r['sm_clock_before']}"
                  f"->{r['sm_clock_after']} throttled {r['throttled_s']} verified {r['verified']}")
    shape = sorted((r for r in reads if r["step"] == "read shape"), key=lambda r: -r["bandwidth_GBps"])
    print("read shapes, best 8 and worst 4:")
    for r in shape[:8] + shape[-4:]:
        print(f"  blocks {r['blocks']:>5} threads {r['threads']:>5} unroll {r['unroll']:>3}: "
              f"{r['bandwidth_GBps']:8.1f} GB/s  verified {r['verified']}")
    print("median of shape figures:", round(statistics.median(r["bandwidth_GBps"] for r in shape), 1))


if __name__ == "__main__":
    main()
