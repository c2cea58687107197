"""Reference: the row softmax of an fp16 matrix, PyTorch's kernel."""

import torch


def solution(x):
    return torch.softmax(x, dim=-1)
