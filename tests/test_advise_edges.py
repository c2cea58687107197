"""advise's rules at their edges, as facts in their own units (issue 44: the mutants of
roofline/advise.py that survived mutmut 3.8.1): a collective's row is timed by its own
data type's NCCL figure and its bandwidth is the bus bandwidth of that time; a row whose
data type has no figure is timed from its curve; the sizes at a sweep's ends are
measured, not outside it; the launch shape said is the sweep point nearest the size."""

import pytest

import factories
from linkroof.profiler.session import bundled_profile
from linkroof.roofline import advise as A
from linkroof.roofline.model import Curve, MachineModel

REF = bundled_profile()
MIB = 1 << 20


def _nccl(out, dtype):
    return next(m for m in out.mechanisms if m.mechanism.startswith("nccl") and m.dtype == dtype)


def _median(pattern, size, dtype):
    """The bundled profile's device-timed NCCL median at this size and data type, read here."""
    [m] = [m for m in REF.measurements if m.spec.mechanism == "nccl" and m.spec.pattern == pattern
           and m.spec.message_bytes == size and m.spec.params.get("dtype") == dtype
           and m.spec.params.get("timing") == "device" and not m.spec.params.get("in_place")]
    return m.median_s


def test_a_collectives_bandwidth_is_the_bus_bandwidth_of_its_measured_time():
    """all_gather of 1 MiB on 2 ranks: 10.549 us measured, so 99.4 GB/s of algbw and half
    of it, 49.7 GB/s, on the bus ((n - 1) / n = 1/2)."""
    row = _nccl(A.advise(REF, MIB, "all_gather"), "fp32")
    t = _median("all_gather", MIB, "fp32")
    assert round(t * 1e6, 3) == 10.549
    assert (row.time_s, row.how) == (t, "measured at this size")
    assert round(row.bandwidth_bytes_per_s / 1e9, 1) == 49.7
    assert row.bandwidth_bytes_per_s == pytest.approx(MIB / t / 2, rel=1e-12)


def test_each_data_types_row_is_timed_by_its_own_figure():
    out = A.advise(REF, MIB, "all_reduce")
    assert sorted(m.dtype for m in out.mechanisms if m.mechanism.startswith("nccl")) == ["bf16", "fp16", "fp32"]
    for dtype in ("bf16", "fp16", "fp32"):
        row = _nccl(out, dtype)
        assert (row.time_s, row.how, row.mechanism) == (_median("all_reduce", MIB, dtype), "measured at this size",
                                                         f"nccl {dtype}")
    only = A.advise(REF, MIB, "all_reduce", dtype="bf16")
    assert [m.dtype for m in only.mechanisms if m.mechanism.startswith("nccl")] == ["bf16"]


def test_a_curve_without_a_data_type_is_fp32_and_is_asked_for_as_fp32():
    """An NCCL curve whose figures named no data type (an import's): fp32, its time the
    fp32 figure's; asking for fp32 keeps it."""
    model = MachineModel.from_profile(REF)
    ag = next(c for c in model.curves if c.mechanism == "nccl" and c.pattern == "all_gather")
    bare = MachineModel(model.gpu_name, model.spec, model.roofs, [Curve(ag.link, "nccl", "all_gather", ag.points)])
    for out in (A.advise(REF, MIB, "all_gather", model=bare), A.advise(REF, MIB, "all_gather", model=bare,
                                                                         dtype="fp32")):
        [row] = out.mechanisms
        assert (row.dtype, row.time_s) == ("fp32", _median("all_gather", MIB, "fp32"))


def test_a_data_type_with_no_nccl_figure_is_timed_from_its_curve():
    """A bf16 all_gather curve where the profile's NCCL figures are all fp32: the row's
    time is its size over the curve's bandwidth there, never the fp32 figure's."""
    model = MachineModel.from_profile(REF)
    ag = next(c for c in model.curves if c.mechanism == "nccl" and c.pattern == "all_gather")
    bf16 = Curve(ag.link, "nccl", "all_gather", [(MIB, 50e9), (4 * MIB, 100e9)], (("dtype", "bf16"),))
    [row] = A.advise(REF, MIB, "all_gather", model=MachineModel(model.gpu_name, model.spec, model.roofs,
                                                                 [bf16])).mechanisms
    assert (row.dtype, row.time_s, row.bandwidth_bytes_per_s) == ("bf16", MIB / 50e9, 50e9)
    assert row.how == "size / the bandwidth at this size (measured at this size)"


def _copies(points, mechanism="ce"):
    return MachineModel("H200", None, [], [Curve("nvlink", mechanism, "p2p_write", points)])


def test_a_curve_of_no_bandwidth_takes_forever():
    [row] = A.advise(REF, MIB, "p2p_write", model=_copies([(MIB, 0.0), (4 * MIB, 0.0)])).mechanisms
    assert row.time_s == float("inf")
    [row] = A.advise(REF, MIB, "p2p_write", model=_copies([(MIB, 0.5), (4 * MIB, 0.5)])).mechanisms
    assert row.time_s == MIB / 0.5  # half a byte a second is slow, not nothing


def test_one_byte_is_a_size_and_none_is_not():
    [row] = A.advise(REF, 1, "p2p_write", model=_copies([(1, 1e6), (MIB, 1e9)])).mechanisms
    assert row.time_s == 1e-6
    with pytest.raises(ValueError, match="a message size must be at least 1 byte, got 0"):
        A.advise(REF, 0, "p2p_write")


def test_no_sweep_for_the_pattern_says_which_there_are():
    out = A.advise(REF, MIB, "zigzag", model=_copies([(MIB, 1e9)]))
    assert out.mechanisms == [] and out.notes == ["no message-size sweep for pattern 'zigzag' in this profile "
                                                  "(sweeps: p2p_write)"]
    out = A.advise(REF, MIB, "zigzag", model=MachineModel("H200", None, [], []))
    assert out.notes == ["no message-size sweep for pattern 'zigzag' in this profile (run linkroof bench with the "
                         "sweep family)"]


def test_the_sweeps_own_ends_are_measured_and_inside_it():
    """Swept from 1 to 4 MiB: at 1 MiB and at 4 MiB the figure is measured there and no
    note calls either end outside the sweep; 2 MiB (the next swept size is not it) is
    interpolated; 512 KiB and 8 MiB are outside."""
    model = _copies([(MIB, 10e9), (2 * MIB, 20e9), (4 * MIB, 40e9)])
    for size in (MIB, 4 * MIB):
        out = A.advise(REF, size, "p2p_write", model=model)
        assert out.mechanisms[0].how == "size / the bandwidth at this size (measured at this size)" and not out.notes
    c = model.curves[0]
    assert A._where(c, 3 * MIB) == "interpolated between the sweep's sizes"
    assert A._where(c, MIB // 2) == "scaled down from its smallest swept size, 1 MiB, at the same time per message"
    assert A._where(c, 8 * MIB) == "held flat from its largest swept size, 4 MiB"
    assert A._where(Curve("nvlink", "ce", "p2p_write", [(MIB, 1.0), (4 * MIB, 2.0)]), 2 * MIB) == \
        "interpolated between the sweep's sizes"  # under the second swept size, above the first
    assert (A._within(c, MIB), A._within(c, 4 * MIB), A._within(c, MIB - 1), A._within(c, 4 * MIB + 1)) == \
        (True, True, False, False)


def test_the_launch_shape_said_is_the_sweeps_point_nearest_the_size_in_its_own_pattern():
    """SM write sweeps at 1 and 4 MiB (64 then 132 blocks) and an SM read sweep at 2 MiB:
    for 2 MiB the write's nearest point is a tie (1 and 4 MiB, equally far in log2 from
    2 MiB): the first met is kept; the read's own 2 MiB point is never taken for a write.
    A point with no shape recorded says so."""
    ms = [factories.measurement("p2p_write_bandwidth", "sm", "p2p_write", nbytes=MIB, sweep=True, blocks=64),
          factories.measurement("p2p_write_bandwidth", "sm", "p2p_write", nbytes=4 * MIB, sweep=True, blocks=132),
          factories.measurement("p2p_read_bandwidth", "sm", "p2p_read", nbytes=2 * MIB, sweep=True, blocks=8)]
    prof = factories.profile(ms)
    assert A._kernels(prof, "sm", "p2p_write", 2 * MIB) == \
        "sm at 1 MiB: blocks 64, many messages back to back in one launch"
    assert A._kernels(prof, "sm", "p2p_write", 3 * MIB) == \
        "sm at 4 MiB: blocks 132, many messages back to back in one launch"
    bare = factories.profile([factories.measurement("p2p_write_bandwidth", "sm", "p2p_write", nbytes=MIB, sweep=True)])
    assert A._kernels(bare, "sm", "p2p_write", MIB) == ("sm at 1 MiB: the benchmark's default launch shape (not "
                                                        "recorded in this profile), many messages back to back in "
                                                        "one launch")


def test_a_zero_second_nccl_figure_is_not_a_time():
    """An NCCL figure of 0 s at 1 MiB (a broken record, trusted by its flags): the row is
    timed from its curve (1 MiB at 50 GB/s: 20.97 us), never divided by zero."""
    prof = factories.profile([factories.collective("all_gather", MIB, 0.0),
                              factories.collective("all_gather", 4 * MIB, 1e-4)])
    model = MachineModel("H200", None, [], [Curve("nvlink", "nccl", "all_gather", [(MIB, 50e9), (4 * MIB, 100e9)],
                                                  (("dtype", "fp32"),))])
    [row] = A.advise(prof, MIB, "all_gather", model=model).mechanisms
    assert (row.time_s, row.how) == (MIB / 50e9, "size / the bandwidth at this size (measured at this size)")
