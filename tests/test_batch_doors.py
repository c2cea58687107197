"""Batch doors that hold (issue 41, item 5, in part): manifests and results files that
are FIFOs or devices are refused without being read; an over-long results line is
refused without being held whole; deep JSON and TOML manifests are one error; a
manifest's ranks, iters and warmup follow score's own ranges."""

import json
import os
from pathlib import Path

import pytest

from linkroof.scoring import batch as B
from linkroof.scoring import score as S

MANIFEST = ("[defaults]\ninputs = \"m:inputs\"\n[[problem]]\nname = \"p\"\nreference = \"m:reference\"\n"
            "candidates = [\"m:good\"]\n{extra}")


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("m.py").write_text("def reference(): pass\ndef inputs(): pass\ndef good(): pass\n")
    return tmp_path


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["fifo", "device", "folder", "huge"])
def test_a_manifest_that_is_not_a_file_is_refused_unread(here, kind, monkeypatch):
    path = here / "m.toml"
    if kind == "fifo":
        os.mkfifo(path)  # reading it would block forever
    elif kind == "device":
        path = Path("/dev/zero")  # reading it would never end
    elif kind == "folder":
        path.mkdir()
    else:
        monkeypatch.setattr(B, "MAX_MANIFEST", 1000)
        path.write_text(MANIFEST.format(extra="# " + "x" * 2000 + "\n"))
    with pytest.raises(S.ScoreError, match="not a regular file|folder|limit"):
        B.load_manifest(str(path))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_results_file_that_is_not_a_file_is_refused_unread(here, kind):
    path = here / "r.jsonl"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path = Path("/dev/zero")
    with pytest.raises(S.ScoreError, match="not a regular file"):
        B.done_keys(str(path), b"k" * 32)


def test_an_over_long_results_line_is_refused_not_held(here, monkeypatch):
    monkeypatch.setattr(B, "MAX_ROW_BYTES", 1000)
    key = b"k" * 32
    good = B.signed_line({"job": "p::m:good", "correct": True}, key)
    (here / "r.jsonl").write_text('{"job": "' + "x" * 50_000 + '"}\n' + good)
    said = []
    rows = B.done_keys(str(here / "r.jsonl"), key, said)
    assert list(rows) == ["p::m:good"] and "line(s) 1" in said[0] and "over 1000 bytes" in said[0]


@pytest.mark.parametrize("suffix, text", [(".json", "[" * 100_000 + "]" * 100_000),
                                          (".toml", "x = " + "[" * 100_000 + "]" * 100_000 + "\n")])
def test_a_deep_manifest_is_one_error(here, suffix, text):
    (here / f"m{suffix}").write_text(text)
    with pytest.raises(S.ScoreError, match="deep|not a"):
        B.load_manifest(str(here / f"m{suffix}"))


@pytest.mark.parametrize("extra, why", [("ranks = 1000\n", "ranks 1000: from 1 to 64"),
                                        ("iters = 0\n", "iters 0: at least 1"),
                                        ("warmup = -1\n", "warmup -1: at least 0"),
                                        ("ranks = 0\n", "ranks 0")])
def test_manifest_options_follow_scores_ranges(here, extra, why):
    (here / "m.toml").write_text(MANIFEST.format(extra=extra))
    with pytest.raises(S.ScoreError) as e:
        B.load_manifest(str(here / "m.toml"))
    assert why in str(e.value)


def test_a_sane_manifest_still_loads(here):
    (here / "m.toml").write_text(MANIFEST.format(extra="ranks = 2\niters = 5\nwarmup = 0\n"))
    [p] = B.load_manifest(str(here / "m.toml"))
    assert (p.ranks, p.iters, p.warmup) == (2, 5, 0)
    assert json.loads(json.dumps(p.candidates)) == ["m:good"]
