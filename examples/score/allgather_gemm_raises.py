"""Raises on its first call."""


def solution(a_local, b):
    raise NotImplementedError("this candidate gives up")
