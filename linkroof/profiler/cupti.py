"""The GPU timeline of a user's calls through CUPTI's Activity API (NVIDIA's
cupti-python, the `linkroof[cupti]` extra): every kernel, copy and memset with its
device, stream, start, end, grid and block, and the host's API calls that launched them
(to tell which call each belongs to). One recorder per process: CUPTI takes one pair of
buffer callbacks.

Where cupti-python is missing or refuses (no wheel for this driver, a profiler already
attached), `available()` says why and `compare` falls back to its event timings,
labelled so. Seen working on driver 580 / CUDA 13.0 with cupti-python 13.0.0, 13.0.1
and 13.2.0 (benchmarks/RESULTS.md, 2026-12-02).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..roofline.timeline import Activity, HostCall, host_call_kind

_STATE: dict[str, Any] = {}


def available() -> tuple[bool, str]:
    """(True, version) where cupti-python imports, else (False, why)."""
    try:
        from cupti import cupti  # noqa: F401
    except Exception as e:  # noqa: BLE001 - any failure means: no timeline here, said so
        return False, (f"no CUPTI timeline: cupti-python is not importable ({type(e).__name__}: {str(e)[:120]}); "
                       "pip install 'linkroof[cupti]'")
    try:
        from importlib import metadata

        return True, f"cupti-python {metadata.version('cupti-python')}"
    except Exception:  # noqa: BLE001
        return True, "cupti-python"


def _register() -> Any:
    from cupti import cupti

    if "records" not in _STATE:
        _STATE["records"] = []

        def requested() -> tuple[int, int]:
            return 8 * 1024 * 1024, 0

        def completed(activities: list) -> None:
            if _STATE.get("on"):
                _STATE["records"].extend(activities)

        cupti.activity_register_callbacks(requested, completed)
    return cupti


# The GPU's own records. The host's API records (RUNTIME, DRIVER) would say which call
# launched each kernel, but recording them took 11 records a kernel and doubled a torch
# launch's host cost on one H200 (a chain of 200 adds: 3.7 ms a call recorded against
# 2.16 timed): activities are given to calls by their start instead.
KINDS = ("CONCURRENT_KERNEL", "MEMCPY", "MEMCPY2", "MEMSET")
API_KINDS = ("RUNTIME", "DRIVER")


def record_host(calls: int, call: Callable[[int], Any], sync: Callable[[], None],
                ) -> tuple[list[Activity], list[int], list[HostCall]]:
    """A pass of its own with the host's API records on as well: the activities, the
    host start of each call, and every CUDA runtime and driver call the host made
    (HostCall: its kind, launch / sync / other, from its name). The API records slow the
    host (a torch launch about 2x), so this pass tells what the host did while the GPU
    idled, as shares; the GPU-side figures come from the activity-only pass."""
    records: list[Any] = []
    acts, starts, _ = record(calls, call, sync, api=True, keep=records)
    from cupti import cupti as _c

    out: list[HostCall] = []
    K = _c.ActivityKind
    domains = {getattr(K, "RUNTIME", None): getattr(_c.CallbackDomain, "RUNTIME_API", None),
               getattr(K, "DRIVER", None): getattr(_c.CallbackDomain, "DRIVER_API", None)}
    names: dict[tuple[int, int], str] = {}
    t0 = starts[0] if starts else 0
    for r in records:
        dom = domains.get(r.kind)
        if dom is None or int(r.start) < t0:
            continue
        key = (int(dom), int(r.cbid))
        if key not in names:
            try:
                names[key] = str(_c.get_callback_name(dom, int(r.cbid)))
            except Exception:  # noqa: BLE001 - an id this CUPTI cannot name
                names[key] = f"cbid {int(r.cbid)}"
        name = names[key]
        out.append(HostCall(host_call_kind(name), name, int(r.start), int(r.end), int(r.correlation_id),
                            int(r.thread_id)))
    return acts, starts, out


def record(calls: int, call: Callable[[int], Any], sync: Callable[[], None],
           api: bool = False, keep: list | None = None) -> tuple[list[Activity], list[int], dict[int, int]]:
    """Run `call(i)` for i < calls back to back, as the timed loop does, with CUPTI
    recording: the activities, the host timestamp before each call (CUPTI's clock, the
    activities' own) and, with `api`, when the host launched each correlation id. The
    first recorded call carries CUPTI's own start-up (4-5 ms on one H200): one call is
    recorded first, waited for and dropped, so every call returned ran with CUPTI
    already going and none of the dropped call's kernels is counted among them."""
    cupti = _register()
    kinds = [getattr(cupti.ActivityKind, k) for k in KINDS + (API_KINDS if api else ())
             if hasattr(cupti.ActivityKind, k)]
    calls += 1  # the first, with CUPTI's start-up, is dropped below
    sync()
    cupti.activity_flush_all(1)
    _STATE["records"].clear()
    _STATE["on"] = True
    enabled = []
    try:
        for k in kinds:
            try:
                cupti.activity_enable(k)
                enabled.append(k)
            except Exception:  # noqa: BLE001 - a kind this CUPTI lacks: the others still tell
                pass
        starts = []
        for i in range(calls):
            starts.append(int(cupti.get_timestamp()))
            call(i)
            if i == 0:  # the dropped call ends on the GPU before the kept ones start on the host:
                sync()  # else its later kernels, run behind the host, were counted (21 in 20 calls)
        sync()
        cupti.activity_flush_all(1)
    finally:
        for k in enabled:
            try:
                cupti.activity_disable(k)
            except Exception:  # noqa: BLE001
                pass
        _STATE["on"] = False
    records = list(_STATE["records"])
    _STATE["records"].clear()
    if keep is not None:
        keep.extend(records)
    activities, host = to_activities(records, cupti)
    first_end = starts[1]
    return [a for a in activities if a.start_ns >= first_end], starts[1:], host


def to_activities(records: list[Any], cupti: Any) -> tuple[list[Activity], dict[int, int]]:
    """CUPTI's records as Activities, and the host launch time per correlation id."""
    out: list[Activity] = []
    host: dict[int, int] = {}
    K = cupti.ActivityKind
    kernel_kinds = {getattr(K, k) for k in ("CONCURRENT_KERNEL", "KERNEL") if hasattr(K, k)}
    api_kinds = {getattr(K, k) for k in ("RUNTIME", "DRIVER") if hasattr(K, k)}
    for r in records:
        kind = r.kind
        if kind in api_kinds:
            host.setdefault(int(r.correlation_id), int(r.start))
        elif kind in kernel_kinds:
            out.append(Activity("kernel", str(r.name), int(r.device_id), int(r.stream_id), int(r.start), int(r.end),
                                int(r.correlation_id), (int(r.grid_x), int(r.grid_y), int(r.grid_z)),
                                (int(r.block_x), int(r.block_y), int(r.block_z))))
        elif kind == getattr(K, "MEMCPY", None) or kind == getattr(K, "MEMCPY2", None):
            try:
                copy_kind = cupti.ActivityMemcpyKind(int(r.copy_kind)).name
            except Exception:  # noqa: BLE001
                copy_kind = str(getattr(r, "copy_kind", ""))
            peer = kind == getattr(K, "MEMCPY2", None) or copy_kind.upper() in ("PTOP",)
            ends = _memory_kinds(r, cupti)
            out.append(Activity("memcpy", f"memcpy {'PtoP' if peer else _copy_kind(copy_kind)}{ends}", int(r.device_id),
                                int(r.stream_id), int(r.start), int(r.end), int(r.correlation_id),
                                bytes=int(r.bytes), copy_kind="PtoP" if peer else _copy_kind(copy_kind)))
        elif kind == getattr(K, "MEMSET", None):
            out.append(Activity("memset", "memset", int(r.device_id), int(r.stream_id), int(r.start), int(r.end),
                                int(r.correlation_id), bytes=int(r.bytes)))
    return out, host


# CUPTI's CUpti_ActivityMemoryKind, for a cupti module without the enum
MEMORY_KINDS = {0: "Unknown", 1: "Pageable", 2: "Pinned", 3: "Device", 4: "Array", 5: "Managed",
                6: "Device Static", 7: "Managed Static"}


def _memory_kinds(r: Any, cupti: Any) -> str:
    """' (Pageable -> Device)': the copy's source and destination memory, as Kineto names
    them in a trace (a pageable host copy is staged by the driver and runs at a fraction
    of a pinned one's rate); '' where the record does not say."""
    names = []
    for field_ in ("src_kind", "dst_kind"):
        v = getattr(r, field_, None)
        if v is None:
            return ""
        try:
            names.append(MEMORY_KINDS.get(int(v), str(v)))
        except (TypeError, ValueError):
            return ""
    return f" ({names[0]} -> {names[1]})"


def _copy_kind(name: str) -> str:
    """CUPTI's memcpy kind names (HTOD, DTOH, DTOD, ...) as the timeline spells them."""
    return {"HTOD": "HtoD", "DTOH": "DtoH", "DTOD": "DtoD", "HTOH": "HtoH", "PTOP": "PtoP"}.get(name.upper(), name)
