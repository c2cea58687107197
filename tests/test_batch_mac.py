"""Rows that cannot be forged afterwards (issue 41, item 4): every --results row carries
an HMAC-SHA256 keyed by a secret in a 0600 file that no candidate is handed; a resumed
batch and batch-merge refuse rows that fail it (forged, edited, signed with another key,
torn in the middle, not a job's), say so in one line per file, and keep the rest;
--gpus refuses a GPU given twice."""

import json
import math
import os
import stat
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from linkroof.cli import cli
from linkroof.scoring import batch as B

sys.path.insert(0, str(Path(__file__).parent))
from test_batch import NAMES, fake  # noqa: E402


@pytest.fixture
def setup(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    Path("m.py").write_text("".join(f"def {n}(): pass\n" for n in ["reference", "inputs", *NAMES]))
    Path("batch.toml").write_text("[defaults]\ninputs = \"m:inputs\"\ntrials = 1\ndeadline = 20\n[[problem]]\n"
                                  "name = \"softmax\"\nreference = \"m:reference\"\n"
                                  f"candidates = {json.dumps(['m:' + n for n in NAMES[:4]])}\n")
    problems = B.load_manifest("batch.toml")
    rows, _ = B.run_batch(problems, str(tmp_path / "r.jsonl"), ["0"], command=fake(), sandbox="none")
    return tmp_path, problems, rows


def test_every_row_carries_a_mac_with_a_key_only_the_judge_reads(setup):
    tmp, _, rows = setup
    key_file = tmp / "config" / "linkroof" / "results.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600 and len(key_file.read_bytes()) == 32
    key = key_file.read_bytes()
    lines = (tmp / "r.jsonl").read_text().splitlines()
    assert len(lines) == 4 and all(B.verified(json.loads(x), key) for x in lines)
    assert not any(key.hex() in v for v in os.environ.values())


@pytest.mark.parametrize("attack", ["forged", "edited", "other key", "torn middle", "not a row", "wrong types"])
def test_merge_refuses_what_fails_and_keeps_the_rest(setup, attack):
    tmp, problems, _ = setup
    path = tmp / "r.jsonl"
    lines = path.read_text().splitlines()
    key = B.results_key()
    if attack == "forged":
        lines.append(json.dumps({"job": "softmax::m:evil", "problem": "softmax", "candidate": "evil", "correct": True,
                                 "speedup": 1e9, "position": 9, "mac": "0" * 64}))
    elif attack == "edited":
        row = json.loads(lines[1])
        row["speedup"] = 1e9
        lines[1] = json.dumps(row)
    elif attack == "other key":
        lines.append(B.signed_line({"job": "softmax::m:evil", "problem": "softmax", "correct": True}, b"k" * 32).strip())
    elif attack == "torn middle":
        lines.insert(2, '{"job": "softmax::m:half", "correct": tr')
    elif attack == "not a row":
        lines.insert(1, "[1, 2, 3]")
    else:
        lines.insert(1, json.dumps({"job": ["a"], "position": "x", "mac": 5}))
    path.write_text("\n".join(lines) + "\n")
    rows, notes = B.merge([str(path)], problems, key)
    kept = [r for r in rows if r["job"] != "softmax::m:evil"]
    assert len(rows) == len(kept) == (3 if attack == "edited" else 4)
    assert all(r.get("speedup") != 1e9 for r in rows)
    said = [n for n in notes if "refused" in n]
    assert len(said) == 1 and "line(s)" in said[0], notes
    res = CliRunner().invoke(cli, ["batch-merge", str(path), "--manifest", "batch.toml", "--results",
                                   str(tmp / "merged.jsonl")])
    assert res.exit_code == 0 and "refused" in res.output, res.output
    merged = (tmp / "merged.jsonl").read_text().splitlines()
    assert all(B.verified(json.loads(x), key) for x in merged) and len(merged) == len(rows)


def test_a_resumed_batch_runs_a_forged_job_again(setup):
    tmp, problems, _ = setup
    path = tmp / "r.jsonl"
    lines = path.read_text().splitlines()
    row = json.loads(lines[0])
    row["correct"], row["speedup"] = True, 1e9  # edited after it was written
    lines[0] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n")
    said = []
    rows, summary = B.run_batch(problems, str(path), ["0"], command=fake(), sandbox="none", progress=said.append)
    assert summary.done == 1 and summary.skipped == 3  # the edited job ran again
    assert any("refused" in s and "no valid MAC" in s for s in said)
    assert all(r.get("speedup") != 1e9 for r in rows)


def test_non_finite_figures_are_written_as_null_never_as_invalid_json():
    line = B.signed_line({"job": "j", "speedup": float("nan"), "x": [float("inf"), 1.0]}, b"k" * 32)
    doc = json.loads(line)
    assert doc["speedup"] is None and doc["x"] == [None, 1.0] and B.verified(doc, b"k" * 32)
    assert not math.isnan(doc["x"][1])


@pytest.mark.parametrize("gpus, why", [("0,0", "given twice"), ("0,1,0", "given twice"), ("0,,1", "empty"),
                                       ("-1", "not a GPU")])
def test_gpus_given_twice_or_empty_are_refused(setup, gpus, why):
    res = CliRunner().invoke(cli, ["batch", "batch.toml", "--results", "x.jsonl", "--gpus", gpus])
    assert res.exit_code == 2 and why in res.output and not Path("x.jsonl").exists(), res.output
