"""linkroof's collectives against nccl-tests run in the same lease, size by size and in
both timing definitions: linkroof's device time against nccl-tests -G 1 (graph
replay), its per-call time with the host's launch against nccl-tests without -G.

    python3 benchmarks/compare_nccl_tests.py PROFILE.json NCCL_TESTS_OUTPUT.txt [--min-size 1M]
"""

import argparse
import sys

from linkroof.profiler.importers import import_file
from linkroof.store import load_profile_file
from linkroof.units import format_size, parse_size


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("nccl_tests")
    ap.add_argument("--min-size", default="8")
    args = ap.parse_args()
    lo = parse_size(args.min_size)
    ours = {}
    for m in load_profile_file(args.profile).measurements:
        p = m.spec.params
        if m.spec.mechanism == "nccl" and not p.get("in_place") and p.get("dtype") == "fp32" and p.get("timing"):
            ours[(m.spec.pattern, m.spec.message_bytes, p["timing"])] = m
    theirs = {}
    for m in import_file("nccl-tests", args.nccl_tests).measurements:
        p = m.spec.params
        if not p.get("in_place"):
            theirs[(m.spec.pattern, m.spec.message_bytes, p["timing"])] = m.median_s
    rows, worse = [], 0
    for (coll, size, timing), m in sorted(ours.items()):
        ref = theirs.get((coll, size, timing))
        if ref is None or size < lo:
            continue
        ratio = m.median_s / ref
        ok = ratio <= 1.0
        worse += not ok
        rows.append(f"{coll:<15} {format_size(size):>9} {timing:<12} linkroof {m.median_s * 1e6:9.2f} us  "
                    f"nccl-tests{' -G 1' if timing == 'device' else '     '} {ref * 1e6:9.2f} us  x{ratio:.3f} "
                    f"{'ok' if ok else 'SLOWER'}  ({m.spec.params.get('method', '')})")
    print("\n".join(rows))
    print(f"{len(rows)} compared, {worse} slower than nccl-tests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
