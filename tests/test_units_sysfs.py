"""Units, link-rate tables and sysfs PCI topology parsing."""

import pytest

from linkroof.profiler import sysfs
from linkroof.roofline import links
from linkroof.schema import Unknown
from linkroof.units import (cpulist, format_bytes, format_rate, format_size, format_time, parse_cpulist, parse_size,
                            parse_size_range)


def test_sizes():
    assert parse_size("64K") == 65536 and parse_size("1G") == 1 << 30 and parse_size("512") == 512
    assert parse_size("64KiB") == 65536 and parse_size(" 2 m ") == 2 << 20
    # as printed: GB is 10^9 (every 'GB' linkroof prints), GiB 2^30; read as GiB before
    assert parse_size("1GB") == 10 ** 9 and parse_size("1GiB") == 1 << 30 and parse_size("64KB") == 64000
    assert parse_size_range("4K:64K") == [4096, 8192, 16384, 32768, 65536]
    assert parse_size_range("8:1G", factor=4)[-1] == 1 << 29  # as nccl-tests -b 8 -e 1G -f 4
    assert parse_size_range("4K,1M") == [4096, 1 << 20]
    for bad in ("", "abc", "4X", "-1K"):
        with pytest.raises(ValueError, match="not a size"):
            parse_size(bad)
    with pytest.raises(ValueError, match="bad size range"):
        parse_size_range("1G:4K")
    assert parse_size_range("8:64:2") == [8, 16, 32, 64]  # nccl-tests -b 8 -e 64 -f 2
    assert parse_size_range("8:1G:2", factor=4)[-1] == 1 << 30  # the given factor wins
    for bad, why in (("8:1G:x", "not an integer"), ("8:1G:1", "at least 2"), ("8:16:2:2", "START:END")):
        with pytest.raises(ValueError, match=why):
            parse_size_range(bad)


def test_formatting():
    assert format_size(65536) == "64 KiB" and format_size(1 << 30) == "1 GiB" and format_size(1536) == "1.5 KiB"
    assert format_bytes(150754820096) == "150.8 GB"
    assert format_rate(395.07e9) == "395.1 GB/s"
    assert format_time(830e-9) == "830 ns" and format_time(13.2e-6) == "13.2 us" and format_time(1.71e-3) == "1.71 ms"
    assert format_time(-1209869e-9) == "-1.21 ms" and format_time(-375949e-9) == "-375.9 us"  # never "-1209869 ns"


def test_cpulists():
    assert cpulist([0, 1, 2, 3, 8, 10, 11]) == "0-3,8,10-11"
    assert parse_cpulist("0-3,8,10-11") == [0, 1, 2, 3, 8, 10, 11]
    assert parse_cpulist("") == []


def test_link_tables():
    assert links.pcie_bytes_per_s(5, 16) == pytest.approx(63.015e9, rel=1e-4)
    assert links.pcie_bytes_per_s(4, 16) == pytest.approx(31.51e9, rel=1e-3)
    assert links.pcie_bytes_per_s(6, 16) == pytest.approx(121.0e9, rel=1e-3)
    assert isinstance(links.pcie_bytes_per_s(9, 16), Unknown)
    assert links.nvlink_version(6) == "4.0" and links.nvlink_version(7) == "5.0" and links.nvlink_version(4) == "3.0"
    assert isinstance(links.nvlink_version(42), Unknown)
    assert links.nvlink_line_rate(4, 26562) == 26.5625e9  # NVML truncates the exact rate
    assert links.nvlink_line_rate(4, 25000) == 25e9  # a different speed is taken as reported
    assert links.nvlink_data_rate(5) == 50e9
    assert links.hbm_bytes_per_s(6016, 3201) == pytest.approx(4.814e12, rel=1e-3)
    assert links.parse_ib_rate("400 Gb/sec (4X NDR)") == 50e9
    assert isinstance(links.parse_ib_rate("fast"), Unknown)


P = "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"


@pytest.mark.parametrize("a, b, numa, level", [
    (f"{P}/0000:02:00.0/0000:03:00.0", f"{P}/0000:02:01.0/0000:04:00.0", (0, 0), "PIX"),
    (f"{P}/0000:02:00.0/0000:03:00.0/0000:05:00.0/0000:06:00.0", f"{P}/0000:02:01.0/0000:04:00.0", (0, 0), "PXB"),
    ("/sys/devices/pci0000:00/0000:00:06.0", "/sys/devices/pci0000:00/0000:00:07.0", (-1, -1), "PHB"),
    ("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0", "/sys/devices/pci0000:40/0000:40:01.0/0000:41:00.0", (0, 0), "NODE"),
    ("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0", "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0", (0, 1), "SYS"),
])
def test_pcie_levels(a, b, numa, level):
    na, nb = (n if n >= 0 else Unknown("?") for n in numa)
    assert sysfs.pcie_level(sysfs.path_components(a), sysfs.path_components(b), na, nb) == level


def test_pcie_level_unknowns():
    a = sysfs.path_components("/sys/devices/pci0000:00/0000:00:01.0")
    b = sysfs.path_components("/sys/devices/pci0000:80/0000:80:01.0")
    assert isinstance(sysfs.pcie_level(a, b, Unknown("x"), 0), Unknown)
    assert isinstance(sysfs.pcie_level(None, b, 0, 0), Unknown)
    assert sysfs.path_components("/sys/devices/pci0000:00/0000:00:03.0/virtio2") == ("pci0000:00", "0000:00:03.0")
    assert sysfs.path_components("/sys/devices/virtual/net/lo") is None
    assert sysfs.sysfs_bus_id("00000000:00:06.0") == "0000:00:06.0"
    assert sysfs.sysfs_bus_id("0") is None and sysfs.sysfs_bus_id("00000000:00:06") is None  # a malformed id is not one
