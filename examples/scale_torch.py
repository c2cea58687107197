"""An HBM-bound elementwise kernel on one GPU, y = 2x, in bf16 (torch), with a
reference computed in float32 and rounded back: `compare` checks a bf16 result.

    linkroof compare examples/scale_torch.py:scale --inputs examples/scale_torch.py:make_inputs \\
        --reference examples/scale_torch.py:scale_reference --workload examples/scale.toml

The size comes from LINKROOF_EXAMPLE_BYTES (default 1 GiB of input); the data type from
LINKROOF_EXAMPLE_DTYPE (bfloat16, float16, float32, or float8_e4m3fn where torch has it).
"""

import os

import torch

NBYTES = int(os.environ.get("LINKROOF_EXAMPLE_BYTES", 1 << 30))
DTYPE = getattr(torch, os.environ.get("LINKROOF_EXAMPLE_DTYPE", "bfloat16"))


def make_inputs():
    n = NBYTES // torch.tensor([], dtype=DTYPE).element_size()
    x = torch.randn(n, device="cuda", dtype=torch.float32)
    return (x.to(DTYPE),)


def scale(x):
    if DTYPE.is_floating_point and DTYPE.itemsize == 1:  # float8 has no multiply: through half, as fp8 code does
        return (x.to(torch.float16) * 2).to(DTYPE)
    return x * 2


def scale_reference(x):
    return (x.float() * 2).to(DTYPE)
