"""compare's figures to reach, on two GPUs: a 1 GiB copy-engine peer copy lands at
>= 97 % of its measured ceiling with counter bytes within 1 % of 1 GiB, and compare
adds under 1 s to the user's own warm-up and repetitions.

    python benchmarks/compare_targets.py [--profile PROFILE.json]
"""

import argparse
import json

from linkroof.profiler.compare import run_compare
from linkroof.store import load_profile_file


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", help="profile of this machine (default: the bundled reference)")
    args = ap.parse_args()
    prof = load_profile_file(args.profile) if args.profile else None
    out = run_compare("examples/peer_copy_cupy.py:ce_copy", "examples/peer_copy_cupy.py:make_inputs",
                      workload_path="examples/peer_copy.toml", profile=prof, reps=30, warmup=5)
    r, p = out.result, out.placements[0]
    print(json.dumps({"median_s": r.median_s, "GBps": (1 << 30) / r.median_s / 1e9,
                      "fraction_of_measured_roofline": p.fraction_of_roofline,
                      "counter_bytes_per_call": r.link_bytes(), "counter_vs_1GiB": (r.link_bytes() or 0) / (1 << 30),
                      "compare_overhead_s": r.overhead_s}, indent=1))


if __name__ == "__main__":
    main()
