"""What mutation testing of roofline/timeline.py left open in the 2026-12-05d run
(benchmarks/data/2026-12-05d-mutation/timeline-open-diffs.txt), guarded with inputs of
their own: the contended-atomics sentence of `why_text` (its G/s figure at a rounding
edge; SM and DRAM measured at 0 %); `flops_text` naming a data type that holds a colon
whole; `host_causes` taking a blocking copy (a 'sync' call) as the launch that ended a
GPU gap; `host_verdict`'s sync, host-work, graph and launch sentences; `measured_parts`
naming both inferred classes of one piece; `summarize`'s default source and a
non-NCCL group's empty collective; and `Activities.starts_by_start` / ActivityIndex with
starts before 0 (the columns are signed 64-bit).

Every figure is worked out by hand from the inputs (US = 1000 ns) and every sentence is
written out by hand, never copied from the code's output."""

import pytest

from linkroof.roofline import timeline as T
from linkroof.roofline.timeline import Activities, Activity, HostCall
from linkroof.roofline.traces import ActivityIndex
from linkroof.schema import HostSummary, TimelineSummary

US = 1_000  # ns in a microsecond

ATOMICS_TAIL = (": atomics to the same addresses wait for each other in L2; spread them (a partial sum a block, then "
                "one atomic a block) (ncu)")
SYNC_TAIL = (" A CUDA graph cannot capture a sync: keep the value on the GPU, or move the sync and the host work "
             "after it out of the loop")


def gemm(start_ns, end_ns, corr=0, stream=7, device=0):
    return Activity("kernel", "sm90_xmma_gemm", device, stream, start_ns, end_ns, corr)


def elementwise(start_ns, end_ns, corr=0, stream=8, device=0):
    return Activity("kernel", "vectorized_elementwise_kernel", device, stream, start_ns, end_ns, corr)


# ------------------------------------------------------------------ why_text: contended atomics


def test_contended_atomics_rate_rounds_2_75_g_per_s_up_to_2_8():
    """2.5 G atomic + 0.25 G reduction sectors in 1 s: 2,750,000,000 sectors at exactly 2.75 G/s (under the 20 G/s
    edge, SM 10 % and DRAM 20 % both under 50 %), which to one decimal is 2.8 G/s (a hair less would be 2.7)."""
    c = {"atom_sectors": 2.5e9, "red_sectors": 0.25e9, "gpu_time_s": 1.0, "why:sm_pct": 10.0, "why:dram_pct": 20.0}
    assert T.why_text(c) == ("contended atomics: 2,750,000,000 atomic and reduction sectors to L2 a call at only "
                             "2.8 G/s, SM 10%, DRAM 20%" + ATOMICS_TAIL)


@pytest.mark.parametrize("sm, dram, said", [(0.0, 40.0, "SM 0%, DRAM 40%"), (45.0, 0.0, "SM 45%, DRAM 0%"),
                                            (0.0, 0.0, "SM 0%, DRAM 0%")])
def test_contended_atomics_print_a_share_measured_at_zero_as_zero(sm, dram, said):
    """ncu measured SM and/or DRAM at 0 %: the sentence says 0 %. 4e6 reduction sectors in 2 ms: 2.0 G/s."""
    c = {"red_sectors": 4e6, "gpu_time_s": 2e-3, "why:sm_pct": sm, "why:dram_pct": dram}
    assert T.why_text(c) == ("contended atomics: 4,000,000 atomic and reduction sectors to L2 a call at only 2.0 G/s, "
                             + said + ATOMICS_TAIL)


def test_contended_atomics_do_not_claim_shares_ncu_did_not_give():
    """Only the atomic sectors and the time were read (2.0 G/s): no SM or DRAM figure may be stated as 0 %."""
    text = T.why_text({"red_sectors": 4e6, "gpu_time_s": 2e-3})
    assert text.startswith("contended atomics: 4,000,000 atomic and reduction sectors to L2 a call at only 2.0 G/s")
    assert "SM 0%" not in text and "DRAM 0%" not in text
    assert "2.0 G/s, SM not read, DRAM not read: atomics" in text


# ------------------------------------------------------------------ flops_text


def test_flops_text_keeps_every_colon_of_the_data_type():
    """'flops:fp8:e4m3' names the type 'fp8:e4m3' (all after the first colon, as baseline reads it), not 'fp8' nor
    'e4m3'; a type counted at 0 is left out; sorted by key (fp32 before fp8)."""
    got = T.flops_text({"flops:fp8:e4m3": 1.5e12, "flops:fp32": 4e6, "flops:fp16": 0.0, "dram_bytes": 1e9})
    assert got == "fp32 4e+06, fp8:e4m3 1.5e+12"


# ------------------------------------------------------------------ host_causes: a blocking copy ends a gap


def _blocking_copy_call():
    """A call from 0: cudaLaunchKernel 0-2 us issues a gemm 3-10 us; then the host's blocking cudaMemcpy
    (a 'sync' call) 20-40 us issues a DtoH copy at 30-35 us. No host gap over 50 us, no wait returned in a gap."""
    acts = [gemm(3 * US, 10 * US, corr=1),
            Activity("memcpy", "Memcpy DtoH", 0, 7, 30 * US, 35 * US, 2, bytes=4096, copy_kind="DtoH")]
    host_calls = [HostCall("launch", "cudaLaunchKernel_v7000", 0, 2 * US, 1, 1),
                  HostCall("sync", "cudaMemcpy_v3020", 20 * US, 40 * US, 2, 1)]
    return T.summarize(acts, [0], host_calls=host_calls)


def test_the_gap_a_blocking_copy_ends_is_launch_time_not_an_unknown_cause():
    """Gaps 0-3 us (ended by the kernel launch) and 10-30 us (ended by the copy the cudaMemcpy issued; the one wait
    returns at 40 us, after the gap): both 'launch', 3 + 20 = 23 us a call; nothing unknown."""
    h = _blocking_copy_call().host
    assert dict(h.idle_causes_s) == pytest.approx({"launch": 23e-6})
    assert h.sync_names == ("cudaMemcpy_v3020",) and h.syncs_per_call == 1
    assert h.launches_per_call == 1  # the blocking copy is a sync, not a launch


def test_a_call_whose_idle_a_blocking_copy_ended_is_launch_bound():
    """Span 35 us, busy 7 + 5 = 12 us, idle 23 us: 23/35 = 66 % idle (over half), all of it 'launch': launch-bound,
    one launch a call."""
    v = T.host_verdict(_blocking_copy_call())
    assert v.startswith("launch-bound (measured): the GPU was idle 66% of each call; the host issued 1 launch(es) "
                        "a call at 35.0 us of host time each (2000 ns inside the launch call itself")


# ------------------------------------------------------------------ host_verdict


def _summary(causes, kernels_per_call=3.0, **host):
    """A 40 us call, 10 us busy, 30 us idle (75 %), with the host's idle causes given."""
    fields = dict(calls=1, recorded_period_s=40e-6, launches_per_call=3.0, launch_api_s=2e-6, host_per_launch_s=4e-6,
                  syncs_per_call=0.0, idle_causes_s=causes)
    fields.update(host)
    return TimelineSummary(source="cupti", calls=1, span_s=40e-6, busy_s=10e-6, idle_s=30e-6,
                           kernels_per_call=kernels_per_call, host=HostSummary(**fields))


def test_sync_verdict_lists_the_sync_calls_comma_separated():
    """Three waits a call by two calls (cudaEventSynchronize, cudaStreamSynchronize); sync 24 us of 30 us idle:
    80 %; no host work, so no 'then worked'."""
    t = _summary((("sync", 24e-6), ("launch", 6e-6)), syncs_per_call=3.0,
                 sync_names=("cudaEventSynchronize", "cudaStreamSynchronize"))
    assert T.host_verdict(t) == (
        "host-bound by a device-to-host sync (measured): the GPU was idle 75% of each call; the host waited for the "
        "GPU 3 time(s) a call (cudaEventSynchronize, cudaStreamSynchronize), and the GPU drained each time (80% of "
        "the idle followed a sync)." + SYNC_TAIL)


def test_sync_verdict_with_no_name_kept_says_a_sync_then_the_host_work():
    """A summary that kept no sync name (one wait a call): '(a sync)'; then 12 us of host work a call; sync 27 us of
    30 us idle: 90 %."""
    t = _summary((("sync", 27e-6), ("host work", 3e-6)), syncs_per_call=1.0, sync_names=(), host_work_s=12e-6)
    assert T.host_verdict(t) == (
        "host-bound by a device-to-host sync (measured): the GPU was idle 75% of each call; the host waited for the "
        "GPU 1 time(s) a call (a sync), then worked 12.0 us a call outside CUDA calls, and the GPU drained each time "
        "(90% of the idle followed a sync)." + SYNC_TAIL)


def test_host_work_verdict_gives_the_share_of_the_idle_it_took():
    """Host work 27 us of 30 us idle (launch 3 us): 90 % of the idle; 27 us a call outside any CUDA call."""
    t = _summary((("host work", 27e-6), ("launch", 3e-6)), host_work_s=27e-6)
    assert T.host_verdict(t) == (
        "host-bound by host work between launches (measured): the GPU was idle 75% of each call; the host spent "
        "27.0 us a call outside any CUDA call (90% of the idle). Move that work out of the loop, issue the GPU work "
        "before it so they overlap, or batch the calls")


def test_gaps_between_one_graph_launchs_kernels_are_the_graphs_own():
    """One cudaGraphLaunch (0-2 us, correlation 5) whose 4 kernels run 3-5, 20-22, 40-42 and 60-62 us: the gap
    before the first (0-3 us) is 'launch'; the three after (15 + 18 + 18 = 51 us) follow a kernel of the same launch:
    'graph'. Span 62 us, busy 8 us, idle 54 us: 87 %. The graph sentence, not 'cause not known'."""
    acts = [gemm(s * US, (s + 2) * US, corr=5) for s in (3, 20, 40, 60)]
    t = T.summarize(acts, [0], host_calls=[HostCall("launch", "cudaGraphLaunch_v10000", 0, 2 * US, 5, 1)])
    assert dict(t.host.idle_causes_s) == pytest.approx({"graph": 51e-6, "launch": 3e-6})
    assert T.host_cause(t) == "graph"
    assert T.host_verdict(t) == (
        "bound by the gaps between a CUDA graph's kernels (measured): the GPU was idle 87% of each call, between "
        "kernels of one graph launch (4 kernels a call, 1 host launch(es)): the GPU's own launch latency per node, "
        "not the host. Fewer, larger kernels (fusion) shorten it; the host is not the limit")


# ------------------------------------------------------------------ measured_parts


def test_a_piece_of_two_classes_both_inferred_names_them_comma_separated():
    """A gemm 0-3 us and an elementwise kernel 1-2 us on another stream, both classed by their names: compute alone
    2 us, then 'compute + memory' 1 us, whose how names both inferred classes."""
    parts = T.measured_parts(T.summarize([gemm(0, 3 * US), elementwise(1 * US, 2 * US)], [0]))
    by_label = {label: (v, how) for label, v, how in parts}
    v, how = by_label["compute + memory (overlapped)"]
    assert v == pytest.approx(1e-6)
    assert how == ("measured from the intervals: these classes ran at once on the device; class of compute, memory "
                   "from its name (inferred)")
    assert by_label["compute (alone)"][0] == pytest.approx(2e-6)


# ------------------------------------------------------------------ summarize


def test_summarize_reports_cupti_as_its_source_when_none_is_given():
    """No source passed: the summary's source is 'cupti' (its default), with work recorded and without."""
    assert T.summarize([gemm(0, 5 * US), elementwise(5 * US, 6 * US)], [0]).source == "cupti"
    assert T.summarize([], [0, 10 * US], rank=3).source == "cupti"
    assert T.summarize([gemm(0, 5 * US)], [0], source="kineto").source == "kineto"


def test_groups_that_are_no_collective_name_none():
    """A gemm and a host-to-device copy name no collective (''); an NCCL AllGather kernel names 'all_gather'."""
    acts = [gemm(0, 4 * US), Activity("memcpy", "Memcpy HtoD", 0, 9, 0, 1 * US, bytes=1024, copy_kind="HtoD"),
            Activity("kernel", "ncclDevKernel_AllGather_RING_LL", 0, 8, 1 * US, 3 * US)]
    t = T.summarize(acts, [0])
    assert {k.name: k.collective for k in t.kernels} == {
        "sm90_xmma_gemm": "", "Memcpy HtoD": "", "ncclDevKernel_AllGather_RING_LL": "all_gather"}


# ------------------------------------------------------------------ Activities: starts before 0


def test_starts_before_zero_come_back_in_order():
    """Starts -40, -100 and 20 ns held in that order (a trace's clock may start after some of its work): in order
    -100, -40, 20 (rows 1, 0, 2)."""
    cols = Activities.of([gemm(-40, -30), gemm(-100, -60), gemm(20, 30)])
    assert list(cols.by_start()) == [1, 0, 2]
    assert list(cols.starts_by_start()) == [-100, -40, 20]


def test_an_index_over_starts_before_zero_finds_the_work_in_a_window():
    """The same three activities indexed: the window -120..-50 ns holds only the one at -100..-60 ns (the one at
    -40 starts after the window ends, the one at 20 far after)."""
    idx = ActivityIndex([gemm(-40, -30, corr=1), gemm(-100, -60, corr=2), gemm(20, 30, corr=3)])
    assert [a.correlation for a in idx.overlapping(-120, -50)] == [2]
    assert [a.correlation for a in idx.overlapping(-50, 25)] == [1, 3]
