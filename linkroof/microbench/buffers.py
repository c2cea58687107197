"""Buffers that know how to prove a transfer happened: fill the source with a pattern
that changes every run, poison the destination, check it after.

Device buffers are checked completely on the GPU that owns them (a check kernel reads
every word). Host buffers are checked in NumPy: completely up to 64 MiB, sampled above
(every k-th word plus the first and last 4 KiB), and the verification text says which.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

import numpy as np

from .cuda import PinnedHost, cp, launch, sm_count

POISON = 0xDEADBEEF
FULL_HOST_CHECK_WORDS = 16 << 20  # 64 MiB
HOST_SAMPLES = 4 << 20


def new_seed() -> int:
    return secrets.randbits(32)


def pattern_words(index: np.ndarray, seed: int) -> np.ndarray:
    """The host twin of the kernels' pattern_word()."""
    i = index.astype(np.uint64)
    x = (i ^ (i >> np.uint64(32))).astype(np.uint32)
    with np.errstate(over="ignore"):
        x = x * np.uint32(2654435761) + np.uint32(seed)
        x ^= x >> np.uint32(16)
        x *= np.uint32(0x85EBCA6B)
        x ^= x >> np.uint32(13)
        x *= np.uint32(0xC2B2AE35)
        x ^= x >> np.uint32(16)
    return x


@dataclass
class Check:
    ok: bool
    text: str  # how it was checked and what was found


def _grid(dev: int) -> tuple[int, int]:
    return sm_count(dev) * 4, 256


class DeviceBuffer:
    def __init__(self, dev: int, nbytes: int):
        cupy = cp()
        self.dev, self.nbytes = dev, nbytes
        with cupy.cuda.Device(dev):
            self.array = cupy.empty(max(nbytes, 16) // 4, dtype=cupy.uint32)
        self.ptr = int(self.array.data.ptr)

    @property
    def words(self) -> int:
        return self.nbytes // 4

    def fill(self, seed: int, stream: Any = None) -> None:
        g, b = _grid(self.dev)
        launch(self.dev, "fill_pattern", g, b, (self.array, np.uint64(self.words), np.uint32(seed)), stream=stream)

    def poison(self, stream: Any = None) -> None:
        g, b = _grid(self.dev)
        launch(self.dev, "fill_value", g, b, (self.array, np.uint64(self.words), np.uint32(POISON)), stream=stream)

    def check(self, seed: int) -> Check:
        cupy = cp()
        with cupy.cuda.Device(self.dev):
            cupy.cuda.Device(self.dev).synchronize()
            bad = cupy.array([0, 2 ** 64 - 1], dtype=cupy.uint64)
            g, b = _grid(self.dev)
            launch(self.dev, "check_pattern", g, b,
                   (self.array, np.uint64(self.words), np.uint32(seed), bad[0:1], bad[1:2]))
            n_bad, first = (int(x) for x in bad.get())
        if n_bad:
            return Check(False, f"{n_bad} of {self.words} words wrong on GPU{self.dev}, first at byte {first * 4}")
        return Check(True, f"all {self.words} words checked on GPU{self.dev}")

    def free(self) -> None:
        self.array = None


def sorted_unique(idx: np.ndarray) -> np.ndarray:
    """np.unique for index arrays: sort, then drop repeats. (NumPy 2's np.unique hashes
    integers: 0.35 s for a million indices on the 2xH200 machine, most of a small
    benchmark's wall time.)"""
    idx = np.sort(idx)
    return idx[np.concatenate(([True], idx[1:] != idx[:-1]))] if len(idx) else idx


# Pinned host blocks kept for reuse between benchmarks, by size: page-locking 512 MiB
# took about 0.18 s on the 2xH200 machine and unlocking it 0.05 s, repeated by every
# host-link benchmark (2.5 s of the default suite's wall). At most PINNED_KEEP bytes.
PINNED_KEEP = 4 << 30
_PINNED: list[PinnedHost] = []


def _take_pinned(nbytes: int) -> PinnedHost:
    for i, mem in enumerate(_PINNED):
        if mem.nbytes == nbytes:
            return _PINNED.pop(i)
    return PinnedHost(nbytes)


def _give_pinned(mem: PinnedHost) -> None:
    _PINNED.append(mem)
    while sum(m.nbytes for m in _PINNED) > PINNED_KEEP:
        _PINNED.pop(0).free()


def release_pinned() -> None:
    """Unlock every kept pinned block (end of a run)."""
    while _PINNED:
        _PINNED.pop().free()


class HostBuffer:
    """Pinned (page-locked, mapped) or pageable host memory. Pinned blocks are reused
    between benchmarks (`release_pinned` hands them back); each use fills them anew."""

    def __init__(self, nbytes: int, pinned: bool):
        self.nbytes, self.pinned = nbytes, pinned
        if pinned:
            self.mem: PinnedHost | None = _take_pinned(max(nbytes, 16))
            self.view = self.mem.numpy("uint32")[: nbytes // 4]
            self.ptr = self.mem.ptr
        else:
            self.mem = None
            self.view = np.empty(max(nbytes, 16) // 4, dtype=np.uint32)[: nbytes // 4]
            self.ptr = int(self.view.ctypes.data)

    @property
    def words(self) -> int:
        return self.nbytes // 4

    def fill(self, seed: int, dev: int = 0) -> None:
        """Written by GPU `dev`: directly through the mapping when pinned, through a device
        staging buffer when pageable (NumPy would take seconds for large buffers)."""
        if self.pinned:
            g, b = _grid(dev)
            launch(dev, "fill_pattern", g, b, (np.uint64(self.ptr), np.uint64(self.words), np.uint32(seed)))
            cp().cuda.Device(dev).synchronize()
            return
        staging = DeviceBuffer(dev, self.nbytes)
        staging.fill(seed)
        rt = cp().cuda.runtime
        with cp().cuda.Device(dev):
            rt.memcpy(self.ptr, staging.ptr, self.nbytes, rt.memcpyDeviceToHost)
        staging.free()

    def poison(self) -> None:
        self.view[:] = POISON

    def check(self, seed: int) -> Check:
        n = self.words
        if n <= FULL_HOST_CHECK_WORDS:
            idx = np.arange(n, dtype=np.uint64)
            how = f"all {n} words checked on the host"
        else:
            step = max(1, n // HOST_SAMPLES)
            idx = sorted_unique(np.concatenate([np.arange(0, n, step, dtype=np.uint64),
                                                np.arange(0, 1024, dtype=np.uint64),
                                                np.arange(n - 1024, n, dtype=np.uint64)]))
            how = f"{len(idx)} of {n} words sampled on the host (every {step}th, plus both ends)"
        bad = np.count_nonzero(self.view[idx] != pattern_words(idx, seed))
        if bad:
            return Check(False, f"{bad} wrong words ({how})")
        return Check(True, how)

    def free(self) -> None:
        if self.mem is not None:
            _give_pinned(self.mem)
            self.mem = None
