"""Compute peaks, the compute ceilings of the roofline: dense GEMM through cuBLAS per
data type (random inputs, result checked against float64 on a corner of C), and an
fp32 FMA kernel."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..schema import BenchSpec, Measurement
from ..units import format_flops
from .cuda import BenchError, cp, launch, sm_count
from .timing import stream, time_kernel

GEMM_DTYPES = ("fp16", "bf16", "tf32", "fp32", "fp64")
TOLERANCE = {"fp16": 1e-2, "bf16": 2e-2, "tf32": 5e-3, "fp32": 1e-4, "fp64": 1e-10}
NO_BYTES = "no bytes counted (compute)"

# cuBLAS / CUDA enums (library_types.h, cublas_api.h)
CUDA_R_32F, CUDA_R_16BF = 0, 14
CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_FAST_TF32 = 68, 77
CUBLAS_GEMM_DEFAULT = -1


KINDS = {"fp16": (0, "float16"), "bf16": (1, "uint16"), "tf32": (2, "float32"), "fp32": (2, "float32"),
         "fp64": (3, "float64")}  # fill_random's kind, and the array's dtype (bf16 kept as its bits)


def _inputs(n: int, dtype: str, seed: int, dist: str = "uniform") -> tuple:
    """Random inputs (never zeros): uniform in [0, 1) or standard normal, made on the GPU
    by fill_random (linkroof.cu), in the data type itself (bf16: fp32's top 16 bits)."""
    if dtype not in KINDS:
        raise BenchError(f"unknown GEMM data type {dtype!r}")
    cupy = cp()
    kind, name = KINDS[dtype]
    dev = cupy.cuda.Device().id
    out = []
    for which in (0, 1):
        x = cupy.empty((n, n), dtype=name)
        launch(dev, "fill_random", sm_count(dev) * 4, 256, (x, np.uint64(n * n), np.uint64(2 * seed + which),
                                                            np.int32(kind), np.int32(dist == "normal")))
        out.append(x)
    return tuple(out)


def as_f64(x: np.ndarray, dtype: str) -> np.ndarray:
    """Host values in float64: bf16 from its bits (the top 16 of an fp32)."""
    if dtype == "bf16":
        return (x.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    return x.astype(np.float64)


def _block(x: Any, rows: int, cols: int) -> np.ndarray:
    """x[:rows, :cols] of a row-major CuPy matrix copied to the host (one 2-D copy, no kernel)."""
    cupy = cp()
    out = np.empty((rows, cols), dtype=x.dtype)
    rt = cupy.cuda.runtime
    item = x.dtype.itemsize
    rt.memcpy2D(out.ctypes.data, cols * item, x.data.ptr, x.shape[1] * item, cols * item, rows,
                rt.memcpyDeviceToHost)
    return out


def _gemm_ex(a, b, c, n: int, data_type: int, compute_type: int) -> None:
    """Row-major C = A @ B through cublasGemmEx (column-major: C^T = B^T A^T)."""
    cupy = cp()
    from cupy_backends.cuda.libs import cublas

    handle = cupy.cuda.device.get_cublas_handle()
    alpha = np.array([1.0], dtype=np.float32)
    beta = np.array([0.0], dtype=np.float32)
    cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
    cublas.gemmEx(handle, 0, 0, n, n, n, alpha.ctypes.data, b.data.ptr, data_type, n, a.data.ptr, data_type, n,
                  beta.ctypes.data, c.data.ptr, data_type if data_type != CUDA_R_16BF else CUDA_R_16BF, n,
                  compute_type, CUBLAS_GEMM_DEFAULT)


def gemm_setup(dev: int, dtype: str, n: int = 8192, seed: int = 7, dist: str = "uniform") -> tuple:
    """Inputs on `dev` and (run(stream): one n^3 GEMM through cuBLAS on that stream,
    check(): (ok, how) of C's corner against float64)."""
    cupy = cp()
    with cupy.cuda.Device(dev):
        a, b = _inputs(n, dtype, seed, dist)
        c = cupy.empty_like(a)
        # the inputs are written on CuPy's default stream; the GEMMs run on the timing
        # streams (non-blocking: no implicit order with it): wait for the inputs first
        cupy.cuda.Device(dev).synchronize()
    if dtype in ("fp16", "fp32", "fp64"):
        def run(stream):
            with cupy.cuda.Device(dev), stream:
                cupy.matmul(a, b, out=c)
    else:
        dt, ct = (CUDA_R_16BF, CUBLAS_COMPUTE_32F) if dtype == "bf16" else (CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32)

        def run(stream):
            from cupy_backends.cuda.libs import cublas

            with cupy.cuda.Device(dev), stream:  # CuPy binds its cuBLAS handle to the current stream
                handle = cupy.cuda.device.get_cublas_handle()
                cublas.setStream(handle, stream.ptr)
                _gemm_ex(a, b, c, n, dt, ct)

    def check() -> tuple[bool, str]:
        corner = 64
        with cupy.cuda.Device(dev):
            cupy.cuda.Device(dev).synchronize()  # every timed GEMM has finished writing C
            # C's corner against float64 on the host: A's first rows, B's first columns
            # and C's corner copied back (no kernel of CuPy's own to compile on a first run)
            ref = as_f64(_block(a, corner, n), dtype) @ as_f64(_block(b, n, corner), dtype)
            got = as_f64(_block(c, corner, corner), dtype)
        err = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
        ok = err < TOLERANCE[dtype]
        return ok, (f"C[:{corner},:{corner}] vs float64 ({dist} inputs): relative error {err:.2e} "
                    f"({'within' if ok else 'above'} {TOLERANCE[dtype]:.0e})")

    return run, check


def gemm(dev: int, dtype: str, n: int = 8192, reps: int = 10, seed: int = 7, dist: str = "uniform",
         warmup: int = 3) -> Measurement:
    run, check = gemm_setup(dev, dtype, n, seed, dist)
    try:
        times = time_kernel(dev, run, reps, warmup=warmup)
    except (ImportError, AttributeError, TypeError) as e:
        raise BenchError(f"{dtype} GEMM is not reachable through this CuPy ({e})") from None
    ok, how = check()
    if dist != "normal":  # the same path checked with signed inputs too (a positive-only check can hide sign errors)
        run_s, check_s = gemm_setup(dev, dtype, 2048, seed + 1, "normal")
        run_s(stream(dev, 0))
        ok_s, how_s = check_s()
        ok, how = ok and ok_s, f"{how}; {how_s.replace('C[', 'a 2048^3 C[')}"
    rate = 2.0 * n ** 3 / sorted(times)[len(times) // 2]
    if rate > 5e15:  # no GPU of this decade: the work ran outside the timed stream
        raise BenchError(f"{dtype} GEMM timing implausible ({format_flops(rate, 0)}): the GEMM did not run on the "
                         "timed stream")
    spec = BenchSpec("gemm_throughput", "compute", "gemm", (dev,), 0, reps,
                     params={"dtype": dtype, "m": n, "n": n, "k": n, "library": "cuBLAS via CuPy", "inputs": dist})
    return Measurement(spec=spec, times_s=tuple(times), bytes_per_rep=0, bytes_convention=NO_BYTES, verified=ok,
                       verification=how, flops_per_rep=2.0 * n ** 3)


def fma_peak(dev: int, reps: int = 5, iters: int = 4000) -> Measurement:
    """fp32 FMA throughput: 8 dependent chains of 16 FMAs per loop per thread."""
    cupy = cp()
    a, b = np.float32(0.999), np.float32(0.001)
    blocks, threads = sm_count(dev) * 8, 256
    with cupy.cuda.Device(dev):
        sink = cupy.zeros(1, dtype=cupy.float32)
    times = time_kernel(dev, lambda s: launch(dev, "fma_peak", blocks, threads, (sink, np.uint32(iters), a, b),
                                              stream=s), reps)
    flops = 2.0 * 16 * 8 * iters * blocks * threads
    spec = BenchSpec("fma_throughput", "compute", "fma", (dev,), 0, reps,
                     params={"dtype": "fp32", "blocks": blocks, "threads": threads, "iters": iters})
    return Measurement(spec=spec, times_s=tuple(times), bytes_per_rep=0, bytes_convention=NO_BYTES, verified=True,
                       verification="synthetic register kernel: no data to check (timed with events)",
                       flops_per_rep=flops)
