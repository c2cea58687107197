"""Sweep the knobs of the SM and TMA peer copies (loads in flight, blocks, threads,
chunk, stages) on one GPU pair, to find the plateau. Prints a table, writes JSON.

    python benchmarks/tune_copies.py --out tune.json [--src 0 --dst 1] [--size 512M] [--quick]
"""

import argparse
import itertools
import json
import sys
import time

from linkroof.microbench import copies
from linkroof.units import parse_size


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", type=int, default=0)
    ap.add_argument("--dst", type=int, default=1)
    ap.add_argument("--size", default="512M")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--out", default=None)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    n = parse_size(args.size)
    rows = []

    def run(label, **kw):
        t0 = time.perf_counter()
        try:
            ms = copies.peer_copy(args.src, args.dst, nbytes=n, reps=args.reps, **kw)
            m = ms[0]
            row = {"label": label, **kw, "GBps": m.bandwidth_bytes_per_s / 1e9, "cv": m.cv, "verified": m.verified,
                   "verification": m.verification}
        except Exception as e:  # noqa: BLE001
            row = {"label": label, **kw, "error": f"{type(e).__name__}: {e}"}
        row["wall_s"] = time.perf_counter() - t0
        rows.append(row)
        print(json.dumps(row), flush=True)

    for mode in ("read", "write"):
        run(f"ce {mode}", mode=mode, mechanism="ce")
    unrolls = (4, 8) if args.quick else (1, 4, 8, 12)
    blocks = (264,) if args.quick else (132, 264, 528, 1056)
    threads = (512,) if args.quick else (256, 512, 1024)
    for mode, u, b, t in itertools.product(("read", "write"), unrolls, blocks, threads):
        run(f"sm {mode}", mode=mode, mechanism="sm", unroll=u, blocks=b, threads=t)
    chunks = (16384,) if args.quick else (4096, 8192, 16384, 32768, 65536)
    stages = (2, 4) if args.quick else (2, 3, 4)
    tblocks = (132, 264) if args.quick else (132, 264, 396)
    for mode, c, s, b in itertools.product(("read", "write"), chunks, stages, tblocks):
        if c * s > 200 * 1024:
            continue
        run(f"tma {mode}", mode=mode, mechanism="tma", chunk=c, stages=s, blocks=b)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)
    print("\nbest per mechanism and mode:", file=sys.stderr)
    for key in ("ce read", "ce write", "sm read", "sm write", "tma read", "tma write"):
        ok = [r for r in rows if r["label"] == key and "GBps" in r and r["verified"]]
        if ok:
            best = max(ok, key=lambda r: r["GBps"])
            print(f"  {key:10s} {best['GBps']:7.1f} GB/s  {best}", file=sys.stderr)


if __name__ == "__main__":
    main()
