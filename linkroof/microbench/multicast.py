"""NVSwitch multicast (multimem) benchmark: opt-in only, and refused wherever multicast
is disabled.

NVLink multicast can take every GPU of a shared host out of service; machines that
share GPUs turn it off with NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1 or
NVSHMEM_DISABLE_NVLS=1. linkroof refuses to run it while any of them is set, without
the --allow-multicast opt-in, or on hardware that does not report multicast support.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..errors import LinkroofError

DISABLING = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


class MulticastRefused(LinkroofError):
    exit_code = 4


def refusal(allowed: bool, env: Mapping[str, str] | None = None) -> str | None:
    """Why the multicast benchmark must not run here, or None."""
    env = os.environ if env is None else env
    if not allowed:
        return "the NVSwitch multicast benchmark runs only with --allow-multicast"
    set_vars = [f"{k}={env[k]}" for k, v in DISABLING.items() if env.get(k, "").strip() == v]
    if set_vars:
        return (f"refusing the NVSwitch multicast benchmark: multicast is disabled on this machine "
                f"({', '.join(set_vars)}); it can take a shared host's GPUs out of service")
    return None


def check_allowed(allowed: bool, env: Mapping[str, str] | None = None) -> None:
    reason = refusal(allowed, env)
    if reason:
        raise MulticastRefused(reason)


def _driver():
    try:
        from cuda.bindings import driver
    except ImportError as e:
        from .cuda import BenchError

        raise BenchError(f"the multicast benchmark needs the cuda-bindings package (cuda-python): {e}") from None
    return driver


def _ok(result: tuple, what: str):  # cuda.bindings returns (CUresult, *values)
    from .cuda import BenchError

    err, *values = result
    if int(err) != 0:
        raise BenchError(f"{what} failed: {err}")
    return values[0] if len(values) == 1 else values


def multicast_bench(gpus: list[int], nbytes: int, reps: int) -> list:
    """Broadcast through an NVSwitch multicast object: GPU gpus[0] stores each 16-byte
    vector once to the multicast address (multimem.st) and it lands in every GPU's
    memory. Figure: bytes written through the multicast address per second (each byte
    reaches len(gpus) GPUs). Unvalidated: never run on the accelerator machines, which
    keep multicast off."""
    check_allowed(True)
    import numpy as np

    from ..schema import BenchSpec, Measurement
    from .buffers import DeviceBuffer, new_seed
    from .cuda import BenchError, cp, sm_count
    from .timing import time_kernel

    if len(gpus) < 2:
        raise BenchError("multicast needs at least two GPUs")
    cupy = cp()
    cu = _driver()
    _ok(cu.cuInit(0), "cuInit")
    for g in gpus:
        dev = _ok(cu.cuDeviceGet(g), "cuDeviceGet")
        if not _ok(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, dev),
                   "multicast support query"):
            raise BenchError(f"GPU{g} does not report NVLink multicast support")
    prop = cu.CUmulticastObjectProp()
    prop.numDevices = len(gpus)
    prop.handleTypes = 0
    prop.flags = 0
    prop.size = nbytes
    gran = int(_ok(cu.cuMulticastGetGranularity(prop, cu.CUmulticastGranularity_flags.CU_MULTICAST_GRANULARITY_RECOMMENDED),
                   "cuMulticastGetGranularity"))
    size = (nbytes + gran - 1) // gran * gran
    prop.size = size
    mc = _ok(cu.cuMulticastCreate(prop), "cuMulticastCreate")
    cleanup: list = []
    try:
        for g in gpus:
            _ok(cu.cuMulticastAddDevice(mc, _ok(cu.cuDeviceGet(g), "cuDeviceGet")), f"cuMulticastAddDevice GPU{g}")
        unicast = {}
        for g in gpus:
            with cupy.cuda.Device(g):
                aprop = cu.CUmemAllocationProp()
                aprop.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
                aprop.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
                aprop.location.id = g
                mem = _ok(cu.cuMemCreate(size, aprop, 0), f"cuMemCreate GPU{g}")
                cleanup.append(("release", mem))
                _ok(cu.cuMulticastBindMem(mc, 0, mem, 0, size, 0), f"cuMulticastBindMem GPU{g}")
                cleanup.append(("unbind", g))
                unicast[g] = _map(cu, mem, size, gran, g, cleanup)
        issuer = gpus[0]
        with cupy.cuda.Device(issuer):
            mc_va = _map(cu, mc, size, gran, issuer, cleanup)
            src = DeviceBuffer(issuer, nbytes)
            seed = new_seed()
            src.fill(seed)
            from importlib import resources

            code = (resources.files("linkroof") / "microbench" / "kernels" / "multicast.cu").read_text()
            kernel = cupy.RawModule(code=code).get_function("multicast_store_v4")
        for g in gpus:
            with cupy.cuda.Device(g):
                mem = cupy.cuda.UnownedMemory(unicast[g], nbytes, owner=None, device_id=g)
                cupy.ndarray(nbytes // 4, cupy.uint32, cupy.cuda.MemoryPointer(mem, 0)).fill(0xDEADBEEF)
                cupy.cuda.Device(g).synchronize()
        blocks = sm_count(issuer) * 2

        def run(s):
            with cupy.cuda.Device(issuer):
                kernel((blocks,), (512,), (np.uint64(src.ptr), np.uint64(mc_va), np.uint64(nbytes // 16)), stream=s)

        times = time_kernel(issuer, run, reps)
        from .buffers import pattern_words

        checks = []
        for g in gpus:
            with cupy.cuda.Device(g):
                mem = cupy.cuda.UnownedMemory(unicast[g], nbytes, owner=None, device_id=g)
                got = cupy.ndarray(nbytes // 4, cupy.uint32, cupy.cuda.MemoryPointer(mem, 0))
                idx = np.linspace(0, nbytes // 4 - 1, num=min(nbytes // 4, 1 << 20), dtype=np.uint64)
                bad = int(np.count_nonzero(got[cupy.asarray(idx)].get() != pattern_words(idx, seed)))
                checks.append((g, bad, len(idx)))
    finally:
        _cleanup(cu, mc, size, cleanup)
    ok = all(bad == 0 for _, bad, _ in checks)
    spec = BenchSpec("multicast_store_bandwidth", "multicast", "one_to_all", tuple(gpus), nbytes, reps,
                     params={"issuer": gpus[0], "receivers": len(gpus), "validated": False})
    text = "; ".join(f"GPU{g}: {n - bad}/{n} sampled words right" for g, bad, n in checks)
    return [Measurement(spec=spec, times_s=tuple(times), bytes_per_rep=nbytes,
                        bytes_convention="bytes stored through the multicast address (each reaches every GPU)",
                        verified=ok, verification=text, warnings=("unvalidated benchmark (never run on linkroof's "
                                                                  "accelerator machines)",))]


def _map(cu, handle, size: int, gran: int, dev: int, cleanup: list) -> int:
    va = _ok(cu.cuMemAddressReserve(size, gran, 0, 0), "cuMemAddressReserve")
    cleanup.append(("free_va", va))
    _ok(cu.cuMemMap(va, size, 0, handle, 0), "cuMemMap")
    cleanup.append(("unmap", va))
    desc = cu.CUmemAccessDesc()
    desc.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    desc.location.id = dev
    desc.flags = cu.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
    _ok(cu.cuMemSetAccess(va, size, [desc], 1), "cuMemSetAccess")
    return int(va)


def _cleanup(cu, mc, size: int, cleanup: list) -> None:
    """Undo in reverse order; best effort, every step attempted."""
    for kind, value in reversed(cleanup):
        try:
            if kind == "unmap":
                cu.cuMemUnmap(value, size)
            elif kind == "free_va":
                cu.cuMemAddressFree(value, size)
            elif kind == "unbind":
                cu.cuMulticastUnbind(mc, cu.cuDeviceGet(value)[1], 0, size)
            elif kind == "release":
                cu.cuMemRelease(value)
        except Exception:  # noqa: BLE001 - keep releasing the rest
            pass
    try:
        cu.cuMemRelease(mc)
    except Exception:  # noqa: BLE001
        pass
