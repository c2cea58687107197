"""The benchmark layer without a GPU: planning from each topology, the runner's error
handling, totals and conventions, the multicast refusal, the CLI with a fake runner."""

import dataclasses
import json

import factories
import pytest
from click.testing import CliRunner

import fakes
from linkroof import probe
from linkroof.cli import cli
from linkroof.microbench import copies, latency, multicast
from linkroof.profiler import runner
from linkroof.profiler.plan import PlannedBench, Plan, make_plan
from linkroof.profiler.probe import probe_source
from linkroof.profiler.recording import replay_source
from linkroof.profiler.session import bundled_profile
from linkroof.roofline.checks import flag_above_spec
from linkroof.schema import GpuState, Profile, loads


def topo(name):
    return probe_source(replay_source(fakes.SCENARIOS[name]().recording(), name))


def fns(plan):
    return [(i.family, i.function_name, i.kwargs.get("mechanism"), i.kwargs.get("mode")) for i in plan.items]


def test_quick_plan_on_h200x2_has_the_headlines():
    plan = make_plan(probe(replay="h200x2"), "quick")
    got = fns(plan)
    for mech in ("ce", "sm", "tma"):
        for mode in ("read", "write"):
            assert ("peer_" + mech, "copies.peer_copy", mech, mode) in got
    assert ("compute", "compute.gemm", None, None) in got
    assert {i.kwargs["where"] for i in plan.items if i.fn is latency.pointer_chase} == {"peer", "host"}
    assert not plan.skipped and len(plan.items) <= 15


def test_default_and_full_plans_grow():
    t = probe(replay="h200x2")
    quick, default, full = (make_plan(t, s) for s in ("quick", "default", "full"))
    assert len(quick.items) < len(default.items) < len(full.items)
    assert "sweep" in default.families() and "concurrency" in default.families()
    sizes = {i.kwargs["nbytes"] for i in full.items if i.family == "sweep"}
    assert min(sizes) == 4 and max(sizes) == 1 << 30
    assert full.items[-1].family == "sweep"  # the longest family runs last
    sm_sweeps = [i for i in full.items if i.family == "sweep" and i.kwargs["mechanism"] == "sm"]
    assert all(i.kwargs["loops"] * i.kwargs["nbytes"] <= 16 << 20 or i.kwargs["loops"] == 1 for i in sm_sweeps)


def test_pcie_box_plan_skips_what_cannot_run():
    plan = make_plan(topo("pcie_box_4"), "default")
    assert any("no peer path GPU0 -> GPU2" in s.reason for s in plan.skipped)
    assert any(s.name == "peer_tma" and "9.0" in s.reason for s in plan.skipped)
    assert not any(i.family == "peer_tma" for i in plan.items)
    staged = [i for i in plan.items if i.kwargs.get("peer_access") is False]
    assert {(i.kwargs["src"], i.kwargs["dst"]) for i in staged} >= {(0, 2), (3, 1)}
    patterns = {i.kwargs.get("pattern") for i in plan.items if i.family == "concurrency"}
    assert patterns == {"all_to_all", "all_to_one", "one_to_all"}


def test_eight_gpu_plans():
    t = topo("hgx_h100_8")
    default, full = make_plan(t, "default"), make_plan(t, "full")
    pairs = lambda p: {(i.kwargs["src"], i.kwargs["dst"]) for i in p.items  # noqa: E731
                       if i.fn is copies.peer_copy and i.family == "peer_ce" and i.kwargs.get("peer_access", True)}
    assert len(pairs(full)) == 56 and len(pairs(default)) == 29  # every pair once, plus one reversed
    conc = [i for i in default.items if i.family == "concurrency"]
    assert all(i.kwargs["gpus"] == list(range(8)) for i in conc)
    # the driver's host-staged copy takes ~2 s a pair (2xH200): one pair in default, all in full
    staged = lambda p: [i for i in p.items if i.kwargs.get("peer_access") is False]  # noqa: E731
    assert len(staged(default)) == 1 and len(staged(full)) == 28


def test_single_gpu_and_mig():
    plan = make_plan(probe(replay="h200x1"), "default")
    assert not any(i.family.startswith("peer") or i.family == "concurrency" for i in plan.items)
    assert any(s.name == "sweep" for s in plan.skipped)
    mig = make_plan(topo("a100_mig"), "default")
    assert not mig.items and "MIG" in mig.skipped[0].reason


@pytest.mark.parametrize("kwargs, message", [
    ({"suite": "huge"}, "unknown suite"),
    ({"gpus": [7]}, "no GPU 7"),
    ({"only": ["warp"]}, "unknown benchmark family"),
])
def test_plan_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_plan(probe(replay="h200x2"), **kwargs)


def m(devices=(0, 1), times=(1e-3, 1e-3), nbytes=1 << 28, **kw):
    return factories.measurement(devices=devices, times=times, nbytes=nbytes, **kw)


def test_per_gpu_egress_sums_simultaneous_parts():
    parts = [m(devices=(0, 1), times=(1e-3, 2e-3)), m(devices=(0, 2), times=(1e-3, 1e-3)), m(devices=(1, 0))]
    (gpu0,) = copies.per_gpu_egress(parts, "all_to_all")
    assert gpu0.spec.devices == (0,) and gpu0.bytes_per_rep == 2 << 28
    # one window: rep 0 both parts end at 1 ms; rep 1 the slow part ends at 3 ms, a 2 ms slot
    # (pairing rates by index would claim 1.34e11 + 2.68e11 B/s there)
    assert [gpu0.bytes_per_rep / t for t in gpu0.times_s] == pytest.approx([2 * (1 << 28) / 1e-3, 2 * (1 << 28) / 2e-3])


def test_curve_reaches():
    from linkroof.roofline.model import Curve

    c = Curve("nvlink", "sm", "p2p_write", [(1024, 1e9), (4096, 50e9), (65536, 95e9), (1 << 20, 100e9)])
    assert c.reaches(0.5) == 4096 and c.reaches(0.9) == 65536


def test_above_spec_is_flagged():
    t = probe(replay="h200x2")
    fast = m(times=(1e-4,), nbytes=1 << 28)  # 2.7 TB/s over NVLink: impossible
    ok = m(times=(1e-3,))
    flagged, fine = flag_above_spec(t, [fast, ok])
    assert any("above spec" in w and "pair0-1" in w for w in flagged.warnings)
    assert fine.warnings == ()
    ref = bundled_profile()
    assert not any("above spec" in w for x in ref.measurements for w in x.warnings)


def test_bundled_reference_profile():
    ref = bundled_profile()
    assert ref.label == "reference:h200x2" and len(ref.measurements) > 200
    assert all(x.verified for x in ref.measurements)
    best = max(x.bandwidth_bytes_per_s for x in ref.measurements
               if x.spec.name == "p2p_write_bandwidth" and x.spec.mechanism == "ce")
    assert 393.8e9 <= best <= 478.125e9


def plan_of(*items):
    return Plan(items=[PlannedBench("local", f"item {i}", fn) for i, fn in enumerate(items)], skipped=[], gpus=[0],
                suite="quick")


def test_runner_keeps_going_and_keeps_results(monkeypatch):
    def good():
        return [m()]

    def oom():
        raise MemoryError("out of memory allocating 1 GiB")

    def one():
        return m()

    plan = plan_of(good, oom, one)
    throttled = GpuState(0, 1980, 3201, 700.0, 80, True, True, ("sw_power_cap",))
    res = runner.run_plan(plan, states=lambda: (throttled,))
    assert len(res.measurements) == 2 and len(res.skipped) == 1
    assert "MemoryError" in res.skipped[0].reason
    assert all(any(w.startswith("GPU0 throttled: sw_power_cap (one reading after") for w in x.warnings)
               for x in res.measurements)
    assert not res.interrupted and len(res.item_seconds) == 3
    from linkroof.profiler.environment import collect_environment

    prof = runner.run_profile(probe(replay="h200x1"), collect_environment(), plan, res)
    assert any(n.startswith("wall time per family (s / benchmarks): local ") and n.endswith(" / 3")
               for n in prof.notes)


def test_runner_ctrl_c_keeps_what_was_measured(monkeypatch):
    def stop():
        raise KeyboardInterrupt

    plan = plan_of(lambda: [m()], stop, lambda: [m()])
    res = runner.run_plan(plan)
    assert res.interrupted and len(res.measurements) == 1
    assert "interrupted" in res.notes[-1]


@pytest.mark.parametrize("env, allowed, refused", [
    ({}, False, "only with --allow-multicast"),
    ({"NCCL_NVLS_ENABLE": "0"}, True, "NCCL_NVLS_ENABLE=0"),
    ({"TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"}, True, "TORCH_SYMM_MEM_DISABLE_MULTICAST=1"),
    ({"NVSHMEM_DISABLE_NVLS": "1"}, True, "NVSHMEM_DISABLE_NVLS=1"),
    ({"NCCL_NVLS_ENABLE": "1"}, True, None),
])
def test_multicast_refusal(env, allowed, refused):
    reason = multicast.refusal(allowed, env)
    if refused is None:
        assert reason is None
    else:
        assert refused in reason


def test_multicast_bench_refuses_before_touching_the_driver(monkeypatch):
    monkeypatch.setenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
    monkeypatch.setattr(multicast, "_driver", lambda: pytest.fail("the driver must not be reached"))
    with pytest.raises(multicast.MulticastRefused, match="TORCH_SYMM_MEM_DISABLE_MULTICAST=1"):
        multicast.multicast_bench([0, 1], 1 << 20, 3)


def test_cli_refuses_multicast(monkeypatch):
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "0")
    res = CliRunner().invoke(cli, ["bench", "--allow-multicast"])
    assert res.exit_code == 4 and "refusing the NVSwitch multicast benchmark" in res.output
    monkeypatch.delenv("NCCL_NVLS_ENABLE")
    res = CliRunner().invoke(cli, ["bench", "--only", "multicast"])
    assert res.exit_code == 4 and "--allow-multicast" in res.output


def test_cli_plan_and_bad_options():
    r = CliRunner()
    res = r.invoke(cli, ["bench", "--plan", "--replay", "h200x2", "--suite", "quick"])
    assert res.exit_code == 0 and "SM read GPU0->GPU1" in res.output
    doc = json.loads(r.invoke(cli, ["bench", "--plan", "--replay", "h200x2", "--json"]).stdout)
    assert doc and {"family", "title", "function", "args"} <= set(doc[0])
    assert r.invoke(cli, ["bench", "--plan", "--replay", "h200x2", "--gpus", "0,9"]).exit_code == 2
    assert r.invoke(cli, ["bench", "--plan", "--replay", "h200x2", "--sizes", "huge"]).exit_code == 2
    assert r.invoke(cli, ["bench", "--plan", "--replay", "h200x2", "--gpus", "a"]).exit_code == 2
    res = r.invoke(cli, ["bench", "--replay", "h200x2"])
    assert res.exit_code == 2 and "--plan" in res.output


def test_cli_bench_with_a_fake_runner(monkeypatch, store_path, tmp_path):
    from linkroof.profiler import bench

    ref = bundled_profile()
    monkeypatch.setattr(bench, "plan_for", lambda **kw: (make_plan(ref.topology, kw["suite"]), ref.topology))
    monkeypatch.setattr(bench, "run", lambda plan, topology, label="", progress=True: dataclasses.replace(ref, label=label))
    out = tmp_path / "p.json"
    res = CliRunner().invoke(cli, ["bench", "--suite", "quick", "--json", "--out", str(out), "--label", "mine"])
    assert res.exit_code == 0, res.output
    assert loads(res.stdout, Profile).label == "mine" and loads(out.read_text(), Profile).label == "mine"
    listed = json.loads(CliRunner().invoke(cli, ["runs", "list", "--json"]).stdout)
    assert listed["total"] == 1 and listed["profiles"][0]["measurements"] == len(ref.measurements)
    table = CliRunner().invoke(cli, ["bench", "--suite", "quick", "--no-save"])
    assert "p2p_write_bandwidth" in table.output and "message-size sweep points" in table.output


def test_bench_without_cupy_is_one_line(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_cupy(name, *args, **kwargs):
        if name == "cupy" or name.startswith("cupy."):
            raise ImportError("No module named 'cupy'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_cupy)
    from linkroof.microbench import cuda
    from linkroof.profiler import bench

    with pytest.raises(cuda.CudaUnavailable, match="CuPy is not installed"):
        bench.run(make_plan(probe(replay="h200x2"), "quick"), probe(replay="h200x2"))


def test_sorted_unique_equals_numpy_unique():
    import numpy as np

    from linkroof.microbench.buffers import sorted_unique

    rng = np.random.default_rng(7)
    for n in (0, 1, 5, 10_000):
        a = rng.integers(0, max(1, n // 3), size=n).astype(np.uint64)
        assert np.array_equal(sorted_unique(a), np.unique(a))


def test_bench_summary_condenses_collective_sweeps():
    from rich.console import Console

    from linkroof.profiler.session import bundled_profile
    from linkroof.render import bench_summary

    profile = bundled_profile()
    console = Console(width=200, record=True)
    console.print(bench_summary(profile))
    text = console.export_text()
    rows = [line for line in text.splitlines() if "│ nccl_" in line and "│ nccl  " in line]
    # each (collective, data type, in place, timing) at its smallest and largest size only
    groups: dict = {}
    for m in profile.measurements:
        if m.spec.mechanism == "nccl":
            p = m.spec.params
            groups.setdefault((m.spec.pattern, p["dtype"], p["in_place"], p["timing"]), set()).add(m.spec.message_bytes)
    assert len(groups) == 2 * (7 + 2 + 5)  # both timings: fp32 x 7, bf16 / fp16 all-reduce, 5 in place
    shown = sum(min(2, len(sizes)) for sizes in groups.values())
    assert len(rows) == shown
    total = sum(1 for m in profile.measurements if m.spec.mechanism == "nccl")
    assert f"{total - shown} collective figures at other sizes" in text
    small = next(line for line in rows if "│ 8 B" in line and "all_reduce" in line)
    assert " ns (bus " in small  # a time, not 0.0 GB/s


def test_throttling_marks_only_the_throttled_gpus_figures():
    gpu0 = factories.measurement("gemm_throughput", "compute", "gemm", (0,), 0, flops=1e12, dtype="fp16")
    gpu1 = factories.measurement("gemm_throughput", "compute", "gemm", (1,), 0, flops=1e12, dtype="fp16")
    hot1 = (GpuState(0, 1980, 3201, 500.0, 60, True, True, ()),
            GpuState(1, 1600, 3201, 700.0, 80, True, True, ("sw_power_cap",)))
    res = runner.run_plan(plan_of(lambda: [gpu0], lambda: [gpu1]), states=lambda: hot1)
    snapshot = "GPU1 throttled: sw_power_cap (one reading after the benchmark: this driver has no throttle counters)"
    assert res.measurements[0].warnings == () and res.measurements[1].warnings == (snapshot,)
    assert res.notes == [f"local: {snapshot}"]


def test_throttle_counters_mark_a_benchmark_throttled_while_it_ran_not_after():
    """NVML's throttle counters (ns so far) read around each benchmark: one that was
    power-capped while it ran is marked with how long, whatever the reasons read after
    it say; one that ran cool is not marked although the reasons read after it show a
    cap (the next benchmark's load, or a moment's)."""
    gpu0 = factories.measurement("gemm_throughput", "compute", "gemm", (0,), 0, flops=1e12, dtype="fp16")
    reads = iter([{0: {"sw_power_cap": 1e9}}, {0: {"sw_power_cap": 1.25e9}},   # first: 250 ms capped
                  {0: {"sw_power_cap": 1.25e9}}, {0: {"sw_power_cap": 1.25e9}}])  # second: none
    capped_after = (GpuState(0, 1600, 3201, 700.0, 80, True, True, ("sw_power_cap",)),)
    res = runner.run_plan(plan_of(lambda: [gpu0], lambda: [gpu0]), states=lambda: capped_after,
                          throttle=lambda: next(reads))
    first, second = res.measurements
    assert len(first.warnings) == 1 and first.warnings[0].startswith(
        "GPU0 throttled during the benchmark: sw_power_cap ")
    assert "the counter grew 250.0 ms" in first.warnings[0]  # the stand-in benchmark took far less than 250 ms
    assert second.warnings == ()


def test_throttle_time_is_said_within_the_benchmarks_own_window():
    """NVML's violation counters lag: a delta of 59.5 ms over a 30 ms window was printed
    as '59.5 ms of 0.03 s'. The time said is never above the window, and the lag is said."""
    from linkroof.profiler.environment import throttled_during

    lag = throttled_during({0: {"sw_power_cap": 0.0}}, {0: {"sw_power_cap": 59.5e6}}, 0.030)[0]
    assert "sw_power_cap 30.0 ms (the counter grew 59.5 ms" in lag and lag.endswith("of its 30.0 ms window")
    inside = throttled_during({0: {"hw_slowdown": 1e6}}, {0: {"hw_slowdown": 11e6}}, 0.030)[0]
    assert "hw_slowdown 10.0 ms of its 30.0 ms window" in inside and "lags" not in inside
    assert throttled_during({0: {"hw_slowdown": 1e6}}, {0: {"hw_slowdown": 1e6}}, 0.030) == {}


def test_simultaneous_window_counts_the_slowest_lane_not_rates_by_index():
    from linkroof.microbench.copies import window_slots

    # one lane twice as fast: the window is the slow lane's, not the pairing of rates
    assert window_slots([(1.0, 1.0, 1.0), (2.0, 2.0, 2.0)]) == (2.0, 2.0, 2.0)
    # the lead changes hands: the slots still add up to the whole window
    slots = window_slots([(3.0, 1.0, 1.0), (1.0, 1.0, 4.0)])
    assert slots == (3.0, 1.0, 2.0) and sum(slots) == max(5.0, 6.0)
    # bytes over the window is below the sum of each lane's own rate when one lane runs alone
    a, b = (1.0,) * 4, (1.25,) * 4
    total = 2 * 4 / sum(window_slots([a, b]))
    assert total < 1 / 1.0 + 1 / 1.25


def test_the_gemm_check_reads_bf16_from_its_bits_and_the_rest_as_stored():
    """The GEMM check's host half (compute.as_f64): bf16 kept as the top 16 bits of an
    fp32, so 0x3f80 is 1.0 and 0xc040 is -3.0; fp16 read as stored."""
    import numpy as np

    from linkroof.microbench import compute

    assert compute.as_f64(np.array([0x3F80, 0xC040, 0x0000], dtype=np.uint16), "bf16").tolist() == [1.0, -3.0, 0.0]
    assert compute.as_f64(np.array([0.5, -2.0], dtype=np.float16), "fp16").tolist() == [0.5, -2.0]
    assert compute.as_f64(np.array([0.1], dtype=np.float32), "fp32").dtype == np.float64
    assert set(compute.KINDS) == set(compute.GEMM_DTYPES) == set(compute.TOLERANCE)
