"""Analyses of a profile for the views: the connection matrices, headline figures
against spec, warnings, and the comparison of two runs. Pure: data in, rows and
text out; the CLI, the dashboard and the report render them."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..schema import Measurement, Profile, Topology, Unknown, known
from ..units import format_rate, format_size, format_value, gbps, tflops
from .model import MachineModel


def show(value: Any, fmt: Callable[[Any], str] = str) -> str:
    """A value for a table cell: None or Unknown -> 'N/A'."""
    if value is None or isinstance(value, Unknown):
        return "N/A"
    return fmt(value)


# ------------------------------------------------------------ connection matrices


def topo_matrix(topo: Topology) -> str:
    """The connection matrix the way `nvidia-smi topo -m` prints it (aligned with spaces)."""
    gpus = topo.gpus
    # nvidia-smi lists RDMA devices (InfiniBand and RoCE); plain Ethernet ports are in the NIC table.
    nics = [nic for nic in topo.nics if nic.kind == "infiniband"]
    rdma = [i for i, nic in enumerate(topo.nics) if nic.kind == "infiniband"]
    cols = [g.label for g in gpus] + [f"NIC{i}" for i in range(len(nics))]
    header = ["", *cols, "CPU Affinity", "NUMA Affinity", "GPU NUMA ID"]
    rows = [header]
    for g in gpus:
        cells = [g.label]
        for other in gpus:
            cells.append("X" if other.index == g.index else _pair_cell(topo, g.index, other.index))
        for nic in nics:
            cells.append(nic.level_to(g.index))
        cells += [show(g.cpu_affinity), show(g.numa_affinity), show(g.gpu_numa_id)]
        rows.append(cells)
    for i, nic in enumerate(nics):
        cells = [f"NIC{i}"]
        cells += [nic.level_to(g.index) for g in gpus]
        cells += ["X" if j == i else (nic.nic_levels[k] if k < len(nic.nic_levels) else "?") for j, k in enumerate(rdma)]
        cells += ["", "", ""]
        rows.append(cells)
    widths = [max(len(r[c]) for r in rows) for c in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
    if nics:
        lines += ["", "NIC Legend:", ""] + [f"  NIC{i}: {nic.name}" for i, nic in enumerate(nics)]
    return "\n".join(lines)


def _pair_cell(topo: Topology, a: int, b: int) -> str:
    try:
        p = topo.pair(a, b)
    except KeyError:  # a topology that lists no such pair (an import, a hand-edited file)
        return "?"
    if known(p.nvlink_count) and p.nvlink_count:
        return f"NV{p.nvlink_count}"
    return show(p.pcie_level, str) if known(p.pcie_level) else "?"


def p2p_matrix(topo: Topology) -> str:
    """P2P status per ordered pair as read/write/atomics, like `nvidia-smi topo -p2p r/w/a`."""
    gpus = topo.gpus
    rows = [["", *[g.label for g in gpus]]]
    for g in gpus:
        cells = [g.label]
        for o in gpus:
            if o.index == g.index:
                cells.append("X")
            else:
                try:
                    p = topo.pair(g.index, o.index)
                except KeyError:  # a topology that lists no such pair
                    cells.append("?")
                    continue
                cells.append("/".join(show(s) for s in (p.p2p_read, p.p2p_write, p.p2p_atomics)))
        rows.append(cells)
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


# ------------------------------------------------------------ headline figures


HEADLINES = (("link:nvlink", "NVLink peer"), ("link:pcie_peer", "PCIe peer"), ("link:host", "Host link"),
             ("hbm", "HBM"), ("compute:fp16", "fp16 GEMM"), ("compute:bf16", "bf16 GEMM"), ("compute:fp32", "fp32"))


NOT_HELD = "not applicable"  # a headline row's spec where the link's spec is not its ceiling (pageable copies)


def headline_rows(profile: Profile, model: MachineModel) -> list[dict[str, Any]]:
    """Overview: each headline figure measured against its spec ceiling."""
    rows = []
    for res, label in HEADLINES:
        spec = model.find(res, "spec")
        mechs = sorted({r.mechanism for r in model.roofs if r.resource == res and r.kind == "measured"})
        for mech in mechs:
            meas = model.find(res, "measured", mech)
            scale = tflops if res.startswith("compute") else gbps
            # a pageable host copy is staged by the driver through a pinned buffer: the link's
            # spec is not its ceiling, so it is shown without a share of it (and never gated on one)
            held = spec is not None and known(spec.value) and "pageable" not in mech
            rows.append({"figure": f"{label} ({mech})", "measured": round(scale(meas.value), 1),
                         "spec": round(scale(spec.value), 1) if held else (NOT_HELD if "pageable" in mech else None),
                         "unit": "TFLOP/s" if res.startswith("compute") else "GB/s",
                         "percent_of_spec": round(100 * meas.value / spec.value, 1) if held else None,
                         "flags": "; ".join(meas.flags + (("staged through a pinned buffer by the driver: not held "
                                                           "to the link's spec",) if "pageable" in mech else ()))})
    return rows


def warnings_of(profile: Profile, model: MachineModel | None = None) -> list[str]:
    """What a reader should know first: unverified, throttled, above-spec figures,
    inactive NVLinks, links far below spec, skipped benchmarks."""
    out = []
    bad = [m for m in profile.measurements if not m.trusted]
    if bad:
        out.append(f"{len(bad)} unverified figures (e.g. {bad[0].spec.name}: {bad[0].verification})")
    unchecked = sorted({m.source for m in profile.measurements if m.as_printed})
    if unchecked:
        out.append(f"figures imported as printed, not checked by {', '.join(unchecked)} (nvbandwidth verifies no data)")
    throttled = sorted({w for m in profile.measurements for w in m.warnings if "throttled" in w})
    out += throttled
    above = [m for m in profile.measurements if any(w.startswith("above spec") for w in m.warnings)]
    if above:
        out.append(f"{len(above)} figures above their path's spec line rate (flagged)")
    for topo in profile.topologies:
        for g in topo.gpus:
            active = len(g.active_nvlinks)
            if g.nvlinks and active < len(g.nvlinks):
                out.append(f"{topo.host.hostname} GPU{g.index}: {active} of {len(g.nvlinks)} NVLinks active")
        out += [n for n in topo.notes if "below" in n]
    model = model or MachineModel.from_profile(profile)
    for link in ("nvlink", "pcie_peer", "host"):
        spec = model.find(f"link:{link}", "spec")
        best = model.find(f"link:{link}", "measured")
        if spec is not None and best is not None and known(spec.value) and best.value < 0.5 * spec.value:
            out.append(f"{link} below expectation: best measured {format_rate(best.value)} is under half its spec "
                       f"{format_rate(spec.value)}")
    out += [f"skipped: {s.name}: {s.reason}" for s in profile.skipped[:10]]
    return out


# ------------------------------------------------------------ two runs


def figures_by_key(profile: Profile, origin: bool = True,
                   keep: Callable[[Measurement], bool] | None = None) -> dict[tuple[Any, ...], Measurement]:
    """One measurement per spec key (repetitions aside; with `origin`, also per source,
    host and rank): where a profile holds the same figure twice, the better of the two.
    `keep` chooses which measurements count."""
    out: dict[tuple[Any, ...], Measurement] = {}
    for m in profile.measurements:
        if keep is not None and not keep(m):
            continue
        value, unit = m.figure
        if not (value == value and value > 0):
            continue
        k = (m.spec.key(), m.source, m.host, m.rank) if origin else m.spec.key()
        if k in out:
            old, _ = out[k].figure
            better = value < old if unit == "s" else value > old
            if not better:
                continue
        out[k] = m
    return out


@dataclass
class RunComparison:
    """Two profiles figure by figure: how many figures both hold (`compared`), how many
    only one does, and those that changed beyond the noise."""

    compared: int
    only_in_a: int
    only_in_b: int
    changed: list[dict[str, Any]] = field(default_factory=list)

    def verdict(self, a_id: str, b_id: str) -> str:
        """One sentence every view prints: nothing comparable is never 'nothing changed'."""
        if not self.compared:
            return (f"No figure of {a_id} has a counterpart in {b_id} (same benchmark, mechanism, pattern, GPUs, size "
                    f"and parameters): nothing was compared ({self.only_in_a} and {self.only_in_b} figures of their own)")
        if not self.changed:
            return f"No figure changed beyond the noise between {a_id} and {b_id} ({self.compared} figures compared)"
        return f"{len(self.changed)} of {self.compared} figures changed beyond the noise between {a_id} and {b_id}"


def compare_profiles(a: Profile, b: Profile, noise: float = 0.02) -> RunComparison:
    """Figures present in both profiles (same spec key, parameters included) that
    changed beyond the noise: a change larger than `noise` and than three times either
    run's CV, judged on the log ratio so the verdict does not depend on the order."""
    left, right = figures_by_key(a), figures_by_key(b)
    rows = []
    both = set(left) & set(right)
    for k in sorted(both, key=repr):
        ma, mb = left[k], right[k]
        (va, unit), (vb, _) = ma.figure, mb.figure
        cvs = [m.cv for m in (ma, mb) if m.cv == m.cv]
        threshold = max([noise] + [3 * c for c in cvs])
        if abs(math.log(vb / va)) > math.log1p(threshold):
            s = mb.spec
            rows.append({"figure": f"{s.name} {s.mechanism} {s.pattern} {','.join(map(str, s.devices))} "
                                   f"{format_size(s.message_bytes)}"
                                   + "".join(f" {p}={v}" for p, v in sorted(s.params.items())),
                         "before": format_value(va, unit), "after": format_value(vb, unit),
                         "change_percent": round(100 * (vb - va) / va, 2)})
    return RunComparison(len(both), len(set(left) - both), len(set(right) - both),
                         sorted(rows, key=lambda r: -abs(r["change_percent"])))


# ------------------------------------------------------------ collectives, nccl-tests style


def _wrong(m: Measurement) -> str:
    """nccl-tests' #wrong column from a verification note ('#wrong 0 of 1048576 ...',
    'nccl-tests #wrong = 0'); 'N/A' where nothing was checked."""
    import re

    found = re.search(r"#wrong\D*(\d+)", m.verification)
    return found.group(1) if found else ("0" if m.verified else "N/A")


def collective_rows(profile: Profile) -> dict[str, list[dict[str, Any]]]:
    """The profile's collectives as nccl-tests prints them, one table per collective,
    data type and source (a title such as 'all_reduce fp32 (linkroof)'): size, count,
    type, redop, root, then time / algbw / busbw / #wrong out of place and in place.
    Times are microseconds, bandwidths GB/s. Where a figure was also taken with the
    host's launch in its time, that time is given beside it."""
    from .collectives import element_count

    groups: dict[str, dict[int, dict[str, Any]]] = {}
    for m in profile.measurements:
        s = m.spec
        if s.mechanism != "nccl" or s.params.get("rank_time") == "this rank":
            continue
        dtype = str(s.params.get("dtype", "fp32"))
        launch = s.params.get("timing") == "host_launch"
        # an imported run is one timing, its own (nccl-tests plain: the host's launch in it; -G: graph replays)
        title = f"{s.pattern} {dtype} ({m.source})" if m.source == "linkroof" else \
            f"{s.pattern} {dtype} ({m.source}, {'host launch' if launch else 'graph launch, -G'})"
        count = m.reported.get("count")
        row = groups.setdefault(title, {}).setdefault(s.message_bytes, {
            "size": s.message_bytes,
            "count": int(count) if count is not None else element_count(s.message_bytes, dtype, s.pattern,
                                                                          len(s.devices)),
            "type": dtype, "redop": s.params.get("redop", ""), "root": s.params.get("root", "")})
        place_ = "in" if s.params.get("in_place") else "out"
        prefix = f"{place_}_launch" if launch and m.source == "linkroof" else place_
        row[f"{prefix}_time_us"] = round(m.median_s * 1e6, 2)
        row[f"{prefix}_algbw_GBps"] = round(m.bandwidth_bytes_per_s / 1e9, 2)
        row[f"{prefix}_busbw_GBps"] = round(m.busbw_bytes_per_s / 1e9, 2)
        row[f"{prefix}_wrong"] = _wrong(m)
    return {title: [rows[k] for k in sorted(rows)] for title, rows in sorted(groups.items())}



# ------------------------------------------------------------ which machine a profile describes


def machine_differences(profile_topology: Topology, here: Topology) -> list[str]:
    """How the machine a profile was measured on differs from this one: GPU count and
    model, and each GPU's active NVLinks. Empty when they match."""
    a, b = profile_topology, here
    out = []
    if len(a.gpus) != len(b.gpus):
        out.append(f"{len(a.gpus)} GPUs in the profile, {len(b.gpus)} here")
    names_a = sorted(str(g.name) for g in a.gpus)
    names_b = sorted(str(g.name) for g in b.gpus)
    if set(names_a) != set(names_b):
        out.append(f"GPU model {', '.join(sorted(set(names_a)))} in the profile, {', '.join(sorted(set(names_b)))} here")
    for ga, gb in zip(a.gpus, b.gpus):
        if ga.nvlinks and len(ga.active_nvlinks) != len(gb.active_nvlinks):
            out.append(f"GPU{ga.index}: {len(ga.active_nvlinks)} active NVLinks in the profile, "
                       f"{len(gb.active_nvlinks)} here")
    return out


# ------------------------------------------------------------ the same figures over several runs


def spread_across(profiles: list[Profile], mechanism: str | None = None, min_bytes: int = 0) -> list[dict[str, Any]]:
    """Each figure found in at least two of the profiles (same spec key): its median over
    the runs, the inter-quartile range and the full spread (max - min) relative to the
    median: the run-to-run variation one run's own CV does not show."""
    import statistics

    values: dict[tuple[Any, ...], list[float]] = {}
    units: dict[tuple[Any, ...], tuple[str, Measurement]] = {}
    for p in profiles:
        for k, m in figures_by_key(p).items():
            if (mechanism and m.spec.mechanism != mechanism) or m.spec.message_bytes < min_bytes:
                continue
            value, unit = m.figure
            values.setdefault(k, []).append(value)
            units[k] = (unit, m)
    rows = []
    for k in sorted(values, key=repr):
        vs = values[k]
        if len(vs) < 2:
            continue
        unit, m = units[k]
        med = statistics.median(vs)
        q = statistics.quantiles(vs, n=4, method="inclusive")
        s_ = m.spec
        rows.append({"figure": f"{s_.name} {s_.mechanism} {s_.pattern} {format_size(s_.message_bytes)}"
                               + "".join(f" {p}={v}" for p, v in sorted(s_.params.items())
                                         if p in ("dtype", "in_place", "timing", "blocks", "host_memory")),
                     "runs": len(vs), "median": format_value(med, unit), "iqr_percent": round(100 * (q[2] - q[0]) / med, 2),
                     "spread_percent": round(100 * (max(vs) - min(vs)) / med, 2)})
    return rows


SATURATION_SHARE = 0.9
BLOCK_MECHANISMS = ("sm", "tma", "red", "tma_red")


def saturation(profile: Profile, share: float = SATURATION_SHARE) -> list[dict[str, Any]]:
    """The block-count sweeps of SM, TMA and reduction mechanisms: per mechanism and
    pattern, the bandwidth at each block count (best verified figure, one transfer, not a
    size sweep, not the compute-beside-communication runs) and the fewest blocks reaching `share` of
    that mechanism's peak."""
    pts: dict[tuple[str, str], dict[int, float]] = {}
    for m in profile.measurements:
        p = m.spec.params
        if (m.verified and m.spec.mechanism in BLOCK_MECHANISMS and "blocks" in p and not p.get("sweep")
                and "parts" not in p and m.spec.name != "copy_under_compute"  # its own kernel shape
                and m.spec.pattern in ("p2p_read", "p2p_write") and m.bytes_per_rep):
            d = pts.setdefault((m.spec.mechanism, m.spec.pattern), {})
            b = int(p["blocks"])
            d[b] = max(d.get(b, 0.0), m.bandwidth_bytes_per_s)
    out = []
    for (mech, pattern), d in sorted(pts.items()):
        if len(d) < 2:
            continue  # one block count is a headline figure, not a sweep
        peak = max(d.values())
        out.append({"mechanism": mech, "pattern": pattern, "points": dict(sorted(d.items())), "peak": peak,
                    "blocks_needed": min(b for b, bw in d.items() if bw >= share * peak), "share": share})
    return out
