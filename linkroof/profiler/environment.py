"""What shapes a measurement besides the hardware: versions, clocks, power, env vars."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import socket
from importlib import metadata
from typing import Any

from ..schema import Environment, GpuState, Unknown, known
from . import nvml as q

# Variables that change what a benchmark measures.
ENV_PREFIXES = ("NCCL_", "CUDA_", "NVSHMEM_", "TORCH_SYMM_MEM_", "UCX_", "OMPI_MCA_btl", "CUPY_")

# nvmlClocksEventReasons bits (nvml.h).
CLOCK_EVENT_REASONS = {
    0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap", 0x8: "hw_slowdown",
    0x10: "sync_boost", 0x20: "sw_thermal_slowdown", 0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown", 0x100: "display_clock_setting",
}
THROTTLING = {"sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown"}


def package_version(name: str) -> str | Unknown:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return Unknown(f"{name} not installed")


def cupy_version() -> str | Unknown:
    for dist in ("cupy-cuda13x", "cupy-cuda12x", "cupy-cuda11x", "cupy"):
        v = package_version(dist)
        if known(v):
            return v
    return Unknown("CuPy not installed")


def relevant_env() -> dict[str, str]:
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith(ENV_PREFIXES)}


def gpu_states(nvml: q.Nvml, count: int) -> tuple[GpuState, ...]:
    """Clocks, power, temperature, persistence, ECC and clock-event reasons, now."""
    out = []
    for d in range(count):
        power = nvml.get("power_usage_mw", d)
        persistence = nvml.get("persistence_mode", d)
        ecc = nvml.get("ecc_mode", d)
        reasons_mask = nvml.get("clocks_event_reasons", d)
        reasons: Any = reasons_mask
        if known(reasons_mask):
            reasons = tuple(name for bit, name in CLOCK_EVENT_REASONS.items() if reasons_mask & bit)
        out.append(GpuState(
            index=d,
            sm_clock_mhz=nvml.get("clock", d, q.CLOCK_SM),
            memory_clock_mhz=nvml.get("clock", d, q.CLOCK_MEM),
            power_w=power / 1000 if known(power) else power,
            temperature_c=nvml.get("temperature_c", d),
            persistence=bool(persistence) if known(persistence) else persistence,
            ecc=bool(ecc[0]) if known(ecc) else ecc,
            throttle_reasons=reasons,
        ))
    return tuple(out)


# NVML field values that count, in nanoseconds since the driver loaded, how long the
# clocks were held down for each reason (nvml.h: NVML_FI_DEV_PERF_POLICY_POWER and
# _THERMAL, NVML_FI_DEV_CLOCKS_EVENT_REASON_*). Read before and after a benchmark they
# say whether it was throttled while it ran, which one reading of the reasons cannot.
THROTTLE_COUNTERS = (("sw_power_cap", 74), ("thermal", 75), ("sw_thermal_slowdown", 269),
                     ("hw_thermal_slowdown", 270), ("hw_power_brake_slowdown", 271))
SNAPSHOT = "one reading after the benchmark: this driver has no throttle counters"


def throttle_counters(nvml: q.Nvml, count: int) -> dict[int, dict[str, float]]:
    """{GPU: {reason: nanoseconds throttled so far}} for the counters this driver has."""
    out: dict[int, dict[str, float]] = {}
    for d in range(count):
        got = {name: nvml.get("field", d, fid, 0) for name, fid in THROTTLE_COUNTERS}
        out[d] = {k: float(v) for k, v in got.items() if known(v) and isinstance(v, (int, float))}
    return out


def throttled_during(before: dict[int, dict[str, float]], after: dict[int, dict[str, float]],
                     seconds: float) -> dict[int, str]:
    """{GPU: warning} for GPUs whose throttle counters grew between two reads taken
    around a benchmark of `seconds`, naming each reason and for how long."""
    out = {}
    for g, now in after.items():
        grew = {k: (v - before[g][k]) * 1e-9 for k, v in now.items() if k in before.get(g, {}) and v > before[g][k]}
        if grew:
            # NVML's violation counters move in steps and lag: a delta can hold time from before
            # the first read. Said as a share of the window between the two reads, never above it.
            each = ", ".join(f"{k} {min(t, seconds) * 1e3:.1f} ms" + (
                f" (the counter grew {t * 1e3:.1f} ms: it lags, so part of it fell before the window)"
                if t > seconds else "") for k, t in sorted(grew.items()))
            out[g] = f"GPU{g} throttled during the benchmark: {each} of its {seconds * 1e3:.1f} ms window"
    return out


def throttled(states: tuple[GpuState, ...]) -> list[str]:
    """Warnings for GPUs whose clocks were held down by power or heat."""
    return list(throttled_by_gpu(states).values())


def throttled_by_gpu(states: tuple[GpuState, ...]) -> dict[int, str]:
    """{GPU index: warning} for GPUs whose clocks were held down by power or heat."""
    out = {}
    for s in states:
        if known(s.throttle_reasons):
            bad = sorted(THROTTLING.intersection(s.throttle_reasons))
            if bad:
                out[s.index] = f"GPU{s.index} throttled: {', '.join(bad)} ({SNAPSHOT})"
    return out


def collect_environment(nvml: q.Nvml | None = None, gpu_count: int = 0,
                        before: tuple[GpuState, ...] = (), after: tuple[GpuState, ...] = ()) -> Environment:
    from .. import __version__

    none = Unknown("no NVML")
    driver = nvml.get("driver_version") if nvml else none
    cuda = q.cuda_version_text(nvml.get("cuda_driver_version")) if nvml else none
    return Environment(
        linkroof_version=__version__,
        hostname=socket.gethostname(),
        time=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        driver_version=driver,
        cuda_driver_version=cuda,
        cuda_runtime_version=Unknown("CUDA runtime not loaded"),
        nccl_version=Unknown("NCCL not loaded"),
        cupy_version=cupy_version(),
        nvml_py_version=package_version("nvidia-ml-py"),
        python_version=platform.python_version(),
        env=relevant_env(),
        gpu_states_before=before or (gpu_states(nvml, gpu_count) if nvml and gpu_count else ()),
        gpu_states_after=after,
    )
