"""`linkroof compare` orchestration with a fake GPU timer and fake NVML counters."""

import dataclasses
import json

import numpy as np
import factories
import pytest
from click.testing import CliRunner

from linkroof import probe
from linkroof.cli import cli
from linkroof.profiler import compare as C
from linkroof.profiler.session import bundled_profile
from linkroof.roofline.baseline import kernel_placements, nccl_baseline
from linkroof.roofline.model import MachineModel
from linkroof.roofline.workload import collective
from linkroof.schema import Workload

GiB = 1 << 30


class FakeTimer(C.Timer):
    def __init__(self, per_call_s):
        self.per_call_s, self.calls = per_call_s, 0

    def sync(self):
        pass

    def time_calls(self, call, reps, ops_per_call=1, min_batch_s=0.0):
        self.ops_per_call = ops_per_call
        out = []
        for i in range(reps):
            call(i)
            self.calls += 1
            out.append(self.per_call_s)
        return out


class FakeCounters(C.Counters):
    """Each read returns totals grown by `per_call` bytes for every call timed so far."""

    def __init__(self, timer, per_call):
        self.timer, self.per_call = timer, per_call

    def read(self):
        n = self.timer.calls
        return {0: {"nvlink_tx": n * self.per_call, "nvlink_rx": 0.0, "pcie_tx": 1000.0 * n, "pcie_rx": 0.0},
                1: {"nvlink_tx": 0.0, "nvlink_rx": n * self.per_call}}


def test_run_callable_counts_bytes_and_checks_the_reference():
    seen = []

    def make():
        a = np.arange(1024, dtype=np.float32)
        return (a,)

    def kernel(a):
        seen.append(id(a))
        return a * 2

    timer = FakeTimer(2.7e-3)
    res = C.run_callable("k", kernel, make, timer, FakeCounters(timer, GiB), reps=20, warmup=3,
                         reference=lambda a: a + a)
    assert res.median_s == 2.7e-3 and res.link_bytes() == GiB
    assert res.counter_bytes_per_call[0]["pcie_tx"] == 1000.0
    assert res.checked.startswith("matches the reference")
    assert res.input_sets == 1


def test_inputs_rotate_when_they_fit_in_l2():
    made = []

    def make():
        made.append(1)
        return (np.zeros(1024, dtype=np.float32),)  # 4 KiB

    res = C.run_callable("k", lambda a: a, make, FakeTimer(1e-6), None, reps=10, warmup=1, l2_bytes=16 << 10)
    assert res.input_sets == len(made) == 16  # enough sets to overflow the L2 four times, at most 16


def test_reference_mismatch_is_an_error():
    with pytest.raises(C.CompareError, match="differs from the reference"):
        C.run_callable("k", lambda a: a + 1, lambda: (np.ones(8),), FakeTimer(1e-3), None, reps=2,
                       reference=lambda a: a)
    with pytest.raises(C.CompareError, match="output shape"):
        C.run_callable("k", lambda a: a[:4], lambda: (np.ones(8),), FakeTimer(1e-3), None, reps=2,
                       reference=lambda a: a)


def test_placement_uses_counter_bytes_and_reports_the_ratio():
    ref = bundled_profile()
    model = MachineModel.from_profile(ref)
    timer = FakeTimer(GiB / 396e9)
    res = C.run_callable("ce_copy", lambda a: a, lambda: (np.ones(4),), timer, FakeCounters(timer, GiB), reps=5)
    placements, notes = kernel_placements(res.name, res.median_s, res.link_bytes(), None, model, ref)
    measured = placements[0]
    assert measured.workload.source == "counters" and measured.limiter == "link:nvlink"
    assert measured.fraction_of_roofline == pytest.approx(396 / 396.5, rel=0.01)
    wl = Workload("copy", link_bytes={"nvlink": GiB / 2}, message_bytes=GiB)
    _, notes = kernel_placements(res.name, res.median_s, res.link_bytes(), wl, model, ref)
    assert "ratio 2.00" in notes[0]


def test_nccl_baseline_matches_size_dtype_and_ranks():
    p = factories.profile([factories.collective("all_reduce", s, s / 300e9) for s in (1 << 20, 1 << 28)])
    exact = nccl_baseline(p, collective("all_reduce", 1 << 28, 2))
    assert exact.median_s == pytest.approx((1 << 28) / 300e9) and exact.how == "measured at this size"
    mid = nccl_baseline(p, collective("all_reduce", 1 << 24, 2))  # between the two: interpolated, and said so
    assert mid.message_bytes == 1 << 24 and mid.how.startswith("interpolated between 1048576 and 268435456")
    assert (1 << 20) / 300e9 < mid.median_s < (1 << 28) / 300e9
    assert nccl_baseline(p, collective("all_gather", 1 << 20, 2)) is None
    ref = bundled_profile()  # fp32, bf16 and fp16 all-reduce at every size: fp32 unless the workload says
    assert nccl_baseline(ref, collective("all_reduce", 1 << 29, 2)).dtype == "fp32"
    bf16 = dataclasses.replace(collective("all_reduce", 1 << 29, 2), params={"dtype": "bf16"})
    got = nccl_baseline(ref, bf16)
    assert got.dtype == "bf16" and got.ranks == 2 and got.how == "measured at this size"


def test_all_gather_gemm_baseline_uses_the_gathered_size():
    """nccl-tests counts an all-gather by its whole output: the template's message is the
    gathered A, so the baseline is looked up at that size, not at one shard."""
    from linkroof.roofline import workload as W

    w = W.allgather_gemm(8192, 8192, 1024, "bf16", 2)
    assert w.message_bytes == 2 * 8192 * 1024
    got = nccl_baseline(bundled_profile(), w)
    assert got.message_bytes == 16 << 20 and got.how == "measured at this size"  # 16 MiB: on nccl-tests' x2 grid
    off_grid = nccl_baseline(bundled_profile(), W.allgather_gemm(8192, 8192, 1536, "bf16", 2))
    assert off_grid.message_bytes == 24 << 20 and "interpolated" in off_grid.how  # between 16 and 32 MiB


def test_resolve_errors(tmp_path):
    with pytest.raises(C.CompareError, match="expected module:function"):
        C.resolve("nothing")
    with pytest.raises(C.CompareError, match="no file"):
        C.resolve("missing.py:f")
    with pytest.raises(C.CompareError, match="cannot import"):
        C.resolve("no_such_module_xyz:f")
    f = tmp_path / "k.py"
    f.write_text("x = 1\n")
    with pytest.raises(C.CompareError, match="has no callable 'f'"):
        C.resolve(f"{f}:f")


def test_cli_compare_with_fakes(tmp_path, store_path, monkeypatch):
    user = tmp_path / "mykernels.py"
    user.write_text("import numpy as np\n"
                    "def make_inputs():\n    return (np.arange(256, dtype=np.float32),)\n"
                    "def fast(a):\n    return a * 2\n"
                    "def baseline(a):\n    return a + a\n")
    toml = tmp_path / "w.toml"
    toml.write_text('[workload]\nname = "x"\nmessage_bytes = 1073741824\n[workload.link_bytes]\nnvlink = 1073741824\n')
    timers = []

    def fake_timer(framework, gated=False):
        if gated:  # the gated pass: the GPU alone, 2.0 ms where the ungated calls took 2.75 ms
            return FakeTimer(2.0e-3)
        t = FakeTimer(2.75e-3 if not timers else 5.5e-3)
        timers.append(t)
        return t

    monkeypatch.setattr(C, "CudaTimer", fake_timer)
    class Lazy(FakeCounters):  # made before the timer; reads the first (kernel) timer's calls
        def __init__(self, gpus, links):
            super().__init__(None, GiB)

        def read(self):
            self.timer = timers[0]
            return super().read()

    monkeypatch.setattr(C, "NvmlCounters", Lazy)
    monkeypatch.setattr("linkroof.profiler.probe.probe", lambda replay=None, record=None: probe(replay="h200x2"))
    res = CliRunner().invoke(cli, ["compare", f"{user}:fast", "--inputs", f"{user}:make_inputs", "--reference",
                                   f"{user}:baseline", "--workload", str(toml), "--profile", "reference", "--json",
                                   "--reps", "10"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["median_s"] == 2.75e-3 and doc["checked"].startswith("matches")
    names = [p["workload"]["name"] for p in doc["placements"]]
    assert names[0] == "fast" and "baseline (reference)" in names[2]
    assert doc["placements"][0]["derived"]["fraction_of_roofline"] == pytest.approx((GiB / 396.5e9) / 2.75e-3, rel=0.01)
    assert any("speedup over the reference: 2.00x" in n for n in doc["notes"])
    assert any("ratio 1.00" in n for n in doc["notes"])
    assert doc["overhead_s"] < 1.0
    assert doc["launch_share_s"] == pytest.approx(0.75e-3)  # what the host's launch added: ungated - gated
    d = doc["placements"][0]["decomposition_s"]
    assert d["host launch (measured)"] == pytest.approx(0.75e-3) and sum(d.values()) == pytest.approx(2.75e-3)
    # the bound holds the profile's launch term (a graph launch, under a microsecond), never the call's own host time
    p0 = doc["placements"][0]
    assert p0["bound_time_s"] < p0["cost_bound_s"] < p0["bound_time_s"] + 2e-6
    assert any("the host's launch added 750.0 us a call" in n for n in doc["notes"])
    listed = json.loads(CliRunner().invoke(cli, ["runs", "list", "--json"]).stdout)
    assert listed["profiles"][0]["label"].startswith("compare:")


@pytest.mark.parametrize("counted, given, size, words", [
    (2.0e6, 1.0e6, 1 << 20, "LL protocol"), (1.00004e9, 1.0e9, 256 << 20, "match"),
    (0.5e9, 1.0e9, 256 << 20, "overstates"), (1.3e9, 1.0e9, 256 << 20, "more bytes crossed"),
    (2.0e9, 1.0e9, 256 << 20, "more bytes crossed")])
def test_wire_efficiency_is_explained(counted, given, size, words):
    from linkroof.roofline.baseline import wire_efficiency

    ratio, why = wire_efficiency(counted, given, size)
    assert ratio == pytest.approx(counted / given) and words in why


def test_wire_efficiency_travels_with_the_placement():
    ref = bundled_profile()
    model = MachineModel.from_profile(ref)
    wl = Workload("ag", link_bytes={"nvlink": 512 << 10}, message_bytes=1 << 20, pattern="all_gather", ranks=2)
    placements, notes = kernel_placements("ag", 20e-6, 1 << 20, wl, model, ref)
    assert "LL protocol" in notes[0]
    assert all(any(f.startswith("wire efficiency 2.00x") for f in p.flags) for p in placements[:2])


def test_timing_notes_say_how_and_flag_a_launch_bound_kernel():
    from linkroof.profiler.compare import CompareResult, timing_notes

    fast = CompareResult("k", [5e-6] * 10, host_s_per_call=20e-6)
    notes = timing_notes(fast, "torch", gated=False)
    assert "other streams is timed only where the call waits for it" in notes[0]
    assert "clock state unknown" in notes[1]
    # no timeline: the host's loop time is said, inferred, and never called launch-bound
    assert "inferred from host and event times" in notes[-1] and not any("launch-bound" in n for n in notes)
    assert len(timing_notes(fast, "torch", gated=True)) == 3  # how, the clock state, the cache state
    assert timing_notes(fast, "torch", gated=True)[2].startswith("cache state: ")
    assert len(timing_notes(CompareResult("k", [1e-3] * 10, host_s_per_call=1.01e-3), "cupy", False)) == 3


def test_compare_always_times_and_says_what_placing_needs(tmp_path, store_path, monkeypatch):
    """Issue 29: no workload, no counters, no timeline: the call is still timed and
    reported, with what it would need to be placed (it stopped with 'nothing to bound')."""
    user = tmp_path / "bare.py"
    user.write_text("import numpy as np\n"
                    "def make_inputs():\n    return (np.arange(64, dtype=np.float32),)\n"
                    "def k(a):\n    return a * 2\n")
    monkeypatch.setattr(C, "CudaTimer", lambda framework, gated=False: FakeTimer(1.5e-3))
    monkeypatch.setattr("linkroof.profiler.probe.probe", lambda replay=None, record=None: probe(replay="h200x2"))
    res = CliRunner().invoke(cli, ["compare", f"{user}:k", "--inputs", f"{user}:make_inputs", "--profile",
                                   "reference", "--no-timeline", "--no-counters", "--no-save", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["median_s"] == 1.5e-3 and doc["placements"][0]["limiter"] == "unknown"
    assert any("To place it: --workload FILE" in n and "--counters" in n for n in doc["notes"])
    plain = CliRunner().invoke(cli, ["compare", f"{user}:k", "--inputs", f"{user}:make_inputs", "--profile",
                                     "reference", "--no-timeline", "--no-counters", "--no-save"])
    assert plain.exit_code == 0 and "To place it" in plain.output


def test_an_unplaced_call_keeps_its_reference_measured_and_shows_no_nan(tmp_path, store_path, monkeypatch):
    """Issue 43, seen on the H200: with --reference and no workload, the reference was
    timed and checked, then dropped from the text and the JSON; the share read 'nan%' and
    the self-check called that a contradiction on every unplaced call."""
    user = tmp_path / "pair.py"
    user.write_text("import numpy as np\n"
                    "def make_inputs():\n    return (np.arange(64, dtype=np.float32),)\n"
                    "def k(a):\n    return a * 2\n"
                    "def ref(a):\n    return a + a\n")
    timers = []

    def fake_timer(framework, gated=False):
        t = FakeTimer(1.5e-3 if not timers else 4.5e-3)  # the candidate's timer first, then the reference's
        timers.append(t)
        return t

    monkeypatch.setattr(C, "CudaTimer", fake_timer)
    monkeypatch.setattr("linkroof.profiler.probe.probe", lambda replay=None, record=None: probe(replay="h200x2"))
    args = ["compare", f"{user}:k", "--inputs", f"{user}:make_inputs", "--reference", f"{user}:ref", "--profile",
            "reference", "--no-timeline", "--no-counters", "--no-save", "--gated"]
    res = CliRunner().invoke(cli, args + ["--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["reference"]["name"] == "ref" and doc["reference"]["median_s"] == 4.5e-3
    assert doc["reference"]["function"].endswith(":ref")
    [ref] = [p for p in doc["placements"] if p["workload"]["name"] == "ref (reference)"]
    assert ref["measured_time_s"] == 4.5e-3 and ref["limiter"] == "unknown"
    assert any("speedup over the reference: 3.00x" in n for n in doc["notes"])
    assert not any("contradiction" in n for n in doc["notes"])
    timers.clear()
    text = CliRunner().invoke(cli, args, terminal_width=250)
    assert text.exit_code == 0, text.output
    assert "ref (reference)" in text.output and "4.50 ms" in text.output
    assert "nan" not in text.output


def test_compare_runs_the_self_check_on_its_own_sentences(tmp_path, store_path, monkeypatch):
    """A planted contradiction in compare's text (an L2 hit rate of 333 %) is reported by
    the self-check; the same run without it reports none."""
    user = tmp_path / "one.py"
    user.write_text("import numpy as np\n"
                    "def make_inputs():\n    return (np.arange(64, dtype=np.float32),)\n"
                    "def k(a):\n    return a * 2\n")
    monkeypatch.setattr(C, "CudaTimer", lambda framework, gated=False: FakeTimer(1.5e-3))
    monkeypatch.setattr("linkroof.profiler.probe.probe", lambda replay=None, record=None: probe(replay="h200x2"))
    args = ["compare", f"{user}:k", "--inputs", f"{user}:make_inputs", "--profile", "reference", "--no-timeline",
            "--no-counters", "--no-save", "--json"]
    clean = json.loads(CliRunner().invoke(cli, args).stdout)
    assert not any("self-check" in n for n in clean["notes"])
    real = C.timing_notes
    monkeypatch.setattr(C, "timing_notes", lambda *a, **k: real(*a, **k) + ["served from L2 (333% hits) (ncu)"])
    planted = json.loads(CliRunner().invoke(cli, args).stdout)
    assert any("self-check found a contradiction" in n and "333%" in n for n in planted["notes"])
