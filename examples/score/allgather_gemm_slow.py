"""Correct and slow: the GEMM in fp32 (no bf16 tensor cores), cast back."""

import torch
import torch.distributed as dist


@torch.no_grad()
def solution(a_local, b):
    parts = [torch.empty_like(a_local) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, a_local)
    return (torch.cat(parts, dim=1).float() @ b.float()).to(torch.bfloat16)
