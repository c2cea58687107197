"""All-gather + GEMM done naively (NCCL all-gather, then cuBLAS), tensor parallel over
the rows of A, one rank per GPU:

    torchrun --nproc-per-node 2 -m linkroof compare examples/allgather_gemm_naive.py:allgather_gemm \\
        --inputs examples/allgather_gemm_naive.py:make_inputs --workload examples/allgather_gemm.toml
"""

import os

import torch
import torch.distributed as dist

M, N, K = 8192, 8192, 8192


def make_inputs():
    rank = int(os.environ.get("LOCAL_RANK", 0))
    world = int(os.environ.get("WORLD_SIZE", 1))
    torch.cuda.set_device(rank)
    dev = f"cuda:{rank}"
    a_shard = torch.rand(M // world, K, device=dev, dtype=torch.float16)
    b_shard = torch.rand(K, N // world, device=dev, dtype=torch.float16)
    a_full = torch.empty(M, K, device=dev, dtype=torch.float16)
    return a_shard, b_shard, a_full


def allgather_gemm(a_shard, b_shard, a_full):
    dist.all_gather_into_tensor(a_full, a_shard)
    return a_full @ b_shard
