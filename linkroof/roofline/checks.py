"""Sanity of measured figures against the topology's spec ceilings. A bandwidth above
the physical limit of its path is a counting or caching artifact, never a result: it
is flagged on the measurement (and so shown wherever the figure is)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from ..schema import Ceiling, Measurement, Topology, known
from ..units import format_rate

SINGLE_DIRECTION = {"p2p_read", "p2p_write", "bidir", "all_to_all", "all_to_one", "one_to_all"}


def path_ceiling(topo: Topology, m: Measurement) -> Ceiling | None:
    """The spec ceiling (per direction) that bounds one measured transfer, if any."""
    if "parts" in m.spec.params or not m.bytes_per_rep:
        return None  # sums of simultaneous parts, latency and compute figures
    devs = m.spec.devices
    names: list[str] = []
    if m.spec.pattern in SINGLE_DIRECTION and len(devs) == 2:
        a, b = sorted(devs)
        names = [f"pair{a}-{b}"]
    elif m.spec.pattern in ("h2d", "d2h", "h2d_all", "d2h_all", "bidir_host") and devs:
        names = [f"gpu{devs[0]}.pcie"]
    elif m.spec.pattern in ("local", "local_read", "local_write") and devs:
        names = [f"gpu{devs[0]}.hbm"]
    for name in names:
        try:
            c = topo.ceiling(name)
        except KeyError:
            continue
        if known(c.bytes_per_s):
            return c
    return None


def flag_above_spec(topo: Topology, measurements: Iterable[Measurement]) -> list[Measurement]:
    out = []
    for m in measurements:
        c = path_ceiling(topo, m)
        # a collective moves its bus bandwidth over each link (nccl-tests' busbw); its
        # algbw counts bytes that never cross one (all-to-all's own chunk)
        bw = m.busbw_bytes_per_s if m.spec.mechanism == "nccl" else m.bandwidth_bytes_per_s
        if c is not None and bw > c.bytes_per_s:
            note = (f"above spec: {format_rate(bw)} exceeds {c.name}'s line rate {format_rate(c.bytes_per_s)} "
                    "(a counting or caching artifact, not a result)")
            if note not in m.warnings:
                m = dataclasses.replace(m, warnings=m.warnings + (note,))
        out.append(m)
    return out
