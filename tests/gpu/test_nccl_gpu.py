"""On the accelerator (two GPUs): every collective runs and its results check out, a
corrupted result is caught, and figures land near the bundled 2xH200 reference."""

import re

import pytest

from gpuinfo import needs_two

pytestmark = pytest.mark.gpu
NVLINK_DATA = 450e9  # H200 NVLink 4, 18 links, one direction: the data rate, not the line rate


def reference(coll: str, nbytes: int) -> float:
    """The bundled 2xH200 profile's fp32 out-of-place time for this collective and size."""
    from linkroof.profiler.session import bundled_profile

    return next(m.median_s for m in bundled_profile().measurements
                if m.spec.mechanism == "nccl" and m.spec.pattern == coll and m.spec.message_bytes == nbytes
                and m.spec.params.get("dtype") == "fp32" and not m.spec.params.get("in_place"))


@needs_two
@pytest.mark.parametrize("coll", ["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce",
                                  "sendrecv"])
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_every_collective_checks_out(coll, dtype):
    from linkroof.microbench import nccl

    m = nccl.collective([0, 1], coll, 8 << 20, dtype=dtype, reps=5)
    assert m.verified, m.verification
    # within 1.3x of the reference's fp32 time at this size, and under the link's data rate
    assert m.median_s < 1.3 * reference(coll, 8 << 20)
    assert m.busbw_bytes_per_s < NVLINK_DATA


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
    assert m.verified and 0.85 * 313.8e9 < m.busbw_bytes_per_s < NVLINK_DATA
    ip = nccl.collective([0, 1], "all_gather", 64 << 20, in_place=True, reps=5)
    assert ip.verified and ip.spec.params["in_place"] is True


@needs_two
def test_small_all_reduce_is_not_python_bound():
    from linkroof.microbench import nccl

    m = nccl.collective([0, 1], "all_reduce", 8, reps=50)
    # GPU time behind the gate: the reference's 8.4 us, not the 13.2 us nccl-tests sees with the host's launch
    assert m.verified and m.median_s < 1.5 * reference("all_reduce", 8)


@needs_two
@pytest.mark.parametrize("coll", ["all_reduce", "all_gather", "reduce", "sendrecv"])
def test_a_corrupted_result_is_caught(monkeypatch, coll):
    """One wrong element in a result buffer makes the figure unverified."""
    from linkroof.microbench import nccl

    original = nccl._Participant.check

    def corrupt_then_check(self):
        if self.rank == 0:  # rank 0 holds a result in every one of these collectives
            with nccl.cp().cuda.Device(self.dev):
                self.recv[:1] = nccl._to_dtype(nccl.cp().full(1, 12345.0), self.dtype)
        return original(self)

    monkeypatch.setattr(nccl._Participant, "check", corrupt_then_check)
    m = nccl.collective([0, 1], coll, 1 << 20, reps=3)
    # one wrong element in each check (the eager run's and the graph replay's)
    assert not m.verified and re.search(r"#wrong [12] of", m.verification), m.verification


@needs_two
def test_both_timing_definitions_are_recorded_and_checked():
    """The device time (the better of the gated stream and a CUDA-graph replay, whose
    result is checked too) and the per-call time of a Python loop, both labelled."""
    from linkroof.microbench import nccl

    device, launch = nccl.collective_timings([0, 1], "all_to_all", 16 << 20, reps=10)
    assert device.spec.params["timing"] == "device" and launch.spec.params["timing"] == "host_launch"
    assert device.spec.params["method"] in ("gated", "graph") and device.spec.params["other_method_median_s"] > 0
    assert device.verified and "#wrong 0 of" in device.verification
    assert device.spec.params["buffers"] == "ncclMemAlloc"
    assert launch.median_s > 0.9 * device.median_s  # the host's launch only adds
    ip, = nccl.collective_timings([0, 1], "all_reduce", 1 << 20, in_place=True, reps=10, host_launch=False)
    assert ip.verified and ip.spec.params["method"] == "gated"  # in place: repeated replays would compound
