"""On the accelerator (two GPUs): every collective runs and its results check out;
all-reduce busbw lands between half the nccl-tests reference and the link's line rate."""

import pytest

from gpuinfo import needs_two

pytestmark = pytest.mark.gpu




@needs_two
@pytest.mark.parametrize("coll", ["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce",
                                  "sendrecv"])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_every_collective_checks_out(coll, dtype):
    from linkroof.microbench import nccl

    m = nccl.collective([0, 1], coll, 8 << 20, dtype=dtype, reps=5)
    assert m.verified, m.verification
    assert m.bandwidth_bytes_per_s > 1e9


@needs_two
@pytest.mark.parametrize("coll", ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce"])
def test_in_place_collectives_check_out_after_many_repetitions(coll):
    """In place, timed repetitions of a reduction accumulate; the checked run starts over
    (a full sweep on 2xH200 once flagged every in-place reduction as wrong)."""
    from linkroof.microbench import nccl

    m = nccl.collective([0, 1], coll, 1 << 20, in_place=True, reps=20)
    assert m.verified and "#wrong 0 of" in m.verification, m.verification


@needs_two
def test_all_reduce_bandwidth_and_in_place():
    from linkroof.microbench import nccl

    m = nccl.collective([0, 1], "all_reduce", 512 << 20, reps=10)
    assert m.verified and 0.5 * 313.8e9 < m.busbw_bytes_per_s < 478.125e9
    ip = nccl.collective([0, 1], "all_gather", 64 << 20, in_place=True, reps=5)
    assert ip.verified and ip.spec.params["in_place"] is True


@needs_two
def test_small_all_reduce_is_not_python_bound():
    from linkroof.microbench import nccl

    m = nccl.collective([0, 1], "all_reduce", 8, reps=50)
    assert m.verified and m.median_s < 50e-6  # nccl-tests: 13.2 us
