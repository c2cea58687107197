"""Correct and faster where one rank holds everything: the sum is the tensor itself, so
no collective and no copy kernel. On several ranks it is the reference (the caller's
tensor must not be overwritten, so the copy stays)."""

import torch
import torch.distributed as dist


@torch.no_grad()
def solution(tensor):
    if dist.get_world_size() == 1:
        return tensor
    out = tensor.clone()
    dist.all_reduce(out, op=dist.ReduceOp.SUM)
    return out
