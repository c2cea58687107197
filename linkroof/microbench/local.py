"""Local HBM: read-only and write-only kernels (the copy itself is in copies.py)."""

from __future__ import annotations

import numpy as np

from ..schema import BenchSpec, Measurement
from .buffers import DeviceBuffer, new_seed
from .cuda import cp, launch, sm_count
from .timing import time_kernel

_XOR = None


def _xor_all(words):
    """XOR of every word of a CuPy uint32 array (CuPy has no bitwise_xor.reduce)."""
    global _XOR
    cupy = cp()
    if _XOR is None:
        _XOR = cupy.ReductionKernel("uint32 x", "uint32 y", "x", "a ^ b", "y = a", "0", "linkroof_xor_all")
    return _XOR(words)


READ = "bytes read (each byte of the buffer once)"
WRITTEN = "bytes written (each byte of the buffer once)"


def read_only(gpu: int, nbytes: int, reps: int, unroll: int = 8, blocks: int | None = None,
              threads: int = 512) -> list[Measurement]:
    """Every 16-byte word of an `nbytes` buffer read once (`unroll` loads in flight per
    thread; 4 blocks per SM unless `blocks`), checked by the XOR of what was read."""
    cupy = cp()
    buf = DeviceBuffer(gpu, nbytes)
    seed = new_seed()
    buf.fill(seed)
    blocks = blocks or sm_count(gpu) * 4
    with cupy.cuda.Device(gpu):
        out = cupy.zeros(1, dtype=cupy.uint32)

    def run(s):
        launch(gpu, f"read_v4<{unroll}>", blocks, threads, (np.uint64(buf.ptr), np.uint64(nbytes // 16), out), stream=s)

    times = time_kernel(gpu, run, reps)
    with cupy.cuda.Device(gpu):  # the timed runs XOR into `out` an even or odd number of times: check one clean run
        out.fill(0)
        launch(gpu, f"read_v4<{unroll}>", blocks, threads, (np.uint64(buf.ptr), np.uint64(nbytes // 16), out))
        got = int(out.get()[0])
        expected = int(_xor_all(buf.array[: nbytes // 4]).get())
    ok = got == expected
    spec = BenchSpec("local_read_bandwidth", "sm", "local_read", (gpu,), nbytes, reps,
                     params={"blocks": blocks, "threads": threads, "unroll": unroll})
    return [Measurement(spec=spec, times_s=tuple(times), bytes_per_rep=nbytes, bytes_convention=READ, verified=ok,
                        verification="XOR of every word read matches the buffer's" if ok
                        else f"XOR of words read {got:#x} != buffer's {expected:#x}")]


def write_only(gpu: int, nbytes: int, reps: int) -> list[Measurement]:
    buf = DeviceBuffer(gpu, nbytes)
    seed = new_seed()
    buf.poison()
    blocks, threads = sm_count(gpu) * 4, 512
    times = time_kernel(gpu, lambda s: launch(gpu, "write_pattern_v4", blocks, threads,
                                              (np.uint64(buf.ptr), np.uint64(nbytes // 16), np.uint32(seed)), stream=s), reps)
    check = buf.check(seed)
    spec = BenchSpec("local_write_bandwidth", "sm", "local_write", (gpu,), nbytes, reps,
                     params={"blocks": blocks, "threads": threads})
    return [Measurement(spec=spec, times_s=tuple(times), bytes_per_rep=nbytes, bytes_convention=WRITTEN,
                        verified=check.ok, verification=check.text)]
