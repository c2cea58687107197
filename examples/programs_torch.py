"""Five one-GPU programs that `compare` places and decomposes from their own timeline
(benchmarks/one_gpu_timeline.sh): an HBM-bound elementwise kernel, a large and a small
bf16 GEMM, a chain of 200 small dependent kernels, and a layer norm.

    linkroof compare examples/programs_torch.py:gemm --inputs examples/programs_torch.py:gemm_inputs \\
        --workload examples/gemm.toml

Sizes from LINKROOF_EXAMPLE_MNK (GEMM, default 8192), LINKROOF_EXAMPLE_BYTES (elementwise,
default 1 GiB of fp32), LINKROOF_EXAMPLE_CHAIN (chain length, default 200).
"""

import os

import torch

MNK = int(os.environ.get("LINKROOF_EXAMPLE_MNK", 8192))
NBYTES = int(os.environ.get("LINKROOF_EXAMPLE_BYTES", 1 << 30))
CHAIN = int(os.environ.get("LINKROOF_EXAMPLE_CHAIN", 200))


def scale_inputs():
    return (torch.randn(NBYTES // 4, device="cuda"),)


def scale(x):
    return x * 2


def gemm_inputs():
    a = torch.randn(MNK, MNK, device="cuda").to(torch.bfloat16)
    b = torch.randn(MNK, MNK, device="cuda").to(torch.bfloat16)
    return (a, b)


def gemm(a, b):
    return a @ b


def chain_inputs():
    return (torch.randn(1024, device="cuda"),)  # 4 KiB


def chain(x):
    for _ in range(CHAIN):
        x = x + 1.0
    return x


def layernorm_inputs():
    x = torch.randn(32768, 8192, device="cuda").to(torch.bfloat16)
    return (x,)


def layernorm(x):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],))
