"""`linkroof compare`: time a user's Python callable on the GPU, count the bytes that
really crossed the links, and place it (with its reference and the matching NCCL
baseline) on the machine's roofline.

The orchestration is separate from the GPU: a `Timer` (CUDA events through CuPy or
PyTorch) and `Counters` (NVML's per-link NVLink data counters and PCIe byte counters)
are passed in, so the whole flow is tested on CPUs with fakes.
"""

from __future__ import annotations

import importlib
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import LinkroofError
from ..schema import Measurement, Placement, Profile, Workload, known
from . import nvml as q


class CompareError(LinkroofError):
    """A callable cannot be found, called or checked; the message says which."""


def resolve(spec: str) -> Callable[..., Any]:
    """'pkg.module:function' or 'path/to/file.py:function' -> the function."""
    if ":" not in spec:
        raise CompareError(f"{spec!r}: expected module:function or file.py:function")
    target, name = spec.rsplit(":", 1)
    try:
        if target.endswith(".py"):
            path = Path(target)
            if not path.is_file():
                raise CompareError(f"{spec}: no file {target}")
            module_spec = importlib.util.spec_from_file_location(path.stem, path)
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[path.stem] = module
            module_spec.loader.exec_module(module)
        else:
            if "" not in sys.path and "." not in sys.path:
                sys.path.insert(0, "")  # the user's working directory, as python -c does
            module = importlib.import_module(target)
    except CompareError:
        raise
    except Exception as e:  # noqa: BLE001 - any import failure is the user's to see, in one line
        raise CompareError(f"{spec}: cannot import {target} ({type(e).__name__}: {e})") from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise CompareError(f"{spec}: {target} has no callable {name!r}")
    return fn


def _arrays(obj: Any) -> list[Any]:
    """Array-likes (CuPy, PyTorch, NumPy) found in nested args."""
    if hasattr(obj, "nbytes") and hasattr(obj, "shape"):
        return [obj]
    if isinstance(obj, dict):
        return [a for v in obj.values() for a in _arrays(v)]
    if isinstance(obj, (list, tuple)):
        return [a for v in obj for a in _arrays(v)]
    return []


def input_bytes(args: Any) -> int:
    return int(sum(int(a.nbytes) for a in _arrays(args)))


def _call(fn: Callable[..., Any], args: Any) -> Any:
    if isinstance(args, dict):
        return fn(**args)
    if isinstance(args, (list, tuple)):
        return fn(*args)
    return fn(args)


def to_numpy(x: Any) -> Any:
    import numpy as np

    if hasattr(x, "detach"):  # torch
        return x.detach().cpu().numpy()
    if hasattr(x, "get"):  # cupy
        return x.get()
    return np.asarray(x)


class Timer:
    """GPU time of one call: CUDA events around it on the current stream."""

    def sync(self) -> None:
        raise NotImplementedError

    def time_calls(self, call: Callable[[int], Any], reps: int) -> list[float]:
        raise NotImplementedError


class CudaTimer(Timer):
    """CuPy's or PyTorch's events on its current stream (whichever the inputs use)."""

    def __init__(self, framework: str):
        self.framework = framework

    def sync(self) -> None:
        if self.framework == "torch":
            import torch

            torch.cuda.synchronize()
        else:
            import cupy

            cupy.cuda.Device().synchronize()

    def time_calls(self, call: Callable[[int], Any], reps: int) -> list[float]:
        if self.framework == "torch":
            import torch

            ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
            for i, (a, b) in enumerate(ev):
                a.record()
                call(i)
                b.record()
            torch.cuda.synchronize()
            return [a.elapsed_time(b) / 1e3 for a, b in ev]
        import cupy

        ev = [(cupy.cuda.Event(), cupy.cuda.Event()) for _ in range(reps)]
        for i, (a, b) in enumerate(ev):
            a.record()
            call(i)
            b.record()
        ev[-1][1].synchronize()
        return [cupy.cuda.get_elapsed_time(a, b) / 1e3 for a, b in ev]


def framework_of(args: Any) -> str:
    arrays = _arrays(args)
    if any(type(a).__module__.startswith("torch") for a in arrays):
        return "torch"
    return "cupy"


class Counters:
    """Bytes that crossed the links, per GPU: {gpu: {"nvlink_tx": B, "nvlink_rx": B, "pcie_tx": B, "pcie_rx": B}}."""

    def read(self) -> dict[int, dict[str, float]]:
        raise NotImplementedError


class NvmlCounters(Counters):
    """NVML field values: per-link NVLINK_THROUGHPUT_DATA_TX/RX (KiB, scope = link) and
    PCIE_COUNT_TX/RX_BYTES, for every GPU."""

    def __init__(self, gpus: Sequence[int], links: dict[int, int]):
        from .recording import live_source

        self.source = live_source()
        self.gpus, self.links = list(gpus), links

    def read(self) -> dict[int, dict[str, float]]:
        n = self.source.nvml
        out: dict[int, dict[str, float]] = {}
        for g in self.gpus:
            row: dict[str, float] = {}
            for key, fid, scale in (("nvlink_tx", q.FI_NVLINK_THROUGHPUT_DATA_TX, 1024),
                                    ("nvlink_rx", q.FI_NVLINK_THROUGHPUT_DATA_RX, 1024)):
                vals = [n.get("field", g, fid, link) for link in range(self.links.get(g, 0))]
                if vals and all(known(v) for v in vals):
                    row[key] = float(sum(vals)) * scale
            for key, fid in (("pcie_tx", q.FI_PCIE_COUNT_TX_BYTES), ("pcie_rx", q.FI_PCIE_COUNT_RX_BYTES)):
                v = n.get("field", g, fid, 0)
                if known(v):
                    row[key] = float(v)
            out[g] = row
        return out


@dataclass
class CompareResult:
    name: str
    times_s: list[float]
    counter_bytes_per_call: dict[int, dict[str, float]] = field(default_factory=dict)
    input_sets: int = 1
    checked: str = ""
    overhead_s: float = 0.0  # linkroof's own time beyond the user's warm-up and repetitions

    @property
    def median_s(self) -> float:
        return statistics.median(self.times_s)

    def link_bytes(self) -> float | None:
        """NVLink bytes per call: the most any GPU sent (the slowest link's load)."""
        tx = [v["nvlink_tx"] for v in self.counter_bytes_per_call.values() if "nvlink_tx" in v]
        return max(tx) if tx else None


def run_callable(name: str, fn: Callable[..., Any], make_inputs: Callable[[], Any], timer: Timer,
                 counters: Counters | None, reps: int = 50, warmup: int = 10, l2_bytes: int = 0,
                 reference: Callable[..., Any] | None = None, rtol: float = 1e-3, atol: float = 1e-5) -> CompareResult:
    """Warm up, time `reps` calls, count link bytes over the timed calls. When one input
    set fits twice in L2, several sets are rotated so the cache does not flatter."""
    import numpy as np

    t_start = time.perf_counter()
    user_s = 0.0  # time inside the user's own code (inputs, checks, warm-up, repetitions)

    def timed(f: Callable[..., Any], *a: Any) -> Any:
        nonlocal user_s
        t = time.perf_counter()
        try:
            return f(*a)
        finally:
            user_s += time.perf_counter() - t

    first = timed(make_inputs)
    sets = [first]
    size = input_bytes(first)
    if l2_bytes and 0 < size < 2 * l2_bytes:
        sets += [timed(make_inputs) for _ in range(min(16, -(-4 * l2_bytes // size)) - 1)]
    checked = "no reference given"
    if reference is not None:
        got, want = to_numpy(timed(_call, fn, sets[0])), to_numpy(timed(_call, reference, sets[0]))
        if np.shape(got) != np.shape(want):
            raise CompareError(f"{name}: output shape {np.shape(got)} differs from the reference's {np.shape(want)}")
        if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=False):
            err = float(np.max(np.abs(got - want)))
            raise CompareError(f"{name}: output differs from the reference (max abs error {err:.3g}, "
                               f"rtol {rtol}, atol {atol})")
        checked = f"matches the reference (rtol {rtol}, atol {atol})"
    t0 = time.perf_counter()
    for i in range(warmup):
        _call(fn, sets[i % len(sets)])
    timer.sync()
    user_s += time.perf_counter() - t0
    before = counters.read() if counters else {}
    t0 = time.perf_counter()
    times = timer.time_calls(lambda i: _call(fn, sets[i % len(sets)]), reps)
    user_s += time.perf_counter() - t0
    after = counters.read() if counters else {}
    per_call = {g: {k: (after[g][k] - before[g][k]) / reps for k in after[g] if k in before.get(g, {})}
                for g in after}
    overhead = time.perf_counter() - t_start - user_s
    return CompareResult(name, times, per_call, len(sets), checked, overhead)


def nccl_baseline(profile: Profile, workload: Workload) -> Measurement | None:
    """The profile's NCCL measurement of the workload's collective at the nearest size,
    in the workload's data type when it names one (else fp32) where the profile has it."""
    if not workload.pattern or not workload.message_bytes:
        return None
    want = str(workload.params.get("dtype") or "fp32")
    cands = [m for m in profile.measurements if m.spec.mechanism == "nccl" and m.spec.pattern == workload.pattern
             and not m.spec.params.get("in_place") and m.spec.params.get("rank_time") != "this rank" and m.verified]
    if not cands:
        return None
    import math

    return min(cands, key=lambda m: (abs(math.log2(m.spec.message_bytes) - math.log2(workload.message_bytes)),
                                     m.spec.params.get("dtype", "fp32") != want))


def placements_for(result: CompareResult, workload: Workload | None, model: Any, profile: Profile,
                   reference: CompareResult | None = None) -> tuple[list[Placement], list[str]]:
    """Place the kernel (and its reference and NCCL baseline) against measured and spec
    ceilings. Counter bytes fill in the link bytes the user did not give."""
    import dataclasses

    from ..roofline.place import place

    notes: list[str] = []
    counted = result.link_bytes()
    wl = workload or Workload(name=result.name)
    if counted is not None:
        given = wl.link_bytes.get("nvlink")
        if not given:
            wl = dataclasses.replace(wl, link_bytes={**wl.link_bytes, "nvlink": counted}, source="counters")
            notes.append(f"NVLink bytes per call from NVML counters: {counted:,.0f}")
        else:
            notes.append(f"NVLink bytes per call: workload {given:,.0f}, counters {counted:,.0f} "
                         f"(ratio {counted / given:.2f})")
    wl = dataclasses.replace(wl, name=result.name)
    out = [place(wl, result.median_s, model, "measured"), place(wl, result.median_s, model, "spec")]
    if reference is not None:
        ref_wl = dataclasses.replace(wl, name=f"{reference.name} (reference)")
        out.append(place(ref_wl, reference.median_s, model, "measured"))
        notes.append(f"speedup over the reference: {reference.median_s / result.median_s:.2f}x")
    base = nccl_baseline(profile, wl)
    if base is not None:
        from ..roofline.workload import collective

        nwl = collective(base.spec.pattern, base.spec.message_bytes, wl.ranks or 2)
        nwl = dataclasses.replace(nwl, name=f"NCCL {base.spec.pattern} {base.spec.message_bytes} B (profile)")
        out.append(place(nwl, base.median_s, model, "measured"))
    return out, notes


def run_compare(kernel: str, inputs: str, reference: str | None = None, workload_path: str | None = None,
                profile: Profile | None = None, reps: int = 50, warmup: int = 10, rtol: float = 1e-3,
                atol: float = 1e-5, counters_on: bool = True, topology: Any = None) -> dict[str, Any]:
    """The whole `linkroof compare` on this process's GPU (or rank), as data."""
    import dataclasses

    from ..roofline.model import MachineModel
    from ..roofline.workload import load_toml
    from .launch import connect, detect

    fn, make = resolve(kernel), resolve(inputs)
    ref_fn = resolve(reference) if reference else None
    workload = load_toml(workload_path) if workload_path else None
    ctx = detect()
    comm = connect(ctx)
    if ctx.kind == "torchrun" and ctx.distributed:
        try:  # callables that use torch.distributed find it initialised (linkroof's own group: gloo)
            import torch

            torch.cuda.set_device(ctx.local_rank)
        except ImportError:
            pass
    first = make()
    framework = framework_of(first)
    pending = [first]

    def make_inputs() -> Any:
        return pending.pop() if pending else make()

    if topology is None:
        from .probe import probe

        topology = probe()
    gpu = ctx.local_rank % max(1, len(topology.gpus))
    l2 = 0
    if framework == "cupy":
        try:
            import cupy

            cupy.cuda.Device(gpu).use()
            l2 = int(cupy.cuda.runtime.getDeviceProperties(gpu)["l2CacheSize"])
        except Exception:  # noqa: BLE001 - L2 size only decides input rotation
            l2 = 0
    counters = None
    if counters_on:
        links = {g.index: len(g.nvlinks) for g in topology.gpus}
        counters = NvmlCounters([g.index for g in topology.gpus], links)
    timer = CudaTimer(framework)
    name = kernel.rsplit(":", 1)[1]
    result = run_callable(name, fn, make_inputs, timer, counters, reps, warmup, l2, ref_fn, rtol, atol)
    ref_result = None
    if ref_fn is not None:
        ref_result = run_callable(f"{reference.rsplit(':', 1)[1]}", ref_fn, make, CudaTimer(framework), None, reps,
                                  warmup, l2)
    gathered = comm.gather((result, ref_result), timeout_s=600)
    comm.close()
    if ctx.rank != 0:
        return {"rank": ctx.rank}
    results = [r for _, r in gathered or []]
    if len(results) > 1:  # the slowest rank, repetition by repetition
        n = min(len(r[0].times_s) for r in results)
        result = dataclasses.replace(result, times_s=[max(r[0].times_s[i] for r in results) for i in range(n)])
        if ref_result is not None:
            m = min(len(r[1].times_s) for r in results)
            ref_result = dataclasses.replace(ref_result,
                                             times_s=[max(r[1].times_s[i] for r in results) for i in range(m)])
    from .session import bundled_profile

    prof = profile or bundled_profile()
    model = MachineModel.from_profile(prof)
    placements, notes = placements_for(result, workload, model, prof, ref_result)
    return {"result": result, "reference": ref_result, "placements": placements, "notes": notes,
            "profile": prof, "topology": topology, "ranks": ctx.world}
