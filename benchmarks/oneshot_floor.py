"""What a hand-written one-shot kernel achieves for small collectives on two GPUs
(`linkroof.microbench.terms.oneshot_collective`), beside NCCL's device time from the
bundled reference at the same sizes and the cost model's primitive sum (graph launch +
a signal per dependent hop + latency-aware link time).

    python3 benchmarks/oneshot_floor.py [--json OUT]
"""

import argparse
import json

from linkroof.microbench import terms
from linkroof.profiler.session import bundled_profile
from linkroof.roofline import cost
from linkroof.roofline import workload as W
from linkroof.roofline.collectives import COLLECTIVES, dependent_steps
from linkroof.roofline.model import MachineModel
from linkroof.schema import to_dict


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--sizes", default="8,64,512,4096,32768,262144")
    args = ap.parse_args()
    ref = bundled_profile()
    model = MachineModel.from_profile(ref)
    nccl = {(m.spec.pattern, m.spec.message_bytes): m.median_s for m in ref.measurements
            if m.spec.mechanism == "nccl" and m.spec.params.get("timing") == "device"
            and not m.spec.params.get("in_place") and m.spec.params.get("dtype") == "fp32"}
    out = []
    for coll in COLLECTIVES:
        for size in (int(x) for x in args.sizes.split(",")):
            try:
                (m,) = terms.oneshot_collective(coll, size)
            except Exception as e:  # noqa: BLE001
                print(f"{coll:<15} {size:>7} B  failed: {type(e).__name__}: {e}")
                continue
            out.append(m)
            b = cost.cost_bound(W.collective(coll, size, 2), ref, model, "graph", 1, dependent_steps(coll, 2), "gpu")
            n = nccl.get((coll, size))
            print(f"{coll:<15} {size:>7} B  one-shot {m.median_s * 1e6:6.2f} us  NCCL {n * 1e6 if n else float('nan'):6.2f} us"
                  f"  primitives {b.bound_s * 1e6:5.2f} us  NCCL/one-shot {n / m.median_s if n else float('nan'):4.2f}"
                  f"  {'ok' if m.verified else 'NOT VERIFIED: ' + m.verification}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(to_dict(out), f, indent=1)


if __name__ == "__main__":
    main()
