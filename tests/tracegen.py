"""Small PyTorch profiler (Kineto) traces with known answers, in each of the three tiers
torch writes (kineto's output_json.cpp; torch's record_param_comms): the facts on the
kernel's args (torch >= 2.2), only on the launching op (coalesced calls), only in the
c10d op's recorded shapes (torch 1.13-2.1, NCCL 2.1x's SendRecv kernel names)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path


class TraceBuilder:
    """Events of one rank, times in microseconds as Kineto writes them."""

    def __init__(self, rank: int | None = 0, world: int | None = 2, pgs=(("0", 2),), device: str = "NVIDIA H200"):
        self.rank, self.world, self.events, self.corr = rank, world, [], 100
        self.meta = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": device, "numSms": 132}]}
        if rank is not None:
            self.meta["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": world,
                                            "pg_config": [{"pg_name": n, "pg_size": s, "ranks": list(range(s))}
                                                          for n, s in pgs]}

    def _launch(self, ts: float, tid: int = 1) -> int:
        self.corr += 1
        self.events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": tid,
                            "ts": ts, "dur": 2.0, "args": {"correlation": self.corr}})
        return self.corr

    def op(self, name: str, ts: float, dur: float, args: dict | None = None, tid: int = 1) -> None:
        self.events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur,
                            "args": args or {}})

    def kernel(self, name: str, ts: float, dur: float, args: dict | None = None, launch_ts: float | None = None,
               stream: int = 7) -> None:
        corr = self._launch(launch_ts if launch_ts is not None else ts - 5)
        self.events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
                            "args": {"device": 0, "stream": stream, "correlation": corr, "grid": [32, 1, 1],
                                     "block": [512, 1, 1], **(args or {})}})

    def step(self, n: int, ts: float, dur: float) -> None:
        self.events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{n}", "pid": 1, "tid": 1,
                            "ts": ts, "dur": dur, "args": {}})

    def doc(self) -> dict:
        return {**self.meta, "traceEvents": self.events}

    def write(self, path: Path) -> str:
        data = json.dumps(self.doc()).encode()
        path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
        return str(path)


def comm_args(coll: str, in_n: int, out_n: int, dtype: str = "BFloat16", group: int | None = 2, seq: int | None = None,
              pg: str = "0", ranks: str | None = None) -> dict:
    a = {"Collective name": coll, "In msg nelems": in_n, "Out msg nelems": out_n, "dtype": dtype,
         "Process Group Name": pg, "Process Group Description": "default_pg",
         "Process Group Ranks": ranks if ranks is not None else str(list(range(group or 2)))}
    if group is not None:
        a["Group size"] = group
    if seq is not None:
        a["Seq"] = seq
    return a


def tier1_rank(rank: int, start_skew_us: float = 0.0, gemm_beside: bool = True, world: int = 2) -> TraceBuilder:
    """Facts on the kernels (torch >= 2.2). One step, 0-1000 us: a GEMM 0-600 on stream 7;
    an all-reduce of 4096 x 1024 bf16 (8 MiB) 400-700 on stream 20 (overlapped 400-600,
    exposed 600-700, plus the skew); an all-gather 1 Mi -> 2 Mi fp32 elements (output
    8 MiB) 800-900, exposed; Seq 1 and 2. All on the world's group "0" of `world` ranks."""
    t = TraceBuilder(rank, world, pgs=(("0", world),))
    t.step(1, 0, 1000)
    if gemm_beside:
        t.kernel("sm90_xmma_gemm_bf16bf16_bf16f32", 0, 600, launch_ts=1)
    t.kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 400 + start_skew_us, 300 - start_skew_us,
             comm_args("allreduce", 4096 * 1024, 4096 * 1024, seq=1, group=world), launch_ts=10, stream=20)
    t.kernel("ncclDevKernel_AllGather_RING_LL", 800, 100, comm_args("_allgather_base", 1 << 20, 2 << 20,
                                                                    dtype="Float", seq=2, group=world),
             launch_ts=20, stream=20)
    return t


def tier2_rank(rank: int = 0) -> TraceBuilder:
    """A coalesced all-reduce: the kernel carries nothing; the launching
    record_param_comms says allreduce_coalesced of 2 x 1 Mi fp32 elements (8 MiB); a
    second NCCL kernel has no launching op at all (name only)."""
    t = TraceBuilder(rank)
    t.step(1, 0, 500)
    t.op("c10d::allreduce_coalesced_", 5, 30, {"Input Dims": [[[1048576], [1048576]]], "Input type": ["TensorList"]})
    t.op("record_param_comms", 8, 20, comm_args("allreduce_coalesced", 2 << 20, 2 << 20, dtype="Float"))
    t.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 100, 50, launch_ts=12, stream=20)
    t.kernel("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL", 300, 40, launch_ts=60, stream=20)
    return t


def tier3_rank(rank: int | None = None) -> TraceBuilder:
    """torch 1.13-2.1: no facts anywhere but the c10d ops' shapes; NCCL 2.1x's
    SendRecv kernel name for an all-gather (whose name says nothing); an allreduce_ over a
    TensorList recorded with empty dims (size unknown, not zero)."""
    t = TraceBuilder(rank, world=None if rank is None else 2)
    t.step(1, 0, 600)
    t.op("c10d::_allgather_base_", 5, 30, {"Input Dims": [[8192, 1024], [4096, 1024]],
                                           "Input type": ["c10::Half", "c10::Half"]})
    t.kernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", 100, 80, launch_ts=10, stream=20)
    t.op("c10d::allreduce_", 200, 30, {"Input Dims": [[]], "Input type": ["TensorList"]})
    t.kernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", 300, 60, launch_ts=205, stream=20)
    return t


def era2023_rank(rank: int = 0, world: int = 16) -> TraceBuilder:
    """torch 2.0-2.1 with record_shapes on (the era of the 16- and 128-rank traces the
    issue names): no NCCL metadata anywhere; every NCCL kernel is NCCL 2.1x's
    ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t; the collective is known from the
    `nccl:<op>` range ProcessGroupNCCL opens (its Input Dims: the inputs only) inside the
    `c10d::<op>_` op (both tensors' dims); several process groups, so the group is known
    only from the c10d op's output / input ratio. An all-gather of 1 GiB (bf16), a
    reduce-scatter of 96 MiB, an all-to-all of 400 MiB (its group: unknown)."""
    t = TraceBuilder(rank, world, pgs=(("0", world), ("1", 8), ("2", 2)))
    t.step(1, 0, 5000)
    ag_in = (1 << 30) // 2 // 8  # bf16 elements of one rank's shard, 8 ranks
    t.op("c10d::_allgather_base_", 5, 200, {"Input Dims": [[ag_in * 8], [ag_in], [], []],
                                            "Input type": ["c10::BFloat16", "c10::BFloat16", "", ""]})
    t.events.append({"ph": "X", "cat": "user_annotation", "name": "nccl:_all_gather_base", "pid": 1, "tid": 1,
                     "ts": 20, "dur": 100, "args": {"Input Dims": [[ag_in]], "Input type": ["c10::BFloat16"]}})
    t.kernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", 300, 900, launch_ts=40, stream=20)
    rs_in = (96 << 20) // 4  # fp32 elements of the whole input, 2 ranks
    t.op("c10d::_reduce_scatter_base_", 1300, 200, {"Input Dims": [[rs_in // 2], [rs_in], [], []],
                                                    "Input type": ["float", "float", "", ""]})
    t.events.append({"ph": "X", "cat": "user_annotation", "name": "nccl:_reduce_scatter_base", "pid": 1, "tid": 1,
                     "ts": 1310, "dur": 100, "args": {"Input Dims": [[rs_in]], "Input type": ["float"]}})
    t.kernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", 1600, 400, launch_ts=1330, stream=20)
    a2a = (400 << 20) // 1  # uint8 elements
    t.op("c10d::alltoall_base_", 2100, 200, {"Input Dims": [[a2a], [a2a], [], []],
                                             "Input type": ["unsigned char", "unsigned char", "", ""]})
    t.events.append({"ph": "X", "cat": "user_annotation", "name": "nccl:all_to_all", "pid": 1, "tid": 1,
                     "ts": 2110, "dur": 100, "args": {"Input Dims": [[a2a]], "Input type": ["unsigned char"]}})
    t.kernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", 2400, 1500, launch_ts=2130, stream=20)
    return t
