"""The kernels of one call of a program of examples/programs_torch.py, for Nsight Compute
run by hand (the reference `compare --counters` is held to): warm-up, then CALLS calls
between cudaProfilerStart and Stop, nothing of linkroof imported.

    ncu --clock-control none --profile-from-start off --csv --page raw --print-units base \\
        --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \\
        python3 benchmarks/ncu_plain.py layernorm 5
"""

import importlib.util
import sys

import torch

spec = importlib.util.spec_from_file_location("programs", "examples/programs_torch.py")
P = importlib.util.module_from_spec(spec)
spec.loader.exec_module(P)
name, calls = sys.argv[1], int(sys.argv[2])
fn, args = getattr(P, name), getattr(P, name + "_inputs")()
for _ in range(3):
    fn(*args)
torch.cuda.synchronize()
torch.cuda.profiler.start()
for _ in range(calls):
    fn(*args)
torch.cuda.synchronize()
torch.cuda.profiler.stop()
