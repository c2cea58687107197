"""Inputs for the scoring examples, as `linkroof score --inputs` calls them: (rank,
world_size, trial) -> the arguments, different for each trial and rank (seeded), in the
style of ParallelKernelBench's create_input_tensor. Sizes: M = N = 1024, K = 512, bf16
(PKB's default, where one rank's call is the host's launch); the _large ones M = N =
16384 (the all-gather + GEMM) and 8192 x 8192 (the all-reduce), where the GPU sets the
time."""

import torch

K = 512


def _gen(rank, trial, salt):
    g = torch.Generator(device="cuda")
    g.manual_seed(1000 * salt + 17 * rank + 7919 * trial)
    return g


def _allgather_gemm(m, n, rank, world_size, trial):
    g = _gen(rank, trial, 12)
    a_local = torch.randn((m, K // world_size), generator=g, device="cuda").to(torch.bfloat16)
    g_shared = _gen(0, trial, 120)  # B is the same on every rank
    b = torch.randn((K, n), generator=g_shared, device="cuda").to(torch.bfloat16)
    return a_local, b


def _allreduce(m, n, rank, trial):
    return (torch.randn((m, n), generator=_gen(rank, trial, 1), device="cuda").to(torch.bfloat16),)


def allgather_gemm_inputs(rank, world_size, trial):
    return _allgather_gemm(1024, 1024, rank, world_size, trial)


def allgather_gemm_inputs_large(rank, world_size, trial):
    return _allgather_gemm(16384, 16384, rank, world_size, trial)


def allreduce_inputs(rank, world_size, trial):
    return _allreduce(1024, 1024, rank, trial)


def allreduce_inputs_large(rank, world_size, trial):
    return _allreduce(8192, 8192, rank, trial)


def softmax_inputs(rank, world_size, trial):
    """One fp16 32768 x 4096 matrix (256 MiB): a row softmax reads it once and writes as much."""
    return ((torch.randn((32768, 4096), generator=_gen(rank, trial, 3), device="cuda") * 3).to(torch.float16),)
