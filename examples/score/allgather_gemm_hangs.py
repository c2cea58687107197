"""Hangs: rank 0 waits for a message nobody sends (one rank: forever)."""

import time

import torch


@torch.no_grad()
def solution(a_local, b):
    while True:
        time.sleep(0.5)
