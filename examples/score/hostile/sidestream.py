"""Hostile: the softmax runs on a stream of its own; the caller's stream is never made
to wait for it, so events on the caller's stream time nothing."""

import torch

_side = None


def solution(x):
    global _side
    if _side is None:
        _side = torch.cuda.Stream()
    _side.wait_stream(torch.cuda.current_stream())  # its inputs are ready; the caller is never told
    with torch.cuda.stream(_side):
        y = torch.softmax(x, dim=-1)
    return y
