"""Survivors of mutmut in linkroof/roofline/export.py's tracelens_arch, _tag, _cut, _row and
_whose: the TraceLens arch dict (the keys TraceLens's load_arch reads, and the ones it
ignores) on small hand-built facts, each expected figure worked out by hand from the input
(B/s / 1e9 = GB/s, FLOP/s / 1e12 = TFLOP/s, s * 1e6 = us), and the exact strings of the
provenance tags, the brief's cut lines, the curve rows and the "whose figures" line."""

import dataclasses

import pytest

from linkroof.profiler.session import bundled_profile
from linkroof.roofline import export as E
from linkroof.roofline.export import Fact

REF = "linkroof export --format tracelens, profile 20261130-193947-a5e8a4 (2026-11-30)"


@pytest.fixture(scope="module")
def profile():
    return bundled_profile()


def _arch(profile, fs, key="H100-test"):
    return E.tracelens_arch(profile, key, fs)


# --- tracelens_arch: the whole dict for a small machine -------------------------------------

SMALL = [
    Fact("gpu", "memory", 80.75e9, "B", "nvml"),
    Fact("hbm", "HBM bandwidth", 4.8e12, "B/s", "spec", basis="data sheet"),
    Fact("hbm", "HBM bandwidth (read-only kernel)", 4510.75e9, "B/s", "measured", "burst clock at 1980 MHz",
         "read kernel"),
    Fact("compute", "fp8 dense", 1979e12, "FLOP/s", "spec", basis="data sheet"),  # spec: not "achievable"
    Fact("compute", "bf16 dense (gemm)", 851.3e12, "FLOP/s", "measured", "", "gemm A"),
    Fact("compute", "bf16 dense (gemm)", 800.0e12, "FLOP/s", "measured", "", "gemm B"),  # lesser, after
    Fact("compute", "fp32 dense (fma)", 64.75e12, "FLOP/s", "measured", "clock not sampled", "fma kernel"),
    Fact("compute", "fp32 dense (gemm)", 50.7e12, "FLOP/s", "measured", "", "sgemm"),
    Fact("compute", "fp64 dense", 0.5e12, "FLOP/s", "measured", "", "dgemm"),  # no mechanism; under 1 TFLOP/s
    Fact("compute", "fp4 dense (gemm)", 3000e12, "FLOP/s", "measured", "", "fp4"),  # no TraceLens key
    Fact("link", "NVLink one direction", 450e9, "B/s", "spec", basis="NV18"),
    Fact("link", "NVLink one direction (ce)", 396.75e9, "B/s", "measured", "clock not sampled", "p2p write"),
    Fact("nccl", "all_reduce nccl bf16", 74.75e9, "B/s", "measured", basis="busbw", size=1 << 20),
    Fact("nccl", "all_reduce nccl bf16: half of its peak from", 8388608.0, "B", "measured"),
    Fact("launch", "graph", 1.24949999e-5, "s", "measured", "clock not sampled", "graph replay"),
    Fact("sync", "gpu", 1.5e-6, "s", "measured", "clock not sampled", "flag"),
]


def test_the_arch_dict_of_a_small_machine_exactly(profile):
    """4510.75e9 B/s = 4510.8 GB/s (to 0.1; the tie 4510.75 rounds to even), 80.75e9 B =
    80.8 GB, 64.75e12 FLOP/s = 64.8 TFLOP/s, 396.75e9 B/s = 396.8 GB/s, 74.75e9 B/s = 74.8
    GB/s, 1.24949999e-5 s = 12.49 us (12.4949999 to 0.01), 1.5e-6 s = 1.5 us. Spec compute,
    a data type TraceLens has no key for and a curve's half-peak size are left out; the
    larger of two bf16 figures (the first) and its provenance kept."""
    arch = _arch(profile, SMALL)
    assert arch == {
        "name": "H100-test",
        "mem_bw_gbps": 4510.8,
        "memory_gb": 80.8,
        "max_achievable_tflops": {"matrix_bf16": 851.3, "vector_fp32": 64.8, "matrix_fp32": 50.7,
                                  "matrix_fp64": 0.5},
        "link_bw_gbps": {
            "NVLink one direction": [{"gbps": 450.0, "provenance": "spec sheet", "basis": "NV18"}],
            "NVLink one direction (ce)": [{"gbps": 396.8, "provenance": "measured, clock not sampled",
                                           "basis": "p2p write"}],
        },
        "nccl_busbw_gbps": {"all_reduce nccl bf16 @ 1048576 B": 74.8},
        "launch_sync_us": {"launch graph": 12.49, "sync gpu": 1.5},
        "_provenance": {
            "max_achievable_tflops.matrix_bf16": "measured: gemm A",
            "max_achievable_tflops.vector_fp32": "measured, clock not sampled: fma kernel",
            "max_achievable_tflops.matrix_fp32": "measured: sgemm",
            "max_achievable_tflops.matrix_fp64": "measured: dgemm",
            "mem_bw_gbps": "measured, burst clock at 1980 MHz: read kernel",
        },
        "_reference": REF,
    }
    # the figures TraceLens reads are floats in its units, not rounded to whole numbers
    assert all(type(v) is float for v in arch["max_achievable_tflops"].values())
    assert type(arch["mem_bw_gbps"]) is float and type(arch["memory_gb"]) is float
    assert type(arch["link_bw_gbps"]["NVLink one direction (ce)"][0]["gbps"]) is float
    assert type(arch["nccl_busbw_gbps"]["all_reduce nccl bf16 @ 1048576 B"]) is float
    assert type(arch["launch_sync_us"]["launch graph"]) is float


def test_the_bundled_profile_s_matrix_and_vector_fp32(profile):
    """The H200's fp32 FMA figure (64.778e12 FLOP/s) is TraceLens's vector_fp32 and its fp32
    GEMM (50.718e12) matrix_fp32; the reference names the profile and its date."""
    arch = _arch(profile, E.facts(profile), "H200x2-linkroof")
    maf = arch["max_achievable_tflops"]
    assert maf["vector_fp32"] == 64.8 and maf["matrix_fp32"] == 50.7 and maf["matrix_tf32"] == 434.4
    assert arch["memory_gb"] == 150.8  # 150754820096 B
    assert arch["_reference"] == REF


# --- mem_bw_gbps: the best measured HBM figure, else the spec sheet's, never another --------

def test_hbm_unmeasured_falls_back_to_the_spec_sheet_only(profile):
    """No measured HBM figure: the data sheet's 4.8e12 B/s = 4800.0 GB/s, not a larger
    figure of another topic (fp8 compute, spec) nor an HBM figure of another provenance."""
    fs = [Fact("hbm", "HBM bandwidth", 4.8e12, "B/s", "spec", basis="data sheet"),
          Fact("hbm", "HBM bandwidth (bus width x clock)", 4.9e12, "B/s", "nvml", basis="NVML"),
          Fact("compute", "fp8 dense", 1979e12, "FLOP/s", "spec", basis="data sheet")]
    arch = _arch(profile, fs)
    assert arch["mem_bw_gbps"] == 4800.0
    assert arch["_provenance"] == {"mem_bw_gbps": "spec sheet: data sheet"}
    assert arch["max_achievable_tflops"] == {}


def test_no_hbm_no_memory_figure_gives_nulls(profile):
    fs = [Fact("compute", "bf16 dense (gemm)", 851.3e12, "FLOP/s", "measured", "", "gemm")]
    arch = _arch(profile, fs)
    assert arch["mem_bw_gbps"] is None and arch["memory_gb"] is None
    assert arch["_provenance"] == {"max_achievable_tflops.matrix_bf16": "measured: gemm"}
    assert arch["link_bw_gbps"] == {} and arch["nccl_busbw_gbps"] == {} and arch["launch_sync_us"] == {}


def test_an_unknown_memory_size_is_null_not_nan(profile):
    fs = [Fact("gpu", "SMs", 132.0, "count", "nvml"), Fact("gpu", "memory", float("nan"), "B", "nvml")]
    arch = _arch(profile, fs)
    assert arch["memory_gb"] is None


# --- max_achievable_tflops: one key per data type, the largest figure, its provenance -------

def test_a_tie_keeps_the_first_figure_s_provenance(profile):
    fs = [Fact("compute", "bf16 dense (gemm)", 851.3e12, "FLOP/s", "measured", "", "first"),
          Fact("compute", "bf16 dense (gemm)", 851.3e12, "FLOP/s", "measured", "", "second")]
    arch = _arch(profile, fs)
    assert arch["max_achievable_tflops"] == {"matrix_bf16": 851.3}
    assert arch["_provenance"]["max_achievable_tflops.matrix_bf16"] == "measured: first"


def test_a_larger_figure_rounding_to_the_same_tenth_takes_the_provenance(profile):
    """851300000000100 FLOP/s is 851.3000000001 TFLOP/s: larger than 851.3, so it is the
    best figure (both read 851.3 to 0.1) and its basis is the one named."""
    fs = [Fact("compute", "bf16 dense (gemm)", 851.3e12, "FLOP/s", "measured", "", "first"),
          Fact("compute", "bf16 dense (gemm)", 851300000000100.0, "FLOP/s", "measured", "", "larger")]
    arch = _arch(profile, fs)
    assert arch["max_achievable_tflops"] == {"matrix_bf16": 851.3}
    assert arch["_provenance"]["max_achievable_tflops.matrix_bf16"] == "measured: larger"


def test_only_the_fma_mechanism_is_vector_fp32(profile):
    """The mechanism is matched by its exact name: "fmaX" is not "fma", so its fp32 figure
    is a matrix one."""
    fs = [Fact("compute", "fp32 dense (fmaX)", 60e12, "FLOP/s", "measured", "", "other")]
    assert _arch(profile, fs)["max_achievable_tflops"] == {"matrix_fp32": 60.0}


# --- _tag: the provenance words ------------------------------------------------------------

def test_tags_name_each_provenance():
    assert E._tag(Fact("hbm", "HBM bandwidth (x)", 1.0, "B/s", "measured")) == "measured"
    assert E._tag(Fact("hbm", "HBM bandwidth (x)", 1.0, "B/s", "measured", "burst clock at 1980 MHz")) == \
        "measured, burst clock at 1980 MHz"
    assert E._tag(Fact("hbm", "HBM bandwidth", 1.0, "B/s", "spec")) == "spec sheet"
    assert E._tag(Fact("gpu", "memory", 1.0, "B", "nvml")) == "NVML"
    assert E._tag(Fact("hbm", "HBM bandwidth", 1.0, "B/s", "nvbandwidth")) == "nvbandwidth"  # as it is


def test_link_provenance_in_the_arch_uses_the_tags(profile):
    fs = [Fact("link", "host link one direction", 63e9, "B/s", "spec", basis="PCIe"),
          Fact("link", "host link one direction (ce)", 55.5e9, "B/s", "measured", "", "h2d"),
          Fact("link", "NVLink one direction", 450e9, "B/s", "nvml", basis="NV18")]
    links = _arch(profile, fs)["link_bw_gbps"]
    assert links == {"host link one direction": [{"gbps": 63.0, "provenance": "spec sheet", "basis": "PCIe"}],
                     "host link one direction (ce)": [{"gbps": 55.5, "provenance": "measured", "basis": "h2d"}],
                     "NVLink one direction": [{"gbps": 450.0, "provenance": "NVML", "basis": "NV18"}]}


# --- _cut: a long line cut to its limit, ending "..." ---------------------------------------

def test_cut_keeps_lines_up_to_the_limit_and_cuts_longer_ones_to_it():
    assert E._cut("short") == "short"
    assert E._cut("x" * 400) == "x" * 400
    cut = E._cut("a" * 401)
    assert cut == "a" * 397 + "..." and len(cut) == 400
    assert E._cut("abcdefghij", 8) == "abcde..."
    assert E._cut("abcdefgh", 8) == "abcdefgh"


# --- _row: a curve's figures in GB/s at SIZES, "-" where not reached -------------------------

def test_row_gives_gbps_to_three_figures():
    """1.375e9 B/s = 1.375 GB/s, "1.38" to three figures (the tie to even); 74.75e9 = "74.8"."""
    g = [Fact("nccl", "all_reduce nccl bf16", 1.375e9, "B/s", "measured", size=4096),
         Fact("nccl", "all_reduce nccl bf16", 74.75e9, "B/s", "measured", size=1 << 20)]
    assert E._row(g) == "1.38/-/74.8/-/-"


# --- _whose: whose figures the brief gives ---------------------------------------------------

def _imported(profile, sources):
    ms = tuple(dataclasses.replace(m, source=s) for m, s in zip(profile.measurements, sources))
    return dataclasses.replace(profile, label="import:test", measurements=ms)


def test_whose_names_the_imported_tools_not_linkroof(profile):
    p = _imported(profile, ["nvbandwidth", "linkroof", "nccl-tests", "nvbandwidth"])
    assert p.kind == "imported"
    assert E._whose(p) == "Figures are nccl-tests, nvbandwidth's, imported by linkroof (not measured by it)"
    p = _imported(profile, ["linkroof", "nccl-tests"])
    assert E._whose(p) == "Figures are nccl-tests's, imported by linkroof (not measured by it)"
    assert E._whose(profile) == "Figures are measured by linkroof"
