"""Running a plan: each benchmark in turn, progress on stderr, failures recorded as
skipped with their reason, clocks read before and after each family (throttling is
flagged on that family's figures), Ctrl-C keeps what was measured."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..microbench.buffers import release_pinned
from ..microbench.cuda import BenchError, free_memory
from ..roofline.checks import flag_above_spec
from ..schema import Environment, GpuState, Measurement, Profile, Skipped, Topology, Unknown
from .environment import throttled_by_gpu, throttled_during
from .nvml import cuda_version_text
from .plan import Plan, PlannedBench
from .session import make_profile


@dataclass
class RunResult:
    measurements: list[Measurement] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    states_before: tuple[GpuState, ...] = ()
    states_after: tuple[GpuState, ...] = ()
    seconds: float = 0.0
    interrupted: bool = False
    item_seconds: list[tuple[str, str, float]] = field(default_factory=list)  # (family, title, seconds)


def _reason(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    if isinstance(e, BenchError):
        return text
    kind = type(e).__name__
    if "OutOfMemory" in kind:
        return f"out of memory: {text}"
    if "CUDA" in kind or "CUDARuntimeError" in kind or "CUDADriverError" in kind:
        return f"CUDA error: {text}"
    return f"{kind}: {text}"


def run_plan(plan: Plan, states: Callable[[], tuple[GpuState, ...]] | None = None,
             progress: Callable[[int, int, str], None] | None = None,
             throttle: Callable[[], dict[int, dict[str, float]]] | None = None,
             clocks: Callable[[int], Any] | None = None) -> RunResult:
    """Run every planned benchmark. `throttle` reads NVML's throttle counters (before
    and after each benchmark: throttled while it ran); for GPUs without them, `states`
    reads the clock-event reasons once after it. `progress(done, total, title)` is
    called before each one. `clocks(gpu)` gives a clock sampler (profiler/clocks.py)
    run through each benchmark of one GPU: its figures carry their clock state."""
    res = RunResult(skipped=list(plan.skipped))
    t0 = time.perf_counter()
    read_states = states or (lambda: ())
    read_counters = throttle or (lambda: {})
    res.states_before = read_states()
    by_family: dict[str, list[PlannedBench]] = {}
    for item in plan.items:
        by_family.setdefault(item.family, []).append(item)
    done = 0
    try:
        for family, items in by_family.items():
            family_warnings: dict[int, str] = {}
            for item in items:
                if progress:
                    progress(done, len(plan.items), item.title)
                counted = read_counters()
                t_item = time.perf_counter()  # the window the counters cover: from this read to the next
                try:
                    gpu = item.kwargs.get("dev", item.kwargs.get("gpu"))
                    sampler = clocks(gpu) if clocks is not None and isinstance(gpu, int) else None
                    if sampler is not None:
                        with sampler:
                            got = item.fn(**item.kwargs)
                    else:
                        got = item.fn(**item.kwargs)
                    got = got if isinstance(got, list) else [got]
                    if sampler is not None:
                        got = [dataclasses.replace(m, clock=_bench_clock(m, sampler)) for m in got]
                    # a GPU's throttling marks only its own figures: counted while the benchmark ran, or
                    # (no counters on this driver) the reasons read right after it
                    window = time.perf_counter() - t_item
                    after = read_counters()
                    hot = {g: w for g, w in throttled_by_gpu(read_states()).items() if not after.get(g)}
                    hot.update(throttled_during(counted, after, window))
                    family_warnings.update(hot)
                    res.measurements.extend(
                        dataclasses.replace(m, warnings=m.warnings + tuple(hot[g] for g in sorted(hot)
                                                                           if g in m.spec.devices))
                        if any(g in m.spec.devices for g in hot) else m for m in got)
                except KeyboardInterrupt:
                    raise
                except Exception as e:  # noqa: BLE001 - one benchmark's failure must not end the run
                    devices = tuple(v for k, v in item.kwargs.items() if k in ("gpu", "src", "dst", "a", "b", "dev",
                                                                                "runner", "target") and isinstance(v, int))
                    res.skipped.append(Skipped(item.title, _reason(e), devices))
                free_memory()
                res.item_seconds.append((family, item.title, time.perf_counter() - t_item))
                done += 1
            if family_warnings:
                res.notes.append(f"{family}: " + "; ".join(family_warnings[g] for g in sorted(family_warnings)))
    except KeyboardInterrupt:
        res.interrupted = True
        res.notes.append(f"interrupted by the user after {done} of {len(plan.items)} benchmarks; "
                         "what was measured is kept")
    finally:
        release_pinned()
    if progress:
        progress(done, len(plan.items), "done")
    res.states_after = read_states()
    res.seconds = time.perf_counter() - t0
    return res


def _bench_clock(m: Measurement, sampler: Any) -> Any:
    """A benchmark's clock state from the samples taken through it (its repetitions'
    own windows are not kept: the first and last thirds of the samples stand for them)."""
    from ..roofline.clockstate import clock_state

    try:
        top = sampler.max_sm_mhz()
    except Exception:  # noqa: BLE001
        top = None
    return clock_state(list(m.times_s), [], list(sampler.samples), top,
                       f"NVML every {sampler.period_s * 1e3:.0f} ms through the benchmark")


def cuda_versions() -> dict[str, Any]:
    """CUDA runtime, NCCL and CuPy versions as CuPy sees them."""
    from ..microbench.cuda import cp

    cupy = cp()
    out: dict[str, Any] = {"cupy_version": cupy.__version__}
    v = cupy.cuda.runtime.runtimeGetVersion()
    out["cuda_runtime_version"] = cuda_version_text(v)
    try:
        from cupy.cuda import nccl

        n = nccl.get_version()
        out["nccl_version"] = f"{n // 10000}.{(n // 100) % 100}.{n % 100}"
    except Exception as e:  # noqa: BLE001 - NCCL is optional
        out["nccl_version"] = Unknown(f"NCCL not available through CuPy ({type(e).__name__})")
    return out


def run_profile(topology: Topology, environment: Environment, plan: Plan, result: RunResult, label: str = "") -> Profile:
    env = dataclasses.replace(environment, gpu_states_before=result.states_before, gpu_states_after=result.states_after)
    slowest = sorted(result.item_seconds, key=lambda x: -x[2])[:5]
    per_family: dict[str, list[float]] = {}
    for family, _, sec in result.item_seconds:
        per_family.setdefault(family, []).append(sec)
    notes = list(topology.notes) + result.notes + [
        f"suite {plan.suite}: {len(result.measurements)} measurements in {result.seconds:.1f} s; slowest: "
        + ", ".join(f"{title} {sec:.1f} s" for _, title, sec in slowest),
        "wall time per family (s / benchmarks): "
        + ", ".join(f"{f} {sum(v):.1f} / {len(v)}" for f, v in per_family.items())]
    measurements = flag_above_spec(topology, result.measurements)
    return make_profile([topology], [env], measurements, result.skipped, label=label or f"bench:{plan.suite}",
                        notes=notes)
