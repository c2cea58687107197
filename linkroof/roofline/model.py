"""The machine model: roofs (ceilings) for compute per data type, HBM, and every path
class of a machine, each as spec and as measured, with link bandwidth as a function of
message size from the sweeps. Pure arithmetic on a Profile: no CuPy, no NVML.

A measured roof is the best verified figure for that resource and mechanism; it is
never fitted from the points it judges. Measured above spec is flagged.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from ..schema import Measurement, Profile, Topology, Unknown, known
from ..units import format_rate
from .links import PCIE_GT_PER_S, pcie_bytes_per_s
from .spec import GpuSpec, derived_flops, match_gpu

LINK_CLASSES = ("nvlink", "pcie_peer", "host", "network")


# What measures each ceiling: named wherever a view or a placement finds one missing
MEASURED_BY = {"compute": "linkroof bench --only compute measures it", "hbm": "linkroof bench --only local measures it",
               "nvlink": "linkroof bench --only peer_ce,sweep measures it (two GPUs joined by NVLink)",
               "pcie_peer": "linkroof bench --only peer_ce measures it (two GPUs on PCIe)",
               "host": "linkroof bench --only host measures it",
               "network": "linkroof bench --only nccl under a launcher over several hosts measures it"}
LINK_NAMES = {"nvlink": "NVLink", "pcie_peer": "PCIe peer", "host": "host link", "network": "network"}


@dataclass(frozen=True)
class Roof:
    resource: str  # "compute:fp16", "hbm", "link:nvlink", "link:pcie_peer", "link:host", "link:network"
    kind: str  # "spec" | "measured" | "derived"
    value: float | Unknown  # FLOP/s or bytes/s (per direction for links)
    mechanism: str = ""  # links: ce | sm | tma | nccl; compute: gemm | fma
    basis: str = ""
    flags: tuple[str, ...] = ()
    per_device: tuple[tuple[int, float], ...] = ()  # HBM: each GPU's own best figure (GPU index, value)

    @property
    def unit(self) -> str:
        return "FLOP/s" if self.resource.startswith("compute:") else "B/s"


# Parameters that make two figures of one mechanism different things: never joined in
# one curve (pinned and pageable host memory; peer access on or staged; gated or not)
CURVE_VARIANTS = ("host_memory", "peer_access", "gated", "dtype")  # dtype: collectives only


@dataclass
class Curve:
    """Bandwidth against message size for one link class, mechanism and variant (sweep points)."""

    link: str
    mechanism: str
    pattern: str
    points: list[tuple[int, float]]
    variant: tuple[tuple[str, Any], ...] = ()  # e.g. (("host_memory", "pinned"),)

    @property
    def label(self) -> str:
        """'ce', 'ce (ungated)', 'ce (host_memory=pageable)', or a collective's 'nccl bf16'."""
        words = {("gated", False): "ungated", ("peer_access", False): "staged through the host"}
        extra = ", ".join(words.get((k, v), f"{k}={v}") for k, v in self.variant if k != "dtype")
        name = " ".join([self.mechanism] + [str(v) for k, v in self.variant if k == "dtype"])
        return f"{name} ({extra})" if extra else name

    def envelope(self) -> list[tuple[int, float]]:
        """(size, least time per message) at each swept size: the lower envelope of what
        was measured, made monotone (a message is never assumed to take less time than
        any larger one took), so it is at or below every point it comes from."""
        pts = sorted(self.points)
        out: list[tuple[int, float]] = []
        least = math.inf
        for size, bw in reversed(pts):
            least = min(least, size / bw if bw > 0 else math.inf)
            out.append((size, least))
        return out[::-1]

    def time_at(self, size: float) -> float:
        """The least time a message of `size` bytes can take by this curve's mechanism,
        as far as its points show: the envelope's time at the largest swept size not
        above `size` (moving more bytes takes no less time), and never below `size` over
        the curve's peak. At a swept size it is never above the point measured there;
        below the smallest swept size, the smallest one's time per message (extrapolated)."""
        env = self.envelope()
        sizes = [s for s, _ in env]
        floor = size / self.peak()
        if size <= sizes[0]:
            return env[0][1]
        i = bisect.bisect_right(sizes, size) - 1
        return max(env[i][1], floor)

    def ceiling_at(self, size: float) -> float:
        """The bandwidth a bound may use at `size` (bytes per second): size over
        `time_at(size)`, so a time bounded by it is never above one measured at this
        size. Between swept sizes it is optimistic (it takes the smaller size's time);
        `at` is the estimate there."""
        if size <= 0:
            return 0.0
        t = self.time_at(size)
        return size / t if t > 0 else self.peak()

    def at(self, size: int) -> float:
        """An estimate of the bandwidth at `size`: the points interpolated in log2(size),
        clamped at the ends (advice and figures; bounds use `ceiling_at`)."""
        pts = sorted(self.points)
        sizes = [s for s, _ in pts]
        if size <= sizes[0]:
            return pts[0][1] * size / sizes[0] if size > 0 else 0.0  # below the smallest size: same time per message
        if size >= sizes[-1]:
            return pts[-1][1]
        i = bisect.bisect_left(sizes, size)
        (s0, b0), (s1, b1) = pts[i - 1], pts[i]
        f = (math.log2(size) - math.log2(s0)) / (math.log2(s1) - math.log2(s0))
        return b0 + f * (b1 - b0)

    def swept(self, size: int) -> bool:
        return any(s == size for s, _ in self.points)

    def peak(self) -> float:
        return max(bw for _, bw in self.points)

    def reaches(self, fraction: float) -> int | None:
        peak = self.peak()
        for size, bw in sorted(self.points):
            if bw >= fraction * peak:
                return size
        return None


@dataclass
class MachineModel:
    gpu_name: str
    spec: GpuSpec | None
    roofs: list[Roof] = field(default_factory=list)
    curves: list[Curve] = field(default_factory=list)

    # ------------------------------------------------------------ lookups

    def find(self, resource: str, kind: str = "measured", mechanism: str | None = None) -> Roof | None:
        """The highest known roof of that resource and kind (spec also accepts derived)."""
        kinds = ("spec", "derived") if kind == "spec" else (kind,)
        cands = [r for r in self.roofs if r.resource == resource and r.kind in kinds and known(r.value)
                 and (mechanism is None or r.mechanism == mechanism)]
        return max(cands, key=lambda r: r.value) if cands else None

    def compute(self, dtype: str, kind: str = "measured") -> Roof | None:
        return self.find(f"compute:{dtype}", kind)

    def hbm(self, kind: str = "measured", gpu: int | None = None) -> Roof | None:
        """The HBM roof: the best GPU's, or GPU `gpu`'s own where it was measured."""
        roof = self.find("hbm", kind)
        if roof is None or gpu is None:
            return roof
        own = [(dict(r.per_device)[gpu], r) for r in self.roofs
               if r.resource == "hbm" and r.kind == kind and gpu in dict(r.per_device)]
        if not own:
            return roof
        value, best = max(own, key=lambda vr: vr[0])
        return dataclasses.replace(best, value=value, basis=f"GPU{gpu}'s own best: {best.mechanism}")

    def link(self, link: str, kind: str = "measured", mechanism: str | None = None,
             message_bytes: int | None = None) -> tuple[float, str] | None:
        """Bandwidth of a link class: at a message size from the sweeps when measured
        and known, else the best (per mechanism, or over all mechanisms)."""
        if kind == "measured" and message_bytes:
            curves = [c for c in self.curves if c.link == link and (mechanism is None or c.mechanism == mechanism)]
            if curves:  # a bound: the lower envelope of the measured times (Curve.ceiling_at)
                best = max(curves, key=lambda c: c.ceiling_at(message_bytes))
                return (best.ceiling_at(message_bytes),
                        f"{best.label} at {message_bytes} B ({best.pattern} points, lower envelope)")
        roof = self.find(f"link:{link}", kind, mechanism if kind == "measured" else None)
        return (roof.value, f"{roof.kind} {roof.mechanism} {roof.basis}".strip()) if roof else None

    def missing_for(self, workload: Any, kind: str = "measured") -> list[str]:
        """The ceilings a workload needs that this model lacks, each with the command
        that measures it: FLOPs need the data type's compute roof, HBM bytes the HBM roof,
        link bytes the roof of their link class."""
        out = []
        for dtype, flops in workload.flops.items():
            if flops and self.compute(dtype, kind) is None:
                out.append(f"no {kind} {dtype} compute ceiling ({MEASURED_BY['compute']})")
        if workload.hbm_bytes and self.hbm(kind) is None:
            out.append(f"no {kind} HBM ceiling ({MEASURED_BY['hbm']})")
        for link, nbytes in workload.link_bytes.items():
            if nbytes and self.link(link, kind, None, workload.message_bytes) is None:
                out.append(f"no {kind} {LINK_NAMES.get(link, link)} ceiling "
                           f"({MEASURED_BY.get(link, 'linkroof bench measures it')})")
        return out

    def ridge_points(self, kind: str = "measured") -> list[tuple[str, str, float]]:
        """(data type, memory or link, FLOP per byte) where compute and bandwidth meet."""
        out = []
        for r in self.roofs:
            if not r.resource.startswith("compute:") or r.kind not in (kind, "derived" if kind == "spec" else kind):
                continue
            dtype = r.resource.split(":", 1)[1]
            comp = self.compute(dtype, kind)
            if comp is None or comp is not r:
                continue
            for res in ["hbm"] + [f"link:{c}" for c in LINK_CLASSES]:
                b = self.find(res, kind)
                if b is not None and b.value:
                    out.append((dtype, res, comp.value / b.value))
        return out

    # ------------------------------------------------------------- build

    @classmethod
    def from_profile(cls, profile: Profile) -> "MachineModel":
        topo = profile.topology
        gpu = topo.gpus[0] if topo.gpus else None
        spec = match_gpu(gpu.name) if gpu else None
        model = cls(gpu_name=str(gpu.name) if gpu else "unknown", spec=spec)
        model.roofs += _spec_roofs(topo, spec)
        hosts = len(profile.topologies)
        inferred = infer_nvlink(topo, profile.measurements)
        model.roofs += _measured_roofs(topo, profile.measurements, hosts, inferred)
        model.curves = _curves(topo, profile.measurements, hosts, inferred)
        model.roofs = [_flag_above_spec(r, model.roofs) for r in model.roofs]
        return model


def _spec_roofs(topo: Topology, spec: GpuSpec | None) -> list[Roof]:
    out: list[Roof] = []
    gpu = topo.gpus[0] if topo.gpus else None
    dtypes = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4")
    for dt in dtypes:
        if spec and dt in spec.flops:
            out.append(Roof(f"compute:{dt}", "spec", spec.flops[dt], "", spec.source))
        elif gpu is not None:
            d = derived_flops(gpu, dt)
            if d:
                out.append(Roof(f"compute:{dt}", "derived", d[0], "", d[1]))
    if spec:
        out.append(Roof("hbm", "spec", spec.hbm_bytes_per_s, "", spec.source))
    elif gpu is not None:
        try:
            c = topo.ceiling(f"gpu{gpu.index}.hbm")
            out.append(Roof("hbm", "derived", c.bytes_per_s, "", c.basis))
        except KeyError:
            out.append(Roof("hbm", "spec", Unknown("GPU not in the spec table and no bus width/clock"), ""))
    nvlink = [c for c in topo.ceilings if c.name.startswith("pair") and c.path == "nvlink" and known(c.bytes_per_s)]
    if nvlink:  # the usable data rate (what figures are held to); the line rate beside it
        c = max(nvlink, key=lambda x: x.bytes_per_s)
        if known(c.data_bytes_per_s):
            out.append(Roof("link:nvlink", "spec", c.data_bytes_per_s, "",
                            f"{c.name}: data rate {format_rate(c.data_bytes_per_s)} (line rate "
                            f"{format_rate(c.bytes_per_s)}); {c.basis}"))
        else:
            out.append(Roof("link:nvlink", "spec", c.bytes_per_s, "", f"{c.name}: line rate; {c.basis}"))
    pcie_peer = [c for c in topo.ceilings if c.name.startswith("pair") and c.path == "pcie" and known(c.bytes_per_s)]
    if pcie_peer:
        c = max(pcie_peer, key=lambda x: x.bytes_per_s)
        out.append(Roof("link:pcie_peer", "spec", c.bytes_per_s, "", f"{c.name}: {c.basis}"))
    host = [c for c in topo.ceilings if c.name.endswith(".pcie") and known(c.bytes_per_s)]
    if host:
        c = max(host, key=lambda x: x.bytes_per_s)
        out.append(Roof("link:host", "spec", c.bytes_per_s, "", f"{c.name}: {c.basis}"))
    nics = [c for c in topo.ceilings if c.path == "network" and known(c.bytes_per_s)]
    if nics:
        c = max(nics, key=lambda x: x.bytes_per_s)
        out.append(Roof("link:network", "spec", c.bytes_per_s, "", f"{c.name}: {c.basis}"))
    return out


def spec_basis(ceiling: Any) -> tuple[float, str] | None:
    """The one basis every "% of spec" uses: a path's usable data rate (450 GB/s on
    18 NVLink 4 links), else its line rate where no data rate is known; with its name."""
    data, line = getattr(ceiling, "data_bytes_per_s", None), getattr(ceiling, "bytes_per_s", None)
    if known(data) and isinstance(data, (int, float)) and data > 0:
        return float(data), "data rate"
    if known(line) and isinstance(line, (int, float)) and line > 0:
        return float(line), "line rate"
    return None


def percent_of_spec(value: float, ceiling: Any) -> float | None:
    """`value` as a percentage of the ceiling's spec_basis (None where it has none)."""
    basis = spec_basis(ceiling)
    return 100 * value / basis[0] if basis and value == value else None


# The fastest PCIe link a GPU has (the highest generation in links.py, x16), per
# direction: a peer figure above it cannot have crossed PCIe.
PCIE_X16_MAX = max(v for gen in PCIE_GT_PER_S if known(v := pcie_bytes_per_s(gen, 16)))


def _group(m: Measurement) -> tuple[str, str, str]:
    return m.source, m.spec.mechanism, m.spec.pattern


def infer_nvlink(topo: Topology, measurements: tuple[Measurement, ...]) -> frozenset[tuple[str, str, str]]:
    """For profiles whose topology does not say how the GPUs are linked (imported
    nvbandwidth or nccl-tests results): the (source, mechanism, pattern) groups of peer
    transfers and collectives whose best figure is above any PCIe x16 link's rate, so
    crossed NVLink. A deduction from the figures, labelled as such where it is used."""
    if topo.pairs and all(known(p.nvlink_via) for p in topo.pairs):
        return frozenset()
    best: dict[tuple[str, str, str], float] = {}
    for m in measurements:
        peer = m.spec.pattern in ("p2p_read", "p2p_write", "bidir") and len(m.spec.devices) == 2
        if m.trusted and "parts" not in m.spec.params and (peer or m.spec.mechanism == "nccl"):
            value = m.figure[0]
            if value == value:
                best[_group(m)] = max(value, best.get(_group(m), 0.0))
    return frozenset(g for g, v in best.items() if v > PCIE_X16_MAX)


def link_class(topo: Topology, m: Measurement, hosts: int = 1,
               inferred: frozenset[tuple[str, str, str]] = frozenset()) -> str | None:
    """Which path class a measured transfer used (`hosts`: how many hosts the profile
    spans; collectives over several hosts cross the network; `inferred`: groups
    `infer_nvlink` found on NVLink where the topology does not say)."""
    if m.spec.mechanism == "nccl":
        if hosts > 1:
            return "network"
        if topo.pairs and all(p.nvlink_via in ("switch", "direct") for p in topo.pairs):
            return "nvlink"
        return "nvlink" if _group(m) in inferred else None
    if m.spec.pattern in ("h2d", "d2h"):
        return "host"
    if m.spec.pattern in ("p2p_read", "p2p_write", "bidir") and len(m.spec.devices) == 2:
        if m.spec.params.get("peer_access") is False or m.spec.name == "p2p_staged_bandwidth":
            return None  # staged through the host: not a peer path
        a, b = m.spec.devices
        try:
            p = topo.pair(a, b)
        except KeyError:
            p = None
        if p is not None and p.nvlink_via in ("switch", "direct"):
            return "nvlink"
        if p is not None and known(p.pcie_level):
            return "pcie_peer"
        return "nvlink" if _group(m) in inferred else None
    return None


def _usable(topo: Topology, m: Measurement) -> bool:
    """A figure a ceiling may come from: verified, one transfer (not a sum of parts), not
    above spec, and the GPU's own time: linkroof's collectives timed with the host's
    launch stand beside their device time and never make a ceiling (an imported plain
    nccl-tests run is all there is of its kind, and counts); nor does a figure taken
    beside other work (a copy while a GEMM ran)."""
    launch = m.spec.params.get("timing") == "host_launch" and m.source == "linkroof"
    beside = m.spec.params.get("beside", "nothing") != "nothing"  # taken while other work shared the GPU
    return (m.trusted and "parts" not in m.spec.params and not launch and not beside
            and not any(w.startswith("above spec") for w in m.warnings))


def roof_sources(profile: Profile) -> dict[tuple[str, str], Measurement]:
    """The measurement each measured roof comes from, by (resource, mechanism): where
    its clock state, size and devices are (roofline/export.py gives them with the figure)."""
    topo = profile.topology
    best, _ = _best_figures(topo, profile.measurements, len(profile.topologies),
                            infer_nvlink(topo, profile.measurements))
    return {k: m for k, (_, m) in best.items()}


def _measured_roofs(topo: Topology, measurements: tuple[Measurement, ...], hosts: int = 1,
                    inferred: frozenset[tuple[str, str, str]] = frozenset()) -> list[Roof]:
    best, per_gpu = _best_figures(topo, measurements, hosts, inferred)
    out = []
    for (resource, mech), (value, m) in sorted(best.items()):
        size = f" {m.spec.message_bytes} B" if m.spec.message_bytes else ""
        dtype = f" {m.spec.params['dtype']}" if "dtype" in m.spec.params else ""
        how = "; NVLink inferred: faster than any PCIe x16 link" if _group(m) in inferred else ""
        gpus = per_gpu.get((resource, mech), {})
        out.append(Roof(resource, "measured", value, mech,
                        f"best verified: {m.spec.name}{dtype}{size} on GPU {','.join(map(str, m.spec.devices))} "
                        f"({m.source}{how})", _asymmetry(topo, gpus) + _throttled(m), tuple(sorted(gpus.items()))))
    return out


def _best_figures(topo: Topology, measurements: tuple[Measurement, ...], hosts: int,
                  inferred: frozenset[tuple[str, str, str]]) -> tuple[dict, dict]:
    """Per (resource, mechanism), the best verified figure and its measurement; per GPU,
    HBM's own best."""
    best: dict[tuple[str, str], tuple[float, Measurement]] = {}
    per_gpu: dict[tuple[str, str], dict[int, float]] = {}

    def offer(resource: str, mech: str, value: float, m: Measurement) -> None:
        if not (value == value and value > 0):  # NaN or nothing
            return
        if (resource, mech) not in best or value > best[(resource, mech)][0]:
            best[(resource, mech)] = (value, m)
        if resource == "hbm" and len(m.spec.devices) == 1:
            mine = per_gpu.setdefault((resource, mech), {})
            mine[m.spec.devices[0]] = max(value, mine.get(m.spec.devices[0], 0.0))

    for m in measurements:
        if not _usable(topo, m):
            continue
        if m.spec.name == "gemm_throughput":
            offer(f"compute:{m.spec.params.get('dtype')}", "gemm", m.flop_rate, m)
        elif m.spec.name == "fma_throughput":
            offer("compute:fp32", "fma", m.flop_rate, m)
        elif m.spec.pattern == "local_read":
            offer("hbm", "read-only kernel", m.bandwidth_bytes_per_s, m)
        elif m.spec.pattern == "local_write":
            offer("hbm", "write-only kernel", m.bandwidth_bytes_per_s, m)
        elif m.spec.pattern == "local":
            offer("hbm", f"{m.spec.mechanism} copy (read + write)", 2 * m.bandwidth_bytes_per_s, m)
        else:
            cls = link_class(topo, m, hosts, inferred)
            if cls is None:
                continue
            offer(f"link:{cls}", host_mechanism(m) if cls == "host" else m.spec.mechanism, m.figure[0], m)
    return best, per_gpu


def host_mechanism(m: Measurement) -> str:
    """A host copy's mechanism as a roof names it: copies from or to pageable memory are a
    roof of their own per direction ('ce (pageable h2d)': staged through a driver
    buffer, 9.7 GB/s against 55.5 pinned on an H200), never joined with pinned ones."""
    if m.spec.params.get("host_memory") != "pageable":
        return m.spec.mechanism
    name = m.spec.name.lower()
    way = "h2d" if "h2d" in name else "d2h" if "d2h" in name else "both ways"
    return f"{m.spec.mechanism} (pageable {way})"


ASYMMETRY = 0.05  # identical GPUs whose figures differ by more than this are flagged


def _throttled(m: Measurement) -> tuple[str, ...]:
    """A roof taken from a figure measured while its GPU was throttled says so: it may
    sit below what the GPU gives when cool (a power cap under a full GEMM is the chip's
    own limit; a thermal or clock cap is the machine's)."""
    hot = [w for w in m.warnings if "throttled" in w]
    return (f"measured while {'; '.join(hot)}: the roof may be below the GPU's unthrottled figure",) if hot else ()


def _asymmetry(topo: Topology, per_gpu: dict[int, float]) -> tuple[str, ...]:
    """A flag when GPUs of one model differ by more than ASYMMETRY in the same figure."""
    if len(per_gpu) < 2:
        return ()
    names = {g.index: str(g.name) for g in topo.gpus}
    if len({names.get(i) for i in per_gpu}) != 1:
        return ()
    lo, hi = min(per_gpu.values()), max(per_gpu.values())
    if hi <= lo * (1 + ASYMMETRY):
        return ()
    each = ", ".join(f"GPU{i} {format_rate(v)}" for i, v in sorted(per_gpu.items()))
    return (f"identical GPUs differ by {hi / lo - 1:.0%} ({each}): the best GPU's figure is the roof; look at the "
            "slow one's clocks and throttling, and what ran just before it (a read right after a copy runs slow)",)


def _curves(topo: Topology, measurements: tuple[Measurement, ...], hosts: int = 1,
            inferred: frozenset[tuple[str, str, str]] = frozenset()) -> list[Curve]:
    # Every verified single transfer is a point (sweeps and headline figures alike), so
    # the ceiling at a size is never below a figure measured at that size.
    groups: dict[tuple[Any, ...], dict[int, float]] = {}
    for m in measurements:
        if not _usable(topo, m):
            continue
        cls = link_class(topo, m, hosts, inferred)
        if cls is None:
            continue
        value = m.figure[0]  # bus bandwidth for collectives, bandwidth for transfers
        variant = tuple((k, m.spec.params[k]) for k in CURVE_VARIANTS
                        if k in m.spec.params and m.spec.params[k] is not True  # peer access / gate on: the usual
                        and (k != "dtype" or m.spec.mechanism == "nccl"))  # a collective's data type: its own curve
        key = (cls, m.spec.mechanism, m.spec.pattern, variant)
        pts = groups.setdefault(key, {})
        pts[m.spec.message_bytes] = max(value, pts.get(m.spec.message_bytes, 0.0))
    return [Curve(cls, mech, pattern, sorted((s, b) for s, b in pts.items() if s > 0), variant)
            for (cls, mech, pattern, variant), pts in sorted(groups.items(), key=repr) if len(pts) >= 2]


def _flag_above_spec(r: Roof, roofs: list[Roof]) -> Roof:
    if r.kind != "measured" or not known(r.value):
        return r
    spec = [s for s in roofs if s.resource == r.resource and s.kind in ("spec", "derived") and known(s.value)]
    if spec and r.value > max(s.value for s in spec):
        return dataclasses.replace(r, flags=r.flags + (f"measured above spec ({max(s.value for s in spec):.4g})",))
    return r


__all__ = ["MachineModel", "Roof", "Curve", "LINK_CLASSES", "link_class"]
