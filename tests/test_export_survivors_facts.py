"""`linkroof export`'s figures pinned exactly, for the mutants mutmut left alive in
roofline/export.py's facts, practices, brief, clock_text and _m_clock: the clock-state
text a measured figure carries, the Fact records a small profile (two measurements of
known size and time on the recorded 2 x H200 topology) and the bundled one give, the
advice sentences made of given figures, and the brief's text and its 2 KB limit."""

import dataclasses

import pytest

import factories as F
from linkroof.profiler.session import bundled_profile
from linkroof.roofline import export as E
from linkroof.roofline.export import Fact
from linkroof.schema import ClockState

PID = "20261130-193947-a5e8a4"
WORDS = "linkroof's bundled reference, measured 2026-11-30 on another machine"
WHOSE = "Figures are measured by linkroof unless marked spec; bandwidths per GPU; clock = the state measured in."
NVLINK_BASIS = ("pair0-1: data rate 450.0 GB/s (line rate 478.1 GB/s); NVLink through NVSwitch: the lesser of both "
                "GPUs' NVLink bandwidth (NV18)")
PCIE_BASIS = "gpu0.pcie: PCIe Gen5 x16 (3.93846 GB/s per lane after encoding)"
H200_MEMORY = 150754820096.0  # NVML's total of the recorded H200 (bytes)
PCIE5_X16 = 16 * 32e9 * 128 / 130 / 8  # 32 GT/s a lane, 128b/130b, 16 lanes, in bytes


# GPU 0 of the recorded 2 x H200 renamed out of the spec table: its NVML figures, the compute
# roofs derived from SMs and clock (132 x 1.98 GHz x 128 FLOP/clock/SM for fp64, x 256 for
# fp32), no HBM spec, and the NVLink and PCIe Gen5 x16 spec roofs of the topology
MYSTERY_MACHINE = [
        Fact("gpu", "GPU", 2, "count", "nvml", basis="Mystery GPU, Hopper, compute capability 9.0, 1 host(s)"),
        Fact("gpu", "SMs", 132.0, "count", "nvml"),
        Fact("gpu", "memory", H200_MEMORY, "B", "nvml"),
        Fact("gpu", "max SM clock", 1980e6, "Hz", "nvml"),
        Fact("compute", "fp64 dense", 132 * 1980e6 * 128, "FLOP/s", "spec",
             basis="derived: 132 SMs x 1980 MHz x 128 FLOP/clock/SM"),
        Fact("compute", "fp32 dense", 132 * 1980e6 * 256, "FLOP/s", "spec",
             basis="derived: 132 SMs x 1980 MHz x 256 FLOP/clock/SM"),
        Fact("link", "NVLink one direction", 450e9, "B/s", "spec", basis=NVLINK_BASIS),
        Fact("link", "host link one direction", pytest.approx(PCIE5_X16, rel=1e-12), "B/s", "spec",
             basis=PCIE_BASIS),
    ]


@pytest.fixture(scope="module")
def ref():
    return bundled_profile()


@pytest.fixture(scope="module")
def ref_fs(ref):
    return E.facts(ref)


def _sustained():
    return ClockState(state="sustained", samples=12, sm_mhz_median=1755.4)


@pytest.fixture(scope="module")
def small(ref):
    """The recorded topology with its GPUs renamed out of the spec table (so its HBM spec
    is unknown: no gpuN.hbm ceiling either), GPU 1 unlike GPU 0, and two measurements:
    a gemm of 1e12 FLOP in 1 ms (dtype 'fp8:e4m3') and a 1 GiB read in 0.25 ms, sampled
    at a sustained clock of 1755.4 MHz."""
    t = ref.topology
    g0 = dataclasses.replace(t.gpus[0], name="Mystery GPU")
    g1 = dataclasses.replace(t.gpus[1], name="Other GPU", sm_count=66, max_sm_clock_mhz=1000,
                             memory_total_bytes=1 << 30, architecture="Ampere", compute_capability="8.0")
    topo = dataclasses.replace(t, gpus=(g0, g1), ceilings=tuple(c for c in t.ceilings if not c.name.endswith(".hbm")))
    gemm = F.measurement("gemm_throughput", "compute", "gemm", devices=(0,), nbytes=0, times=(1e-3,) * 3,
                         flops=1e12, dtype="fp8:e4m3")
    read = F.measurement("local_read_bandwidth", "sm", "local_read", devices=(1,), nbytes=1 << 30,
                         times=(2.5e-4,) * 3)
    read = dataclasses.replace(read, clock=_sustained())
    return dataclasses.replace(ref, topologies=(topo,), measurements=(gemm, read))


# ---------------------------------------------------------------- clock_text, _m_clock

def test_clock_text_without_a_median_clock_names_the_state_alone():
    assert E.clock_text(ClockState(state="burst", samples=3)) == "burst clock"
    assert E.clock_text(ClockState(state="steady", samples=3, sm_mhz_median=0.0)) == "steady clock"
    assert E.clock_text(ClockState(state="drifting", samples=9, sm_mhz_median=1412.5)) == "drifting clock at 1412 MHz"
    assert E.clock_text(None) == "clock not sampled"


def test_m_clock_reads_the_measurements_own_clock_state():
    m = dataclasses.replace(F.measurement(), clock=_sustained())
    assert E._m_clock(m) == "sustained clock at 1755 MHz"
    assert E._m_clock(dataclasses.replace(m, clock=ClockState(state="burst", samples=4, sm_mhz_median=1980.0))) == \
        "burst clock at 1980 MHz"
    assert E._m_clock(F.measurement()) == "clock not sampled"  # no samples taken
    assert E._m_clock(None) == "clock not sampled"


# ---------------------------------------------------------------- facts

def test_facts_of_a_small_profile_are_exactly_these(small):
    """Worked out by hand: GPU 0's NVML figures (132 SMs at 1980 MHz); the compute roofs
    derived for a GPU not in the spec table (132 SMs x 1.98 GHz x 128 FLOP/clock/SM for
    fp64, x 256 for fp32), the unknown HBM spec skipped, the NVLink data rate and PCIe
    Gen5 x16 from the topology, the gemm at 1e12 FLOP / 1 ms = 1e15 FLOP/s (no message
    size, its clock not sampled) and the read at 2^30 B / 0.25 ms, at its sampled clock."""
    fs = E.facts(small)
    assert fs == MYSTERY_MACHINE + [
        Fact("compute", "fp8:e4m3 dense (gemm)", 1e15, "FLOP/s", "measured", "clock not sampled",
             "best verified: gemm_throughput fp8:e4m3 on GPU 0 (linkroof)", None),
        Fact("hbm", "HBM bandwidth (read-only kernel)", (1 << 30) / 2.5e-4, "B/s", "measured",
             "sustained clock at 1755 MHz", "best verified: local_read_bandwidth 1073741824 B on GPU 1 (linkroof)",
             1 << 30),
    ]
    assert [type(f.value) for f in fs[:4]] == [int, float, float, float]


def test_facts_of_a_profile_without_gpus_have_no_gpu_figures(small):
    topo = dataclasses.replace(small.topology, gpus=())
    fs = E.facts(dataclasses.replace(small, topologies=(topo,)))
    assert [f for f in fs if f.topic == "gpu"] == []
    assert fs[0] == Fact("link", "NVLink one direction", 450e9, "B/s", "spec", basis=NVLINK_BASIS)
    assert [f.name for f in fs] == ["NVLink one direction", "host link one direction", "fp8:e4m3 dense (gemm)",
                                    "HBM bandwidth (read-only kernel)"]


def test_unknown_nvml_figures_are_nan_in_their_units(small):
    t = small.topology
    from linkroof.schema import Unknown

    g0 = dataclasses.replace(t.gpus[0], sm_count=Unknown("not probed"), memory_total_bytes=Unknown("not probed"),
                             max_sm_clock_mhz=Unknown("not probed"))
    fs = E.facts(dataclasses.replace(small, topologies=(dataclasses.replace(t, gpus=(g0,) + t.gpus[1:]),)))
    gpu = [f for f in fs if f.topic == "gpu"]
    assert [(f.name, f.unit, f.provenance) for f in gpu] == [("GPU", "count", "nvml"), ("SMs", "count", "nvml"),
                                                             ("memory", "B", "nvml"), ("max SM clock", "Hz", "nvml")]
    assert all(isinstance(f.value, float) and f.value != f.value for f in gpu[1:])


def test_facts_of_the_reference_profile_name_each_roof(ref_fs):
    """The bundled 2 x H200: NVML's figures first, spec roofs without a mechanism in
    their names, measured ones with it."""
    assert ref_fs[:4] == [
        Fact("gpu", "GPU", 2, "count", "nvml", basis="NVIDIA H200, Hopper, compute capability 9.0, 1 host(s)"),
        Fact("gpu", "SMs", 132.0, "count", "nvml"),
        Fact("gpu", "memory", H200_MEMORY, "B", "nvml"),
        Fact("gpu", "max SM clock", 1.98e9, "Hz", "nvml"),
    ]
    names = [(f.topic, f.name, f.provenance) for f in ref_fs if f.topic in ("compute", "hbm")]
    assert names == [
        ("compute", "fp64 dense", "spec"), ("compute", "fp32 dense", "spec"), ("compute", "tf32 dense", "spec"),
        ("compute", "fp16 dense", "spec"), ("compute", "bf16 dense", "spec"), ("compute", "fp8 dense", "spec"),
        ("compute", "int8 dense", "spec"), ("hbm", "HBM bandwidth", "spec"),
        ("compute", "bf16 dense (gemm)", "measured"), ("compute", "fp16 dense (gemm)", "measured"),
        ("compute", "fp32 dense (fma)", "measured"), ("compute", "fp32 dense (gemm)", "measured"),
        ("compute", "fp64 dense (gemm)", "measured"), ("compute", "tf32 dense (gemm)", "measured"),
        ("hbm", "HBM bandwidth (ce copy (read + write))", "measured"),
        ("hbm", "HBM bandwidth (read-only kernel)", "measured"),
        ("hbm", "HBM bandwidth (sm copy (read + write))", "measured"),
        ("hbm", "HBM bandwidth (write-only kernel)", "measured"),
    ]
    spec = {f.name: f.value for f in ref_fs if f.provenance == "spec"}
    assert spec["HBM bandwidth"] == 4.8e12 and spec["fp8 dense"] == 1979e12 and spec["fp64 dense"] == 67e12


# ---------------------------------------------------------------- practices

def _curve(name, value, unit="B", size=None):
    return Fact("curve", name, value, unit, "measured", basis="bandwidth" if size else "", size=size)


HALF = ": half of its peak from"
BATCH = " messages (measured): batch smaller transfers."
LEAVE = " blocks for 90 % of its peak (measured): leave the other SMs to compute when overlapping."


def test_practices_are_these_sentences():
    fs = [
        _curve("NVLink p2p_read ce", 1e9, "B/s", 4096),  # a figure at a size, not a half-peak one
        _curve("NVLink p2p_read ce" + HALF, 8388608.0),
        _curve("NVLink p2p_read ce (ungated)" + HALF, 65536.0),  # ungated: left out
        _curve("NVLink p2p_write sm blocks=4" + HALF, 4096.0),  # a swept parameter: left out
        Fact("nccl", "all_reduce nccl fp32" + HALF, 8388608.0, "B", "measured"),  # not a copy curve
        _curve("NVLink p2p_write sm" + HALF, 65536.0),
        Fact("saturation", "red p2p_write: blocks for 90% of its peak", 16.0, "blocks", "measured",
             basis="peak 331.8 GB/s"),
        Fact("saturation", "sm p2p_read: blocks for 90% of its peak", 8.0, "blocks", "measured",
             basis="peak 376.2 GB/s"),
        Fact("hbm", "HBM bandwidth", 4.8e12, "B/s", "spec"),
        Fact("hbm", "HBM bandwidth (ce copy (read + write))", 4241.4e9, "B/s", "measured", "clock not sampled"),
        Fact("hbm", "HBM bandwidth (read-only kernel)", 4510.3e9, "B/s", "measured", "clock not sampled"),
        Fact("compute", "bf16 dense", 989.5e12, "FLOP/s", "spec"),
    ]
    assert E.practices(fs) == [
        "NVLink p2p_read ce reaches half its peak at 8 MiB" + BATCH,
        "NVLink p2p_write sm reaches half its peak at 64 KiB" + BATCH,
        "red p2p_write needs 16" + LEAVE,
        "sm p2p_read needs 8" + LEAVE,
        "Plan on 4510.3 GB/s of HBM bandwidth, not the spec's 4800.0 GB/s: 94% of it is what a kernel here "
        "reached (measured).",  # 4510.3 / 4800 = 0.9397
    ]


def test_practices_need_both_a_measured_and_a_spec_hbm_figure():
    spec = Fact("hbm", "HBM bandwidth", 3.35e12, "B/s", "spec")
    meas = Fact("hbm", "HBM bandwidth (read-only kernel)", 2.68e12, "B/s", "measured")
    assert E.practices([spec]) == []
    assert E.practices([meas]) == []
    assert E.practices([meas, spec]) == ["Plan on 2680.0 GB/s of HBM bandwidth, not the spec's 3350.0 GB/s: 80% of "
                                         "it is what a kernel here reached (measured)."]


def test_practices_are_at_most_eight():
    """Nine sentences' worth of figures: the first eight, the HBM one (last) dropped."""
    sizes = [4096, 8192, 16384, 32768, 65536, 131072, 262144]
    words = ["4 KiB", "8 KiB", "16 KiB", "32 KiB", "64 KiB", "128 KiB", "256 KiB"]
    fs = [_curve(f"NVLink p2p_read m{i}" + HALF, float(s)) for i, s in enumerate(sizes)]
    fs += [Fact("saturation", "tma p2p_read: blocks for 90% of its peak", 16.0, "blocks", "measured"),
           Fact("hbm", "HBM bandwidth", 4.8e12, "B/s", "spec"),
           Fact("hbm", "HBM bandwidth (read-only kernel)", 4.8e12, "B/s", "measured")]
    assert E.practices(fs) == [f"NVLink p2p_read m{i} reaches half its peak at {w}" + BATCH
                               for i, w in enumerate(words)] + ["tma p2p_read needs 16" + LEAVE]


# ---------------------------------------------------------------- brief

def test_brief_of_the_small_profile_is_exactly_this(small):
    """It fits: no line dropped, no '(more' line; short: the spec-only fp64/fp32 roofs
    are not a 'Dense compute' line (the measured fp8:e4m3 is no listed data type)."""
    assert E.brief(small, E.facts(small)) == (
        f"Machine: 2 x Mystery GPU, Hopper, compute capability 9.0, 1 host(s) (132 SMs, 150.8 GB); "
        f"linkroof profile {PID}, {WORDS}.\n"
        f"{WHOSE}\n"
        "HBM: 4295.0 GB/s read-only kernel (measured, sustained clock at 1755 MHz)\n"
        "NVLink per GPU, one direction: spec 450.0 GB/s\n"
        "host link per GPU, one direction: spec 63.0 GB/s\n")


def test_brief_of_no_figures_is_its_two_opening_lines(ref):
    assert E.brief(ref, []) == f"Machine: unknown GPUs; linkroof profile {PID}, {WORDS}.\n{WHOSE}\n"


def test_brief_of_the_reference_is_cut_with_a_more_line(ref, ref_fs):
    text = E.brief(ref, ref_fs)
    lines = text.split("\n")
    assert lines[2] == "HBM: 4510.3 GB/s read-only kernel (measured, clock not sampled); spec 4800.0 GB/s"
    assert lines[3] == ("Dense compute: bf16 851 TFLOP/s measured (spec 990 TFLOP/s); fp16 814 TFLOP/s measured "
                        "(spec 990 TFLOP/s); tf32 434 TFLOP/s measured (spec 494 TFLOP/s); fp32 65 TFLOP/s measured "
                        "(spec 67 TFLOP/s); fp64 65 TFLOP/s measured (spec 67 TFLOP/s) [clock not sampled]")
    assert lines[-3:] == ["  NVLink p2p_write ce: 1.74/25.8/186/344/394; half peak from 2 MiB",
                          "(more: linkroof export --json)", ""]
    assert "ungated" not in text and len(text.encode()) <= 2048


COPY = "Copy bandwidth, GB/s at 4 KiB/64 KiB/1 MiB/16 MiB/256 MiB messages:"


def _curves(last):
    """Five curves at 4 KiB only (1 GB/s), named c0..c4, the last name `last` x's long."""
    return [Fact("curve", f"c{i} " + "x" * k, 1e9, "B/s", "measured", basis="bandwidth", size=4096)
            for i, k in enumerate((380, 380, 380, 380, last))]


def _row_lines(last):
    return [f"  c{i} " + "x" * k + ": 1/-/-/-/-" for i, k in enumerate((380, 380, 380, 380, last))]


def test_a_brief_of_exactly_2048_bytes_is_kept_whole(ref):
    """2 opening lines (133 + 103 bytes), the copy header (67), four rows of
    2 + 4 + 380 + 10 = 396 bytes and a fifth of 2 + 4 + 137 + 10 = 153, joined by 7
    newlines and ended by one: 133 + 103 + 67 + 4 x 396 + 153 + 8 = 2048, the limit."""
    head = [f"Machine: unknown GPUs; linkroof profile {PID}, {WORDS}.", WHOSE, COPY]
    want = "\n".join(head + _row_lines(137)) + "\n"
    assert len(want.encode()) == 2048
    assert E.brief(ref, _curves(137)) == want
    # a byte more and the last row goes, a '(more' line in its place
    assert E.brief(ref, _curves(138)) == "\n".join(head + _row_lines(138)[:4] +
                                                   ["(more: linkroof export --json)"]) + "\n"
