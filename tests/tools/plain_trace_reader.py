"""A plain reader of a PyTorch profiler trace, in under 50 lines, beside which linkroof's
reading is checked (issue 42, item 9): the GPU kernels whose names say they communicate
(NCCL's, and the families of symmetric memory and custom all-reduces), their count and
summed time, and the host ProfilerSteps. It knows nothing of linkroof.

    python tests/tools/plain_trace_reader.py TRACE.json[.gz] ...
"""

import gzip
import json
import re
import sys

COMM = re.compile(r"nccl|multimem|one_shot_all_reduce|two_shot_all_reduce|cross_device_reduce|nvshmem", re.I)


def read(path):
    raw = open(path, "rb").read()
    doc = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    comm, kernels, steps = [], 0, []
    for e in doc.get("traceEvents", []):
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        if e.get("cat") == "kernel":
            kernels += 1
            if COMM.search(str(e.get("name", ""))):
                comm.append((float(e["ts"]), float(e.get("dur", 0))))
        elif e.get("cat") in ("user_annotation", "cpu_op") and str(e.get("name", "")).startswith("ProfilerStep#"):
            steps.append(e["name"])
    union, end = 0.0, None
    for ts, dur in sorted(comm):
        lo = ts if end is None else max(ts, end)
        if ts + dur > lo:
            union += ts + dur - lo
        end = ts + dur if end is None else max(end, ts + dur)
    rank = (doc.get("distributedInfo") or {}).get("rank")
    return {"rank": rank, "kernels": kernels, "comm_kernels": len(comm), "comm_sum_us": sum(d for _, d in comm),
            "comm_union_us": union, "steps": len(set(steps))}


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print(p, json.dumps(read(p)))
