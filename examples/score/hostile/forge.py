"""Hostile: correct, and forges: result files where a harness once read them, then a
second report on the harness's own channel: the socket it finds among its process's
descriptors, written to without the key (there is no address or token to read back any
more: the judge connected the socket before the candidate's process started)."""

import json
import os
import socket
import struct
from pathlib import Path

import torch

_done = False


def _forge():
    fake = json.dumps({"wall_time_ms": 1e-6, "median_ms": 1e-6, "iterations": 100})
    for d in {Path.cwd(), Path(os.environ.get("XDG_DATA_HOME", "/tmp")), Path(os.environ.get("XDG_DATA_HOME", "/tmp")).parent}:
        try:
            (d / "rank_0_perf.json").write_text(fake)
        except OSError:
            pass
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                s = socket.socket(fileno=os.dup(int(fd)))
                body = json.dumps({"type": "perf", "bytes": len(fake), "mac": "0" * 64}).encode()
                s.sendall(struct.pack(">I", len(body)) + body + fake.encode())
        except OSError:
            pass


def solution(x):
    global _done
    if not _done:
        _done = True
        _forge()
    return torch.softmax(x, dim=-1)
