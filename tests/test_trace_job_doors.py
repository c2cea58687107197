"""The doors of `linkroof trace` over several files (issue 42, item 8): a file given
twice, a Dask scheduler that is no address, more workers than files or cores, ranks
recorded hours apart. Each a clear refusal or a stated warning."""

import json
import os
import shutil

import pytest
from click.testing import CliRunner

import tracegen as G
from linkroof.cli import cli
from linkroof.profiler.session import bundled_profile
from linkroof.readers import traces as P

REF = bundled_profile()


@pytest.fixture
def two(tmp_path):
    return [G.tier1_rank(r).write(tmp_path / f"r{r}.json") for r in (0, 1)]


def run(*args):
    return CliRunner().invoke(cli, ["trace", *args, "--no-save"])


def test_a_file_given_twice_is_refused_by_path_and_by_content(two, tmp_path):
    out = run(two[0], two[0], two[1])
    assert out.exit_code != 0 and out.output.strip().endswith("given twice (each call would be counted twice)")
    copy = tmp_path / "copy.json"
    shutil.copy(two[0], copy)
    out = run(two[0], str(copy))
    assert out.exit_code != 0 and f"{two[0]} and {copy} hold the same bytes" in out.output
    with pytest.raises(P.TraceError, match="given twice"):
        P.read_job([two[0], str(copy)], workers=1)
    assert "Traceback" not in out.output


@pytest.mark.parametrize("address,why", [
    ("notanaddress", "missing port number"), ("tcp://", "missing port number"), ("", "give tcp://host:8786"),
    ("tcp://localhost:99999", "port 99999 is not 1 to 65535"), ("http://x:1", "no Dask transport 'http'"),
    ("tcp://a b:1", "give tcp://host:8786")])
def test_a_scheduler_that_is_no_address_is_one_line_before_any_connection(two, address, why):
    out = run(*two, "--engine", "dask", "--scheduler", address)
    assert out.exit_code != 0 and "not a Dask scheduler's address" in out.output and why in out.output
    assert "Traceback" not in out.output and out.output.count("\n") <= 2


def test_a_real_address_is_taken():
    assert P.check_scheduler("tcp://10.0.0.1:8786") == "tcp://10.0.0.1:8786"
    assert P.check_scheduler("tls://scheduler.example:8786") == "tls://scheduler.example:8786"


@pytest.mark.parametrize("cores,want", [(1, []), (2, [2, 2]), (64, [2, 2])])
def test_more_workers_than_files_or_cores_start_no_more_processes(two, monkeypatch, cores, want):
    """--workers 24 for 2 files: as many processes as files, never more than cores (one
    core: none, read here)."""
    import concurrent.futures as cf

    made = []
    real = cf.ProcessPoolExecutor

    def spy(n, *a, **k):
        made.append(n)
        return real(n, *a, **k)

    monkeypatch.setattr(cf, "ProcessPoolExecutor", spy)
    monkeypatch.setattr(P.os, "cpu_count", lambda: cores)
    P.analyze_job(two, REF, workers=24)
    P.read_job(two, workers=24)
    assert made == want


def test_ranks_a_day_apart_are_said(two, tmp_path):
    """Rank 1's events moved 24 h later: read, nothing matched across them, and a warning
    names the two ranks and the hours."""
    late = G.tier1_rank(1)
    for e in late.events:
        e["ts"] += 86400e6
    files = [two[0], late.write(tmp_path / "late.json")]
    rep = P.analyze_job(files, REF, workers=1)
    assert rep.matched == []
    assert "rank 1's trace starts 24.0 h after rank 0's: not one window of one job" in " ".join(rep.warnings)
    out = run(*files, "--json", "--workers", "1")
    assert out.exit_code == 0 and any("24.0 h" in w for w in json.loads(out.stdout)["warnings"])
    same = P.analyze_job(two, REF, workers=1)
    assert not any(" h after " in w for w in same.warnings)
