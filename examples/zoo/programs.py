"""The zoo: programs written the way other people write GPU code (PyTorch, cuBLAS,
cuDNN, Triton, CuPy, torch.compile, CUDA graphs, several streams, host syncs), each
with its reference answer beside it in answers.toml (the first 28) or answers_new.toml
(issue 43's programs, written as a key before their code). benchmarks/zoo.py runs every one
through `linkroof compare` (its time, timeline, host records, clock state, counters)
and through torch.utils.benchmark in one device call; tests/test_zoo.py checks the
analysis on their recorded timelines against the answers.

Each program is NAME(*NAME_inputs()). Sizes are set so the GPU, not the host, sets the
time, except where the host is the point (chains, syncs, host work).
"""

from __future__ import annotations

import os
import random
import time

import torch

DEV = "cuda"
_SIDE: dict[str, torch.cuda.Stream] = {}


def _side() -> torch.cuda.Stream:
    if "s" not in _SIDE:
        _SIDE["s"] = torch.cuda.Stream()
    return _SIDE["s"]


def _rand(*shape, dtype=torch.bfloat16):
    return torch.randn(*shape, device=DEV, dtype=dtype)


# ---------------------------------------------------------------- cuBLAS / cuDNN

def gemm_bf16(a, b):
    return a @ b


def gemm_bf16_inputs():
    return _rand(8192, 8192), _rand(8192, 8192)


def gemm_small(a, b):
    return a @ b


def gemm_small_inputs():
    return _rand(1024, 1024), _rand(1024, 1024)


def gemm_fp8(a, b, sa, sb):
    return torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)


def gemm_fp8_inputs():
    a = _rand(8192, 8192).to(torch.float8_e4m3fn)
    b = _rand(8192, 8192).to(torch.float8_e4m3fn).t()  # column-major, as _scaled_mm wants
    one = torch.ones((), device=DEV, dtype=torch.float32)
    return a, b, one, one.clone()


def sdpa(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


def sdpa_inputs():
    return _rand(8, 32, 4096, 128), _rand(8, 32, 4096, 128), _rand(8, 32, 4096, 128)


def sdpa_cudnn(q, k, v):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


sdpa_cudnn_inputs = sdpa_inputs


def conv2d(x, w):
    return torch.nn.functional.conv2d(x, w, padding=1)


def conv2d_inputs():
    return _rand(64, 256, 56, 56).to(memory_format=torch.channels_last), \
        _rand(256, 256, 3, 3).to(memory_format=torch.channels_last)


# ---------------------------------------------------------------- memory-bound ATen

def layernorm(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b)


def layernorm_inputs():
    return _rand(16384, 8192), _rand(8192), _rand(8192)


def reduction(x):
    return x.sum(dim=1)


def reduction_inputs():
    return (_rand(65536, 4096, dtype=torch.float32),)


def transpose(x):
    return x.t().contiguous()


def transpose_inputs():
    return (_rand(16384, 16384, dtype=torch.float32),)


def strided(x):
    return x[:, ::16].contiguous()


def strided_inputs():
    return (_rand(8192, 65536, dtype=torch.float32),)


def copy_d2d(x, y):
    return y.copy_(x)


def copy_d2d_inputs():
    x = _rand(256 << 20, dtype=torch.float32)
    return x, torch.empty_like(x)


def chain(x):
    for _ in range(200):
        x = x + 1
    return x


def chain_inputs():
    return (_rand(1024, dtype=torch.float32),)


# ---------------------------------------------------------------- Triton, CuPy

_TRITON: dict = {}


def _triton_softmax():
    if "k" not in _TRITON:
        import triton
        import triton.language as tl

        @triton.jit
        def _k(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):  # named as a user names it: nothing in the name
            row = tl.program_id(0)
            cols = tl.arange(0, BLOCK)
            mask = cols < n_cols
            x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf")).to(tl.float32)
            x = x - tl.max(x, axis=0)
            e = tl.exp(x)
            tl.store(y_ptr + row * n_cols + cols, (e / tl.sum(e, axis=0)).to(tl.float16), mask=mask)

        _TRITON["k"] = _k
    return _TRITON["k"]


def triton_softmax(x):
    y = torch.empty_like(x)
    _triton_softmax()[(x.shape[0],)](x, y, x.shape[1], BLOCK=4096)
    return y


def triton_softmax_inputs():
    return (_rand(32768, 4096, dtype=torch.float16),)


_CUPY: dict = {}


def cupy_scale(x, y):
    import cupy

    if "k" not in _CUPY:
        _CUPY["k"] = cupy.RawKernel(r'''
extern "C" __global__ void scale_k(const float4* x, float4* y, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = x[i]; v.x *= 2.f; v.y *= 2.f; v.z *= 2.f; v.w *= 2.f; y[i] = v;
  }
}''', "scale_k")
    n = x.size // 4
    _CUPY["k"]((132 * 8,), (512,), (x, y, cupy.uint64(n)))
    return y


def cupy_scale_inputs():
    import cupy

    x = cupy.random.standard_normal(256 << 20, dtype=cupy.float32)
    return x, cupy.empty_like(x)


def cupy_elementwise(x, y):
    import cupy

    if "e" not in _CUPY:
        _CUPY["e"] = cupy.ElementwiseKernel("float32 x", "float32 y", "y = x * x + 1.0f", "square_plus_one")
    return _CUPY["e"](x, y)


cupy_elementwise_inputs = cupy_scale_inputs


# ---------------------------------------------------------------- several streams

def gemm_with_d2h(a, b, big, host):
    """A GEMM on the current stream, a 64 MiB copy to pinned host memory on a side
    stream beside it, joined before return: the copy is wholly overlapped."""
    cur = torch.cuda.current_stream()
    side = _side()
    side.wait_stream(cur)
    with torch.cuda.stream(side):
        host.copy_(big, non_blocking=True)
    c = a @ b
    cur.wait_stream(side)
    return c


def gemm_with_d2h_inputs():
    big = _rand(32 << 20)  # 64 MiB of bf16
    return _rand(8192, 8192), _rand(8192, 8192), big, torch.empty(big.shape, dtype=big.dtype, pin_memory=True)


def gemm_then_d2h(a, b, big, host):
    """The same work on one stream: the copy runs after the GEMM."""
    host.copy_(big, non_blocking=True)
    return a @ b


gemm_then_d2h_inputs = gemm_with_d2h_inputs


def two_gemms_two_streams(a, b, c, d):
    cur = torch.cuda.current_stream()
    side = _side()
    side.wait_stream(cur)
    with torch.cuda.stream(side):
        y = c @ d
    x = a @ b
    cur.wait_stream(side)
    return x, y


def two_gemms_two_streams_inputs():
    return _rand(4096, 4096), _rand(4096, 4096), _rand(4096, 4096), _rand(4096, 4096)


def h2d_copy(host, dev):
    return dev.copy_(host, non_blocking=True)


def h2d_copy_inputs():
    host = torch.randn(64 << 20, dtype=torch.float32).pin_memory()  # 256 MiB
    return host, torch.empty(host.shape, device=DEV)


# ---------------------------------------------------------------- the host

def item_sync(x, y):
    """x.sum().item(), 2 ms of host work, then a kernel: host-bound by the sync."""
    s = x.sum().item()
    t = time.perf_counter()
    while time.perf_counter() - t < 2e-3:
        pass
    return y * s


def item_sync_inputs():
    return _rand(1 << 20, dtype=torch.float32), _rand(1 << 20, dtype=torch.float32)


def cpu_sync(x, w):
    """A GEMM, its result read back to the host with .cpu() each call, then 1 ms of host work."""
    y = (x @ w).cpu()
    t = time.perf_counter()
    while time.perf_counter() - t < 1e-3:
        pass
    return y


def cpu_sync_inputs():
    return _rand(1024, 1024), _rand(1024, 1024)


def synchronize_each(x):
    """A synchronize after every one of 20 small kernels."""
    for _ in range(20):
        x = x * 1.0001
        torch.cuda.synchronize()
    return x


def synchronize_each_inputs():
    return (_rand(1 << 16, dtype=torch.float32),)


def host_work(x):
    """990 us of host compute, then one kernel: host work, not launches."""
    t = time.perf_counter()
    while time.perf_counter() - t < 990e-6:
        pass
    return x * 2.0


def host_work_inputs():
    return (_rand(1 << 22, dtype=torch.float32),)


# ---------------------------------------------------------------- graphs, torch.compile

_GRAPHS: dict = {}


def graph_replay(x):
    """50 small kernels captured in one CUDA graph, replayed."""
    key = (x.data_ptr(), x.shape)
    if key not in _GRAPHS:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            y = x
            for _ in range(50):
                y = y * 1.0001
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            y = x
            for _ in range(50):
                y = y * 1.0001
        _GRAPHS[key] = (g, y)
    g, y = _GRAPHS[key]
    g.replay()
    return y


def graph_replay_inputs():
    return (_rand(1 << 20, dtype=torch.float32),)


def graph_replay_small(x):
    """50 tiny kernels (4096 floats) in one CUDA graph: the GPU's own gaps between a
    graph's kernels, not the host, set the pace."""
    return graph_replay(x)


def graph_replay_small_inputs():
    return (_rand(4096, dtype=torch.float32),)


def _fused(x):
    return torch.nn.functional.gelu(x * 1.5 + 0.5) * torch.sigmoid(x)


_COMPILED: dict = {}


def compiled(x):
    if "d" not in _COMPILED:
        _COMPILED["d"] = torch.compile(_fused)
    return _COMPILED["d"](x)


def compiled_inputs():
    return (_rand(64 << 20),)


def compiled_eager(x):
    return _fused(x)


compiled_eager_inputs = compiled_inputs


def compiled_graphs(x):
    if "r" not in _COMPILED:
        _COMPILED["r"] = torch.compile(_small_chain, mode="reduce-overhead")
    return _COMPILED["r"](x)


def _small_chain(x):
    for _ in range(30):
        x = torch.sin(x) * 1.01
    return x


def compiled_graphs_inputs():
    return (_rand(1 << 16, dtype=torch.float32),)


# ================================================================ issue 43: a zoo twice as wide
# The programs below were written after their answers (examples/zoo/answers_new.toml, an
# earlier commit). Each is one defect of issue 43 or one shape the first 28 lacked.

def _raw(key, src, name, **kw):
    """A CuPy RawKernel, compiled once."""
    import cupy

    if key not in _CUPY:
        _CUPY[key] = cupy.RawKernel(src, name, **kw)
    return _CUPY[key]


def _cupy_stream():
    import cupy

    return cupy.cuda.get_current_stream().ptr


# ---------------------------------------------------------------- user kernels: memory and compute

_STREAM_SRC = r'''
extern "C" __global__ void k_main(const float4* __restrict__ x, float4* __restrict__ y, float a, float b, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = x[i];
    v.x = a * v.x + b; v.y = a * v.y + b; v.z = a * v.z + b; v.w = a * v.w + b;
    y[i] = v;
  }
}'''


def raw_stream(x, y):
    """A RawKernel whose name says nothing, clearly memory-bound: 512 MiB in, 512 MiB out."""
    import numpy as np

    _raw("stream", _STREAM_SRC, "k_main")((132 * 8,), (512,),
                                          (x, y, np.float32(2.0), np.float32(1.0), np.uint64(x.size // 4)))
    return y


def raw_stream_inputs():
    import cupy

    x = cupy.random.standard_normal(128 << 20, dtype=cupy.float32)  # 512 MiB
    return x, cupy.empty_like(x)


_FMA_SRC = r'''
extern "C" __global__ void k_fma(float* out, float b, float c, int steps) {
  float a0 = threadIdx.x * 1e-3f, a1 = a0 + 0.1f, a2 = a0 + 0.2f, a3 = a0 + 0.3f;
  float a4 = a0 + 0.4f, a5 = a0 + 0.5f, a6 = a0 + 0.6f, a7 = a0 + 0.7f;
  for (int i = 0; i < steps; ++i) {
    a0 = fmaf(a0, b, c); a1 = fmaf(a1, b, c); a2 = fmaf(a2, b, c); a3 = fmaf(a3, b, c);
    a4 = fmaf(a4, b, c); a5 = fmaf(a5, b, c); a6 = fmaf(a6, b, c); a7 = fmaf(a7, b, c);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}'''


def raw_fma(out):
    """A RawKernel clearly compute-bound: 8 FMA chains of 16384 steps a thread, no reads."""
    import numpy as np

    _raw("fma", _FMA_SRC, "k_fma")((132 * 8,), (256,), (out, np.float32(0.999), np.float32(1e-3), np.int32(16384)))
    return out


def raw_fma_inputs():
    import cupy

    return (cupy.empty(132 * 8 * 256, dtype=cupy.float32),)


def _triton_user():
    if "vk" not in _TRITON:
        import triton
        import triton.language as tl

        @triton.jit
        def _vk(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)

        @triton.jit
        def _fk(x_ptr, y_ptr, n, steps, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            a = tl.load(x_ptr + offs, mask=m)
            for _ in range(steps):
                a = a * 0.999 + 0.001
            tl.store(y_ptr + offs, a, mask=m)

        _TRITON["vk"], _TRITON["fk"] = _vk, _fk
    return _TRITON["vk"], _TRITON["fk"]


def triton_add(x, y, z):
    """A Triton kernel named _vk, clearly memory-bound: z = x + y over 128 Mi floats."""
    n = x.numel()
    _triton_user()[0][((n + 4095) // 4096,)](x, y, z, n, BLOCK=4096)
    return z


def triton_add_inputs():
    x = _rand(128 << 20, dtype=torch.float32)
    return x, _rand(128 << 20, dtype=torch.float32), torch.empty_like(x)


def triton_fma(x, y):
    """A Triton kernel named _fk, clearly compute-bound: 4096 FMAs on each of 16 Mi floats."""
    n = x.numel()
    _triton_user()[1][((n + 1023) // 1024,)](x, y, n, 4096, BLOCK=1024)
    return y


def triton_fma_inputs():
    x = _rand(16 << 20, dtype=torch.float32)
    return x, torch.empty_like(x)


_SWEEP_SRC = r'''
extern "C" __global__ void k_sweep(const float* __restrict__ x, float* out, size_t n, int reps) {
  float acc = 0.f;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (int r = 0; r < reps; ++r)
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride)
      acc += __ldcg(x + i);  /* cached in L2 only: every sweep after the first hits L2 */
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}'''


def l2_reuse(x, out):
    """One 8 MiB buffer swept 256 times: L2-hit-heavy, a small working set."""
    import numpy as np

    _raw("sweep", _SWEEP_SRC, "k_sweep")((132 * 8,), (256,), (x, out, np.uint64(x.size), np.int32(256)))
    return out


def l2_reuse_inputs():
    import cupy

    return cupy.random.standard_normal(2 << 20, dtype=cupy.float32), cupy.empty(132 * 8 * 256, dtype=cupy.float32)


# ---------------------------------------------------------------- copies

def h2d_pageable(host, dev):
    """256 MiB from pageable host memory: staged by the driver through a pinned buffer."""
    return dev.copy_(host, non_blocking=True)


def h2d_pageable_inputs():
    host = torch.randn(64 << 20, dtype=torch.float32)  # 256 MiB, pageable (not pinned)
    return host, torch.empty(host.shape, device=DEV)


def h2d_pinned(host, dev):
    """The same 256 MiB from pinned host memory."""
    return dev.copy_(host, non_blocking=True)


def h2d_pinned_inputs():
    host = torch.randn(64 << 20, dtype=torch.float32).pin_memory()
    return host, torch.empty(host.shape, device=DEV)


def memcpy_only(x, y):
    """One device-to-device cudaMemcpyAsync of 512 MiB and nothing else: no kernel."""
    import cupy

    rt = cupy.cuda.runtime
    rt.memcpyAsync(y.data.ptr, x.data.ptr, x.nbytes, rt.memcpyDeviceToDevice, _cupy_stream())
    return y


memcpy_only_inputs = raw_stream_inputs


def side_copy_event(host, dev, w):
    """A 32 MiB host-to-device copy on a side stream feeds a GEMM through an event
    (cudaStreamWaitEvent): the copy and then the GEMM make the critical path."""
    cur = torch.cuda.current_stream()
    side = _side()
    side.wait_stream(cur)  # the last call's GEMM has read `dev` before it is overwritten
    with torch.cuda.stream(side):
        dev.copy_(host, non_blocking=True)
        ready = torch.cuda.Event()
        ready.record(side)
    cur.wait_event(ready)
    return dev @ w


def side_copy_event_inputs():
    host = torch.randn(4096, 4096, dtype=torch.bfloat16).pin_memory()  # 32 MiB
    return host, torch.empty(host.shape, dtype=host.dtype, device=DEV), _rand(4096, 4096)


_PRIO: dict = {}


def priority_copies(h_in, d_in, d_out, h_out):
    """64 MiB host-to-device on a high-priority stream beside 64 MiB device-to-host on a
    low-priority one: both directions of the link at once."""
    if not _PRIO:
        _PRIO["hi"], _PRIO["lo"] = torch.cuda.Stream(priority=-5), torch.cuda.Stream(priority=0)
    cur, hi, lo = torch.cuda.current_stream(), _PRIO["hi"], _PRIO["lo"]
    hi.wait_stream(cur)
    lo.wait_stream(cur)
    with torch.cuda.stream(hi):
        d_in.copy_(h_in, non_blocking=True)
    with torch.cuda.stream(lo):
        h_out.copy_(d_out, non_blocking=True)
    cur.wait_stream(hi)
    cur.wait_stream(lo)
    return d_in


def priority_copies_inputs():
    h_in = torch.randn(16 << 20, dtype=torch.float32).pin_memory()  # 64 MiB
    h_out = torch.empty(16 << 20, dtype=torch.float32, pin_memory=True)
    return h_in, torch.empty(h_in.shape, device=DEV), _rand(16 << 20, dtype=torch.float32), h_out


# ---------------------------------------------------------------- no limiter, atomics, caches

_WAIT_SRC = r'''
extern "C" __global__ void k_wait(long long cycles, int* flag) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) { }
  if (threadIdx.x == 0 && cycles < 0) *flag = 1;  /* never: keeps the loop from being dropped */
}'''


def spin(flag):
    """One warp spinning on clock64() for 2e6 cycles: no bytes, no FLOPs."""
    import numpy as np

    _raw("wait", _WAIT_SRC, "k_wait")((1,), (32,), (np.int64(2_000_000), flag))
    return flag


def spin_inputs():
    import cupy

    return (cupy.zeros(1, dtype=cupy.int32),)


_BUMP_SRC = r'''
extern "C" __global__ void k_bump(float* acc, unsigned int mask, int per_thread) {
  unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
  for (int i = 0; i < per_thread; ++i)
    atomicAdd(&acc[(t + i * 7919u) & mask], 1.0f);
}'''


def atomics_contended(acc):
    """17.3 M float atomicAdds onto 4 addresses: contended atomics set the time."""
    import numpy as np

    _raw("bump", _BUMP_SRC, "k_bump")((132 * 8,), (256,), (acc, np.uint32(3), np.int32(64)))
    return acc


def atomics_contended_inputs():
    import cupy

    return (cupy.zeros(4, dtype=cupy.float32),)


def atomics_spread(acc):
    """The same atomics over 1 Mi addresses (4 MiB): the reference of atomics_contended."""
    import numpy as np

    _raw("bump", _BUMP_SRC, "k_bump")((132 * 8,), (256,), (acc, np.uint32((1 << 20) - 1), np.int32(64)))
    return acc


def atomics_spread_inputs():
    import cupy

    return (cupy.zeros(1 << 20, dtype=cupy.float32),)


_WALK_SRC = r'''
extern "C" __global__ void k_walk(const float* x, float* out, size_t n) {
  float acc = 0.f;
#pragma unroll 1
  for (size_t i = threadIdx.x; i < n; i += 32) acc += x[i];  /* one load in flight */
  out[threadIdx.x] = acc;
}'''


def one_warp_l2(x, out):
    """One warp sums 4 MiB (fits in L2): latency-bound; cold and warm L2 differ."""
    import numpy as np

    _raw("walk", _WALK_SRC, "k_walk")((1,), (32,), (x, out, np.uint64(x.size)))
    return out


def one_warp_l2_inputs():
    import cupy

    return cupy.random.standard_normal(1 << 20, dtype=cupy.float32), cupy.empty(32, dtype=cupy.float32)


# ---------------------------------------------------------------- the host

_JITTER = random.Random(43)


def host_jitter(x):
    """0.2-1.8 ms of host work (a new length each call), then one small kernel: the
    times spread while the GPU, nearly idle, keeps its clock."""
    t, d = time.perf_counter(), _JITTER.uniform(0.2e-3, 1.8e-3)
    while time.perf_counter() - t < d:
        pass
    return x * 2.0


def host_jitter_inputs():
    return (_rand(1 << 20, dtype=torch.float32),)


def scale_by_max(x):
    return x / x.abs().amax()


def scale_by_max_inputs():
    return (_rand(1 << 20, dtype=torch.float32),)


def scale_by_max_sync_ref(x):
    """The reference written as people write it: the max read back to the host."""
    return x / x.abs().amax().item()


scale_by_max_sync_ref_inputs = scale_by_max_inputs


def softmax_ref(x):
    """torch's softmax: the reference of triton_softmax."""
    return torch.softmax(x, dim=-1)


softmax_ref_inputs = triton_softmax_inputs


# ---------------------------------------------------------------- the clock

def gemm_capped(a, b, c):
    """Four 8192^3 bf16 GEMMs a call (~5.6 ms): long enough for the power cap to pull
    the SM clock down while the calls are timed."""
    for _ in range(4):
        torch.matmul(a, b, out=c)
    return c


def gemm_capped_inputs():
    return _rand(8192, 8192), _rand(8192, 8192), torch.empty(8192, 8192, device=DEV, dtype=torch.bfloat16)


# ---------------------------------------------------------------- launch shapes

_COOP_SRC = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void k_coop(const float* __restrict__ x, float* __restrict__ y, float* partial, size_t n) {
  cg::grid_group g = cg::this_grid();
  __shared__ float s[256];
  size_t stride = (size_t)gridDim.x * blockDim.x;
  float acc = 0.f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) acc += x[i];
  s[threadIdx.x] = acc;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
  g.sync();  /* every block's partial sum is written */
  if (threadIdx.x == 0) {
    float total = 0.f;
    for (unsigned int b = 0; b < gridDim.x; ++b) total += partial[b];
    s[0] = total;
  }
  __syncthreads();
  float inv = 1.f / (fabsf(s[0]) + 1.f);
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) y[i] = x[i] * inv;
}'''


def coop_grid_sync(x, y, partial):
    """A cooperative launch (264 blocks, all resident): sum, grid.sync(), scale by the sum."""
    import numpy as np

    k = _raw("coop", _COOP_SRC, "k_coop", enable_cooperative_groups=True)
    k((partial.size,), (256,), (x, y, partial, np.uint64(x.size)))
    return y


def coop_grid_sync_inputs():
    import cupy

    x = cupy.random.standard_normal(64 << 20, dtype=cupy.float32)  # 256 MiB
    return x, cupy.empty_like(x), cupy.empty(132 * 2, dtype=cupy.float32)


_PERSIST_SRC = r'''
extern "C" __global__ void k_persist(const float4* __restrict__ x, float4* __restrict__ y, unsigned int* next,
                                     unsigned int tiles) {
  /* one block per SM, 1024 threads, tiles of 4096 float4 (64 KiB) taken from a counter */
  __shared__ unsigned int t;
  while (true) {
    if (threadIdx.x == 0) t = atomicAdd(next, 1u);
    __syncthreads();
    unsigned int mine = t;
    __syncthreads();
    if (mine >= tiles) return;
    size_t base = (size_t)mine * 4096 + threadIdx.x;
    float4 v[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) v[k] = x[base + k * 1024];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      v[k].x *= 2.f; v[k].y *= 2.f; v[k].z *= 2.f; v[k].w *= 2.f;
      y[base + k * 1024] = v[k];
    }
  }
}'''


def persistent(x, y, counter):
    """A persistent kernel: one block per SM looping over 64 KiB tiles until 1 GiB is done."""
    import cupy
    import numpy as np

    cupy.cuda.runtime.memsetAsync(counter.data.ptr, 0, 4, _cupy_stream())
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    _raw("persist", _PERSIST_SRC, "k_persist")((sms,), (1024,), (x, y, counter, np.uint32(x.size // 16384)))
    return y


def persistent_inputs():
    import cupy

    x = cupy.random.standard_normal(256 << 20, dtype=cupy.float32)  # 1 GiB
    return x, cupy.empty_like(x), cupy.zeros(1, dtype=cupy.uint32)


_DP_SRC = r'''
extern "C" __global__ void k_child(const float* __restrict__ x, float* __restrict__ y, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.f * x[i];
}

extern "C" __global__ void k_parent(const float* x, float* y, size_t n) {
  size_t part = n / blockDim.x, off = threadIdx.x * part;
  k_child<<<(unsigned int)((part + 255) / 256), 256>>>(x + off, y + off, part);
}'''


def _dp_kernel():
    """The parent kernel, built once a process (the kernel and its inputs may be loaded as
    two modules: each builds its own): a failure to link the device runtime is said."""
    import cupy

    if "dp" not in _CUPY:
        try:
            _CUPY["dp"] = cupy.RawModule(code=_DP_SRC, options=("-rdc=true",)).get_function("k_parent")
        except Exception as e:  # noqa: BLE001 - any failure to build is the same gap
            raise RuntimeError(f"dynamic parallelism unavailable: CuPy could not build a kernel with -rdc=true (the "
                               f"device runtime, cudadevrt, must be linked): {type(e).__name__}: {e}") from e
    return _CUPY["dp"]


def dynamic_parallelism(x, y):
    """A parent kernel of 64 threads, each launching a child grid over its 1/64 (CDP)."""
    import numpy as np

    _dp_kernel()((1,), (64,), (x, y, np.uint64(x.size)))
    return y


def dynamic_parallelism_inputs():
    import cupy
    import numpy as np

    x = cupy.random.standard_normal(64 << 20, dtype=cupy.float32)  # 256 MiB
    y = cupy.empty_like(x)
    try:
        _dp_kernel()((1,), (64,), (x, y, np.uint64(x.size)))  # a first launch: a failure to launch is said here
        cupy.cuda.get_current_stream().synchronize()
    except RuntimeError:
        raise
    except Exception as e:  # noqa: BLE001 - a launch that fails is the same gap
        raise RuntimeError(f"dynamic parallelism unavailable: the -rdc=true kernel did not launch: "
                           f"{type(e).__name__}: {e}") from e
    return x, y


# ---------------------------------------------------------------- tensor cores and CUDA cores

def _fp32_matmul(a, b, tf32):
    m = torch.backends.cuda.matmul
    old = m.allow_tf32
    m.allow_tf32 = tf32
    try:
        return a @ b
    finally:
        m.allow_tf32 = old


def gemm_tf32(a, b):
    """4096^3 fp32 matmul with TF32 allowed: tensor cores."""
    return _fp32_matmul(a, b, True)


def gemm_tf32_inputs():
    return _rand(4096, 4096, dtype=torch.float32), _rand(4096, 4096, dtype=torch.float32)


def gemm_fp32(a, b):
    """The same with TF32 off: cuBLAS's fp32 kernel on the CUDA cores."""
    return _fp32_matmul(a, b, False)


gemm_fp32_inputs = gemm_tf32_inputs


_SGEMM_SRC = r'''
#define BM 64
#define BN 64
#define BK 16
extern "C" __global__ void sgemm_tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                       int M, int N, int K) {
  /* 64 x 64 tile a block of 256 threads, 4 x 4 outputs a thread; M, N multiples of 64, K of 16 */
  __shared__ float As[BK][BM];
  __shared__ float Bs[BK][BN];
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.f;
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int l = threadIdx.x; l < BM * BK; l += 256) {
      int m = l / BK, k = l % BK;
      As[k][m] = A[(size_t)(row0 + m) * K + k0 + k];
    }
    for (int l = threadIdx.x; l < BK * BN; l += 256) {
      int k = l / BN, n = l % BN;
      Bs[k][n] = B[(size_t)(k0 + k) * N + col0 + n];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) { a[i] = As[k][ty * 4 + i]; b[i] = Bs[k][tx * 4 + i]; }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) C[(size_t)(row0 + ty * 4 + i) * N + col0 + tx * 4 + j] = acc[i][j];
}'''


def gemm_fp32_raw(a, b, c):
    """The same op as a hand-written CUDA-core RawKernel: no tensor cores."""
    import numpy as np

    m, k = a.shape
    n = b.shape[1]
    _raw("sgemm", _SGEMM_SRC, "sgemm_tiled")((n // 64, m // 64), (256,),
                                             (a, b, c, np.int32(m), np.int32(n), np.int32(k)))
    return c


def gemm_fp32_raw_inputs():
    import cupy

    a = cupy.random.standard_normal((4096, 4096), dtype=cupy.float32)
    return a, cupy.random.standard_normal((4096, 4096), dtype=cupy.float32), cupy.empty_like(a)


# ---------------------------------------------------------------- torch.compile, NCCL

def _layers(x, ws, bs):
    for w, b in zip(ws, bs):
        x = torch.relu(x @ w + b) * 0.5
    return x


def _layers_graphed(x, ws, bs):  # its own code object: compiled in its own mode
    return _layers(x, ws, bs)


def compiled_many(x, ws, bs):
    """torch.compile (default) of 12 tiny layers: ~24 small kernels a call."""
    if "m" not in _COMPILED:
        _COMPILED["m"] = torch.compile(_layers)
    return _COMPILED["m"](x, ws, bs)


def compiled_many_inputs():
    return _rand(32, 128), [_rand(128, 128) * 0.1 for _ in range(12)], [_rand(128) for _ in range(12)]


def compiled_many_graphs(x, ws, bs):
    """The same with mode='reduce-overhead': one CUDA graph replay a call."""
    if "mg" not in _COMPILED:
        _COMPILED["mg"] = torch.compile(_layers_graphed, mode="reduce-overhead")
    return _COMPILED["mg"](x, ws, bs)


compiled_many_graphs_inputs = compiled_many_inputs


def nccl_one_rank(x):
    """An all_reduce (average) on a one-rank NCCL communicator."""
    import torch.distributed as dist

    dist.all_reduce(x, op=dist.ReduceOp.AVG)
    return x


def nccl_one_rank_inputs():
    import tempfile

    import torch.distributed as dist

    if not dist.is_initialized():
        store = dist.FileStore(os.path.join(tempfile.mkdtemp(prefix="zoo_nccl_"), "store"), 1)
        try:  # the communicator made now (eagerly), not in the first timed call
            dist.init_process_group("nccl", store=store, rank=0, world_size=1,
                                    device_id=torch.device(DEV, torch.cuda.current_device()))
        except TypeError:  # a torch without device_id
            dist.init_process_group("nccl", store=store, rank=0, world_size=1)
    return (_rand(64 << 20, dtype=torch.float32),)


# ---------------------------------------------------------------- managed memory

_TOUCH_SRC = r'''
extern "C" __global__ void k_touch(const float4* __restrict__ x, float* out, size_t n) {
  float acc = 0.f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v = x[i];
    acc += v.x + v.y + v.z + v.w;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}'''

_CPU = -1  # cudaCpuDeviceId
_ADVISE_READ_MOSTLY, _ADVISE_PREFERRED_LOCATION, _ADVISE_ACCESSED_BY = 1, 3, 5  # cudaMemoryAdvise


def _touch(x, out):
    import numpy as np

    _raw("touch", _TOUCH_SRC, "k_touch")((132 * 8,), (256,), (x, out, np.uint64(x.size // 4)))
    return out


def _managed_inputs():
    import cupy

    n = 64 << 20  # 256 MiB of float32
    x = cupy.ndarray((n,), cupy.float32, memptr=cupy.cuda.malloc_managed(n * 4))
    x[...] = 1.0
    return x, cupy.empty(132 * 8 * 256, dtype=cupy.float32)


def _to_host(x):
    """Every page of managed `x` moved to the host by a host write to it (CUDA 13's
    prefetch to the CPU takes a cudaMemLocation, which CuPy's wrapper does not build)."""
    import ctypes

    import cupy
    import numpy as np

    cupy.cuda.get_current_stream().synchronize()
    a = np.ctypeslib.as_array((ctypes.c_float * x.size).from_address(x.data.ptr))
    a[::1024] += 0.0  # one float a 4 KiB page: each page faults over to the host


def managed_no_prefetch(x, out):
    """256 MiB of managed memory moved to the host, then read by a kernel that faults it back."""
    _to_host(x)
    return _touch(x, out)


managed_no_prefetch_inputs = _managed_inputs


def managed_prefetch(x, out):
    """The same, prefetched back to the device before the kernel."""
    import cupy

    _to_host(x)
    cupy.cuda.runtime.memPrefetchAsync(x.data.ptr, x.nbytes, cupy.cuda.Device().id, _cupy_stream())
    return _touch(x, out)


managed_prefetch_inputs = _managed_inputs


def managed_advise(x, out):
    """Managed memory advised read-mostly, preferred on the GPU: each call only reads it."""
    return _touch(x, out)


def managed_advise_inputs():
    import cupy

    x, out = _managed_inputs()
    rt, dev = cupy.cuda.runtime, cupy.cuda.Device().id
    rt.memAdvise(x.data.ptr, x.nbytes, _ADVISE_READ_MOSTLY, dev)
    rt.memAdvise(x.data.ptr, x.nbytes, _ADVISE_PREFERRED_LOCATION, dev)
    # (advising the CPU as an accessor takes a cudaMemLocation of type host under CUDA 13: left out)
    rt.memPrefetchAsync(x.data.ptr, x.nbytes, dev, _cupy_stream())
    cupy.cuda.get_current_stream().synchronize()
    return x, out
