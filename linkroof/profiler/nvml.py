"""The one NVML adapter: every NVML answer becomes a plain value or an explicit Unknown.

Nothing above this module imports pynvml or handles an NVML exception. Queries are
named (``"numa_node_id"``) and take device *indices*, not handles, so that every
answer -- value or error -- can be recorded as JSON and replayed with no GPU present.

    nvml = Nvml(LiveBackend())            # the real driver (pynvml imported lazily)
    nvml = Nvml(ReplayBackend(answers))   # a recording, or a synthetic scenario
    nvml.get("memory_total", 0)           # -> 150754820096, or Unknown("NVML ...: Not Supported")
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable

from ..errors import NoGpuError
from ..schema import Unknown

# Field ids (nvml.h); kept here so replay needs no pynvml.
FI_NVLINK_LINK_COUNT = 91
FI_NVLINK_GET_SPEED = 164
FI_NVLINK_THROUGHPUT_DATA_TX = 138
FI_NVLINK_THROUGHPUT_DATA_RX = 139
FI_PCIE_COUNT_TX_BYTES = 197
FI_PCIE_COUNT_RX_BYTES = 198

CLOCK_SM = 1
CLOCK_MEM = 2

NVLINK_CAP_P2P_SUPPORTED = 0
NVLINK_CAP_P2P_ATOMICS = 2

# P2P capability indices: READ, WRITE, NVLINK, ATOMICS, PCI. The binding's
# NVML_P2P_CAPS_INDEX_READ is a tuple (a trailing comma), so we pass plain ints.
P2P_INDEX = {"read": 0, "write": 1, "nvlink": 2, "atomics": 3, "pcie": 4}

MAX_NVLINKS = 36  # NVML_NVLINK_MAX_LINKS in current bindings; older drivers stop earlier


# nvmlReturn_t codes -> the names the binding gives its exception classes.
ERROR_KINDS = {1: "Uninitialized", 2: "InvalidArgument", 3: "NotSupported", 4: "NoPermission", 6: "NotFound",
               9: "DriverNotLoaded", 12: "LibraryNotFound", 13: "FunctionNotFound", 15: "GpuIsLost",
               17: "OperatingSystem", 18: "LibRmVersionMismatch", 999: "Unknown"}


def _error_kind(e: Exception) -> str:
    name = type(e).__name__
    if name.startswith("NVMLError_"):
        return name[len("NVMLError_"):]
    return ERROR_KINDS.get(getattr(e, "value", None), name)


class NvmlCallError(Exception):
    """One NVML call failed; `kind` is e.g. 'NotSupported', 'TypeError'."""

    def __init__(self, kind: str, message: str, code: int | None = None):
        super().__init__(message)
        self.kind, self.message, self.code = kind, message, code

    def to_answer(self) -> dict[str, Any]:
        return {"error": self.kind, "code": self.code, "message": self.message}


class NvmlUnavailable(NoGpuError):
    """No NVIDIA driver / NVML library: the one-line reason."""


def _text(x: Any) -> str:
    return x.decode(errors="replace") if isinstance(x, bytes) else str(x)


def _field_value(fv: Any) -> Any:
    member = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal", 5: "siVal", 6: "usVal"}
    return getattr(fv.value, member.get(fv.valueType, "ullVal"))


class LiveBackend:
    """Answers queries from the real driver through nvidia-ml-py's pynvml module."""

    def __init__(self) -> None:
        try:
            import pynvml  # nvidia-ml-py
        except ImportError as e:  # pragma: no cover - it is a core dependency
            raise NvmlUnavailable(f"the nvidia-ml-py package is not installed ({e})") from None
        self.n = pynvml
        try:
            pynvml.nvmlInit()
        except pynvml.NVMLError as e:
            raise NvmlUnavailable(f"no NVIDIA driver usable here (NVML: {e})") from None
        except OSError as e:  # pragma: no cover
            raise NvmlUnavailable(f"no NVIDIA driver usable here ({e})") from None
        self._handles: dict[int, Any] = {}
        self.queries = self._queries()

    def close(self) -> None:
        try:
            self.n.nvmlShutdown()
        except Exception:  # noqa: BLE001 - shutting down is best effort
            pass

    def handle(self, index: int) -> Any:
        if index not in self._handles:
            self._handles[index] = self.n.nvmlDeviceGetHandleByIndex(index)
        return self._handles[index]

    def call(self, query: str, *args: Any) -> Any:
        fn = self.queries.get(query)
        if fn is None:
            raise NvmlCallError("UnknownQuery", f"linkroof has no NVML query named {query!r}")
        try:
            return fn(*args)
        except self.n.NVMLError as e:
            raise NvmlCallError(_error_kind(e), str(e), getattr(e, "value", None)) from None
        except NvmlCallError:
            raise
        except Exception as e:  # noqa: BLE001 - binding mismatches (TypeError, AttributeError ...)
            raise NvmlCallError(type(e).__name__, str(e)) from None

    def _queries(self) -> dict[str, Callable[..., Any]]:
        n, h = self.n, self.handle

        def fields(d: int, field_id: int, scope: int) -> Any:
            (fv,) = n.nvmlDeviceGetFieldValues(h(d), [(field_id, scope)])
            if fv.nvmlReturn != 0:
                err = n.NVMLError(fv.nvmlReturn)
                raise NvmlCallError(_error_kind(err), str(err), fv.nvmlReturn)
            return _field_value(fv)

        def fabric(d: int) -> dict[str, Any]:
            try:
                info = n.c_nvmlGpuFabricInfoV_t()
                n.nvmlDeviceGetGpuFabricInfoV(h(d), ctypes.byref(info))
            except (AttributeError, n.NVMLError_FunctionNotFound):
                info = n.c_nvmlGpuFabricInfo_t()
                n.nvmlDeviceGetGpuFabricInfo(h(d), ctypes.byref(info))
            uuid = bytes(info.clusterUuid).hex()
            return {"clique_id": int(info.cliqueId), "cluster_uuid": uuid, "state": int(info.state),
                    "status": int(info.status)}

        def mig_device_exists(d: int, i: int) -> bool:
            n.nvmlDeviceGetMigDeviceHandleByIndex(h(d), i)
            return True

        return {
            "driver_version": lambda: _text(n.nvmlSystemGetDriverVersion()),
            "nvml_version": lambda: _text(n.nvmlSystemGetNVMLVersion()),
            "cuda_driver_version": lambda: int(n.nvmlSystemGetCudaDriverVersion()),
            "device_count": lambda: int(n.nvmlDeviceGetCount()),
            "name": lambda d: _text(n.nvmlDeviceGetName(h(d))),
            "uuid": lambda d: _text(n.nvmlDeviceGetUUID(h(d))),
            "pci_bus_id": lambda d: _text(n.nvmlDeviceGetPciInfo(h(d)).busId),
            "architecture": lambda d: int(n.nvmlDeviceGetArchitecture(h(d))),
            "compute_capability": lambda d: list(n.nvmlDeviceGetCudaComputeCapability(h(d))),
            "num_gpu_cores": lambda d: int(n.nvmlDeviceGetNumGpuCores(h(d))),
            "memory_total": lambda d: int(n.nvmlDeviceGetMemoryInfo(h(d)).total),
            "memory_bus_width": lambda d: int(n.nvmlDeviceGetMemoryBusWidth(h(d))),
            "max_clock": lambda d, clock: int(n.nvmlDeviceGetMaxClockInfo(h(d), clock)),
            "clock": lambda d, clock: int(n.nvmlDeviceGetClockInfo(h(d), clock)),
            "pcie_gen_current": lambda d: int(n.nvmlDeviceGetCurrPcieLinkGeneration(h(d))),
            "pcie_gen_max": lambda d: int(n.nvmlDeviceGetMaxPcieLinkGeneration(h(d))),
            "pcie_gen_gpu_max": lambda d: int(n.nvmlDeviceGetGpuMaxPcieLinkGeneration(h(d))),
            "pcie_width_current": lambda d: int(n.nvmlDeviceGetCurrPcieLinkWidth(h(d))),
            "pcie_width_max": lambda d: int(n.nvmlDeviceGetMaxPcieLinkWidth(h(d))),
            "numa_node_id": lambda d: int(n.nvmlDeviceGetNumaNodeId(h(d))),
            "cpu_affinity": lambda d: [int(x) for x in n.nvmlDeviceGetCpuAffinity(h(d), 16)],
            "mig_mode": lambda d: [int(x) for x in n.nvmlDeviceGetMigMode(h(d))],
            "max_mig_device_count": lambda d: int(n.nvmlDeviceGetMaxMigDeviceCount(h(d))),
            "mig_device_exists": mig_device_exists,
            "fabric_info": fabric,
            "power_usage_mw": lambda d: int(n.nvmlDeviceGetPowerUsage(h(d))),
            "temperature_c": lambda d: int(n.nvmlDeviceGetTemperature(h(d), 0)),
            "persistence_mode": lambda d: int(n.nvmlDeviceGetPersistenceMode(h(d))),
            "ecc_mode": lambda d: [int(x) for x in n.nvmlDeviceGetEccMode(h(d))],
            "clocks_event_reasons": lambda d: int(n.nvmlDeviceGetCurrentClocksEventReasons(h(d))),
            "field": fields,
            "nvlink_state": lambda d, link: int(n.nvmlDeviceGetNvLinkState(h(d), link)),
            "nvlink_version": lambda d, link: int(n.nvmlDeviceGetNvLinkVersion(h(d), link)),
            "nvlink_remote_pci_bus_id": lambda d, link: _text(n.nvmlDeviceGetNvLinkRemotePciInfo(h(d), link).busId),
            "nvlink_remote_type": lambda d, link: int(n.nvmlDeviceGetNvLinkRemoteDeviceType(h(d), link)),
            "nvlink_capability": lambda d, link, cap: int(n.nvmlDeviceGetNvLinkCapability(h(d), link, cap)),
            "topology_common_ancestor": lambda a, b: int(n.nvmlDeviceGetTopologyCommonAncestor(h(a), h(b))),
            "p2p_status": lambda a, b, index: int(n.nvmlDeviceGetP2PStatus(h(a), h(b), index)),
        }


def cuda_version_text(v: Any) -> Any:
    """NVML's CUDA driver version 13000 -> '13.0' (an Unknown passes through)."""
    if isinstance(v, Unknown):
        return v
    return f"{int(v) // 1000}.{(int(v) % 1000) // 10}"


def answer_key(query: str, args: tuple[Any, ...]) -> str:
    return "|".join([query, *(str(a) for a in args)])


class RecordingBackend:
    """Wraps a backend and keeps every answer, errors included, for `--record`."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.answers: dict[str, dict[str, Any]] = {}

    def call(self, query: str, *args: Any) -> Any:
        key = answer_key(query, args)
        try:
            value = self.inner.call(query, *args)
        except NvmlCallError as e:
            self.answers[key] = e.to_answer()
            raise
        self.answers[key] = {"value": value}
        return value

    def close(self) -> None:
        self.inner.close()


class ReplayBackend:
    """Answers queries from a recording (or a synthetic scenario) with no GPU present."""

    def __init__(self, answers: dict[str, dict[str, Any]]):
        self.answers = answers

    def call(self, query: str, *args: Any) -> Any:
        answer = self.answers.get(answer_key(query, args))
        if answer is None:
            raise NvmlCallError("NotRecorded", "not in the recording")
        if "error" in answer:
            raise NvmlCallError(str(answer["error"]), str(answer.get("message", "")), answer.get("code"))
        return answer["value"]

    def close(self) -> None:
        pass


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and -(1 << 63) <= v < (1 << 64)


def _ints(v: Any) -> bool:
    return isinstance(v, list) and len(v) <= 4096 and all(_int(x) for x in v)


def _text_answer(v: Any) -> bool:
    return isinstance(v, str) and len(v) <= 4096


def _fabric(v: Any) -> bool:
    return (isinstance(v, dict) and _int(v.get("clique_id")) and isinstance(v.get("cluster_uuid"), str)
            and _int(v.get("state")))


# The shape of each query's answer: a recording (or a driver) that answers otherwise gives
# an Unknown naming the query, never a value the probe would choke on
ANSWER_SHAPES: dict[str, Callable[[Any], bool]] = {
    **{q: _text_answer for q in ("driver_version", "nvml_version", "name", "uuid", "pci_bus_id",
                                 "nvlink_remote_pci_bus_id")},
    **{q: (lambda v: _ints(v) and len(v) == 2) for q in ("compute_capability", "mig_mode", "ecc_mode")},
    "cpu_affinity": _ints, "max_mig_device_count": lambda v: _int(v) and 0 <= v <= 64,
    "fabric_info": _fabric, "mig_device_exists": lambda v: isinstance(v, bool),
    "field": lambda v: (_int(v) or isinstance(v, float)) and not isinstance(v, bool),
}


class Nvml:
    """The adapter the probe uses: `get` returns a value or an Unknown naming the cause."""

    def __init__(self, backend: Any):
        self.backend = backend

    def get(self, query: str, *args: Any) -> Any:
        where = query + (f"({', '.join(map(str, args))})" if args else "")
        try:
            value = self.backend.call(query, *args)
        except NvmlCallError as e:
            return Unknown(f"NVML {where}: {e.kind}" + (f" ({e.message})" if e.message and e.message != e.kind else ""))
        if not ANSWER_SHAPES.get(query, _int)(value):
            return Unknown(f"NVML {where}: an answer of the wrong shape ({type(value).__name__})")
        return value

    def close(self) -> None:
        self.backend.close()
