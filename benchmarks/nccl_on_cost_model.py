"""NCCL's own collectives on the latency-aware cost model: for every collective and
size of a profile's sweep (device time, fp32, out of place), the cost model's bound
(one CUDA-graph launch, a GPU-to-GPU signal per dependent hop, latency-aware link time)
over NCCL's measured time. Issue 12 asks for 50-100 % at every size.

    python3 benchmarks/nccl_on_cost_model.py [PROFILE]   (default: the bundled reference)
"""

import sys

from linkroof.profiler.session import bundled_profile, resolve_profile
from linkroof.roofline import cost
from linkroof.roofline import workload as W
from linkroof.roofline.collectives import dependent_steps
from linkroof.roofline.model import MachineModel
from linkroof.units import format_size


def main() -> None:
    profile = resolve_profile(sys.argv[1]) if len(sys.argv) > 1 else bundled_profile()
    model = MachineModel.from_profile(profile)
    rows: dict[str, list[tuple[int, float, float]]] = {}
    for m in profile.measurements:
        p = m.spec.params
        if m.spec.mechanism != "nccl" or p.get("timing", "device") != "device" or p.get("in_place") \
                or p.get("dtype", "fp32") != "fp32" or p.get("rank_time") == "this rank":
            continue
        ranks = len(m.spec.devices)
        b = cost.cost_bound(W.collective(m.spec.pattern, m.spec.message_bytes, ranks), profile, model, "graph", 1,
                            dependent_steps(m.spec.pattern, ranks), "gpu")
        rows.setdefault(m.spec.pattern, []).append((m.spec.message_bytes, b.bound_s, b.bound_s / m.median_s))
    inside = total = 0
    for coll, pts in sorted(rows.items()):
        pts.sort()
        fr = [f for _, _, f in pts]
        ok = sum(0.5 <= f <= 1.0 for f in fr)
        inside, total = inside + ok, total + len(fr)
        low = [format_size(s) for s, _, f in pts if f < 0.5]
        print(f"{coll:<15} {min(fr):5.0%} - {max(fr):5.0%}; in 50-100 %: {ok} of {len(fr)}"
              + (f"; below 50 % at {low[0]} - {low[-1]}" if low else "")
              + (f"; ABOVE 100 % at {[format_size(s) for s, _, f in pts if f > 1.0]}" if max(fr) > 1.0 else ""))
    print(f"{inside} of {total} sizes within 50-100 % of the latency-aware bound")


if __name__ == "__main__":
    main()
