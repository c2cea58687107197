"""Hostile: the output computed for an input tensor object is kept and returned again
for the same object (the timed loop calls with the same tensors), whatever their values
are by then."""

import torch

_seen = {}  # id(input) -> (the input, its output): the same object, not a new one at the same id


def solution(x):
    hit = _seen.get(id(x))
    if hit is not None and hit[0] is x:
        return hit[1]
    y = torch.softmax(x, dim=-1)
    _seen[id(x)] = (x, y)
    return y
