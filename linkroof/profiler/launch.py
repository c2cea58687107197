"""Running under an existing launcher, one rank per GPU: `mpirun`/`mpiexec`/Slurm's
`srun` (through mpi4py) or `torchrun` (through torch.distributed). Rank and world come
from the launcher's environment; rendezvous, broadcasts and gathers go through the
launcher's own engine (no home-made sockets).

Gathers have a deadline: a rank that fails or hangs is named (rank and host) and the
others' results are kept.
"""

from __future__ import annotations

import os
import pickle
import socket
import time
from dataclasses import dataclass
from typing import Any

from ..errors import LinkroofError

MPI_RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK", "SLURM_PROCID")
MPI_SIZE_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE", "SLURM_NTASKS")
MPI_LOCAL_VARS = ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID",
                  "PMI_LOCAL_RANK")


class LaunchError(LinkroofError):
    """The launcher's environment is inconsistent or its engine is missing."""


@dataclass(frozen=True)
class LaunchContext:
    kind: str  # "single" | "mpi" | "torchrun"
    rank: int
    world: int
    local_rank: int
    hostname: str

    @property
    def distributed(self) -> bool:
        """Ranks to coordinate: several, or one under torchrun (whose environment always
        sets up a process group, which the user's torch.distributed code expects)."""
        return self.world > 1 or self.kind == "torchrun"


def _first_int(env: dict[str, str], names: tuple[str, ...]) -> int | None:
    for n in names:
        if n in env and env[n].strip().lstrip("-").isdigit():
            return int(env[n])
    return None


def detect(env: dict[str, str] | None = None) -> LaunchContext:
    """Which launcher started us, from its environment variables."""
    env = dict(os.environ if env is None else env)
    host = socket.gethostname()
    if "TORCHELASTIC_RUN_ID" in env or ("RANK" in env and "WORLD_SIZE" in env and "LOCAL_RANK" in env):
        try:
            return LaunchContext("torchrun", int(env["RANK"]), int(env["WORLD_SIZE"]), int(env.get("LOCAL_RANK", 0)),
                                 host)
        except (KeyError, ValueError):
            raise LaunchError("torchrun environment without valid RANK / WORLD_SIZE / LOCAL_RANK") from None
    rank = _first_int(env, MPI_RANK_VARS)
    if rank is not None:
        size = _first_int(env, MPI_SIZE_VARS)
        local = _first_int(env, MPI_LOCAL_VARS)
        return LaunchContext("mpi", rank, size or 1, local if local is not None else rank, host)
    return LaunchContext("single", 0, 1, 0, host)


class Comm:
    """The few collective operations the orchestration needs, on Python objects."""

    ctx: LaunchContext

    def bcast(self, obj: Any, root: int = 0) -> Any:
        raise NotImplementedError

    def gather(self, obj: Any, timeout_s: float, root: int = 0) -> list[tuple[int, Any]] | None:
        """At root: [(rank, obj) for every rank that reported in time]; elsewhere None."""
        raise NotImplementedError

    def abort(self, code: int) -> None:
        raise SystemExit(code)

    def close(self) -> None:
        """Release what connecting set up (nothing, unless this process initialised it)."""


class SingleComm(Comm):
    def __init__(self, ctx: LaunchContext):
        self.ctx = ctx

    def bcast(self, obj: Any, root: int = 0) -> Any:
        return obj

    def gather(self, obj: Any, timeout_s: float, root: int = 0) -> list[tuple[int, Any]] | None:
        return [(0, obj)]


class MpiComm(Comm):
    TAG = 4217

    def __init__(self, ctx: LaunchContext):
        try:
            from mpi4py import MPI
        except ImportError as e:
            raise LaunchError(f"started by an MPI launcher but mpi4py is missing ({e}); pip install linkroof[mpi]") \
                from None
        self.MPI = MPI
        self.comm = MPI.COMM_WORLD
        self.ctx = LaunchContext("mpi", self.comm.Get_rank(), self.comm.Get_size(), ctx.local_rank, ctx.hostname)

    def bcast(self, obj: Any, root: int = 0) -> Any:
        return self.comm.bcast(obj, root=root)

    def gather(self, obj: Any, timeout_s: float, root: int = 0) -> list[tuple[int, Any]] | None:
        if self.ctx.rank != root:
            # a blocking send of a pickled object: completes once the root receives it
            self.comm.send(obj, dest=root, tag=self.TAG)
            return None
        got = [(root, obj)]
        # probe, then receive: a pickled report can be far larger than the buffer an
        # irecv posts ahead of time (mpi4py's default is 32 KiB: MPI_ERR_TRUNCATE)
        pending = {r for r in range(self.ctx.world) if r != root}
        deadline = time.monotonic() + timeout_s
        while pending and time.monotonic() < deadline:
            for r in sorted(pending):
                if self.comm.iprobe(source=r, tag=self.TAG):
                    got.append((r, self.comm.recv(source=r, tag=self.TAG)))
                    pending.discard(r)
            time.sleep(0.01)
        return sorted(got, key=lambda x: x[0])

    def abort(self, code: int) -> None:
        self.comm.Abort(code)


class TorchComm(Comm):
    def __init__(self, ctx: LaunchContext, timeout_s: float = 600.0):
        try:
            import datetime

            import torch.distributed as dist
        except ImportError as e:
            raise LaunchError(f"started by torchrun but torch is missing ({e})") from None
        self.dist = dist
        self.owned = not dist.is_initialized()
        if self.owned:
            # gloo for linkroof's own bookkeeping; NCCL for CUDA tensors of user callables
            import torch

            backend = "cpu:gloo,cuda:nccl" if torch.cuda.is_available() else "gloo"
            dist.init_process_group(backend=backend, timeout=datetime.timedelta(seconds=timeout_s))
        self.ctx = ctx

    def bcast(self, obj: Any, root: int = 0) -> Any:
        box = [obj]
        self.dist.broadcast_object_list(box, src=root)
        return box[0]

    def gather(self, obj: Any, timeout_s: float, root: int = 0) -> list[tuple[int, Any]] | None:
        # Point-to-point on the gloo group with a deadline at the root, as for MPI.
        if self.ctx.rank != root:
            import torch

            data = torch.frombuffer(bytearray(pickle.dumps(obj)), dtype=torch.uint8)
            self.dist.send(torch.tensor([data.numel()], dtype=torch.int64), dst=root)
            self.dist.send(data, dst=root)
            return None
        import datetime

        import torch

        got = [(root, obj)]
        deadline = time.monotonic() + timeout_s
        for r in range(self.ctx.world):
            if r == root:
                continue
            n = torch.zeros(1, dtype=torch.int64)
            req = self.dist.irecv(n, src=r)
            left = max(0.001, deadline - time.monotonic())
            try:  # gloo progresses a receive inside wait(); is_completed() alone never turns true
                req.wait(timeout=datetime.timedelta(seconds=left))
            except RuntimeError:
                continue  # this rank did not report in time
            buf = torch.zeros(int(n.item()), dtype=torch.uint8)
            self.dist.recv(buf, src=r)
            got.append((r, pickle.loads(buf.numpy().tobytes())))
        return got

    def abort(self, code: int) -> None:
        os._exit(code)

    def close(self) -> None:
        if self.owned and self.dist.is_initialized():
            self.dist.destroy_process_group()


def connect(ctx: LaunchContext | None = None) -> Comm:
    ctx = ctx or detect()
    if ctx.kind == "mpi" and ctx.world > 1:
        return MpiComm(ctx)
    if ctx.kind == "torchrun":
        return TorchComm(ctx)
    return SingleComm(ctx)
