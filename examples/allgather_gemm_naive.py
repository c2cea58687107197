"""All-gather + GEMM done naively (NCCL all-gather, then cuBLAS), tensor parallel over
the rows of A, one rank per GPU:

    torchrun --nproc-per-node 2 -m linkroof compare examples/allgather_gemm_naive.py:allgather_gemm \\
        --inputs examples/allgather_gemm_naive.py:make_inputs --workload examples/allgather_gemm.toml

`allgather_gemm_replicated` (inputs `make_inputs_replicated`) keeps B whole on every
rank, as in sequence-parallel layers. M, N, K come from LINKROOF_EXAMPLE_MNK
("8192,8192,8192" by default).
"""

import os

import torch
import torch.distributed as dist

M, N, K = (int(x) for x in os.environ.get("LINKROOF_EXAMPLE_MNK", "8192,8192,8192").split(","))


def _setup():
    rank = int(os.environ.get("LOCAL_RANK", 0))
    world = int(os.environ.get("WORLD_SIZE", 1))
    torch.cuda.set_device(rank)
    return f"cuda:{rank}", world


def make_inputs():
    dev, world = _setup()
    a_shard = torch.rand(M // world, K, device=dev, dtype=torch.float16)
    b_shard = torch.rand(K, N // world, device=dev, dtype=torch.float16)
    a_full = torch.empty(M, K, device=dev, dtype=torch.float16)
    return a_shard, b_shard, a_full


def make_inputs_replicated():
    dev, world = _setup()
    a_shard = torch.rand(M // world, K, device=dev, dtype=torch.float16)
    b = torch.rand(K, N, device=dev, dtype=torch.float16)
    a_full = torch.empty(M, K, device=dev, dtype=torch.float16)
    return a_shard, b, a_full


def allgather_gemm(a_shard, b_shard, a_full):
    dist.all_gather_into_tensor(a_full, a_shard)
    return a_full @ b_shard


def allgather_gemm_replicated(a_shard, b, a_full):
    dist.all_gather_into_tensor(a_full, a_shard)
    return a_full @ b
