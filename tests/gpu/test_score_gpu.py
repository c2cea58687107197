"""On one GPU: linkroof score runs the examples for real, one rank: the fast candidate is
correct and faster than the reference, the wrong one is caught at its first trial, the
raising one becomes a row; PKB's protocol fields are there."""

import pytest

from gpuinfo import torch_cuda_or_skip

pytestmark = pytest.mark.gpu
torch = torch_cuda_or_skip()

EX = "examples/score/"


def test_examples_score_on_one_gpu():
    from linkroof.profiler.score import score

    rows = score(EX + "allgather_gemm.py", [EX + "allgather_gemm_fast.py", EX + "allgather_gemm_wrong.py",
                                            EX + "allgather_gemm_raises.py"],
                 EX + "inputs.py:allgather_gemm_inputs", protocol="pkb", trials=2, warmup=50, iters=20,
                 deadline_s=120)
    fast, wrong, raises = rows
    assert fast["correct"] and fast["speedup"] > 1.0 and fast["iterations"] == 20
    assert not wrong["correct"] and wrong["trials"][0]["result"] == "mismatch" and len(wrong["trials"]) == 1
    assert raises["failure"]["kind"] == "exception" and "gives up" in raises["failure"]["message"]
