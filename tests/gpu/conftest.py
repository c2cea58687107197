"""GPU tests: run on a machine with an NVIDIA GPU (the accelerator machine); skipped
cleanly elsewhere."""

import pytest


def _gpu_count() -> int:
    try:
        from linkroof.profiler.nvml import LiveBackend

        backend = LiveBackend()
        try:
            return int(backend.call("device_count"))
        finally:
            backend.close()
    except Exception:  # noqa: BLE001 - any failure means: no usable GPU here
        return 0


GPU_COUNT = _gpu_count()


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU (none found through NVML)")
    for item in items:
        if "tests/gpu/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.gpu)
            if GPU_COUNT == 0:
                item.add_marker(skip)
