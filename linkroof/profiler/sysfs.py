"""What NVML does not know: NICs, PCI paths, NUMA nodes and the host, read from sysfs/procfs.

Reads go through an `Fs` whose answers can be recorded and replayed like NVML's, so a
recording holds everything the probe saw. Missing files are None, never an exception.
"""

from __future__ import annotations

import os
import re
from typing import Any

from ..roofline.links import parse_ib_rate
from ..schema import Nic, Unknown, known

PCI_COMPONENT = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
LEVELS = ("X", "PIX", "PXB", "PHB", "NODE", "SYS")


class LiveFs:
    def listdir(self, path: str) -> list[str] | None:
        try:
            return sorted(os.listdir(path))
        except OSError:
            return None

    def read(self, path: str, max_bytes: int = 4096) -> str | None:
        try:
            with open(path, "rb") as f:
                return f.read(max_bytes).decode(errors="replace").strip()
        except OSError:
            return None

    def realpath(self, path: str) -> str | None:
        return os.path.realpath(path) if os.path.exists(path) else None


class RecordingFs:
    def __init__(self, inner: Any):
        self.inner = inner
        self.answers: dict[str, Any] = {}

    def _keep(self, op: str, path: str, value: Any) -> Any:
        self.answers[f"{op}:{path}"] = value
        return value

    def listdir(self, path: str) -> list[str] | None:
        return self._keep("listdir", path, self.inner.listdir(path))

    def read(self, path: str, max_bytes: int = 4096) -> str | None:
        return self._keep("read", path, self.inner.read(path, max_bytes))

    def realpath(self, path: str) -> str | None:
        return self._keep("realpath", path, self.inner.realpath(path))


class ReplayFs:
    def __init__(self, answers: dict[str, Any]):
        self.answers = answers

    def listdir(self, path: str) -> list[str] | None:
        value = self.answers.get(f"listdir:{path}")
        return [v for v in value if isinstance(v, str)][:4096] if isinstance(value, list) else None

    def read(self, path: str, max_bytes: int = 4096) -> str | None:
        value = self.answers.get(f"read:{path}")
        return value if isinstance(value, str) else None

    def realpath(self, path: str) -> str | None:
        value = self.answers.get(f"realpath:{path}")
        return value if isinstance(value, str) else None


_BUS_ID = re.compile(r"^([0-9a-f]{1,8}):([0-9a-f]{2}:[0-9a-f]{2}\.[0-7])$")


def sysfs_bus_id(nvml_bus_id: str) -> str | None:
    """NVML '00000000:00:06.0' -> sysfs '0000:00:06.0'; None for anything not shaped
    as a PCI bus id (a recording edited by hand, a driver's odd answer)."""
    m = _BUS_ID.match(str(nvml_bus_id).strip().lower())
    return f"{int(m.group(1), 16):04x}:{m.group(2)}" if m else None


def pci_path(fs: Any, sysfs_id: str) -> tuple[str, ...] | None:
    """The chain of PCI devices from the host bridge down to the device:
    ('pci0000:00', '0000:00:01.0', '0000:01:00.0')."""
    real = fs.realpath(f"/sys/bus/pci/devices/{sysfs_id}")
    return path_components(real) if real else None


def path_components(real: str) -> tuple[str, ...] | None:
    parts = [p for p in real.split("/") if p]
    roots = [i for i, p in enumerate(parts) if p.startswith("pci")]
    if not roots:
        return None
    root = roots[0]
    chain = [parts[root]]
    for p in parts[root + 1:]:
        if not PCI_COMPONENT.match(p):
            break
        chain.append(p)
    return tuple(chain) if len(chain) > 1 else None


def pcie_level(pa: tuple[str, ...] | None, pb: tuple[str, ...] | None,
               numa_a: int | Unknown, numa_b: int | Unknown) -> str | Unknown:
    """nvidia-smi topo -m's connection level between two PCI devices from their paths."""
    if not pa or not pb:
        return Unknown("PCI path not found in sysfs")
    if pa == pb:
        return "X"
    if pa[0] != pb[0]:
        if known(numa_a) and known(numa_b):
            return "NODE" if numa_a == numa_b else "SYS"
        return Unknown("different host bridges and NUMA node unknown")
    rest_a, rest_b = pa[1:], pb[1:]
    common = 0
    while common < min(len(rest_a), len(rest_b)) and rest_a[common] == rest_b[common]:
        common += 1
    if common == 0:
        return "PHB"
    below_a, below_b = len(rest_a) - common, len(rest_b) - common
    return "PIX" if max(below_a, below_b) <= 2 else "PXB"


def level_rank(level: str | Unknown) -> int:
    return LEVELS.index(level) if isinstance(level, str) and level in LEVELS else len(LEVELS)


def _cpulist_ok(cpus: str) -> bool:
    from ..units import parse_cpulist

    try:
        parse_cpulist(cpus)
    except ValueError:
        return False
    return True


def read_numa_nodes(fs: Any) -> list[tuple[int, str]]:
    nodes = []
    for entry in fs.listdir("/sys/devices/system/node") or []:
        m = re.fullmatch(r"node(\d+)", entry)
        if m:
            cpus = (fs.read(f"/sys/devices/system/node/{entry}/cpulist") or "").strip()
            if not re.fullmatch(r"[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*", cpus) or not _cpulist_ok(cpus):
                cpus = ""  # not a kernel cpulist (a damaged recording): the node's CPUs unknown
            nodes.append((int(m.group(1)), cpus))
    return sorted(nodes)


def read_cpu_model(fs: Any) -> str | Unknown:
    text = fs.read("/proc/cpuinfo", 8192) or ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "CPU part") and value.strip():
            return value.strip()
    return Unknown("no model name in /proc/cpuinfo")


def read_device_numa(fs: Any, sysfs_id: str) -> int | Unknown:
    text = fs.read(f"/sys/bus/pci/devices/{sysfs_id}/numa_node")
    try:
        node = int(text) if text is not None else -1
    except ValueError:
        node = -1
    return node if node >= 0 else Unknown("sysfs numa_node is -1 or missing")


def _pci_id_of(real: str | None) -> str | Unknown:
    chain = path_components(real) if real else None
    return chain[-1] if chain else Unknown("no PCI device")


def read_nics(fs: Any) -> list[dict[str, Any]]:
    """RDMA devices from /sys/class/infiniband and PCI network interfaces from
    /sys/class/net, as raw dicts (name, kind, link_layer, rate, state, pci path, netdevs)."""
    nics: list[dict[str, Any]] = []
    claimed_pci: set[str] = set()
    for name in fs.listdir("/sys/class/infiniband") or []:
        base = f"/sys/class/infiniband/{name}"
        real = fs.realpath(f"{base}/device")
        ports = fs.listdir(f"{base}/ports") or []
        port = f"{base}/ports/{ports[0]}" if ports else None
        rate_text = fs.read(f"{port}/rate") if port else None
        state = fs.read(f"{port}/state") if port else None  # "4: ACTIVE"
        nic = {
            "name": name, "kind": "infiniband",
            "link_layer": (fs.read(f"{port}/link_layer") if port else None) or Unknown("no port"),
            "rate": parse_ib_rate(rate_text) if rate_text else Unknown("no rate in sysfs"),
            "state": state.split(":")[-1].strip() if state else Unknown("no port state"),
            "real": real, "netdevs": tuple(fs.listdir(f"{base}/device/net") or ()),
        }
        nics.append(nic)
        if real:
            claimed_pci.add(real)
    for name in fs.listdir("/sys/class/net") or []:
        real = fs.realpath(f"/sys/class/net/{name}/device")
        if not real or not path_components(real) or real in claimed_pci:
            continue  # virtual interfaces have no device; RDMA ones are listed above
        speed = fs.read(f"/sys/class/net/{name}/speed")
        try:
            mbps = int(speed) if speed is not None else -1
        except ValueError:
            mbps = -1
        nics.append({
            "name": name, "kind": "ethernet",
            "link_layer": "Ethernet",
            "rate": mbps * 1e6 / 8 if mbps > 0 else Unknown("speed unknown (link down or virtual)"),
            "state": fs.read(f"/sys/class/net/{name}/operstate") or Unknown("no operstate"),
            "real": real, "netdevs": (name,),
        })
    return nics


def build_nics(fs: Any, raw: list[dict[str, Any]], gpu_paths: list[tuple[str, ...] | None],
               gpu_numa: list[int | Unknown]) -> tuple[Nic, ...]:
    out = []
    nic_paths = [path_components(nic["real"]) if nic["real"] else None for nic in raw]
    nic_numa = [read_device_numa(fs, pid) if isinstance(pid := _pci_id_of(nic["real"]), str) else Unknown("no PCI device")
                for nic in raw]
    for k, nic in enumerate(raw):
        path, numa = nic_paths[k], nic_numa[k]
        pci_id = _pci_id_of(nic["real"])
        levels = [pcie_level(path, gp, numa, gn) for gp, gn in zip(gpu_paths, gpu_numa)]
        ranked = sorted(range(len(levels)), key=lambda i: (level_rank(levels[i]), i))
        nearest: int | Unknown = Unknown("no GPU with a known PCI path")
        if ranked and level_rank(levels[ranked[0]]) < len(LEVELS):
            nearest = ranked[0]
        out.append(Nic(
            name=nic["name"], kind=nic["kind"], link_layer=nic["link_layer"],
            rate_bytes_per_s=nic["rate"], state=nic["state"], pci_bus_id=pci_id,
            netdevs=tuple(nic["netdevs"]), nearest_gpu=nearest,
            gpu_levels=tuple(lv if isinstance(lv, str) else "?" for lv in levels),
            nic_levels=tuple(lv if isinstance(lv := pcie_level(path, op, numa, on), str) else "?"
                             for op, on in zip(nic_paths, nic_numa)),
        ))
    return tuple(out)
