"""How long batch-merge takes on 200 000 signed rows (issue 41, item 5: it took 6 min 52 s;
the goal is under 10 s). Writes two shards of 100 000 MAC'd rows of a realistic size,
merges them with linkroof.scoring.batch.merge, and prints the times.

    python benchmarks/batch_merge_time.py [ROWS] > benchmarks/data/.../merge_time.txt"""

import os
import sys
import tempfile
import time

from linkroof.scoring import batch as B

n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
key = b"k" * 32
with tempfile.TemporaryDirectory() as d:
    files = [os.path.join(d, f"s{i}.jsonl") for i in range(2)]
    t0 = time.perf_counter()
    for i, f in enumerate(files):
        with open(f, "w") as out:
            for j in range(i, n, 2):
                out.write(B.signed_line({"job": f"p{j % 50}::m:c{j}", "problem": f"p{j % 50}", "position": j,
                                         "candidate": f"c{j}", "correct": j % 3 != 0, "speedup": 1.0 + j % 7,
                                         "time_s": 1e-4, "feedback": "x" * 300, "trials": [{"trial": 0,
                                                                                            "result": "match"}]},
                                        key))
    t1 = time.perf_counter()
    rows, notes = B.merge(files, None, key)
    t2 = time.perf_counter()
print(f"rows {len(rows)} of {n}; notes {len(notes)}")
print(f"write {t1 - t0:.2f} s; merge {t2 - t1:.2f} s (goal: under 10 s)")
