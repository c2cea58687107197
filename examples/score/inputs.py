"""Inputs for the scoring examples, as `linkroof score --inputs` calls them: (rank,
world_size, trial) -> the arguments, different for each trial and rank (seeded), in the
style of ParallelKernelBench's create_input_tensor. Sizes: M = N = 1024, K = 512, bf16."""

import torch

M, N, K = 1024, 1024, 512


def _gen(rank, trial, salt):
    g = torch.Generator(device="cuda")
    g.manual_seed(1000 * salt + 17 * rank + 7919 * trial)
    return g


def allgather_gemm_inputs(rank, world_size, trial):
    g = _gen(rank, trial, 12)
    k_local = K // world_size
    a_local = torch.randn((M, k_local), generator=g, device="cuda").to(torch.bfloat16)
    g_shared = _gen(0, trial, 120)  # B is the same on every rank
    b = torch.randn((K, N), generator=g_shared, device="cuda").to(torch.bfloat16)
    return a_local, b


def allreduce_inputs(rank, world_size, trial):
    return (torch.randn((M, N), generator=_gen(rank, trial, 1), device="cuda").to(torch.bfloat16),)
