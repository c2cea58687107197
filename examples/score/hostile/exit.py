"""Hostile: ends the process at import, with status 0."""

import sys

sys.exit(0)


def solution(x):
    return x
