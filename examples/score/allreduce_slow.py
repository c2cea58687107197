"""Correct and slow: every rank gathers every rank's whole tensor (world x the bytes of
a reduce-scatter + all-gather), then sums the copies in fp32 and casts back."""

import torch
import torch.distributed as dist


@torch.no_grad()
def solution(tensor):
    parts = [torch.empty_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, tensor)
    return torch.stack(parts).float().sum(dim=0).to(tensor.dtype)
