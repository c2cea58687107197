"""An all-reduce through torch.distributed (NCCL), one rank per GPU:

    torchrun --nproc-per-node 2 -m linkroof compare examples/allreduce_torch.py:all_reduce \\
        --inputs examples/allreduce_torch.py:make_inputs --workload examples/allreduce.toml
"""

import os

import torch
import torch.distributed as dist

NBYTES = 256 << 20


def make_inputs():
    rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(rank)
    return (torch.full((NBYTES // 4,), float(rank + 1), device=f"cuda:{rank}"),)


def all_reduce(t):
    dist.all_reduce(t)
    return t
