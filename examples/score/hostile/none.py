"""Hostile: does the work and returns nothing."""

import torch


def solution(x):
    torch.softmax(x, dim=-1)
    return None
