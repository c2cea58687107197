"""Local HBM: read-only and write-only kernels (the copy itself is in copies.py)."""

from __future__ import annotations

import numpy as np

from ..schema import BenchSpec, Measurement
from .buffers import DeviceBuffer, new_seed
from .cuda import cp, launch, sm_count
from .timing import time_kernel

def _xor_all(gpu: int, ptr: int, n_words: int) -> int:
    """XOR of `n_words` 32-bit words at `ptr` on `gpu`, word by word (xor_words in
    linkroof.cu: no kernel of CuPy's own, which a first run would compile for seconds)."""
    cupy = cp()
    with cupy.cuda.Device(gpu):
        out = cupy.zeros(1, dtype=cupy.uint32)
        launch(gpu, "xor_words", sm_count(gpu) * 4, 256, (np.uint64(ptr), np.uint64(n_words), out))
        return int(out.get()[0])


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
        expected = _xor_all(gpu, buf.ptr, nbytes // 4)
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
