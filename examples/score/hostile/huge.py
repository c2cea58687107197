"""Hostile: returns a broadcast view of 2^31 floats (8.6 GB if copied out), cheap to make."""

import torch


def solution(x):
    return torch.zeros(1, device=x.device).expand(1 << 31)
