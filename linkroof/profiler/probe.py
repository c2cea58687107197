"""The topology probe: NVML (or a recording) + sysfs -> `Topology`, with spec ceilings.

    >>> from linkroof import probe
    >>> topo = probe(replay="h200x2")        # no GPU needed
    >>> topo.ceiling("gpu0.nvlink").bytes_per_s
    478125000000.0
"""

from __future__ import annotations

import datetime as _dt
import os
import time
from typing import Any

from ..errors import LinkroofError, NoGpuError

MAX_GPUS = 64  # GPUs one host has (an HGX board 8, the largest nodes 16): a driver or recording saying more is not believed


class ProbeError(LinkroofError):
    """What the driver (or a recording) answered cannot describe a machine."""
from ..roofline import links
from ..roofline.spec import hbm_spec
from ..schema import (Ceiling, Fabric, Gpu, Host, Mig, Nic, NumaNode, NvLink, Pair, Topology, Unknown,
                      known)
from ..units import cpulist, format_rate, parse_cpulist
from . import nvml as q
from . import sysfs
from .recording import Source, live_source, replay_source, resolve

ARCHITECTURES = {2: "Kepler", 3: "Maxwell", 4: "Pascal", 5: "Volta", 6: "Turing", 7: "Ampere",
                 8: "Ada", 9: "Hopper", 10: "Blackwell", 13: "Rubin"}
# CUDA cores per SM by compute capability, to turn NVML's core count into SMs.
CORES_PER_SM = {"6.0": 64, "6.1": 128, "7.0": 64, "7.2": 64, "7.5": 64, "8.0": 64, "8.6": 128, "8.7": 128,
                "8.9": 128, "9.0": 128, "10.0": 128, "10.3": 128, "12.0": 128, "12.1": 128}
TOPOLOGY_LEVELS = {0: "PIX", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}
P2P_STATUS = {0: "OK", 1: "CNS", 2: "GNS", 3: "TNS", 4: "DR", 5: "NS", 6: "U"}
REMOTE_TYPES = {0: "gpu", 1: "cpu", 2: "switch", 255: "unknown"}
FABRIC_STATES = {0: "not supported", 1: "not started", 2: "in progress", 3: "completed"}


def probe(replay: str | None = None, record: str | None = None) -> Topology:
    """Probe this machine through NVML, or rebuild a topology from a recording.

    `replay`: a bundled name ('h200x2') or a recording file. `record`: a path where every
    raw NVML / sysfs answer is saved. Raises NoGpuError without a driver or GPU, and
    RecordingError for a bad recording."""
    if replay is not None:
        data, label = resolve(replay)
        return probe_source(replay_source(data, label))
    source = live_source(record=record is not None)
    try:
        topology = probe_source(source)
    finally:
        if record is not None:
            from .recording import save

            save(source.recording(), record)
        source.close()
    return topology


def _same_bus(a: Any, b: Any) -> bool:
    return isinstance(a, str) and isinstance(b, str) and a.upper().lstrip("0") == b.upper().lstrip("0")


def probe_source(source: Source) -> Topology:
    t0 = time.perf_counter()
    n, fs = source.nvml, source.fs
    count = n.get("device_count")
    if not known(count):
        raise NoGpuError(f"NVIDIA driver found but it lists no GPU ({count.reason})")
    if count == 0:
        raise NoGpuError("NVIDIA driver found but it lists no GPU")
    if not isinstance(count, int) or not 0 < count <= MAX_GPUS:
        raise ProbeError(f"NVML says there are {count!r} GPUs: not a machine linkroof can describe (at most "
                         f"{MAX_GPUS} GPUs)")
    notes: list[str] = []

    nodes = sysfs.read_numa_nodes(fs)
    host = Host(
        hostname=fs.read("/proc/sys/kernel/hostname") or "unknown",
        cpu_model=sysfs.read_cpu_model(fs),
        numa_nodes=tuple(NumaNode(i, cpus) for i, cpus in nodes),
        kernel=fs.read("/proc/sys/kernel/osrelease") or Unknown("no /proc/sys/kernel/osrelease"),
    )
    gpus = [_probe_gpu(n, fs, d, nodes, notes) for d in range(count)]
    ids = [sysfs.sysfs_bus_id(g.pci_bus_id) if known(g.pci_bus_id) else None for g in gpus]
    paths = [sysfs.pci_path(fs, i) if i else None for i in ids]
    pairs = [_probe_pair(n, gpus, paths, a, b, notes) for a in range(count) for b in range(count) if a != b]
    nics = sysfs.build_nics(fs, sysfs.read_nics(fs), paths, [g.numa_affinity for g in gpus])
    ceilings = _ceilings(gpus, pairs, nics, notes)
    if "CUDA_VISIBLE_DEVICES" in os.environ and source.name == "nvml":
        notes.append("NVML lists every GPU; CUDA_VISIBLE_DEVICES does not apply to this table")
    return Topology(
        host=host,
        driver_version=n.get("driver_version"),
        nvml_version=n.get("nvml_version"),
        cuda_driver_version=q.cuda_version_text(n.get("cuda_driver_version")),
        gpus=tuple(gpus), pairs=tuple(pairs), nics=nics, ceilings=tuple(ceilings),
        source=source.name,
        probed_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        probe_seconds=time.perf_counter() - t0,
        notes=tuple(dict.fromkeys(notes)),
    )


def _probe_gpu(n: q.Nvml, fs: Any, d: int, nodes: list[tuple[int, str]], notes: list[str]) -> Gpu:
    cc_raw = n.get("compute_capability", d)
    cc = f"{cc_raw[0]}.{cc_raw[1]}" if known(cc_raw) else cc_raw
    cores = n.get("num_gpu_cores", d)
    if known(cores) and known(cc) and cc in CORES_PER_SM:
        sm_count: int | Unknown = cores // CORES_PER_SM[cc]
    else:
        sm_count = Unknown(f"SM count not derivable (cores: {cores}, compute capability {cc})")
    arch = n.get("architecture", d)
    bus_id = n.get("pci_bus_id", d)

    affinity_masks = n.get("cpu_affinity", d)
    affinity: str | Unknown = affinity_masks
    affinity_cpus: list[int] = []
    if known(affinity_masks):
        affinity_cpus = [w * 64 + bit for w, mask in enumerate(affinity_masks) for bit in range(64) if mask >> bit & 1]
        affinity = cpulist(affinity_cpus) if affinity_cpus else Unknown("NVML reports an empty CPU affinity")

    sid = sysfs.sysfs_bus_id(bus_id) if known(bus_id) else None
    numa: int | Unknown = sysfs.read_device_numa(fs, sid) if sid else Unknown(
        "no bus id" if not known(bus_id) else f"NVML's bus id {str(bus_id)[:40]!r} is not a PCI bus id")
    if not known(numa) and affinity_cpus:
        # As nvidia-smi does: the node(s) whose CPUs the GPU's affinity covers.
        covered = [i for i, cpus in nodes if cpus and set(parse_cpulist(cpus)) <= set(affinity_cpus)]
        numa = covered[0] if len(covered) == 1 else Unknown(
            f"CPU affinity covers NUMA nodes {covered}" if covered else "no NUMA node matches the CPU affinity")

    mig_mode = n.get("mig_mode", d)
    mig_enabled = bool(mig_mode[0]) if known(mig_mode) else mig_mode
    instances: int | Unknown = Unknown("MIG disabled") if mig_enabled is False else mig_mode
    if mig_enabled is True:
        max_count = n.get("max_mig_device_count", d)
        instances = (sum(1 for i in range(max_count) if n.get("mig_device_exists", d, i) is True)
                     if known(max_count) else max_count)
    fabric_raw = n.get("fabric_info", d)
    if known(fabric_raw):
        state = FABRIC_STATES.get(fabric_raw.get("state"), f"state {fabric_raw.get('state')}")
        registered = fabric_raw.get("state") == 3 and fabric_raw.get("status") == 0
        fabric = Fabric(
            clique_id=fabric_raw["clique_id"] if registered else Unknown(f"fabric {state}"),
            cluster_uuid=fabric_raw["cluster_uuid"] if registered else Unknown(f"fabric {state}"),
            state=state)
    else:
        fabric = Fabric(clique_id=fabric_raw, cluster_uuid=fabric_raw, state=fabric_raw)

    return Gpu(
        index=d, uuid=n.get("uuid", d), name=n.get("name", d), pci_bus_id=bus_id,
        architecture=ARCHITECTURES.get(arch, f"arch {arch}") if known(arch) else arch,
        compute_capability=cc, sm_count=sm_count,
        memory_total_bytes=n.get("memory_total", d), memory_bus_width_bits=n.get("memory_bus_width", d),
        max_sm_clock_mhz=n.get("max_clock", d, q.CLOCK_SM), max_memory_clock_mhz=n.get("max_clock", d, q.CLOCK_MEM),
        pcie_gen_current=n.get("pcie_gen_current", d), pcie_gen_max=n.get("pcie_gen_max", d),
        pcie_width_current=n.get("pcie_width_current", d), pcie_width_max=n.get("pcie_width_max", d),
        cpu_affinity=affinity, numa_affinity=numa, gpu_numa_id=n.get("numa_node_id", d),
        mig=Mig(enabled=mig_enabled, pending=bool(mig_mode[1]) if known(mig_mode) else mig_mode, instances=instances),
        fabric=fabric,
        nvlinks=_probe_nvlinks(n, d, notes),
    )


def _probe_nvlinks(n: q.Nvml, d: int, notes: list[str]) -> tuple[NvLink, ...]:
    count = n.get("field", d, q.FI_NVLINK_LINK_COUNT, 0)
    if known(count) and not (isinstance(count, int) and 0 <= count <= q.MAX_NVLINKS):
        notes.append(f"GPU{d}: NVML reports {count!r} NVLinks, not a link count; probing {q.MAX_NVLINKS}")
        count = Unknown(f"NVML link count {count!r} out of range")
    candidates = range(count) if known(count) else range(q.MAX_NVLINKS)
    common_speed = n.get("field", d, q.FI_NVLINK_GET_SPEED, 0)
    out = []
    for link in candidates:
        state = n.get("nvlink_state", d, link)
        if not known(state):
            if not known(count):
                if link == 0:
                    notes.append(f"GPU{d}: NVLink state not available ({state.reason})")
                break  # past the last link, or NVLink queries unsupported
        version_enum = n.get("nvlink_version", d, link)
        version = links.nvlink_version(version_enum) if known(version_enum) else version_enum
        generation = int(version.split(".")[0]) if known(version) else version
        speed = n.get("field", d, q.FI_NVLINK_GET_SPEED, link)
        if not known(speed) or not speed:
            speed = common_speed
        remote_type_raw = n.get("nvlink_remote_type", d, link)
        remote_type = REMOTE_TYPES.get(remote_type_raw, "unknown") if known(remote_type_raw) else "unknown"
        remote_bus = n.get("nvlink_remote_pci_bus_id", d, link)
        if remote_type == "switch" or (known(remote_bus) and remote_bus.upper().startswith("FFFFFFFF")):
            remote_bus = ""
        p2p = n.get("nvlink_capability", d, link, q.NVLINK_CAP_P2P_SUPPORTED)
        atomics = n.get("nvlink_capability", d, link, q.NVLINK_CAP_P2P_ATOMICS)
        out.append(NvLink(
            index=link, active=bool(state) if known(state) else state,
            version=version, generation=generation,
            line_rate_bytes_per_s=links.nvlink_line_rate(generation, speed),
            data_rate_bytes_per_s=links.nvlink_data_rate(generation) if known(generation) else generation,
            remote_type=remote_type, remote_bus_id=remote_bus,
            p2p_supported=bool(p2p) if known(p2p) else p2p,
            p2p_atomics=bool(atomics) if known(atomics) else atomics,
        ))
    return tuple(out)


def _nvlinks_known(g: Gpu) -> bool:
    return bool(g.nvlinks) and all(known(link.active) for link in g.nvlinks)


def _probe_pair(n: q.Nvml, gpus: list[Gpu], paths: list[Any], a: int, b: int, notes: list[str]) -> Pair:
    level_raw = n.get("topology_common_ancestor", a, b)
    if known(level_raw):
        level: str | Unknown = TOPOLOGY_LEVELS.get(level_raw, Unknown(f"NVML topology level {level_raw}"))
    else:
        level = sysfs.pcie_level(paths[a], paths[b], gpus[a].numa_affinity, gpus[b].numa_affinity)
        if known(level):
            notes.append("PCIe levels between GPUs read from sysfs PCI paths (NVML did not answer)")
        else:
            level = Unknown(f"{level_raw.reason}; sysfs: {level.reason}")

    def status(name: str) -> str | Unknown:
        v = n.get("p2p_status", a, b, q.P2P_INDEX[name])
        return P2P_STATUS.get(v, f"status {v}") if known(v) else v

    p2p_nvlink = status("nvlink")
    ga, gb = gpus[a], gpus[b]
    direct = sum(1 for link in ga.active_nvlinks if link.remote_type == "gpu" and _same_bus(link.remote_bus_id, gb.pci_bus_id))
    switch_a = [link for link in ga.active_nvlinks if link.remote_type == "switch"]
    switch_b = [link for link in gb.active_nvlinks if link.remote_type == "switch"]
    via: str | Unknown
    count: int | Unknown
    if direct:
        via, count = "direct", direct
    elif switch_a and switch_b and p2p_nvlink == "OK":
        via, count = "switch", min(len(switch_a), len(switch_b))
    elif switch_a and switch_b and not known(p2p_nvlink):
        via = count = Unknown(f"both GPUs reach an NVSwitch but NVML's P2P NVLink status is unknown ({p2p_nvlink.reason})")
    elif _nvlinks_known(ga) or (not ga.nvlinks and p2p_nvlink in ("NS", "GNS", "CNS", "TNS")):
        via, count = "none", 0
    elif not ga.nvlinks and not known(p2p_nvlink):
        via = count = Unknown("NVLink not reported by NVML")
    else:
        via, count = "none", 0
    return Pair(a=a, b=b, pcie_level=level, nvlink_count=count, nvlink_via=via,
                p2p_read=status("read"), p2p_write=status("write"), p2p_atomics=status("atomics"),
                p2p_nvlink=p2p_nvlink, p2p_pcie=status("pcie"))


def _gbs(x: float | Unknown) -> str:
    return format_rate(x, significant=6) if known(x) else "unknown"


def _ceilings(gpus: list[Gpu], pairs: list[Pair], nics: tuple[Nic, ...], notes: list[str]) -> list[Ceiling]:
    out: list[Ceiling] = []
    by_gpu: dict[tuple[int, str], Ceiling] = {}
    for g in gpus:
        active = g.active_nvlinks
        if active:
            rates = [link.line_rate_bytes_per_s for link in active]
            data = [link.data_rate_bytes_per_s for link in active]
            line = sum(rates) if all(known(r) for r in rates) else Unknown("a link's speed is unknown")
            data_total = sum(data) if all(known(r) for r in data) else Unknown("NVLink generation unknown")
            rate0 = rates[0]
            same = all(r == rate0 for r in rates)
            basis = (f"{len(active)} links x {_gbs(rate0)} line rate (NVML NVLINK_GET_SPEED)" if same and known(rate0)
                     else f"sum over {len(active)} links")
            if known(data_total):
                basis += f"; data rate {len(active)} x {_gbs(data[0])} (NVLink {active[0].version})"
            c = Ceiling(f"gpu{g.index}.nvlink", "nvlink", (g.index,), line, "spec", data_total, basis)
            out.append(c)
            by_gpu[g.index, "nvlink"] = c
        if known(g.pcie_gen_max) and known(g.pcie_width_max):
            bw = links.pcie_bytes_per_s(g.pcie_gen_max, g.pcie_width_max)
            c = Ceiling(f"gpu{g.index}.pcie", "pcie", (g.index,), bw, "spec", bw,
                        f"PCIe Gen{g.pcie_gen_max} x{g.pcie_width_max} ({_gbs(links.pcie_lane_bytes_per_s(g.pcie_gen_max))} per lane after encoding)")
            if known(g.pcie_width_current) and g.pcie_width_current < g.pcie_width_max:
                notes.append(f"GPU{g.index}: PCIe link runs x{g.pcie_width_current}, below its x{g.pcie_width_max}")
        else:
            c = Ceiling(f"gpu{g.index}.pcie", "pcie", (g.index,), Unknown("PCIe generation or width unknown"))
        out.append(c)
        by_gpu[g.index, "pcie"] = c
        hbm = hbm_spec(g)  # the datasheet's figure where known: the one every view shows
        if hbm is not None:
            out.append(Ceiling(f"gpu{g.index}.hbm", "hbm", (g.index,), hbm[0], "spec", hbm[0], hbm[1]))
    for p in pairs:
        if p.a > p.b:
            continue
        out.append(_pair_ceiling(p, gpus, by_gpu))
    for nic in nics:
        out.append(Ceiling(f"nic.{nic.name}", "network", (), nic.rate_bytes_per_s, "spec", nic.rate_bytes_per_s,
                           f"{nic.kind} link rate per direction (sysfs)"))
    return out


def _pair_ceiling(p: Pair, gpus: list[Gpu], by_gpu: dict[tuple[int, str], Ceiling]) -> Ceiling:
    name, devs = f"pair{p.a}-{p.b}", (p.a, p.b)
    if not known(p.nvlink_via):
        return Ceiling(name, "unknown", devs, Unknown(f"path unknown: {p.nvlink_via.reason}"))
    if p.nvlink_via in ("switch", "direct"):
        ca, cb = by_gpu.get((p.a, "nvlink")), by_gpu.get((p.b, "nvlink"))
        if p.nvlink_via == "switch" and ca and cb:
            line = min(ca.bytes_per_s, cb.bytes_per_s) if known(ca.bytes_per_s) and known(cb.bytes_per_s) else ca.bytes_per_s
            data = (min(ca.data_bytes_per_s, cb.data_bytes_per_s)
                    if known(ca.data_bytes_per_s) and known(cb.data_bytes_per_s) else Unknown("data rate unknown"))
            return Ceiling(name, "nvlink", devs, line, "spec", data,
                           f"NVLink through NVSwitch: the lesser of both GPUs' NVLink bandwidth (NV{p.nvlink_count})")
        direct = [link for link in gpus[p.a].active_nvlinks
                  if link.remote_type == "gpu" and _same_bus(link.remote_bus_id, gpus[p.b].pci_bus_id)]
        rates = [link.line_rate_bytes_per_s for link in direct]
        data = [link.data_rate_bytes_per_s for link in direct]
        if rates and all(known(r) for r in rates):
            return Ceiling(name, "nvlink", devs, sum(rates), "spec",
                           sum(data) if all(known(r) for r in data) else Unknown("data rate unknown"),
                           f"{len(rates)} direct NVLinks x {_gbs(rates[0])}")
        return Ceiling(name, "nvlink", devs, Unknown("NVLink rate unknown"))
    pa, pb = by_gpu[p.a, "pcie"], by_gpu[p.b, "pcie"]
    if known(pa.bytes_per_s) and known(pb.bytes_per_s):
        bw: float | Unknown = min(pa.bytes_per_s, pb.bytes_per_s)
    else:
        bw = Unknown("a GPU's PCIe link is unknown")
    p2p_ok = p.p2p_read == "OK" or p.p2p_write == "OK"
    if p2p_ok:
        return Ceiling(name, "pcie", devs, bw, "spec", bw,
                       f"PCIe peer-to-peer ({p.pcie_level}): the lesser of both GPUs' PCIe links ({format_rate(bw) if known(bw) else 'unknown'})")
    return Ceiling(name, "host-staged", devs, bw, "spec", bw,
                   f"no peer-to-peer ({p.p2p_read}): the driver stages through host memory; at best the lesser PCIe link")
