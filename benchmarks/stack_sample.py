"""Where a command's wall time goes, by sampling the main thread's Python stack every
INTERVAL_S (default 20 ms) from a thread beside it: unlike cProfile, time spent inside C
calls (NVRTC, the driver, cuBLAS) and in waits is charged to the Python line that made the
call. Prints the innermost frames, and the innermost linkroof frames, by share of samples.

    python3 benchmarks/stack_sample.py -m linkroof bench --no-save
"""

from __future__ import annotations

import collections
import os
import runpy
import sys
import threading
import time

sys.path.insert(0, os.getcwd())  # run from the repository's root: its package, not benchmarks/
INTERVAL_S = float(os.environ.get("INTERVAL_S", "0.02"))


def main() -> None:
    if len(sys.argv) < 3 or sys.argv[1] != "-m":
        raise SystemExit(__doc__)
    module, sys.argv = sys.argv[2], [sys.argv[2]] + sys.argv[3:]
    main_id = threading.get_ident()
    leaf, ours, chains = collections.Counter(), collections.Counter(), collections.Counter()
    stop = threading.Event()
    n = [0]

    def where(f):
        return f"{f.f_code.co_filename.split('site-packages/')[-1].replace(os.getcwd() + '/', '')}:{f.f_lineno} {f.f_code.co_name}"

    def sample():
        while not stop.wait(INTERVAL_S):
            f = sys._current_frames().get(main_id)
            if f is None:
                continue
            n[0] += 1
            leaf[where(f)] += 1
            stack = []
            while f is not None:
                stack.append(f)
                f = f.f_back
            mine = [g for g in stack if "linkroof/" in g.f_code.co_filename and "stack_sample" not in g.f_code.co_filename]
            if mine:
                ours[where(mine[0])] += 1
                chains[" < ".join(where(g) for g in mine[:4])] += 1

    t = threading.Thread(target=sample, daemon=True)
    t0 = time.perf_counter()
    t.start()
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit:
        pass
    finally:
        stop.set()
        wall = time.perf_counter() - t0
        out = sys.stderr
        print(f"\n== {n[0]} samples every {INTERVAL_S * 1e3:.0f} ms over {wall:.1f} s", file=out)
        for title, c in (("innermost frames", leaf), ("innermost linkroof frames", ours), ("linkroof chains", chains)):
            print(f"-- {title}", file=out)
            for k, v in c.most_common(25):
                print(f"{v * INTERVAL_S:7.2f} s {100 * v / max(n[0], 1):5.1f} %  {k}", file=out)


if __name__ == "__main__":
    main()
