"""On one GPU: linkroof score runs the examples for real, one rank: the fast candidate is
correct and faster than the reference, the wrong one is caught at its first trial, the
raising one becomes a row; PKB's protocol fields are there."""

import pytest

from gpuinfo import torch_cuda_or_skip

pytestmark = pytest.mark.gpu
torch = torch_cuda_or_skip()

EX = "examples/score/"


def _progress(row):
    """One line a row, as it is made (pytest -s shows them): where a slow run spends its time."""
    import sys
    import time

    print(f"{time.strftime('%H:%M:%S')} {row.get('candidate')} correct={row.get('correct')} "
          f"failure={(row.get('failure') or {}).get('kind')} suspect={bool(row.get('suspect'))} "
          f"sandbox={(row.get('sandbox') or {}).get('mode')} time_s={row.get('time_s')}", file=sys.stderr, flush=True)


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
    assert forge["failure"]["kind"] == "tampered" and "signature" in forge["failure"]["message"]
    assert none["failure"]["kind"] == "bad_output" and "returned None" in none["failure"]["message"]
    assert daemon["correct"]
    if daemon["sandbox"]["mode"] == "none":
        assert daemon["processes_killed_after"] >= 2
    else:  # the daemons died with the candidate's PID namespace
        assert daemon["sandbox"]["mode"] in ("namespaces", "namespaces+uid")
    assert daemon["clock"]["state"] != "unknown" and daemon["clock"]["samples"] > 0  # linkroof's protocol: compare's
    assert store["correct"] and (tmp_path / "store.sqlite").exists()
    live = [p for p, (_, st) in score_procs.processes().items() if st != "Z" and score_procs._mark_of(p)]
    assert live == [], live
    assert forge.get("time_s") is None


def test_the_judge_against_real_candidates_on_one_gpu(tmp_path, monkeypatch):
    """issue 41's GPU part: the harness rewritten in the candidate's process, the answers
    hunted on disk and in /proc, a cache by data pointer, the judge hunted through /proc
    and ptrace, under PKB's protocol (the judge's clock against the reported loop) and
    linkroof's (the floor of the softmax workload); an honest Triton candidate and the
    reference itself stay correct and untampered under both."""
    import os
    import site
    from pathlib import Path

    from linkroof.profiler.session import bundled_profile
    from linkroof.roofline.workload import load_toml
    from linkroof.scoring import procs as score_procs
    from linkroof.scoring.score import score

    ex = str(Path(__file__).resolve().parents[2] / EX) + "/"
    H = ex + "hostile/"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(Path(ex).parents[1]) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.setenv("LINKROOF_STORE", str(tmp_path / "store.sqlite"))
    (tmp_path / "store.sqlite").write_text("a store")
    wl = load_toml(ex + "softmax.toml")
    cands = [ex + "softmax_triton.py", H + "harness.py", H + "readref.py", H + "dataptr.py", H + "procscan.py"]
    sites = {d: set(os.listdir(d)) for d in site.getsitepackages() if os.path.isdir(d)}
    try:
        pkb = score(ex + "softmax.py", cands, ex + "inputs.py:softmax_inputs", protocol="pkb", trials=1,
                    warmup=20, iters=50, deadline_s=60, workload=wl, profile=bundled_profile(), on_row=_progress)
        lr = score(ex + "softmax.py", cands, ex + "inputs.py:softmax_inputs", protocol="linkroof", trials=2,
                   deadline_s=60, workload=wl, profile=bundled_profile(), on_row=_progress)
    finally:
        for d, before in sites.items():
            for n in set(os.listdir(d)) - before:
                Path(d, n).unlink(missing_ok=True)
                raise AssertionError(f"a candidate left {n} in {d}")
    for rows in (pkb, lr):
        triton, harness, readref, dataptr, procscan = rows
        for honest in (triton, procscan):
            assert honest["correct"] and not honest.get("failure") and not honest.get("suspect"), honest
            assert honest["sandbox"]["mode"] in ("namespaces", "namespaces+uid"), honest["sandbox"]
        assert not readref["correct"] and readref["trials"][0]["result"] == "mismatch"
        assert dataptr.get("suspect") and not dataptr["correct"]
        assert not harness["correct"] and harness.get("speedup") is None
    assert pkb[1]["failure"]["kind"] == "tampered" and "the judge saw take" in pkb[1]["failure"]["message"]
    assert lr[1].get("suspect") or (lr[1].get("failure") or {}).get("kind") == "tampered"
    assert (tmp_path / "store.sqlite").exists()
    live = [p for p, (_, st) in score_procs.processes().items() if st != "Z" and score_procs._mark_of(p)]
    assert live == [], live
