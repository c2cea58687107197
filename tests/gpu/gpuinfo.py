"""How many GPUs CuPy sees here (0 without CuPy or a driver), and the skip marker for
tests that need two."""

import pytest


def cuda_gpus() -> int:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001 - any failure means: no usable GPU here
        return 0


GPU_COUNT = cuda_gpus()
needs_two = pytest.mark.skipif(GPU_COUNT < 2, reason="needs two GPUs")


def torch_cuda_or_skip():
    """torch with a CUDA device, or the calling test module skipped saying which is missing."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device for torch", allow_module_level=True)
    return torch
