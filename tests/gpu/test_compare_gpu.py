"""On the accelerator (two GPUs): the examples run through compare, and NVML's link
counters count the bytes that really crossed NVLink."""

import pytest

from gpuinfo import GPU_COUNT, needs_two

pytestmark = pytest.mark.gpu
GiB = 1 << 30




@needs_two
def test_peer_copy_example_counters_see_one_gib():
    from linkroof.profiler.compare import run_compare

    out = run_compare("examples/peer_copy_cupy.py:ce_copy", "examples/peer_copy_cupy.py:make_inputs",
                      reference="examples/peer_copy_cupy.py:sm_copy", workload_path="examples/peer_copy.toml",
                      reps=10, warmup=3)
    r = out.result
    assert r.checked.startswith("matches")
    assert r.link_bytes() == pytest.approx(GiB, rel=0.01)
    assert 0.5 < out.placements[0].fraction_of_roofline <= 1.0001


@needs_two
def test_all_reduce_counter_bytes_match_the_ring_formula():
    from linkroof import probe
    from linkroof.microbench import nccl
    from linkroof.profiler.counters import NvmlCounters
    from linkroof.roofline.collectives import link_bytes

    topo = probe()
    counters = NvmlCounters([0, 1], {g.index: len(g.nvlinks) for g in topo.gpus})
    size = 256 << 20

    def sent(reps: int) -> float:
        before = counters.read()
        nccl.collective([0, 1], "all_reduce", size, reps=reps, graph=False)  # only the timed calls scale with reps
        return counters.read()[0]["nvlink_tx"] - before[0]["nvlink_tx"]

    # the difference of two runs cancels the warm-ups and the checked run
    per_call = (sent(30) - sent(10)) / 20
    assert per_call == pytest.approx(link_bytes("all_reduce", size, 2), rel=0.05)


@needs_two
@pytest.mark.parametrize("example, workload", [("allreduce_torch.py:all_reduce", "allreduce.toml"),
                                               ("allgather_gemm_naive.py:allgather_gemm", "allgather_gemm.toml")])
def test_torch_examples_run_under_torchrun(tmp_path, example, workload):
    """The examples as a user runs them: two ranks under torchrun, through the CLI; the
    NVLink counters see the workload's bytes and the process group is closed."""
    import json
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    pytest.importorskip("torch")
    torchrun = shutil.which("torchrun") or str(Path(sys.executable).parent / "torchrun")
    module, fn = example.split(":")
    cmd = [torchrun, "--nproc-per-node", "2", "-m", "linkroof", "--store", str(tmp_path / "s.sqlite"), "compare",
           f"examples/{module}:{fn}", "--inputs", f"examples/{module}:make_inputs", "--workload",
           f"examples/{workload}", "--reps", "20", "--json"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert res.returncode == 0, res.stderr[-3000:]
    doc = json.loads(res.stdout[res.stdout.index("{"):])
    measured = next(p for p in doc["placements"] if p["ceilings_kind"] == "measured")
    assert 0 < measured["derived"]["fraction_of_roofline"] <= 1.0001
    sent = max(v["nvlink_tx"] for v in doc["counter_bytes_per_call"].values())
    assert sent == pytest.approx(measured["workload"]["link_bytes"]["nvlink"], rel=0.05)
    assert "destroy_process_group() was not called" not in res.stderr
    # the cost model's bound at or under the measured time (a bound above it would be a
    # wrong ceiling, not a fast call), and the measured time decomposed from the timeline
    # with most of it explained (a decomposition that sums to the time by construction
    # says nothing unless its parts were measured)
    d = measured["decomposition_s"]
    assert measured["cost_bound_s"] <= measured["measured_time_s"] * 1.01
    assert d.get("unexplained", 0.0) < 0.5 * measured["measured_time_s"], d
    assert doc["launch_share_s"] is not None or any("no gated pass" in n or "another clock state" in n
                                                    for n in doc["notes"])


def test_torch_collective_cost_under_torchrun(tmp_path):
    """`linkroof bench --only launch` under torchrun measures a 4-byte torch all-reduce
    per call, back to back, on every rank, checked: one rank per GPU, up to two (on one
    GPU, a one-rank group)."""
    import json
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    pytest.importorskip("torch")
    torchrun = shutil.which("torchrun") or str(Path(sys.executable).parent / "torchrun")
    out = tmp_path / "p.json"
    ranks = min(2, GPU_COUNT)
    cmd = [torchrun, "--nproc-per-node", str(ranks), "-m", "linkroof", "--store", str(tmp_path / "s.sqlite"),
           "bench", "--only", "launch", "--no-save", "--json", "--out", str(out)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert res.returncode == 0, res.stderr[-3000:]
    ms = [m for m in json.loads(out.read_text())["measurements"] if m["spec"]["name"] == "torch_collective_cost"]
    assert len(ms) == ranks and all(m["verified"] for m in ms), res.stderr[-3000:]
    for m in ms:
        per_call = sorted(m["times_s"])[len(m["times_s"]) // 2]
        assert 3e-6 < per_call < 500e-6
