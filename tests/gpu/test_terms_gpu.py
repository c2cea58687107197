"""On the accelerator: the cost model's terms (launch, barriers, signals between GPUs,
reductions into peer memory, GEMM beside communication) run, verify, and fall in
physically possible ranges; their checks catch what they must."""

import pytest

from gpuinfo import needs_two

pytestmark = pytest.mark.gpu
MiB = 1 << 20
NVLINK_DATA = 450e9  # H200 NVLink 4, 18 links: data rate one direction


def by(ms, **kw):
    out = [m for m in ms if all(getattr(m.spec, k) == v for k, v in kw.items())]
    assert out, f"no measurement with {kw}"
    return out[0]


def test_launch_costs_order_and_range():
    pytest.importorskip("cupy")
    from linkroof.microbench import terms

    ms = terms.launch_costs(0, reps=5)
    assert all(m.verified for m in ms)
    stream, graph = by(ms, pattern="stream").median_s, by(ms, pattern="graph").median_s
    issue, trip = by(ms, pattern="host_issue").median_s, by(ms, pattern="host_roundtrip").median_s
    assert 0.2e-6 < graph <= stream * 1.2 < 20e-6, (graph, stream)
    assert 0.5e-6 < issue < 50e-6
    assert trip > stream and trip < 200e-6  # a round trip waits for completion: never below the GPU's own time


def test_barriers_verified_and_ordered():
    pytest.importorskip("cupy")
    from linkroof.microbench import terms

    ms = terms.barrier_costs(0, reps=3, rounds=5000)
    assert all(m.verified for m in ms), [m.verification for m in ms]
    grid = by(ms, pattern="grid_barrier").median_s
    local = by(ms, pattern="syncthreads").median_s
    assert 1e-9 < local < 1e-6 and local < grid < 50e-6, (local, grid)


@needs_two
def test_signal_pingpong_between_gpus():
    pytest.importorskip("cupy")
    from linkroof.microbench import terms

    ms = terms.signal_latency(0, 1, reps=3, rounds=500)
    assert all(m.verified for m in ms), [m.verification for m in ms]
    trips = [m for m in ms if m.spec.pattern == "pingpong"]
    assert {m.spec.params["signal"] for m in trips} >= {"st.relaxed.sys", "st.release.sys"}
    for trip in trips:
        one = [m for m in ms if m.spec.pattern == "one_way" and m.spec.params["signal"] == trip.spec.params["signal"]]
        assert 0.3e-6 < trip.median_s < 50e-6 and one[0].median_s == pytest.approx(trip.median_s / 2)


@needs_two
@pytest.mark.parametrize("mechanism", ["red", "tma_red"])
def test_peer_reduction_bandwidth_and_exact_sums(mechanism):
    pytest.importorskip("cupy")
    from linkroof.microbench import terms

    (m,) = terms.peer_reduce(0, 1, mechanism, 256 * MiB, 5)
    assert m.verified, m.verification
    assert 30e9 < m.bandwidth_bytes_per_s <= NVLINK_DATA * 1.06, m.bandwidth_bytes_per_s
    (small,) = terms.peer_reduce(0, 1, mechanism, 64 << 10, 5, loops=64, blocks=8, sweep=True)
    assert small.verified and small.spec.message_bytes == 64 << 10 and small.bytes_per_rep == 64 * (64 << 10)


def test_reduction_check_catches_a_missing_add():
    cupy = pytest.importorskip("cupy")
    import numpy as np

    from linkroof.microbench.cuda import launch

    n = 1 << 16
    with cupy.cuda.Device(0):
        buf = cupy.empty(n, dtype=cupy.float32)
        bad = cupy.zeros(1, dtype=cupy.uint64)
    launch(0, "fill_small_f32", 64, 256, (buf, np.uint64(n), np.uint32(3)), module="terms")
    # nothing was added: every element with a non-zero addend must be reported
    launch(0, "check_sum_f32", 64, 256, (buf, np.uint64(n), np.uint32(3), np.uint32(7), np.uint32(1), bad),
           module="terms")
    want = int(np.count_nonzero((np.arange(n, dtype=np.uint64) * 7) % 61))
    assert int(bad.get()[0]) == want


@needs_two
def test_gemm_beside_copy_engine_copy():
    pytest.importorskip("cupy")
    from linkroof.microbench import terms

    ms = terms.gemm_under_comm(0, 1, "ce", n=4096, reps=8)
    assert all(m.verified for m in ms), [m.verification for m in ms]
    g_beside = [m for m in ms if m.spec.name == "gemm_under_comm" and m.spec.params["beside"] != "nothing"][0]
    g_alone = [m for m in ms if m.spec.name == "gemm_under_comm" and m.spec.params["beside"] == "nothing"][0]
    assert g_beside.flop_rate <= g_alone.flop_rate * 1.03
    c = [m for m in ms if m.spec.name == "copy_under_compute"]
    assert all(x.bandwidth_bytes_per_s <= NVLINK_DATA * 1.06 for x in c)


@needs_two
def test_nccl_issue_cost_through_cupy():
    pytest.importorskip("cupy")
    from linkroof.microbench import terms

    host, python = terms.nccl_issue_cost([0, 1], reps=5)
    assert host.verified and python.verified
    assert python.median_s < host.median_s < 200e-6
