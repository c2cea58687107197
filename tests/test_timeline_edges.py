"""Edges of the timeline's rules (roofline/timeline.py) that mutation testing found
unguarded: each test builds a small timeline by hand and states its figures in their
own units, worked out from the inputs, at the exact boundary of the rule it guards."""

import pytest

from linkroof.roofline import timeline as T
from linkroof.schema import HostSummary, KernelGroup, TimelineSummary

US = 1_000  # ns in a microsecond


def kernel(name, start_ns, end_ns, stream=7, device=0, corr=0):
    return T.Activity("kernel", name, device, stream, start_ns, end_ns, corr)


def gemm(start_ns, end_ns, corr=0, device=0, stream=7):
    return kernel("sm90_xmma_gemm", start_ns, end_ns, stream, device, corr)


def nccl(start_ns, end_ns, device=0, stream=8):
    return kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", start_ns, end_ns, stream, device)


def launch(start_ns, end_ns, corr=0, thread=1, name="cudaLaunchKernel_v7000"):
    return T.HostCall("launch", name, start_ns, end_ns, corr, thread)


def sync(start_ns, end_ns, thread=1, name="cudaStreamSynchronize_v3020"):
    return T.HostCall("sync", name, start_ns, end_ns, 0, thread)


def summary(span_s, busy_s, idle_s, kernels_per_call=4.0, host=None, **kw):
    return TimelineSummary(source="cupti", calls=1, span_s=span_s, busy_s=busy_s, idle_s=idle_s,
                           kernels_per_call=kernels_per_call, host=host, **kw)


def host(causes=(), host_work_s=0.0, launches=4.0, per_launch_s=0.0, period_s=100e-6, api_s=2e-6,
         syncs=0.0, sync_names=()):
    return HostSummary(calls=1, recorded_period_s=period_s, launches_per_call=launches, launch_api_s=api_s,
                       host_per_launch_s=per_launch_s, syncs_per_call=syncs, sync_names=sync_names,
                       host_work_s=host_work_s, idle_causes_s=tuple(causes))


# ------------------------------------------------------------------ split_calls, _index


def test_an_activity_before_the_first_call_belongs_to_no_call_and_the_rest_are_still_placed():
    """Guards split_calls/_index: an activity launched before the first call start is skipped, not the loop's end."""
    early = gemm(1 * US, 2 * US, corr=1)  # before the call that starts at 5 us
    late = gemm(6 * US, 9 * US, corr=2)
    calls = T.split_calls([early, late], [5 * US])
    assert [a.correlation for a in calls[0].activities] == [2]
    assert calls[0].start_ns == 5_000 and calls[0].end_ns == 9_000
    assert T._index([5_000, 10_000], 4_999) is None
    assert T._index([5_000, 10_000], 5_000) == 0


def test_an_activity_missing_from_host_of_is_placed_by_its_own_start():
    """Guards split_calls: with host_of given, an unknown correlation falls back to the activity's own start."""
    a = gemm(2 * US, 3 * US, corr=1)  # its host launch at 1 us: call 0
    b = gemm(15 * US, 18 * US, corr=2)  # no host record: its start, 15 us, is in call 1 (from 10 us)
    calls = T.split_calls([a, b], [0, 10 * US], host_of={1: 1 * US})
    assert [[x.correlation for x in c.activities] for c in calls] == [[1], [2]]
    assert calls[1].end_ns == 18_000


# ------------------------------------------------------------------ overlap, communication_exposure


def test_a_zero_length_activity_is_not_work_on_any_device():
    """Guards overlap: an activity that ends where it starts adds no device and no class."""
    per = T.overlap([gemm(0, 100 * US), kernel("copy_kernel", 50 * US, 50 * US),
                     kernel("copy_kernel", 70 * US, 70 * US, device=1)])
    assert list(per) == [0]
    assert per[0].busy == 100_000
    assert per[0].pieces == {"compute": 100_000}
    assert per[0].class_busy == {"compute": 100_000}


def test_an_activity_clipped_away_does_not_stop_the_sweep():
    """Guards overlap: an activity outside [lo, hi] is skipped and the later ones still count."""
    per = T.overlap([gemm(0, 10 * US), gemm(50 * US, 60 * US)], lo=20 * US, hi=100 * US)
    assert per[0].busy == 10_000  # only the 50-60 us kernel lies in [20, 100] us


def test_communication_exposure_clips_to_lo_and_hi():
    """Guards communication_exposure: lo and hi both reach the sweep; 0-100 us clipped to 40-60 us is 20 us."""
    assert T.communication_exposure([nccl(0, 100 * US)], lo=40 * US, hi=60 * US) == (20_000, 20_000)


def test_communication_exposure_counts_beside_other_work_on_the_same_device():
    """Guards communication_exposure: 100 us of NCCL with a 20 us GEMM beside it: busy 100 us, exposed 80 us."""
    assert T.communication_exposure([nccl(0, 100 * US), gemm(60 * US, 80 * US)]) == (100_000, 80_000)


def test_communication_exposure_uses_the_class_given():
    """Guards communication_exposure: class_of reaches the sweep (a GEMM called communication is 100 us of it)."""
    got = T.communication_exposure([gemm(0, 100 * US)], lo=0, hi=200 * US, class_of=lambda a: "communication")
    assert got == (100_000, 100_000)


def test_no_communication_is_zero_busy_and_zero_exposed():
    """Guards communication_exposure: no activity, or only compute, gives (0 ns, 0 ns)."""
    assert T.communication_exposure([]) == (0, 0)
    assert T.communication_exposure([gemm(0, 100 * US)]) == (0, 0)


# ------------------------------------------------------------------ the host's calls


def test_host_call_kind_names_each_kind():
    """Guards host_call_kind: synchronize calls and blocking copies are 'sync', launches 'launch', others 'other'."""
    assert T.host_call_kind("cudaStreamSynchronize_v3020") == "sync"
    assert T.host_call_kind("cuCtxSynchronize") == "sync"
    assert T.host_call_kind("cudaMemcpy_v3020") == "sync"
    assert T.host_call_kind("cudaMemcpyAsync_v3020") == "launch"
    assert T.host_call_kind("cudaLaunchKernel_v7000") == "launch"
    assert T.host_call_kind("cudaEventRecord") == "other"


def test_outermost_merges_nested_calls_per_thread_with_the_strongest_kind():
    """Guards outermost: calls nested in one (equal start or end included) are one call of the strongest kind."""
    calls = [
        launch(0, 1_000, corr=7, thread=1, name="cudaLaunchKernel_v7000"),
        launch(0, 500, corr=8, thread=1, name="cuLaunchKernel"),  # same start as its outer call
        T.HostCall("other", "cuCtxGetCurrent", 600, 1_000, 0, 1),  # same end as its outer call
        launch(100, 200, corr=9, thread=2),  # another thread: its own call
        T.HostCall("other", "cudaEventRecord", 2_000, 3_000, 0, 1),
        launch(2_100, 2_900, corr=10, thread=1, name="cuLaunchKernel"),  # a launch inside 'other': a launch
        launch(4_000, 6_000, corr=11, thread=1, name="cudaGraphLaunch"),
        sync(4_500, 5_500, thread=1),  # a sync inside a launch: a sync
    ]
    out, of_corr = T.outermost(calls)
    assert out == [
        T.HostCall("launch", "cudaLaunchKernel_v7000", 0, 1_000, 7, 1),
        T.HostCall("launch", "cudaLaunchKernel_v7000", 100, 200, 9, 2),
        T.HostCall("launch", "cudaEventRecord", 2_000, 3_000, 0, 1),
        T.HostCall("sync", "cudaGraphLaunch", 4_000, 6_000, 11, 1),
    ]
    assert {k: (v.start_ns, v.thread) for k, v in of_corr.items()} == {7: (0, 1), 8: (0, 1), 9: (100, 2),
                                                                       10: (2_000, 1), 11: (4_000, 1)}


def test_outermost_keeps_an_other_call_other_and_a_launch_a_launch():
    """Guards outermost's ranking: 'other' with an 'other' inside stays other; 'launch' over 'other' is launch."""
    out, _ = T.outermost([T.HostCall("other", "cudaGetDevice", 0, 100, 0, 3),
                          T.HostCall("other", "cuCtxGetDevice", 10, 90, 0, 3),
                          T.HostCall("other", "cudaEventQuery", 200, 300, 0, 3),
                          launch(210, 290, corr=5, thread=3, name="cuLaunchKernel")])
    assert [(h.kind, h.name, h.thread) for h in out] == [("other", "cudaGetDevice", 3), ("launch", "cudaEventQuery", 3)]


# ------------------------------------------------------------------ host_causes


def test_host_causes_of_two_calls_per_call_and_ordered_by_time():
    """Guards host_causes: per-call figures over 2 calls, idle causes largest first, syncs counted per call."""
    calls = [T.CallWindow(1_000 * US, 1_035 * US, [gemm(1_000 * US, 1_010 * US), gemm(1_020 * US, 1_030 * US)]),
             T.CallWindow(1_035 * US, 1_070 * US, [gemm(1_060 * US, 1_070 * US)])]
    hcs = [sync(1_011 * US, 1_015 * US)]  # the host's wait returns at 1015 us, inside the 1010-1020 us gap
    h = T.host_causes(calls, hcs)
    # gap 1010-1020 us after the sync: 10 us; gap 1030-1060 us, no record for its kernel: 30 us; per call / 2
    assert h.idle_causes_s == (("unknown", pytest.approx(15e-6)), ("sync", pytest.approx(5e-6)))
    assert h.calls == 2
    assert h.recorded_period_s == pytest.approx(35e-6)  # 1000-1070 us over 2 calls
    assert h.syncs_per_call == pytest.approx(0.5)
    assert h.sync_names == ("cudaStreamSynchronize_v3020",)


def test_a_gap_ended_by_a_second_activity_of_one_launch_is_the_graphs_own():
    """Guards host_causes: two activities of one correlation id with 10 us between them: 10 us 'graph'."""
    calls = [T.CallWindow(0, 30 * US, [gemm(0, 10 * US, corr=5), gemm(20 * US, 30 * US, corr=5)])]
    h = T.host_causes(calls, [launch(0, 1 * US, corr=5)])
    assert h.idle_causes_s == (("graph", pytest.approx(10e-6)),)


def test_a_gap_whose_kernel_has_no_api_record_is_unknown():
    """Guards host_causes: a gap ended by an activity with no API record: 10 us 'unknown'."""
    calls = [T.CallWindow(0, 30 * US, [gemm(0, 10 * US, corr=1), gemm(20 * US, 30 * US, corr=2)])]
    h = T.host_causes(calls, [launch(0, 1 * US, corr=1)])
    assert h.idle_causes_s == (("unknown", pytest.approx(10e-6)),)


def test_a_sync_that_returns_exactly_when_the_gpu_starts_again_is_the_cause():
    """Guards host_causes: a wait returning at the gap's very end (30 us) still names 'sync' for the 20 us gap."""
    calls = [T.CallWindow(0, 40 * US, [gemm(0, 10 * US, corr=1), gemm(30 * US, 40 * US, corr=2)])]
    h = T.host_causes(calls, [sync(12 * US, 30 * US)])
    assert h.idle_causes_s == (("sync", pytest.approx(20e-6)),)


def _host_work_gap(next_launch_ns):
    """One call: kernel 1 (0-10 us), then the host works until it launches kernel 2 at
    next_launch_ns; kernel 2 starts at 210 us: a 200 us GPU gap from 10 us."""
    calls = [T.CallWindow(0, 220 * US, [gemm(0, 10 * US, corr=1), gemm(210 * US, 220 * US, corr=2)])]
    hcs = [launch(0, 1 * US, corr=1), launch(next_launch_ns, next_launch_ns + 1 * US, corr=2)]
    return T.host_causes(calls, hcs)


def test_host_work_over_half_the_gap_names_host_work_and_exactly_half_names_launch():
    """Guards host_causes: 'host work' only when the host worked more than half (100 us) of a 200 us gap."""
    half = _host_work_gap(110 * US)  # worked from 10 us to 110 us: exactly 100 us of the gap
    assert half.idle_causes_s == (("launch", pytest.approx(200e-6)),)
    assert half.host_work_s == pytest.approx(109e-6)  # host gap 1-110 us
    over = _host_work_gap(110 * US + 1)  # 100 us + 1 ns
    assert over.idle_causes_s == (("host work", pytest.approx(200e-6)),)


def test_a_third_of_the_gap_in_host_work_is_a_launch_gap():
    """Guards host_causes' half: 80 us of host work in a 200 us gap (over a third, under half) is 'launch'."""
    assert _host_work_gap(90 * US).idle_causes_s == (("launch", pytest.approx(200e-6)),)


def test_a_host_gap_of_exactly_50_us_is_not_host_work():
    """Guards HOST_WORK_GAP_NS: a host gap of exactly 50 us with no CUDA call is not host work; 50 us + 1 ns is."""
    calls = [T.CallWindow(1_000 * US, 1_200 * US, [gemm(1_100 * US, 1_200 * US)])]
    at = T.host_causes(calls, [launch(1_000 * US, 1_001 * US), launch(1_051 * US, 1_052 * US)])
    assert at.host_work_s == 0.0
    over = T.host_causes(calls, [launch(1_000 * US, 1_001 * US), launch(1_051 * US + 1, 1_052 * US)])
    assert over.host_work_s == pytest.approx(50_001e-9)


def test_host_work_is_per_call():
    """Guards host_causes: 60 us of host work over 2 calls is 30 us a call."""
    calls = [T.CallWindow(1_000 * US, 1_100 * US, [gemm(1_090 * US, 1_100 * US)]),
             T.CallWindow(1_100 * US, 1_200 * US, [gemm(1_190 * US, 1_200 * US)])]
    h = T.host_causes(calls, [launch(1_000 * US, 1_001 * US), launch(1_061 * US, 1_062 * US)])
    assert h.host_work_s == pytest.approx(30e-6)  # host gap 1001-1061 us = 60 us, / 2 calls
    assert h.launches_per_call == pytest.approx(1.0)


def test_host_calls_at_the_calls_very_start_and_end_are_inside():
    """Guards host_causes: launches and syncs starting exactly at the first start or the last end are counted."""
    calls = [T.CallWindow(1_000 * US, 1_100 * US, [gemm(1_000 * US, 1_100 * US)])]
    hcs = [launch(1_000 * US, 1_001 * US), sync(1_000 * US + 1, 1_000 * US + 2, thread=2),
           launch(1_100 * US, 1_101 * US), sync(1_100 * US, 1_102 * US, thread=2),
           launch(1_100 * US + 1, 1_103 * US, thread=3), sync(1_100 * US + 1, 1_103 * US, thread=4)]
    h = T.host_causes(calls, hcs)
    assert h.launches_per_call == 2.0
    assert h.syncs_per_call == 2.0
    assert h.recorded_period_s == pytest.approx(100e-6)


def test_a_sync_starting_at_the_first_call_start_is_counted():
    """Guards host_causes' sync count: a sync beginning exactly at the first call's start is one sync."""
    calls = [T.CallWindow(1_000 * US, 1_100 * US, [gemm(1_000 * US, 1_100 * US)])]
    h = T.host_causes(calls, [sync(1_000 * US, 1_001 * US)])
    assert h.syncs_per_call == 1.0


def test_no_launch_recorded_gives_zero_figures_and_says_so():
    """Guards host_causes: no launch: 0 s a launch and in the launch call, a note; back-to-back work: no idle cause."""
    calls = [T.CallWindow(0, 20 * US, [gemm(0, 10 * US), gemm(10 * US, 20 * US)])]
    h = T.host_causes(calls, [T.HostCall("other", "cudaGetDevice", 1 * US, 2 * US, 0, 1)])
    assert h.launch_api_s == 0.0 and h.host_per_launch_s == 0.0 and h.launches_per_call == 0.0
    assert h.notes == ("no launch was recorded among the host's API records",)
    assert h.idle_causes_s == ()  # the first activity starts at the call's start, the second as the first ends


def test_launch_figures_are_upper_medians():
    """Guards host_causes: launch calls of 1 and 3 us: median 3 us; launch steps of 10 and 20 us: median 20 us."""
    calls = [T.CallWindow(0, 40 * US, [gemm(35 * US, 40 * US)])]
    hcs = [launch(0, 1 * US, thread=1), launch(3 * US, 11 * US, thread=1), launch(28 * US, 31 * US, thread=1)]
    h = T.host_causes(calls, hcs)
    assert h.launch_api_s == pytest.approx(3e-6)  # durations 1, 8, 3 us sorted: 1, 3, 8 -> index 1
    assert h.host_per_launch_s == pytest.approx(20e-6)  # end to end: 10 us, 20 us -> index 1
    assert h.notes == ()


def test_launch_api_median_of_two_is_the_longer():
    """Guards host_causes' median index: two launch calls of 1 us and 3 us: 3 us."""
    calls = [T.CallWindow(0, 40 * US, [gemm(35 * US, 40 * US)])]
    h = T.host_causes(calls, [launch(0, 1 * US), launch(20 * US, 23 * US)])
    assert h.launch_api_s == pytest.approx(3e-6)
    assert h.host_per_launch_s == pytest.approx(22e-6)  # ends at 1 us and 23 us


def test_launches_ending_together_are_no_launch_step():
    """Guards host_causes: a step of 0 ns (two threads' launches ending at once) is left out of the median."""
    calls = [T.CallWindow(0, 40 * US, [gemm(35 * US, 40 * US)])]
    hcs = [launch(0, 1 * US, thread=1), launch(100, 1 * US, thread=2),
           launch(2 * US, 11 * US, thread=1), launch(12 * US, 31 * US, thread=1)]
    h = T.host_causes(calls, hcs)
    assert h.host_per_launch_s == pytest.approx(20e-6)  # steps 0 (left out), 10 us, 20 us -> 20 us


def test_a_launch_step_of_one_ns_is_a_step():
    """Guards host_causes: launches ending 1 ns apart make a step of 1 ns."""
    calls = [T.CallWindow(0, 40 * US, [gemm(35 * US, 40 * US)])]
    h = T.host_causes(calls, [launch(0, 1 * US, thread=1), launch(100, 1 * US + 1, thread=2)])
    assert h.host_per_launch_s == pytest.approx(1e-9)


def test_a_launch_step_of_exactly_50_us_is_a_step():
    """Guards host_causes: a step of exactly HOST_WORK_GAP_NS (50 us) is still the host's per-launch time."""
    calls = [T.CallWindow(0, 100 * US, [gemm(95 * US, 100 * US)])]
    h = T.host_causes(calls, [launch(0, 1 * US), launch(2 * US, 51 * US)])
    assert h.host_per_launch_s == pytest.approx(50e-6)


# ------------------------------------------------------------------ host_cause, host_verdict


def test_idle_of_exactly_half_the_call_is_not_host_bound():
    """Guards HOST_BOUND: 500 us idle of a 1000 us call is not over half: no cause, no verdict."""
    t = summary(span_s=1e-3, busy_s=5e-4, idle_s=5e-4, host=host([("sync", 5e-4)]))
    assert T.host_cause(t) is None
    assert T.host_verdict(t) is None
    over = summary(span_s=1e-3, busy_s=4.99e-4, idle_s=5.01e-4, host=host([("sync", 5.01e-4)]))
    assert T.host_cause(over) == "sync"


def test_a_host_bound_call_without_host_records_has_an_unknown_cause():
    """Guards host_cause: 80 us idle of 100 us and no host summary: 'unknown'."""
    t = summary(span_s=100e-6, busy_s=20e-6, idle_s=80e-6)
    assert T.host_cause(t) == "unknown"
    assert T.host_cause(summary(100e-6, 20e-6, 80e-6, host=host(()))) == "unknown"


def test_idle_causes_all_zero_name_no_cause():
    """Guards host_cause / host_verdict: recorded causes of 0 s each name nothing: 'unknown', 'not recorded'."""
    t = summary(span_s=100e-6, busy_s=20e-6, idle_s=80e-6, host=host([("sync", 0.0)]))
    assert T.host_cause(t) == "unknown"
    assert T.host_verdict(t) == ("host-bound (measured idle): the GPU was idle 80% of each call, waiting for the host; "
                                 "what the host did is not recorded (no CUPTI API records), so neither a sync nor "
                                 "launches can be named")


def test_copies_alone_can_be_host_bound():
    """Guards host_cause / host_verdict: 20 us of copies (no kernels) and 80 us idle of 100 us is still judged."""
    t = summary(span_s=100e-6, busy_s=20e-6, idle_s=80e-6, kernels_per_call=0.0)
    assert T.host_cause(t) == "unknown"
    assert T.host_verdict(t).startswith("host-bound (measured idle): the GPU was idle 80% of each call")


def test_kernels_of_no_duration_can_be_host_bound():
    """Guards host_cause / host_verdict: 4 kernels a call of 0 s busy, 100 us idle of 100 us: judged, 'unknown'."""
    t = summary(span_s=100e-6, busy_s=0.0, idle_s=100e-6, kernels_per_call=4.0)
    assert T.host_cause(t) == "unknown"
    assert T.host_verdict(t).startswith("host-bound (measured idle): the GPU was idle 100% of each call")


def test_no_busy_time_and_no_kernels_is_not_judged():
    """Guards host_cause / host_verdict: nothing ran (0 s busy, 0 kernels), 100 us idle: no verdict."""
    t = summary(span_s=100e-6, busy_s=0.0, idle_s=100e-6, kernels_per_call=0.0)
    assert T.host_cause(t) is None
    assert T.host_verdict(t) is None


def test_sync_verdict_names_the_host_work_after_the_sync():
    """Guards host_verdict: a sync-bound call with 60 us of host work says so; with none, says nothing of it."""
    h = host([("sync", 60e-6), ("launch", 20e-6)], host_work_s=60e-6, syncs=1.0, sync_names=("cudaStreamSynchronize",))
    v = T.host_verdict(summary(100e-6, 20e-6, 80e-6, host=h))
    assert v == ("host-bound by a device-to-host sync (measured): the GPU was idle 80% of each call; the host waited "
                 "for the GPU 1 time(s) a call (cudaStreamSynchronize), then worked 60.0 us a call outside CUDA calls, "
                 "and the GPU drained each time (75% of the idle followed a sync). A CUDA graph cannot capture a sync: "
                 "keep the value on the GPU, or move the sync and the host work after it out of the loop")
    h0 = host([("sync", 60e-6)], host_work_s=0.0, syncs=1.0, sync_names=("cudaStreamSynchronize",))
    v0 = T.host_verdict(summary(100e-6, 20e-6, 80e-6, host=h0))
    assert "a call (cudaStreamSynchronize), and the GPU drained each time (100% of the idle" in v0
    assert "then worked" not in v0


def test_launch_verdict_uses_the_measured_time_per_launch():
    """Guards host_verdict: with a measured 10 us per launch, 10 us is said (not the 25 us period / launches)."""
    h = host([("launch", 80e-6)], launches=4.0, per_launch_s=10e-6, period_s=100e-6, api_s=2e-6)
    v = T.host_verdict(summary(100e-6, 20e-6, 80e-6, host=h))
    assert "the host issued 4 launch(es) a call at 10.0 us of host time each (2000 ns inside the launch call" in v


def test_launch_verdict_without_steps_divides_the_period_by_the_launches():
    """Guards host_verdict: no measured step: 100 us recorded period / 4 launches = 25 us a launch."""
    h = host([("launch", 80e-6)], launches=4.0, per_launch_s=0.0, period_s=100e-6)
    v = T.host_verdict(summary(100e-6, 20e-6, 80e-6, host=h))
    assert "4 launch(es) a call at 25.0 us of host time each" in v


def test_launch_verdict_with_one_launch_a_call_is_the_whole_period():
    """Guards host_verdict's max(1, launches): one launch a call, 100 us period: 100 us a launch; half a launch too."""
    one = host([("launch", 80e-6)], launches=1.0, per_launch_s=0.0, period_s=100e-6)
    v = T.host_verdict(summary(100e-6, 20e-6, 80e-6, host=one))
    assert "1 launch(es) a call at 100.0 us of host time each" in v
    half = host([("launch", 80e-6)], launches=0.5, per_launch_s=0.0, period_s=100e-6)
    assert "0.5 launch(es) a call at 100.0 us of host time each" in T.host_verdict(
        summary(100e-6, 20e-6, 80e-6, host=half))


# ------------------------------------------------------------------ idle_parts


def test_idle_parts_without_host_records_is_one_idle_part_with_its_basis():
    """Guards idle_parts: no host records: the 30 us idle whole, and its basis names the 80 us recorded idle."""
    parts = T.idle_parts(summary(100e-6, 20e-6, 80e-6), 30e-6)
    assert parts == [(T.IDLE, 30e-6, "the timed median less the GPU's busy time of the recorded calls, at most the "
                                     "recorded idle (80.0 us a call; recording costs host time)")]


def test_idle_parts_with_causes_of_zero_is_one_idle_part():
    """Guards idle_parts: causes that sum to 0 s split nothing: the 30 us stays one idle part."""
    parts = T.idle_parts(summary(100e-6, 20e-6, 80e-6, host=host([("sync", 0.0)])), 30e-6)
    assert [(k, v) for k, v, _ in parts] == [(T.IDLE, 30e-6)]


def test_idle_parts_split_by_share_and_leave_out_causes_of_zero():
    """Guards idle_parts: 60 us sync, 20 us launch, 0 s graph of 80 us recorded: 40 us idle -> 30 us and 10 us."""
    t = summary(100e-6, 20e-6, 80e-6, host=host([("sync", 60e-6), ("launch", 20e-6), ("graph", 0.0)]))
    parts = T.idle_parts(t, 40e-6)
    assert [(k, v) for k, v, _ in parts] == [("idle after a host sync", pytest.approx(30e-6)),
                                             ("idle between launches", pytest.approx(10e-6))]
    assert parts[0][2].endswith("; its share by what the host did meanwhile (sync), from CUPTI's API records "
                                "(measured)")


def test_idle_parts_names_a_cause_it_has_no_label_for():
    """Guards idle_parts: a cause without a label is 'idle (<cause>)'."""
    parts = T.idle_parts(summary(100e-6, 20e-6, 80e-6, host=host([("paging", 80e-6)])), 40e-6)
    assert [(k, v) for k, v, _ in parts] == [("idle (paging)", pytest.approx(40e-6))]


# ------------------------------------------------------------------ flops_text


def test_flops_text_leaves_out_zero_and_keeps_below_one():
    """Guards flops_text: 0 FLOPs is '0'; 0.5 FLOPs is said; other counters never."""
    assert T.flops_text({"flops:fp32": 0.0, "dram_bytes": 5.0}) == "0"
    assert T.flops_text({"flops:bf16": 0.5}) == "bf16 0.5"
    assert T.flops_text({"flops:fp32": 1e6, "flops:bf16": 2.15e9}) == "bf16 2.15e+09, fp32 1e+06"


# ------------------------------------------------------------------ measured_parts, _legacy_pieces


def _kernels():
    return (KernelGroup(name="sm90_xmma_gemm", kind="kernel", kernel_class="compute", class_basis=T.FROM_NAME,
                        launches_per_call=1.0, time_per_call_s=2e-6, median_s=2e-6),
            KernelGroup(name="memset", kind="memset", kernel_class="memory",
                        class_basis="a memset (the record's kind)", launches_per_call=1.0, time_per_call_s=5e-6,
                        median_s=5e-6))


ALONE = "measured from the intervals: only this class ran"
AT_ONCE = "measured from the intervals: these classes ran at once on the device"
INFERRED = "; class of compute from its name (inferred)"


def test_measured_parts_without_an_idle_piece_take_the_span_less_busy():
    """Guards measured_parts: pieces 5 us memory, 2 us compute, no idle piece, span 10 us, busy 7 us: idle 3 us,
    pieces largest first, the inferred class said only where it was inferred."""
    t = summary(10e-6, 7e-6, 3e-6, pieces=(("compute", 2e-6), ("memory", 5e-6)), kernels=_kernels())
    parts = T.measured_parts(t)
    assert [(k, v) for k, v, _ in parts] == [(T.IDLE, pytest.approx(3e-6)), ("memory (alone)", 5e-6),
                                             ("compute (alone)", 2e-6)]
    assert parts[1][2] == ALONE
    assert parts[2][2] == ALONE + INFERRED


def test_measured_parts_name_an_overlapped_piece_and_take_the_idle_piece():
    """Guards measured_parts: a 4 us 'compute + transfer' piece is '(overlapped)'; the 1 us idle piece is the idle."""
    t = summary(10e-6, 6e-6, 3e-6, pieces=(("compute + transfer", 4e-6), ("compute", 2e-6), ("idle", 1e-6)),
                kernels=_kernels())
    assert T.measured_parts(t) == [
        (T.IDLE, 1e-6, "the GPU ran nothing: the span less the union of every activity (measured)"),
        ("compute + transfer (overlapped)", 4e-6, AT_ONCE + INFERRED),
        ("compute (alone)", 2e-6, ALONE + INFERRED)]


def test_a_piece_is_split_into_classes_only_at_the_plus():
    """Guards measured_parts: a piece's name is cut at ' + ' only: one class named with a space is alone."""
    t = summary(10e-6, 4e-6, 6e-6, pieces=(("tensor core", 4e-6),))
    assert [k for k, _, _ in T.measured_parts(t)] == [T.IDLE, "tensor core (alone)"]


def test_a_summary_stored_without_pieces_shares_its_busy_time_by_class():
    """Guards _legacy_pieces: 8 us busy, classes 3 us compute and 1 us memory (0 s other): 6 us and 2 us."""
    t = summary(10e-6, 8e-6, 2e-6, class_s=(("compute", 3e-6), ("memory", 1e-6), ("other", 0.0)))
    assert T._legacy_pieces(t) == {"compute": pytest.approx(6e-6), "memory": pytest.approx(2e-6)}
    parts = T.measured_parts(t)
    assert [(k, v) for k, v, _ in parts] == [(T.IDLE, pytest.approx(2e-6)), ("compute (alone)", pytest.approx(6e-6)),
                                             ("memory (alone)", pytest.approx(2e-6))]


def test_legacy_pieces_of_no_class_time_are_none():
    """Guards _legacy_pieces: class times of 0 s give no pieces."""
    assert T._legacy_pieces(summary(10e-6, 8e-6, 2e-6, class_s=(("compute", 0.0),))) == {}


# ------------------------------------------------------------------ timed_parts


def _one_gemm():
    return summary(500e-6, 400e-6, 100e-6, pieces=(("compute", 400e-6), ("idle", 100e-6)))


def test_a_timed_median_equal_to_the_busy_time_is_not_scaled():
    """Guards timed_parts: timed 400 us = 400 us busy: 0 s idle, 400 us compute, no scaling note."""
    parts, note = T.timed_parts(_one_gemm(), 400e-6)
    assert note is None
    assert [(k, v) for k, v, _ in parts] == [(T.IDLE, 0.0), ("compute (alone)", 400e-6)]


def test_busy_time_over_the_timed_median_is_scaled_down():
    """Guards timed_parts: 400 us busy, timed 200 us: the compute part is 200 us, 100 % longer said."""
    parts, note = T.timed_parts(_one_gemm(), 200e-6)
    assert [(k, v) for k, v, _ in parts] == [("compute (alone)", pytest.approx(200e-6))]
    assert note == ("the recorded kernels took 100.0% longer per call than the timed calls: the measured parts are "
                    "scaled to the timed median")


def test_a_timed_median_of_zero_gives_the_measured_parts_as_they_are():
    """Guards timed_parts: no timed median (0 s): the recorded parts, 100 us idle and 400 us compute, no note."""
    parts, note = T.timed_parts(_one_gemm(), 0.0)
    assert note is None
    assert [(k, v) for k, v, _ in parts] == [(T.IDLE, 100e-6), ("compute (alone)", 400e-6)]


def test_a_timed_median_over_busy_and_idle_by_the_tolerance_is_not_unattributed():
    """Guards timed_parts: 100 us busy + 100 us idle, timed 1e-12 s longer: within tolerance, nothing unattributed."""
    t = summary(200e-6, 100e-6, 100e-6, pieces=(("compute", 100e-6), ("idle", 100e-6)))
    parts, note = T.timed_parts(t, 100e-6 + 100e-6 + 1e-12)
    assert note is None
    assert [k for k, _, _ in parts] == [T.IDLE, "compute (alone)"]
    parts, _ = T.timed_parts(t, 210e-6)  # 10 us over: unattributed
    assert [(k, v) for k, v, _ in parts] == [(T.IDLE, pytest.approx(100e-6)), (T.UNATTRIBUTED, pytest.approx(10e-6)),
                                             ("compute (alone)", 100e-6)]


# ------------------------------------------------------------------ recordings


def test_to_record_writes_version_meta_and_host_pass():
    """Guards to_record: version 2 with a host pass (its starts, activities and host calls), 1 without; meta kept."""
    a = T.Activity("kernel", "k", 0, 7, 100, 200, 1)
    b = T.Activity("memcpy", "copy", 1, 9, 300, 400, 2, bytes=64, copy_kind="HtoD")
    hc = T.HostCall("launch", "cudaLaunchKernel", 50, 60, 2, 11)
    doc = T.to_record([a], [0], {1: 50}, meta={"gpu": "H200"}, host_pass=([b], [250], [hc]))
    assert doc == {"format": "linkroof-timeline", "version": 2, "meta": {"gpu": "H200"}, "call_starts_ns": [0],
                   "host_of": {"1": 50},
                   "activities": [["kernel", "k", 0, 7, 100, 200, 1, [0, 0, 0], [0, 0, 0], 0, ""]],
                   "host_pass": {"call_starts_ns": [250],
                                 "activities": [["memcpy", "copy", 1, 9, 300, 400, 2, [0, 0, 0], [0, 0, 0], 64,
                                                 "HtoD"]],
                                 "host_calls": [["launch", "cudaLaunchKernel", 50, 60, 2, 11]]}}
    plain = T.to_record([a], [0], {})
    assert plain["version"] == 1 and plain["meta"] == {} and "host_pass" not in plain
    assert T.host_pass_from_record(doc) == ([b], [250], [hc])
    assert T.host_pass_from_record(doc)[2][0].thread == 11


def test_host_pass_from_record_of_no_host_pass_is_none():
    """Guards host_pass_from_record: a version-1 recording or something not a dict has no host pass."""
    assert T.host_pass_from_record(T.to_record([], [0], {})) is None
    assert T.host_pass_from_record([]) is None
    assert T.host_pass_from_record("linkroof-timeline") is None


def test_from_record_refuses_another_format():
    """Guards from_record: a dict of another format is refused by name, not read."""
    other = {"format": "chrome-trace", "activities": [], "call_starts_ns": [], "host_of": {}}
    with pytest.raises(ValueError, match="^not a linkroof timeline recording$"):
        T.from_record(other)
    with pytest.raises(ValueError, match="^not a linkroof timeline recording$"):
        T.from_record([])


def test_a_class_of_the_callers_own_keeps_its_name_in_the_pieces():
    """Guards piece_name: a class given through summarize(classes=) outside CLASSES names its
    piece (10 us of 'tensor core' alone, 10 us of compute, 10 us idle), never ''."""
    acts = [T.Activity("kernel", "mykernel", 0, 7, 0, 10 * US, 1),
            T.Activity("kernel", "sm90_gemm", 0, 7, 20 * US, 30 * US, 2)]
    t = T.summarize(acts, [0], classes={"mykernel": ("tensor core", "given")})
    assert dict(t.pieces) == {"tensor core": pytest.approx(10e-6), "compute": pytest.approx(10e-6),
                              "idle": pytest.approx(10e-6)}
    assert "tensor core (alone)" in [k for k, _, _ in T.measured_parts(t)]
    assert T.piece_name(["zeta", "transfer", "compute", "alpha"]) == "transfer + compute + alpha + zeta"


def test_no_call_gives_a_host_summary_of_zeros_that_says_so():
    """Guards host_causes: no call recorded is no figure, said, not a ValueError."""
    h = T.host_causes([], [])
    assert (h.calls, h.recorded_period_s, h.launches_per_call, h.syncs_per_call, h.idle_causes_s) == (0, 0.0, 0.0,
                                                                                                     0.0, ())
    assert h.notes == ("no call was recorded",)
