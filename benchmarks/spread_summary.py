"""How many figures of repeated runs stay within a spread, per timing definition, and
which do not: reads `linkroof runs spread --json` on stdin.

    python3 -m linkroof runs spread A.json B.json C.json --mechanism nccl --min-size 1M --json \\
      | python3 benchmarks/spread_summary.py [--limit 3]
"""

import argparse
import json
import sys


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=float, default=3.0, help="percent")
    args = ap.parse_args()
    figures = json.load(sys.stdin)["figures"]
    groups: dict[str, list[dict]] = {}
    for f in figures:
        timing = next((w.split("=", 1)[1] for w in f["figure"].split() if w.startswith("timing=")), "-")
        groups.setdefault(timing, []).append(f)
    for timing, fs in sorted(groups.items()):
        over = [f for f in fs if f["spread_percent"] > args.limit]
        print(f"timing {timing}: {len(fs) - len(over)} of {len(fs)} within {args.limit:g} % (full spread)")
        for f in sorted(over, key=lambda f: -f["spread_percent"]):
            print(f"   {f['spread_percent']:6.2f} %  IQR {f['iqr_percent']:5.2f} %  {f['median']:>12}  {f['figure']}")


if __name__ == "__main__":
    main()
