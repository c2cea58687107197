"""The fits table of benchmarks/RESULTS.md, from `linkroof roofline --fits --json`:

    python3 -m linkroof roofline --profile reference --fits --json | python3 benchmarks/fits_table.py
"""

import json
import sys

from linkroof.units import format_rate, format_size, format_time

doc = json.load(sys.stdin)
print("| mechanism / collective | segments (sizes: a, b) | worst error |")
print("| --- | --- | --- |")
for f in doc["fits"]:
    segs = "; ".join(f"{format_size(s['lo'])}–{format_size(s['hi'])}: {format_time(s['latency_s'])}, "
                     + (format_rate(s["bandwidth_bytes_per_s"]) if s["bandwidth_bytes_per_s"] else "–")
                     for s in f["segments"])
    print(f"| {f['name']} | {segs} | {f['worst_error']:.1%} |")
