"""How long `linkroof.probe()` takes on this machine, excluding interpreter start-up.

Each run is a fresh process (so NVML initialisation is counted, as a user would see
it); the time is taken inside the process around the probe call alone, after
`import linkroof`. Prints JSON: every run's seconds, the median and the maximum.

    python benchmarks/probe_speed.py --runs 5 [--replay h200x2]
"""

import argparse
import json
import platform
import statistics
import subprocess
import sys

CHILD = """
import json, sys, time
import linkroof
t0 = time.perf_counter()
topo = linkroof.probe(replay={replay!r})
t1 = time.perf_counter()
print(json.dumps({{"seconds": t1 - t0, "gpus": len(topo.gpus), "source": topo.source}}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--replay", default=None, help="time a replay instead of the live driver")
    args = ap.parse_args()
    runs = []
    for _ in range(args.runs):
        out = subprocess.run([sys.executable, "-c", CHILD.format(replay=args.replay)],
                             check=True, capture_output=True, text=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    secs = [r["seconds"] for r in runs]
    print(json.dumps({"host": platform.node(), "source": runs[0]["source"], "gpus": runs[0]["gpus"],
                      "runs_s": secs, "median_s": statistics.median(secs), "max_s": max(secs)}, indent=1))


if __name__ == "__main__":
    main()
