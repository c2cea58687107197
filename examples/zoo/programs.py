"""The zoo: programs written the way other people write GPU code (PyTorch, cuBLAS,
cuDNN, Triton, CuPy, torch.compile, CUDA graphs, several streams, host syncs), each
with its reference answer beside it in answers.toml. benchmarks/zoo.py runs every one
through `linkroof compare` (its time, timeline, host records, clock state, counters)
and through torch.utils.benchmark in one device call; tests/test_zoo.py checks the
analysis on their recorded timelines against the answers.

Each program is NAME(*NAME_inputs()). Sizes are set so the GPU, not the host, sets the
time, except where the host is the point (chains, syncs, host work).
"""

from __future__ import annotations

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
