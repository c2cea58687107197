"""Link rates from standards and NVIDIA's documentation: pure arithmetic, no NVML.

All rates are bytes/s per direction.
"""

from __future__ import annotations

from ..schema import Unknown

# PCIe: transfer rate per lane (GT/s) and line encoding, per direction.
# Gen1/2: 8b/10b; Gen3-5: 128b/130b; Gen6: PAM4 with 256-byte FLITs (242 of them data).
PCIE_GT_PER_S = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}
PCIE_ENCODING = {1: 8 / 10, 2: 8 / 10, 3: 128 / 130, 4: 128 / 130, 5: 128 / 130, 6: 242 / 256}


def pcie_lane_bytes_per_s(gen: int) -> float | Unknown:
    """Per lane, per direction, after line encoding: Gen5 -> 3.94e9."""
    if gen not in PCIE_GT_PER_S:
        return Unknown(f"PCIe generation {gen} not in the table")
    return PCIE_GT_PER_S[gen] * 1e9 * PCIE_ENCODING[gen] / 8


def pcie_bytes_per_s(gen: int, width: int) -> float | Unknown:
    """Gen5 x16 -> 63.0e9 bytes/s per direction."""
    lane = pcie_lane_bytes_per_s(gen)
    return lane * width if not isinstance(lane, Unknown) else lane


# NVML's nvmlDeviceGetNvLinkVersion returns an enum, not the generation:
# NVML_NVLINK_VERSION_1_0 = 1, 2_0 = 2, 2_2 = 3, 3_0 = 4, 3_1 = 5, 4_0 = 6, 5_0 = 7, 6_0 = 8.
NVLINK_VERSION_ENUM = {1: "1.0", 2: "2.0", 3: "2.2", 4: "3.0", 5: "3.1", 6: "4.0", 7: "5.0", 8: "6.0"}

# Per link, per direction (NVIDIA's product pages: P100 160 GB/s over 4 links both
# directions, V100 300 GB/s over 6, A100 600 GB/s over 12, H100 900 GB/s over 18,
# B200 1.8 TB/s over 18).
NVLINK_DATA_RATE = {1: 20e9, 2: 25e9, 3: 25e9, 4: 25e9, 5: 50e9}

# Signalling rate per link, per direction, for generations whose NVML speed field
# truncates to whole MB/s (NVLink 4: 2 lanes x 106.25 Gb/s = 26.5625 GB/s -> NVML 26562).
NVLINK_LINE_RATE = {3: 25.78125e9, 4: 26.5625e9, 5: 53.125e9}


def nvlink_version(enum_value: int) -> str | Unknown:
    return NVLINK_VERSION_ENUM.get(enum_value, Unknown(f"NVML NVLink version enum {enum_value} not known"))


def nvlink_data_rate(generation: int) -> float | Unknown:
    return NVLINK_DATA_RATE.get(generation, Unknown(f"no data rate known for NVLink {generation}"))


def nvlink_line_rate(generation: int | Unknown, nvml_mbytes_per_s: int | Unknown) -> float | Unknown:
    """The per-link line rate: NVML's speed field (MB/s), made exact where NVML truncated
    a known nominal rate (26562 -> 26.5625e9)."""
    if isinstance(nvml_mbytes_per_s, Unknown) or not nvml_mbytes_per_s:
        return nvml_mbytes_per_s if isinstance(nvml_mbytes_per_s, Unknown) else Unknown("NVML speed is 0")
    nominal = NVLINK_LINE_RATE.get(generation) if isinstance(generation, int) else None
    if nominal is not None and int(nominal / 1e6) == int(nvml_mbytes_per_s):
        return nominal
    return nvml_mbytes_per_s * 1e6


def hbm_bytes_per_s(bus_width_bits: int, memory_clock_mhz: int) -> float:
    """Double data rate: 6016 bits x 3201 MHz x 2 / 8 = 4.81e12 bytes/s (H200)."""
    return bus_width_bits * memory_clock_mhz * 1e6 * 2 / 8


def parse_ib_rate(text: str) -> float | Unknown:
    """sysfs infiniband rate '400 Gb/sec (4X NDR)' -> 50e9 bytes/s."""
    try:
        value = float(text.strip().split()[0])
    except (ValueError, IndexError):
        return Unknown(f"unreadable rate {text!r}")
    return value * 1e9 / 8
