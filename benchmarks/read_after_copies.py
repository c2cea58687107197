"""Why a read-only HBM figure can come out 10-15 % low (the bundled reference's GPU0:
3.93 TB/s against GPU1's 4.51; 3.89 on one H200 in a default-suite order): the read
kernel timed alone, after the local copies the suite runs before it, and again, with
the SM and memory clocks, power and NVML's throttle counters read around each step
(kind nvidia-h200):

    python3 benchmarks/read_after_copies.py --json $OUT/read_after_copies.json
"""

import argparse
import json
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", required=True)
    args = ap.parse_args()
    from linkroof.microbench import copies, local
    from linkroof.microbench.cuda import free_memory
    from linkroof.profiler.environment import gpu_states, throttle_counters
    from linkroof.profiler.recording import live_source

    g, GiB = 0, 1 << 30
    src = live_source()
    rows = []

    def state():
        s = gpu_states(src.nvml, 1)[0]
        return {"sm_mhz": s.sm_clock_mhz, "mem_mhz": s.memory_clock_mhz, "power_w": s.power_w,
                "temp_c": s.temperature_c}

    def step(what, fn):
        before, c0, t0 = state(), throttle_counters(src.nvml, 1)[0], time.perf_counter()
        ms = fn()
        wall = time.perf_counter() - t0
        after, c1 = state(), throttle_counters(src.nvml, 1)[0]
        free_memory()
        for m in ms:
            rows.append({"step": what, "name": m.spec.name, "mechanism": m.spec.mechanism,
                         "GBps": m.bandwidth_bytes_per_s / 1e9, "cv": m.cv, "verified": m.verified,
                         "first_ms": m.times_s[0] * 1e3, "last_ms": m.times_s[-1] * 1e3,
                         "before": before, "after": after, "wall_s": wall,
                         "throttled_ms": {k: (c1[k] - c0.get(k, c1[k])) * 1e-6 for k in c1}})
            r = rows[-1]
            print(f"{what:<44} {m.spec.name:<22} {m.spec.mechanism:<3} {r['GBps']:8.1f} GB/s cv {r['cv']:.4f} "
                  f"sm {before['sm_mhz']}->{after['sm_mhz']} MHz mem {after['mem_mhz']} power "
                  f"{before['power_w']}->{after['power_w']} W temp {after['temp_c']} "
                  f"throttled {sum(r['throttled_ms'].values()):.1f} ms", flush=True)

    read = lambda: local.read_only(g, GiB, 20)  # noqa: E731 - the suite's own call
    time.sleep(5)
    step("1 read, idle GPU", read)
    step("2 read again at once", read)
    step("3 CE local copy 2 GiB", lambda: copies.local_copy(g, "ce", 2 * GiB, 20))
    step("4 read right after the CE copy", read)
    step("5 SM local copy 1 GiB", lambda: copies.local_copy(g, "sm", GiB, 20, unroll=8, blocks=528, threads=512, loops=4))
    step("6 read right after the SM copy", read)
    step("7 read again", read)
    time.sleep(2)
    step("8 read after 2 s idle", read)
    step("9 write-only", lambda: local.write_only(g, GiB, 20))
    step("10 read after the write", read)
    time.sleep(5)
    step("11 read after 5 s idle", read)
    step("12 read, 100 repetitions", lambda: local.read_only(g, GiB, 100))
    src.close()
    with open(args.json, "w") as f:
        json.dump(rows, f, indent=1, default=str)


if __name__ == "__main__":
    main()
