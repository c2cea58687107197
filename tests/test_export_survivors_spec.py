"""Survivors of mutation testing in roofline/export.py's spec_lines and kernelbench_specs:
the mutants mutmut left alive there, each pinned by an exact line (or GPU_SPEC_INFO
entry) worked out by hand from a few hand-built figures on the bundled host: which
dense-compute figure of a data type is kept (ties, tiny values, int8), the mechanism
named in a measured link, a link without a spec on a probed host, the launch line with
only launch terms or only sync terms, the short form's omission of variant curves, and a
curve row whose name holds ": " in the KernelBench entry's key."""

import dataclasses

import pytest

from linkroof.profiler.session import bundled_profile
from linkroof.roofline import export as E
from linkroof.roofline.export import Fact
from test_export_survivors_kernelbench import CLOCK, SIZES_KEY, h100, machine

SUSTAINED = "sustained clock at 1755 MHz"
M = "measured"


@pytest.fixture(scope="module")
def bundled():
    return bundled_profile()


@pytest.fixture(scope="module")
def probed(bundled):
    """One H100 on the bundled host: a probed topology (source nvml), so its links are known."""
    p = machine(bundled, [h100(bundled)])
    assert p.topology.links_known
    return p


def _compute_line(profile, fs, short=False):
    (line,) = [x for x in E.spec_lines(profile, fs, short) if x.startswith("Dense compute: ")]
    return line


# ------------------------------------------------------------------ dense compute


def test_equal_measured_figures_keep_the_first_and_its_clock(probed):
    """Two mechanisms of bf16 reaching the same 800 TFLOP/s: the first one listed is
    the figure kept (a later one must beat it, not tie it), so the line carries the
    first one's clock (burst), not the second's (sustained)."""
    fs = [Fact("compute", "bf16 dense (gemm)", 800e12, "FLOP/s", M, CLOCK),
          Fact("compute", "bf16 dense (wgmma)", 800e12, "FLOP/s", M, SUSTAINED)]
    assert _compute_line(probed, fs) == f"Dense compute: bf16 800 TFLOP/s measured [{CLOCK}]"
    rev = list(reversed(fs))
    assert _compute_line(probed, rev) == f"Dense compute: bf16 800 TFLOP/s measured [{SUSTAINED}]"


def test_a_zero_figure_is_not_a_figure(probed):
    """A measured fp32 of 0 FLOP/s (a failed run) is not kept: the line lists only the
    fp64 figure and the fp64 figure's clock."""
    fs = [Fact("compute", "fp32 dense (fma)", 0.0, "FLOP/s", M, SUSTAINED),
          Fact("compute", "fp64 dense (dfma)", 60e12, "FLOP/s", M, CLOCK)]
    assert _compute_line(probed, fs) == f"Dense compute: fp64 60 TFLOP/s measured [{CLOCK}]"


def test_any_positive_figure_is_kept_however_small(probed):
    """Every figure above zero is a figure: 1 FLOP/s and 0.5 FLOP/s of spec fp64 are
    listed (the highest, 1 FLOP/s, written 0 TFLOP/s at whole TFLOP/s); nothing measured,
    so no clock."""
    fs = [Fact("compute", "fp64 dense", 1.0, "FLOP/s", "spec")]
    assert _compute_line(probed, fs) == "Dense compute: fp64 0 TFLOP/s spec"
    fs = [Fact("compute", "fp64 dense", 0.5, "FLOP/s", "spec"),
          Fact("compute", "fp32 dense (fma)", 1.0, "FLOP/s", M, CLOCK)]
    assert _compute_line(probed, fs) == f"Dense compute: fp32 0 TFLOP/s measured; fp64 0 TFLOP/s spec [{CLOCK}]"


def test_int8_is_listed_last(probed):
    """int8 (1500 TOPS measured against the H100 table's 1979 spec) follows bf16 in the
    line, last of the data types; its spec alone makes the line."""
    fs = [Fact("compute", "int8 dense (imma)", 1500e12, "FLOP/s", M, CLOCK),
          Fact("compute", "int8 dense", 1979e12, "FLOP/s", "spec"),
          Fact("compute", "bf16 dense (gemm)", 851e12, "FLOP/s", M, CLOCK)]
    assert _compute_line(probed, fs) == \
        f"Dense compute: bf16 851 TFLOP/s measured; int8 1500 TOPS measured (spec 1979 TOPS) [{CLOCK}]"
    assert _compute_line(probed, fs[1:2]) == "Dense compute: int8 1979 TOPS spec"  # integer operations: TOPS


def test_fp4_is_listed_first_and_in_kernelbench(probed):
    """B300's table gives fp4 dense only (15000 TFLOP/s): it was dropped from the brief and
    KernelBench's entry until 2026-12-05, which then showed no table figure at all."""
    fs = [Fact("compute", "fp4 dense", 15000e12, "FLOP/s", "spec"),
          Fact("compute", "fp8 dense (gemm)", 4000e12, "FLOP/s", M, CLOCK)]
    assert _compute_line(probed, fs) == f"Dense compute: fp4 15000 TFLOP/s spec; fp8 4000 TFLOP/s measured [{CLOCK}]"
    assert E.spec_lines(probed, fs[:1]) == ["Dense compute: fp4 15000 TFLOP/s spec"]
    d = E.kernelbench_specs(probed, "B300", fs)
    assert d["FP4 Tensor Core TFLOPS"] == "not measured; spec 15000 dense"


# ------------------------------------------------------------------ links


def test_a_measured_link_names_its_mechanism_whole(probed):
    """The mechanism is the text inside the parentheses, only the closing one taken off:
    a mechanism ending in X (here 'CX') keeps its X."""
    fs = [Fact("link", "NVLink one direction", 450e9, "B/s", "spec"),
          Fact("link", "NVLink one direction (CX)", 396.3e9, "B/s", M, CLOCK)]
    assert E.spec_lines(probed, fs) == [
        f"NVLink per GPU, one direction: spec 450.0 GB/s; measured CX 396.3 GB/s [{CLOCK}]"]


def test_a_link_without_a_spec_on_a_probed_host_says_no_spec(probed):
    """A probed topology knows its links; a measured link with no spec figure is 'no
    spec'. Only an import (source 'import:...') says the spec is not known."""
    fs = [Fact("link", "host link one direction (ce)", 26.5e9, "B/s", M, CLOCK)]
    assert E.spec_lines(probed, fs) == [f"host link per GPU, one direction: no spec; measured ce 26.5 GB/s [{CLOCK}]"]
    topo = dataclasses.replace(probed.topology, source="import:nccl-tests")
    imported = dataclasses.replace(probed, topologies=(topo,))
    assert E.spec_lines(imported, fs) == [
        "host link per GPU, one direction: spec not known (an import carries no topology); "
        f"measured ce 26.5 GB/s [{CLOCK}]"]


# ------------------------------------------------------------------ launch and sync


def test_launch_terms_alone_make_a_launch_line_without_sync(probed):
    """Launch terms and no sync term: the launch figures (717 ns, 1590 ns) and nothing after."""
    fs = [Fact("launch", "graph", 717e-9, "s", M, CLOCK), Fact("launch", "cuda", 1.59e-6, "s", M, CLOCK)]
    assert E.spec_lines(probed, fs) == ["Launch: graph 717 ns, cuda 1590 ns"]
    assert E.kernelbench_specs(probed, "k", fs)["Launch"] == "graph 717 ns, cuda 1590 ns"


def test_a_sync_term_alone_still_makes_the_line(probed):
    """A sync term and no launch term (a profile of sync_latency only): the line is
    written, with no launch figures before its sync part."""
    fs = [Fact("sync", "cta", 5e-7, "s", M, CLOCK)]
    assert E.spec_lines(probed, fs) == ["Launch: sync: cta 500 ns"]  # "Launch: ; sync: ..." until 2026-12-05
    assert E.kernelbench_specs(probed, "k", fs)["Launch"] == "sync: cta 500 ns"


# ------------------------------------------------------------------ copy curves


def _at(name, gbs, size):
    return Fact("curve", name, gbs * 1e9, "B/s", M, basis="bandwidth", size=size)


def test_short_form_leaves_out_variant_and_ungated_curves(probed):
    """short=True keeps the plain curve only: a variant (host_memory=pageable, its name
    holding '=') and an ungated one are left out; the long form has all three, sorted."""
    fs = [_at("host link h2d ce", 26.5, 256 << 20),
          _at("host link h2d ce (host_memory=pageable)", 12.1, 256 << 20),
          _at("host link h2d ce (ungated)", 25.9, 256 << 20)]
    head = "Copy bandwidth, GB/s at 4 KiB/64 KiB/1 MiB/16 MiB/256 MiB messages:"
    assert E.spec_lines(probed, fs, short=True) == [head, "  host link h2d ce: -/-/-/-/26.5"]
    assert E.spec_lines(probed, fs) == [head, "  host link h2d ce: -/-/-/-/26.5",
                                        "  host link h2d ce (host_memory=pageable): -/-/-/-/12.1",
                                        "  host link h2d ce (ungated): -/-/-/-/25.9"]


def test_a_curve_name_holding_colon_space_stays_whole_in_its_key(probed):
    """A variant value with ': ' in it (host_memory=numa: 1): the row is cut from the
    name at its last ': ' (the row never holds one), so the whole name makes the key
    and the value is the row in GB/s with its half-peak size."""
    name = "host link h2d ce (host_memory=numa: 1)"
    fs = [_at(name, 1.5, 4096), _at(name, 20.0, 1 << 20),
          Fact("curve", name + ": half of its peak from", float(256 << 10), "B", M)]
    assert E.spec_lines(probed, fs)[-1] == f"  {name}: 1.5/-/20/-/-; half peak from 256 KiB"
    d = E.kernelbench_specs(probed, "k", fs)
    assert d == {"GPU Architecture": "Hopper", name + SIZES_KEY: "1.5/-/20/-/- GB/s; half peak from 256 KiB",
                 "Number of SMs": "132 (NVML)"}
