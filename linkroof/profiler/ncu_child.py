"""The process `compare --counters` runs under Nsight Compute (profiler/ncu.py): the
user's call warmed up, then `calls` calls between cudaProfilerStart and Stop, so ncu
counts those calls' kernels and nothing of the set-up.

    python -m linkroof.profiler.ncu_child KERNEL INPUTS WARMUP CALLS
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

from .usercode import call, framework_of, resolve


def _sync(framework: str) -> None:
    if framework == "torch":
        import torch

        torch.cuda.synchronize()
    else:
        import cupy

        cupy.cuda.Device().synchronize()


def _profiler(framework: str, on: bool) -> None:
    if framework == "torch":
        import torch

        (torch.cuda.profiler.start if on else torch.cuda.profiler.stop)()
    else:
        import cupy

        (cupy.cuda.runtime.profilerStart if on else cupy.cuda.runtime.profilerStop)()


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    kernel, inputs, warmup, calls = argv[0], argv[1], int(argv[2]), int(argv[3])
    fn, make = resolve(kernel), resolve(inputs)
    try:  # score's inputs take (rank, world_size, trial): one rank, the first trial's
        takes = len(inspect.signature(make).parameters)
    except (TypeError, ValueError):
        takes = 0
    args: Any = make(0, 1, 0) if takes >= 3 else make()
    framework = framework_of(args)
    for _ in range(max(1, warmup)):
        call(fn, args)
    _sync(framework)
    _profiler(framework, True)
    for _ in range(calls):
        call(fn, args)
    _sync(framework)
    _profiler(framework, False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
