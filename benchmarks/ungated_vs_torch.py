"""compare's ungated median against torch.utils.benchmark on the same call, in one
process, interleaved (kind nvidia-h200): the host's speed drifts by tens of percent
between processes and minutes (a 1024^3 GEMM loop read 14.5 us in one lease and 19.5 us
in the next), so the two are held to each other round by round. Each round: torch's
Timer.blocked_autorange (min_run_time 0.3 s), then linkroof's run_callable with what
compare gives it (NVML counters, the CUPTI recorder, the gated pass), then linkroof's
batches around the bare call (no wrapper: what the wrappers cost); three rounds (ROUNDS).
NVML's SM clock is read after each. JSON lines.

    PYTHONPATH=/tmp/cupti python3 benchmarks/ungated_vs_torch.py
"""

import importlib.util
import json
import os
import statistics

import torch
import torch.utils.benchmark as tb

from linkroof.microbench import timing
from linkroof.profiler import compare as C
from linkroof.profiler.counters import NvmlCounters

spec = importlib.util.spec_from_file_location("programs", "examples/programs_torch.py")
P = importlib.util.module_from_spec(spec)
spec.loader.exec_module(P)


def sm_clock():
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml.nvmlDeviceGetClockInfo(pynvml.nvmlDeviceGetHandleByIndex(0), pynvml.NVML_CLOCK_SM)
    except Exception:  # noqa: BLE001
        return None


cases = [("gemm1024", "gemm", {"LINKROOF_EXAMPLE_MNK": "1024"}), ("chain", "chain", {}),
         ("scale", "scale", {}), ("layernorm", "layernorm", {}), ("gemm8192", "gemm", {"LINKROOF_EXAMPLE_MNK": "8192"})]
counters = NvmlCounters([0], {0: 0})
for name, fn_name, env in cases:
    os.environ.update(env)
    P.MNK = int(os.environ.get("LINKROOF_EXAMPLE_MNK", 8192))
    fn, make = getattr(P, fn_name), getattr(P, fn_name + "_inputs")
    args = make()
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    rows = []
    for rnd in range(int(os.environ.get("ROUNDS", 3))):
        m = tb.Timer(stmt="fn(*args)", globals={"fn": fn, "args": args}).blocked_autorange(min_run_time=0.3)
        clk_tb = sm_clock()
        r = C.run_callable(name, fn, lambda: args, C.CudaTimer("torch"), counters, reps=50, warmup=10,
                           gated_timer=C.CudaTimer("torch", gated=True), recorder=C.CuptiRecorder())
        clk_lr = sm_clock()
        bare = statistics.median(timing._time_batches("torch", lambda: fn(*args), 50, C.MIN_BATCH_S))
        rows.append({"round": rnd, "torch_us": m.median * 1e6, "linkroof_us": r.median_s * 1e6, "bare_batches_us": bare * 1e6,
                     "gated_us": statistics.median(r.gated_times_s) * 1e6 if r.gated_times_s else None,
                     "diff_pct": 100 * (r.median_s / m.median - 1), "sm_mhz_after_torch": clk_tb,
                     "sm_mhz_after_linkroof": clk_lr, "timeline": r.timeline_note[:60]})
    tor, lr = statistics.median(x["torch_us"] for x in rows), statistics.median(x["linkroof_us"] for x in rows)
    print(json.dumps({"case": name, "torch_us": tor, "linkroof_us": lr, "diff_pct": 100 * (lr / tor - 1),
                      "rounds": rows}), flush=True)
