"""What mutation testing of roofline/timeline.py left unguarded, third round
(benchmarks/data/2026-12-04d-mutation/timeline-open3-diffs.txt): the contended-atomics
sentence of `why_text` (its G/s figure at a rounding edge, SM and DRAM measured at 0 %);
`flops_text` keeping the whole data type after 'flops:'; `host_causes` taking a blocking
copy's record as the launch that ended a gap; `host_verdict`'s sync, host-work and graph
sentences; `measured_parts` naming two inferred classes of one piece; `summarize`'s default
source and a non-NCCL kernel's empty collective; and the columns of `Activities` holding
starts before 0 and ordering rows as signed 64-bit integers, like the columns.

Every figure is worked out by hand (US = 1000 ns), and every sentence is written out by
hand, never taken from the code under test."""

from array import array

import pytest

from linkroof.roofline import timeline as T
from linkroof.roofline.timeline import Activities, Activity, HostCall
from linkroof.schema import HostSummary, TimelineSummary

US = 1_000  # ns in a microsecond

ATOMICS = (": atomics to the same addresses wait for each other in L2; spread them (a partial sum a block, then one "
           "atomic a block) (ncu)")


def gemm(start_ns, end_ns, corr=0, device=0, stream=7, name="sm90_xmma_gemm"):
    return Activity("kernel", name, device, stream, start_ns, end_ns, corr)


def elementwise(start_ns, end_ns, corr=0, device=0, stream=8):
    return Activity("kernel", "vectorized_elementwise_kernel", device, stream, start_ns, end_ns, corr)


# ------------------------------------------------------------------ why_text: contended atomics


def test_contended_atomics_rate_is_sectors_per_ns_in_g_per_s_rounded_at_its_edge():
    """2,250,000,001 atomic sectors in 1 s: 2.250000001 G/s, which rounds up to 2.3 G/s (just past the half)."""
    c = {"atom_sectors": 2_250_000_001.0, "gpu_time_s": 1.0, "why:sm_pct": 20.0, "why:dram_pct": 10.0}
    assert T.why_text(c) == ("contended atomics: 2,250,000,001 atomic and reduction sectors to L2 a call at only "
                             "2.3 G/s, SM 20%, DRAM 10%" + ATOMICS)


@pytest.mark.parametrize("sm, dram, said", [(0.0, 30.0, "SM 0%, DRAM 30%"), (30.0, 0.0, "SM 30%, DRAM 0%")])
def test_contended_atomics_say_a_share_measured_at_zero_as_0_percent(sm, dram, said):
    """ncu measured SM (or DRAM) at 0 %: the atomics sentence says 0 %, not 1 %. 1e6 sectors in 1 ms: 1.0 G/s."""
    c = {"atom_sectors": 1e6, "gpu_time_s": 1e-3, "why:sm_pct": sm, "why:dram_pct": dram}
    assert T.why_text(c) == ("contended atomics: 1,000,000 atomic and reduction sectors to L2 a call at only 1.0 G/s, "
                             + said + ATOMICS)


# ------------------------------------------------------------------ flops_text


def test_flops_text_names_the_whole_data_type_after_flops():
    """A data type with a colon of its own ('fp8:e4m3'): named whole, as baseline reads 'flops:<dtype>' (the
    first colon only), beside bf16; sorted by key."""
    assert T.flops_text({"flops:fp8:e4m3": 2e9, "flops:bf16": 1e6}) == "bf16 1e+06, fp8:e4m3 2e+09"


# ------------------------------------------------------------------ host_causes: a blocking copy


def test_a_blocking_copy_that_ends_a_gap_is_its_launch_not_an_unknown_cause():
    """A kernel 0-1 us (launched 0-10 ns), then the host's blocking cudaMemcpy (a 'sync' call) 4-7 us that issued
    a copy at 5-6 us: the 4 us gap (1-5 us) was ended by the copy the cudaMemcpy issued, no wait had returned
    in it and no host work over 50 us: 'launch', 4 us; one sync a call, named cudaMemcpy."""
    acts = [gemm(0, 1 * US, corr=1),
            Activity("memcpy", "Memcpy DtoH", 0, 7, 5 * US, 6 * US, 2, copy_kind="DtoH")]
    host_calls = [HostCall("launch", "cudaLaunchKernel", 0, 10, 1), HostCall("sync", "cudaMemcpy", 4 * US, 7 * US, 2)]
    h = T.summarize(acts, [0], host_calls=host_calls).host
    assert [k for k, _ in h.idle_causes_s] == ["launch"]
    assert h.idle_causes_s[0][1] == pytest.approx(4e-6)
    assert h.sync_names == ("cudaMemcpy",)
    assert h.syncs_per_call == 1


# ------------------------------------------------------------------ host_verdict


def _summary(causes, kernels_per_call=2.0, **host):
    """A 10 us call, 2 us busy, 8 us idle (80 %), with the host's idle causes given."""
    fields = dict(calls=1, recorded_period_s=10e-6, launches_per_call=1.0, launch_api_s=2e-6, host_per_launch_s=5e-6,
                  syncs_per_call=0.0, idle_causes_s=causes)
    fields.update(host)
    return TimelineSummary(source="cupti", calls=1, span_s=10e-6, busy_s=2e-6, idle_s=8e-6,
                           kernels_per_call=kernels_per_call, host=HostSummary(**fields))


SYNC_TAIL = (" A CUDA graph cannot capture a sync: keep the value on the GPU, or move the sync and the host work after "
             "it out of the loop")


def test_sync_verdict_names_each_sync_call_comma_separated():
    """Two syncs a call (cudaDeviceSynchronize, cudaStreamSynchronize); sync 6 us of 8 us idle: 75 %."""
    t = _summary((("sync", 6e-6), ("launch", 2e-6)), syncs_per_call=2.0,
                 sync_names=("cudaDeviceSynchronize", "cudaStreamSynchronize"))
    assert T.host_verdict(t) == (
        "host-bound by a device-to-host sync (measured): the GPU was idle 80% of each call; the host waited for the GPU "
        "2 time(s) a call (cudaDeviceSynchronize, cudaStreamSynchronize), and the GPU drained each time (75% of the "
        "idle followed a sync)." + SYNC_TAIL)


def test_sync_verdict_without_a_sync_name_says_a_sync():
    """Idle after a sync whose name was not kept: '(a sync)'; the whole idle followed it: 100 %."""
    t = _summary((("sync", 8e-6),), syncs_per_call=1.0, sync_names=())
    assert T.host_verdict(t) == (
        "host-bound by a device-to-host sync (measured): the GPU was idle 80% of each call; the host waited for the GPU "
        "1 time(s) a call (a sync), and the GPU drained each time (100% of the idle followed a sync)." + SYNC_TAIL)


def test_host_work_verdict_gives_its_share_of_the_idle():
    """Host work 6 us of 8 us recorded idle (launch 2 us): 75 % of the idle; 3000 ns a call outside CUDA calls."""
    t = _summary((("host work", 6e-6), ("launch", 2e-6)), host_work_s=3e-6)
    assert T.host_verdict(t) == (
        "host-bound by host work between launches (measured): the GPU was idle 80% of each call; the host spent "
        "3000 ns a call outside any CUDA call (75% of the idle). Move that work out of the loop, issue the GPU work "
        "before it so they overlap, or batch the calls")


def test_graph_verdict_blames_the_gpus_own_gaps_not_the_host():
    """Idle between one graph launch's kernels (20 kernels a call, 1 host launch): the graph sentence, not 'cause
    not known'."""
    t = _summary((("graph", 8e-6),), kernels_per_call=20.0)
    assert T.host_verdict(t) == (
        "bound by the gaps between a CUDA graph's kernels (measured): the GPU was idle 80% of each call, between "
        "kernels of one graph launch (20 kernels a call, 1 host launch(es)): the GPU's own launch latency per node, "
        "not the host. Fewer, larger kernels (fusion) shorten it; the host is not the limit")
    assert T.host_cause(t) == "graph"


# ------------------------------------------------------------------ measured_parts


def test_a_piece_of_two_inferred_classes_names_both_comma_separated():
    """A gemm (compute) and an elementwise kernel (memory) at once, 0-1 us on two streams, both classed by name:
    the piece 'compute + memory (overlapped)', 1 us, says both classes were inferred."""
    t = T.summarize([gemm(0, 1 * US), elementwise(0, 1 * US)], [0])
    parts = T.measured_parts(t)
    assert [(label, how) for label, _, how in parts[1:]] == [
        ("compute + memory (overlapped)", "measured from the intervals: these classes ran at once on the device; "
         "class of compute, memory from its name (inferred)")]
    assert parts[1][1] == pytest.approx(1e-6)


# ------------------------------------------------------------------ summarize


def test_summarize_says_cupti_when_no_source_is_given():
    """No source given: 'cupti', with activity and without."""
    assert T.summarize([gemm(0, 1 * US)], [0]).source == "cupti"
    assert T.summarize([], [0]).source == "cupti"


def test_a_kernel_that_is_no_collective_has_an_empty_collective():
    """A gemm's group names no collective (''); an NCCL AllReduce kernel's names 'all_reduce'."""
    nccl = Activity("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0, 8, 0, 2 * US)
    t = T.summarize([gemm(0, 1 * US), nccl], [0])
    assert {k.name: k.collective for k in t.kernels} == {"sm90_xmma_gemm": "",
                                                         "ncclDevKernel_AllReduce_Sum_f32_RING_LL": "all_reduce"}


# ------------------------------------------------------------------ Activities: signed columns


def test_starts_before_zero_are_ordered():
    """Starts of -3 and 5 ns held out of order (5 first; a trace's clock may start after the work): in order,
    -3 then 5 ns, row 1 then row 0."""
    cols = Activities.of([gemm(5, 10, corr=1), gemm(-3, 4, corr=2)])
    assert list(cols.by_start()) == [1, 0]
    assert list(cols.starts_by_start()) == [-3, 5]


def test_the_order_by_start_is_signed_64_bit_like_the_columns():
    """The rows' order (1, 0) is an array of the columns' own kind (signed 64-bit, 'q'): it joins a column's
    array (a row number column), which an array of another kind cannot."""
    cols = Activities.of([gemm(50, 60, corr=1), gemm(10, 20, corr=2)])
    order = cols.by_start()
    assert order.typecode == cols.start.typecode == "q"
    rows = array("q", [7])
    rows.extend(order)
    assert list(rows) == [7, 1, 0]
