"""Batch doors that hold, and rows that cannot be forged afterwards (issue 41, items 4
and 5), through the stand-in child (tests/tools/fake_score_child.py) and the CLI.

- Every --results row carries an HMAC-SHA256 keyed by a secret in a 0600 file that no
  candidate is handed, and the manifest's identity; a resumed batch and batch-merge
  refuse rows that fail it (forged, edited, signed with another key, torn in the middle,
  of the wrong shape, of another manifest), one line per file, and keep the rest.
- --gpus refuses a GPU given twice, an empty item, a negative one.
- Manifests and results files that are FIFOs, devices or folders are refused unread; a
  line of gigabytes is skipped without being held; deep manifests are one error; a
  manifest's options follow score's ranges; no NaN is ever written; a results file that
  cannot be written is one line before any job runs."""

import errno
import hashlib
import json
import os
import shutil
import stat
import sys
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner

from linkroof.cli import cli
from linkroof.scoring import batch as B
from linkroof.scoring import score as S

sys.path.insert(0, str(Path(__file__).parent))
from test_batch import FAKE, NAMES, fake  # noqa: E402

CANDS = ["m:" + n for n in NAMES[:4]]
MANIFEST = ("[defaults]\ninputs = \"m:inputs\"\ntrials = 1\ndeadline = 20\n[[problem]]\nname = \"softmax\"\n"
            f"reference = \"m:reference\"\ncandidates = {json.dumps(CANDS)}\n{{extra}}")
NO_MAC = "no valid MAC (forged, edited, or written with another key)"


def strict(line):
    """A line as strict JSON: NaN or Infinity in it fail."""
    def refuse(name):
        raise ValueError(f"{name} in a row")
    return json.loads(line, parse_constant=refuse)


def invoke(*args, **kw):
    return CliRunner().invoke(cli, [str(a) for a in args], **kw)


@pytest.fixture(autouse=True)
def config(tmp_path, monkeypatch):
    """The results key's default folder: this test's, never the user's."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config"


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("m.py").write_text("".join(f"def {n}(): pass\n" for n in ["reference", "inputs", *NAMES]))
    Path("batch.toml").write_text(MANIFEST.format(extra=""))
    return tmp_path


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """One batch of 4 stand-in candidates, run once for the module: its folder (m.py, the
    manifest, its key and its results file r.jsonl)."""
    d = tmp_path_factory.mktemp("ran")
    cwd = os.getcwd()
    os.chdir(d)
    try:
        Path("m.py").write_text("".join(f"def {n}(): pass\n" for n in ["reference", "inputs", *NAMES]))
        Path("batch.toml").write_text(MANIFEST.format(extra=""))
        fd = os.open("key", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, os.urandom(32))
        os.close(fd)
        B.run_batch(B.load_manifest("batch.toml"), str(d / "r.jsonl"), ["0"], command=fake(), sandbox="none",
                    key=B.results_key("key"))
    finally:
        os.chdir(cwd)
    return d


@pytest.fixture
def shard(ran, tmp_path, monkeypatch):
    """A copy of `ran` in this test's folder: (folder, problems, key, the results lines)."""
    for f in ("m.py", "batch.toml", "key", "r.jsonl"):
        shutil.copy2(ran / f, tmp_path / f)
    monkeypatch.chdir(tmp_path)
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert len(lines) == 4
    return tmp_path, B.load_manifest("batch.toml"), B.results_key("key"), lines


def write_lines(path, lines):
    Path(path).write_text("".join(x if x.endswith("\n") else x + "\n" for x in lines))


# ---- item 4: rows that cannot be forged afterwards

def test_every_row_carries_a_mac_and_the_manifests_identity(here, config):
    problems = B.load_manifest("batch.toml")
    B.run_batch(problems, "r.jsonl", ["0"], command=fake(), sandbox="none")
    key_file = config / "linkroof" / "results.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600 and len(key_file.read_bytes()) == 32
    assert stat.S_IMODE(key_file.parent.stat().st_mode) == 0o700
    key = key_file.read_bytes()
    lines = Path("r.jsonl").read_text().splitlines()
    sha = hashlib.sha256(Path("batch.toml").read_bytes()).hexdigest()
    assert len(lines) == 4
    for line in lines:
        row = strict(line)
        assert B.verified(row, key) and row["manifest_sha256"] == sha
        body = json.dumps({k: v for k, v in row.items() if k != "mac"}, sort_keys=True, separators=(",", ":"),
                          allow_nan=False)
        import hmac
        assert row["mac"] == hmac.new(key, body.encode(), "sha256").hexdigest()  # the documented MAC, recomputed
    assert not B.verified(dict(strict(lines[0]), correct=not strict(lines[0])["correct"]), key)


def test_the_key_reaches_no_candidate(here, config):
    """Every process a target runs as gets an environment and a command line without the
    key (the wrapper records them, then becomes the stand-in child)."""
    seen = here / "seen"
    seen.mkdir()
    wrap = here / "wrap.py"
    wrap.write_text("import json, os, sys\n"
                    f"open(os.path.join({str(seen)!r}, str(os.getpid())), 'w').write(json.dumps("
                    "{'env': dict(os.environ), 'argv': sys.argv, 'raw': open('/proc/self/environ', 'rb').read()"
                    ".hex()}))\n"
                    f"os.execv(sys.executable, [sys.executable, {FAKE!r}, *sys.argv[1:]])\n")
    inner = fake()

    def command(n, port, args):
        argv, env = inner(n, port, args)
        return [sys.executable, str(wrap), *argv[2:]], env

    rows, _ = B.run_batch(B.load_manifest("batch.toml"), "r.jsonl", ["0"], command=command, sandbox="none")
    key = (config / "linkroof" / "results.key").read_bytes()
    dumps = [json.loads(f.read_text()) for f in seen.iterdir()]
    assert len(dumps) == 5 and all(r.get("correct") is not None for r in rows)  # the reference and 4 candidates
    for d in dumps:
        everything = json.dumps(d)
        assert key.hex() not in everything and key.hex() not in d["raw"]
        assert "results.key" not in everything
    assert key.hex() not in json.dumps(dict(os.environ))


def test_key_file_option_signs_and_the_default_is_not_made(here, config, monkeypatch):
    monkeypatch.setattr(S, "child_command", fake())
    fd = os.open("my.key", os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b"s" * 32)
    os.close(fd)
    res = invoke("batch", "batch.toml", "--results", "r.jsonl", "--gpus", "0", "--sandbox", "none",
                 "--key-file", "my.key")
    assert res.exit_code == 0, res.output
    assert not (config / "linkroof" / "results.key").exists()
    lines = Path("r.jsonl").read_text().splitlines()
    assert len(lines) == 4 and all(B.verified(strict(x), b"s" * 32) for x in lines)
    res = invoke("batch-merge", "r.jsonl", "--key-file", "my.key", "--json")
    assert res.exit_code == 0 and len(res.stdout.splitlines()) == 4 and "refused" not in res.stderr
    other = invoke("batch-merge", "r.jsonl", "--json")  # the default key: every row refused, said
    assert other.exit_code == 0 and other.stdout == ""
    assert f"linkroof: r.jsonl: 4 rows refused (lines 1, 2, 3, 4): {NO_MAC}" in other.stderr


@pytest.mark.parametrize("case, why", [("missing", "cannot read"), ("others read it", "chmod 600"),
                                       ("short", "too short"), ("folder", "is a directory")])
def test_a_key_file_that_cannot_be_the_key_is_one_line(here, case, why):
    path = here / "k"
    if case == "others read it":
        path.write_bytes(b"k" * 32)
        path.chmod(0o644)
    elif case == "short":
        path.write_bytes(b"k" * 8)
        path.chmod(0o600)
    elif case == "folder":
        path = here / "kdir"
        path.mkdir()
    res = invoke("batch-merge", "batch.toml", "--key-file", path)
    assert res.exit_code in (1, 2) and why in res.output and "Traceback" not in res.output, res.output
    assert not (case == "missing" and path.exists())  # a key file named is never made


def signed(key, **row):
    base = {"job": "softmax::m:evil", "problem": "softmax", "candidate": "evil", "position": 9, "protocol": "linkroof",
            "correct": True, "speedup": 1e9}
    return B.signed_line({**base, **row}, key).strip()


# Each attack on a shard's file: what is done to its 4 lines, the refusal said, the rows kept.
ATTACKS = {
    "forged": (lambda k, ls: ls + [json.dumps({"job": "softmax::m:evil", "problem": "softmax", "candidate": "evil",
                                               "position": 9, "protocol": "linkroof", "correct": True,
                                               "speedup": 1e9, "mac": "0" * 64})], f"(line 5): {NO_MAC}", 4),
    "no mac": (lambda k, ls: ls + [json.dumps({k2: v for k2, v in strict(ls[0]).items() if k2 != "mac"})],
               f"(line 5): {NO_MAC}", 4),
    "edited": (lambda k, ls: [ls[0], json.dumps(dict(strict(ls[1]), speedup=1e9)), *ls[2:]],
               f"(line 2): {NO_MAC}", 3),
    "other key": (lambda k, ls: ls + [signed(b"o" * 32)], f"(line 5): {NO_MAC}", 4),
    "torn middle": (lambda k, ls: ls[:2] + ['{"job": "softmax::m:half", "correct": tr'] + ls[2:],
                    "(line 3): torn or not JSON", 4),
    "a list": (lambda k, ls: [ls[0], "[1, 2, 3]", *ls[1:]], "(line 2): not a job's row", 4),
    "a string": (lambda k, ls: [ls[0], '"row"', *ls[1:]], "(line 2): not a job's row", 4),
    "a number": (lambda k, ls: [ls[0], "42", *ls[1:]], "(line 2): not a job's row", 4),
    "NaN": (lambda k, ls: [ls[0], '{"job": "softmax::m:evil", "speedup": NaN}', *ls[1:]], f"(line 2): {NO_MAC}", 4),
    "problem a list": (lambda k, ls: ls + [signed(k, problem=["softmax"])], "(line 5): not a row (problem is not text)",
                       4),
    "keys missing": (lambda k, ls: ls + [B.signed_line({"job": "softmax::m:evil"}, k).strip()],
                     "(line 5): not a row (problem is not text)", 4),
    "position text": (lambda k, ls: ls + [signed(k, position="9")],
                      "(line 5): not a row (position is not a whole number)", 4),
    "failure text": (lambda k, ls: ls + [signed(k, failure="boom")],
                     "(line 5): not a row (failure is not a kind and a message)", 4),
    "another manifest": (lambda k, ls: ls + [signed(k, manifest_sha256="0" * 64)],
                         "(line 5): written for another manifest", 4),
    "deep": (lambda k, ls: [ls[0], '{"job": "x", "a": ' + "[" * 100_000 + "]" * 100_000 + "}", *ls[1:]],
             "(line 2): torn or not JSON", 4),
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_merge_refuses_what_fails_and_keeps_the_rest(shard, attack):
    tmp, problems, key, lines = shard
    change, said, kept = ATTACKS[attack]
    write_lines("r.jsonl", change(key, lines))
    rows, notes = B.merge(["r.jsonl"], problems, key)
    assert len(rows) == kept and all(r["job"] != "softmax::m:evil" and r.get("speedup") != 1e9 for r in rows)
    refused = [n for n in notes if "refused" in n]
    assert len(refused) == 1 and f"r.jsonl: 1 row refused {said}" in refused[0], notes
    res = invoke("batch-merge", "r.jsonl", "--manifest", "batch.toml", "--key-file", "key", "--results", "merged.jsonl")
    assert res.exit_code == 0 and "Traceback" not in res.output, res.output
    assert f"linkroof: r.jsonl: 1 row refused {said}" in res.stderr and "Candidates" in res.stdout
    merged = Path("merged.jsonl").read_text().splitlines()
    assert len(merged) == kept and all(B.verified(strict(x), key) for x in merged)


def test_refused_rows_are_one_line_per_file_with_their_line_numbers(shard):
    tmp, problems, key, lines = shard
    edited = [json.dumps(dict(strict(x), correct=True, speedup=1e9)) for x in lines]
    write_lines("r.jsonl", [lines[0], lines[1], lines[2], lines[3], edited[0], lines[0], lines[0], lines[0],
                            edited[1], "[]"])
    res = invoke("batch-merge", "r.jsonl", "--key-file", "key", "--json")
    assert res.exit_code == 0, res.output
    assert res.stderr.count("refused") == 1
    assert ("linkroof: r.jsonl: 3 rows refused: 2 (lines 5, 9) " + NO_MAC + "; 1 (line 10) not a job's row"
            in res.stderr), res.stderr
    assert [strict(x)["job"] for x in res.stdout.splitlines()] == [strict(x)["job"] for x in lines]
    write_lines("r.jsonl", [*lines, edited[0], edited[1]])
    res = invoke("batch-merge", "r.jsonl", "--key-file", "key", "--json")
    assert f"linkroof: r.jsonl: 2 rows refused (lines 5, 6): {NO_MAC}\n" in res.stderr


def test_a_torn_last_line_is_an_interruption_not_a_refusal(shard):
    tmp, problems, key, lines = shard
    Path("r.jsonl").write_text("\n".join(lines) + '\n{"job": "softmax::m:c09", "correct": tr')
    rows, notes = B.merge(["r.jsonl"], problems, key)
    assert len(rows) == 4 and notes == []


def test_a_job_in_two_files_is_one_note_not_one_per_row(shard):
    tmp, problems, key, lines = shard
    shutil.copy("r.jsonl", "again.jsonl")
    rows, notes = B.merge(["r.jsonl", "again.jsonl"], problems, key)
    assert len(rows) == 4 and len(notes) == 1 and notes[0].startswith("4 job(s) in more than one file")


@pytest.mark.parametrize("change", ["edited", "another manifest"])
def test_a_resumed_batch_runs_refused_jobs_again(shard, change):
    tmp, problems, key, lines = shard
    if change == "edited":
        lines[0] = json.dumps(dict(strict(lines[0]), correct=True, speedup=1e9))
        write_lines("r.jsonl", lines)
    else:  # the manifest changed since: its rows are another manifest's
        Path("batch.toml").write_text(MANIFEST.format(extra="# edited\n"))
        problems = B.load_manifest("batch.toml")
    said = []
    rows, summary = B.run_batch(problems, "r.jsonl", ["0"], command=fake(), sandbox="none", progress=said.append,
                                key=key)
    if change == "edited":
        assert summary.done == 1 and summary.skipped == 3
        assert any(f"r.jsonl: 1 row refused (line 1): {NO_MAC}" in s for s in said), said
    else:
        assert summary.done == 4 and summary.skipped == 0
        assert any("4 rows refused (lines 1, 2, 3, 4): written for another manifest" in s for s in said), said
    assert all(r.get("speedup") != 1e9 and B.verified(r, key) for r in rows)
    assert len(B.done_keys("r.jsonl", key, None, problems[0].manifest_sha256)) == 4


def test_a_row_is_never_written_with_nan(here, monkeypatch):
    """PKB's mean of no speedup (iters = 0 once gave one) or any other non-finite figure:
    written as null, the line strict JSON, the --json output too."""
    def pkb_candidate(reference, spec, i, *a, **k):
        return {"candidate": spec.split(":")[-1], "spec": spec, "protocol": "pkb", "correct": True,
                "speedup": float("nan"), "time_s": float("inf"), "trials": [], "feedback": "x",
                "trial_speedups": [float("-inf")]}

    monkeypatch.setattr(S, "_pkb_candidate", pkb_candidate)
    monkeypatch.setattr(S, "child_command", fake())
    Path("batch.toml").write_text(MANIFEST.format(extra="protocol = \"pkb\"\n"))
    res = invoke("batch", "batch.toml", "--results", "r.jsonl", "--gpus", "0", "--sandbox", "none", "--json")
    assert res.exit_code == 0, res.output
    for text in (Path("r.jsonl").read_text(), res.stdout):
        rows = [strict(x) for x in text.splitlines()]
        assert len(rows) == 4 and all(r["speedup"] is None and r["time_s"] is None for r in rows)
        assert all(r["trial_speedups"] == [None] for r in rows)


@pytest.mark.parametrize("gpus, why", [("0,0", "GPU 0 given twice"), ("0,1,0", "GPU 0 given twice"),
                                       ("0,00", "GPU 0 given twice"), ("1,0,1,0", "GPU 0, 1 given twice"),
                                       ("GPU-a,GPU-a", "GPU GPU-a given twice"), ("0,,1", "an empty item"),
                                       (",", "an empty item"), ("-1", "'-1' is not a GPU"),
                                       ("0,-2", "'-2' is not a GPU"), ("x", "'x' is not a GPU")])
def test_gpus_given_twice_empty_or_negative_are_refused(here, config, gpus, why):
    res = invoke("batch", "batch.toml", "--results", "x.jsonl", "--gpus", gpus)
    assert res.exit_code == 2 and why in res.output and "--gpus" in res.output, res.output
    assert not Path("x.jsonl").exists() and not config.exists()


def test_cuda_visible_devices_twice_is_refused_too(here):
    res = invoke("batch", "batch.toml", "--results", "x.jsonl", env={"CUDA_VISIBLE_DEVICES": "0,1,1"})
    assert res.exit_code == 1 and "CUDA_VISIBLE_DEVICES: GPU 1 given twice" in res.output, res.output
    with pytest.raises(S.ScoreError, match="given twice"):
        B.GpuPool(["0", "1", "0"])


# ---- item 5: batch doors that hold

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
    with pytest.raises(S.ScoreError, match="not a regular file|is a folder|over the 1000-byte limit"):
        B.load_manifest(str(path))
    if kind == "fifo":  # the CLI: one line, no hang
        res = invoke("batch", path, "--results", "r.jsonl", "--gpus", "0")
        assert res.exit_code == 1 and res.output.startswith("linkroof: ") and "not a regular file" in res.output
        assert len(res.output.splitlines()) == 1


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_results_file_that_is_not_a_file_is_refused_unread(here, kind, monkeypatch):
    path = here / "r.jsonl"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path = Path("/dev/zero")
    with pytest.raises(S.ScoreError, match="not a regular file"):
        B.done_keys(str(path), b"k" * 32)
    monkeypatch.setattr(S, "child_command", fake())
    for args in (["batch", "batch.toml", "--results", path, "--gpus", "0"], ["batch-merge", path]):
        res = invoke(*args)
        assert res.exit_code == 1 and "not a regular file" in res.output and "Traceback" not in res.output


@pytest.mark.timeout(120)
@pytest.mark.parametrize("limit, size", [(1 << 20, 512 << 20), (None, (8 << 20) + 4096)])
def test_a_line_of_gigabytes_is_skipped_without_being_held(here, monkeypatch, limit, size):
    """A sparse file: a line of zeros 512 times the limit on a row (the issue's 5 GB line,
    scaled: 5 GB of holes take 15 s to read here), then a good row. Read in bounded
    pieces, the Python memory at its peak stays near the limit whatever the line's length;
    and at the real limit."""
    if limit:
        monkeypatch.setattr(B, "MAX_ROW_BYTES", limit)
    key = b"k" * 32
    good = B.signed_line({"job": "p::m:good", "problem": "p", "candidate": "good", "position": 0,
                          "protocol": "linkroof", "correct": True}, key).encode()
    with open("r.jsonl", "wb") as f:
        f.truncate(size)
        f.seek(size)
        f.write(b"\n" + good)
    said = []
    tracemalloc.start()
    try:
        rows = B.done_keys("r.jsonl", key, said)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert list(rows) == ["p::m:good"]
    assert said == [f"r.jsonl: 1 row refused (line 1): over {B.MAX_ROW_BYTES} bytes, not a row"]
    assert peak < 2 * B.MAX_ROW_BYTES + (2 << 20), peak


def test_an_over_long_line_in_the_middle_is_refused_and_the_rest_kept(here, monkeypatch):
    monkeypatch.setattr(B, "MAX_ROW_BYTES", 1000)
    key = b"k" * 32
    rows = [B.signed_line({"job": f"p::m:c{i}", "problem": "p", "candidate": f"c{i}", "position": i,
                           "protocol": "linkroof"}, key) for i in range(3)]
    Path("r.jsonl").write_text(rows[0] + '{"job": "' + "x" * 50_000 + '"}\n' + rows[1] + "y" * 3000 + rows[2])
    said = []
    got = B.done_keys("r.jsonl", key, said)
    assert list(got) == ["p::m:c0", "p::m:c1"]  # the last row ran into the over-long line: part of it
    assert said == ["r.jsonl: 2 rows refused (lines 2, 4): over 1000 bytes, not a row"]


@pytest.mark.parametrize("suffix, text", [(".json", "[" * 100_000 + "]" * 100_000),
                                          (".toml", "x = " + "[" * 100_000 + "]" * 100_000 + "\n"),
                                          (".json", '{"problem": ' + "[" * 500 + "]" * 500 + "}"),
                                          (".toml", "[[problem]]\nname = " + "[" * 500 + "]" * 500 + "\n")])
def test_a_deep_manifest_is_one_error(here, suffix, text):
    (here / f"deep{suffix}").write_text(text)
    with pytest.raises(S.ScoreError, match="nested too deep to be a manifest"):
        B.load_manifest(str(here / f"deep{suffix}"))
    res = invoke("batch", f"deep{suffix}", "--results", "r.jsonl", "--gpus", "0")
    assert res.exit_code == 1 and "nested too deep" in res.output and "Traceback" not in res.output, res.output


@pytest.mark.parametrize("extra, why", [("ranks = 1000\n", "ranks 1000: from 1 to 64"),
                                        ("iters = 0\n", "iters 0: at least 1"),
                                        ("protocol = \"pkb\"\niters = 0\n", "iters 0: at least 1"),
                                        ("warmup = -1\n", "warmup -1: at least 0"),
                                        ("ranks = 0\n", "ranks 0"),
                                        ("trials = -1\n", "trials -1: at least 1"),
                                        ("atol = nan\n", "atol nan: a finite number"),
                                        ("rtol = -1.0\n", "rtol -1.0: a finite number, not negative"),
                                        ("deadline = inf\n", "deadline inf"),
                                        ("max_output_bytes = 0\n", "max output bytes 0"),
                                        ("iters = true\n", "iters must be an integer")])
def test_manifest_options_follow_scores_rules(here, extra, why):
    Path("batch.toml").write_text(MANIFEST.format(extra=extra))
    with pytest.raises(S.ScoreError) as e:
        B.load_manifest("batch.toml")
    assert why in str(e.value)
    res = invoke("batch", "batch.toml", "--results", "r.jsonl", "--gpus", "0")
    assert res.exit_code == 1 and why in res.output and not Path("r.jsonl").exists()


@pytest.mark.parametrize("extra, why", [("trials = 1000\n", "trials 1000 is not in the range 1<=x<=100"),
                                        ("m = 0\n", "m 0 is not in the range x>=1"),
                                        ("deadline = 1e9\n", "deadline 1000000000.0 is not in the range"),
                                        ("rtol = 1e9\n", "rtol 1000000000.0 is not in the range")])
def test_the_cli_holds_a_manifest_to_scores_option_ranges(here, extra, why):
    Path("batch.toml").write_text(MANIFEST.format(extra=extra))
    B.load_manifest("batch.toml")  # within check_options: score's command line is narrower
    res = invoke("batch", "batch.toml", "--results", "r.jsonl", "--gpus", "0")
    assert res.exit_code == 1 and why in res.output and "problem 'softmax'" in res.output, res.output
    assert not Path("r.jsonl").exists()


def test_a_sane_manifest_still_loads(here):
    Path("batch.toml").write_text(MANIFEST.format(extra="ranks = 2\niters = 5\nwarmup = 0\n"))
    [p] = B.load_manifest("batch.toml")
    assert (p.ranks, p.iters, p.warmup) == (2, 5, 0) and len(p.manifest_sha256) == 64
    Path("bad.toml").write_text(MANIFEST.format(extra="manifest_sha256 = \"0\"\n"))
    with pytest.raises(S.ScoreError, match="unknown field"):  # a manifest cannot name its own identity
        B.load_manifest("bad.toml")


def _read_only(monkeypatch, name):
    """Opening `name` to write fails as on a read-only file system."""
    real = os.open

    def fake_open(path, flags, *a, **k):
        if Path(path).name == name and flags & (os.O_WRONLY | os.O_RDWR):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real(path, flags, *a, **k)

    monkeypatch.setattr(os, "open", fake_open)


@pytest.mark.parametrize("case, why", [
    ("read-only folder", "cannot write the results file ro/r.jsonl: Read-only file system"),
    ("missing folder", "cannot write the results file nope/r.jsonl: its folder"),
    ("under a file", "cannot write the results file m.py/r.jsonl: Not a directory"),
])
def test_a_results_file_that_cannot_be_written_is_one_line_before_any_job(here, monkeypatch, case, why):
    started = []
    monkeypatch.setattr(S, "run_target", lambda *a, **k: started.append(a))
    path = {"read-only folder": "ro/r.jsonl", "missing folder": "nope/r.jsonl", "under a file": "m.py/r.jsonl"}[case]
    if case == "read-only folder":
        Path("ro").mkdir()
        _read_only(monkeypatch, "r.jsonl")
    with pytest.raises(S.ScoreError, match=why):
        B.run_batch(B.load_manifest("batch.toml"), path, ["0"], sandbox="none")
    res = invoke("batch", "batch.toml", "--results", path, "--gpus", "0")
    assert res.exit_code == 1 and res.output == f"linkroof: {why}" + res.output.split(why)[1], res.output
    assert len(res.output.splitlines()) == 1 and not started


def test_a_results_path_that_is_a_folder_is_refused(here):
    Path("r.jsonl").mkdir()
    with pytest.raises(S.ScoreError, match="is a folder, not a results file"):
        B.done_keys("r.jsonl", b"k" * 32)
    for args in (["batch", "batch.toml", "--results", "r.jsonl", "--gpus", "0"], ["batch-merge", "r.jsonl"]):
        res = invoke(*args)
        assert res.exit_code == 2 and "is a directory" in res.output and "Traceback" not in res.output


def test_a_write_that_fails_mid_batch_is_one_line(here, monkeypatch):
    monkeypatch.setattr(S, "child_command", fake())
    real = os.fsync

    def full(fd):
        if os.fstat(fd).st_size:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd)

    monkeypatch.setattr(os, "fsync", full)
    res = invoke("batch", "batch.toml", "--results", "r.jsonl", "--gpus", "0", "--sandbox", "none")
    assert res.exit_code == 1 and "cannot write the results file r.jsonl: No space left on device" in res.output
    assert "Traceback" not in res.output


def test_merge_into_a_missing_folder_is_one_line(shard):
    res = invoke("batch-merge", "r.jsonl", "--key-file", "key", "--results", "nope/all.jsonl")
    assert res.exit_code == 1 and "cannot write nope/all.jsonl" in res.output and "Traceback" not in res.output


def test_a_large_merge_shows_a_bounded_table_and_keeps_every_row(here, monkeypatch):
    """The table of a merge shows its first TABLE_ROWS rows (drawing 200 000 took minutes);
    --results and --json have every one."""
    from linkroof.cli import loops

    monkeypatch.setattr(loops, "TABLE_ROWS", 5)
    key = b"k" * 32
    Path("key").write_bytes(key)
    Path("key").chmod(0o600)
    Path("r.jsonl").write_text("".join(B.signed_line({"job": f"p::m:c{i}", "problem": "p", "candidate": f"c{i}",
                                                      "position": i, "protocol": "linkroof", "correct": True,
                                                      "speedup": 1.0 + i}, key) for i in range(12)))
    res = invoke("batch-merge", "r.jsonl", "--key-file", "key", "--results", "all.jsonl")
    assert res.exit_code == 0, res.output
    assert "c4" in res.stdout and "c5 " not in res.stdout and "... and 7 more rows" in res.stdout
    assert "12 rows: 12 correct, 0 failed, 0 suspect; best: p: c11 12.00x" in res.stderr
    assert len(Path("all.jsonl").read_text().splitlines()) == 12
