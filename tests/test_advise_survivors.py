"""Guards advise's details that mutmut's surviving mutants of roofline/advise.py changed
unseen: the launch-shape keys a kernel is described by (unroll, stages), the swept
size named when a figure is held flat or scaled down, the data type a collective's row
is timed by (its curve's, fp32 when unnamed), NCCL curves kept out of the
outside/interpolated notes, the TMA row's blocks needed, an infinite time for no
bandwidth, and the exact no-sweep note (with and without a data type)."""

import factories
from linkroof.roofline import advise as A
from linkroof.roofline.model import Curve, MachineModel

MIB = 1 << 20


def _model(*curves):
    return MachineModel("H200", None, [], list(curves))


def test_unroll_and_stages_are_part_of_the_launch_shape():
    prof = factories.profile([factories.measurement("p2p_write_bandwidth", "sm", "p2p_write", nbytes=MIB,
                                                    sweep=True, blocks=8, unroll=4, stages=3)])
    assert A._kernels(prof, "sm", "p2p_write", MIB) == \
        "sm at 1 MiB: blocks 8, unroll 4, stages 3, many messages back to back in one launch"


def test_held_and_scaled_figures_name_the_sweeps_own_ends():
    c = Curve("nvlink", "ce", "p2p_write", [(MIB, 10e9), (2 * MIB, 20e9), (4 * MIB, 40e9)])
    assert A._where(c, 8 * MIB) == "held flat from its largest swept size, 4 MiB"
    assert A._where(c, MIB // 2) == "scaled down from its smallest swept size, 1 MiB, at the same time per message"


def _nccl_profile():
    return factories.profile([factories.collective("all_gather", MIB, 1e-4),
                              factories.collective("all_gather", MIB, 2e-4, dtype="bf16")])


def test_a_bf16_curves_row_is_timed_by_the_bf16_figure():
    """fp32 figure 100 us, bf16 figure 200 us at 1 MiB: the bf16 curve's row takes 200 us."""
    c = Curve("nvlink", "nccl", "all_gather", [(MIB, 50e9), (4 * MIB, 100e9)], (("dtype", "bf16"),))
    [row] = A.advise(_nccl_profile(), MIB, "all_gather", model=_model(c)).mechanisms
    assert (row.dtype, row.time_s, row.how) == ("bf16", 2e-4, "measured at this size")


def test_a_curve_naming_no_data_type_is_fp32():
    c = Curve("nvlink", "nccl", "all_gather", [(MIB, 50e9), (4 * MIB, 100e9)])
    for out in (A.advise(_nccl_profile(), MIB, "all_gather", model=_model(c)),
                A.advise(_nccl_profile(), MIB, "all_gather", model=_model(c), dtype="fp32")):
        [row] = out.mechanisms
        assert (row.dtype, row.time_s, row.how) == ("fp32", 1e-4, "measured at this size")


def test_nccl_curves_get_no_outside_or_interpolated_note():
    c = Curve("nvlink", "nccl", "all_gather", [(MIB, 50e9), (4 * MIB, 100e9)], (("dtype", "fp32"),))
    for size in (8 * MIB, 2 * MIB):
        out = A.advise(factories.profile([]), size, "all_gather", model=_model(c))
        assert len(out.mechanisms) == 1 and out.notes == []


def test_a_tma_row_says_the_blocks_it_needed():
    """TMA block sweep: 8 blocks at 0.5 GiB/ms, 16 at 1 GiB/ms: half the peak at 8, so 16."""
    prof = factories.profile([
        factories.measurement("p2p_write_bandwidth", "tma", "p2p_write", times=(2e-3,) * 3, blocks=8),
        factories.measurement("p2p_write_bandwidth", "tma", "p2p_write", times=(1e-3,) * 3, blocks=16)])
    c = Curve("nvlink", "tma", "p2p_write", [(MIB, 10e9), (4 * MIB, 40e9)])
    [row] = A.advise(prof, MIB, "p2p_write", model=_model(c)).mechanisms
    assert row.blocks_needed == 16


def test_no_bandwidth_is_an_infinite_time():
    c = Curve("nvlink", "ce", "p2p_write", [(MIB, 0.0), (4 * MIB, 0.0)])
    [row] = A.advise(factories.profile([]), MIB, "p2p_write", model=_model(c)).mechanisms
    assert row.time_s == float("inf")


def test_the_no_sweep_note_word_for_word():
    m = _model(Curve("nvlink", "ce", "p2p_write", [(MIB, 1e9)]), Curve("nvlink", "ce", "p2p_read", [(MIB, 1e9)]))
    prof = factories.profile([])
    assert A.advise(prof, MIB, "zigzag", model=m).notes == \
        ["no message-size sweep for pattern 'zigzag' in this profile (sweeps: p2p_read, p2p_write)"]
    assert A.advise(prof, MIB, "zigzag", model=m, dtype="bf16").notes == \
        ["no message-size sweep for pattern 'zigzag' in bf16 in this profile (sweeps: p2p_read, p2p_write)"]
