"""Sanity of measured figures against the topology's spec ceilings. A bandwidth above
the physical limit of its path is a counting or caching artifact, never a result: it
is flagged on the measurement (and so shown wherever the figure is, and kept out of
every ceiling).

What each figure is held to, per direction, against the path's usable data rate (450 GB/s
on 18 NVLink 4 links; the line rate only where no data rate is known, as every "% of
spec" does: model.spec_basis):
- a peer transfer between two GPUs: the pair's ceiling;
- a collective, by its bus bandwidth (what nccl-tests' busbw says crossed each GPU's
  link): the slowest of its GPUs' NVLink (else PCIe) ceilings, or the pair's for two;
- a host transfer: the GPU's PCIe link;
- a local copy by the bytes it moves through HBM (read + write: twice what it copies),
  a read-only or write-only kernel by its bytes: the GPU's HBM.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from ..schema import Ceiling, Measurement, Topology, known
from ..units import format_rate
from .model import spec_basis

SINGLE_DIRECTION = {"p2p_read", "p2p_write", "bidir", "all_to_all", "all_to_one", "one_to_all"}
HOST = ("h2d", "d2h", "h2d_all", "d2h_all", "bidir_host")
LOCAL = {"local": 2, "local_read": 1, "local_write": 1}  # bytes through HBM per byte counted


def _ceiling(topo: Topology, name: str) -> Ceiling | None:
    try:
        c = topo.ceiling(name)
    except KeyError:
        return None
    return c if spec_basis(c) else None


def path_ceiling(topo: Topology, m: Measurement) -> Ceiling | None:
    """The spec ceiling (per direction) that bounds one measured transfer, if any."""
    if "parts" in m.spec.params or not m.bytes_per_rep:
        return None  # sums of simultaneous parts, latency and compute figures
    devs = m.spec.devices
    if m.spec.mechanism == "nccl" and len(devs) >= 2:
        if len(devs) == 2:
            c = _ceiling(topo, f"pair{min(devs)}-{max(devs)}")
            if c is not None:
                return c
        per_gpu = [_ceiling(topo, f"gpu{d}.nvlink") or _ceiling(topo, f"gpu{d}.pcie") for d in devs]
        if per_gpu and all(per_gpu):
            return min(per_gpu, key=lambda c: spec_basis(c)[0])
        return None
    if m.spec.pattern in SINGLE_DIRECTION and len(devs) == 2:
        return _ceiling(topo, f"pair{min(devs)}-{max(devs)}")
    if m.spec.pattern in HOST and devs:
        return _ceiling(topo, f"gpu{devs[0]}.pcie")
    if m.spec.pattern in LOCAL and devs:
        return _ceiling(topo, f"gpu{devs[0]}.hbm")
    return None


def checked_rate(m: Measurement) -> tuple[float, str]:
    """The rate a figure is held to its ceiling by, and what it counts: a collective's
    bus bandwidth, a local copy's bytes through HBM, else its bandwidth."""
    if m.spec.mechanism == "nccl":
        return m.busbw_bytes_per_s, "bus bandwidth"
    factor = LOCAL.get(m.spec.pattern, 1)
    if factor != 1:
        return factor * m.bandwidth_bytes_per_s, "bytes through HBM (read + write)"
    return m.bandwidth_bytes_per_s, "bandwidth"


def flag_above_spec(topo: Topology, measurements: Iterable[Measurement]) -> list[Measurement]:
    out = []
    for m in measurements:
        c = path_ceiling(topo, m)
        if c is not None:
            limit, basis = spec_basis(c)
            bw, what = checked_rate(m)
            if bw == bw and bw > limit:
                line = (f" (line rate {format_rate(c.bytes_per_s)})"
                        if basis == "data rate" and known(c.bytes_per_s) and c.bytes_per_s != limit else "")
                note = (f"above spec: its {what} {format_rate(bw)} exceeds {c.name}'s {basis} {format_rate(limit)}"
                        f"{line} (a counting or caching artifact, not a result)")
                if note not in m.warnings:
                    m = dataclasses.replace(m, warnings=m.warnings + (note,))
        out.append(m)
    return out
