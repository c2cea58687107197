"""GEMM + reduce-scatter done naively (cuBLAS, then NCCL), row-parallel: each rank
multiplies A [M, K/ranks] by B [K/ranks, N] into a partial C [M, N], and the partial
sums are reduce-scattered by rows, one rank per GPU:

    torchrun --nproc-per-node 2 -m linkroof compare examples/gemm_reduce_scatter_torch.py:gemm_reduce_scatter \\
        --inputs examples/gemm_reduce_scatter_torch.py:make_inputs --workload W.toml

M, N, K come from LINKROOF_EXAMPLE_MNK ("8192,8192,8192" by default); W.toml:
[workload] template = "gemm_reduce_scatter", m, n, k, dtype = "fp16", ranks = 2.
"""

import os

import torch
import torch.distributed as dist

M, N, K = (int(x) for x in os.environ.get("LINKROOF_EXAMPLE_MNK", "8192,8192,8192").split(","))


def make_inputs():
    rank = int(os.environ.get("LOCAL_RANK", 0))
    world = int(os.environ.get("WORLD_SIZE", 1))
    torch.cuda.set_device(rank)
    dev = f"cuda:{rank}"
    a = torch.rand(M, K // world, device=dev, dtype=torch.float16)
    b = torch.rand(K // world, N, device=dev, dtype=torch.float16)
    out = torch.empty(M // world, N, device=dev, dtype=torch.float16)
    return a, b, out


def gemm_reduce_scatter(a, b, out):
    dist.reduce_scatter_tensor(out, a @ b)
    return out
