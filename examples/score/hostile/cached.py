"""Hostile: the output computed for an input tensor object is kept and returned again
for the same object (the timed loop calls with the same tensors), whatever their values
are by then."""

import weakref

import torch

_seen = weakref.WeakKeyDictionary()


def solution(x):
    y = _seen.get(x)
    if y is None:
        y = _seen[x] = torch.softmax(x, dim=-1)
    return y
