"""The example dots of the Roofline page where the bundled reference is shown (no GPU
here, no placements of your own yet): the zoo's twelve kernels that Nsight Compute
counted on one H200 (2026-12-02; each placed by its CUPTI time per call and its counted
work, as `compare --counters` does) and a 128 MiB all-reduce through a clone, 537.2 us on
2 x H200 (benchmarks/data/2026-11-30-6). Measured, on linkroof's developers' machines,
not on yours: the page says so.

    python examples/roofline/make_placements.py [OUT]   # default: linkroof/data/examples.placements.json
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    from linkroof.profiler import ncu as N
    from linkroof.profiler.session import bundled_profile
    from linkroof.roofline import timeline as T
    from linkroof.roofline import workload as W
    from linkroof.roofline.baseline import kernel_group_placements
    from linkroof.roofline.model import MachineModel
    from linkroof.roofline.place import place
    from linkroof.schema import Profile, dumps, loads

    zoo = ROOT / "tests" / "data" / "zoo"
    recorded = json.loads(gzip.open(zoo / "recordings.json.gz", "rt").read())
    pages = json.loads(gzip.open(zoo / "ncu.json.gz", "rt").read())
    model = MachineModel.from_profile(bundled_profile())
    placed = [place(W.collective("all_reduce", 134217728, 2), 537.2479856014252e-6, model)]
    for name in sorted(pages):
        acts, starts, host_of = T.from_record(recorded[name])
        kernels, _, _ = kernel_group_placements(name, T.summarize(acts, starts, host_of),
                                                N.read_page(pages[name]).per_name(), model)
        placed += kernels
    placed = [dataclasses.replace(p, workload=dataclasses.replace(p.workload, name=f"example: {p.workload.name}"))
              for p in placed]
    ref = bundled_profile()
    doc = dataclasses.replace(ref, id="examples", label="examples: " + " ".join(__doc__.split("\n\n")[0].split()),
                              measurements=(), skipped=(), placements=tuple(placed))
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "linkroof" / "data" / "examples.placements.json"
    text = dumps(doc) + "\n"
    assert len(loads(text, Profile).placements) == len(placed)  # read back before it is written
    out.write_text(text)
    print(f"wrote {out}: {len(placed)} placements")


if __name__ == "__main__":
    main()
