"""linkroof score on the CPU: ParallelKernelBench's protocol arithmetic, the output check,
and a batch of candidates run through a stand-in child (tests/tools/fake_score_child.py):
one row per candidate whatever it does, hangs and raises within their deadlines."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from linkroof.cli import cli
from linkroof.scoring import score as S
from fakes import deadline  # noqa: E402

FAKE = str(Path(__file__).parent / "tools" / "fake_score_child.py")
L2 = 50 * 1024 * 1024


@pytest.mark.parametrize("nbytes, groups", [(0, 1), (3 * L2, 1), (4 * L2, 1), (L2, 4), (2 * L2, 2), (1, 128),
                                            (3 * L2 // 200, 128), (3 * L2 // 100, 101)])
def test_input_groups_as_pkb(nbytes, groups):
    assert S.num_input_groups(nbytes, L2) == groups


def test_the_timed_tensor_is_the_first_one_or_the_first_inside_a_list():
    is_t = lambda a: isinstance(a, np.ndarray)  # noqa: E731
    a, b = np.zeros(2), np.ones(2)
    assert S.first_tensor_path((3, a, b), is_t) == (1, None)
    assert S.first_tensor_path((3, [7, a], b), is_t) == (2, None)
    assert S.first_tensor_path((3, (7, a)), is_t) == (1, 1)
    assert S.first_tensor_path((3, 4), is_t) is None
    got = S.substitute((3, (7, a)), (1, 1), b)
    assert isinstance(got[1], tuple) and got[1][1] is b and got[0] == 3


def test_pkb_metrics_are_the_mean_and_the_sample_spread():
    m = S.pkb_metrics([1.0, 2.0, 3.0], 6.3, 500, 4, L2, 1024)
    assert m["wall_time_ms"] == pytest.approx(2.1)  # the total over the calls, not the samples' mean
    assert m["wall_time_std_ms"] == pytest.approx(((1.1 ** 2 + 0.1 ** 2 + 0.9 ** 2) / 2) ** 0.5)
    assert (m["min_time_ms"], m["max_time_ms"], m["iterations"], m["warmup_iterations"]) == (1.0, 3.0, 3, 500)
    assert S.slowest({0: 1.0, 1: 1.5}) == 1.5


@pytest.mark.parametrize("got, match, reason", [
    (np.ones((2, 2)) * 1.005, True, ""), (np.ones((2, 2)) * 1.05, False, "values differ"),
    (np.ones((4,)), False, "shape"), (np.array([[1.0, np.nan], [1, 1]]), False, "NaN"),
    ([np.ones((2, 2)), np.ones(1)], False, "structure")])
def test_outputs_are_checked_as_pkb_does(got, match, reason):
    r = S.compare_outputs(np.ones((2, 2)), got, 1e-2, 1e-2)
    assert r["match"] is match and reason in r["reason"]
    if match:
        assert r["max_abs_err"] == pytest.approx(0.005) and r["max_rel_err"] == pytest.approx(0.005)


def test_the_tolerance_scales_with_the_output_as_torch_allclose_does(monkeypatch):
    """PKB calls torch.allclose(ref.float(), out.float()): |ref - out| <= atol + rtol * |out|.
    ref 1.0, out 1.0201 with atol 0.01, rtol 0.01: 0.0201 <= 0.01 + 0.010201 holds, and
    would not against the reference's magnitude (0.02); checked in chunks of 3 elements
    so the last chunk is short."""
    monkeypatch.setattr(S, "CLOSE_CHUNK", 3)
    ref = np.ones(7, dtype=np.float32)
    out = ref.copy()
    out[6] = 1.0201
    assert S.compare_outputs(ref, out, 1e-2, 1e-2)["match"]
    assert not S.compare_outputs(out, ref, 1e-2, 1e-2)["match"]  # the other way round it is not close
    out[6] = 1.0203
    r = S.compare_outputs(ref, out, 1e-2, 1e-2)
    assert not r["match"] and "(1 of 7 elements)" in r["reason"] and r["max_abs_err"] == pytest.approx(0.0203, 1e-4)


def test_nan_is_never_close_and_equal_infinities_are():
    inf = np.array([np.inf, -np.inf, 1.0])
    assert S.compare_outputs(inf, inf.copy(), 1e-2, 1e-2)["match"]
    both = np.array([np.nan, 1.0])
    r = S.compare_outputs(both, both.copy(), 1e-2, 1e-2)  # torch.allclose's equal_nan=False
    assert not r["match"] and "NaN in the reference and the output" in r["reason"]


def fake(ranks=1):
    def command(n, port, args):
        import os

        env = dict(os.environ, FAKE_RANKS=str(ranks))
        return [sys.executable, FAKE, *args], env
    return command


def test_a_batch_gives_one_row_per_candidate_whatever_it_does(tmp_path):
    rows = S.score("m:reference", ["m:good", "m:slow", "m:wrong", "m:nan", "m:shape", "m:raises", "m:hangs",
                                   "m:crash"], "m:inputs", ranks=1, protocol="pkb", trials=3, deadline_s=deadline(4.0),
                   command=fake())
    by = {r["candidate"]: r for r in rows}
    assert list(by) == ["good", "slow", "wrong", "nan", "shape", "raises", "hangs", "crash"]
    assert not any(by[n].get("failure") for n in ("good", "slow", "wrong", "nan", "shape")), \
        {n: r.get("failure") for n, r in by.items()}
    assert by["good"]["correct"] and by["good"]["speedup"] == pytest.approx(2.0)
    assert [t["result"] for t in by["good"]["trials"]] == ["match"] * 3
    assert by["slow"]["correct"] and by["slow"]["speedup"] == pytest.approx(0.25)
    assert by["wrong"]["trials"] == [by["wrong"]["trials"][0]] and by["wrong"]["trials"][0]["result"] == "mismatch"
    assert not by["wrong"]["correct"] and "values differ" in by["wrong"]["feedback"]
    assert "NaN" in by["nan"]["trials"][0]["reason"] and "shape" in by["shape"]["trials"][0]["reason"]
    assert by["raises"]["failure"]["kind"] == "exception" and "ValueError" in by["raises"]["feedback"]
    assert by["hangs"]["failure"]["kind"] == "hang" and by["hangs"]["failure"]["ranks"] == [0]
    assert by["crash"]["failure"]["kind"] == "crash"
    assert all(r["protocol"] == "pkb" and "wall_s" in r for r in rows)
    assert by["good"]["wall_time_ms"] == pytest.approx(0.05) and by["good"]["warmup_iterations"] == 500
    # that the hang costs its deadline, not the batch: benchmarks/door_times.py times it


def test_the_slowest_rank_counts_and_a_hung_rank_is_named(tmp_path):
    rows = S.score("m:reference", ["m:good", "m:halfhang"], "m:inputs", ranks=2, protocol="pkb", trials=2,
                   deadline_s=deadline(4.0), command=fake(2))
    good, half = rows
    assert good["time_s"] == pytest.approx(0.05e-3 * 1.2) and good["speedup"] == pytest.approx(2.0)
    assert half["failure"]["kind"] == "hang" and half["failure"]["ranks"] == [1]


def test_unknown_link_bytes_say_why_and_several_ranks_say_it_in_the_feedback():
    one = S.score("m:reference", ["m:slow"], "m:inputs", protocol="linkroof", trials=1, command=fake())[0]
    assert one["link_bytes_note"] == "NVLink bytes unknown: NVML lists no active NVLink on GPU 0"
    assert "NVLink bytes unknown" not in one["feedback"]  # one rank: nothing had to cross a link
    two = S.score("m:reference", ["m:slow"], "m:inputs", ranks=2, protocol="linkroof", trials=1, command=fake(2))[0]
    assert "NVLink bytes unknown: NVML lists no active NVLink on GPU 0" in two["feedback"]


def test_feedback_is_made_of_the_measured_facts():
    rows = S.score("m:reference", ["m:slow"], "m:inputs", protocol="linkroof", trials=1, command=fake())
    fb = rows[0]["feedback"]
    assert "0.25x the reference" in fb and "idle (host / launch) 60%" in fb and "launch-bound (measured)" in fb
    assert "linkroof protocol" in fb
    # the longest kernel by the timeline's time, its identifier, class, launches and share of the call
    assert "its longest kernel: elementwise_kernel (memory) (2 launches), 120.0 us a call, 30% of the call" in fb


def test_a_failed_reference_fails_every_row():
    rows = S.score("m:raises", ["m:good"], "m:inputs", trials=1, command=fake())
    assert rows[0]["failure"]["kind"] == "reference_failed" and not rows[0]["correct"]


def test_placement_on_this_machines_roofline():
    from linkroof.profiler.session import bundled_profile
    from linkroof.roofline.workload import collective

    wl = collective("all_gather", 1 << 20, 2)
    row = S.score_row(*[_result(n, t) for n, t in (("reference", 100.0), ("good", 50.0))], "pkb", 1, 1e-2, 1e-2,
                      wl, bundled_profile(), load=lambda p: np.ones(2))
    assert 0 < row["fraction_of_roofline"] <= 1 and row["limiter"]
    assert "NCCL on this machine: all_gather of 1048576 B" in row["feedback"]
    assert "the fastest mechanism this profile measured at this size: " in row["feedback"]


def test_a_candidate_faster_than_the_bound_is_flagged_and_one_without_kernels_said():
    """The all-reduce shortcut of examples/score (one rank: the tensor returned as it is)
    ran 2.9 us on one H200 against a workload of 256 MiB through HBM: the row carries the
    placement's verdict and its empty timeline is said, never read as 2146 % of the roofline
    without a word."""
    from linkroof.profiler.session import bundled_profile
    from linkroof.schema import Workload

    wl = Workload(name="all-reduce 8192 x 8192 bf16, one rank", hbm_bytes=1 << 28)
    ref, fast = _result("reference", 65.6), _result("good", 2.9)
    fast.perf[0]["timeline"] = {"kernels_per_call": 0, "parts": {}, "kernels": []}
    row = S.score_row(ref, fast, "pkb", 1, 1e-2, 1e-2, wl, bundled_profile(), load=lambda p: np.ones(2))
    assert row["fraction_of_roofline"] > 10 and row["peak_fraction"] == row["fraction_of_roofline"]
    assert any(v.startswith("faster than its cost-model bound") for v in row["placement_verdicts"])
    assert "faster than its cost-model bound" in row["feedback"]
    assert "nothing ran on the GPU in the call (measured timeline)" in row["feedback"]
    # 256 MiB through the spec sheet's 4.8 TB/s takes 55.9 us: 2.9 us is below the physical floor
    assert row["floor_s"] == pytest.approx((1 << 28) / 4.8e12, rel=0.01) and "spec ceilings" in row["floor_basis"]
    assert row["speedup"] is None and row["suspect"]["measured_speedup"] == pytest.approx(65.6 / 2.9)
    assert row["feedback"].startswith("SUSPECT, not ranked: measured 2.90 us, under the physical floor of 55.9")
    # a time under its bound is a ratio, never a share over 100 % (the checker's rule)
    assert f"{row['peak_fraction']:.1f}x faster than the roofline allows (memory-bound)" in row["feedback"]
    assert "self-check" not in row["feedback"]
    assert list(row)[:3] == ["candidate", "peak_fraction", "peak_fraction_of_cost_bound"]


def _result(name, us):
    import tempfile

    d = tempfile.mkdtemp()
    Path(d, "r0_t0_0.npy").write_bytes(b"")
    r = S.RunResult(S.Target.of(f"m:{name}"), d, 0, 1, 0.1)
    r.outputs[0] = {"0": [str(Path(d, "r0_t0_0.npy"))]}
    r.perf[0] = {"wall_time_ms": us / 1e3}
    r.trials_done[0] = 1
    return r


def test_cli_score_json_lines_and_table(monkeypatch, tmp_path):
    monkeypatch.setattr(S, "child_command", fake())
    monkeypatch.chdir(tmp_path)  # the targets are checked (read, not run) before any child starts
    Path("m.py").write_text("".join(f"def {n}(): pass\n" for n in ("reference", "good", "wrong", "slow", "inputs")))
    res = CliRunner().invoke(cli, ["score", "m:reference", "m:good", "m:wrong", "--inputs", "m:inputs",
                                   "--trials", "2", "--protocol", "pkb", "--json"])
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in res.stdout.splitlines()]
    assert [r["candidate"] for r in lines] == ["good", "wrong"]
    assert lines[0]["correct"], lines[0].get("failure")
    res = CliRunner().invoke(cli, ["score", "m:reference", "m:good", "m:slow", "--inputs", "m:inputs", "--trials", "1"])
    assert res.exit_code == 0 and "Candidates" in res.stdout and "2.00x" in res.stdout
    out = " ".join(res.stdout.split())  # the feedback after the table, whatever the terminal's width
    assert "Feedback" in out and "slow: 0.25x the reference" in out and "its longest kernel: elementwise_kernel" in out


def test_pkb_file_targets_and_problem_ids():
    t = S.Target.of("reference/12_allgather_gemm.py")
    assert t.spec == "reference/12_allgather_gemm.py:solution" and t.name == "12_allgather_gemm"
    assert S.pkb_problem_id("reference/12_allgather_gemm.py") == 12 and S.pkb_problem_id("x/mine.py") == 1


def test_link_bytes_and_wire_efficiency_from_the_counters():
    """The child's NVML counters (2 MB a call for 'good') against a workload that moves
    1 MiB over NVLink: 2 MB counted, the wire efficiency and why, in the row and feedback."""
    from linkroof.profiler.session import bundled_profile
    from linkroof.roofline.workload import collective

    wl = collective("all_gather", 2 << 20, 2)
    rows = S.score("m:reference", ["m:good", "m:slow"], "m:inputs", trials=1, workload=wl,
                   profile=bundled_profile(), command=fake())
    good, slow = rows
    assert good["link_bytes_per_call"] == 2.0e6 and good["wire_efficiency"] == pytest.approx(2.0e6 / (1 << 20))
    assert "2,000,000 NVLink bytes a call (NVML's counters), wire efficiency 1.91x" in good["feedback"]
    assert "link_bytes_per_call" not in slow


@pytest.mark.parametrize("recording, why", [("h200x2", ""), ("h200x1", "NVML lists no active NVLink on GPU 0")])
def test_the_child_says_why_link_bytes_will_be_unknown(monkeypatch, recording, why):
    """score_child._counters on a recorded machine: an H200 of the 2 x H200 box has
    NVLinks to count; the one-GPU lease's H200 (as recorded) lists none, and says so."""
    from linkroof.profiler import counters, probe
    from linkroof.scoring import child as score_child

    topo = probe.probe(replay=recording)
    monkeypatch.setattr(probe, "probe", lambda: topo)
    monkeypatch.setattr(counters, "NvmlCounters", lambda gpus, links: ("counters", gpus, links))
    got, note = score_child._counters(0)
    assert got == ("counters", [0], {0: len(topo.gpus[0].nvlinks)}) and note == why


def test_a_mean_of_trial_speedups_is_not_given_as_the_ratio_of_one_trials_times():
    """PKB's protocol on one H200 (benchmarks/RESULTS.md): 5 trials' speedups averaging
    1.0413, the last trial 489.1 against 510.6 us (1.044): the feedback says which is which."""
    row = {"protocol": "pkb", "correct": True, "speedup": 1.0413, "trial_speedups": [1.0296, 1.046, 1.0407, 1.046,
                                                                                     1.0439],
           "time_s": 489.1e-6, "reference_time_s": 510.6e-6}
    fb = S.feedback(dict(row, speedup_total_time=1.0421))
    assert fb.startswith("1.04x the reference by total time over 5 trials, 1.04x as PKB's mean of the trials' "
                         "speedups (pkb protocol; the last trial 489.1 us against 510.6 us)")
    one = S.feedback(dict(row, trial_speedups=[1.0568], speedup=1.0568, time_s=496.4e-6, reference_time_s=524.6e-6))
    assert one.startswith("1.06x the reference (496.4 us against 524.6 us, pkb protocol)")


def test_the_total_time_ratio_stands_beside_pkbs_mean_of_ratios(monkeypatch):
    """Trials at 0.1x and 10x: PKB's mean of ratios is 5.05x; the total-time ratio, named,
    is (10 + 1) / (100 + 0.1) = 0.11x."""
    times = iter([("reference", 10.0), ("c", 100.0), ("reference", 1.0), ("c", 0.1)])

    def run_target(target, *a, **k):
        name, us = next(times)
        return _result(name, us)

    monkeypatch.setattr(S, "run_target", run_target)
    monkeypatch.setattr(S, "check_trials", lambda ref, cand, ts, *a, **k: [{"trial": ts[0], "result": "match"}])
    monkeypatch.setattr(S.time, "sleep", lambda s: None)
    row = S._pkb_candidate("m:reference", "m:c", 0, "m:inputs", 1, 2, 1e-2, 1e-2, None, None, "/tmp", {})
    assert row["speedup"] == pytest.approx(5.05) and row["trial_speedups"] == pytest.approx([0.1, 10.0])
    assert row["speedup_total_time"] == pytest.approx(11 / 100.1)
    assert "0.11x the reference by total time over 2 trials, 5.05x as PKB's mean" in row["feedback"]


def test_a_call_of_copies_only_is_not_told_no_gpu_work_ran():
    """A peer memcpy, no kernel: the feedback says its GPU work was a copy, never that
    nothing ran; a call with nothing at all on the GPU says that."""
    row = {"correct": True, "protocol": "linkroof", "timeline": {
        "kernels_per_call": 0, "activities_per_call": 1,
        "kernels": [{"name": "Memcpy PtoP", "kind": "memcpy", "class": "communication", "launches_per_call": 1,
                     "time_per_call_s": 80e-6}]}, "decomposition": {"communication (alone)": 83e-6, "idle": 17e-6},
        "time_s": 100e-6}
    fb = S.feedback(row)
    assert "no kernel ran in the call: its GPU work was 1 memcpy operation(s) a call (measured timeline)" in fb
    assert "nothing ran on the GPU" not in fb and "its longest memcpy: Memcpy PtoP (communication)" in fb
    row["timeline"] = {"kernels_per_call": 0, "activities_per_call": 0, "kernels": []}
    assert "nothing ran on the GPU in the call" in S.feedback(row)


def test_the_breakdown_comes_from_the_slowest_rank(tmp_path):
    """Two ranks, rank 1 the slower (1.2x): the row's time and its decomposition are rank 1's."""
    ref, cand = _result("reference", 100.0), _result("good", 50.0)
    cand.ranks = ref.ranks = 2
    cand.perf[0]["timeline"] = {"parts": {"compute (alone)": 50e-6}}
    cand.perf[1] = {"wall_time_ms": 0.06, "timeline": {"parts": {"idle": 40e-6, "compute (alone)": 20e-6}}}
    ref.perf[1] = {"wall_time_ms": 0.1}
    cand.outputs[1] = ref.outputs[1] = cand.outputs[0]
    row = S.score_row(ref, cand, "pkb", 1, 1e-2, 1e-2, load=lambda p: np.ones(2))
    assert row["time_s"] == pytest.approx(60e-6) and row["explained_rank"] == 1
    assert row["decomposition"] == {"idle": 40e-6, "compute (alone)": 20e-6}
    assert "of rank 1's time: idle 67%, compute (alone) 33%" in row["feedback"]


def test_every_row_carries_its_clock_state_and_the_references():
    """The state NVML sampled through the timed calls rides in the row, the candidate's and
    the reference's, and the feedback says it (and the reference's where they differ);
    a harness that sent none is 'unknown', said so, never left out."""
    rows = S.score("m:reference", ["m:good", "m:good__drift", "m:good__noclock"], "m:inputs", ranks=1,
                   protocol="pkb", trials=1, deadline_s=deadline(10.0), command=fake())
    by = {r["candidate"]: r for r in rows}
    assert by["good"]["clock"]["state"] == "burst" and by["good"]["reference_clock"]["state"] == "burst"
    assert "clock: burst, SM 1980 MHz" in by["good"]["feedback"] and "the reference's" not in by["good"]["feedback"]
    assert "clock: drifting, SM 1755 MHz (the reference's: burst, SM 1980 MHz)" in by["good__drift"]["feedback"]
    assert by["good__noclock"]["clock"]["state"] == "unknown"
    assert "clock: unknown (the harness sent no clock state)" in by["good__noclock"]["feedback"]


def test_inputs_of_no_arguments_are_the_same_for_every_process_of_a_trial(tmp_path):
    """Seen on the H200: the zoo's inputs take no arguments and draw unseeded random
    tensors, so the reference's process and each candidate's drew different inputs and
    every candidate of three correct pairs read 'wrong'. The child now seeds the global
    generators from the trial and rank before calling such a function."""
    import random

    from linkroof.scoring.child import make_inputs_factory

    mod = tmp_path / "noarg_inputs.py"
    mod.write_text("import random\nimport numpy as np\n"
                   "def make():\n    return np.random.rand(8), random.random()\n")
    made = make_inputs_factory(f"{mod}:make", 0, (1, 1), "float32")
    a, b = made(0, 1, 12345), made(0, 1, 12345)  # two processes of one trial: the same inputs
    assert (a[0] == b[0]).all() and a[1] == b[1]
    other_trial, other_rank = made(0, 1, 12346), made(1, 2, 12345)
    assert not (a[0] == other_trial[0]).all() and not (a[0] == other_rank[0]).all()
    random.seed()  # the test leaves the process's generators unseeded again
    __import__("numpy").random.seed()
