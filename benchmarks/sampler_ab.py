"""Does the NVML clock sampler's thread slow a host-bound call? The zoo's chain of 200
adds timed by compare's ungated loop with and without the sampler running, and by
torch.utils.benchmark, interleaved over five rounds (medians of each, microseconds)."""

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
import torch.utils.benchmark as tb  # noqa: E402

from linkroof.microbench.timing import time_calls  # noqa: E402
from linkroof.profiler.clocks import sampler  # noqa: E402
from linkroof.profiler.usercode import resolve  # noqa: E402

fn, make = resolve("examples/zoo/programs.py:chain"), resolve("examples/zoo/programs.py:chain_inputs")
x = make()
for _ in range(20):
    fn(*x)
torch.cuda.synchronize()
s = sampler(0)
res = {"without": [], "with": [], "torch": []}
for _ in range(5):
    res["without"].append(statistics.median(time_calls(lambda i: fn(*x), 50, "torch", min_batch_s=2e-3)))
    with s:
        res["with"].append(statistics.median(time_calls(lambda i: fn(*x), 50, "torch", min_batch_s=2e-3)))
    res["torch"].append(tb.Timer("fn(*x)", globals={"fn": fn, "x": x}).blocked_autorange(min_run_time=0.5).median)
print({k: [round(v * 1e6, 1) for v in vs] for k, vs in res.items()})
print("medians (us):", {k: round(statistics.median(v) * 1e6, 1) for k, v in res.items()})
