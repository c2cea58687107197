"""Multi-process runs for real, on CPUs: `mpiexec -n 2 linkroof bench --cpu-standin`
(MPICH from its wheel, installed by the test extra) with rank detection, gathering,
merging, a failing rank and a hanging rank."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import factories
import pytest

from linkroof.profiler.distributed import RankReport, run_distributed, standin_work
from linkroof.profiler.plan import make_plan
from linkroof.profiler.launch import LaunchContext, SingleComm, detect
from linkroof import probe


def mpiexec() -> str:
    found = shutil.which("mpiexec") or str(Path(sys.executable).parent / "mpiexec")
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        found = ""
    if not found or not Path(found).exists():
        if os.environ.get("CI"):
            pytest.fail("mpiexec / mpi4py missing in CI: the test extra must install mpich and mpi4py")
        pytest.skip("mpiexec or mpi4py not installed (pip install -e '.[test]')")
    return found


def run_ranks(tmp_path, *args, env=None, timeout=120):
    store = tmp_path / "s.sqlite"
    cmd = [mpiexec(), "-n", "2", sys.executable, "-m", "linkroof", "--store", str(store), "bench", "--cpu-standin",
           *args]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})
    return res, store


def stored(store):
    from linkroof.store import Store

    with Store(store) as s:
        rows = s.list()
        return [s.get(r["id"]) for r in rows]


def test_detect_launchers():
    assert detect({}).kind == "single"
    ctx = detect({"PMI_RANK": "1", "PMI_SIZE": "4", "MPI_LOCALRANKID": "1"})
    assert (ctx.kind, ctx.rank, ctx.world, ctx.local_rank) == ("mpi", 1, 4, 1)
    ctx = detect({"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "8", "OMPI_COMM_WORLD_LOCAL_RANK": "3"})
    assert (ctx.rank, ctx.world) == (3, 8)
    ctx = detect({"SLURM_PROCID": "5", "SLURM_NTASKS": "16", "SLURM_LOCALID": "1"})
    assert (ctx.kind, ctx.rank, ctx.world, ctx.local_rank) == ("mpi", 5, 16, 1)
    ctx = detect({"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "TORCHELASTIC_RUN_ID": "x"})
    assert (ctx.kind, ctx.rank, ctx.world) == ("torchrun", 1, 2)
    from linkroof.profiler.launch import LaunchError

    with pytest.raises(LaunchError):
        detect({"TORCHELASTIC_RUN_ID": "x", "RANK": "one", "WORLD_SIZE": "2"})


def test_single_process_standin_merges_one_rank():
    comm = SingleComm(LaunchContext("single", 0, 1, 0, "box"))
    p = run_distributed(comm, standin=True, timeout_s=5)
    assert p.measurements[0].rank == 0 and p.measurements[0].host == "box" and p.measurements[0].verified
    assert p.hostnames == ("box",)


def test_standin_failure_is_raised():
    os.environ["LINKROOF_STANDIN_FAIL_RANK"] = "7"
    try:
        with pytest.raises(RuntimeError, match="injected failure on rank 7"):
            standin_work(7)
        assert standin_work(0)[0].verified
    finally:
        del os.environ["LINKROOF_STANDIN_FAIL_RANK"]


def test_mpirun_two_ranks(tmp_path):
    out = tmp_path / "p.json"
    res, store = run_ranks(tmp_path, "--json", "--out", str(out))
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)  # rank 0 alone prints the profile
    assert doc["schema"] == "linkroof.Profile"
    ranks = sorted(m["rank"] for m in doc["measurements"])
    assert ranks == [0, 1] and all(m["verified"] for m in doc["measurements"])
    assert "2 ranks under mpi" in doc["notes"][0]
    (profile,) = stored(store)  # saved once, by rank 0
    assert len(profile.measurements) == 2
    assert "rank 1 on" in res.stderr and "results sent to rank 0" in res.stderr


def test_mpirun_failing_rank_is_named_and_the_rest_kept(tmp_path):
    res, store = run_ranks(tmp_path, env={"LINKROOF_STANDIN_FAIL_RANK": "1"})
    assert res.returncode != 0
    (profile,) = stored(store)
    assert [m.rank for m in profile.measurements] == [0]
    assert any("rank 1 on host" in n and "injected failure on rank 1" in n for n in profile.notes)


def test_mpirun_hanging_rank_times_out(tmp_path):
    res, store = run_ranks(tmp_path, "--rank-timeout", "3", env={"LINKROOF_STANDIN_HANG_RANK": "1"}, timeout=90)
    assert res.returncode != 0  # rank 0 saved, then ended every rank
    (profile,) = stored(store)
    assert [m.rank for m in profile.measurements] == [0]
    assert any("did not report within 3 s" in n for n in profile.notes)


def test_nccl_family_is_planned():
    t = probe(replay="h200x2")
    quick = [i for i in make_plan(t, "quick").items if i.family == "nccl"]
    assert {(i.kwargs["coll"], i.kwargs["nbytes"]) for i in quick} == {("all_reduce", 8), ("all_reduce", 512 << 20)}
    default = [i for i in make_plan(t, "default").items if i.family == "nccl"]
    assert {i.kwargs["coll"] for i in default} == {"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                                  "broadcast", "reduce", "sendrecv"}
    full = [i for i in make_plan(t, "full").items if i.family == "nccl"]
    assert not any(i.kwargs["in_place"] and i.kwargs["coll"] in ("all_to_all", "sendrecv") for i in full)
    assert {i.kwargs["dtype"] for i in full} == {"fp32", "bf16", "fp16"}
    swept = [i for i in make_plan(t, "default", only=["nccl"], sizes=[8, 1 << 20]).items]
    assert {i.kwargs["nbytes"] for i in swept} == {8, 1 << 20} and len(swept) == 14
    assert not [i for i in make_plan(probe(replay="h200x1"), "default").items if i.family == "nccl"]


def test_rank_report_is_picklable():
    import pickle

    rep = RankReport(0, "h", topology=probe(replay="h200x1"), measurements=standin_work(0))
    assert pickle.loads(pickle.dumps(rep)).measurements == rep.measurements


@pytest.mark.parametrize("coll", ["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce",
                                  "sendrecv"])
@pytest.mark.parametrize("n", [2, 3, 8])
def test_nccl_expected_results_match_a_simulation(coll, n):
    """The check of every result buffer against a plain NumPy simulation of the collective."""
    import numpy as np

    from linkroof.microbench.nccl import _expected, _value
    from linkroof.roofline.collectives import layout as _layout

    total = 96 * n * 4  # bytes, fp32
    send_n, recv_n = _layout(coll, total, n, 4)
    inputs = [_value(np.arange(send_n), r) for r in range(n)]
    for rank in range(n):
        if coll in ("all_reduce", "reduce"):
            sim = sum(inputs)
        elif coll == "all_gather":
            sim = np.concatenate(inputs)
        elif coll == "reduce_scatter":
            sim = sum(inputs)[rank * recv_n:(rank + 1) * recv_n]
        elif coll == "all_to_all":
            chunk = send_n // n
            sim = np.concatenate([inputs[p][rank * chunk:(rank + 1) * chunk] for p in range(n)])
        elif coll == "broadcast":
            sim = inputs[0]
        else:
            sim = inputs[(rank - 1) % n]
        idx = np.arange(recv_n)
        assert np.array_equal(_expected(coll, rank, n, idx, recv_n), sim), (coll, n, rank)


def test_nccl_layout_rounds_like_nccl_tests():
    from linkroof.roofline.collectives import actual_bytes
    from linkroof.roofline.collectives import layout as _layout

    assert _layout("all_to_all", 8, 8, 4) == (0, 0)  # too small: refused before any call
    assert _layout("all_gather", 100, 3, 4) == (8, 24)
    assert _layout("reduce_scatter", 100, 3, 4) == (24, 8)
    assert actual_bytes("all_gather", 100, 3, "fp32") == 96 and actual_bytes("all_reduce", 100, 3, "fp32") == 100


def test_torchrun_two_ranks_when_torch_is_here(tmp_path):
    """The same orchestration through torch.distributed (gloo), where PyTorch is installed
    (it is not a dependency: skipped without it, in CI too)."""
    try:
        import torch  # noqa: F401
    except ImportError:
        pytest.skip("PyTorch not installed: the torchrun path is tested where it is")
    torchrun = shutil.which("torchrun") or str(Path(sys.executable).parent / "torchrun")
    store = tmp_path / "s.sqlite"
    base = [torchrun, "--nproc-per-node", "2", "-m", "linkroof", "--store", str(store), "bench", "--cpu-standin"]
    res = subprocess.run(base + ["--json"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    doc = json.loads(res.stdout[res.stdout.index("{"):])
    assert sorted(m["rank"] for m in doc["measurements"]) == [0, 1] and "under torchrun" in doc["notes"][0]
    res = subprocess.run(base + ["--rank-timeout", "3"], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "LINKROOF_STANDIN_HANG_RANK": "1"})
    assert res.returncode != 0
    latest = stored(store)[0]
    assert any("did not report within 3 s" in n for n in latest.notes)


def test_mpi_gather_carries_reports_larger_than_an_irecv_buffer(tmp_path):
    """A real rank's report (hundreds of measurements) is megabytes; a pre-posted irecv
    truncates anything over 32 KiB (MPI_ERR_TRUNCATE), as on the 2xH200 machine."""
    script = tmp_path / "g.py"
    script.write_text(
        "from linkroof.profiler.launch import MpiComm, detect\n"
        "c = MpiComm(detect())\n"
        "got = c.gather(bytes([c.ctx.rank]) * (4 << 20), timeout_s=60)\n"
        "if c.ctx.rank == 0:\n"
        "    print([(r, len(b), b[:1]) for r, b in got])\n")
    res = subprocess.run([mpiexec(), "-n", "2", sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[(0, 4194304, b'\\x00'), (1, 4194304, b'\\x01')]"


def test_internode_partners_are_rail_aligned():
    from linkroof.profiler.distributed import internode_peers

    one_host = {0: "a", 1: "a"}
    assert internode_peers(one_host, 0) == (None, None)
    two = {0: "a", 1: "a", 2: "b", 3: "b"}
    assert [internode_peers(two, r) for r in range(4)] == [(2, 2), (3, 3), (0, 0), (1, 1)]
    three = {r: "abc"[r // 2] for r in range(6)}  # next host to send to, previous to receive from
    assert internode_peers(three, 0) == (2, 4) and internode_peers(three, 5) == (1, 3)
    uneven = {0: "a", 1: "a", 2: "b"}  # rank 1 has no partner: it sits the exchange out
    assert internode_peers(uneven, 1) == (None, None) and internode_peers(uneven, 2) == (0, 0)
    # every send has its receive
    for layout in (two, three, uneven):
        for r in layout:
            to, _ = internode_peers(layout, r)
            assert to is None or internode_peers(layout, to)[1] == r


def test_rank_zero_merges_collectives_and_the_exchange_between_hosts(monkeypatch):
    """Two hosts, two ranks each: the per-rank NCCL figures of every rank merge into one
    slowest-rank figure per collective, the send/recv between hosts too."""
    import dataclasses

    from linkroof.profiler import distributed as D
    from linkroof.microbench.nccl import INTERNODE

    hosts = {0: "a", 1: "a", 2: "b", 3: "b"}
    topo = probe(replay="h200x2")

    def rank_report(r):
        def m(name, pattern, t):
            return factories.measurement(name, "nccl", pattern, (r,), 1 << 20, (t, t, t), busbw=1.0, host=hosts[r],
                                         rank=r, dtype="fp32", in_place=False, rank_time="this rank")

        return RankReport(r, hosts[r], topology=dataclasses.replace(topo, host=dataclasses.replace(topo.host,
                                                                                                   hostname=hosts[r])),
                          measurements=[m("nccl_all_reduce", "all_reduce", 1e-3 * (r + 1)),
                                        m("nccl_internode_sendrecv", INTERNODE, 2e-3 + r * 1e-4)])

    class FourRanks(SingleComm):
        calls = 0

        def gather(self, obj, timeout_s, root=0):
            FourRanks.calls += 1
            if FourRanks.calls == 1:
                return sorted(hosts.items())
            return [(r, rank_report(r)) for r in range(4)]

    monkeypatch.setattr(D, "_rank_work", lambda *a, **k: rank_report(0))
    prof = run_distributed(FourRanks(LaunchContext("mpi", 0, 4, 0, "a")), timeout_s=5)
    merged = {m.spec.pattern: m for m in prof.measurements if m.spec.params["rank_time"] != "this rank"}
    assert merged["all_reduce"].times_s == (4e-3,) * 3 and merged["all_reduce"].spec.devices == (0, 1, 2, 3)
    assert merged[INTERNODE].median_s == pytest.approx(2.3e-3)
    assert prof.hostnames == ("a", "b")


def test_sizes_reach_the_ranks(monkeypatch, tmp_path):
    """--sizes under a launcher sweeps what it says (it was once dropped on the way)."""
    from click.testing import CliRunner

    from linkroof.cli import cli
    from linkroof.profiler import distributed as D

    seen = {}

    def fake(comm, suite, only, reps, label, standin, timeout_s, sizes=None):
        seen["sizes"] = sizes
        return None

    monkeypatch.setattr(D, "run_distributed", fake)
    res = CliRunner().invoke(cli, ["--store", str(tmp_path / "s.sqlite"), "bench", "--cpu-standin", "--only", "nccl",
                                   "--sizes", "8:64:2"])
    assert seen["sizes"] == [8, 16, 32, 64] and res.exit_code != 0  # nothing produced: a clear error
    from linkroof.profiler.plan import nccl_grid

    assert {s for _, s, _, _ in nccl_grid("full", [8, 16])} == {8, 16}
    assert D.internode_sizes("quick") == [512 << 20] and D.internode_sizes("full", [8]) == [8]
