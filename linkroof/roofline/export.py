"""`linkroof export`: the measured machine in the forms kernel-generation loops and other
tools read, each figure with its provenance (measured, spec sheet, or NVML's answer) and,
when measured, the clock state it was measured in.

Formats, each read from its tool's source:
- `brief`: plain text under 2 KB, to paste into a prompt.
- `pkb`: a `[hardware_profiles.KEY]` table for ParallelKernelBench's kernelgen/prompts.toml
  (profile_display, gpu_name, gpu_architecture, gpu_specs_bullets,
  gpu_definitions_bullets, gpu_best_practices_bullets: what generate_kernel.py's
  _hardware_context_body formats into templates.hardware).
- `kernelbench`: a gpu_specs.py module (GPU_SPEC_INFO[KEY] a dict of strings, with
  "GPU Architecture"; GPU_DEFINITIONS; GPU_BEST_PRACTICES), what KernelBench's
  prompt_constructor_toml._gpu_context_from_gpu_specs reads with runpy: dense figures,
  measured, and the NVLink and NCCL figures its own entries lack.
- `tracelens`: an arch JSON (name, mem_bw_gbps, memory_gb, max_achievable_tflops with
  matrix_* / vector_* keys; TraceLens's utils/arch_utils.load_arch), measured values
  only in max_achievable_tflops (what "max achievable" means there), with link fields
  and every figure's provenance added under keys TraceLens does not read."""

from __future__ import annotations

import ast
import json
import math
import os
import pprint
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import LinkroofError
from ..files import path_inside, plain, slug, write_text
from ..schema import ClockState, Measurement, Profile, known
from ..units import format_bytes, format_rate, format_size, format_time
from .model import LINK_NAMES, MachineModel, roof_sources

SIZES = (4096, 65536, 1 << 20, 16 << 20, 256 << 20)  # message sizes the curves are given at
BRIEF_LIMIT = 2048


class ExportError(LinkroofError):
    """A generated file would not parse back as exactly the data it was made from."""


@dataclass(frozen=True)
class Fact:
    topic: str  # gpu | hbm | compute | link | curve | nccl | launch | sync | saturation
    name: str
    value: float
    unit: str  # B/s, FLOP/s, s, B, blocks, count
    provenance: str  # measured | spec | nvml
    clock: str = ""  # measured figures: the clock state they were taken in
    basis: str = ""
    size: int | None = None  # the message size it is at, where it depends on one

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def clock_text(c: ClockState | None) -> str:
    if c is None or c.state == "unknown":
        return "clock not sampled"
    mhz = f" at {c.sm_mhz_median:.0f} MHz" if c.sm_mhz_median else ""
    return f"{c.state} clock{mhz}"


def _m_clock(m: Measurement | None) -> str:
    return clock_text(m.clock if m is not None else None)


def facts(profile: Profile) -> list[Fact]:
    """Every figure the formats are written from."""
    from .cost import LAUNCH_PATHS, SYNC_KINDS, _figures, machine_terms
    from .summaries import saturation

    topo = profile.topology
    model = MachineModel.from_profile(profile)
    src = roof_sources(profile)
    out: list[Fact] = []
    g = topo.gpus[0] if topo.gpus else None
    if g is not None:
        n = sum(len(t.gpus) for t in profile.topologies)
        out += [Fact("gpu", "GPU", n, "count", "nvml", basis=f"{g.name}, {g.architecture}, compute capability "
                     f"{g.compute_capability}, {len(profile.topologies)} host(s)"),
                Fact("gpu", "SMs", float(g.sm_count) if known(g.sm_count) else float("nan"), "count", "nvml"),
                Fact("gpu", "memory", float(g.memory_total_bytes) if known(g.memory_total_bytes) else float("nan"),
                     "B", "nvml"),
                Fact("gpu", "max SM clock", float(g.max_sm_clock_mhz) * 1e6 if known(g.max_sm_clock_mhz)
                     else float("nan"), "Hz", "nvml")]
    for r in model.roofs:
        if not known(r.value):
            continue
        if r.resource == "hbm":
            topic, name = "hbm", "HBM bandwidth" + (f" ({r.mechanism})" if r.mechanism else "")
        elif r.resource.startswith("compute:"):
            dt = r.resource.split(":", 1)[1]
            topic, name = "compute", f"{dt} dense" + (f" ({r.mechanism})" if r.mechanism else "")
        elif r.resource.startswith("link:"):
            link = r.resource.split(":", 1)[1]
            topic, name = "link", f"{LINK_NAMES.get(link, link)} one direction" + \
                (f" ({r.mechanism})" if r.mechanism else "")
        else:
            continue
        m = src.get((r.resource, r.mechanism)) if r.kind == "measured" else None
        out.append(Fact(topic, name, float(r.value), r.unit, "measured" if r.kind == "measured" else "spec",
                        _m_clock(m) if r.kind == "measured" else "", r.basis,
                        m.spec.message_bytes if m is not None and m.spec.message_bytes else None))
    for c in model.curves:
        topic = "nccl" if c.mechanism == "nccl" else "curve"
        what = f"{c.pattern} {c.label}" if topic == "nccl" else f"{LINK_NAMES.get(c.link, c.link)} {c.pattern} {c.label}"
        for size in SIZES:
            if c.points and min(s for s, _ in c.points) <= size <= max(s for s, _ in c.points):
                out.append(Fact(topic, what, c.at(size), "B/s", "measured", basis="busbw" if topic == "nccl" else
                                "bandwidth", size=size))
        half = c.reaches(0.5)
        if half:
            out.append(Fact(topic, f"{what}: half of its peak from", float(half), "B", "measured"))
    for row in machine_terms(profile):
        table = LAUNCH_PATHS if row["term"] == "launch" else SYNC_KINDS
        figs = _figures(profile, table[row["kind"]])
        m = min(figs, key=lambda x: x.median_s) if figs else None
        out.append(Fact(str(row["term"]), str(row["kind"]), float(row["seconds"]), "s", "measured", _m_clock(m),
                        str(row["what"])))
    for s in saturation(profile):
        out.append(Fact("saturation", f"{s['mechanism']} {s['pattern']}: blocks for {s['share']:.0%} of its peak",
                        float(s["blocks_needed"]), "blocks", "measured", basis=f"peak {format_rate(s['peak'])}"))
    return out


def default_key(profile: Profile) -> str:
    g = profile.topology.gpus[0] if profile.topology.gpus else None
    name = str(g.name).replace("NVIDIA ", "").replace(" ", "-") if g is not None else "GPU"
    n = sum(len(t.gpus) for t in profile.topologies)
    return f"{name}x{n}-linkroof"


def _v(f: Fact) -> str:
    if f.unit == "B/s":
        return format_rate(f.value)
    if f.unit == "FLOP/s":
        return f"{f.value / 1e12:.0f} TFLOP/s"
    if f.unit == "s":
        return format_time(f.value)
    if f.unit == "B":
        return format_size(int(f.value))
    return f"{f.value:g}"


# the dense data types a brief lists, in this order: fp4 (B200, B300) was left out of every
# export until 2026-12-05, so B300's one table figure was missing
COMPUTE_TYPES = ("fp4", "fp8", "bf16", "fp16", "tf32", "fp32", "fp64", "int8")


def _ops(dt: str, f: Fact) -> str:
    """A compute figure: int8's operations are no floating-point ones (TOPS, as KernelBench)."""
    return f"{f.value / 1e12:.0f} TOPS" if dt == "int8" and f.unit == "FLOP/s" else _v(f)


def _tag(f: Fact) -> str:
    if f.provenance == "measured":
        return f"measured, {f.clock}" if f.clock else "measured"
    return {"spec": "spec sheet", "nvml": "NVML"}.get(f.provenance, f.provenance)


def _pick(fs: Sequence[Fact], topic: str, prov: str | None = None) -> list[Fact]:
    return [f for f in fs if f.topic == topic and (prov is None or f.provenance == prov)]


def _sized(fs: Sequence[Fact], topic: str) -> dict[str, list[Fact]]:
    """A topic's figures at message sizes, by curve name."""
    out: dict[str, list[Fact]] = {}
    for f in _pick(fs, topic):
        if f.size is not None:
            out.setdefault(f.name, []).append(f)
    return out


def _best(fs: Sequence[Fact]) -> Fact | None:
    return max(fs, key=lambda f: f.value) if fs else None


def spec_lines(profile: Profile, fs: Sequence[Fact], short: bool = False) -> list[str]:
    """The figures as lines, most important first: HBM, compute per data type, each
    link per mechanism and at message sizes, NCCL, launch and sync, saturation."""
    lines = []
    hbm_m, hbm_s = _pick(fs, "hbm", "measured"), _best(_pick(fs, "hbm", "spec"))
    if hbm_m:
        b = _best(hbm_m)
        lines.append(f"HBM: {_v(b)} {b.name.split('(')[-1].rstrip(')')} ({_tag(b)})"
                     + (f"; spec {_v(hbm_s)}" if hbm_s else ""))
    elif hbm_s:
        lines.append(f"HBM: {_v(hbm_s)} (spec sheet; not measured)")
    comp: dict[str, dict[str, Fact]] = {}
    for f in _pick(fs, "compute"):
        dt = f.name.split()[0]
        slot = comp.setdefault(dt, {})
        if f.value > getattr(slot.get(f.provenance), "value", 0.0):
            slot[f.provenance] = f
    parts = []
    for dt in COMPUTE_TYPES:
        if dt in comp:
            m, s = comp[dt].get("measured"), comp[dt].get("spec")
            if m:
                parts.append(f"{dt} {_ops(dt, m)} measured" + (f" (spec {_ops(dt, s)})" if s else ""))
            elif s and not short:
                parts.append(f"{dt} {_ops(dt, s)} spec")
    if parts:
        clock = next((comp[d]["measured"].clock for d in comp if "measured" in comp[d]), "")
        lines.append("Dense compute: " + "; ".join(parts) + (f" [{clock}]" if clock else ""))
    links = _pick(fs, "link")
    for link in sorted({f.name.split(" one direction")[0] for f in links}):
        mine = [f for f in links if f.name.startswith(link + " one direction")]
        spec = _best([f for f in mine if f.provenance == "spec"])
        meas = sorted((f for f in mine if f.provenance == "measured"), key=lambda f: -f.value)
        each = ", ".join(f"{f.name.split('(')[-1].rstrip(')')} {_v(f)}" for f in meas)
        nospec = "spec not known (an import carries no topology)" if not profile.topology.links_known else "no spec"
        lines.append(f"{link} per GPU, one direction: " + (f"spec {_v(spec)}" if spec else nospec) +
                     (f"; measured {each}" if each else "") + (f" [{meas[0].clock}]" if meas and meas[0].clock else ""))
    sat = _pick(fs, "saturation")
    if sat:
        lines.append("SM blocks to reach 90 % of a mechanism's peak: " +
                     ", ".join(f"{f.name.split(':')[0]} {f.value:g}" for f in sat))
    ng = _sized(fs, "nccl")
    if ng:
        ranks = len({d for m in profile.measurements if m.spec.mechanism == "nccl" for d in m.spec.devices}) or "?"
        lines.append(f"NCCL busbw, {ranks} ranks, GB/s at " + "/".join(format_size(s) for s in SIZES) + ":")
        for name, g in sorted(ng.items()):
            lines.append(f"  {name}: {_row(g)}")
    launch, sync = _pick(fs, "launch"), _pick(fs, "sync")
    if launch or sync:  # "Launch: ; sync: ..." where no launch was measured, until 2026-12-05
        lines.append("Launch: " + "; ".join(
            ([", ".join(f"{f.name} {_v(f)}" for f in launch)] if launch else []) +
            (["sync: " + ", ".join(f"{f.name} {_v(f)}" for f in sync)] if sync else [])))
    curves = _pick(fs, "curve")
    groups = _sized(fs, "curve")
    if groups:
        lines.append("Copy bandwidth, GB/s at " + "/".join(format_size(s) for s in SIZES) + " messages:")
        for name, g in sorted(groups.items()):
            if short and ("ungated" in name or "=" in name):
                continue
            half = next((f for f in curves if f.name == f"{name}: half of its peak from"), None)
            lines.append(f"  {name}: {_row(g)}" + (f"; half peak from {_v(half)}" if half else ""))
    return lines


def _row(g: Sequence[Fact]) -> str:
    """A curve's figures at SIZES in GB/s, '-' where its sweep does not reach."""
    by = {f.size: f for f in g}
    return "/".join(f"{by[s].value / 1e9:.3g}" if s in by else "-" for s in SIZES)


def header(profile: Profile, fs: Sequence[Fact]) -> str:
    gpu = next((f for f in fs if f.topic == "gpu" and f.name == "GPU"), None)
    sms = next((f for f in fs if f.name == "SMs"), None)
    mem = next((f for f in fs if f.name == "memory"), None)
    what = f"{gpu.value:g} x {gpu.basis}" if gpu else "unknown GPUs"
    extra = ", ".join(x for x in (f"{sms.value:g} SMs" if sms and sms.value == sms.value else "",
                                  format_bytes(mem.value) if mem and mem.value == mem.value else "") if x)
    return f"{what}" + (f" ({extra})" if extra else "") + f"; linkroof profile {profile.id}, {profile.kind_words}"


def _whose(profile: Profile) -> str:
    """Who measured the figures: linkroof, or the tool an import came from."""
    if profile.kind == "imported":
        tools = sorted({m.source for m in profile.measurements if m.source != "linkroof"}) or ["another tool"]
        return f"Figures are {', '.join(tools)}'s, imported by linkroof (not measured by it)"
    return "Figures are measured by linkroof"


def brief(profile: Profile, fs: Sequence[Fact]) -> str:
    """Plain text under 2 KB: the machine, then its figures, most important first; lines
    are dropped from the end until it fits."""
    lines = [f"Machine: {header(profile, fs)}.",
             _whose(profile) + " unless marked spec; bandwidths per GPU; clock = the state measured in."]
    # plain text: a name's control characters or newlines are not lines, and a long name
    # is cut so the brief keeps its limit
    body = [_cut(plain(x)) for x in spec_lines(profile, fs, short=True)]
    lines = [_cut(plain(x)) for x in lines]
    text = "\n".join(lines + body) + "\n"
    while len(text.encode()) > BRIEF_LIMIT and body:
        body.pop()
        text = "\n".join(lines + body + ["(more: linkroof export --json)"]) + "\n"
    return text


def _cut(line: str, limit: int = 400) -> str:
    return line if len(line) <= limit else line[:limit - 3] + "..."


DEFINITIONS = {
    "measured": "timed on this machine by linkroof with CUDA events after warm-up, over repetitions, the data "
                "verified; the clock state it was taken in is given (burst: at the boost clock; sustained: held "
                "below it, as under a long run's power cap)",
    "spec": "the vendor's data sheet (dense figures; never reached in practice)",
    "busbw": "NCCL's bus bandwidth (nccl-tests' convention): comparable across collectives and rank counts",
    "half peak from": "the smallest message size at which a mechanism gives half its best bandwidth: below it, "
                      "per-message latency dominates",
    "copy engine / SM / TMA": "three ways to move data between GPUs: cudaMemcpy's DMA engines (no SMs used), "
                              "loads and stores from SMs, and the Tensor Memory Accelerator's bulk copies",
}


def practices(fs: Sequence[Fact]) -> list[str]:
    """Advice made only of the figures: where each mechanism saturates and what the
    measured ceilings are against the spec."""
    out = []
    for f in _pick(fs, "curve"):
        if f.name.endswith("half of its peak from") and "=" not in f.name and "ungated" not in f.name:
            out.append(f"{f.name.replace(': half of its peak from', '')} reaches half its peak at {_v(f)} messages "
                       "(measured): batch smaller transfers.")
    sat = _pick(fs, "saturation")
    for f in sat:
        out.append(f"{f.name.split(':')[0]} needs {f.value:g} blocks for 90 % of its peak (measured): leave the "
                   "other SMs to compute when overlapping.")
    hbm = [f for f in _pick(fs, "hbm")]
    m, s = _best([f for f in hbm if f.provenance == "measured"]), _best([f for f in hbm if f.provenance == "spec"])
    if m and s:
        out.append(f"Plan on {_v(m)} of HBM bandwidth, not the spec's {_v(s)}: {m.value / s.value:.0%} of it is "
                   "what a kernel here reached (measured).")
    return out[:8]


def pkb_toml(profile: Profile, key: str, fs: Sequence[Fact]) -> str:
    """A [hardware_profiles.KEY] table for ParallelKernelBench's prompts.toml."""
    g = profile.topology.gpus[0] if profile.topology.gpus else None
    fields = {
        "profile_display": f"{header(profile, fs)} (linkroof export)",
        "gpu_name": str(g.name).removeprefix("NVIDIA ") if g is not None else "unknown",  # its template says NVIDIA
        "gpu_architecture": str(g.architecture) if g is not None and known(g.architecture) else "unknown",
        "gpu_specs_bullets": "\n".join(f"- {x.strip()}" for x in spec_lines(profile, fs)) + "\n",
        "gpu_definitions_bullets": "\n".join(f"- **{k}**: {v}" for k, v in DEFINITIONS.items()) + "\n",
        "gpu_best_practices_bullets": "\n".join(f"- {x}" for x in practices(fs)) + "\n",
    }
    import tomllib

    import tomli_w

    doc = {"hardware_profiles": {plain(key): {k: plain(v, newlines=True) for k, v in fields.items()}}}
    text = (f"# linkroof export --format pkb: profile {plain(profile.id)}; merge into kernelgen/prompts.toml\n"
            + tomli_w.dumps(doc, multiline_strings=True))
    try:
        back = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ExportError(f"the pkb table does not parse back as TOML ({e}): not written") from None
    if back != doc:
        raise ExportError("the pkb table parses back as other data than was meant: not written")
    return text


KB_KEYS = {"fp4": "FP4 Tensor Core TFLOPS", "fp8": "FP8 Tensor Core TFLOPS", "bf16": "BFLOAT16 Tensor Core TFLOPS",
           "fp16": "FP16 Tensor Core TFLOPS", "tf32": "TF32 Tensor Core TFLOPS", "fp32": "FP32 TFLOPS",
           "fp64": "FP64 TFLOPS", "int8": "INT8 Tensor Core TOPS"}


def kernelbench_specs(profile: Profile, key: str, fs: Sequence[Fact]) -> dict[str, str]:
    """KernelBench's GPU_SPEC_INFO entry: dense figures, measured first with the spec
    beside, and the NVLink, NCCL and launch figures its entries lack."""
    g = profile.topology.gpus[0] if profile.topology.gpus else None
    d: dict[str, str] = {"GPU Architecture": str(g.architecture) if g is not None and known(g.architecture)
                         else "unknown"}
    mem = next((f for f in fs if f.name == "memory"), None)
    if mem is not None and mem.value == mem.value:
        d["GPU Memory"] = f"{format_bytes(mem.value)} (NVML)"
    hbm_m, hbm_s = _best(_pick(fs, "hbm", "measured")), _best(_pick(fs, "hbm", "spec"))
    if hbm_m or hbm_s:
        d["Memory Bandwidth"] = (f"{_v(hbm_m)} ({_tag(hbm_m)})" if hbm_m else "not measured") + \
            (f"; spec {_v(hbm_s)}" if hbm_s else "")
    for dt, label in KB_KEYS.items():
        ms = [f for f in _pick(fs, "compute") if f.name.split()[0] == dt]
        m, s = _best([f for f in ms if f.provenance == "measured"]), _best([f for f in ms if f.provenance == "spec"])
        if m or s:
            d[label] = (f"{m.value / 1e12:.0f} dense ({_tag(m)})" if m else "not measured") + \
                (f"; spec {s.value / 1e12:.0f} dense" if s else "")
    for line in spec_lines(profile, fs):
        if "per GPU, one direction" in line:
            name, rest = line.split(":", 1)
            d[name.strip().replace(" per GPU, one direction", " bandwidth per GPU, one direction")] = rest.strip()
        elif line.startswith("  "):
            # "  NAME: ROW[; half peak from X]": a name may hold a colon (host_memory=numa:1), the row never ": "
            name, rest = line.strip().rsplit(": ", 1)
            d[("NCCL " if " nccl" in name else "") + name + " bandwidth at 4K/64K/1M/16M/256M B"] = \
                rest.strip().replace(";", " GB/s;", 1) if ";" in rest else rest.strip() + " GB/s"
        elif line.startswith(("Launch", "SM blocks")):
            name, rest = line.split(":", 1)
            d[name] = rest.strip()
    if g is not None and known(g.sm_count):
        d["Number of SMs"] = f"{g.sm_count} (NVML)"
    return d


def kernelbench_py(profile: Profile, key: str, fs: Sequence[Fact]) -> str:
    """A gpu_specs.py module KernelBench's prompt constructor reads with runpy: a docstring
    and three assignments of literals, each written by repr (pprint), never by formatting
    data into code, and parsed back (ast) to exactly that before it is returned."""
    info = {plain(key): {plain(k): plain(v) for k, v in kernelbench_specs(profile, key, fs).items()}}
    doc = (f"GPU specs for KernelBench's prompts: linkroof export --format kernelbench, profile {plain(profile.id)}.\n"
           "Measured figures say so and name their clock state; spec figures are the data sheet's, dense.")
    values = {"GPU_SPEC_INFO": info, "GPU_DEFINITIONS": dict(DEFINITIONS),
              "GPU_BEST_PRACTICES": [plain(x) for x in practices(fs)] or ["Measure before optimising."]}
    text = repr(doc) + "\n\n" + "\n".join(
        f"{name} = {pprint.pformat(v, width=110, sort_dicts=False)}\n" for name, v in values.items())
    check_python_data(text, doc, values)
    return text


def check_python_data(text: str, doc: str, values: dict[str, Any]) -> None:
    """`text` is a module of one docstring (`doc`) and assignments of literals to names,
    equal to `values`, and nothing else (no call, import, name or expression that runs);
    ExportError otherwise."""
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        raise ExportError(f"the module does not parse back ({e.msg}): not written") from None
    body = tree.body
    if not body or not isinstance(body[0], ast.Expr) or not isinstance(body[0].value, ast.Constant) \
            or body[0].value.value != doc:
        raise ExportError("the module's docstring is not the one meant: not written")
    seen: dict[str, Any] = {}
    for node in body[1:]:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            raise ExportError(f"the module holds a {type(node).__name__} statement, not data: not written")
        try:
            seen[node.targets[0].id] = ast.literal_eval(node.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise ExportError(f"{node.targets[0].id} is not a literal: not written") from None
    if seen != values:
        raise ExportError("the module parses back as other data than was meant: not written")


def _data(x: Any) -> Any:
    """JSON-able data with plain strings and no NaN or infinity (null in their place)."""
    if isinstance(x, dict):
        return {plain(k): _data(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_data(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, str):
        return plain(x, newlines=True)
    return x


TL_MATRIX = {"bf16": "matrix_bf16", "fp16": "matrix_fp16", "fp8": "matrix_fp8", "tf32": "matrix_tf32",
             "fp64": "matrix_fp64", "int8": "matrix_int8"}


def tracelens_arch(profile: Profile, key: str, fs: Sequence[Fact]) -> dict[str, Any]:
    """TraceLens's arch JSON: measured values as its max achievable figures (its name for
    benchmark-derived peaks), link fields and provenance added under keys it ignores."""
    hbm = _best(_pick(fs, "hbm", "measured")) or _best(_pick(fs, "hbm", "spec"))
    maf: dict[str, float] = {}
    prov: dict[str, str] = {}
    for f in _pick(fs, "compute", "measured"):
        dt, mech = f.name.split()[0], f.name.split("(")[-1].rstrip(")")
        k = "vector_fp32" if (dt, mech) == ("fp32", "fma") else ("matrix_fp32" if dt == "fp32" else TL_MATRIX.get(dt))
        if k and f.value / 1e12 > maf.get(k, 0.0):
            maf[k] = round(f.value / 1e12, 1)
            prov[f"max_achievable_tflops.{k}"] = f"{_tag(f)}: {f.basis}"
    mem = next((f for f in fs if f.name == "memory"), None)
    out: dict[str, Any] = {"name": key, "mem_bw_gbps": round(hbm.value / 1e9, 1) if hbm else None,
                           "memory_gb": round(mem.value / 1e9, 1) if mem and mem.value == mem.value else None,
                           "max_achievable_tflops": maf}
    if hbm:
        prov["mem_bw_gbps"] = f"{_tag(hbm)}: {hbm.basis}"
    links: dict[str, Any] = {}
    for f in _pick(fs, "link"):
        links.setdefault(f.name, []).append({"gbps": round(f.value / 1e9, 1), "provenance": _tag(f),
                                             "basis": f.basis})
    out["link_bw_gbps"] = links
    out["nccl_busbw_gbps"] = {f"{f.name} @ {f.size} B": round(f.value / 1e9, 1) for f in _pick(fs, "nccl")
                              if f.size is not None}
    out["launch_sync_us"] = {f"{f.topic} {f.name}": round(f.value * 1e6, 2) for f in _pick(fs, "launch")
                             + _pick(fs, "sync")}
    out["_provenance"] = prov
    out["_reference"] = f"linkroof export --format tracelens, profile {profile.id} ({profile.created_at[:10]})"
    return out


def render(profile: Profile, fmt: str, key: str, fs: Sequence[Fact] | None = None) -> str:
    fs = facts(profile) if fs is None else fs
    if fmt == "brief":
        return brief(profile, fs)
    if fmt == "pkb":
        return pkb_toml(profile, key, fs)
    if fmt == "kernelbench":
        return kernelbench_py(profile, key, fs)
    if fmt == "tracelens":
        data = _data(tracelens_arch(profile, key, fs))
        text = json.dumps(data, indent=2, allow_nan=False) + "\n"
        if json.loads(text) != data:
            raise ExportError("the arch JSON parses back as other data than was meant: not written")
        return text
    raise ValueError(f"unknown format {fmt!r}")


FILES = {"brief": "brief.txt", "pkb": "pkb_hardware_profile.toml", "kernelbench": "gpu_specs.py",
         "tracelens": "{key}.json"}


def file_name(fmt: str, key: str) -> str:
    """The file a format is written to: the key only ever as a safe slug."""
    return FILES[fmt].format(key=slug(key, "linkroof"))


def write_all(profile: Profile, folder: str, key: str) -> list[str]:
    """The four formats into `folder`, each inside it (a key of '../x' or 'H200/SXM5' is a
    slug in the file's name), each written whole or not at all."""
    from ..files import FileOutputError

    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as e:
        raise FileOutputError(f"cannot make {folder}: {e.strerror or e}") from None
    fs = facts(profile)
    texts = {fmt: render(profile, fmt, key, fs) for fmt in FILES}  # all made and checked before any is written
    out = []
    for fmt, text in texts.items():
        out.append(str(write_text(path_inside(folder, file_name(fmt, key)), text)))
    return out
