"""The same calls timed by torch.utils.benchmark, to hold `compare`'s ungated median to
(kind nvidia-h200): each program of examples/programs_torch.py, Timer.blocked_autorange's
median, printed as JSON lines.

    python3 benchmarks/torch_benchmark_check.py > $OUT/torch_benchmark.jsonl
"""

import importlib.util
import json
import os

import torch
import torch.utils.benchmark as tb

spec = importlib.util.spec_from_file_location("programs", "examples/programs_torch.py")
P = importlib.util.module_from_spec(spec)
spec.loader.exec_module(P)

cases = [("scale", P.scale, P.scale_inputs, {}), ("gemm8192", P.gemm, P.gemm_inputs, {}),
         ("chain", P.chain, P.chain_inputs, {}), ("layernorm", P.layernorm, P.layernorm_inputs, {})]
for name, fn, make, _ in cases:
    args = make()
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    m = tb.Timer(stmt="fn(*args)", globals={"fn": fn, "args": args}).blocked_autorange(min_run_time=1.0)
    print(json.dumps({"case": name, "median_s": m.median, "mean_s": m.mean, "runs": len(m.times)}), flush=True)
os.environ["LINKROOF_EXAMPLE_MNK"] = "1024"
P.MNK = 1024
args = P.gemm_inputs()
m = tb.Timer(stmt="fn(*args)", globals={"fn": P.gemm, "args": args}).blocked_autorange(min_run_time=1.0)
print(json.dumps({"case": "gemm1024", "median_s": m.median, "mean_s": m.mean, "runs": len(m.times)}), flush=True)
