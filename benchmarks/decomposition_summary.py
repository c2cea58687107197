"""For `linkroof compare --json` outputs: each kernel's measured time, its
decomposition into the cost model's terms, the share left unexplained, the NCCL
baseline (size, data type, how) and the wire efficiency.

    python3 benchmarks/decomposition_summary.py case-*.json
"""

import json
import sys


def main() -> None:
    for path in sys.argv[1:]:
        text = open(path).read()
        if "{" not in text:
            print(f"{path}: no output")
            continue
        doc = json.loads(text[text.index("{"):])
        p = next(x for x in doc["placements"] if x["ceilings_kind"] == "measured")
        t = p["measured_time_s"]
        d = p["decomposition_s"]
        left = d.get("unexplained", float("nan"))
        terms = ", ".join(f"{k} {v * 1e6:.1f}" for k, v in d.items() if v)
        base = next((n for n in doc["notes"] if n.startswith("NCCL baseline")), "no NCCL baseline")
        wire = next((f for f in p["flags"] if f.startswith("wire efficiency")), "")
        wire = wire or next((n for n in doc["notes"] if "NVLink bytes per call" in n), "no counter bytes")
        print(f"{p['workload']['name']}: measured {t * 1e6:.1f} us; {terms} (us); unexplained "
              f"{abs(left) / t:.1%}{' (negative)' if left < 0 else ''}; cost bound {p['cost_bound_s'] * 1e6:.1f} us "
              f"({p['cost_bound_s'] / t:.1%}), bandwidth-only {p['bound_time_s'] * 1e6:.1f} us; launch share "
              f"{(doc.get('launch_share_s') or 0) * 1e6:.1f} us\n   {base}\n   {wire}")


if __name__ == "__main__":
    main()
