"""`linkroof export`'s figures pinned exactly, for the rest of the mutants mutmut left
alive in roofline/export.py's facts, spec_lines and _v: the Fact records of measured
links, copy and NCCL curves at the export's message sizes, launch and sync terms and a
block-count sweep, all worked out by hand from a small profile of power-of-two sizes
and times (so every bandwidth is exact), the lines spec_lines writes, and _v's TFLOP/s."""

import dataclasses

import pytest

import factories as F
from linkroof.profiler.session import bundled_profile
from linkroof.roofline import export as E
from linkroof.roofline.export import Fact
from linkroof.schema import ClockState
from test_export_survivors_facts import MYSTERY_MACHINE, NVLINK_BASIS, PCIE5_X16, PCIE_BASIS

BURST = ClockState(state="burst", samples=5, sm_mhz_median=1980.0)
SUSTAINED = ClockState(state="sustained", samples=12, sm_mhz_median=1755.4)
GiB = 1 << 30


@pytest.fixture(scope="module")
def ref():
    return bundled_profile()


def _mystery(ref, measurements):
    """The recorded 2 x H200 topology (GPUs 0 and 1 joined through NVSwitch) with GPU 0
    renamed out of the spec table (compute roofs derived from SMs and clock, no HBM
    ceiling), holding `measurements`."""
    t = ref.topology
    g0 = dataclasses.replace(t.gpus[0], name="Mystery GPU")
    topo = dataclasses.replace(t, gpus=(g0,) + t.gpus[1:],
                               ceilings=tuple(c for c in t.ceilings if not c.name.endswith(".hbm")))
    return dataclasses.replace(ref, topologies=(topo,), measurements=tuple(measurements))


def _timed(m, clock):
    return dataclasses.replace(m, clock=clock)


@pytest.fixture(scope="module")
def links(ref):
    """- a copy-engine peer write (GPU 0 -> 1, NVLink) at 4 KiB in 2^-20 s (2^32 B/s),
      1 MiB in 2^-15 s (2^35 B/s) and 256 MiB in 2^-8 s (2^36 B/s);
    - an out-of-place fp32 all-reduce on 2 ranks (busbw = algbw) of 64 KiB in 2^-14 s
      (2^30 B/s) and 16 MiB in 2^-9 s (2^33 B/s);
    - an SM peer read of 64 MiB with 1 block in 2^-6 s (2^32 B/s), 4 and 8 blocks in
      2^-8 s (2^34 B/s): one size, so no curve, but a block sweep;
    - two graph-launch figures, 2 us at a burst clock and 1 us at a sustained one, and
      one mbarrier sync of 0.5 us, its clock not sampled."""
    ce = [F.measurement(nbytes=4096, times=(2**-20,) * 3), F.measurement(nbytes=1 << 20, times=(2**-15,) * 3),
          F.measurement(nbytes=1 << 28, times=(2**-8,) * 3)]
    nccl = [F.collective(nbytes=1 << 16, seconds=2**-14), F.collective(nbytes=1 << 24, seconds=2**-9)]
    sm = [F.measurement("p2p_read_bandwidth", "sm", "p2p_read", nbytes=1 << 26, times=(t,) * 3, blocks=b)
          for b, t in ((1, 2**-6), (4, 2**-8), (8, 2**-8))]
    terms = [_timed(F.measurement("launch_latency", "launch", "graph", devices=(0,), nbytes=0, times=(2e-6,) * 3),
                    BURST),
             _timed(F.measurement("launch_latency", "launch", "graph", devices=(0,), nbytes=0, times=(1e-6,) * 3),
                    SUSTAINED),
             F.measurement("sync_latency", "sync", "mbarrier", devices=(0,), nbytes=0, times=(5e-7,) * 3)]
    return _mystery(ref, ce + nccl + sm + terms)


CE = "NVLink p2p_write ce"
AR = "all_reduce nccl fp32"
HALF = ": half of its peak from"


def _at(topic, name, value, size):
    return Fact(topic, name, value, "B/s", "measured", basis="busbw" if topic == "nccl" else "bandwidth", size=size)


def test_facts_of_links_curves_terms_and_a_block_sweep_are_exactly_these(links):
    """By hand: measured NVLink roofs per mechanism, each the best figure with its size
    (ce 2^36 B/s at 256 MiB; nccl busbw 2^33 at 16 MiB; sm 2^34 at 64 MiB, its first
    best: 4 blocks); the ce curve at the five export sizes, interpolated in log2(size)
    (64 KiB: halfway from 2^32 to 2^35 = 4.5 x 2^32; 16 MiB: halfway from 2^35 to 2^36 =
    3 x 2^34), the all-reduce at the three sizes inside its sweep (1 MiB: 4.5 x 2^30),
    each with the size where it first reaches half its peak; the graph launch at the
    lower of its two figures (1 us) with that figure's clock; the sync; and the fewest
    blocks reaching 90 % of the SM read's 2^34 B/s peak, 4."""
    fs = E.facts(links)
    assert fs == MYSTERY_MACHINE + [
        Fact("link", "NVLink one direction (ce)", 2.0**36, "B/s", "measured", "clock not sampled",
             "best verified: p2p_write_bandwidth 268435456 B on GPU 0,1 (linkroof)", 1 << 28),
        Fact("link", "NVLink one direction (nccl)", 2.0**33, "B/s", "measured", "clock not sampled",
             "best verified: nccl_all_reduce fp32 16777216 B on GPU 0,1 (linkroof)", 1 << 24),
        Fact("link", "NVLink one direction (sm)", 2.0**34, "B/s", "measured", "clock not sampled",
             "best verified: p2p_read_bandwidth 67108864 B on GPU 0,1 (linkroof)", 1 << 26),
        _at("curve", CE, 2.0**32, 4096),
        _at("curve", CE, 4.5 * 2**32, 65536),
        _at("curve", CE, 2.0**35, 1 << 20),
        _at("curve", CE, 3.0 * 2**34, 16 << 20),
        _at("curve", CE, 2.0**36, 256 << 20),  # the sweep's largest size is one of the export's
        Fact("curve", CE + HALF, float(1 << 20), "B", "measured"),
        _at("nccl", AR, 2.0**30, 65536),
        _at("nccl", AR, 4.5 * 2**30, 1 << 20),
        _at("nccl", AR, 2.0**33, 16 << 20),
        Fact("nccl", AR + HALF, float(16 << 20), "B", "measured"),
        Fact("launch", "graph", 1e-6, "s", "measured", "sustained clock at 1755 MHz",
             "an empty kernel replayed from a CUDA graph (GPU time per kernel); the lowest of 2 figures in this "
             "profile (one process)"),
        Fact("sync", "cta", 5e-7, "s", "measured", "clock not sampled",
             "an mbarrier round within one SM; the one figure in this profile (one process)"),
        Fact("saturation", "sm p2p_read: blocks for 90% of its peak", 4.0, "blocks", "measured",
             basis="peak 17.2 GB/s"),
    ]


def test_a_launch_term_carries_the_clock_of_its_lowest_figure(links):
    """Either order of the two graph-launch figures: the 1 us one (sustained) is the
    term, never the 2 us one (burst); one figure alone carries its own clock."""
    rev = dataclasses.replace(links, measurements=tuple(reversed(links.measurements)))
    for p in (links, rev):
        (launch,) = [f for f in E.facts(p) if f.topic == "launch"]
        assert (launch.value, launch.clock) == (1e-6, "sustained clock at 1755 MHz")
    burst = [m for m in links.measurements if m.clock == BURST]
    (launch,) = [f for f in E.facts(_mystery(links, burst)) if f.topic == "launch"]
    assert launch == Fact("launch", "graph", 2e-6, "s", "measured", "burst clock at 1980 MHz",
                          "an empty kernel replayed from a CUDA graph (GPU time per kernel); the one figure in this "
                          "profile (one process)")


def test_a_spec_link_roof_never_takes_a_measured_figures_size(ref):
    """A peer write whose mechanism is empty (as an import may leave it): its measured
    NVLink roof has no mechanism in its name, like the spec roof beside it; only the
    measured one has the figure's size (1 GiB at 2^-4 s: 2^34 B/s) and a clock."""
    m = F.measurement(mechanism="", nbytes=GiB, times=(2**-4,) * 3)
    fs = [f for f in E.facts(_mystery(ref, [m])) if f.topic == "link"]
    assert fs == [
        Fact("link", "NVLink one direction", 450e9, "B/s", "spec", basis=NVLINK_BASIS),
        Fact("link", "host link one direction", pytest.approx(PCIE5_X16, rel=1e-12), "B/s", "spec",
             basis=PCIE_BASIS),
        Fact("link", "NVLink one direction", 2.0**34, "B/s", "measured", "clock not sampled",
             "best verified: p2p_write_bandwidth 1073741824 B on GPU 0,1 (linkroof)", GiB),
    ]


# ---------------------------------------------------------------- spec_lines

def test_spec_lines_of_the_links_profile(links):
    """Not short by default: the spec-only fp32/fp64 roofs make a Dense compute line
    (66.9 and 33.5 TFLOP/s rounded); measured NVLink mechanisms fastest first."""
    assert E.spec_lines(links, E.facts(links)) == [
        "Dense compute: fp32 67 TFLOP/s spec; fp64 33 TFLOP/s spec",
        "NVLink per GPU, one direction: spec 450.0 GB/s; measured ce 68.7 GB/s, sm 17.2 GB/s, nccl 8.6 GB/s "
        "[clock not sampled]",
        "host link per GPU, one direction: spec 63.0 GB/s",
        "SM blocks to reach 90 % of a mechanism's peak: sm p2p_read 4",
        "NCCL busbw, 2 ranks, GB/s at 4 KiB/64 KiB/1 MiB/16 MiB/256 MiB:",
        "  all_reduce nccl fp32: -/1.07/4.83/8.59/-",
        "Launch: graph 1000 ns; sync: cta 500 ns",
        "Copy bandwidth, GB/s at 4 KiB/64 KiB/1 MiB/16 MiB/256 MiB messages:",
        "  NVLink p2p_write ce: 4.29/19.3/34.4/51.5/68.7; half peak from 1 MiB",
    ]
    assert E.spec_lines(links, E.facts(links), short=True)[0] == (
        "NVLink per GPU, one direction: spec 450.0 GB/s; measured ce 68.7 GB/s, sm 17.2 GB/s, nccl 8.6 GB/s "
        "[clock not sampled]")


def test_spec_lines_hbm_names_the_best_measured_mechanism_against_the_spec(ref):
    """The best measured HBM figure (a copy counted read + write, above a spec of 4 TB/s)
    named by its innermost mechanism, the spec beside it: the spec's own figure, not the
    best HBM figure of any provenance."""
    fs = [Fact("hbm", "HBM bandwidth", 4.0e12, "B/s", "spec"),
          Fact("hbm", "HBM bandwidth (read-only kernel)", 3.9e12, "B/s", "measured", "clock not sampled"),
          Fact("hbm", "HBM bandwidth (ce copy (read + write))", 4241.4e9, "B/s", "measured",
               "burst clock at 1980 MHz")]
    assert E.spec_lines(ref, fs) == ["HBM: 4241.4 GB/s read + write (measured, burst clock at 1980 MHz); "
                                     "spec 4000.0 GB/s"]


def test_spec_lines_hbm_without_a_spec_and_a_mechanism_ending_in_x(ref):
    """No spec figure: the line ends at the measured tag. Only the closing parenthesis
    is taken off the mechanism ('STREAM-X' keeps its X)."""
    fs = [Fact("hbm", "HBM bandwidth (STREAM-X)", 3.2e12, "B/s", "measured", "sustained clock at 1755 MHz")]
    assert E.spec_lines(ref, fs) == ["HBM: 3200.0 GB/s STREAM-X (measured, sustained clock at 1755 MHz)"]


# ---------------------------------------------------------------- _v

def test_v_gives_flop_rates_in_whole_tflops():
    """989.5e12 / 1e12 = 989.5 exactly, rounded half to even: 990; 1.5e12: 2."""
    def v(x):
        return E._v(Fact("compute", "bf16 dense", x, "FLOP/s", "spec"))

    assert v(989.5e12) == "990 TFLOP/s"
    assert v(1.5e12) == "2 TFLOP/s"
    assert v(66.90816e12) == "67 TFLOP/s"
