"""Record real Flight Recorder dumps of a hang: 4 CPU ranks on Gloo, one rank missing a
call, every rank's ring dumped after the others' timeout. Needs torch (not a linkroof
dependency; run it from a venv of its own):

    python benchmarks/flightrec_gloo_hang.py OUT_DIR [collective|p2p]

collective: groups 'tp' = [0, 1] and [2, 3] (new_group), three all-reduces in the world
group and in each tp group, then rank 3 skips its tp all-reduce #4: rank 2 waits.
p2p: after two world all-reduces, rank 0 sends to rank 1, which receives; rank 2 sends to
rank 3, which never receives: rank 2 waits. Each rank writes OUT_DIR/rank_<r> (the pickle
`_dump_fr_trace()` returns) once its wait timed out (3 s) or it passed the call."""

import os
import sys
import time
from datetime import timedelta

PORT = "29541"


def worker(rank: int, world: int, out: str, scenario: str) -> None:
    import torch
    import torch.distributed as dist
    from torch._C._distributed_c10d import _dump_fr_trace

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=PORT)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=3))
    x = torch.ones(4096, dtype=torch.bfloat16)
    try:
        if scenario == "collective":
            tps = [dist.new_group([0, 1], group_desc="tp"), dist.new_group([2, 3], group_desc="tp")]
            tp = tps[rank // 2]
            for _ in range(3):
                dist.all_reduce(x)
                dist.all_reduce(x, group=tp)
            if rank != 3:
                dist.all_reduce(x, group=tp)  # rank 3 skips: rank 2 waits
        else:
            for _ in range(2):
                dist.all_reduce(x)
            y = torch.zeros(1024)
            if rank == 0:
                dist.send(y, 1)
            elif rank == 1:
                dist.recv(y, 0)
            elif rank == 2:
                dist.send(y, 3)  # rank 3 never receives
    except Exception as e:  # the wait timed out: the hang, as the user meets it
        print(f"rank {rank}: {type(e).__name__}: {str(e).splitlines()[0][:120]}", flush=True)
    time.sleep(4 if rank == 3 else 0.5)  # let every wait time out before anyone leaves
    with open(os.path.join(out, f"rank_{rank}"), "wb") as f:
        f.write(_dump_fr_trace())


def main() -> None:
    import torch.multiprocessing as mp

    out = sys.argv[1]
    scenario = sys.argv[2] if len(sys.argv) > 2 else "collective"
    os.makedirs(out, exist_ok=True)
    os.environ.setdefault("TORCH_FR_BUFFER_SIZE", "2000")  # torch 2.13's default; older ones need it set
    mp.spawn(worker, args=(4, out, scenario), nprocs=4)


if __name__ == "__main__":
    main()
