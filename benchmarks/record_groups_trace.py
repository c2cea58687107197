"""Real inputs for issue 42, item 9, on one GPU (kind nvidia-h200): a PyTorch profiler
trace of a program with several process groups (the default one and two named
sub-groups, `tp` and `dp`, each with its own sequence numbers), collectives issued the
c10d way and the functional (`_c10d_functional`) way, a side stream, and four profiled
steps; and the Flight Recorder dump NCCL's process groups keep for it (not a hang: the
ring as a healthy job leaves it). One rank, as NCCL puts one rank on a GPU.

    torchrun --nproc-per-node 1 benchmarks/record_groups_trace.py $OUT/groups

Writes DIR/trace_rank0.json.gz, DIR/fr_rank0.pickle (if this torch can dump it) and
DIR/record.json (torch and NCCL versions, what was issued per step).
"""

import json
import os
import sys

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile, schedule

out = sys.argv[1] if len(sys.argv) > 1 else "groups"
os.makedirs(out, exist_ok=True)
dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
rank, world = dist.get_rank(), dist.get_world_size()


def group(desc):
    try:
        return dist.new_group(ranks=list(range(world)), group_desc=desc)
    except TypeError:  # an older torch without group_desc
        return dist.new_group(ranks=list(range(world)))


tp, dp = group("tp"), group("dp")
try:
    import torch.distributed._functional_collectives as funcol
except ImportError:  # noqa: BLE001
    funcol = None
a = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16)
g = torch.randn(8 << 20, device="cuda")  # 32 MiB fp32
h = torch.randn(1 << 20, device="cuda", dtype=torch.bfloat16)  # 2 MiB bf16
gathered = torch.empty(world * h.numel(), device="cuda", dtype=torch.bfloat16)
side = torch.cuda.Stream()
issued = []


def step():
    calls = []
    y = a @ a
    dist.all_reduce(g)  # default group
    calls.append(("default", "all_reduce", g.numel() * 4))
    dist.all_reduce(h, group=tp)
    calls.append(("tp", "all_reduce", h.numel() * 2))
    dist.all_gather_into_tensor(gathered, h, group=tp)
    calls.append(("tp", "all_gather", h.numel() * 2))
    dist.broadcast(g[: 1 << 18], src=0, group=dp)
    calls.append(("dp", "broadcast", (1 << 18) * 4))
    if funcol is not None:
        r = funcol.all_reduce(g[: 1 << 20], "sum", dp)
        r = funcol.wait_tensor(r) if hasattr(funcol, "wait_tensor") else r
        calls.append(("dp", "_c10d_functional.all_reduce", (1 << 20) * 4))
    with torch.cuda.stream(side):
        dist.all_reduce(g[: 1 << 16], group=dp)
        calls.append(("dp", "all_reduce (side stream)", (1 << 16) * 4))
    torch.cuda.current_stream().wait_stream(side)
    return y, calls


for _ in range(3):
    step()
torch.cuda.synchronize()
trace = os.path.join(out, f"trace_rank{rank}.json.gz")
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
             schedule=schedule(wait=0, warmup=1, active=4), on_trace_ready=lambda p: p.export_chrome_trace(trace)) as prof:
    for i in range(5):
        _, calls = step()
        if i >= 1:
            issued.append(calls)
        torch.cuda.synchronize()
        prof.step()
fr = None
try:
    dump = torch._C._distributed_c10d._dump_nccl_trace()  # the pickle torchfrtrace reads
    fr = os.path.join(out, f"fr_rank{rank}.pickle")
    with open(fr, "wb") as f:
        f.write(dump)
except Exception as e:  # noqa: BLE001 - a torch without it, or a ring not kept
    print("no Flight Recorder dump:", type(e).__name__, e)
dist.destroy_process_group()
rec = dict(torch=torch.__version__, nccl=".".join(map(str, torch.cuda.nccl.version())),
           gpu=torch.cuda.get_device_name(0), world=world, trace=trace, flight_recorder=fr,
           issued_per_profiled_step=issued)
with open(os.path.join(out, "record.json"), "w") as f:
    json.dump(rec, f, indent=1)
print("wrote", trace, fr, "torch", torch.__version__, "nccl", rec["nccl"])
