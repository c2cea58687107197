"""What makes a small torch call's host cost grow inside `compare` (kind nvidia-h200): a
1024^3 bf16 GEMM timed as a user's loop (1000 calls, CUDA events around the loop) in one
process, plainly, then after each thing compare does first: CuPy on torch's stream,
NVML's counters opened, a CUPTI recording made and stopped, and rotating 16 input sets.

    PYTHONPATH=/tmp/cupti python3 benchmarks/host_cost_factors.py
"""

import json
import time

import torch


def loop(fn, sets, n=1000):
    for i in range(20):
        fn(*sets[i % len(sets)])
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0 = time.perf_counter()
    a.record()
    for i in range(n):
        fn(*sets[i % len(sets)])
    b.record()
    b.synchronize()
    return {"gpu_us": a.elapsed_time(b) * 1e3 / n, "host_us": (time.perf_counter() - t0) * 1e6 / n}


def gemm(x, y):
    return x @ y


one = [(torch.randn(1024, 1024, device="cuda").bfloat16(), torch.randn(1024, 1024, device="cuda").bfloat16())]
rows = [("plain", loop(gemm, one))]
import cupy  # noqa: E402

s = cupy.cuda.Stream.from_external(torch.cuda.current_stream()) if hasattr(cupy.cuda.Stream, "from_external") \
    else cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
e = cupy.cuda.Event()
e.record(s)
rows.append(("after CuPy on torch's stream", loop(gemm, one)))
from linkroof.profiler.counters import NvmlCounters  # noqa: E402

c = NvmlCounters([0], {0: 0})
c.read()
rows.append(("after NVML counters", loop(gemm, one)))
sets = one + [(torch.randn(1024, 1024, device="cuda").bfloat16(), torch.randn(1024, 1024, device="cuda").bfloat16())
              for _ in range(15)]
rows.append(("16 input sets", loop(gemm, sets)))
try:
    from linkroof.profiler import cupti as lc

    lc.record(5, lambda i: gemm(*one[0]), torch.cuda.synchronize)
    rows.append(("after a CUPTI recording", loop(gemm, one)))
    rows.append(("after a CUPTI recording, 16 sets", loop(gemm, sets)))
except Exception as ex:  # noqa: BLE001
    rows.append(("CUPTI failed", {"error": str(ex)}))
for name, r in rows:
    print(json.dumps({"step": name, **r}))
