"""Tests that kill the mutations issue 33's audit found surviving, each named for the
mutation it guards (tests/tools/mutants.py holds them, so that they stay killed): rules at
their thresholds' edges, busbw factors against nccl-tests' table, multi-rank rows at the
slowest rank, trials with different times, and units kept apart."""

import sys
from pathlib import Path

import pytest

from linkroof.roofline import timeline as T
from fakes import deadline  # noqa: E402


def _recorded_idle_call(idle_ns=150_000, busy_ns=100_000):
    """One call as recorded (CUPTI slows the host): the GPU idle `idle_ns` waiting for a
    launch, then `busy_ns` of kernel."""
    return T.summarize([T.Activity("kernel", "k", 0, 7, idle_ns, idle_ns + busy_ns, 1)], [0],
                       host_calls=[T.HostCall("launch", "cudaLaunchKernel", idle_ns - 2000, idle_ns - 1000, 1)])


def test_guards_verdict_on_the_recorded_idle():
    """The verdict is taken on the timed call's idle (its median less the recorded busy
    time), not on the idle of the recording, which CUPTI's host overhead inflates: 60 %
    idle as recorded, 9 % as timed, is no host verdict."""
    t = _recorded_idle_call()
    assert t.idle_s / t.span_s > 0.5
    assert T.host_verdict(t) is not None  # the recorded period: host-bound
    assert T.host_verdict(t, measured_s=t.busy_s * 1.1) is None  # the timed call: the GPU set the pace
    assert T.host_cause(t, measured_s=t.busy_s * 1.1) is None


# nccl-tests' busbw factors (its doc/PERFORMANCE.md): all-reduce 2(n-1)/n; all-gather,
# reduce-scatter, all-to-all, gather, scatter (n-1)/n; broadcast, reduce, send/recv 1
NCCL_TESTS_BUSBW = {"all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
                    "reduce_scatter": lambda n: (n - 1) / n, "all_to_all": lambda n: (n - 1) / n,
                    "gather": lambda n: (n - 1) / n, "scatter": lambda n: (n - 1) / n,
                    "broadcast": lambda n: 1.0, "reduce": lambda n: 1.0, "sendrecv": lambda n: 1.0}


@pytest.mark.parametrize("coll", sorted(NCCL_TESTS_BUSBW))
@pytest.mark.parametrize("ranks", [2, 4, 8])
def test_guards_busbw_factors_against_nccl_tests_table(coll, ranks):
    """Guards the broadcast, gather, scatter and all-reduce factor mutations."""
    from linkroof.roofline.collectives import busbw_factor

    assert busbw_factor(coll, ranks) == pytest.approx(NCCL_TESTS_BUSBW[coll](ranks))


def test_guards_trace_busbw_as_algbw():
    """A traced all-reduce over 4 ranks: busbw is algbw x 2(n-1)/n = 1.5 x, not algbw."""
    from linkroof.roofline.traces import CollectiveCall

    c = CollectiveCall(rank=0, kernel="ncclDevKernel_AllReduce", device=0, stream=7, start_ns=0, end_ns=1_000_000,
                       collective="all_reduce", dtype="bf16", in_nelems=1 << 20, out_nelems=1 << 20,
                       size_bytes=2 << 20, group_size=4, group_from="kernel args")
    assert c.algbw == pytest.approx((2 << 20) / 1e-3)
    assert c.busbw == pytest.approx(c.algbw * 1.5)


def test_guards_peer_copy_classed_as_a_copy():
    """A peer copy moves data between GPUs: communication, never memory or a transfer."""
    a = T.Activity("memcpy", "Memcpy PtoP (Device -> Device)", 0, 7, 0, 1000, 1, copy_kind="PtoP")
    assert T.kernel_class(a)[0] == "communication"
    d = T.Activity("memcpy", "Memcpy DtoD (Device -> Device)", 0, 7, 0, 1000, 2, copy_kind="DtoD")
    assert T.kernel_class(d)[0] == "memory"


def test_guards_syncs_counted_once():
    """Three syncs of one name in a call are three syncs a call, not one."""
    k1 = T.Activity("kernel", "k", 0, 7, 0, 10_000, 1)
    k2 = T.Activity("kernel", "k", 0, 7, 200_000, 210_000, 2)
    calls = [T.HostCall("launch", "cudaLaunchKernel", -5_000, -2_000, 1)]
    calls += [T.HostCall("sync", "cudaStreamSynchronize", 11_000 + i * 50_000, 40_000 + i * 50_000, 0) for i in range(3)]
    calls.append(T.HostCall("launch", "cudaLaunchKernel", 195_000, 198_000, 2))
    t = T.summarize([k1, k2], [-6_000], host_calls=calls)
    assert t.host.syncs_per_call == 3


def test_guards_two_data_types_flops_as_a_max():
    """A workload with FLOPs in two data types takes the sum of their times on their
    roofs, not the longer one."""
    from linkroof.profiler.session import bundled_profile
    from linkroof.roofline.model import MachineModel
    from linkroof.roofline.place import place
    from linkroof.schema import Workload

    model = MachineModel.from_profile(bundled_profile())
    f16, f32 = model.compute("fp16").value, model.compute("fp32").value
    p = place(Workload("mixed", flops={"fp16": 1e12, "fp32": 1e11}), 1.0, model)
    assert p.terms_s["compute"] == pytest.approx(1e12 / f16 + 1e11 / f32)


# ------------------------------------------------------------------ score: ranks, trials, units


def _fake():
    import sys
    from pathlib import Path

    fake = str(Path(__file__).parent / "tools" / "fake_score_child.py")

    def command(n, port, args):
        import os

        return [sys.executable, fake, *args], dict(os.environ, FAKE_RANKS="2")
    return command


def test_guards_score_speedup_from_the_last_trial():
    """Three PKB trials of a candidate that slows down (50, 100, 200 ms against the
    reference's 100): the speedup is the mean of the trials' (2 + 1 + 0.5) / 3, not the
    last one's 0.5, and the total-time speedup beside it is 300 / 350."""
    from linkroof.scoring import score as S

    [row] = S.score("m:reference", ["m:good__drift"], "m:inputs", ranks=2, protocol="pkb", trials=3,
                    deadline_s=deadline(20.0), command=_fake())
    assert row["correct"], row.get("failure")
    assert row["trial_speedups"] == pytest.approx([2.0, 1.0, 0.5])
    assert row["speedup"] == pytest.approx(3.5 / 3)
    assert row["speedup_total_time"] == pytest.approx(300 / 350)


def test_guards_trials_go_on_after_a_mismatch():
    """PKB stops at the first trial that does not match: a candidate wrong from its second
    trial has two trials, not three."""
    from linkroof.scoring import score as S

    [row] = S.score("m:reference", ["m:good__wronglate"], "m:inputs", ranks=2, protocol="pkb", trials=3,
                    deadline_s=deadline(20.0), command=_fake())
    assert [t["result"] for t in row["trials"]] == ["match", "mismatch"], row.get("failure")
    assert not row["correct"]


def test_guards_pkb_fields_and_time_from_the_slowest_rank():
    """Two ranks, rank 1 the slower (1.2x): the row's time, its PKB fields and the rank
    whose timeline explains it are rank 1's, in ms and s each where named."""
    from linkroof.scoring import score as S

    ref = S.RunResult(S.Target.of("m:reference"), "", 0, 2, 1.0,
                      perf={0: {"wall_time_ms": 100.0, "median_ms": 100.0}, 1: {"wall_time_ms": 120.0, "median_ms": 120.0}})
    cand = S.RunResult(S.Target.of("m:good"), "", 0, 2, 1.0,
                       perf={0: {"wall_time_ms": 50.0, "median_ms": 50.0, "min_time_ms": 49.0},
                             1: {"wall_time_ms": 60.0, "median_ms": 60.0, "min_time_ms": 58.0}})
    assert S.slowest_rank(cand, "pkb") == 1 and S.time_of(cand, "pkb") == pytest.approx(60e-3)
    assert S.time_of(ref, "pkb") / S.time_of(cand, "pkb") == pytest.approx(2.0)
    row = S.score_row(ref, cand, "pkb", 0, 1e-2, 1e-2, None, None, checked=[])
    assert row["explained_rank"] == 1 and row["min_time_ms"] == 58.0 and row["wall_time_ms"] == 60.0
    assert row["time_s"] == pytest.approx(0.060) and row["speedup"] == pytest.approx(2.0)


def test_guards_no_signal_per_hop_in_the_nccl_placement():
    """NCCL's own time on the cost model pays one launch and a signal to the other GPU per
    dependent hop (one over NVSwitch): the bundled profile's one-way flag, 728 ns."""
    from linkroof.profiler.session import bundled_profile
    from linkroof.roofline import workload as W
    from linkroof.roofline.baseline import kernel_placements
    from linkroof.roofline.cost import machine_terms
    from linkroof.roofline.model import MachineModel

    prof = bundled_profile()
    out, _ = kernel_placements("ar", 100e-6, None, W.collective("all_reduce", 1 << 20, 2), MachineModel.from_profile(prof),
                               prof)
    nccl = next(p for p in out if p.workload.name.startswith("NCCL all_reduce"))
    signal = next(r["seconds"] for r in machine_terms(prof) if r["term"] == "sync" and r["kind"] == "gpu")
    assert nccl.cost_terms_s["sync"] == pytest.approx(signal) and 5e-7 < signal < 2e-6


def test_guards_floor_margin_and_its_edge():
    """A time is suspect only under the floor by more than its spread, and the spread is
    at least 2 %: a steady 1.00 ms against a 1.03 ms floor is suspect, against 1.01 it is
    not (within the 2 %)."""
    from linkroof.scoring import score as S

    steady = S.RunResult(S.Target.of("m:c"), "", 0, 1, 1.0, perf={0: {"wall_time_ms": 1.0, "wall_time_std_ms": 0.0}})
    assert S.spread(steady, "pkb") == 0.02
    noisy = S.RunResult(S.Target.of("m:c"), "", 0, 1, 1.0, perf={0: {"wall_time_ms": 1.0, "wall_time_std_ms": 0.05}})
    assert S.spread(noisy, "pkb") == pytest.approx(0.05)
    floor = {"floor_s": 1.03e-3, "basis": "spec ceilings"}
    assert S.below_floor({}, 1.0e-3, floor, 0.02, []) is not None
    assert S.below_floor({}, 1.0e-3, dict(floor, floor_s=1.01e-3), 0.02, []) is None


def test_guards_correct_with_fewer_trials_than_asked():
    """Correct means every trial asked for ran and matched: two matching trials of three
    are not correct."""
    from linkroof.scoring import score as S

    ref = S.RunResult(S.Target.of("m:reference"), "", 0, 1, 1.0, perf={0: {"wall_time_ms": 2.0}})
    cand = S.RunResult(S.Target.of("m:good"), "", 0, 1, 1.0, perf={0: {"wall_time_ms": 1.0}})
    two = [{"trial": 0, "result": "match"}, {"trial": 1, "result": "match"}]
    assert not S.score_row(ref, cand, "pkb", 3, 1e-2, 1e-2, None, None, checked=two)["correct"]
    assert S.score_row(ref, cand, "pkb", 2, 1e-2, 1e-2, None, None, checked=two)["correct"]


@pytest.mark.parametrize("gap_us, cause", [(48, "launch"), (52, "host work")])
def test_guards_host_work_gap_at_50_us(gap_us, cause):
    """The edge between a launch-bound idle and host work is 50 us of host time with no
    CUDA call (the zoo's test follows the constant; this one holds its value)."""
    k1 = T.Activity("kernel", "k", 0, 7, 0, 10_000, 1)
    k2 = T.Activity("kernel", "k", 0, 7, 10_000 + gap_us * 1000, 20_000 + gap_us * 1000, 2)
    calls = [T.HostCall("launch", "cudaLaunchKernel", -5_000, -2_000, 1),
             T.HostCall("other", "cudaGetDevice", 9_000, 9_500, 0),
             T.HostCall("launch", "cudaLaunchKernel", 9_500 + gap_us * 1000, 9_800 + gap_us * 1000, 2)]
    assert T.host_cause(T.summarize([k1, k2], [-6_000], host_calls=calls)) == cause


def test_a_survivors_diff_is_applied_in_its_own_function_where_its_text_recurs():
    """tests/tools/mutants.py --diffs: `continue` in two functions goes to the one the
    mutmut name gives; text in no function of that name, or twice in it, is not applied."""
    sys.path.insert(0, str(Path(__file__).parent / "tools"))
    from mutants import where

    text = "def a(x):\n    continue\n\n\ndef b(x):\n    y = 1\n    continue\n    continue\n\n\ndef c():\n    continue\n"
    assert where(text, "    continue", "x_c__mutmut_3") == text.index("def c():") + len("def c():\n")
    assert where(text, "    continue", "x_a__mutmut_1") == len("def a(x):\n")
    assert where(text, "    continue", "x_b__mutmut_2") is None  # twice in b
    assert where(text, "    continue", "x_d__mutmut_2") is None  # no function d
    assert where(text, "    y = 1", "anything") == text.index("    y = 1")  # once in the file: there
    assert where(text, "    continue", "linkroof.roofline.m.x_c__mutmut_3") == where(text, "    continue", "x_c__mutmut_3")


def test_a_methods_diff_goes_to_its_class_and_method_and_file_headers_are_no_lines(tmp_path):
    """A method's mutmut name (xǁClassǁmethod__mutmut_N) places recurring text in that
    method of that class; `mutmut show`'s `--- file` and `+++ file` headers are neither
    the removed nor the added text."""
    sys.path.insert(0, str(Path(__file__).parent / "tools"))
    from mutants import from_diffs, where

    text = ("class A:\n    def f(self):\n        x = None\n\n    def g(self):\n        x = None\n\n\n"
            "class B:\n    def f(self):\n        x = None\n        return x\n")
    in_b = text.index("class B:")
    assert where(text, "        x = None", "xǁBǁf__mutmut_1") == text.index("        x = None", in_b)
    assert where(text, "        x = None", "linkroof.m.xǁBǁf__mutmut_1") == text.index("        x = None", in_b)
    assert where(text, "        x = None", "xǁAǁg__mutmut_2") == text.index("    def g") + len("    def g(self):\n")
    assert where(text, "        x = None", "xǁAǁf__mutmut_2") == text.index("    def f") + len("    def f(self):\n")
    assert where(text, "        x = None", "xǁCǁf__mutmut_2") is None  # no class C
    assert where(text, "        x = None", "xǁAǁh__mutmut_2") is None  # no method h
    only_b = text.replace("    def g(self):\n        x = None\n\n", "") + "\n    def g(self):\n        x = None\n"
    assert "def g" not in only_b[:only_b.index("class B")]
    assert where(only_b, "        x = None", "xǁAǁg__mutmut_2") is None  # g is B's, not A's
    diffs = tmp_path / "d.txt"
    diffs.write_text("## m.xǁBǁf__mutmut_1\n# m.xǁBǁf__mutmut_1: survived\n--- linkroof/m.py\n+++ linkroof/m.py\n"
                     "@@ -1,3 +1,3 @@\n-        x = None\n+        x = 0\n         return x\n")
    assert from_diffs(str(diffs), "linkroof/m.py") == [("m.xǁBǁf__mutmut_1", "linkroof/m.py", "        x = None",
                                                        "        x = 0")]
