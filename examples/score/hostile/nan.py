"""Wrong: a NaN in its output."""

import torch


def solution(x):
    y = torch.softmax(x, dim=-1)
    y[0, 0] = float("nan")
    return y
