"""Markdown tables for benchmarks/RESULTS.md: per size (rows) and collective (columns),
linkroof's time per call (median over the given runs) / nccl-tests' in the same lease,
one table per timing definition (device vs -G 1, host launch vs plain); a cell is bold
where linkroof is slower.

    python3 benchmarks/results_table.py NCCL_TESTS.txt PROFILE.json [PROFILE2.json ...]
"""

import statistics
import sys

from linkroof.readers.tools import import_file
from linkroof.roofline.collectives import COLLECTIVES
from linkroof.store import load_profile_file
from linkroof.units import format_size


def main() -> None:
    nt, *profiles = sys.argv[1:]
    ours: dict = {}
    for path in profiles:
        for m in load_profile_file(path).measurements:
            p = m.spec.params
            if m.spec.mechanism == "nccl" and not p.get("in_place") and p.get("dtype") == "fp32" \
                    and p.get("rank_time") != "this rank":
                ours.setdefault((m.spec.pattern, m.spec.message_bytes, p["timing"]), []).append(m.median_s)
    theirs = {(m.spec.pattern, m.spec.message_bytes, m.spec.params["timing"]): m.median_s
              for m in import_file("nccl-tests", nt).measurements if not m.spec.params.get("in_place")}
    sizes = sorted({k[1] for k in ours})
    for timing, ref in (("device", "nccl-tests -G 1"), ("host_launch", "nccl-tests plain")):
        print(f"\n{timing} time per call, µs: linkroof / {ref}\n")
        print("| size | " + " | ".join(c.replace("_", "-") for c in COLLECTIVES) + " |")
        print("| --- |" + " --- |" * len(COLLECTIVES))
        for size in sizes:
            cells = []
            for c in COLLECTIVES:
                mine, other = ours.get((c, size, timing)), theirs.get((c, size, timing))
                if not mine or other is None:
                    cells.append("–")
                    continue
                v = statistics.median(mine)
                cell = f"{v * 1e6:.1f} / {other * 1e6:.1f}"
                cells.append(f"**{cell}**" if v > other else cell)
            print(f"| {format_size(size)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
