"""Does NVIDIA's cupti-python work here, with this driver? Records the GPU activity
(kernels, copies, memsets) of a few CuPy and torch calls through CUPTI's Activity API and
prints what came back: the record counts, the kernels' names, durations, grid and block,
and whether the kernel count is the one launched. Run once per wheel version, each in
its own process (PYTHONPATH pointing at that version):

    PYTHONPATH=/tmp/cupti-13.0.1 python3 benchmarks/cupti_probe.py --json $OUT/cupti-13.0.1.json
"""

from __future__ import annotations

import argparse
import json
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", required=True)
    args = ap.parse_args()
    out: dict = {"ok": False}
    try:
        import importlib.metadata as md

        out["cupti_python"] = md.version("cupti-python")
        try:
            out["nvidia_cuda_cupti"] = md.version("nvidia-cuda-cupti")
        except md.PackageNotFoundError:
            out["nvidia_cuda_cupti"] = None
        from cupti import cupti

        records: list = []

        def requested():
            return 8 * 1024 * 1024, 0

        def completed(activities):
            records.extend(activities)

        kinds = [cupti.ActivityKind.CONCURRENT_KERNEL, cupti.ActivityKind.MEMCPY, cupti.ActivityKind.MEMSET]
        cupti.activity_register_callbacks(requested, completed)
        for k in kinds:
            cupti.activity_enable(k)
        import cupy

        x = cupy.ones(1 << 24, dtype=cupy.float32)
        cupy.cuda.Device().synchronize()
        t0 = cupti.get_timestamp()
        for _ in range(10):
            x = x * 2  # one elementwise kernel each
        x.fill(0)  # a memset or a fill kernel
        host = x[:1024].get()  # one device-to-host copy
        cupy.cuda.Device().synchronize()
        try:
            import torch

            t = torch.ones(1 << 20, device="cuda")
            for _ in range(5):
                t = t + 1
            torch.cuda.synchronize()
            out["torch"] = torch.__version__
        except Exception as e:  # noqa: BLE001
            out["torch_error"] = f"{type(e).__name__}: {e}"
        t1 = cupti.get_timestamp()
        cupti.activity_flush_all(1)
        time.sleep(0.2)
        for k in kinds:
            cupti.activity_disable(k)
        kern = [r for r in records if r.kind == cupti.ActivityKind.CONCURRENT_KERNEL]
        out.update({
            "ok": True, "records": len(records), "kernels": len(kern),
            "memcpy": sum(r.kind == cupti.ActivityKind.MEMCPY for r in records),
            "memset": sum(r.kind == cupti.ActivityKind.MEMSET for r in records),
            "window_ns": t1 - t0, "host_sum": float(host.sum()),
            "first_kernels": [{"name": r.name, "ns": r.end - r.start, "grid": [r.grid_x, r.grid_y, r.grid_z],
                               "block": [r.block_x, r.block_y, r.block_z], "device": r.device_id,
                               "stream": r.stream_id, "correlation": r.correlation_id,
                               "start": r.start, "end": r.end} for r in kern[:20]],
            "expected_kernels_at_least": 15,  # 10 CuPy multiplies + 5 torch adds
        })
    except Exception as e:  # noqa: BLE001 - the point is to see what fails, and how
        import traceback

        out["error"] = f"{type(e).__name__}: {e}"
        out["traceback"] = traceback.format_exc()[-3000:]
    with open(args.json, "w") as f:
        json.dump(out, f, indent=1, default=str)
    print(json.dumps({k: v for k, v in out.items() if k not in ("first_kernels", "traceback")}, default=str))
    if out.get("first_kernels"):
        for r in out["first_kernels"][:4]:
            print("  ", r["name"][:70], r["ns"], "ns", r["grid"], r["block"], "stream", r["stream"])
    if out.get("traceback"):
        print(out["traceback"][-800:])


if __name__ == "__main__":
    main()
