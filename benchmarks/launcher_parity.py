"""The same collectives measured by one process driving every GPU and by one rank per
GPU under launchers (mpirun, torchrun): for each collective, size and timing
definition, the largest ratio between the profiles' medians; how many agree within a
limit, and the worst.

    python3 benchmarks/launcher_parity.py single.json mpirun.json torchrun.json [--limit 2] [--min-size 8]
"""

import argparse

from linkroof.store import load_profile_file
from linkroof.units import format_size, parse_size


def figures(path: str) -> dict:
    out = {}
    for m in load_profile_file(path).measurements:
        p = m.spec.params
        if m.spec.mechanism != "nccl" or p.get("in_place") or p.get("rank_time") == "this rank" \
                or p.get("dtype", "fp32") != "fp32" or not m.verified:
            continue
        out[(m.spec.pattern, m.spec.message_bytes, p.get("timing", "device"))] = m.median_s
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("profiles", nargs="+")
    ap.add_argument("--limit", type=float, default=2.0, help="percent")
    ap.add_argument("--min-size", default="8")
    args = ap.parse_args()
    lo = parse_size(args.min_size)
    figs = [figures(p) for p in args.profiles]
    keys = sorted(set.intersection(*(set(f) for f in figs)))
    rows = []
    for key in keys:
        if key[1] < lo:
            continue
        vals = [f[key] for f in figs]
        rows.append((max(vals) / min(vals) - 1, key, vals))
    for timing in sorted({k[2] for _, k, _ in rows}):
        mine = [r for r in rows if r[1][2] == timing]
        bad = sorted([r for r in mine if r[0] * 100 > args.limit], reverse=True)
        print(f"timing {timing}: {len(mine) - len(bad)} of {len(mine)} within {args.limit:g} % across "
              f"{len(figs)} profiles")
        for d, (coll, size, _), vals in bad[:40]:
            print(f"   {d:7.2%}  {coll:<15} {format_size(size):>9}  " + "  ".join(f"{v * 1e6:9.2f}" for v in vals) + " us")


if __name__ == "__main__":
    main()
