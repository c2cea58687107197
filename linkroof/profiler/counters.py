"""Link byte counters: the bytes that really crossed NVLink and PCIe, from NVML."""

from __future__ import annotations

from collections.abc import Sequence

from ..schema import known
from . import nvml as q


class Counters:
    """Bytes that crossed the links, per GPU: {gpu: {"nvlink_tx": B, "nvlink_rx": B, "pcie_tx": B, "pcie_rx": B}}."""

    def read(self) -> dict[int, dict[str, float]]:
        raise NotImplementedError


class NvmlCounters(Counters):
    """NVML field values: per-link NVLINK_THROUGHPUT_DATA_TX/RX (KiB, scope = link) and
    PCIE_COUNT_TX/RX_BYTES, for every GPU."""

    def __init__(self, gpus: Sequence[int], links: dict[int, int]):
        from .recording import live_source

        self.source = live_source()
        self.gpus, self.links = list(gpus), links

    def read(self) -> dict[int, dict[str, float]]:
        n = self.source.nvml
        out: dict[int, dict[str, float]] = {}
        for g in self.gpus:
            row: dict[str, float] = {}
            for key, fid, scale in (("nvlink_tx", q.FI_NVLINK_THROUGHPUT_DATA_TX, 1024),
                                    ("nvlink_rx", q.FI_NVLINK_THROUGHPUT_DATA_RX, 1024)):
                vals = [n.get("field", g, fid, link) for link in range(self.links.get(g, 0))]
                if vals and all(known(v) for v in vals):
                    row[key] = float(sum(vals)) * scale
            for key, fid in (("pcie_tx", q.FI_PCIE_COUNT_TX_BYTES), ("pcie_rx", q.FI_PCIE_COUNT_RX_BYTES)):
                v = n.get("field", g, fid, 0)
                if known(v):
                    row[key] = float(v)
            out[g] = row
        return out


def per_call(before: dict[int, dict[str, float]], after: dict[int, dict[str, float]],
             calls: int) -> dict[int, dict[str, float]]:
    """Counter bytes per call between two reads."""
    return {g: {k: (after[g][k] - before[g][k]) / calls for k in after[g] if k in before.get(g, {})}
            for g in after}
