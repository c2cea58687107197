"""The NVML adapter's live backend against a stand-in `pynvml` module: every answer
becomes a value or an Unknown, whatever the binding raises."""

import sys
import types

import pytest

from linkroof.profiler import nvml
from linkroof.schema import Unknown


def fake_pynvml(init_error=None):
    m = types.ModuleType("pynvml")

    class NVMLError(Exception):
        def __init__(self, value):
            self.value = value

        def __str__(self):
            return {3: "Not Supported", 12: "NVML Shared Library Not Found", 13: "Function Not Found"}.get(self.value, "Unknown Error")

    class NVMLError_NotSupported(NVMLError):
        def __init__(self):
            super().__init__(3)

    class NVMLError_FunctionNotFound(NVMLError):
        def __init__(self):
            super().__init__(13)

    class NVMLError_LibraryNotFound(NVMLError):
        def __init__(self):
            super().__init__(12)

    m.NVMLError, m.NVMLError_NotSupported = NVMLError, NVMLError_NotSupported
    m.NVMLError_FunctionNotFound = NVMLError_FunctionNotFound
    m.closed = False

    def init():
        if init_error:
            raise init_error()

    def numa(handle):
        raise NVMLError_NotSupported()

    def fabric(handle, info):  # the binding wants a struct; passing none raises TypeError in real life
        raise TypeError("nvmlDeviceGetGpuFabricInfoV() missing 1 required positional argument: 'gpuFabricInfo'")

    class Field:
        def __init__(self, ret, value_type, value):
            self.nvmlReturn, self.valueType = ret, value_type
            self.value = types.SimpleNamespace(uiVal=value, ullVal=value, dVal=float(value))

    def fields(handle, ids):
        fid, scope = ids[0]
        return [Field(0, 1, 26562)] if fid == 164 else [Field(3, 1, 0)]

    m.nvmlInit = init
    m.nvmlShutdown = lambda: setattr(m, "closed", True)
    m.nvmlDeviceGetHandleByIndex = lambda i: f"handle{i}"
    m.nvmlDeviceGetName = lambda h: b"NVIDIA H200"  # older bindings return bytes
    m.nvmlDeviceGetCount = lambda: 2
    m.nvmlDeviceGetNumaNodeId = numa
    m.c_nvmlGpuFabricInfoV_t = lambda: types.SimpleNamespace()
    m.nvmlDeviceGetGpuFabricInfoV = fabric
    m.nvmlDeviceGetFieldValues = fields
    m.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(total=150754820096)
    m.nvmlDeviceGetCpuAffinity = lambda h, n: [0xFFFFFFFF] + [0] * (n - 1)
    return m


@pytest.fixture
def live(monkeypatch):
    module = fake_pynvml()
    monkeypatch.setitem(sys.modules, "pynvml", module)
    backend = nvml.LiveBackend()
    yield nvml.Nvml(backend), module
    backend.close()


def test_values_are_plain(live):
    n, _ = live
    assert n.get("name", 0) == "NVIDIA H200"
    assert n.get("memory_total", 1) == 150754820096
    assert n.get("cpu_affinity", 0)[:2] == [0xFFFFFFFF, 0]
    assert n.get("field", 0, nvml.FI_NVLINK_GET_SPEED, 3) == 26562


def test_errors_become_unknown(live):
    n, _ = live
    numa = n.get("numa_node_id", 0)
    assert isinstance(numa, Unknown) and numa.reason == "NVML numa_node_id(0): NotSupported (Not Supported)"
    fabric = n.get("fabric_info", 1)
    assert isinstance(fabric, Unknown) and "TypeError" in fabric.reason
    missing = n.get("architecture", 0)  # not in the stand-in module: AttributeError
    assert isinstance(missing, Unknown) and "AttributeError" in missing.reason
    field = n.get("field", 0, nvml.FI_NVLINK_LINK_COUNT, 0)  # the field's own return code
    assert isinstance(field, Unknown) and "NotSupported" in field.reason
    assert isinstance(n.get("no_such_query"), Unknown)


def test_recording_keeps_errors(live):
    n, _ = live
    rec = nvml.RecordingBackend(n.backend)
    r = nvml.Nvml(rec)
    r.get("name", 0)
    r.get("numa_node_id", 0)
    assert rec.answers["name|0"] == {"value": "NVIDIA H200"}
    assert rec.answers["numa_node_id|0"] == {"error": "NotSupported", "code": 3, "message": "Not Supported"}
    replay = nvml.Nvml(nvml.ReplayBackend(rec.answers))
    assert replay.get("name", 0) == "NVIDIA H200"
    assert replay.get("numa_node_id", 0) == r.get("numa_node_id", 0)


def test_no_library(monkeypatch):
    module = fake_pynvml(init_error=lambda: module.NVMLError(12))
    monkeypatch.setitem(sys.modules, "pynvml", module)
    with pytest.raises(nvml.NvmlUnavailable, match="no NVIDIA driver usable here .NVML: NVML Shared Library Not Found"):
        nvml.LiveBackend()


def test_shutdown(live):
    n, module = live
    n.close()
    assert module.closed
