"""On one GPU: the CUPTI timeline counts a call's kernels, and Nsight Compute's counters
(compare --counters) see the bytes and FLOPs a known kernel must move and do."""

import os

import pytest

from gpuinfo import torch_cuda_or_skip

pytestmark = pytest.mark.gpu
torch = torch_cuda_or_skip()

PROGRAMS = "examples/programs_torch.py"


def needs_ncu():
    from linkroof.profiler.ncu import find_ncu

    if find_ncu() is None:
        pytest.skip("no ncu here")


def needs_cupti():
    try:
        import cupti  # noqa: F401
    except ImportError:
        pytest.skip("no cupti-python here (linkroof[cupti])")


def test_timeline_counts_every_kernel_of_a_chain(monkeypatch):
    needs_cupti()
    monkeypatch.setenv("LINKROOF_EXAMPLE_CHAIN", "37")
    from linkroof.profiler.compare import run_compare

    out = run_compare(f"{PROGRAMS}:chain", f"{PROGRAMS}:chain_inputs", reps=5, warmup=2, counters_on=False)
    t = out.result.timeline
    assert t is not None, out.result.timeline_note
    assert t.kernels_per_call == 37
    assert 0 < t.busy_s < out.result.median_s


def test_ncu_counts_an_elementwise_kernels_bytes_and_flops(monkeypatch):
    needs_ncu()
    n = 64 << 20  # fp32 elements: 256 MiB in, 256 MiB out, one multiply each
    monkeypatch.setenv("LINKROOF_EXAMPLE_BYTES", str(4 * n))
    from linkroof.profiler import ncu

    rep = ncu.count(f"{PROGRAMS}:scale", f"{PROGRAMS}:scale_inputs", warmup=2, calls=1)
    totals = rep.totals()
    assert totals["launches"] == 1
    assert totals["dram_read_bytes"] == pytest.approx(4 * n, rel=0.02)
    # what the kernel wrote last is still in L2 (50 MB on an H200) when it ends: ncu counts
    # only what reached DRAM by then (1 GiB: 1.049 GB of 1.074 GB written)
    assert 4 * n - 60e6 < totals["dram_write_bytes"] <= 4 * n * 1.01
    assert totals.get("flops:fp32", 0.0) == pytest.approx(n, rel=0.01)
    assert 0 < totals["gpu_time_s"] < 0.01


def test_ncu_counts_a_bf16_gemms_tensor_flops(monkeypatch):
    needs_ncu()
    monkeypatch.setenv("LINKROOF_EXAMPLE_MNK", "1024")
    from linkroof.profiler import ncu

    totals = ncu.count(f"{PROGRAMS}:gemm", f"{PROGRAMS}:gemm_inputs", warmup=2, calls=2).totals()
    assert totals.get("flops:bf16", 0.0) == pytest.approx(2 * 1024 ** 3, rel=0.02)


def test_compare_counters_place_each_kernel_without_a_workload(monkeypatch):
    needs_ncu()
    monkeypatch.setenv("LINKROOF_EXAMPLE_BYTES", str(256 << 20))
    from linkroof.profiler.compare import run_compare
    from linkroof.roofline.baseline import COUNTED

    out = run_compare(f"{PROGRAMS}:scale", f"{PROGRAMS}:scale_inputs", reps=10, warmup=3, count_kernels=True)
    assert out.kernel_counts, out.counters_note
    call = out.placements[0]
    assert call.workload.source == COUNTED
    assert 2 * (256 << 20) - 60e6 < call.workload.hbm_bytes <= 2 * (256 << 20) * 1.01  # the last writes stay in L2
    assert call.limiter == "memory"
    kernels = [p for p in out.placements[1:] if p.workload.source == COUNTED]
    assert kernels and all(p.measured_time_s > 0 for p in kernels)
    if out.result.timeline is not None:
        assert any(k.counters for k in out.result.timeline.kernels)


def test_counters_say_why_not_without_ncu(monkeypatch):
    monkeypatch.setenv("LINKROOF_NCU", os.devnull + ".missing")
    from linkroof.profiler import ncu

    with pytest.raises(ncu.CountersUnavailable, match="not found"):
        ncu.count(f"{PROGRAMS}:scale", f"{PROGRAMS}:scale_inputs")
