"""How long `linkroof batch-merge` takes on 200 000 signed rows (issue 41, item 5: it took
6 min 52 s; the goal is under 10 s).

Writes, in a temporary folder, a manifest of 50 problems x 4000 candidates and two
shards of 100 000 rows as `batch` writes them (the row's fields, a 300-character
feedback, a trial, the manifest's identity, a MAC under a 0600 key file), then times:

- merge: linkroof.scoring.batch.merge with the manifest (each line read, its MAC and
  shape checked, its manifest's identity compared, sorted into manifest order);
- cli: the whole command, as a user runs it, in a fresh process
  (`python -m linkroof batch-merge s0.jsonl s1.jsonl --manifest batch.toml --key-file key
  --results all.jsonl`, its table to a file): loading the manifest, the merge, the
  200 000 signed lines written, the table and the summary.

The 6 min 52 s were the CLI's: its table drew every one of the 200 000 rows (rich lays
out every cell of every row; 20 000 rows took 36 s here). The table now shows the first
200 rows and says how many more --json and --results hold.

    python benchmarks/batch_merge_time.py [ROWS] > benchmarks/data/2026-12-03-merge/merge_time.txt
"""

import json
import os
import platform
import subprocess
import sys
import tempfile
import time

from linkroof.scoring import batch as B

n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
problems_n = 50
per = -(-n // problems_n)
print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores; rows {n}")
with tempfile.TemporaryDirectory() as d:
    os.chdir(d)
    with open("m.py", "w") as f:
        f.write("def reference(): pass\ndef inputs(): pass\n")
    with open("batch.toml", "w") as f:
        f.write("[defaults]\ninputs = \"m:inputs\"\n")
        for p in range(problems_n):
            f.write(f"[[problem]]\nname = \"p{p}\"\nreference = \"m:reference\"\n"
                    f"candidates = {json.dumps([f'm:c{p}_{j}' for j in range(per)])}\n")
    fd = os.open("key", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, os.urandom(32))
    os.close(fd)
    key = B.results_key("key")
    problems = B.load_manifest("batch.toml")
    jobs = B.jobs_of(problems)[:n]
    t0 = time.perf_counter()
    with open("s0.jsonl", "w") as s0, open("s1.jsonl", "w") as s1:
        for j in jobs:
            row = {"job": j.key, "problem": j.problem.name, "position": j.position, "candidate": j.candidate[2:],
                   "spec": j.candidate, "protocol": "linkroof", "ranks": 1, "correct": j.position % 3 != 0,
                   "speedup": 1.0 + j.position % 7, "time_s": 1e-4, "reference_time_s": 1.5e-4,
                   "failure": None, "feedback": "x" * 300, "gpus": ["0"], "reference_gpus": ["0"],
                   "trials": [{"trial": 0, "result": "match", "max_abs_err": 0.0, "max_rel_err": 0.0}],
                   "shard": f"{j.position % 2}/2", "finished": "2026-12-03T12:00:00+0000",
                   "manifest_sha256": j.problem.manifest_sha256}
            (s0 if j.position % 2 == 0 else s1).write(B.signed_line(row, key))
    t1 = time.perf_counter()
    rows, notes = B.merge(["s0.jsonl", "s1.jsonl"], problems, key)
    t2 = time.perf_counter()
    assert len(rows) == n and [r["position"] for r in rows] == list(range(n)), "merge lost or misordered rows"
    assert not [x for x in notes if "refused" in x], notes
    env = dict(os.environ, COLUMNS="160")
    with open("table.txt", "w") as out:
        t3 = time.perf_counter()
        res = subprocess.run([sys.executable, "-m", "linkroof", "batch-merge", "s0.jsonl", "s1.jsonl", "--manifest",
                              "batch.toml", "--key-file", "key", "--results", "all.jsonl"], stdout=out,
                             stderr=subprocess.PIPE, text=True, env=env)
        t4 = time.perf_counter()
    assert res.returncode == 0, res.stderr
    with open("all.jsonl") as f:
        written = sum(1 for _ in f)
    assert written == n, written
    size = os.path.getsize("s0.jsonl") + os.path.getsize("s1.jsonl")
print(f"shards: 2 files, {size / 1e6:.0f} MB, {size / n:.0f} B a row; written in {t1 - t0:.2f} s")
print(f"merge (linkroof.scoring.batch.merge, with the manifest): {t2 - t1:.2f} s for {len(rows)} rows")
print(f"cli (python -m linkroof batch-merge ... --results all.jsonl, a fresh process): {t4 - t3:.2f} s, "
      f"{written} rows written; its summary: {res.stderr.strip().splitlines()[-1][:60]} ...")
print(f"goal: under 10 s: {'met' if t4 - t3 < 10 else 'NOT met'}")
