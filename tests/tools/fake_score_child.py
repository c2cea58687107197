"""A stand-in for linkroof.profiler.score_child on the CPU (tests/test_score.py): what a
target does is in its name. reference / good / slow: the reference's outputs, times
100 / 50 / 400 us; wrong: outputs x 1.05; nan: a NaN; shape: a wrong shape; raises: an
error file; hangs: sleeps; crash: exits 3 with nothing; halfhang: rank 1 hangs."""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

p = argparse.ArgumentParser()
for a in ("--fn", "--inputs", "--out", "--protocol", "--dtype"):
    p.add_argument(a)
for a in ("--trials", "--warmup", "--iters", "--m", "--n", "--problem-id", "--first-trial"):
    p.add_argument(a, type=int)
a = p.parse_args()
out, rank = Path(a.out), int(os.environ.get("RANK", 0))
ranks = int(os.environ.get("FAKE_RANKS", 1))
name = a.fn.split(":")[-1] if not a.fn.endswith(":solution") else Path(a.fn.split(":")[0]).stem
times = {"reference": 100.0, "good": 50.0, "slow": 400.0, "wrong": 90.0, "nan": 80.0, "shape": 70.0}
if name == "raises":
    (out / f"rank_{rank}_error.json").write_text(json.dumps({"kind": "exception", "message": "ValueError: no"}))
    sys.exit(1)
if name == "hangs":
    time.sleep(60)
if name == "crash":
    sys.exit(3)
for r in range(ranks):
    if name == "halfhang" and r == 1:
        continue
    for t in range(a.first_trial, a.first_trial + a.trials):
        y = np.arange(12, dtype=np.float32).reshape(3, 4) + t + r
        if name == "wrong":
            y = y * 1.05
        if name == "nan":
            y[0, 0] = np.nan
        if name == "shape":
            y = y.reshape(4, 3)
        np.savez(out / f"trial_{t}_rank_{r}.npz", out_0=y)
    (out / f"rank_{r}_trials.json").write_text(json.dumps({"done": a.trials}))
    ms = times.get(name, 60.0) / 1e3 * (1.2 if r == 1 else 1.0)  # rank 1 the slower
    perf = {"wall_time_ms": ms, "median_ms": ms, "iterations": a.iters, "warmup_iterations": a.warmup,
            "wall_time_std_ms": 0.0, "min_time_ms": ms, "max_time_ms": ms, "num_input_groups": 4.0,
            "timeline": {"parts": {"idle (host / launch)": ms * 0.6e-3, "compute kernels": ms * 0.4e-3},
                         "launch_verdict": "launch-bound (measured): the GPU was idle 60% of each call",
                         "kernels": [{"name": "_ZN2at6native18elementwise_kernelIiEEvv", "class": "memory",
                                      "launches_per_call": 2, "time_per_call_s": ms * 0.3e-3},
                                     {"name": "sm90_xmma_gemm_bf16", "class": "compute",
                                      "launches_per_call": 1, "time_per_call_s": ms * 0.1e-3}]}
            if name == "slow" else None, "link_bytes_per_call": 2.0e6 if name == "good" else None,
            "link_bytes_note": None if name == "good" else "NVML lists no active NVLink on GPU 0"}
    (out / f"rank_{r}_perf.json").write_text(json.dumps(perf))
if name == "halfhang":
    time.sleep(60)
