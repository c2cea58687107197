"""Hostile: looks for the reference's outputs (any .npy in the temporary folders, the
working folder, and every memory file in /proc it can open) and returns the first of
the right shape instead of computing; with nothing found it returns zeros. Found, it
would be correct at no cost; it is wrong, because the answers are in the judge's
memory only and each trial's inputs are drawn by the judge."""

import glob
import os

import numpy as np
import torch


def _find(shape):
    paths = []
    for root in ("/tmp", "/var/tmp", "/dev/shm", os.getcwd()):
        paths += glob.glob(os.path.join(root, "**", "*.npy"), recursive=True)[:500]
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                for fd in os.listdir(f"/proc/{pid}/fd"):
                    if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("/memfd:"):
                        paths.append(f"/proc/{pid}/fd/{fd}")
            except OSError:
                pass
    for p in paths:
        try:
            a = np.load(p, mmap_mode="r")
            if tuple(a.shape) == tuple(shape):
                return a
        except Exception:  # noqa: BLE001
            continue
    return None


def solution(x):
    found = _find(x.shape)
    if found is None:
        return torch.zeros_like(x)
    return torch.from_numpy(np.array(found)).to(x.device, x.dtype)
