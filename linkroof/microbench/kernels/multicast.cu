// NVSwitch multicast store: every 16-byte vector written once through a multicast
// address reaches the memory of every GPU bound to the multicast object. Compiled only
// when the gated multicast benchmark runs (linkroof/microbench/multicast.py).
typedef unsigned long long u64;
extern "C" __global__ void multicast_store_v4(const uint4* __restrict__ src, uint4* mc_dst, u64 n_vec) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n_vec; i += (u64)gridDim.x * blockDim.x) {
        uint4 v = src[i];
        asm volatile("multimem.st.global.v4.f32 [%0], {%1, %2, %3, %4};"
                     :: "l"(mc_dst + i), "f"(__uint_as_float(v.x)), "f"(__uint_as_float(v.y)),
                        "f"(__uint_as_float(v.z)), "f"(__uint_as_float(v.w)) : "memory");
    }
}
