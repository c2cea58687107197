"""Units: the one place that turns bytes, rates and sizes into text and back.

Everything inside linkroof is in bytes, seconds, bytes/s and FLOP/s. GB means
1e9 bytes (the convention of nvbandwidth and nccl-tests); KiB/MiB/GiB are powers
of two and are only used for message sizes, where they are what users type.
"""

from __future__ import annotations

import re

_BINARY = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


_DECIMAL = {"": 1, "K": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9, "T": 10 ** 12}


def parse_size(text: str) -> int:
    """A size as linkroof prints them: '64KiB' -> 65536 and '1GiB' -> 2**30 (binary),
    '1GB' -> 10**9 and '4KB' -> 4000 (decimal, as every 'GB' linkroof prints means);
    a bare suffix is nccl-tests' (binary): '64K' -> 65536, '1G' -> 2**30; '512' -> 512."""
    m = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)(iB|B)?\s*", str(text), re.IGNORECASE)
    if not m:
        raise ValueError(f"not a size: {text!r} (examples: 8, 4K, 64KiB, 1GiB, 1GB = 10^9 bytes)")
    unit = m.group(3) or ""
    table = _DECIMAL if unit.upper() == "B" and m.group(2) else _BINARY
    return int(m.group(1)) * table[m.group(2).upper()]


MAX_MESSAGE = 1 << 40  # 1 TiB: more than any GPU's memory, the largest message a sweep may ask for


def parse_size_range(text: str, factor: int = 2) -> list[int]:
    """'4K:1G' -> [4096, 8192, ..., 2**30] (each step times `factor`); '8:1G:2' ->
    factor 2 (nccl-tests' -b 8 -e 1G -f 2); '64K' -> [65536]; '4K,64K,1G' -> those three."""
    if "," in text or ":" not in text:
        sizes = [parse_size(t) for t in text.split(",")]
        bad = [x for x in sizes if not 1 <= x <= MAX_MESSAGE]
        if bad:
            raise ValueError(f"bad size {bad[0]} in {text!r}: a message size is 1 B to {format_size(MAX_MESSAGE)}")
        if len(sizes) > 64:
            raise ValueError(f"{len(sizes)} sizes in {text!r}: at most 64")
        return sizes
    parts = text.split(":")
    if len(parts) == 3:
        try:
            factor = int(parts[2])
        except ValueError:
            raise ValueError(f"bad size range {text!r}: the step factor {parts[2]!r} is not an integer") from None
    elif len(parts) != 2:
        raise ValueError(f"bad size range {text!r}: START:END or START:END:FACTOR")
    lo_text, hi_text = parts[0], parts[1]
    lo, hi = parse_size(lo_text), parse_size(hi_text)
    if lo <= 0 or hi < lo:
        raise ValueError(f"bad size range {text!r}: need 0 < start <= end")
    if hi > MAX_MESSAGE:
        raise ValueError(f"bad size range {text!r}: a message size is at most {format_size(MAX_MESSAGE)}")
    if factor < 2:
        raise ValueError("size range factor must be at least 2")
    sizes = []
    s = lo
    while s <= hi:
        sizes.append(s)
        s *= factor
    return sizes


def format_size(nbytes: float) -> str:
    """Binary size for message sizes: 65536 -> '64 KiB'."""
    n = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if n == int(n) else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def format_bytes(nbytes: float) -> str:
    """Decimal size for capacities: 150754820096 -> '150.8 GB'."""
    n = float(nbytes)
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000 or unit == "PB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


def gbps(bytes_per_s: float) -> float:
    """bytes/s -> GB/s (1e9)."""
    return bytes_per_s / 1e9


def format_rate(bytes_per_s: float, digits: int = 1, significant: int | None = None) -> str:
    """bytes/s -> '395.1 GB/s' (GB = 1e9); with `significant`, that many significant
    digits and no trailing zeros ('26.5625 GB/s')."""
    if significant is not None:
        return f"{bytes_per_s / 1e9:.{significant}g} GB/s"
    return f"{bytes_per_s / 1e9:.{digits}f} GB/s"


def tflops(flop_per_s: float) -> float:
    """FLOP/s -> TFLOP/s (1e12)."""
    return flop_per_s / 1e12


def format_flops(flop_per_s: float, digits: int = 1) -> str:
    """FLOP/s -> '813.7 TFLOP/s'."""
    return f"{flop_per_s / 1e12:.{digits}f} TFLOP/s"


def format_value(value: float, unit: str) -> str:
    """A figure in its unit ('B/s', 'FLOP/s' or 's'), through the formatter of that unit."""
    if unit == "FLOP/s":
        return format_flops(value)
    if unit == "B/s":  # small messages move well under 1 GB/s: keep three significant digits there
        return format_rate(value) if value >= 10e9 else format_rate(value, significant=3)
    if unit == "s":
        return format_time(value)
    raise ValueError(f"no formatter for unit {unit!r}")


def format_time(seconds: float) -> str:
    """Seconds -> '830 ns' / '1201 ns' / '13.2 us' / '1.71 ms' / '2.0 s'; a negative time
    in the unit of its size ('-1.21 ms'), never as many nanoseconds."""
    s = float(seconds)
    if s != s:
        return "N/A"
    if s < 0:
        return "-" + format_time(-s)
    # each unit while its rounded figure stays under the next's (9.9999999 us is "10.0 us", never "10000 ns")
    if s * 1e9 < 9999.5:
        return f"{s * 1e9:.0f} ns"
    if s * 1e6 < 999.95:
        return f"{s * 1e6:.1f} us"
    if s * 1e3 < 999.995:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def cpulist(cpus: list[int] | tuple[int, ...]) -> str:
    """[0,1,2,3,8] -> '0-3,8' (the kernel's cpulist format)."""
    out: list[str] = []
    cpus = sorted(set(cpus))
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)


MAX_CPU = 1 << 16  # Linux's NR_CPUS is at most 8192; a cpulist naming CPUs past this is not a kernel's


def parse_cpulist(text: str) -> list[int]:
    """'0-3,8' -> [0,1,2,3,8]; '' -> []. ValueError for a CPU id past MAX_CPU (a damaged
    or hostile recording's '0-999999999' would otherwise build a billion-entry list)."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        part = part.strip()
        if not part:
            continue
        a, _, b = part.partition("-")
        lo, hi = int(a), int(b or a)
        if hi >= MAX_CPU or len(cpus) + hi - lo >= MAX_CPU:
            raise ValueError(f"not a kernel cpulist: CPU {hi} is past {MAX_CPU - 1}")
        cpus.extend(range(lo, hi + 1))
    return cpus


_TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def parse_time(text: str) -> float:
    """'1.2ms' -> 0.0012, '830us' -> 8.3e-4, '0.5' -> 0.5 (seconds)."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:e[-+]?\d+)?)\s*(s|ms|us|µs|ns)?\s*", str(text), re.IGNORECASE)
    if not m:
        raise ValueError(f"not a time: {text!r} (examples: 1.2ms, 830us, 0.5s)")
    return float(m.group(1)) * _TIME_UNITS[(m.group(2) or "s").lower()]
