"""The host's side of a grouped NCCL call from one Python process driving both GPUs:
the issue cost per call (calls held behind the gate, host clock), the Python loop's own
share, and the per-call time of a back-to-back loop with the host's launch in it, for
small messages, under whatever NCCL_* / LINKROOF_NCCL_BUFFERS variables are set.

    python3 benchmarks/nccl_host_cost.py
"""

import os

from linkroof.microbench import nccl, terms

env = " ".join(f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith(("NCCL_LOCAL", "NCCL_GRAPH",
                                                                                   "LINKROOF_NCCL")))
print(f"-- {env or 'defaults'}")
for coll, size in (("all_reduce", 8), ("all_to_all", 32), ("sendrecv", 8), ("broadcast", 8), ("all_reduce", 512 << 10)):
    host, py = terms.nccl_issue_cost([0, 1], coll, size, reps=10)
    dev, loop = nccl.collective_timings([0, 1], coll, size)
    print(f"{coll:<11} {size:>7} B  issue {host.median_s * 1e6:6.2f} us (python {py.median_s * 1e6:5.2f})  "
          f"loop {loop.median_s * 1e6:6.2f} us  device {dev.median_s * 1e6:6.2f} us ({dev.spec.params['method']})  "
          f"buffers {dev.spec.params['buffers']}  ok {host.verified and dev.verified and loop.verified}")
