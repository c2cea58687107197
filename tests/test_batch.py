"""`linkroof batch` through the stand-in child (tests/tools/fake_score_child.py): a
manifest of 2 problems x 10 candidates over four stand-in GPUs, never two targets on one
GPU at once, interrupted and resumed to the same rows, split into shards and merged back
to the same rows; manifests checked before any job."""

import json
import os
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from linkroof.cli import cli
from linkroof.scoring import batch as B
from linkroof.scoring import score as S

FAKE = str(Path(__file__).parent / "tools" / "fake_score_child.py")
NAMES = ["good", "slow", "wrong", "nan", "c04", "c05", "c06", "c07", "c08", "c09"]
KEEP = ("job", "candidate", "correct", "speedup", "time_s", "reference_time_s", "failure")


def fake(log=None, sleep="0"):
    def command(n, port, args):
        env = dict(os.environ, FAKE_RANKS="1", FAKE_SLEEP=sleep, PYTHONPATH=str(Path(__file__).parents[1]))
        if log:
            env["FAKE_LOG"] = str(log)
        return [sys.executable, FAKE, *args], env
    return command


@pytest.fixture(autouse=True)
def results_key_here(tmp_path, monkeypatch):
    """The results key's default folder (batch signs every row): this test's, never the user's."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def write_manifest(folder: Path) -> str:
    (folder / "m.py").write_text("".join(f"def {n}(): pass\n" for n in ["reference", "inputs", *NAMES]))
    text = "[defaults]\ninputs = \"m:inputs\"\ntrials = 2\ndeadline = 60\n"  # 20 s ran out once on 2 loaded cores
    for prob in ("softmax", "allgather"):
        text += (f"[[problem]]\nname = \"{prob}\"\nreference = \"m:reference\"\n"
                 f"candidates = {json.dumps([f'm:{n}' for n in NAMES])}\n")
    (folder / "batch.toml").write_text(text)
    return str(folder / "batch.toml")


@pytest.fixture
def manifest(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return write_manifest(tmp_path)


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    """The manifest's 20 rows run whole and uninterrupted over two stand-in GPUs, once for
    the file: what a resumed run and merged shards must give again."""
    folder = tmp_path_factory.mktemp("whole")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(folder)
        mp.setenv("XDG_CONFIG_HOME", str(folder / "config"))
        rows, summary = B.run_batch(B.load_manifest(write_manifest(folder)), str(folder / "whole.jsonl"), ["0", "1"],
                                    command=fake())
    assert summary.done == 20 and summary.correct == 16, [r.get("failure") for r in rows]
    return rows


def facts(rows):
    return [{k: r.get(k) for k in KEEP} for r in rows]


def test_a_batch_runs_every_job_once_never_two_on_a_gpu(manifest, tmp_path):
    log = tmp_path / "gpus.log"
    problems = B.load_manifest(manifest)
    # sandbox none: the stand-ins log their GPUs to a file, and a sandbox's file systems are read-only to them
    rows, summary = B.run_batch(problems, str(tmp_path / "r.jsonl"), ["0", "1", "2", "3"], command=fake(log, "0.3"),
                                sandbox="none")
    assert len(rows) == 20 and [r["position"] for r in rows] == list(range(20))
    failures = [(r["job"], r["failure"]) for r in rows if r.get("failure")]
    assert summary.done == 20 and summary.failed == 0, failures  # under load a job once failed: say which and why
    assert summary.correct == 16  # wrong and nan, twice
    by_gpu = {}
    for line in log.read_text().splitlines():
        gpu, t0, t1 = line.split()
        by_gpu.setdefault(gpu, []).append((float(t0), float(t1)))
    assert set(by_gpu) <= {"0", "1", "2", "3"} and len(by_gpu) > 1  # spread over the GPUs
    for spans in by_gpu.values():  # no two targets on one GPU at once
        spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), spans
    assert sum(len(v) for v in by_gpu.values()) == 22  # 20 candidates, each problem's reference once
    good = rows[0]
    assert good["problem"] == "softmax" and good["gpus"] and good["reference_gpus"] and good["shard"] == "0/1"


def test_interrupted_and_resumed_gives_the_same_rows(manifest, whole, tmp_path):
    problems = B.load_manifest(manifest)
    part = str(tmp_path / "part.jsonl")
    seen = []

    def interrupt(line):
        seen.append(line)
        if len(seen) == 7:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        B.run_batch(problems, part, ["0", "1"], command=fake(), progress=interrupt)
    done = B.done_keys(part)
    assert 7 <= len(done) < 20
    with open(part, "a") as f:  # an interruption mid-write: a torn last line
        f.write('{"job": "allgather::m:c09", "correct": tr')
    rows, summary = B.run_batch(problems, part, ["0", "1"], command=fake())
    assert summary.skipped == len(done) and summary.done == 20 - len(done)
    assert facts(rows) == facts(whole)
    assert len(B.done_keys(part)) == 20


def test_shards_split_the_manifest_and_merge_back(manifest, whole, tmp_path):
    problems = B.load_manifest(manifest)  # the shards on one stand-in GPU, the whole on two: the same rows
    files = []
    for i in range(3):
        f = str(tmp_path / f"shard{i}.jsonl")
        rows, _ = B.run_batch(problems, f, ["0"], shard=(i, 3), command=fake())
        assert [r["position"] % 3 for r in rows] == [i] * len(rows)
        files.append(f)
    merged, notes = B.merge(files, problems)
    assert facts(merged) == facts(whole) and notes == []
    merged, notes = B.merge(files[:2], problems)
    assert len(merged) == 14 and "6 job(s) of the manifest have no row yet" in notes[0]


def test_the_cli_runs_merges_and_resumes(manifest, tmp_path, monkeypatch):
    monkeypatch.setattr(S, "child_command", fake())
    run = CliRunner().invoke
    for i in range(2):
        res = run(cli, ["batch", manifest, "--results", f"s{i}.jsonl", "--gpus", "0,1", "--shard", f"{i}/2"])
        assert res.exit_code == 0, res.output
        assert "10/10 jobs" in res.stderr and "Candidates" in res.stdout
    res = run(cli, ["batch", manifest, "--results", "s0.jsonl", "--gpus", "0", "--shard", "0/2", "--json"])
    assert res.exit_code == 0 and "10/10 jobs (10 from before)" in res.stderr
    assert len(res.stdout.splitlines()) == 10
    res = run(cli, ["batch-merge", "s0.jsonl", "s1.jsonl", "--manifest", manifest, "--results", "all.jsonl"])
    assert res.exit_code == 0 and len(Path("all.jsonl").read_text().splitlines()) == 20


@pytest.mark.parametrize("text, why", [
    ("", "a manifest lists its problems as [[problem]] tables"),
    ("[[problem]]\nreference = \"m:reference\"\ninputs = \"m:inputs\"\n", "candidates must be a non-empty list"),
    ("[[problem]]\nreference = \"m:reference\"\ninputs = \"m:inputs\"\ncandidates = [\"m:good\"]\nranks = \"2\"\n",
     "ranks must be an integer"),
    ("[[problem]]\nreference = \"nope.py\"\ninputs = \"m:inputs\"\ncandidates = [\"m:good\"]\n", "no file nope.py"),
    ("[[problem]]\nreference = \"m:reference\"\ninputs = \"m:inputs\"\ncandidates = [\"m:good\"]\ndeadline = nan\n",
     "deadline nan"),
    ("[[problem]]\nreference = \"m:reference\"\ninputs = \"m:inputs\"\ncandidates = [\"m:good\"]\nfoo = 1\n",
     "unknown field(s) foo"),
    ("[[problem]]\nname = \"a\"\nreference = \"m:reference\"\ninputs = \"m:inputs\"\ncandidates = [\"m:good\"]\n"
     "[[problem]]\nname = \"a\"\nreference = \"m:reference\"\ninputs = \"m:inputs\"\ncandidates = [\"m:slow\"]\n",
     "the name 'a' is used twice"),
    ("[[problem", "not a TOML manifest"),
    ("[[problem]]\nreference = \"m:reference\"\ninputs = \"m:inputs\"\ncandidates = [\"m:good\"]\ncounters = 1\n",
     "counters must be true or false"),
])
def test_a_bad_manifest_is_refused_before_any_job(manifest, text, why):
    Path("bad.toml").write_text(text)
    with pytest.raises(S.ScoreError) as e:
        B.load_manifest("bad.toml")
    assert why in str(e.value)


def test_shard_option_and_gpu_pool():
    assert B.parse_shard("2/4") == (2, 4)
    for bad in ("4/4", "-1/2", "x", "1/0"):
        with pytest.raises(S.ScoreError):
            B.parse_shard(bad)
    pool = B.GpuPool(["0", "1", "2"])
    got = pool.take(2)
    waited = []
    t = threading.Thread(target=lambda: waited.append(pool.take(2)))
    t.start()
    t.join(0.2)
    assert t.is_alive()  # two GPUs are not free until the first job gives its back
    pool.give(got)
    t.join(2)
    assert len(waited[0]) == 2
    with pytest.raises(S.ScoreError, match="needs 4 GPUs"):
        pool.take(4)


def test_counters_in_a_manifest_count_correct_candidates_on_a_held_gpu(manifest, tmp_path, monkeypatch):
    counted = []

    def with_counters(row, spec, inputs, profile, margin, work_dir, gpus=None):
        counted.append((spec, tuple(gpus)))
        return dict(row, counted={"dram_bytes": 1.0})

    monkeypatch.setattr(S, "with_counters", with_counters)
    text = Path(manifest).read_text().replace("[defaults]\n", "[defaults]\ncounters = true\n")
    Path(manifest).write_text(text)
    rows, _ = B.run_batch(B.load_manifest(manifest), str(tmp_path / "r.jsonl"), ["0"], command=fake())
    correct = [r for r in rows if r["correct"]]
    assert len(counted) == len(correct) == 16 and all(g == ("0",) for _, g in counted)
    assert all(r.get("counted") for r in correct) and not any(r.get("counted") for r in rows if not r["correct"])
