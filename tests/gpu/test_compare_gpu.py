"""On the accelerator (two GPUs): the examples run through compare, and NVML's link
counters count the bytes that really crossed NVLink."""

import pytest

from gpuinfo import needs_two

pytestmark = pytest.mark.gpu
GiB = 1 << 30




@needs_two
def test_peer_copy_example_counters_see_one_gib():
    from linkroof.profiler.compare import run_compare

    out = run_compare("examples/peer_copy_cupy.py:ce_copy", "examples/peer_copy_cupy.py:make_inputs",
                      reference="examples/peer_copy_cupy.py:sm_copy", workload_path="examples/peer_copy.toml",
                      reps=10, warmup=3)
    r = out["result"]
    assert r.checked.startswith("matches")
    assert r.link_bytes() == pytest.approx(GiB, rel=0.01)
    assert 0.5 < out["placements"][0].fraction_of_roofline <= 1.0001


@needs_two
def test_all_reduce_counter_bytes_match_the_ring_formula():
    from linkroof import probe
    from linkroof.microbench import nccl
    from linkroof.profiler.compare import NvmlCounters
    from linkroof.roofline.workload import collective_link_bytes

    topo = probe()
    counters = NvmlCounters([0, 1], {g.index: len(g.nvlinks) for g in topo.gpus})
    size = 256 << 20

    def sent(reps: int) -> float:
        before = counters.read()
        nccl.collective([0, 1], "all_reduce", size, reps=reps)
        return counters.read()[0]["nvlink_tx"] - before[0]["nvlink_tx"]

    # the difference of two runs cancels the warm-ups and the checked run
    per_call = (sent(30) - sent(10)) / 20
    assert per_call == pytest.approx(collective_link_bytes("all_reduce", size, 2), rel=0.05)
