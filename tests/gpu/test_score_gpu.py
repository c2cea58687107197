"""On one GPU: linkroof score runs the examples for real, one rank: the fast candidate is
correct and faster than the reference, the wrong one is caught at its first trial, the
raising one becomes a row; PKB's protocol fields are there."""

import pytest

from gpuinfo import torch_cuda_or_skip

pytestmark = pytest.mark.gpu
torch = torch_cuda_or_skip()

EX = "examples/score/"


def test_examples_score_on_one_gpu():
    from linkroof.scoring.score import score

    rows = score(EX + "allgather_gemm.py", [EX + "allgather_gemm_fast.py", EX + "allgather_gemm_wrong.py",
                                            EX + "allgather_gemm_raises.py"],
                 EX + "inputs.py:allgather_gemm_inputs", protocol="pkb", trials=2, warmup=50, iters=20,
                 deadline_s=120)
    fast, wrong, raises = rows
    assert fast["correct"] and fast["speedup"] > 1.0 and fast["iterations"] == 20
    # the clock state NVML sampled through PKB's timed iterations, the candidate's and the reference's
    for clock in (fast["clock"], fast["reference_clock"]):
        assert clock["state"] in ("burst", "sustained", "drifting") and clock["samples"] > 0, clock
        assert 500 < clock["sm_mhz_median"] <= (clock["sm_mhz_max"] or 1e9) + 1, clock
    assert "clock: " in fast["feedback"]
    assert not wrong["correct"] and wrong["trials"][0]["result"] == "mismatch" and len(wrong["trials"]) == 1
    assert raises["failure"]["kind"] == "exception" and "gives up" in raises["failure"]["message"]


def test_hostile_candidates_on_one_gpu(tmp_path, monkeypatch):
    """The forging, None and daemon candidates through the real child: rejected, a row
    saying why, and scored with its daemons killed; no process of any of them left."""
    import os

    from linkroof.scoring import procs as score_procs
    from linkroof.scoring.score import score

    from pathlib import Path

    ex = str(Path(__file__).resolve().parents[2] / EX) + "/"
    monkeypatch.chdir(tmp_path)  # where the candidates run: the forger leaves its files here
    monkeypatch.setenv("PYTHONPATH", str(Path(ex).parents[1]) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.setenv("LINKROOF_STORE", str(tmp_path / "store.sqlite"))
    (tmp_path / "store.sqlite").write_text("a store")
    H = ex + "hostile/"
    rows = score(ex + "softmax.py", [H + "forge.py", H + "none.py", H + "daemon.py", H + "store.py"],
                 ex + "inputs.py:softmax_inputs", trials=1, deadline_s=120)
    forge, none, daemon, store = rows
    assert forge["failure"]["kind"] == "tampered" and "second connection claimed rank 0" in forge["failure"]["message"]
    assert none["failure"]["kind"] == "bad_output" and "returned None" in none["failure"]["message"]
    assert daemon["correct"] and daemon["processes_killed_after"] >= 2
    assert daemon["clock"]["state"] != "unknown" and daemon["clock"]["samples"] > 0  # linkroof's protocol: compare's
    assert store["correct"] and (tmp_path / "store.sqlite").exists()
    live = [p for p, (_, st) in score_procs.processes().items() if st != "Z" and score_procs._mark_of(p)]
    assert live == [], live
    assert (tmp_path / "rank_0_perf.json").exists() and forge.get("time_s") is None  # written, never read
