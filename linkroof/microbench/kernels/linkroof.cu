// linkroof microbenchmark kernels. Compiled at run time by NVRTC through cupy.RawModule
// for the device's own architecture (-arch=sm_XY), cached by CuPy on disk.
//
// Conventions: sizes in bytes (u64); every copy kernel takes byte counts that are a
// multiple of 16 (the planner guarantees it); patterns are 32-bit words.

typedef unsigned int u32;
typedef unsigned long long u64;

// ---------------------------------------------------------------- verification

// The pattern of word i for a given seed (a 32-bit mix; the host computes the same).
__device__ __forceinline__ u32 pattern_word(u64 i, u32 seed) {
    u32 x = (u32)(i ^ (i >> 32)) * 2654435761u + seed;
    x ^= x >> 16; x *= 0x85ebca6bu; x ^= x >> 13; x *= 0xc2b2ae35u; x ^= x >> 16;
    return x;
}

extern "C" __global__ void fill_pattern(u32* p, u64 n_words, u32 seed) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n_words; i += (u64)gridDim.x * blockDim.x)
        p[i] = pattern_word(i, seed);
}

extern "C" __global__ void fill_value(u32* p, u64 n_words, u32 value) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n_words; i += (u64)gridDim.x * blockDim.x)
        p[i] = value;
}

// Counts words that differ from the pattern; `first_bad` keeps the lowest such index.
extern "C" __global__ void check_pattern(const u32* p, u64 n_words, u32 seed, u64* n_bad, u64* first_bad) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n_words; i += (u64)gridDim.x * blockDim.x) {
        if (p[i] != pattern_word(i, seed)) {
            atomicAdd(n_bad, 1ull);
            atomicMin(first_bad, i);
        }
    }
}

// The XOR of n words, word by word (the read-only kernel's check, by another path than
// its 16-byte loads): each warp's XOR, then one atomicXor per warp into *out (zeroed).
extern "C" __global__ void xor_words(const u32* __restrict__ p, u64 n_words, u32* out) {
    u32 x = 0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n_words; i += (u64)gridDim.x * blockDim.x)
        x ^= p[i];
    for (int o = 16; o > 0; o >>= 1) x ^= __shfl_xor_sync(0xffffffffu, x, o);
    if ((threadIdx.x & 31) == 0) atomicXor(out, x);
}

// GEMM inputs: element i of a seeded stream, uniform in [0, 1) (24 bits) or standard
// normal (Box-Muller), stored as kind 0 fp16 (round to nearest), 1 bf16 (the fp32's top
// 16 bits, truncated), 2 fp32, 3 fp64. One kernel in this module instead of CuPy's
// random generators and casts, each a compile of its own on a user's first run.
__device__ __forceinline__ u64 mix64(u64 z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

extern "C" __global__ void fill_random(void* out, u64 n, u64 seed, int kind, int normal) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        u64 h = mix64(mix64(seed) ^ i);
        float u = (float)(h >> 40) * (1.0f / 16777216.0f);
        float v = u;
        if (normal) {
            float u1 = (float)((h & 0xffffffull) + 1ull) * (1.0f / 16777216.0f);  // (0, 1]
            v = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u);
        }
        if (kind == 0) {
            unsigned short b;
            asm("cvt.rn.f16.f32 %0, %1;" : "=h"(b) : "f"(v));
            ((unsigned short*)out)[i] = b;
        } else if (kind == 1) {
            ((unsigned short*)out)[i] = (unsigned short)(__float_as_uint(v) >> 16);
        } else if (kind == 2) {
            ((float*)out)[i] = v;
        } else {
            ((double*)out)[i] = (double)v;
        }
    }
}

// ------------------------------------------------------------------ gating

// Holds a stream until the host sets *flag (host-mapped pinned memory), so that every
// repetition queued behind it runs back to back, free of Python's enqueue cost. Gives
// up after timeout_ns (then *timed_out tells the host the figures are not clean).
extern "C" __global__ void spin_wait(volatile int* flag, u64 timeout_ns, volatile int* timed_out) {
    u64 start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (*flag == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > timeout_ns) { *timed_out = 1; break; }
#if __CUDA_ARCH__ >= 700
        __nanosleep(500);
#endif
    }
}

// The SM clock under a timed batch, as nvbench measures it (its timestamps_kernel): of a
// grid of one block per SM, the block on SM 0 writes %globaltimer (ns) and SM 0's
// clock64() (cycles); two stamps around a batch give its mean SM clock, read on the GPU
// itself (NVML's clock reading lags a power cap's fall by more than a batch lasts).
extern "C" __global__ void sm0_stamp(u64* out) {
    unsigned int smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    if (smid == 0) {
        u64 gts;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(gts));
        out[0] = gts;
        out[1] = (u64)clock64();
    }
}

// ------------------------------------------------------------- SM copies

// Loads and stores as volatile asm so that the compiler keeps all U loads ahead of the
// first store (with __restrict__ it would otherwise interleave them, leaving fewer
// loads in flight than asked for). Loads are .cg (cache globally: bypass this SM's L1),
// so a copy can never be served from the reading SM's cache: peer memory is cached only
// in its owner's L2, on the far side of the link. (A first version saw 1585 GB/s "from a
// peer" when every message of a launch re-read one slice through L1.)
__device__ __forceinline__ uint4 ld_v4(const uint4* p) {
    uint4 v;
    asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
// The same load with an L2 prefetch-size hint of 256 bytes (sm_80+): larger requests.
__device__ __forceinline__ uint4 ld_v4_pf(const uint4* p) {
    uint4 v;
#if __CUDA_ARCH__ >= 800
    asm volatile("ld.global.cg.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
#else
    v = ld_v4(p);
#endif
    return v;
}
__device__ __forceinline__ void st_v4(uint4* p, uint4 v) {
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

// 16-byte vector copy, grid-stride, U independent loads in flight per thread before
// the first store. Reading peer memory: run on the destination; writing peer memory:
// run on the source.
template <int U, bool PF>
__device__ __forceinline__ void copy_v4_any(const uint4* __restrict__ src, uint4* __restrict__ dst, u64 n_vec, u32 loops) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    // `loops` messages per launch, each its own slice of the buffers (a repeated slice
    // would be served from this GPU's caches after the first pass, not from the link).
    for (u32 l = 0; l < loops; ++l, src += n_vec, dst += n_vec) {
        u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
        for (; i + (U - 1) * stride < n_vec; i += U * stride) {
            uint4 v[U];
#pragma unroll
            for (int u = 0; u < U; ++u) v[u] = PF ? ld_v4_pf(src + i + u * stride) : ld_v4(src + i + u * stride);
#pragma unroll
            for (int u = 0; u < U; ++u) st_v4(dst + i + u * stride, v[u]);
        }
        for (; i < n_vec; i += stride) st_v4(dst + i, PF ? ld_v4_pf(src + i) : ld_v4(src + i));
    }
}

template <int U>
__global__ void copy_v4(const uint4* __restrict__ src, uint4* __restrict__ dst, u64 n_vec, u32 loops) {
    copy_v4_any<U, false>(src, dst, n_vec, loops);
}
template <int U>
__global__ void copy_v4_l2pf(const uint4* __restrict__ src, uint4* __restrict__ dst, u64 n_vec, u32 loops) {
    copy_v4_any<U, true>(src, dst, n_vec, loops);
}

// Read-only: every 16-byte vector read once. Each thread XOR-folds what it read into
// `xor_out`, which the host compares with the XOR of the whole buffer (proof of reading).
template <int U>
__global__ void read_v4(const uint4* __restrict__ src, u64 n_vec, u32* xor_out) {
    u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (; i + (U - 1) * stride < n_vec; i += U * stride) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = ld_v4(src + i + u * stride);
#pragma unroll
        for (int u = 0; u < U; ++u) { acc.x ^= v[u].x; acc.y ^= v[u].y; acc.z ^= v[u].z; acc.w ^= v[u].w; }
    }
    for (; i < n_vec; i += stride) { uint4 v = src[i]; acc.x ^= v.x; acc.y ^= v.y; acc.z ^= v.z; acc.w ^= v.w; }
    atomicXor(xor_out, acc.x ^ acc.y ^ acc.z ^ acc.w);
}

// Write-only: the pattern, so the written data can be checked like a copy's.
extern "C" __global__ void write_pattern_v4(uint4* dst, u64 n_vec, u32 seed) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n_vec; i += (u64)gridDim.x * blockDim.x) {
        const u64 w = i * 4;
        dst[i] = make_uint4(pattern_word(w, seed), pattern_word(w + 1, seed), pattern_word(w + 2, seed),
                            pattern_word(w + 3, seed));
    }
}

// ----------------------------------------------------------- TMA bulk copies

#if __CUDA_ARCH__ >= 900
__device__ __forceinline__ u32 smem_addr(const void* p) { return (u32)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mbar_init(u32 bar) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_expect(u32 bar, u32 bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity) {
    u32 done = 0;
    while (!done) {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    }
}
__device__ __forceinline__ void bulk_load(u32 dst_smem, const void* src, u32 bytes, u32 bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 :: "r"(dst_smem), "l"(src), "r"(bytes), "r"(bar) : "memory");
}
__device__ __forceinline__ void bulk_store(void* dst, u32 src_smem, u32 bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" :: "l"(dst), "r"(src_smem), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;" :: "n"(N) : "memory");
}
#endif

// Global -> shared -> global through the Tensor Memory Accelerator's bulk copies, one
// issuing thread per block, S shared-memory stages of `chunk` bytes. The block's
// chunks are c = blockIdx.x + k * gridDim.x. Loads run up to S chunks ahead of stores;
// a stage is reloaded once the store that read it has finished reading shared memory.
template <int S>
__global__ void tma_copy(const char* __restrict__ src, char* __restrict__ dst, u64 nbytes, u32 chunk, u32 loops) {
#if __CUDA_ARCH__ >= 900
    extern __shared__ __align__(128) unsigned char smem[];
    if (threadIdx.x != 0) return;
    u64* bars = (u64*)(smem + (u64)S * chunk);
    for (int s = 0; s < S; ++s) mbar_init(smem_addr(&bars[s]));
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");

    // `loops` messages per launch, each its own `nbytes` slice of the buffers (never a
    // repeated slice, which this GPU's caches would serve): the block's chunk sequence
    // repeats, offset by one slice each time.
    const u64 n_chunks = (nbytes + chunk - 1) / chunk;
    const u64 per_loop = n_chunks > blockIdx.x ? (n_chunks - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
    const u64 mine = per_loop * loops;
    auto chunk_of = [&](u64 k) { return blockIdx.x + (k % per_loop) * gridDim.x; };
    auto slice_of = [&](u64 k) { return (k / per_loop) * nbytes; };
    auto bytes_of = [&](u64 c) { u64 left = nbytes - c * chunk; return (u32)(left < chunk ? left : chunk); };

    for (u64 k = 0; k < mine && k < S; ++k) {
        const u64 c = chunk_of(k);
        const u32 b = bytes_of(c);
        const u32 bar = smem_addr(&bars[k]);
        mbar_expect(bar, b);
        bulk_load(smem_addr(smem + k * chunk), src + slice_of(k) + c * chunk, b, bar);
    }
    for (u64 k = 0; k < mine; ++k) {
        const int s = (int)(k % S);
        const u64 c = chunk_of(k);
        mbar_wait(smem_addr(&bars[s]), (u32)((k / S) & 1));
        bulk_store(dst + slice_of(k) + c * chunk, smem_addr(smem + (u64)s * chunk), bytes_of(c));
        // Refill the stage used by the previous chunk once its store has read it.
        if (k >= 1 && k - 1 + S < mine) {
            bulk_wait_read<1>();
            const u64 kk = k - 1 + S;
            const int ss = (int)((k - 1) % S);
            const u64 cc = chunk_of(kk);
            const u32 b = bytes_of(cc);
            const u32 bar = smem_addr(&bars[ss]);
            mbar_expect(bar, b);
            bulk_load(smem_addr(smem + (u64)ss * chunk), src + slice_of(kk) + cc * chunk, b, bar);
        }
    }
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}

// Round trip of the smallest TMA transfer: one thread loads 16 bytes from `src` into
// shared memory and waits for it, `n` times in a row. Time / n = one round trip.
extern "C" __global__ void tma_roundtrip(const char* src, u64 n, u32* sink) {
#if __CUDA_ARCH__ >= 900
    __shared__ __align__(128) unsigned char buf[16];
    __shared__ u64 bar_mem;
    if (threadIdx.x != 0) return;
    const u32 bar = smem_addr(&bar_mem);
    mbar_init(bar);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    for (u64 i = 0; i < n; ++i) {
        mbar_expect(bar, 16);
        bulk_load(smem_addr(buf), src + (i % 64) * 128, 16, bar);
        mbar_wait(bar, (u32)(i & 1));
    }
    sink[0] = *(u32*)buf;
#endif
}

// ----------------------------------------------------------------- latency

// Pointer chase: each 8-byte word holds the byte offset of the next. Launched with one
// block per SM; only block `target` follows `hops` links (one thread), so that the
// caller can sample latency from different SMs (as nvbandwidth). Time per hop is the
// load-to-use latency of that memory from that SM.
extern "C" __global__ void pointer_chase(const u64* base, u64 hops, u32 target, u64* sink) {
    if (blockIdx.x != target || threadIdx.x != 0) return;
    u64 off = 0;
    const char* b = (const char*)base;
    for (u64 h = 0; h < hops; ++h) {
        u64 next;
        asm volatile("ld.global.u64 %0, [%1];" : "=l"(next) : "l"(b + off));
        off = next;
    }
    sink[0] = off;
}

extern "C" __global__ void chase_init(u64* base, u64 n_nodes, u64 stride_bytes) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n_nodes; i += (u64)gridDim.x * blockDim.x)
        base[i * (stride_bytes / 8)] = ((i + 1) % n_nodes) * stride_bytes;
}

// ------------------------------------------------------------------ compute

// fp32 FMA throughput: 8 independent chains per thread; 2 FLOP per FMA.
extern "C" __global__ void fma_peak(float* sink, u32 iters, float a, float b) {
    float x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3, x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < 16; ++j) {
            x0 = fmaf(x0, a, b); x1 = fmaf(x1, a, b); x2 = fmaf(x2, a, b); x3 = fmaf(x3, a, b);
            x4 = fmaf(x4, a, b); x5 = fmaf(x5, a, b); x6 = fmaf(x6, a, b); x7 = fmaf(x7, a, b);
        }
    }
    const float s = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
    if (s == 1.2345e-30f) sink[0] = s;
}

// Deliberately broken copy for the self-test of verification: copies all but one word.
extern "C" __global__ void copy_v4_drop_one(const uint4* src, uint4* dst, u64 n_vec, u64 skip) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n_vec; i += (u64)gridDim.x * blockDim.x)
        if (i != skip) dst[i] = src[i];
}
