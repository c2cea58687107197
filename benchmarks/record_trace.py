"""A PyTorch profiler (Kineto) trace of a small training-like step on this GPU, as a
user's program makes one (kind nvidia-h200): per step a bf16 GEMM, a layer norm and
NCCL collectives over a one-rank process group (all-reduce, all-gather, reduce-scatter,
a coalesced pair), record_shapes on, three profiled steps after a warm-up. The file is
the format `linkroof trace` reads (tests/data/traces/).

    torchrun --nproc-per-node 1 benchmarks/record_trace.py $OUT/trace_rank0.json.gz
"""

import os
import sys

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile, schedule

out = sys.argv[1] if len(sys.argv) > 1 else "trace_rank0.json.gz"
dist.init_process_group("nccl")
rank = dist.get_rank()
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
x = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16)
g = torch.randn(16 << 20, device="cuda")  # 64 MiB fp32
w = dist.get_world_size()
gathered = torch.empty(w * g.numel(), device="cuda")
scattered = torch.empty(g.numel() // w, device="cuda")


def step():
    y = a @ b
    z = torch.nn.functional.layer_norm(x, (x.shape[-1],))
    dist.all_reduce(g)
    dist.all_gather_into_tensor(gathered, g)
    dist.reduce_scatter_tensor(scattered, g)
    if COALESCED:
        with dist._coalescing_manager(async_ops=True) as cm:  # a coalesced pair: no collective args on its kernel
            dist.all_reduce(g[: 1 << 20])
            dist.all_reduce(g[1 << 20: 2 << 20])
        cm.wait()
    return y, z


COALESCED = True
try:
    step()
except Exception as e:  # noqa: BLE001 - an older torch without the coalescing manager
    print("no coalesced pair:", type(e).__name__, e)
    COALESCED = False
for _ in range(3):
    step()
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
             schedule=schedule(wait=0, warmup=1, active=3), on_trace_ready=lambda p: p.export_chrome_trace(out)) as prof:
    for _ in range(4):
        step()
        torch.cuda.synchronize()
        prof.step()
dist.destroy_process_group()
print("wrote", out, "torch", torch.__version__, "nccl", torch.cuda.nccl.version())
