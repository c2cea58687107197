"""The bundled example trace: two ranks of a data-parallel training step on 2 x H200,
three profiled steps, written as PyTorch's profiler (Kineto, torch >= 2.2) writes them.

Synthetic, said so: made by this script, not recorded. The GEMMs are 1.5 ms each; the two
all-reduces (fp32, on the world's group of 2 ranks) last what NCCL took at their sizes on
2 x H200 in linkroof's bundled reference profile (nccl_baseline), so each is placed at
NCCL's own speed. The first all-reduce (256 MiB) runs beside the backward GEMM
(overlapped); the second (64 MiB) runs after it (exposed). In step 2 rank 1's backward
runs 500 us long, so it starts the second all-reduce 500 us after rank 0, whose
all-reduce waits for it: rank 1 is the straggler there.

    python examples/traces/make_example.py    # rewrites examples/traces/train_2xh200_rank{0,1}.json.gz
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
STEP_US = 4000.0
GEMM_US = 1500.0
LATE_US = 500.0  # rank 1's backward in step 2
SIZES = (256 << 20, 64 << 20)  # the all-reduces' sizes, bytes (fp32)


def nccl_us(size: int) -> float:
    """NCCL's all-reduce time at `size` on 2 ranks in the bundled reference (microseconds)."""
    from linkroof.profiler.session import bundled_profile
    from linkroof.roofline.baseline import nccl_baseline
    from linkroof.roofline.workload import collective

    b = nccl_baseline(bundled_profile(), collective("all_reduce", size, 2))
    return round(b.median_s * 1e6, 3)  # Kineto's microseconds, to the nanosecond


def rank_doc(rank: int, times: tuple[float, float]) -> dict:
    events: list[dict] = []
    corr = [100]

    def kernel(name: str, ts: float, dur: float, stream: int, args: dict | None = None) -> None:
        corr[0] += 1
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": ts - 6.0, "dur": 4.0, "args": {"correlation": corr[0]}})
        events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
                       "args": {"device": rank, "stream": stream, "correlation": corr[0], "grid": [132, 1, 1],
                                "block": [384, 1, 1], **(args or {})}})

    seq = 0
    for step in (1, 2, 3):
        t0 = 10_000.0 + (step - 1) * STEP_US
        late = LATE_US if (step == 2 and rank == 1) else 0.0
        wait = LATE_US if (step == 2 and rank == 0) else 0.0
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": 1, "tid": 1,
                       "ts": t0, "dur": STEP_US - 1.0, "args": {}})
        kernel("sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off"
               "_kernel__5x_cublas", t0 + 20.0, GEMM_US - 20.0, 7)  # forward, launched inside the step
        kernel("sm90_xmma_gemm_f32f32_f32f32_f32_nt_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off"
               "_kernel__5x_cublas", t0 + GEMM_US, GEMM_US + late, 7)  # backward
        for i, (size, dur) in enumerate(zip(SIZES, times)):
            seq += 1
            start = t0 + GEMM_US + 100.0 if i == 0 else t0 + 2 * GEMM_US + late + 20.0
            n = size // 4
            kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", start,
                   dur + (wait if i == 1 else 0.0), 20,
                   {"Collective name": "allreduce", "In msg nelems": n, "Out msg nelems": n, "dtype": "Float",
                    "Group size": 2, "Seq": seq, "Process Group Name": "0",
                    "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1]"})
    meta = {"schemaVersion": 1, "deviceProperties": [{"id": rank, "name": "NVIDIA H200", "numSms": 132}],
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 2,
                                "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "pg_size": 2,
                                               "ranks": [0, 1]}]},
            "linkroof_example": "synthetic: examples/traces/make_example.py (see its docstring)"}
    return {**meta, "traceEvents": events}


def main() -> None:
    times = tuple(nccl_us(s) for s in SIZES)
    for rank in (0, 1):
        doc = rank_doc(rank, times)
        data = json.dumps(doc, indent=None).encode()
        assert json.loads(data) == doc  # read back before it is written
        (HERE / f"train_2xh200_rank{rank}.json.gz").write_bytes(gzip.compress(data, mtime=0))
    print(f"wrote train_2xh200_rank0/1.json.gz; all-reduce times {times} us (the reference's NCCL)")


if __name__ == "__main__":
    main()
