"""Reference (ParallelKernelBench's problem 1, its style): a copy of the tensor summed
over all ranks with NCCL's all-reduce."""

import torch
import torch.distributed as dist


@torch.no_grad()
def solution(tensor):
    out = tensor.clone()
    dist.all_reduce(out, op=dist.ReduceOp.SUM)
    return out
