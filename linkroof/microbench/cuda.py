"""CuPy access for the microbenchmarks: lazy import, compiled kernels, pinned host
memory, peer access, and the host flag that gates queued work.

Nothing here is imported by `import linkroof`; CuPy is an extra (linkroof[cuda13])."""

from __future__ import annotations

import ctypes
from functools import lru_cache
from importlib import resources
from typing import Any

from ..errors import LinkroofError

TEMPLATES = ("copy_v4<1>", "copy_v4<4>", "copy_v4<8>", "copy_v4<12>", "copy_v4_l2pf<8>",
             "read_v4<1>", "read_v4<2>", "read_v4<4>", "read_v4<8>", "read_v4<16>",
             "tma_copy<2>", "tma_copy<3>", "tma_copy<4>")
# Kernel sources and their template instances: linkroof.cu (copies, latency, compute),
# terms.cu (launch, synchronisation, signals, reductions).
MODULES = {"linkroof": TEMPLATES, "terms": ("red_add_f32<true>", "red_add_f32<false>", "tma_red_add_f32<4>")}


class CudaUnavailable(LinkroofError):
    exit_code = 3


class BenchError(LinkroofError):
    """One benchmark could not run (out of memory, no peer path, ...): it is skipped."""


def cp() -> Any:
    """The cupy module, or a clear error."""
    try:
        import cupy
    except ImportError as e:
        raise CudaUnavailable(
            f"CuPy is not installed ({e}); install linkroof[cuda13] or linkroof[cuda12] on a GPU machine") from None
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - CUDA errors come in many types
        raise CudaUnavailable(f"CUDA is not usable here: {e}") from None
    if n == 0:
        raise CudaUnavailable("CUDA sees no GPU")
    return cupy


@lru_cache(maxsize=None)
def properties(dev: int) -> dict[str, Any]:
    props = cp().cuda.runtime.getDeviceProperties(dev)
    return {k: (v.decode(errors="replace") if isinstance(v, bytes) else v) for k, v in props.items()}


def compute_capability(dev: int) -> tuple[int, int]:
    p = properties(dev)
    return int(p["major"]), int(p["minor"])


def sm_count(dev: int) -> int:
    return int(properties(dev)["multiProcessorCount"])


def kernel_source(module: str = "linkroof") -> str:
    return (resources.files("linkroof") / "microbench" / "kernels" / f"{module}.cu").read_text()


_MODULES: dict[tuple[int, str], Any] = {}


def kernel(dev: int, name: str, module: str = "linkroof") -> Any:
    """A compiled kernel for device `dev` (NVRTC, the device's own -arch, CuPy's disk cache)."""
    cupy = cp()
    mod = _MODULES.get((dev, module))
    if mod is None:
        with cupy.cuda.Device(dev):
            mod = cupy.RawModule(code=kernel_source(module), options=("--std=c++17",),
                                 name_expressions=MODULES[module])
            try:
                mod.compile()
            except cupy.cuda.compiler.CompileException as e:
                raise BenchError(f"the {module}.cu kernels do not compile for GPU{dev}: {str(e)[:2000]}") from None
        _MODULES[(dev, module)] = mod
    with cupy.cuda.Device(dev):
        return mod.get_function(name)


def launch(dev: int, name: str, grid: int, block: int, args: tuple[Any, ...], stream: Any = None,
           shared_mem: int = 0, module: str = "linkroof") -> None:
    cupy = cp()
    fn = kernel(dev, name, module)
    with cupy.cuda.Device(dev):
        if shared_mem > 48 * 1024 and fn.max_dynamic_shared_size_bytes < shared_mem:
            fn.max_dynamic_shared_size_bytes = shared_mem
        fn((grid,), (block,), args, stream=stream, shared_mem=shared_mem)


class PinnedHost:
    """Page-locked, portable, device-mapped host memory (usable by every GPU through UVA)."""

    FLAGS = 1 | 2  # cudaHostAllocPortable | cudaHostAllocMapped

    def __init__(self, nbytes: int):
        rt = cp().cuda.runtime
        self.nbytes = nbytes
        self.ptr = rt.hostAlloc(max(nbytes, 16), self.FLAGS)

    def numpy(self, dtype: Any = "uint8") -> Any:
        import numpy as np

        buf = (ctypes.c_char * self.nbytes).from_address(self.ptr)
        return np.frombuffer(buf, dtype=dtype)

    def free(self) -> None:
        if self.ptr:
            cp().cuda.runtime.freeHost(self.ptr)
            self.ptr = 0

    def __del__(self) -> None:  # best effort; explicit free() is the rule
        try:
            self.free()
        except Exception:  # noqa: BLE001
            pass


class HostFlag:
    """Two host-mapped ints: [release flag, timed-out flag], read by the spin kernel."""

    def __init__(self) -> None:
        self.mem = PinnedHost(16)
        self.words = self.mem.numpy("int32")
        self.reset()

    def reset(self) -> None:
        self.words[:] = 0

    def release(self) -> None:
        self.words[0] = 1

    @property
    def timed_out(self) -> bool:
        return bool(self.words[1])

    @property
    def flag_ptr(self) -> int:
        return self.mem.ptr

    @property
    def timeout_ptr(self) -> int:
        return self.mem.ptr + 4


_PEER_STATE: dict[tuple[int, int], bool] = {}


def set_peer_access(a: int, b: int, enabled: bool) -> None:
    """Let device `a` map device `b`'s memory (or stop it). Idempotent."""
    cupy = cp()
    if _PEER_STATE.get((a, b)) is enabled:
        return
    rt = cupy.cuda.runtime
    with cupy.cuda.Device(a):
        try:
            if enabled:
                rt.deviceEnablePeerAccess(b)
            else:
                rt.deviceDisablePeerAccess(b)
        except rt.CUDARuntimeError as e:
            # already enabled (704) / not enabled (705) are the states we wanted
            if "AlreadyEnabled" not in str(e) and "NotEnabled" not in str(e):
                raise BenchError(f"cannot {'enable' if enabled else 'disable'} peer access GPU{a} -> GPU{b}: {e}") from None
    _PEER_STATE[a, b] = enabled


def free_memory() -> None:
    """Hand cached device and pinned blocks back between benchmarks, so that buffers of
    many sizes do not pile up in CuPy's pools (and one benchmark's leftovers never
    starve the next)."""
    import sys

    cupy = sys.modules.get("cupy")
    if cupy is None:
        return
    try:
        cupy.get_default_memory_pool().free_all_blocks()
        cupy.get_default_pinned_memory_pool().free_all_blocks()
    except Exception:  # noqa: BLE001 - best effort: no CUDA here, or a context already lost
        pass
