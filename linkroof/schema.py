"""The data model: frozen dataclasses, JSON in and out, schema version, validation.

Units are in the field names (bytes, seconds, bytes/s, FLOP/s, MHz). Raw samples are
kept; statistics are derived on read (properties), never stored as truth. A value a
driver would not tell us is an explicit `Unknown` with the reason, never a guess.

Every top-level document is ``{"schema": "linkroof.<Type>", "schema_version": N, ...}``.
Loading validates types field by field and raises `SchemaError` naming the bad field,
e.g. ``topology.gpus[1].memory_total_bytes: expected int, got 'a lot'``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import statistics
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Union

from .errors import LinkroofError

SCHEMA_VERSION = 1


class SchemaError(LinkroofError, ValueError):
    """A document does not match the data model; the message names the field."""


@dataclass(frozen=True)
class Unknown:
    """A value that could not be learned, with why (e.g. 'NVML: Not Supported').

    Falsy, prints as 'unknown'; serialised as {"unknown": reason}."""

    reason: str = ""

    def __bool__(self) -> bool:
        return False

    def __str__(self) -> str:
        return "unknown"


def known(value: Any) -> bool:
    """True when `value` is a real value (not Unknown, not None)."""
    return value is not None and not isinstance(value, Unknown)


# --------------------------------------------------------------------- topology


@dataclass(frozen=True)
class NumaNode:
    id: int
    cpus: str  # kernel cpulist, e.g. "0-31"


@dataclass(frozen=True)
class Host:
    hostname: str
    cpu_model: str | Unknown
    numa_nodes: tuple[NumaNode, ...] = ()
    kernel: str | Unknown = Unknown("not probed")


@dataclass(frozen=True)
class NvLink:
    index: int
    active: bool | Unknown
    version: str | Unknown  # NVLink version, e.g. "4.0" (NVML's enum 6 mapped)
    generation: int | Unknown  # major version: 4 for NVLink 4
    line_rate_bytes_per_s: float | Unknown  # per direction, signalling rate (NVML speed field)
    data_rate_bytes_per_s: float | Unknown  # per direction, usable data rate of the generation
    remote_type: str  # "gpu" | "switch" | "cpu" | "unknown"
    remote_bus_id: str | Unknown  # PCI bus id of the peer GPU; "" for switches
    p2p_supported: bool | Unknown = Unknown("not probed")
    p2p_atomics: bool | Unknown = Unknown("not probed")


@dataclass(frozen=True)
class Fabric:
    clique_id: int | Unknown
    cluster_uuid: str | Unknown
    state: str | Unknown


@dataclass(frozen=True)
class Mig:
    enabled: bool | Unknown
    pending: bool | Unknown
    instances: int | Unknown


@dataclass(frozen=True)
class Gpu:
    index: int
    uuid: str | Unknown
    name: str | Unknown
    pci_bus_id: str | Unknown
    architecture: str | Unknown
    compute_capability: str | Unknown  # "9.0"
    sm_count: int | Unknown
    memory_total_bytes: int | Unknown
    memory_bus_width_bits: int | Unknown
    max_sm_clock_mhz: int | Unknown
    max_memory_clock_mhz: int | Unknown
    pcie_gen_current: int | Unknown
    pcie_gen_max: int | Unknown  # max of the link (GPU and host together)
    pcie_width_current: int | Unknown
    pcie_width_max: int | Unknown
    cpu_affinity: str | Unknown  # cpulist
    numa_affinity: int | Unknown  # NUMA node closest to the GPU (topo -m "NUMA Affinity")
    gpu_numa_id: int | Unknown  # the GPU's own NUMA node on coherent systems (topo -m "GPU NUMA ID")
    mig: Mig
    fabric: Fabric
    nvlinks: tuple[NvLink, ...] = ()

    @property
    def active_nvlinks(self) -> tuple[NvLink, ...]:
        return tuple(link for link in self.nvlinks if link.active is True)

    @property
    def label(self) -> str:
        return f"GPU{self.index}"


@dataclass(frozen=True)
class Pair:
    """An ordered pair of GPUs (a -> b): how data gets from one to the other."""

    a: int
    b: int
    pcie_level: str | Unknown  # X / PIX / PXB / PHB / NODE / SYS (nvidia-smi topo -m)
    nvlink_count: int | Unknown  # bonded links on the path (the # of NV#); 0 = none
    nvlink_via: str | Unknown  # "switch" | "direct" | "none"
    p2p_read: str | Unknown  # NVML P2P status: OK / CNS / GNS / TNS / NS / DR / U
    p2p_write: str | Unknown
    p2p_atomics: str | Unknown
    p2p_nvlink: str | Unknown
    p2p_pcie: str | Unknown


@dataclass(frozen=True)
class Nic:
    name: str  # "mlx5_0" or "eth0"
    kind: str  # "infiniband" | "ethernet"
    link_layer: str | Unknown  # "InfiniBand" | "Ethernet"
    rate_bytes_per_s: float | Unknown  # per direction
    state: str | Unknown
    pci_bus_id: str | Unknown
    netdevs: tuple[str, ...] = ()
    nearest_gpu: int | Unknown = Unknown("no GPU")
    gpu_levels: tuple[str, ...] = ()  # level to each GPU, by GPU index (topo -m NIC column)
    nic_levels: tuple[str, ...] = ()  # level to each NIC of the topology, by NIC position

    def level_to(self, gpu: int) -> str:
        """The PCIe level between this NIC and GPU `gpu`; '?' where not known."""
        return self.gpu_levels[gpu] if 0 <= gpu < len(self.gpu_levels) else "?"


@dataclass(frozen=True)
class Ceiling:
    """A theoretical ('spec') or measured bandwidth ceiling of one path, per direction."""

    name: str  # "gpu0.nvlink", "gpu0.pcie", "gpu0.hbm", "pair0-1"
    path: str  # "nvlink" | "pcie" | "hbm" | "host-staged" | "network"
    devices: tuple[int, ...]
    bytes_per_s: float | Unknown
    kind: str = "spec"  # "spec" | "measured"
    data_bytes_per_s: float | Unknown = Unknown("n/a")  # usable data rate beside the line rate
    basis: str = ""  # how it was derived, for the reader


@dataclass(frozen=True)
class Topology:
    host: Host
    driver_version: str | Unknown
    nvml_version: str | Unknown
    cuda_driver_version: str | Unknown
    gpus: tuple[Gpu, ...]
    pairs: tuple[Pair, ...]
    nics: tuple[Nic, ...]
    ceilings: tuple[Ceiling, ...]
    source: str  # "nvml" or "replay:<name or file>"
    probed_at: str  # ISO 8601
    probe_seconds: float | Unknown = Unknown("not timed")
    notes: tuple[str, ...] = ()

    @property
    def links_known(self) -> bool:
        """Whether this topology says how its GPUs are linked (NVLinks, PCIe): a probe's
        does, even where a GPU has no NVLink; an imported tool's output does not."""
        return not self.source.startswith("import:")

    @functools.cached_property
    def _index(self) -> tuple[dict[tuple[int, int], Pair], dict[str, Ceiling]]:
        """Pairs by (a, b) and ceilings by name, the first of each kept: a 64-GPU box has
        4,032 pairs, and the machine model asks for each pair twice per measurement
        (a linear search took 0.7 s of the dashboard's first page)."""
        pairs: dict[tuple[int, int], Pair] = {}
        for p in self.pairs:
            pairs.setdefault((p.a, p.b), p)
        ceilings: dict[str, Ceiling] = {}
        for c in self.ceilings:
            ceilings.setdefault(c.name, c)
        return pairs, ceilings

    def pair(self, a: int, b: int) -> Pair:
        try:
            return self._index[0][(a, b)]
        except (KeyError, TypeError):
            raise KeyError(f"no pair GPU{a} -> GPU{b} in this topology") from None

    def ceiling(self, name: str) -> Ceiling:
        try:
            return self._index[1][name]
        except (KeyError, TypeError):
            raise KeyError(f"no ceiling named {name!r}") from None


# ----------------------------------------------------------------- measurements


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((str(k), _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


class Params(dict):
    """A BenchSpec's parameters: a dict that cannot change, so a spec can be hashed."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(_frozen(self))

    def _read_only(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("BenchSpec parameters are read-only; build a new spec with dataclasses.replace")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _read_only  # type: ignore[assignment]

    def __reduce__(self) -> Any:  # pickling (rank reports) rebuilds it from a plain dict
        return (Params, (dict(self),))


# Parameters that say how a figure was timed, not what was measured: never part of a key
TIMING_NOTES = ("gated", "method", "other_method_median_s")

# Spellings of documents written before linkroof settled on one name per collective
_LEGACY_NAMES = {"alltoall": "all_to_all", "nccl_alltoall": "nccl_all_to_all"}


@dataclass(frozen=True)
class BenchSpec:
    """What was measured (frozen, hashable), separate from the result."""

    name: str  # e.g. "p2p_read_bandwidth"
    mechanism: str  # ce | sm | tma | nccl | compute | latency | ...
    pattern: str  # h2d | d2h | p2p_read | p2p_write | bidir | all_to_all | local | ...
    devices: tuple[int, ...]
    message_bytes: int
    repetitions: int
    concurrency: int = 1
    params: dict[str, Any] = field(default_factory=dict)  # blocks, chunk, dtype, op, ... (a read-only Params)

    def __post_init__(self) -> None:
        object.__setattr__(self, "devices", tuple(self.devices))
        object.__setattr__(self, "params", Params(self.params))
        object.__setattr__(self, "name", _LEGACY_NAMES.get(self.name, self.name))
        object.__setattr__(self, "pattern", _LEGACY_NAMES.get(self.pattern, self.pattern))

    def key(self, ignore: tuple[str, ...] = ("repetitions",)) -> tuple[Any, ...]:
        """The one key for grouping and matching figures: every field but `ignore`
        (repetitions by default: the same figure taken with more repetitions is the
        same figure), parameters included but for the notes on how it was timed
        (TIMING_NOTES); "params.<name>" leaves out one more parameter."""
        params = Params({k: v for k, v in self.params.items() if f"params.{k}" not in ignore and k not in TIMING_NOTES})
        return tuple((f.name, params if f.name == "params" else getattr(self, f.name))
                     for f in dataclasses.fields(self) if f.name not in ignore)


@dataclass(frozen=True)
class Measurement:
    """Raw per-repetition times and how bytes were counted; statistics derive on read."""

    spec: BenchSpec
    times_s: tuple[float, ...]
    bytes_per_rep: int  # bytes counted per repetition, per `bytes_convention`
    bytes_convention: str  # e.g. "bytes copied (a copy of N bytes is N bytes)"
    verified: bool
    verification: str = ""  # how the data was checked, or why it was not
    warnings: tuple[str, ...] = ()
    busbw_factor: float | None = None  # collectives: busbw = algbw * factor
    source: str = "linkroof"  # or "nvbandwidth", "nccl-tests"
    host: str = ""
    rank: int | None = None
    reported: dict[str, float] = field(default_factory=dict)  # figures an imported tool printed
    flops_per_rep: float = 0.0  # compute benchmarks: floating-point operations per repetition
    clock: ClockState | None = None  # the clock state it was measured in (NVML samples through it), where sampled

    CV_WARN = 0.05

    @property
    def median_s(self) -> float:
        """Median of the raw times; for imported figures, the time the tool reported."""
        return statistics.median(self.times_s) if self.times_s else self.reported.get("median_s", math.nan)

    @property
    def min_s(self) -> float:
        return min(self.times_s) if self.times_s else math.nan

    @property
    def iqr_s(self) -> float:
        if len(self.times_s) < 2:
            return 0.0 if self.times_s else math.nan
        q = statistics.quantiles(self.times_s, n=4, method="inclusive")
        return q[2] - q[0]

    @property
    def cv(self) -> float:
        if len(self.times_s) < 2:
            return 0.0 if self.times_s else math.nan
        mean = statistics.fmean(self.times_s)
        return statistics.stdev(self.times_s) / mean if mean > 0 else math.nan

    @property
    def bandwidth_bytes_per_s(self) -> float:
        """bytes_per_rep / median time; or the imported tool's figure."""
        if self.times_s and self.median_s > 0:
            return self.bytes_per_rep / self.median_s
        return self.reported.get("bandwidth_bytes_per_s", math.nan)

    @property
    def flop_rate(self) -> float:
        """FLOP/s at the median time (compute benchmarks)."""
        if self.flops_per_rep and self.times_s and self.median_s > 0:
            return self.flops_per_rep / self.median_s
        return self.reported.get("flop_rate", math.nan)

    @property
    def busbw_bytes_per_s(self) -> float:
        if not self.times_s and "busbw_bytes_per_s" in self.reported:
            return self.reported["busbw_bytes_per_s"]
        if self.busbw_factor is None:
            return math.nan
        return self.bandwidth_bytes_per_s * self.busbw_factor

    @property
    def figure(self) -> tuple[float, str]:
        """The one number this measurement stands for, with its unit: FLOP/s for compute,
        bus bandwidth for collectives, bandwidth for transfers, else the median time."""
        if self.flops_per_rep or (not self.times_s and "flop_rate" in self.reported):
            return self.flop_rate, "FLOP/s"
        if not self.bytes_per_rep:
            return self.median_s, "s"
        if self.busbw_factor is not None:
            return self.busbw_bytes_per_s, "B/s"
        return self.bandwidth_bytes_per_s, "B/s"

    @property
    def as_printed(self) -> bool:
        """An imported figure its tool did not check (nvbandwidth verifies no data; a
        nccl-tests column of #wrong N/A): counted as the tool printed it, and labelled."""
        return not self.verified and self.source != "linkroof" and self.verification.startswith("not checked by")

    @property
    def trusted(self) -> bool:
        """A figure ceilings, baselines, fits and checks may use: verified, or an
        imported tool's own figure it could not check (`as_printed`, labelled so)."""
        return self.verified or self.as_printed

    @property
    def verified_text(self) -> str:
        """'yes', 'NO', or 'not checked by <tool>' for a table cell."""
        if self.verified:
            return "yes"
        return f"not checked by {self.source}" if self.as_printed else "NO"

    @property
    def all_warnings(self) -> tuple[str, ...]:
        derived = []
        if self.as_printed:
            derived.append(self.verification)
        elif not self.verified:
            derived.append("unverified: " + (self.verification or "data not checked"))
        if self.times_s and self.cv > self.CV_WARN:
            derived.append(f"high variation: CV {self.cv:.1%} over {len(self.times_s)} repetitions")
        return tuple(self.warnings) + tuple(derived)

    def derived(self) -> dict[str, Any]:
        """Statistics for output (never read back)."""
        return {
            "median_s": _finite(self.median_s),
            "min_s": _finite(self.min_s),
            "iqr_s": _finite(self.iqr_s),
            "cv": _finite(self.cv),
            "bandwidth_bytes_per_s": _finite(self.bandwidth_bytes_per_s),
            "busbw_bytes_per_s": _finite(self.busbw_bytes_per_s),
            "flop_rate": _finite(self.flop_rate),
            "warnings": list(self.all_warnings),
        }


def slowest_per_repetition(series: "typing.Sequence[typing.Sequence[float]]") -> tuple[float, ...]:
    """Merge simultaneous timings (ranks, or devices of one process): per repetition,
    the slowest; as many repetitions as the shortest series has."""
    if not series:
        return ()
    reps = min(len(s) for s in series)
    return tuple(max(s[i] for s in series) for i in range(reps))


@dataclass(frozen=True)
class Skipped:
    """A benchmark that was planned but not run, and why."""

    name: str
    reason: str
    devices: tuple[int, ...] = ()


@dataclass(frozen=True)
class GpuState:
    index: int
    sm_clock_mhz: int | Unknown
    memory_clock_mhz: int | Unknown
    power_w: float | Unknown
    temperature_c: int | Unknown
    persistence: bool | Unknown
    ecc: bool | Unknown
    throttle_reasons: tuple[str, ...] | Unknown


@dataclass(frozen=True)
class Environment:
    linkroof_version: str
    hostname: str
    time: str  # ISO 8601
    driver_version: str | Unknown
    cuda_driver_version: str | Unknown
    cuda_runtime_version: str | Unknown
    nccl_version: str | Unknown
    cupy_version: str | Unknown
    nvml_py_version: str | Unknown
    python_version: str
    env: dict[str, str] = field(default_factory=dict)  # NCCL_*, CUDA_VISIBLE_DEVICES, ...
    gpu_states_before: tuple[GpuState, ...] = ()
    gpu_states_after: tuple[GpuState, ...] = ()


# ------------------------------------------------------------ roofline objects


@dataclass(frozen=True)
class Workload:
    """What a kernel or collective must do: FLOPs per dtype, HBM bytes, link bytes."""

    name: str
    flops: dict[str, float] = field(default_factory=dict)  # dtype -> FLOPs
    hbm_bytes: float = 0.0
    link_bytes: dict[str, float] = field(default_factory=dict)  # path class -> bytes
    message_bytes: int | None = None
    ranks: int = 1
    pattern: str = ""
    source: str = "user"  # "user" | "formula:<name>" | "template:<name>" | "counters"
    params: dict[str, Any] = field(default_factory=dict)  # a template's parameters (m, n, k, dtype, ...)


@dataclass(frozen=True)
class KernelGroup:
    """The kernels of one name (or the copies / memsets of one kind) in a call's timeline."""

    name: str
    kind: str  # "kernel" | "memcpy" | "memset"
    kernel_class: str  # "compute" | "memory" | "communication" | "transfer" | "other"
    class_basis: str  # how the class was known (a counter, the record's kind, or inferred from the name)
    launches_per_call: float
    time_per_call_s: float
    median_s: float  # one launch's median duration
    grid: tuple[int, ...] = ()
    block: tuple[int, ...] = ()
    bytes_per_call: float = 0.0  # copies and memsets
    collective: str = ""  # an NCCL kernel's collective, where its name says
    counters: dict[str, float] = field(default_factory=dict)  # measured per call: dram_bytes, flops:<dtype>, ...
    why: str = ""  # one sentence from ncu's counters on why it sits where it does (timeline.why_text)


@dataclass(frozen=True)
class ClockState:
    """The clock and power state a figure was timed in (roofline/clockstate.py), from
    NVML samples taken while it ran: 'burst' (at the boost clock, nothing holding it),
    'sustained' (held below it, e.g. at the power cap), 'drifting' (the figure moved by
    more than 3 % within the run: burst_s and sustained_s both given), 'steady' (timed
    after the clock settled, on request), or 'unknown' (no samples)."""

    state: str
    samples: int = 0
    sm_mhz_first: float | None = None
    sm_mhz_last: float | None = None
    sm_mhz_median: float | None = None
    sm_mhz_max: float | None = None
    mem_mhz: float | None = None
    power_w: float | None = None
    reasons: tuple[str, ...] = ()
    burst_s: float | None = None  # the first third of the timed batches' median
    sustained_s: float | None = None  # the last third's
    drift: float = 0.0  # |sustained - burst| / burst
    note: str = ""


@dataclass(frozen=True)
class HostSummary:
    """What the host did during a call's GPU idle time, per call, from CUPTI's API and
    synchronization records (a pass of its own: recording the API slows the host, so
    these are shares of that pass applied to the timed idle): each idle gap given to the
    cause the host records show (roofline/timeline.host_causes)."""

    calls: int
    recorded_period_s: float  # the recorded pass's period per call (host slowed by the API records)
    launches_per_call: float  # kernel, copy, memset and graph launches the host issued
    launch_api_s: float  # median time inside one launch call (the driver's part), recorded
    host_per_launch_s: float  # median host time from one launch's end to the next's, gaps under HOST_WORK_GAP
    syncs_per_call: float  # host waits for the GPU (stream / event / device synchronize, blocking copies)
    sync_names: tuple[str, ...] = ()
    host_work_s: float = 0.0  # per call: host gaps over HOST_WORK_GAP with no CUDA call in them
    idle_causes_s: tuple[tuple[str, float], ...] = ()  # (sync | host work | launch | unknown, recorded idle s)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class TimelineSummary:
    """What the GPU did during a call, per call, measured from its activity records
    (roofline/timeline.py): span, busy and idle time, communication overlapped and
    exposed, the time of each class of work, and the kernels by name."""

    source: str  # "cupti" | "kineto" | "none"
    calls: int
    rank: int | None = None
    span_s: float = 0.0
    busy_s: float = 0.0
    idle_s: float = 0.0
    activities_per_call: float = 0.0
    kernels_per_call: float = 0.0
    streams: int = 0
    devices: tuple[int, ...] = ()
    communication_s: float = 0.0
    overlapped_communication_s: float = 0.0
    exposed_communication_s: float = 0.0
    class_s: tuple[tuple[str, float], ...] = ()  # (class, seconds of the union of its intervals) per call
    kernels: tuple[KernelGroup, ...] = ()
    notes: tuple[str, ...] = ()
    # the first calls' intervals, for drawing: (device, stream, class, start, end), ns from the first call's start
    intervals: tuple[tuple[int, int, str, int, int], ...] = ()
    # overlap-aware, per device (the device of the decomposition: the busiest one, `device`), per call:
    device: int | None = None
    class_alone_s: tuple[tuple[str, float], ...] = ()  # (class, time it ran with no other class beside it)
    overlap_s: tuple[tuple[str, str, float], ...] = ()  # (class, class, time the two ran at once)
    # the span's pieces, additive: ("compute", s), ("compute + transfer", s), ..., ("idle", s)
    pieces: tuple[tuple[str, float], ...] = ()
    # the critical path (inferred: each activity waits for the one that ended last before it began)
    critical_path_s: tuple[tuple[str, float], ...] = ()
    # per class: the most the call could shorten were that class's work free (inferred), with why
    shorten_s: tuple[tuple[str, float, str], ...] = ()
    host: HostSummary | None = None


@dataclass(frozen=True)
class Placement:
    workload: Workload
    measured_time_s: float  # slowest rank
    bound_time_s: float
    limiter: str  # compute | memory | link:<class> | latency
    ceilings_kind: str  # "measured" | "spec"
    terms_s: dict[str, float] = field(default_factory=dict)  # each resource's time
    flags: tuple[str, ...] = ()
    # the cost model (roofline/cost.py): launch + sync + max(compute, memory, latency-aware links)
    cost_bound_s: float = 0.0  # 0: not computed (a spec placement, or a profile without the terms)
    cost_terms_s: dict[str, float] = field(default_factory=dict)
    decomposition_s: dict[str, float] = field(default_factory=dict)  # the measured time, additive, with "unexplained"
    cost_notes: tuple[str, ...] = ()
    timeline: TimelineSummary | None = None  # the call's measured GPU timeline, where one was recorded
    clock: ClockState | None = None  # the clock state the measured time was taken in, where sampled

    @property
    def fraction_of_roofline(self) -> float:
        """The bandwidth-only roofline's bound over the measured time (NaN: nothing to bound)."""
        return self.bound_time_s / self.measured_time_s if self.measured_time_s > 0 and self.bound_time_s > 0 \
            else math.nan

    @property
    def fraction_of_cost_bound(self) -> float:
        """The cost model's bound (launch, sync, latency included) over the measured time."""
        return self.cost_bound_s / self.measured_time_s if self.cost_bound_s > 0 and self.measured_time_s > 0 \
            else math.nan

    # A measured time below its bound by more than this share is flagged, wherever shown:
    # within it, the time and the figures the bound comes from agree within their own
    # run-to-run noise (under 1 % for the headline figures on 2xH200, benchmarks/RESULTS.md)
    BELOW_BOUND = 0.01

    @property
    def below_cost_bound(self) -> bool:
        return self.cost_bound_s > self.measured_time_s * (1 + self.BELOW_BOUND)

    @property
    def verdicts(self) -> tuple[str, ...]:
        """Every flag of this placement, as every view shows it (CLI table and JSON, the
        dashboard, the report): the bandwidth-only roofline's, then the cost model's (a
        time below its bound, terms the profile lacks, a time below the model's terms)."""
        out = list(self.flags)
        if self.below_cost_bound:
            out.append(f"faster than its cost-model bound ({self.cost_bound_s / self.measured_time_s:.2f}x): check "
                       "the workload's counts, its launch path and syncs, or the profile's terms")
        out += [n for n in self.cost_notes if n.startswith(("cost model not computed", "faster than the cost model"))]
        return tuple(out)


def kind_of(label: str, measurements: int) -> str:
    """What a stored profile holds, from its index row (label, measurement count):
    'reference' (linkroof's bundled one, labelled "reference:"), 'imported' (another
    tool's figures, saved by `linkroof import` with an "import:" label), 'placements'
    (no measurements: what compare or trace saved), else 'measured' (linkroof's own)."""
    if label.startswith("reference:"):
        return "reference"
    if label.startswith("import:"):
        return "imported"
    return "measured" if measurements else "placements"


@dataclass(frozen=True)
class Profile:
    id: str
    created_at: str  # ISO 8601
    topologies: tuple[Topology, ...]  # one per host
    environments: tuple[Environment, ...]  # one per host
    measurements: tuple[Measurement, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    placements: tuple[Placement, ...] = ()
    label: str = ""
    notes: tuple[str, ...] = ()

    @property
    def topology(self) -> Topology:
        return self.topologies[0]

    @property
    def hostnames(self) -> tuple[str, ...]:
        return tuple(t.host.hostname for t in self.topologies)

    @property
    def kind(self) -> str:
        return kind_of(self.label, len(self.measurements))

    @property
    def kind_words(self) -> str:
        """Its provenance in a few words, for every view and export."""
        k = self.kind
        if k == "imported":
            tools = sorted({m.source for m in self.measurements if m.source != "linkroof"}) or ["another tool"]
            return f"{', '.join(tools)} figures imported {self.created_at[:10]} (linkroof import; not measured by linkroof)"
        if k == "placements":
            return f"placements saved {self.created_at[:10]} (no measurements)"
        if k == "reference":
            return f"linkroof's bundled reference, measured {self.created_at[:10]} on another machine"
        return f"measured by linkroof {self.created_at[:10]}"

    def rows(self) -> list[dict[str, Any]]:
        """One flat row per measurement: the spec (parameters as `param.<name>`), the
        raw counts, the derived figures and the flags; for tables and notebooks."""
        out = []
        for m in self.measurements:
            s = m.spec
            value, unit = m.figure
            row: dict[str, Any] = {
                "profile": self.id, "name": s.name, "mechanism": s.mechanism, "pattern": s.pattern,
                "devices": ",".join(map(str, s.devices)), "message_bytes": s.message_bytes,
                "repetitions": len(m.times_s) or s.repetitions, "concurrency": s.concurrency,
                "source": m.source, "host": m.host, "rank": m.rank, "verified": m.verified,
                "bytes_per_rep": m.bytes_per_rep, "bytes_convention": m.bytes_convention,
                "busbw_factor": m.busbw_factor, "flops_per_rep": m.flops_per_rep,
                "figure": value, "figure_unit": unit}
            derived = m.derived()
            row.update({k: derived[k] for k in ("median_s", "min_s", "iqr_s", "cv", "bandwidth_bytes_per_s",
                                                "busbw_bytes_per_s", "flop_rate")})
            row["warnings"] = "; ".join(derived["warnings"])
            row.update({f"param.{k}": v if isinstance(v, (str, int, float, bool)) or v is None else str(v)
                        for k, v in s.params.items()})
            out.append(row)
        return out

    def to_dataframe(self) -> Any:
        """`rows()` as a pandas DataFrame (one row per measurement)."""
        import pandas as pd

        return pd.DataFrame(self.rows())


DOCUMENT_TYPES = {cls.__name__: cls for cls in (Topology, Profile, Measurement, Workload, Placement, TimelineSummary)}


# ------------------------------------------------------------- serialisation


def _finite(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x


def to_dict(obj: Any) -> Any:
    """Dataclasses -> plain JSON-able values (Unknown -> {"unknown": reason})."""
    if isinstance(obj, Unknown):
        return {"unknown": obj.reason}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out = {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
        if isinstance(obj, Measurement):
            out["derived"] = obj.derived()
        if isinstance(obj, Placement):
            out["derived"] = {"fraction_of_roofline": _finite(obj.fraction_of_roofline),
                              "fraction_of_cost_bound": _finite(obj.fraction_of_cost_bound),
                              "below_cost_bound": obj.below_cost_bound, "verdicts": list(obj.verdicts)}
        return out
    if isinstance(obj, (list, tuple)):
        return [to_dict(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): to_dict(v) for k, v in obj.items()}
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def to_document(obj: Any) -> dict[str, Any]:
    name = type(obj).__name__
    if name not in DOCUMENT_TYPES:
        raise TypeError(f"{name} is not a top-level document type")
    return {"schema": f"linkroof.{name}", "schema_version": SCHEMA_VERSION, **to_dict(obj)}


def dumps(obj: Any, indent: int | None = 1) -> str:
    return json.dumps(to_document(obj), indent=indent, allow_nan=False)


MAX_DEPTH = 64  # a profile nests about 8 deep; far deeper is not a linkroof document


def loads(text: str | bytes, expected: type | None = None) -> Any:
    """Parse a JSON document; `expected` (e.g. Profile) checks the document's type."""
    if not isinstance(text, (str, bytes, bytearray)):  # a store row's NULL document, written by another tool
        raise SchemaError(f"no document (a {type(text).__name__}, not JSON text)")
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise SchemaError(f"not valid JSON: {e}") from None
    except ValueError as e:  # an integer of thousands of digits: Python refuses to read it
        raise SchemaError(f"not a linkroof document: {str(e)[:120]}") from None
    except RecursionError:
        raise SchemaError(f"nested more than {MAX_DEPTH} levels deep: not a linkroof document") from None
    return from_document(data, expected)


def _depth_ok(value: Any, limit: int = MAX_DEPTH) -> bool:
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if d > limit:
            return False
        if isinstance(v, dict):
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, d + 1) for x in v)
    return True


def from_document(data: Any, expected: type | None = None) -> Any:
    if not isinstance(data, dict) or not str(data.get("schema", "")).startswith("linkroof."):
        raise SchemaError("not a linkroof document (no \"schema\": \"linkroof.<Type>\" field)")
    type_name = data["schema"].split(".", 1)[1]
    cls = DOCUMENT_TYPES.get(type_name)
    if cls is None:
        raise SchemaError(f"schema: unknown document type {data['schema']!r}")
    if expected is not None and cls is not expected:
        raise SchemaError(f"schema: expected linkroof.{expected.__name__}, got {data['schema']}")
    if not _depth_ok(data):
        raise SchemaError(f"nested more than {MAX_DEPTH} levels deep: not a linkroof document")
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise SchemaError("schema_version: missing or not an integer")
    if version < 1:
        raise SchemaError(f"schema_version: {version} is not a version (they start at 1)")
    if version > SCHEMA_VERSION:
        raise SchemaError(
            f"schema_version: {version} is newer than this linkroof understands ({SCHEMA_VERSION}); upgrade linkroof")
    body = {k: v for k, v in data.items() if k not in ("schema", "schema_version")}
    return _decode(cls, body, type_name.lower())


MAX_GPUS = 4096  # GPUs in one profile, and the range of a GPU index
MAX_QUANTITY = 1e18  # a count of bytes, repetitions, SMs or MHz beyond this is not a measurement


def _validate(tp: type, fields: dict[str, Any], path: str) -> None:
    """Values the types allow but a measurement cannot have."""
    def bad(name: str, why: str) -> SchemaError:
        return SchemaError(f"{path}.{name}: {why}, got {_describe(fields[name])}")

    if tp is Gpu:
        if not 0 <= fields.get("index", 0) < MAX_GPUS:
            raise bad("index", f"a GPU index is 0 to {MAX_GPUS - 1}")
        for name in ("memory_total_bytes", "sm_count", "memory_bus_width_bits", "max_sm_clock_mhz",
                     "max_memory_clock_mhz"):
            if isinstance(fields.get(name), int) and not 0 <= fields[name] < MAX_QUANTITY:
                raise bad(name, f"must be 0 to {MAX_QUANTITY:.0e}")
    if tp is Pair:
        for name in ("a", "b"):
            if name in fields and isinstance(fields[name], int) and not 0 <= fields[name] < MAX_GPUS:
                raise bad(name, f"a GPU index is 0 to {MAX_GPUS - 1}")
    if tp is Ceiling:
        for name in ("bytes_per_s", "data_bytes_per_s"):
            if isinstance(fields.get(name), float) and not fields[name] >= 0:
                raise bad(name, "a ceiling must not be negative")
    if tp is Topology:
        indices = [g.index for g in fields["gpus"]]
        dup = sorted({i for i in indices if indices.count(i) > 1})
        if dup:
            raise SchemaError(f"{path}.gpus: GPU index {dup[0]} is listed more than once")
        if len(indices) > MAX_GPUS:
            raise SchemaError(f"{path}.gpus: {len(indices)} GPUs, more than the {MAX_GPUS} a topology may hold")
        for i, pr in enumerate(fields["pairs"]):
            if pr.a not in indices or pr.b not in indices:
                raise SchemaError(f"{path}.pairs[{i}]: GPU{pr.a} -> GPU{pr.b} names a GPU the topology lacks "
                                  f"(GPUs {', '.join(map(str, indices)) or 'none'})")
    if tp is BenchSpec:
        for name in ("message_bytes", "repetitions", "concurrency"):
            if name in fields and not 0 <= fields[name] < MAX_QUANTITY:
                raise bad(name, "must not be negative" if fields[name] < 0 else f"must be under {MAX_QUANTITY:.0e}")
        for name in ("devices",):
            if any(not 0 <= d < MAX_GPUS for d in fields.get(name, ())):
                raise bad(name, f"a GPU index is 0 to {MAX_GPUS - 1}")
    elif tp is Measurement:
        times = fields.get("times_s", ())
        if any(not (t >= 0 and math.isfinite(t)) for t in times):
            raise bad("times_s", "every time must be a finite number of seconds >= 0")
        for name in ("bytes_per_rep", "flops_per_rep"):
            if name in fields and not fields[name] >= 0:
                raise bad(name, "must not be negative")
        for k, v in fields.get("reported", {}).items():
            if not v >= 0:
                raise SchemaError(f"{path}.reported.{k}: must be a finite number >= 0, got {_describe(v)}")
        factor = fields.get("busbw_factor")
        if factor is not None and not 0 < factor <= 64:
            raise bad("busbw_factor", "a bus-bandwidth factor is above 0 and at most 64")
    elif tp is Profile:
        pid = fields["id"]
        if not pid.strip():
            raise bad("id", "must not be empty")
        if not fields.get("topologies"):  # every view places the figures on a machine: none is nothing to show
            raise bad("topologies", "a profile describes at least one machine (an import names a bare one)")
        if len(pid) > 128 or any(not c.isprintable() for c in pid):
            raise bad("id", "an id is at most 128 characters of plain text (no control characters)")
        gpus = sum(len(t.gpus) for t in fields["topologies"])
        for i, m in enumerate(fields.get("measurements", ())):
            if gpus and any(d >= gpus for d in m.spec.devices):
                raise SchemaError(f"{path}.measurements[{i}].spec.devices: {list(m.spec.devices)} names a GPU the "
                                  f"profile's topologies lack ({gpus} GPUs)")
        try:
            import datetime as _dt

            _dt.datetime.fromisoformat(fields["created_at"])
        except ValueError:
            raise bad("created_at", "expected an ISO 8601 date and time") from None
    elif tp is Placement and not fields["measured_time_s"] > 0:
        raise bad("measured_time_s", "must be positive")


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _describe(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _decode(tp: Any, value: Any, path: str) -> Any:
    origin = typing.get_origin(tp)
    if tp is Any:
        return value
    if tp is Unknown:
        if isinstance(value, dict) and set(value) == {"unknown"} and isinstance(value["unknown"], str):
            return Unknown(value["unknown"])
        raise SchemaError(f"{path}: expected {{\"unknown\": reason}}, got {_describe(value)}")
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise SchemaError(f"{path}: expected an object, got {_describe(value)}")
        kwargs = {}
        for f in dataclasses.fields(tp):
            if f.name in value:
                kwargs[f.name] = _decode(_hints(tp)[f.name], value[f.name], f"{path}.{f.name}")
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise SchemaError(f"{path}.{f.name}: missing")
        _validate(tp, kwargs, path)
        return tp(**kwargs)
    if origin in (Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        if isinstance(value, dict) and "unknown" in value and Unknown in args:
            return _decode(Unknown, value, path)
        errors = []
        for arg in args:
            if arg is type(None) or arg is Unknown:
                continue
            try:
                return _decode(arg, value, path)
            except SchemaError as e:
                errors.append(e)
        if len(errors) == 1:
            raise errors[0]
        names = " or ".join(getattr(a, "__name__", str(a)) for a in args)
        raise SchemaError(f"{path}: expected {names}, got {_describe(value)}")
    if origin is tuple:
        if not isinstance(value, list):
            raise SchemaError(f"{path}: expected a list, got {_describe(value)}")
        args = typing.get_args(tp)
        if args and Ellipsis not in args:  # a fixed shape: tuple[str, float]
            if len(value) != len(args):
                raise SchemaError(f"{path}: expected {len(args)} items, got {len(value)}")
            return tuple(_decode(a, v, f"{path}[{i}]") for i, (a, v) in enumerate(zip(args, value)))
        (item,) = [a for a in args if a is not Ellipsis][:1] or [Any]
        return tuple(_decode(item, v, f"{path}[{i}]") for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            raise SchemaError(f"{path}: expected an object, got {_describe(value)}")
        _, item = typing.get_args(tp)
        return {k: _decode(item, v, f"{path}.{k}") for k, v in value.items()}
    if tp is bool:
        if isinstance(value, bool):
            return value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                number = float(value)
            except OverflowError:  # an integer too large for a float (a 5000-digit number)
                raise SchemaError(f"{path}: {_describe(value)} is too large a number") from None
            if not math.isfinite(number):
                raise SchemaError(f"{path}: expected a finite number, got {number}")
            return number
        if value is None:
            raise SchemaError(f"{path}: expected a finite number, got null (not a number, or infinite, when written)")
    elif tp is str:
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate (\ud800): no text can hold it
                raise SchemaError(f"{path}: not valid text (a lone surrogate {_describe(value)})") from None
            return value
    else:
        raise TypeError(f"schema cannot decode type {tp!r} at {path}")
    raise SchemaError(f"{path}: expected {tp.__name__}, got {_describe(value)}")
