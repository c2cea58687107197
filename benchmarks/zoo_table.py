"""The zoo's table for RESULTS.md from benchmarks/zoo.py's raw lines: per program its
kernels and verdict against the answer (examples/zoo/answers.toml), compare's median
against torch.utils.benchmark's, and the clock state.

    python3 benchmarks/zoo_table.py benchmarks/data/2026-12-02-8/zoo_run2.jsonl
"""

import json
import sys
import tomllib
from pathlib import Path

answers = tomllib.loads(Path("examples/zoo/answers.toml").read_text())
rows = [json.loads(line) for line in open(sys.argv[1])]
print("| program | kernels: answer / got | verdict: answer / got | compare median | torch.utils.benchmark | "
      "diff | clock state (timed calls) | compare sustained (timed again once settled) | its diff |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for r in rows:
    if r.get("part") != "time" or "error" in r:
        continue
    a = answers[r["program"]]
    want_k = a.get("kernels", f">= {a.get('kernels_min')}")
    t = r["timeline"] or {}
    check = r.get("check", {})
    got_v = check.get("verdict", ["?"])[0]
    want_v = a["verdict"] if isinstance(a["verdict"], str) else " or ".join(a["verdict"])
    tb = r.get("torch_benchmark", {}).get("median_s")
    med = r["median_s"]
    clock = (r.get("clock") or {}).get("state", "unknown")
    ok = all(v[1] for v in check.values())
    import re

    sus = next((float(m.group(1)) * 1e-6 for n in r.get("notes", []) if (m := re.match(r"sustained: ([0-9.]+) us", n))),
               None)
    sus_text = f"{sus * 1e6:.1f} us | {sus / tb - 1:+.1%}" if sus and tb else "- | -"
    print(f"| {r['program']} | {want_k} / {t.get('kernels_per_call', 0):g} | {want_v} / {got_v}"
          f"{'' if ok else ' (MISS)'} | {med * 1e6:.1f} us | {tb * 1e6:.1f} us | {med / tb - 1:+.1%} | {clock} | "
          f"{sus_text} |")
