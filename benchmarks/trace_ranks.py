"""Many ranks read in parallel: does the time per rank stay what one rank alone takes?
Generates RANKS traces of SIZE_MB each (benchmarks/trace_speed.py's shape: 40 GEMMs and
an all-reduce per step, with the all-reduce's Seq, so every call matches across ranks),
then times, each in a fresh process: one rank read and placed alone; all ranks with the
local engine (one process per core); all ranks on a local Dask cluster (as many worker
processes). Time per rank = wall x workers / ranks. Issue 30's target: 64 ranks read in
parallel with the time per rank unchanged.

    python3 benchmarks/trace_ranks.py [RANKS] [SIZE_MB]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from linkroof.profiler.session import bundled_profile
from linkroof.readers.traces import analyze_job
engine, workers, files = sys.argv[2], int(sys.argv[3]), sys.argv[4:]
t0 = time.perf_counter()
rep = analyze_job(files, bundled_profile(), engine=engine, workers=workers)
print(json.dumps({"wall_s": time.perf_counter() - t0, "rows": len(rep.rows), "matched": len(rep.matched),
                  "unmatched": len(rep.unmatched), "ranks": len(rep.traces)}))
"""


def run(engine: str, workers: int, files: list[str]) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), engine, str(workers), *files], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    from trace_speed import generate

    ranks = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    size_mb = float(sys.argv[2]) if len(sys.argv) > 2 else 8
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        files = []
        for r in range(ranks):
            p = Path(d) / f"rank{r}.json"
            generate(p, int(size_mb * 1e6), rank=r, world=ranks)
            files.append(str(p))
        print(f"generated {ranks} x {size_mb} MB in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        alone = run("local", 1, files[:1])
        res = {"ranks": ranks, "file_mb": os.path.getsize(files[0]) / 1e6, "cores": cores,
               "one_rank_alone_s": alone["wall_s"]}
        for engine in ("local", "dask"):
            got = run(engine, cores, files)
            res[engine] = {**got, "per_rank_s": got["wall_s"] * cores / ranks,
                           "per_rank_vs_alone": got["wall_s"] * cores / ranks / alone["wall_s"]}
        print(json.dumps(res))


if __name__ == "__main__":
    main()
