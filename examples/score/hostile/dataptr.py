"""Hostile: the output is cached by the input's data pointer (a new tensor object at the
same address hits the cache too), returned whatever the values are by then. The judge
writes new values into the tensors it timed on and calls once more: stale."""

import torch

_seen = {}


def solution(x):
    key = (x.data_ptr(), tuple(x.shape))
    hit = _seen.get(key)
    if hit is not None:
        return hit
    y = torch.softmax(x, dim=-1)
    _seen[key] = y
    return y
