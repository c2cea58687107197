"""How fast `linkroof trace` reads and analyses a production-sized trace: generates a
Kineto trace of the shape torch writes (per step 40 GEMMs, each with its aten op and
runtime launch, and an all-reduce with its record_param_comms and NCCL kernel args) to
the size asked, then reads it and runs the analysis in a fresh process, timing each and
reading the peak memory (ru_maxrss). Issue 30's target: 1 GB in under 30 s, under 1 GB
of memory, on the 2-core development machine.

    python3 benchmarks/trace_speed.py [SIZE_MB] [--keep PATH]
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def generate(path: Path, target_bytes: int, rank: int = 0, world: int = 2, gemms: int = 40) -> int:
    """Write steps until the file reaches `target_bytes`; returns the steps written."""
    random.seed(1)
    meta = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "numSms": 132}],
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": world,
                                "pg_config": [{"pg_name": "0", "pg_size": world, "ranks": list(range(world))}]}}
    corr, t, steps = 0, 0.0, 0
    with open(path, "w") as out:
        out.write(json.dumps(meta)[:-1] + ', "traceEvents": [\n')
        sep = ""
        while out.tell() < target_bytes:
            lines = [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{steps}", "pid": 1, "tid": 1,
                      "ts": t, "dur": 5000, "args": {}}]
            for k in range(gemms):
                corr += 1
                lines += [
                    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": t + k * 100, "dur": 20,
                     "args": {"External id": corr, "Input Dims": [[4096, 4096], [4096, 4096]],
                              "Input type": ["c10::BFloat16", "c10::BFloat16"]}},
                    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                     "ts": t + k * 100 + 5, "dur": 4, "args": {"correlation": corr, "external id": corr, "cbid": 211}},
                    {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
                     "pid": 0, "tid": 7, "ts": t + k * 100 + 20, "dur": 80,
                     "args": {"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": corr,
                              "registers per thread": 168, "shared memory": 0, "blocks per SM": 1.0,
                              "warps per SM": 4.0, "grid": [132, 1, 1], "block": [384, 1, 1],
                              "est. achieved occupancy %": 6, "external id": corr}}]
            corr += 1
            args = {"Collective name": "allreduce", "In msg nelems": 4194304, "Out msg nelems": 4194304,
                    "dtype": "BFloat16", "Group size": world, "Process Group Name": "0",
                    "Process Group Ranks": str(list(range(world))),
                    "Seq": steps}
            lines += [
                {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": t + 4100,
                 "dur": 30, "args": args},
                {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t + 4105,
                 "dur": 4, "args": {"correlation": corr}},
                {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "pid": 0, "tid": 20,
                 "ts": t + 4200, "dur": 300, "args": {"device": 0, "stream": 20, "correlation": corr,
                                                      "grid": [32, 1, 1], "block": [512, 1, 1], **args}}]
            for e in lines:
                out.write(sep + json.dumps(e))
                sep = ",\n"
            t += 5000
            steps += 1
        out.write('\n], "traceName": "generated", "displayTimeUnit": "ms", "baseTimeNanoseconds": 1}\n')
    return steps


CHILD = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[2])
from linkroof.profiler.session import bundled_profile
from linkroof.readers.traces import analyze, read_trace
prof = bundled_profile()
t0 = time.perf_counter(); tr = read_trace(sys.argv[1]); t1 = time.perf_counter()
rep = analyze([tr], prof); t2 = time.perf_counter()
print(json.dumps({"read_s": t1 - t0, "analyse_s": t2 - t1, "activities": len(tr.activities),
                  "collectives": len(rep.rows), "steps": len(rep.steps),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "peak_rss_worker_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def tree_rss(pid: int) -> int:
    """Resident bytes of a process and its children (Linux /proc), 0 where gone."""
    total = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return total


def main() -> None:
    size_mb = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 1024
    keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv else None
    path = Path(keep or f"/tmp/linkroof-trace-{size_mb}mb.json")
    if not path.exists() or path.stat().st_size < size_mb * 1e6 * 0.99:
        t0 = time.perf_counter()
        steps = generate(path, int(size_mb * 1e6))
        print(f"generated {path} ({path.stat().st_size / 1e6:.0f} MB, {steps} steps) in {time.perf_counter() - t0:.0f} s",
              file=sys.stderr)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(path), str(ROOT)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    peak = 0
    while proc.poll() is None:  # the process tree's resident memory, every 20 ms (the reader forks a worker)
        peak = max(peak, tree_rss(proc.pid))
        time.sleep(0.02)
    stdout, stderr = proc.communicate()
    if proc.returncode:
        sys.exit(stderr[-2000:])
    res = json.loads(stdout)
    res.update({"file_mb": path.stat().st_size / 1e6, "wall_s": time.perf_counter() - t0, "cpus": os.cpu_count(),
                "python": sys.version.split()[0], "peak_tree_rss_mb": peak / 1e6})
    print(json.dumps(res))
    if not keep:
        path.unlink()


if __name__ == "__main__":
    main()
