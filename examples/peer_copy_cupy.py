"""A 1 GiB copy from GPU0 to GPU1, written with CuPy: the copy engine (`ce_copy`) and an
SM kernel (`sm_copy`, 16-byte vectors). Run on a machine with two GPUs:

    linkroof compare examples/peer_copy_cupy.py:ce_copy --inputs examples/peer_copy_cupy.py:make_inputs \\
        --reference examples/peer_copy_cupy.py:sm_copy --workload examples/peer_copy.toml
"""

import cupy

NBYTES = 1 << 30

_SM_COPY = cupy.RawKernel(r"""
extern "C" __global__ void sm_copy(const uint4* __restrict__ src, uint4* __restrict__ dst, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        dst[i] = src[i];
}
""", "sm_copy")


def make_inputs():
    with cupy.cuda.Device(0):
        try:
            cupy.cuda.runtime.deviceEnablePeerAccess(1)
        except cupy.cuda.runtime.CUDARuntimeError:
            pass  # already enabled
        src = cupy.random.default_rng().integers(0, 2 ** 31, NBYTES // 4, dtype=cupy.int32)
    with cupy.cuda.Device(1):
        dst = cupy.empty(NBYTES // 4, dtype=cupy.int32)
    cupy.cuda.Device(0).use()
    return src, dst


def ce_copy(src, dst):
    stream = cupy.cuda.get_current_stream()
    cupy.cuda.runtime.memcpyPeerAsync(dst.data.ptr, 1, src.data.ptr, 0, src.nbytes, stream.ptr)
    return dst


def sm_copy(src, dst):
    n = src.nbytes // 16
    _SM_COPY((132 * 2,), (1024,), (src, dst, cupy.uint64(n)))
    return dst
