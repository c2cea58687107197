"""The per-rank map and the cross-rank reduce of `linkroof trace`: the same report
whether the ranks are read here, in local processes or on a Dask cluster (a real local
one, started here), and a rank's mistakes refused the same way on each."""

import json

import pytest
from click.testing import CliRunner

import tracegen as G
from linkroof.cli import cli
from linkroof.profiler.session import bundled_profile
from linkroof.readers import traces as P

REF = bundled_profile()


def _files(tmp_path, n=4):
    return [G.tier1_rank(r, start_skew_us=30.0 * r, world=n).write(tmp_path / f"rank{r}.json") for r in range(n)]


def _facts(rep):
    d = rep.to_dict()
    return (d["collectives"], d["steps"], d["across_ranks"], d["unmatched"], d["warnings"])


def test_local_processes_give_the_report_read_here_gives(tmp_path):
    files = _files(tmp_path)
    here = P.analyze([P.read_trace(f) for f in files], REF)
    pooled = P.analyze_job(files, REF, engine="local", workers=2)
    assert _facts(pooled) == _facts(here)
    assert here.matched and all(m.ranks == (0, 1, 2, 3) for m in here.matched)
    assert all(t.activities == [] for t in pooled.traces)  # only compact results came back


@pytest.mark.not_under_mutmut
@pytest.mark.usefixtures("leaves_no_process")
def test_dask_local_cluster_gives_the_same_report(tmp_path):
    pytest.importorskip("dask.distributed")
    files = _files(tmp_path)
    here = P.analyze([P.read_trace(f) for f in files], REF)
    seen = []
    on_dask = P.analyze_job(files, REF, engine="dask", workers=2, progress=lambda d, t, w: seen.append((d, t)))
    assert _facts(on_dask) == _facts(here)
    assert seen[-1] == (4, 4)


def test_ranks_of_different_jobs_are_refused_after_the_map(tmp_path):
    a = G.tier1_rank(0).write(tmp_path / "a.json")
    b = G.tier1_rank(0, start_skew_us=10.0).write(tmp_path / "b.json")  # rank 0 again, other bytes
    with pytest.raises(P.TraceError, match=r"ranks \[0\] appear in more than one file"):
        P.analyze_job([a, b], REF, engine="local", workers=2)


def test_unknown_engine_and_unreachable_scheduler_are_one_line(tmp_path):
    files = _files(tmp_path, 2)
    with pytest.raises(P.TraceError, match="engine 'spark'"):
        P.analyze_job(files, REF, engine="spark")
    res = CliRunner().invoke(cli, ["--store", str(tmp_path / "s.sqlite"), "trace", *files, "--profile", "reference",
                                   "--scheduler", "tcp://127.0.0.1:9"])
    assert res.exit_code != 0 and "--scheduler needs --engine dask" in res.output


@pytest.mark.not_under_mutmut
@pytest.mark.usefixtures("leaves_no_process")
def test_cli_trace_on_dask(tmp_path):
    pytest.importorskip("dask.distributed")
    files = _files(tmp_path)
    res = CliRunner().invoke(cli, ["--store", str(tmp_path / "s.sqlite"), "trace", *files, "--profile", "reference",
                                   "--engine", "dask", "--workers", "2", "--json", "--no-save"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert len(doc["ranks"]) == 4 and doc["across_ranks"]
