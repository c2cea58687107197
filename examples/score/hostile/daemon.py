"""Hostile: correct, and leaves two daemons behind at import (double fork, setsid; one
with an empty environment), each sleeping ten minutes."""

import os
import sys

import torch


def _daemon(clean):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            if clean:
                os.execve(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)"], {})
            import time

            time.sleep(600)
            os._exit(0)
        os._exit(0)


_daemon(False)
_daemon(True)


def solution(x):
    return torch.softmax(x, dim=-1)
