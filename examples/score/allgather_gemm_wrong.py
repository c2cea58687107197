"""Wrong: gathers the blocks in the wrong order (rank order reversed) and scales by 1.05."""

import torch
import torch.distributed as dist


@torch.no_grad()
def solution(a_local, b):
    parts = [torch.empty_like(a_local) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, a_local)
    return (torch.cat(parts[::-1], dim=1) @ b) * 1.05
