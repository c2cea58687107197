"""Where the wall time of an NCCL sweep goes (beyond the GPU time it measures):
wall per collective, then cProfile's top entries.

    python benchmarks/nccl_overhead.py
"""

import cProfile
import pstats
import time

from linkroof.microbench import nccl
from linkroof.microbench.cuda import free_memory


def main() -> None:
    nccl.collective([0, 1], "all_reduce", 8, reps=5)  # communicators, kernels compiled
    prof = cProfile.Profile()
    for coll in ("all_reduce", "sendrecv", "broadcast"):
        for size in (8, 64 << 10, 32 << 20, 512 << 20):
            t0 = time.perf_counter()
            prof.enable()
            m = nccl.collective([0, 1], coll, size, reps=20)
            free_memory()
            prof.disable()
            print(f"{coll:12s} {size:>11d} B  wall {time.perf_counter() - t0:6.3f} s  gpu {sum(m.times_s):.4f} s")
    pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
    pstats.Stats(prof).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
