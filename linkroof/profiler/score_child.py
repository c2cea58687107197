"""One target of `linkroof score` on one rank (profiler/score.py starts it, under
torchrun for several ranks): the process group (NCCL, as ParallelKernelBench's worker),
the trials' outputs saved for the parent to check, the time by the protocol, the CUPTI
timeline of more calls where it is here. What fails is written to rank_<r>_error.json
with its kind (import_error, oom, exception) before the process exits.

    python -m linkroof.profiler.score_child --fn F --inputs I --out DIR ...
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any


def _args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="linkroof.profiler.score_child")
    p.add_argument("--fn", required=True)
    p.add_argument("--inputs", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--first-trial", type=int, default=0)
    p.add_argument("--protocol", choices=("pkb", "linkroof"), default="linkroof")
    p.add_argument("--warmup", type=int, default=500)
    p.add_argument("--iters", type=int, default=100)
    p.add_argument("--m", type=int, default=1024)
    p.add_argument("--n", type=int, default=1024)
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--problem-id", type=int, default=1)
    return p.parse_args(argv)


def _write(out: Path, name: str, doc: dict) -> None:
    tmp = out / (name + ".tmp")
    tmp.write_text(json.dumps(doc, default=str))
    os.replace(tmp, out / name)


def make_inputs_factory(spec: str, problem_id: int, shape: tuple[int, int], dtype: str) -> Any:
    """(rank, world, trial) -> the arguments: `pkb:ROOT` is ParallelKernelBench's own
    create_input_tensor (its problem id from the target's file name); else a
    module:function taking (rank, world_size, trial), or nothing."""
    from .usercode import resolve

    if spec.startswith("pkb:"):
        root = spec[4:]
        sys.path.insert(0, root)
        import torch
        from utils.input_output_tensors import create_input_tensor  # PKB's, from its root

        pid = problem_id
        dt = getattr(torch, dtype)

        def pkb(rank: int, world: int, trial: int) -> tuple:
            dev = torch.device("cuda", rank % max(1, torch.cuda.device_count()))
            return tuple(create_input_tensor(rank, world, pid, shape, dt, trial=trial, device=dev))

        return pkb
    f = resolve(spec)
    try:
        takes = len(inspect.signature(f).parameters)
    except (TypeError, ValueError):
        takes = 3
    if takes >= 3:
        return lambda rank, world, trial: tuple(_as_tuple(f(rank, world, trial)))
    return lambda rank, world, trial: tuple(_as_tuple(f()))


def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _save(out: Path, trial: int, rank: int, y: Any) -> None:
    import numpy as np

    from .usercode import to_numpy

    leaves: list[Any] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for k in sorted(v):
                walk(v[k])
        elif isinstance(v, (list, tuple)):
            for w in v:
                walk(w)
        else:
            leaves.append(to_numpy(v) if hasattr(v, "shape") else np.asarray(v))

    walk(y)
    np.savez(out / f"trial_{trial}_rank_{rank}.npz", **{f"out_{i}": a for i, a in enumerate(leaves)})


def _pkb_perf(fn: Any, x: tuple, warmup: int, iters: int) -> tuple[dict, list]:
    """ParallelKernelBench's measure_solution_performance, step by step; with the
    input groups it cycled."""
    import torch

    from .score import PKB_DEFAULT_L2, first_tensor_path, num_input_groups, pkb_metrics, substitute

    path = first_tensor_path(x, lambda a: isinstance(a, torch.Tensor))
    if path is None:
        raise RuntimeError("the inputs hold no torch.Tensor: nothing to time by PKB's protocol")
    i, j = path
    tensor = x[i] if j is None else x[i][j]
    try:
        l2 = int(torch.cuda.get_device_properties(tensor.device).l2_cache_size) or PKB_DEFAULT_L2
    except Exception:  # noqa: BLE001 - PKB's fallback
        l2 = PKB_DEFAULT_L2
    nbytes = int(tensor.element_size() * tensor.numel())
    groups = num_input_groups(nbytes, l2)
    clones = [tensor.clone() for _ in range(groups)]
    run = [substitute(x, path, c) for c in clones]
    torch.cuda.synchronize()
    for k in range(warmup):
        fn(*run[k % groups])
    torch.cuda.synchronize()
    events = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
    events[0].record()
    for k in range(iters):
        fn(*run[k % groups])
        events[k + 1].record()
    torch.cuda.synchronize()
    per = [float(events[k].elapsed_time(events[k + 1])) for k in range(iters)]
    perf = pkb_metrics(per, float(events[0].elapsed_time(events[iters])), warmup, groups, l2, nbytes)
    return perf, run


def _counters(local: int) -> tuple[Any, str]:
    """NVML's NVLink / PCIe byte counters of this rank's GPU (compare's), or None, and
    why the NVLink bytes will be unknown where they will be."""
    try:
        from .counters import NvmlCounters
        from .probe import probe

        topo = probe()
        gpu = next(g for g in topo.gpus if g.index == local % max(1, len(topo.gpus)))
        why = "" if gpu.nvlinks else f"NVML lists no active NVLink on GPU {gpu.index}"
        return NvmlCounters([gpu.index], {gpu.index: len(gpu.nvlinks)}), why
    except Exception as e:  # noqa: BLE001 - no counters: the row says the link bytes are unknown, and why
        return None, f"NVML's counters could not be read ({type(e).__name__}: {str(e)[:120]})"


def _linkroof_perf(name: str, fn: Any, x: tuple, local: int = 0) -> dict:
    from .compare import CudaTimer, run_callable

    counters, why = _counters(local)
    r = run_callable(name, fn, lambda: x, CudaTimer("torch"), counters, reps=50, warmup=10)
    link = r.link_bytes()
    return {"median_ms": r.median_s * 1e3, "times_ms": [t * 1e3 for t in r.times_s],
            "host_ms_per_call": r.host_s_per_call * 1e3, "how": "linkroof: ungated median of batches (compare's)",
            "link_bytes_per_call": link,
            "link_bytes_note": None if link is not None else (why or "NVML gave no NVLink byte counts")}


def _timeline(fn: Any, runs: list, measured_s: float, host_s: float) -> dict | None:
    """The CUPTI timeline of 20 more calls, apart from the timed ones, on the inputs as
    the timed loop cycled them (PKB's input groups; compare's one set): the decomposition."""
    from .compare import CuptiRecorder

    rec = CuptiRecorder()
    ok, why = rec.available()
    if not ok:
        return {"note": why}
    import torch

    from ..roofline.timeline import host_verdict, summarize, timed_parts, with_host

    acts, starts, host = rec.record(20, lambda i: fn(*runs[i % len(runs)]), torch.cuda.synchronize)
    t = summarize(acts, starts, host, "cupti")
    try:  # what the host did while the GPU idled (compare's second pass): names a sync, host work or launches
        t = with_host(t, *rec.record_host(20, lambda i: fn(*runs[i % len(runs)]), torch.cuda.synchronize))
    except Exception:  # noqa: BLE001 - the GPU-side timeline stands without it
        pass
    timed, scaled = timed_parts(t, measured_s)  # compare's decomposition of the same facts
    parts = {k: v for k, v, _ in timed}
    return {"note": why + (f"; {scaled}" if scaled else ""), "kernels_per_call": t.kernels_per_call, "busy_s": t.busy_s,
            "exposed_communication_s": t.exposed_communication_s, "parts": parts,
            "kernels": [{"name": k.name[:200], "class": k.kernel_class, "launches_per_call": k.launches_per_call,
                         "time_per_call_s": k.time_per_call_s} for k in t.kernels[:20]],
            "launch_verdict": host_verdict(t, measured_s)}


def main(argv: list[str]) -> int:
    a = _args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rank, world = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    local = int(os.environ.get("LOCAL_RANK", rank))
    phase = "import"
    try:
        import torch
        import torch.distributed as dist

        torch.cuda.set_device(local % max(1, torch.cuda.device_count()))
        try:
            dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", local))
        except TypeError:
            dist.init_process_group("nccl", rank=rank, world_size=world)
        from .usercode import resolve

        fn = resolve(a.fn)
        make = make_inputs_factory(a.inputs, a.problem_id, (a.m, a.n), a.dtype)
        phase = "trials"
        for k, t in enumerate(range(a.first_trial, a.first_trial + a.trials)):
            x = make(rank, world, t)
            y = fn(*x)
            torch.cuda.synchronize()
            _save(out, t, rank, y)
            _write(out, f"rank_{rank}_trials.json", {"done": k + 1})
        dist.barrier()
        phase = "timing"
        x = make(rank, world, a.first_trial)  # timed on the first trial's inputs (PKB: each trial's job times its own)
        t0 = time.perf_counter()
        if a.protocol == "pkb":
            perf, runs = _pkb_perf(fn, x, a.warmup, a.iters)
        else:
            perf, runs = _linkroof_perf(a.fn.rsplit(":", 1)[-1], fn, x, local), [x]
        perf["protocol"] = a.protocol
        measured = (perf.get("wall_time_ms") or perf.get("median_ms")) / 1e3
        host = perf.get("host_ms_per_call", measured * 1e3) / 1e3
        perf["timing_wall_s"] = time.perf_counter() - t0
        dist.barrier()
        phase = "timeline"
        try:
            perf["timeline"] = _timeline(fn, runs, measured, host)
        except Exception as e:  # noqa: BLE001 - the timeline explains; the time stands without it
            perf["timeline"] = {"note": f"no CUPTI timeline ({type(e).__name__}: {str(e)[:200]})"}
        _write(out, f"rank_{rank}_perf.json", perf)
        dist.barrier()
        dist.destroy_process_group()
        return 0
    except BaseException as e:  # noqa: BLE001 - every failure becomes a row, never a lost candidate
        kind = "exception"
        if phase == "import" and isinstance(e, (ImportError, SyntaxError, AttributeError, FileNotFoundError)):
            kind = "import_error"
        try:
            import torch

            if isinstance(e, torch.cuda.OutOfMemoryError):
                kind = "oom"
        except ImportError:
            pass
        if kind == "exception" and "out of memory" in str(e).lower():
            kind = "oom"
        _write(out, f"rank_{rank}_error.json", {"kind": kind, "phase": phase, "rank": rank,
                                               "message": f"{type(e).__name__}: {str(e)[:1000]}",
                                               "traceback": traceback.format_exc()[-4000:]})
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
