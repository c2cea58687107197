"""The table RESULTS.md cites for `compare --counters` and the timing checks, from the
files benchmarks/one_gpu_counters.sh leaves (unpacked counters.tgz): per program, the
DRAM bytes compare counted against ncu run by hand on the same kernel (medians of five
calls), compare's gated time against ncu's gpu__time_duration (caches flushed, and for
two programs not flushed), the ungated median against torch.utils.benchmark.

    python3 benchmarks/counters_summary.py /tmp/counters
"""

import csv
import json
import statistics
import sys
from pathlib import Path

d = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/counters")
tb = {j["case"]: j["median_s"] for j in map(json.loads, (d / "torch_benchmark.jsonl").read_text().splitlines())}


def page(name):
    """Per call, the sum over the call's kernels of each .sum metric, median over calls."""
    p = d / name
    if not p.exists():
        return None
    rows = [r for r in csv.reader(ln for ln in p.read_text().splitlines() if ln.startswith('"'))]
    head, body = rows[0], [r for r in rows[2:] if len(r) == len(rows[0])]
    col = {m: head.index(m) for m in ("dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum")}
    names = [r[head.index("Kernel Name")] for r in body]
    per = len(body) // max(1, len(set(names))) if len(set(names)) == 1 else None
    calls = 5 if len(body) % 5 == 0 else 1
    k = len(body) // calls
    out = {}
    for m, i in col.items():
        v = [float(r[i].replace(",", "")) for r in body]
        out[m] = statistics.median(sum(v[c * k:(c + 1) * k]) for c in range(calls))
    return out


def pct(a, b):
    return f"{100 * (a / b - 1):+.1f} %"


print("| program | DRAM bytes, compare --counters | ncu by hand | diff | gated | ncu time (flushed) | diff "
      "| ncu time (not flushed) | diff | ungated | torch.utils.benchmark | diff |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for name in ("scale", "gemm1024", "gemm8192", "layernorm", "chain"):
    j = json.loads((d / f"{name}.json").read_text())
    counted = sum(v.get("dram_read_bytes", 0) + v.get("dram_write_bytes", 0) for v in (j["kernel_counters"] or {}).values())
    plain, hot = page(f"{name}.plain.csv"), page(f"{name}.hot.csv")
    by_hand = plain["dram__bytes_read.sum"] + plain["dram__bytes_write.sum"]
    g = sorted(j["gated_times_s"])
    gated = g[len(g) // 2] if g else None
    t_ncu = plain["gpu__time_duration.sum"] * 1e-9
    row = [name, f"{counted / 1e6:,.1f} MB", f"{by_hand / 1e6:,.1f} MB", pct(counted, by_hand),
           f"{gated * 1e6:.2f} us" if gated else "-", f"{t_ncu * 1e6:.2f} us", pct(gated, t_ncu) if gated else "-"]
    if hot:
        t_hot = hot["gpu__time_duration.sum"] * 1e-9
        row += [f"{t_hot * 1e6:.2f} us", pct(gated, t_hot) if gated else "-"]
    else:
        row += ["-", "-"]
    row += [f"{j['median_s'] * 1e6:.2f} us", f"{tb[name] * 1e6:.2f} us", pct(j["median_s"], tb[name])]
    print("| " + " | ".join(row) + " |")
