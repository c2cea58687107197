"""Hostile: replaces the timer at import: every elapsed time reads as a microsecond."""

import torch

torch.cuda.Event.elapsed_time = lambda self, other: 0.001


def solution(x):
    return torch.softmax(x, dim=-1)
