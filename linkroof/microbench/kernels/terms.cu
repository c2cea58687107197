// Kernels for the cost model's terms beyond bandwidth: launch, synchronisation, signals
// between GPUs, and reductions into peer memory. Compiled at run time by NVRTC through
// cupy.RawModule, apart from linkroof.cu (a compile error here costs only these figures).
//
// Every spin loop has a deadline (globaltimer): a partner that never answers sets
// status[1] and ends the kernel instead of hanging the GPU.

typedef unsigned int u32;
typedef unsigned long long u64;

__device__ __forceinline__ u64 now_ns() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ u32 ld_acquire_sys(const u32* p) {
    u32 v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ u32 ld_acquire_gpu(const u32* p) {
    u32 v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_release_sys(u32* p, u32 v) {
    asm volatile("st.release.sys.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}

// ------------------------------------------------------------------- launch

// Nothing: the cost of a launch itself (by stream, by graph replay, host round trip).
extern "C" __global__ void empty_kernel() {}

// ------------------------------------------------------------------- barriers

#if __CUDA_ARCH__ >= 900
__device__ __forceinline__ u32 smem_u32(const void* p) { return (u32)__cvta_generic_to_shared(p); }
#endif

// Intra-SM barrier: one block, `n` rounds of an mbarrier (every thread arrives, then
// waits for the phase to complete). Proof that it synchronised: thread 0 publishes the
// round number before arriving, every thread reads it after the wait (double-buffered,
// so the next round's write cannot overtake a late reader); `bad` counts mismatches.
extern "C" __global__ void mbarrier_rounds(u64 n, u32* bad) {
#if __CUDA_ARCH__ >= 900
    __shared__ __align__(8) u64 bar;
    __shared__ volatile u32 slot[2];
    const u32 b = smem_u32(&bar);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(blockDim.x) : "memory");
        slot[0] = slot[1] = 0xffffffffu;
    }
    __syncthreads();
    u32 errors = 0;
    for (u64 i = 0; i < n; ++i) {
        if (threadIdx.x == 0) slot[i & 1] = (u32)i;
        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(b) : "memory");
        u32 done = 0;
        while (!done) {
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                         : "=r"(done) : "r"(b), "r"((u32)(i & 1)) : "memory");
        }
        if (slot[i & 1] != (u32)i) ++errors;
    }
    if (errors) atomicAdd(bad, errors);
#else
    if (threadIdx.x == 0) atomicAdd(bad, 1u);  // no mbarrier before sm_90: reported, not timed
#endif
}

// The same with __syncthreads (bar.sync), for comparison.
extern "C" __global__ void syncthreads_rounds(u64 n, u32* bad) {
    __shared__ volatile u32 slot[2];
    u32 errors = 0;
    for (u64 i = 0; i < n; ++i) {
        if (threadIdx.x == 0) slot[i & 1] = (u32)i;
        __syncthreads();
        if (slot[i & 1] != (u32)i) ++errors;
    }
    if (errors) atomicAdd(bad, errors);
}

// Inter-SM barrier through global memory: one block per SM, thread 0 of each takes part.
// Round r: publish r in this block's slot, arrive (atomicAdd on `counter`, after a
// fence), spin until every block has arrived, then read the next block's slot, which
// must say r. `base` is the counter's value when this launch starts (launches queue back
// to back and the counter keeps counting). status[0]: mismatches, status[1]: timed out.
extern "C" __global__ void grid_barrier_rounds(u32* counter, u32* slots, u32 base, u32 n, u64 timeout_ns,
                                               u32* status) {
    if (threadIdx.x != 0) return;
    const u32 blocks = gridDim.x;
    const u64 start = now_ns();
    u32 errors = 0;
    for (u32 i = 0; i < n; ++i) {
        const u32 round = base / blocks + i;
        slots[(i & 1) * blocks + blockIdx.x] = round;
        __threadfence();
        atomicAdd(counter, 1u);
        const u32 target = base + (i + 1) * blocks;
        while ((int)(ld_acquire_gpu(counter) - target) < 0) {
            if (now_ns() - start > timeout_ns) { atomicExch(&status[1], 1u); return; }
        }
        if (((volatile u32*)slots)[(i & 1) * blocks + (blockIdx.x + 1) % blocks] != round) ++errors;
    }
    if (errors) atomicAdd(&status[0], errors);
}

// ------------------------------------------------------- signals between GPUs

// Ping-pong of a flag between two GPUs: `mine` lives in this GPU's memory, `theirs` in
// the partner's (a peer mapping). The initiator writes v to theirs, then waits until
// mine >= v; the responder waits, then answers. n round trips, values base+1..base+n.
// mode 0: the signal is a plain SM store (st.relaxed.sys, as NCCL's LL flags); mode 2:
// an SM store with release semantics (st.release.sys: a system-scope fence first, what
// a store that publishes data written before it must pay); mode 1: a TMA bulk store of
// 16 bytes from shared memory (cp.async.bulk). status[0]: the last value seen (the host
// checks it), status[1]: timed out.
extern "C" __global__ void flag_pingpong(u32* mine, u32* theirs, u32 base, u32 n, u32 initiator, u32 mode,
                                         u64 timeout_ns, u32* status) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
#if __CUDA_ARCH__ >= 900
    __shared__ __align__(16) u32 msg[4];
#endif
    const u64 start = now_ns();
    u32 seen = 0;
    for (u32 i = 0; i < n; ++i) {
        const u32 v = base + i + 1;
        for (int side = 0; side < 2; ++side) {
            const bool send = (side == 0) == (initiator != 0);
            if (send) {
                if (mode == 0) {
                    asm volatile("st.relaxed.sys.global.u32 [%0], %1;" :: "l"(theirs), "r"(v) : "memory");
                } else if (mode == 2) {
                    st_release_sys(theirs, v);
                } else {
#if __CUDA_ARCH__ >= 900
                    msg[0] = v; msg[1] = v; msg[2] = v; msg[3] = v;
                    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 16;"
                                 :: "l"(theirs), "r"(smem_u32(msg)) : "memory");
                    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
                    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
#endif
                }
            } else {
                while ((int)((seen = ld_acquire_sys(mine)) - v) < 0) {
                    if (now_ns() - start > timeout_ns) { status[1] = 1; status[0] = seen; return; }
                }
            }
        }
    }
    status[0] = seen;
}

// ------------------------------------------------------ reductions into peer memory

// dst[i] += src[i] (fp32) with red.global.add, 4 floats per instruction (sm_90's
// vector form) or one (earlier GPUs). `src` is local, `dst` usually a peer's memory.
template <bool V4>
__global__ void red_add_f32(const float4* __restrict__ src, float* dst, u64 n_vec, u32 loops) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u32 l = 0; l < loops; ++l, src += n_vec, dst += 4 * n_vec) {
        for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n_vec; i += stride) {
            const float4 v = src[i];
            float* p = dst + 4 * i;
#if __CUDA_ARCH__ >= 900
            if (V4) {
                asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};"
                             :: "l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w) : "memory");
                continue;
            }
#endif
            atomicAdd(p, v.x); atomicAdd(p + 1, v.y); atomicAdd(p + 2, v.z); atomicAdd(p + 3, v.w);
        }
    }
}

// dst += src through the TMA: each block's issuing thread loads chunks of `src` into
// shared memory (cp.async.bulk) and adds them into `dst` (cp.reduce.async.bulk .add.f32),
// S stages in flight, as tma_copy in linkroof.cu.
template <int S>
__global__ void tma_red_add_f32(const char* __restrict__ src, char* dst, u64 nbytes, u32 chunk, u32 loops) {
#if __CUDA_ARCH__ >= 900
    extern __shared__ __align__(128) unsigned char smem[];
    if (threadIdx.x != 0) return;
    u64* bars = (u64*)(smem + (u64)S * chunk);
    for (int s = 0; s < S; ++s)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_u32(&bars[s])) : "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    const u64 n_chunks = (nbytes + chunk - 1) / chunk;
    const u64 per_loop = n_chunks > blockIdx.x ? (n_chunks - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
    const u64 mine = per_loop * loops;
    auto chunk_of = [&](u64 k) { return blockIdx.x + (k % per_loop) * gridDim.x; };
    auto slice_of = [&](u64 k) { return (k / per_loop) * nbytes; };
    auto bytes_of = [&](u64 c) { u64 left = nbytes - c * chunk; return (u32)(left < chunk ? left : chunk); };
    auto load = [&](u64 k, int s) {
        const u64 c = chunk_of(k);
        const u32 bar = smem_u32(&bars[s]);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes_of(c)) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     :: "r"(smem_u32(smem + (u64)s * chunk)), "l"(src + slice_of(k) + c * chunk), "r"(bytes_of(c)),
                        "r"(bar) : "memory");
    };
    for (u64 k = 0; k < mine && k < S; ++k) load(k, (int)k);
    for (u64 k = 0; k < mine; ++k) {
        const int s = (int)(k % S);
        const u64 c = chunk_of(k);
        u32 done = 0;
        while (!done) {
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                         : "=r"(done) : "r"(smem_u32(&bars[s])), "r"((u32)((k / S) & 1)) : "memory");
        }
        asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;"
                     :: "l"(dst + slice_of(k) + c * chunk), "r"(smem_u32(smem + (u64)s * chunk)), "r"(bytes_of(c))
                     : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        if (k >= 1 && k - 1 + S < mine) {
            asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
            load(k - 1 + S, (int)((k - 1) % S));
        }
    }
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}

// Inputs of a reduction check: p[i] = (i * mul) % 61 as a float (exact sums in fp32).
extern "C" __global__ void fill_small_f32(float* p, u64 n, u32 mul) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
        p[i] = (float)((i * mul) % 61);
}

// Counts elements with dst[i] != (i*a % 61) + times * (i*b % 61).
extern "C" __global__ void check_sum_f32(const float* p, u64 n, u32 a, u32 b, u32 times, u64* n_bad) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        const float want = (float)((i * a) % 61) + (float)times * (float)((i * b) % 61);
        if (p[i] != want) atomicAdd(n_bad, 1ull);
    }
}

// ------------------------------------------------- one-shot collectives (two GPUs)

// One call of a small collective between two GPUs in one kernel of one block, the way
// NCCL's LL protocol moves small messages: every 8-byte slot carries a 4-byte value and
// the call's epoch, written with one 64-bit store, so the receiver sees the value and its
// flag together and needs no fence. The epoch comes from a per-GPU counter that each call
// advances (graph replays need no new arguments); two receive buffers alternate by
// epoch parity, so a call only overwrites the buffer its peer finished two calls ago.
// Per call: copy `self_count` own values (self_src -> self_dst); send `send_count`
// values to the peer; receive `recv_count` values into out[i] = (base ? base[i] : 0) +
// received[i]. status[1] = 1 when a value did not arrive in time.
extern "C" __global__ void oneshot_exchange(const float* send, u32 send_count, u64* peer_recv, const u64* my_recv,
                                            u32 recv_count, const float* base, float* out, const float* self_src,
                                            float* self_dst, u32 self_count, u32 cap, u32* epoch_counter,
                                            u64 timeout_ns, u32* status) {
    __shared__ u32 epoch;
    if (threadIdx.x == 0) epoch = *(volatile u32*)epoch_counter + 1;
    __syncthreads();
    const u32 e = epoch;
    u64* to = peer_recv + (u64)(e & 1) * cap;
    const u64* from = my_recv + (u64)(e & 1) * cap;
    for (u32 i = threadIdx.x; i < send_count; i += blockDim.x) {
        const u64 v = ((u64)e << 32) | (u64)__float_as_uint(send[i]);
        asm volatile("st.volatile.global.u64 [%0], %1;" :: "l"(to + i), "l"(v) : "memory");
    }
    for (u32 i = threadIdx.x; i < self_count; i += blockDim.x) self_dst[i] = self_src[i];
    const u64 start = now_ns();
    for (u32 i = threadIdx.x; i < recv_count; i += blockDim.x) {
        u64 v;
        while (true) {
            asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(from + i) : "memory");
            if ((u32)(v >> 32) == e) break;
            if (now_ns() - start > timeout_ns) { status[1] = 1; break; }
        }
        out[i] = (base ? base[i] : 0.f) + __uint_as_float((u32)v);
    }
    __syncthreads();
    if (threadIdx.x == 0) *(volatile u32*)epoch_counter = e;
}
