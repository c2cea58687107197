"""An all-reduce through torch.distributed (NCCL), one rank per GPU:

    torchrun --nproc-per-node 2 -m linkroof compare examples/allreduce_torch.py:all_reduce \\
        --inputs examples/allreduce_torch.py:make_inputs --workload examples/allreduce.toml

`all_reduce_clone` is the usual reference-style form (a copy, then the all-reduce in
place on it). The size comes from LINKROOF_EXAMPLE_BYTES (default 256 MiB).
"""

import os

import torch
import torch.distributed as dist

NBYTES = int(os.environ.get("LINKROOF_EXAMPLE_BYTES", 256 << 20))


def make_inputs():
    rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(rank)
    return (torch.full((NBYTES // 4,), float(rank + 1), device=f"cuda:{rank}"),)


def all_reduce(t):
    dist.all_reduce(t)
    return t


def all_reduce_clone(t):
    u = t.clone()
    dist.all_reduce(u)
    return u
