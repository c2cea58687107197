"""linkroof's collectives against nccl-tests run in the same lease, size by size and in
both timing definitions: linkroof's device time against nccl-tests -G 1 (graph
replay), its per-call time with the host's launch against nccl-tests without -G.

    python3 benchmarks/compare_nccl_tests.py PROFILE.json [PROFILE2.json ...] NCCL_TESTS_OUTPUT.txt [--min-size 1M]

With several profiles (repeated runs), each figure is the median over the runs, and the
worst run is shown beside it.
"""

import argparse
import statistics
import sys

from linkroof.readers.tools import import_file
from linkroof.store import load_profile_file
from linkroof.units import format_size, parse_size


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+", help="linkroof profiles, then the nccl-tests output")
    ap.add_argument("--min-size", default="8")
    args = ap.parse_args()
    lo = parse_size(args.min_size)
    *profiles, nccl_tests = args.files
    runs: dict = {}
    for path in profiles:
        for m in load_profile_file(path).measurements:
            p = m.spec.params
            if m.spec.mechanism == "nccl" and not p.get("in_place") and p.get("dtype") == "fp32" and p.get("timing"):
                runs.setdefault((m.spec.pattern, m.spec.message_bytes, p["timing"]), []).append(m)
    theirs = {}
    for m in import_file("nccl-tests", nccl_tests).measurements:
        p = m.spec.params
        if not p.get("in_place"):
            theirs[(m.spec.pattern, m.spec.message_bytes, p["timing"])] = m.median_s
    rows, worse, worst_worse = [], 0, 0
    for (coll, size, timing), ms in sorted(runs.items()):
        ref = theirs.get((coll, size, timing))
        if ref is None or size < lo:
            continue
        medians = sorted(m.median_s for m in ms)
        median = statistics.median(medians)
        ratio, worst = median / ref, medians[-1] / ref
        worse += ratio > 1.0
        worst_worse += worst > 1.0
        methods = ",".join(sorted({str(m.spec.params.get("method", "")) for m in ms}))
        rows.append(f"{coll:<15} {format_size(size):>9} {timing:<12} linkroof {median * 1e6:9.2f} us  "
                    f"nccl-tests{' -G 1' if timing == 'device' else '     '} {ref * 1e6:9.2f} us  x{ratio:.3f} "
                    f"{'ok' if ratio <= 1.0 else 'SLOWER'}  worst run x{worst:.3f}  ({methods})")
    print("\n".join(rows))
    print(f"{len(rows)} compared over {len(profiles)} run(s): median {worse} slower than nccl-tests, "
          f"worst run {worst_worse} slower")
    return 0


if __name__ == "__main__":
    sys.exit(main())
