"""Text renderings of the data model for the terminal: pure functions returning strings
or rich renderables; the CLI prints them."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table as RichTable
from rich.text import Text

from .roofline.summaries import p2p_matrix, show, topo_matrix
from .schema import Profile, Topology, Unknown, known
from .units import format_bytes, format_flops, format_rate, format_size, format_time, format_value


# Columns that name a thing (a GPU, a bus id, a profile id): never cut in a narrow terminal
IDENTIFYING = {"GPU": 3, "Bus ID": 16, "ID": 22, "Name": 11, "Kind": 10}


def clean(text: Any) -> str:
    """A user-supplied string (an id, a label, a hostname) as plain text for the
    terminal: control characters (ANSI / OSC escapes, NUL, newlines) shown as \\xNN,
    never sent raw. Put it in a Text (not a markup string) so rich markup stays text."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"
                   for c in str(text))


class Table(RichTable):
    """A rich table whose text cells and title are plain text: control characters shown
    escaped (clean) and rich markup such as '[red]' printed as it is, never interpreted.
    Every table linkroof prints is one (profile ids, labels, hostnames and imported names
    reach the terminal through them)."""

    def __init__(self, *args: Any, title: Any = None, drop: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, title=Text(clean(title)) if isinstance(title, str) else title, **kwargs)
        self.drop = drop  # detail columns, in the order they are left out when the terminal is too narrow

    def __rich_console__(self, console: Any, options: Any) -> Any:
        """Where the table cannot fit the width without squeezing a column below its
        longest word, its detail columns are left out in their stated order (never the
        key or the figures), and a line says which and how to see them."""
        import copy

        table, dropped = self, []
        drawn = list(RichTable.__rich_console__(table, console, options))
        whole = _cut_marks(list(RichTable.__rich_console__(table, console, options.update_width(10 ** 5)))) \
            if self.drop else 0  # only a table with details to leave out is drawn a second time
        for name in self.drop:
            if _drawn_width(drawn) <= options.max_width and _least_width(table, console, options) <= options.max_width \
                    and _cut_marks(drawn) <= whole:  # no cell cut short ('…') that is whole when wide
                break
            table = copy.copy(table)
            table.columns = [c for c in table.columns if c.header != name]
            dropped.append(name)
            drawn = list(RichTable.__rich_console__(table, console, options))
        yield from drawn
        if dropped:
            yield Text(f"(at {options.max_width} columns, left out: {', '.join(dropped)}; --width 200 or --json "
                       "shows them)", style="dim")

    def add_row(self, *cells: Any, **kwargs: Any) -> None:  # type: ignore[override]
        super().add_row(*(Text(clean(c)) if isinstance(c, str) else c for c in cells), **kwargs)


def _least_width(table: RichTable, console: Any, options: Any) -> int:
    """The narrowest a table can be drawn without breaking a word: each column at its
    longest word (rich's own measure is clamped to the width it is offered, and would
    squeeze a column to one character a line), with padding and borders."""
    wide = options.update_width(10 ** 5)
    return sum(table._measure_column(console, wide, c).minimum for c in table.columns) + table._extra_width


def _cut_marks(segments: list[Any]) -> int:
    """How many cells rich cut short with an ellipsis in a drawn table."""
    return sum(seg.text.count("…") for seg in segments)


def _drawn_width(segments: list[Any]) -> int:
    """The widest line of a drawn table (rich draws a table wider than it is offered
    when its columns that may not wrap need more; the console then crops it)."""
    from rich.segment import Segment

    return max((Segment.get_line_length(line) for line in Segment.split_lines(segments)), default=0)


def _rate(x: Any, digits: int = 1) -> str:
    return show(x, lambda v: format_rate(v, digits))




def gpu_table(topo: Topology) -> Table:
    t = Table(title="GPUs", title_justify="left")
    for col in ("GPU", "Name", "Bus ID", "CC", "SMs", "Memory", "Max SM / Mem clock", "PCIe cur / max",
                "CPU affinity", "NUMA", "MIG"):
        # the identifying columns keep their text whole in a narrow terminal; the others wrap
        t.add_column(col, no_wrap=col in IDENTIFYING, min_width=IDENTIFYING.get(col), overflow="fold")
    for g in topo.gpus:
        pcie = (f"Gen{show(g.pcie_gen_current)} x{show(g.pcie_width_current)} / "
                f"Gen{show(g.pcie_gen_max)} x{show(g.pcie_width_max)}")
        mig = "N/A" if not known(g.mig.enabled) else ("on" + (f" ({g.mig.instances} inst.)" if known(g.mig.instances) else "")
                                                       if g.mig.enabled else "off")
        t.add_row(str(g.index), show(g.name), show(g.pci_bus_id), show(g.compute_capability), show(g.sm_count),
                  show(g.memory_total_bytes, format_bytes),
                  f"{show(g.max_sm_clock_mhz)} / {show(g.max_memory_clock_mhz)} MHz", pcie,
                  show(g.cpu_affinity), show(g.numa_affinity), mig)
    return t


def links_table(topo: Topology) -> Table:
    t = Table(title="NVLinks", title_justify="left")
    for col in ("GPU", "Active / reported", "Version", "Per link (line / data)", "Reaches", "P2P / atomics",
                "Fabric clique"):
        t.add_column(col)
    for g in topo.gpus:
        active = g.active_nvlinks
        if not g.nvlinks:
            t.add_row(g.label, "none reported", "", "", "", "", show(g.fabric.clique_id))
            continue
        first = active[0] if active else g.nvlinks[0]
        reaches: dict[str, int] = {}
        for link in active:
            key = {"switch": "NVSwitch", "gpu": f"GPU {show(link.remote_bus_id)}", "cpu": "CPU"}.get(link.remote_type, "unknown")
            reaches[key] = reaches.get(key, 0) + 1
        p2p = {str(link.p2p_supported) for link in active}
        atom = {str(link.p2p_atomics) for link in active}
        t.add_row(
            g.label, f"{len(active)} / {len(g.nvlinks)}",
            f"NVLink {show(first.version)}",
            f"{_rate(first.line_rate_bytes_per_s, 4)} / {_rate(first.data_rate_bytes_per_s, 2)}",
            ", ".join(f"{n} x {k}" for k, n in reaches.items()) or "-",
            f"{'/'.join(sorted(p2p)) or '-'} / {'/'.join(sorted(atom)) or '-'}",
            show(g.fabric.clique_id),
        )
    return t


def nics_table(topo: Topology) -> Table:
    t = Table(title="NICs", title_justify="left")
    for col in ("NIC", "Name", "Kind", "Link layer", "Rate", "State", "Bus ID", "Nearest GPU"):
        t.add_column(col)
    for i, nic in enumerate(topo.nics):
        nearest = f"GPU{nic.nearest_gpu} ({nic.level_to(nic.nearest_gpu)})" if known(nic.nearest_gpu) else "N/A"
        t.add_row(f"NIC{i}", nic.name, nic.kind, show(nic.link_layer), _rate(nic.rate_bytes_per_s), show(nic.state),
                  show(nic.pci_bus_id), nearest)
    return t


def ceilings_table(topo: Topology) -> Table:
    t = Table(title="Ceilings (spec, per direction)", title_justify="left")
    for col in ("Path", "Kind", "Line rate", "Data rate", "Basis"):
        t.add_column(col)
    for c in topo.ceilings:
        t.add_row(c.name, c.kind, _rate(c.bytes_per_s), _rate(c.data_bytes_per_s),
                  c.basis or (c.bytes_per_s.reason if isinstance(c.bytes_per_s, Unknown) else ""))
    return t


def topology_view(topo: Topology) -> Group:
    head = Text.assemble(
        ("linkroof probe", "bold"), f"  {clean(topo.host.hostname)}  ",
        f"driver {clean(show(topo.driver_version))}  CUDA {clean(show(topo.cuda_driver_version))}  ",
        (f"source: {clean(topo.source)}", "dim"))
    parts: list[Any] = [head, gpu_table(topo), links_table(topo),
                        Text("Connections (like nvidia-smi topo -m)", style="italic"), Text(topo_matrix(topo)),
                        Text(""), Text("P2P read / write / atomics (NVML)", style="italic"), Text(p2p_matrix(topo))]
    if topo.nics:
        parts.append(nics_table(topo))
    parts.append(ceilings_table(topo))
    if topo.notes:
        parts.append(Text("Notes:\n" + "\n".join(f"  - {clean(n)}" for n in topo.notes), style="yellow"))
    return Group(*parts)


def profiles_table(rows: list[dict[str, Any]]) -> Table:
    t = Table(title="Profiles in the store", title_justify="left")
    for col in ("ID", "Kind", "Created", "Host", "GPUs", "Measurements", "Label"):
        t.add_column(col, no_wrap=col in IDENTIFYING, min_width=IDENTIFYING.get(col), overflow="fold")
    for r in rows:
        label = Text(clean(r["label"]))
        if r.get("damaged"):
            label = Text.assemble(("DAMAGED ", "bold red"), (clean(r["damaged"])[:120], "red"), " ", label)
        t.add_row(Text(clean(r["id"])), r.get("kind", ""), *(Text(clean(r[k])) for k in ("created_at", "hostname", "gpus")),
                  str(r["measurements"]), label)
    return t


def profile_summary(profile: Profile) -> Group:
    t = Table(title="Measurements", title_justify="left")
    for col in ("Benchmark", "Mechanism", "Pattern", "GPUs", "Size", "Bandwidth", "Verified", "Warnings"):
        t.add_column(col)
    for m in profile.measurements:
        t.add_row(m.spec.name, m.spec.mechanism, m.spec.pattern, ",".join(map(str, m.spec.devices)),
                  format_size(m.spec.message_bytes), format_rate(m.bandwidth_bytes_per_s),
                  m.verified_text, "; ".join(m.all_warnings))
    parts: list[Any] = [Text(f"Profile {clean(profile.id)}  {clean(profile.created_at)}  hosts: "
                             f"{clean(', '.join(profile.hostnames))}  label: {clean(profile.label) or '-'}")]
    parts += [topology_view(topo) for topo in profile.topologies]
    parts.append(t if profile.measurements else Text("No measurements in this profile yet (linkroof bench adds them)."))
    if profile.skipped:
        parts.append(Text("Skipped:\n" + "\n".join(f"  - {clean(s.name)}: {clean(s.reason)}" for s in profile.skipped)))
    return Group(*parts)


def plan_table(plan: Any) -> Table:
    t = Table(title=f"Plan: suite {plan.suite}, GPUs {', '.join(map(str, plan.gpus))}, {len(plan.items)} benchmarks",
              title_justify="left")
    for col in ("Family", "Benchmark"):
        t.add_column(col)
    for item in plan.items:
        t.add_row(item.family, item.title)
    for s in plan.skipped:
        t.add_row("skipped", f"{s.name}: {s.reason}")
    return t


def _figure(m: Any) -> str:
    if m.flops_per_rep:
        return format_flops(m.flop_rate)
    if not m.bytes_per_rep:
        return format_time(m.median_s)
    if m.busbw_factor is not None:
        if m.bytes_per_rep < 64 * 1024:  # latency-bound: the time says more than the rate
            return f"{format_time(m.median_s)} (bus {format_rate(m.busbw_bytes_per_s)})"
        return f"{format_rate(m.bandwidth_bytes_per_s)} (bus {format_rate(m.busbw_bytes_per_s)})"
    return format_rate(m.bandwidth_bytes_per_s)


def _nccl_group(m: Any) -> tuple[Any, ...]:
    """One collective's sweep: the spec's key but for its size (and a gate fallback)."""
    return m.spec.key(ignore=("message_bytes", "repetitions")) + (m.rank, m.source)


def bench_summary(profile: Profile) -> Group:
    """The figures of a bench run: one row per measurement (sweeps summarised)."""
    t = Table(title=f"linkroof bench  profile {profile.id}", title_justify="left")
    for col in ("Benchmark", "Mech.", "Pattern", "GPUs", "Size", "Params", "Median", "CV / source", "Verified"):
        t.add_column(col)
    sweeps = 0
    # NCCL sweeps: the smallest and the largest size of each collective get a row
    ends: dict[tuple[Any, ...], tuple[int, int]] = {}
    for m in profile.measurements:
        if m.spec.mechanism == "nccl":
            lo, hi = ends.get(_nccl_group(m), (m.spec.message_bytes, m.spec.message_bytes))
            ends[_nccl_group(m)] = (min(lo, m.spec.message_bytes), max(hi, m.spec.message_bytes))
    nccl_points = 0
    for m in profile.measurements:
        if m.spec.params.get("sweep"):
            sweeps += 1
            continue
        if m.spec.mechanism == "nccl" and m.spec.message_bytes not in ends[_nccl_group(m)]:
            nccl_points += 1
            continue
        params = ", ".join(f"{k}={v}" for k, v in m.spec.params.items()
                           if k in ("blocks", "unroll", "loops", "chunk", "stages", "dtype", "host_memory", "mode",
                                    "peer_access", "sms_sampled", "timing")
                           or (k == "in_place" and v))
        t.add_row(m.spec.name, m.spec.mechanism, m.spec.pattern, ",".join(map(str, m.spec.devices)),
                  format_size(m.spec.message_bytes) if m.bytes_per_rep else "", params, _figure(m),
                  f"{m.cv:.1%}" if m.times_s else m.source, m.verified_text)
    parts: list[Any] = [t]
    if sweeps:
        parts.append(Text(f"{sweeps} message-size sweep points (see --json or benchmarks/summarize.py)."))
    if nccl_points:
        parts.append(Text(f"{nccl_points} collective figures at other sizes (see --json, `linkroof advise "
                          "--pattern all_reduce`, or the dashboard's Collectives page)."))
    if profile.skipped:
        parts.append(Text("Skipped:\n" + "\n".join(f"  - {clean(s.name)}: {clean(s.reason)}" for s in profile.skipped),
                          style="yellow"))
    unverified = [m for m in profile.measurements if not m.trusted]
    if unverified:
        parts.append(Text(f"{len(unverified)} figures UNVERIFIED: " + "; ".join(
            clean(f"{m.spec.name} ({m.verification})") for m in unverified[:5]), style="bold red"))
    for note in profile.notes:  # a run's own account says when it ran: a stored profile's is not a run just made
        when = f"recorded {profile.created_at[:16].replace('T', ' ')}: " if note.startswith("suite ") else ""
        parts.append(Text(clean(when + note), style="dim"))
    return Group(*parts)


def roofs_table(model: Any, profile: Profile) -> Group:
    def value(r: Any) -> str:
        if r is None or not known(r.value):
            return "N/A"
        return format_flops(r.value) if r.unit == "FLOP/s" else format_rate(r.value)

    t = Table(title=f"Roofline ceilings: {model.gpu_name} (profile {profile.id})", title_justify="left",
              drop=("Flags", "Basis of the measured figure"))
    for col in ("Resource", "Spec", "Measured", "Mechanism", "Measured / spec", "Basis of the measured figure", "Flags"):
        # the key and the figures keep their text whole in a narrow terminal; the rest wraps, the details go first
        t.add_column(col, no_wrap=col in ("Resource", "Spec", "Measured", "Measured / spec"), overflow="fold")
    resources = list(dict.fromkeys(r.resource for r in model.roofs))
    for res in resources:
        spec = model.find(res, "spec")
        mechs = sorted({r.mechanism for r in model.roofs if r.resource == res and r.kind == "measured"}) or [None]
        for mech in mechs:
            meas = model.find(res, "measured", mech) if mech is not None else None
            ratio = (f"{meas.value / spec.value:.1%}" if meas is not None and spec is not None and known(spec.value)
                     and spec.value else "")
            t.add_row(res, value(spec) + (" (derived)" if spec is not None and spec.kind == "derived" else ""),
                      value(meas), mech or "", ratio, meas.basis if meas else "", "; ".join(meas.flags) if meas else "")
    r = Table(title="Ridge points (measured): FLOP per byte where compute meets bandwidth", title_justify="left")
    for col in ("Data type", "Against", "FLOP / byte"):
        r.add_column(col)
    for dt, res, v in model.ridge_points():
        r.add_row(dt, res, f"{v:,.1f}")
    return Group(t, r)


def placements_table(placements: list[Any]) -> Table:
    t = Table(title="Placement", title_justify="left",
              drop=("Terms",))  # the bounds are figures, the flags verdicts, Ceilings tells measured from spec: they stay
    for col in ("Workload", "Ceilings", "Measured", "Bandwidth-only bound", "Limiter", "Fraction of roofline",
                "Cost-model bound", "Fraction of cost bound", "Terms", "Flags"):
        t.add_column(col, no_wrap=col == "Ceilings", min_width=8 if col == "Ceilings" else None)
    for p in placements:
        cost = format_time(p.cost_bound_s) if p.cost_bound_s else "-"
        frac = f"{p.fraction_of_cost_bound:.1%}" if p.cost_bound_s else "-"
        terms = p.cost_terms_s or p.terms_s
        measured = format_time(p.measured_time_s) + (f" ({p.clock.state})" if p.clock is not None else "")
        t.add_row(Text(clean(p.workload.name)), p.ceilings_kind, measured,
                  format_time(p.bound_time_s) if p.bound_time_s else "-", p.limiter,
                  f"{p.fraction_of_roofline:.1%}" if p.bound_time_s else "-", cost, frac,
                  ", ".join(f"{k} {format_time(v)}" for k, v in terms.items()), Text("; ".join(p.verdicts)))
    return t


def decomposition_view(placements: list[Any]) -> Group:
    """Where each placed measured time went: the cost model's terms, additive, and how
    each was computed."""
    from .roofline.cost import NCCL_MEASURED

    parts: list[Any] = []
    said: set[str] = set()
    for p in placements:
        if p.decomposition_s:
            shown = [f"{k} {format_time(v)}" for k, v in p.decomposition_s.items() if v or k == "unexplained"]
            beside = [k for k, v in p.decomposition_s.items() if not v and k != "unexplained"]
            parts.append(Text(f"{clean(p.workload.name)}: of {format_time(p.measured_time_s)}: " + ", ".join(shown)
                              + (f" ({', '.join(beside)} ran beside)" if beside else ""), style="bold"))
            nccl = p.decomposition_s.get(NCCL_MEASURED)
            if nccl and p.cost_bound_s:  # two figures of one collective: each says what it is
                parts.append(Text(f"  bound: {p.limiter} {format_time(p.cost_bound_s)} (the model's, from the "
                                  f"ceilings) · measured NCCL: {format_time(nccl)} (the profile's own time at this "
                                  "size)"))
        for n in p.cost_notes:
            if p.decomposition_s or n not in said:  # a profile's missing term: said once, not per placement
                parts.append(Text(f"  {clean(n)}", style="dim"))
                said.add(n)
    return Group(*parts)


def advice_view(advice: Any) -> Group:
    from .roofline.summaries import SATURATION_SHARE

    blocks = f"Blocks for {SATURATION_SHARE:.0%}"  # the share the block counts are found at (summaries)
    # the key and the figures at this size stay whole; the details are left out in this
    # order where the terminal is too narrow for them
    t = Table(title=f"Moving {format_size(advice.size)} ({advice.pattern})", title_justify="left",
              drop=(blocks, "50% of peak at", "Link", "90% of peak at", "Peak"))
    for col in ("Mechanism", "Link", "At this size", "Time per message", "Peak", "50% of peak at", "90% of peak at",
                blocks):
        t.add_column(col, no_wrap=col in ("Mechanism", "At this size", "Time per message"))
    for m in sorted(advice.mechanisms, key=lambda m: m.time_s):
        bw = format_value(m.bandwidth_bytes_per_s, "B/s") + (" (bus)" if m.dtype else "")
        t.add_row(m.mechanism, m.link, bw, format_time(m.time_s),
                  format_rate(m.peak_bytes_per_s),
                  format_size(m.size_50) if m.size_50 else "-", format_size(m.size_90) if m.size_90 else "-",
                  str(m.blocks_needed) if m.blocks_needed else "-")
    parts: list[Any] = [t]
    if advice.fastest is not None:
        margin = f", {advice.margin:.2f}x the next" if advice.margin else ""
        parts.append(Text(f"Fastest: {clean(advice.fastest.mechanism)}{margin}.", style="bold"))
    if any(m.dtype for m in advice.mechanisms):
        parts.append(Text("A collective's time is its measured time at this size (nccl-tests' size convention), "
                          "interpolated between measured sizes where needed; its bandwidth is the bus bandwidth of "
                          "that time.", style="dim"))
    parts += [Text(clean(n), style="yellow") for n in advice.notes]
    return Group(*parts)


def gate_table(report: Any, profile: Profile) -> Group:
    """`linkroof check`: every check, failures first."""
    t = Table(title=f"linkroof check  profile {profile.id}", title_justify="left")
    for col in ("Check", "Kind", "Expected", "Got", "Ratio", "Verdict"):
        t.add_column(col)
    for c in sorted(report.checks, key=lambda c: (c.passed, c.kind, c.name)):
        t.add_row(c.name, c.kind, c.expected, c.got, f"{c.ratio:.3f}" if c.ratio is not None else "",
                  Text("ok", style="green") if c.passed else Text(clean(f"FAIL {c.detail}".strip()), style="bold red"))
    verdict = (Text(f"{len(report.checks) - len(report.failed)} of {len(report.checks)} checks passed"
                    + (f"; {report.not_compared} figures had no counterpart in the baseline" if report.not_compared
                       else ""), style="bold green" if report.passed else "bold red"))
    parts: list[Any] = [t, verdict]
    if report.not_checked:
        parts.append(Text("Not checked (unknown on one side, never taken as 0):\n"
                          + "\n".join(f"  - {clean(n)}" for n in report.not_checked), style="yellow"))
    return Group(*parts)


def diff_table(result: Any, a: Profile, b: Profile) -> Group:
    """`linkroof runs diff`: what changed beyond the noise, out of how many compared."""
    verdict = Text(clean(result.verdict(a.id, b.id)) + ".", style="yellow" if not result.compared else "")
    if not result.changed:
        return Group(verdict)
    t = Table(title=f"{clean(a.id)} -> {clean(b.id)}", title_justify="left")
    t.add_column("Figure", overflow="fold")
    for col in ("Before", "After", "Change"):
        t.add_column(col)
    for r in result.changed:
        t.add_row(r["figure"], r["before"], r["after"], f"{r['change_percent']:+.2f} %")
    return Group(t, verdict)


def collectives_tables(tables: dict[str, list[dict[str, Any]]]) -> Group:
    """nccl-tests' layout: size count type redop root, then time algbw busbw #wrong out
    of place and in place (and the time with the host's launch where it was taken)."""
    parts: list[Any] = []
    for title, rows in tables.items():
        t = Table(title=title, title_justify="left")
        cols = [("size", "size (B)"), ("count", "count"), ("type", "type"), ("redop", "redop"), ("root", "root")]
        for place in ("out", "in"):
            if any(f"{place}_time_us" in r for r in rows):
                label = "out-of-place" if place == "out" else "in-place"
                cols += [(f"{place}_time_us", f"{label} time (us)"), (f"{place}_algbw_GBps", "algbw (GB/s)"),
                         (f"{place}_busbw_GBps", "busbw (GB/s)"), (f"{place}_wrong", "#wrong")]
            if any(f"{place}_launch_time_us" in r for r in rows):
                label = "out-of-place" if place == "out" else "in-place"
                cols.append((f"{place}_launch_time_us", f"{label} time with host launch (us)"))
        for _, header in cols:
            t.add_column(header, justify="right")
        for r in rows:
            t.add_row(*["" if r.get(k) is None else str(r.get(k)) for k, _ in cols])
        parts.append(t)
    return Group(*parts)


def spread_table(rows: list[dict[str, Any]]) -> Group:
    """`linkroof runs spread`: run-to-run variation, the most variable first."""
    t = Table(title="The same figures over several runs", title_justify="left")
    for col in ("Figure", "Runs", "Median", "IQR", "Spread (max - min)"):
        t.add_column(col)
    for r in sorted(rows, key=lambda r: -r["spread_percent"]):
        t.add_row(r["figure"], str(r["runs"]), r["median"], f"{r['iqr_percent']:.2f} %", f"{r['spread_percent']:.2f} %")
    worst = max(r["spread_percent"] for r in rows)
    return Group(t, Text(f"{len(rows)} figures; largest spread {worst:.2f} %"))


def fits_table(fits: list[Any]) -> Table:
    """Latency + bandwidth per mechanism and collective, one row per segment."""
    t = Table(title="Fits of time = a + size / b to the measured points, each with its worst error. a and b are curve "
                    "parameters, not link properties: the link's latency and bandwidth are the measured figures, and "
                    "the cost model bounds with their lower envelope, never with a fit", title_justify="left")
    for col in ("Mechanism / collective", "Sizes", "a (intercept)", "b (size per unit time)", "Points", "Worst error"):
        t.add_column(col)
    for f in fits:
        for i, seg in enumerate(f.segments):
            t.add_row(f.name if i == 0 else "", f"{format_size(seg.lo)} - {format_size(seg.hi)}", format_time(seg.latency_s),
                      format_rate(seg.bandwidth_bytes_per_s) if seg.bandwidth_bytes_per_s != float("inf") else "-",
                      str(len(f.points)) if i == 0 else "", f"{f.worst_error:.1%}" if i == 0 else "")
    return t


def terms_table(rows: list[dict[str, Any]]) -> Table:
    """The cost model's launch and sync terms of this machine (roofline.cost.machine_terms)."""
    t = Table(title="Cost-model terms of this machine (launch and sync, as measured)", title_justify="left")
    for col in ("Term", "Kind", "Time", "What"):
        t.add_column(col)
    for r in rows:
        t.add_row(r["term"], r["kind"], format_time(r["seconds"]), r["what"])
    return t


def counted_bytes(c: dict[str, float]) -> str:
    """A kernel's DRAM bytes as ncu counted them: total (read + written)."""
    if not c:
        return ""
    r, w = c.get("dram_read_bytes", 0.0), c.get("dram_write_bytes", 0.0)
    return f"{(r + w) / 1e6:,.1f} MB ({r / 1e6:,.1f} read, {w / 1e6:,.1f} written)"


def counted_flops(c: dict[str, float]) -> str:
    """A kernel's FLOPs per data type as ncu counted them ('' where nothing was counted)."""
    from .roofline.timeline import flops_text

    return flops_text(c) if c else ""


def kernels_table(t: Any, title: str = "Timeline") -> Group:
    """A call's GPU timeline: its kernels by name (launches and time per call, class and
    how it was known), and the call's busy, idle and communication time, measured."""
    tab = Table(title=f"{title} per call ({t.source}, {t.calls} calls recorded): {t.kernels_per_call:g} kernels, "
                      f"busy {format_time(t.busy_s)}, idle {format_time(t.idle_s)} of {format_time(t.span_s)}",
                title_justify="left")
    counted = any(k.counters for k in t.kernels)
    cols = ["Kernel", "Class", "Launches / call", "Time / call", "Median launch", "Grid x block", "Class from"]
    if counted:
        cols[6:6] = ["DRAM / call (ncu)", "FLOPs / call (ncu)"]
        cols.append("Why (ncu)")
    for col in cols:
        tab.add_column(col, overflow="fold")
    for k in t.kernels[:30]:
        grid = "x".join(map(str, k.grid)) + " x " + "x".join(map(str, k.block)) if k.kind == "kernel" else ""
        row = [k.name[:90] + ("" if not k.collective else f" ({k.collective})"), k.kernel_class,
               f"{k.launches_per_call:g}", format_time(k.time_per_call_s), format_time(k.median_s), grid,
               k.class_basis]
        if counted:
            row[6:6] = [counted_bytes(k.counters), counted_flops(k.counters)]
            row.append(k.why)
        tab.add_row(*row)
    parts: list[Any] = [tab]
    if len(t.kernels) > 30:
        parts.append(Text(f"... and {len(t.kernels) - 30} more kernel names (--json has them all)"))
    if t.communication_s:
        parts.append(Text(f"communication {format_time(t.communication_s)} a call: "
                          f"{format_time(t.overlapped_communication_s)} beside other work, "
                          f"{format_time(t.exposed_communication_s)} exposed (measured from the intervals)"))
    parts += [Text(clean(n), style="dim") for n in t.notes]
    return Group(*parts)


def _opt(x: Any, fmt: Any) -> str:
    return "unknown" if x is None else fmt(x)


def trace_view(report: Any) -> Group:
    """`linkroof trace`: each collective call with what this machine does at its size,
    each step's GPU time by class with communication overlapped and exposed, and the
    ranks matched (several files of one job)."""
    tab = Table(title="Collectives (sizes in nccl-tests' convention)", title_justify="left",
                drop=("Facts from", "algbw", "Bound", "of bound", "Exposed", "Type", "Group (from)", "NCCL here"))
    for col in ("Rank", "Collective", "Type", "Size", "Group (from)", "Time", "algbw", "busbw", "NCCL here",
                "of NCCL", "Bound", "of bound", "Exposed", "Facts from"):
        tab.add_column(col, overflow="fold", no_wrap=col in ("Rank", "Collective", "Size", "Time", "busbw",
                                                              "of NCCL"))
    for r in report.rows[:200]:
        c = r.call
        tab.add_row(_opt(c.rank, str), (c.collective or "unknown") + ("" if c.mechanism == "NCCL" else
                                                                      f" ({c.mechanism.split(':')[0]})"),
                    c.dtype or "unknown",
                    _opt(c.size_bytes, format_size), f"{_opt(c.group_size, str)} ({c.group_from})",
                    format_time(c.duration_s), _opt(c.algbw, format_rate), _opt(c.busbw, format_rate),
                    format_time(r.nccl_s) if r.nccl_s else clean(r.nccl_how)[:60],
                    _opt(r.fraction_of_nccl, lambda f: f"{f:.0%}"), _opt(r.bound_s, format_time),
                    _opt(r.fraction_of_bound, lambda f: f"{f:.0%}"), format_time(r.exposed_s), clean(c.source))
    parts: list[Any] = [tab]
    if len(report.rows) > 200:
        parts.append(Text(f"... and {len(report.rows) - 200} more calls (--json or --csv has them all)"))
    notes = sorted({n for r in report.rows for n in r.call.notes})
    parts += [Text(clean(n), style="dim") for n in notes]
    st = Table(title="Steps per rank (measured from the trace's intervals; savings inferred)", title_justify="left")
    for col in ("Rank", "Step", "Span", "Busy", "Idle", "Compute", "Memory", "Communication", "Overlapped",
                "Exposed", "Saved at NCCL's speed", "Saved at the bound"):
        st.add_column(col, overflow="fold")
    for s, (a, b) in zip(report.steps, report.savings):
        st.add_row(_opt(s.rank, str), clean(s.step), format_time(s.span_s), format_time(s.busy_s),
                   format_time(s.idle_s), format_time(s.class_s.get("compute", 0.0)),
                   format_time(s.class_s.get("memory", 0.0)), format_time(s.communication_s),
                   format_time(s.overlapped_s), format_time(s.exposed_s), format_time(a), format_time(b))
    parts.append(st)
    parts.append(Text("Saved: per collective, its time above the target but no more than its exposed part "
                      "(inferred: a faster collective shortens the step only where nothing ran beside it)",
                      style="dim"))
    if report.matched:
        mt = Table(title="Across ranks (kernel starts on one host's clock)", title_justify="left")
        for col in ("Process group", "Call", "Collective", "Size", "Ranks", "Arrival skew",
                    "Transfer (from the last arrival)", "busbw of the transfer", "Last to arrive", "Matched by"):
            mt.add_column(col, overflow="fold")
        for m in report.matched[:200]:
            mt.add_row(clean(str(m.key[1])) or "-", str(m.key[-1]), m.collective or "unknown",
                       _opt(m.size_bytes, format_size), ",".join(map(str, m.ranks)), format_time(m.skew_s),
                       format_time(m.transfer_s), _opt(m.busbw, format_rate), m.last_words,
                       "Seq" if m.key[0] == "seq" else "aligned in time")
        parts.append(mt)
        if report.match is not None and not report.match.unmatched_calls:
            parts.append(Text(clean(report.match.line()), style="dim"))
    parts += [Text(clean(w), style="yellow") for w in report.warnings]
    return Group(*parts)


def score_table(rows: list[dict]) -> Table:
    """`linkroof score`: a row per candidate."""
    tab = Table(title="Candidates", title_justify="left", drop=("Protocol", "Worst abs / rel error"))
    for col in ("Candidate", "Of roofline", "Correct", "Time", "Speedup", "Worst abs / rel error", "Protocol",
                "Failure or suspicion"):
        tab.add_column(col, overflow="fold", no_wrap=col in ("Of roofline", "Correct", "Time", "Speedup"))
    for r in rows:
        trials = r.get("trials") or []
        err = max((t.get("max_abs_err") or 0.0 for t in trials), default=None)
        rel = max((t.get("max_rel_err") or 0.0 for t in trials), default=None)
        f, sus = r.get("failure"), r.get("suspect")
        why = f"{f['kind']}: {f['message'][:120]}" if f else \
            f"suspect ({', '.join(sus['likely_causes'])}), not ranked" if sus else ""
        tab.add_row(clean(r["candidate"]),
                    f"{r['fraction_of_roofline']:.0%}" if r.get("fraction_of_roofline") is not None else "-",
                    "yes" if r.get("correct") else "no", format_time(r["time_s"]) if r.get("time_s") else "-",
                    f"{r['speedup']:.2f}x" if r.get("speedup") else "-",
                    "-" if err is None else f"{err:.3g} / {rel:.3g}", r["protocol"], clean(why))
    return tab


def score_view(rows: list[dict]) -> Group:
    """`linkroof score` without --json: the table, then each candidate's feedback (why it
    is slow, from what was measured), as the JSON rows carry it."""
    said = [Text(f"{clean(r['candidate'])}: {clean(r['feedback'])}") for r in rows if r.get("feedback")]
    return Group(score_table(rows), *([Text("Feedback", style="bold")] + said if said else []))


def telemetry_view(report: Any) -> Group:
    """`linkroof telemetry`: each collective NCCL's telemetry recorded, against this
    machine; the calls' skews across ranks; per rank and node, who was last."""
    tab = Table(title="Collectives from NCCL's telemetry (sizes in nccl-tests' convention)", title_justify="left")
    for col in ("Source", "Rank", "Comm", "Seq", "Collective", "Size", "Ranks", "Time", "busbw", "Recorded busbw",
                "NCCL here", "of NCCL", "Bound", "of bound"):
        tab.add_column(col, overflow="fold")
    for r in report.rows[:200]:
        c = r.call
        time = format_time(c.time_s) if c.time_s else f"not timed ({c.state})"
        if c.stats:
            time += f" (p50; p99 {format_time(c.stats['p99_us'] * 1e-6)})"
        tab.add_row(clean(c.source), _opt(c.rank, str), clean(c.comm)[:18], _opt(c.seq, str),
                    c.collective or "unknown",
                    _opt(c.size_bytes, format_size) if c.size_bytes or not c.size_range else
                    f"{format_size(c.size_range[0])}-{format_size(c.size_range[1])} (bucket)",
                    _opt(c.group_size, str), time,
                    _opt(c.busbw, format_rate), _opt(c.recorded_busbw, format_rate),
                    format_time(r.nccl_s) if r.nccl_s else clean(r.nccl_how)[:60],
                    _opt(r.fraction_of_nccl, lambda f: f"{f:.0%}"), _opt(r.bound_s, format_time),
                    _opt(r.fraction_of_bound, lambda f: f"{f:.0%}"))
    parts: list[Any] = [tab]
    if len(report.rows) > 200:
        parts.append(Text(f"... and {len(report.rows) - 200} more calls (--json or --csv has them all)"))
    if report.skews:
        sk = Table(title="Across ranks (one communicator, one sequence number)", title_justify="left")
        for col in ("Comm", "Seq", "Collective", "Size", "Ranks", "Skew", "Last", "How"):
            sk.add_column(col, overflow="fold")
        worst = sorted(report.skews, key=lambda s: -s.skew_s)[:20]
        for s in worst:
            sk.add_row(clean(s.comm)[:18], str(s.seq), s.collective or "unknown", _opt(s.size_bytes, format_size),
                       ",".join(map(str, s.ranks)), format_time(s.skew_s), _opt(s.last_rank, str), clean(s.how))
        parts.append(sk)
        if len(report.skews) > 20:
            parts.append(Text(f"the 20 largest of {len(report.skews)} skews (--json has them all)", style="dim"))
    if report.per_rank:
        pr = Table(title="Per rank: how often the others waited for it", title_justify="left")
        for col in ("Rank", "Host", "Calls", "Median time", "Times last", "Mean lateness", "How"):
            pr.add_column(col, overflow="fold")
        for r in report.per_rank:
            pr.add_row(_opt(r.rank, str), clean(r.host) or "-", str(r.calls), _opt(r.median_s, format_time),
                       str(r.times_last), format_time(r.mean_lateness_s), clean(r.how))
        parts.append(pr)
    if len(report.per_node) > 1:
        pn = Table(title="Per node", title_justify="left")
        for col in ("Host", "Ranks", "Times last", "Median time", "Worst rank"):
            pn.add_column(col, overflow="fold")
        for n in report.per_node:
            pn.add_row(clean(n["host"]), ",".join(map(str, n["ranks"])), str(n["times_last"]),
                       _opt(n["median_s"], format_time), _opt(n["worst_rank"], str))
        parts.append(pn)
    parts += [Text(clean(w), style="yellow") for w in report.warnings]
    return Group(*parts)


def summary_screen(profile: Profile) -> Group:
    """What `linkroof run` shows before the dashboard's URL: the machine and its headline
    figures in a screen (the brief `export` writes), not the full tables."""
    from .roofline.export import brief, facts

    lines = [x for x in brief(profile, facts(profile)).splitlines() if not x.startswith("(more")]
    body = first_screen_lines(lines)
    return Group(Text(clean(f"linkroof profile {profile.id}"), style="bold"), *(Text(clean(x)) for x in body))


def first_screen_lines(lines: list[str], per_heading: int = 2, most: int = 18) -> list[str]:
    """The brief's lines for one screen: each heading (a line whose figures follow,
    indented) with its first `per_heading` lines and a count of the rest, never a
    heading with nothing under it (issue 45: 'NCCL busbw' and 'Copy bandwidth' stood
    empty); at most `most` lines."""
    out: list[str] = []
    i = 0
    while i < len(lines) and len(out) < most:
        x = lines[i]
        sub = []
        j = i + 1
        while j < len(lines) and lines[j].startswith("  "):
            sub.append(lines[j])
            j += 1
        if sub:
            out += [x] + sub[:per_heading] + ([f"  ... {len(sub) - per_heading} more (linkroof export)"]
                                              if len(sub) > per_heading else [])
        elif not x.startswith("  ") and not x.rstrip().endswith(":"):  # a heading with nothing under it: left out
            out.append(x)
        i = j
    return out[:most]
