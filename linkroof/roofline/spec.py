"""Spec-sheet peaks of GPUs, dense (no structured sparsity), each with its source.

Values are NVIDIA's published datasheet figures for the SXM/board part at boost clock.
Where a datasheet gives only a sparse figure, the dense one is half of it (stated in
the source). A value not in a datasheet is absent: the model then says "unknown",
or derives it from the topology (SMs x clock x per-SM rate) and labels it derived.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..schema import Gpu, Unknown, known

T = 1e12


@dataclass(frozen=True)
class GpuSpec:
    name: str
    flops: dict[str, float]  # dtype -> dense FLOP/s
    hbm_bytes_per_s: float
    hbm_bytes: float
    nvlink_generation: int | None
    nvlink_links: int | None
    nvlink_bytes_per_s_per_link: float | None  # per direction
    source: str
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def nvlink_bytes_per_s(self) -> float | None:
        if self.nvlink_links is None or self.nvlink_bytes_per_s_per_link is None:
            return None
        return self.nvlink_links * self.nvlink_bytes_per_s_per_link


HOPPER_SXM = {"fp64": 67 * T, "fp32": 67 * T, "tf32": 494.5 * T, "fp16": 989.5 * T, "bf16": 989.5 * T,
              "fp8": 1979 * T, "int8": 1979 * T}

GPU_SPECS: dict[str, GpuSpec] = {
    "A100-SXM4-40GB": GpuSpec("A100 SXM 40GB", {"fp64": 19.5 * T, "fp32": 19.5 * T, "tf32": 156 * T, "fp16": 312 * T,
                                                 "bf16": 312 * T, "int8": 624 * T},
                              1555e9, 40e9, 3, 12, 25e9, "NVIDIA A100 datasheet (fp64 = tensor core)"),
    "A100-SXM4-80GB": GpuSpec("A100 SXM 80GB", {"fp64": 19.5 * T, "fp32": 19.5 * T, "tf32": 156 * T, "fp16": 312 * T,
                                                 "bf16": 312 * T, "int8": 624 * T},
                              2039e9, 80e9, 3, 12, 25e9, "NVIDIA A100 datasheet (fp64 = tensor core)"),
    "A100-PCIE-80GB": GpuSpec("A100 PCIe 80GB", {"fp64": 19.5 * T, "fp32": 19.5 * T, "tf32": 156 * T,
                                                  "fp16": 312 * T, "bf16": 312 * T, "int8": 624 * T},
                              1935e9, 80e9, 3, 12, 25e9, "NVIDIA A100 datasheet (NVLink bridge: 600 GB/s both ways)"),
    "H100-SXM": GpuSpec("H100 SXM", HOPPER_SXM, 3.35e12, 80e9, 4, 18, 25e9,
                        "NVIDIA H100 datasheet (dense = half the sparse figures; fp64 = tensor core)"),
    "H100-PCIE": GpuSpec("H100 PCIe", {"fp64": 51 * T, "fp32": 51 * T, "tf32": 378 * T, "fp16": 756 * T,
                                       "bf16": 756 * T, "fp8": 1513 * T, "int8": 1513 * T},
                         2.0e12, 80e9, 4, 12, 25e9,
                         "NVIDIA H100 datasheet (PCIe card; NVLink bridge 600 GB/s both ways)"),
    "H200": GpuSpec("H200 SXM", HOPPER_SXM, 4.8e12, 141e9, 4, 18, 25e9,
                    "NVIDIA H200 datasheet (compute as H100 SXM; dense = half the sparse figures)"),
    "GH200": GpuSpec("GH200 (GPU)", HOPPER_SXM, 4.0e12, 96e9, 4, 18, 25e9,
                     "NVIDIA GH200 datasheet, 96 GB HBM3 version; NVLink-C2C 900 GB/s to Grace not counted here"),
    "B200": GpuSpec("B200", {"fp64": 37 * T, "tf32": 1100 * T, "fp16": 2250 * T, "bf16": 2250 * T, "fp8": 4500 * T,
                             "int8": 4500 * T, "fp4": 9000 * T},
                    8.0e12, 180e9, 5, 18, 50e9,
                    "NVIDIA HGX B200 datasheet divided by 8 GPUs (dense = half the sparse figures)"),
    "GB200": GpuSpec("GB200 (per GPU)", {"fp64": 45 * T, "tf32": 1250 * T, "fp16": 2500 * T, "bf16": 2500 * T,
                                         "fp8": 5000 * T, "int8": 5000 * T, "fp4": 10000 * T},
                     8.0e12, 186e9, 5, 18, 50e9,
                     "NVIDIA GB200 NVL72 datasheet per GPU (dense = half the sparse figures)"),
    "B300": GpuSpec("B300", {"fp4": 15000 * T}, 8.0e12, 288e9, 5, 18, 50e9,
                    "NVIDIA Blackwell Ultra (GB300 NVL72 1.1 EF dense fp4 / 72); other data types not in the table",
                    notes=("fp16/bf16/fp8/fp64 for B300 are not in this table: unknown, not guessed",)),
    "L40S": GpuSpec("L40S", {"fp32": 91.6 * T, "tf32": 183 * T, "fp16": 362 * T, "bf16": 362 * T, "fp8": 733 * T,
                             "int8": 733 * T},
                    864e9, 48e9, None, None, None, "NVIDIA L40S datasheet (dense = half the sparse figures)"),
}

# NVML names -> table keys, most specific first
_NAME_PATTERNS = [
    (r"A100.*SXM.*40GB|A100-SXM4-40GB", "A100-SXM4-40GB"),
    (r"A100.*SXM|A100-SXM4-80GB", "A100-SXM4-80GB"),
    (r"A100.*PCIe", "A100-PCIE-80GB"),
    (r"GH200", "GH200"),
    (r"H100.*PCIe", "H100-PCIE"),
    (r"H100", "H100-SXM"),
    (r"H200", "H200"),
    (r"GB200", "GB200"),
    (r"B300", "B300"),
    (r"B200", "B200"),
    (r"L40S", "L40S"),
]

# Dense FP32 / FP64 (non-tensor) FLOP per clock per SM, by compute capability, for GPUs
# not in the table: 2 FLOP per FMA x FMA units.
PER_SM_FLOP_PER_CLOCK = {
    "fp32": {"7.0": 128, "8.0": 128, "8.6": 256, "8.9": 256, "9.0": 256, "10.0": 256, "12.0": 256},
    "fp64": {"7.0": 64, "8.0": 64, "9.0": 128},
}

# NICs: line rates per direction
NIC_RATES = {f"{g} Gb/s": g * 1e9 / 8 for g in (100, 200, 400, 800)}


def match_gpu(name: str | Unknown) -> GpuSpec | None:
    if not isinstance(name, str):
        return None
    for pattern, key in _NAME_PATTERNS:
        if re.search(pattern, name, re.IGNORECASE):
            return GPU_SPECS[key]
    return None


def derived_flops(gpu: Gpu, dtype: str) -> tuple[float, str] | None:
    """SMs x max SM clock x per-SM rate, where the data type's per-SM rate is known."""
    rates = PER_SM_FLOP_PER_CLOCK.get(dtype, {})
    if not (known(gpu.sm_count) and known(gpu.max_sm_clock_mhz) and known(gpu.compute_capability)):
        return None
    per_sm = rates.get(gpu.compute_capability)
    if per_sm is None:
        return None
    value = gpu.sm_count * gpu.max_sm_clock_mhz * 1e6 * per_sm
    return value, f"derived: {gpu.sm_count} SMs x {gpu.max_sm_clock_mhz} MHz x {per_sm} FLOP/clock/SM"


def hbm_spec(gpu: Gpu) -> tuple[float, str] | None:
    """The one HBM spec of a GPU, wherever it is shown (probe's ceiling, the roofline's
    spec roof, "% of spec"): the datasheet's figure where the GPU is in the table, else
    bus width x memory clock x 2 (labelled derived); the other figure in the basis."""
    from .links import hbm_bytes_per_s

    derived = None
    if known(gpu.memory_bus_width_bits) and known(gpu.max_memory_clock_mhz):
        derived = hbm_bytes_per_s(gpu.memory_bus_width_bits, gpu.max_memory_clock_mhz)
        how = f"{gpu.memory_bus_width_bits}-bit bus x {gpu.max_memory_clock_mhz} MHz x 2"
    spec = match_gpu(gpu.name)
    if spec is not None:
        beside = f"; {how} gives {derived / 1e9:.1f} GB/s" if derived else ""
        return spec.hbm_bytes_per_s, f"{spec.name} datasheet{beside}"
    if derived:
        return derived, f"derived: {how} (double data rate)"
    return None
