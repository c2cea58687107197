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


def multicast_bench(gpus: list[int], nbytes: int, reps: int) -> list:
    """Broadcast through an NVSwitch multicast object (multimem.st)."""
    check_allowed(True)
    from .cuda import BenchError

    # The body (cuMulticastCreate, binding, multimem.st kernel) is not written yet: it
    # could never be validated on the accelerator machines, which keep multicast off.
    raise BenchError("the multicast benchmark is not implemented in this version of linkroof")
