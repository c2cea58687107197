"""Golden outputs: the CLI's text and JSON for the bundled recording and profile.

Any change to what these commands print shows up here. After a deliberate change,
regenerate with ``LINKROOF_GOLDEN_UPDATE=1 python -m pytest tests/test_golden.py`` and
review the diff like code.
"""

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from linkroof.cli import cli

GOLDEN = Path(__file__).parent / "data" / "golden"
BUNDLED = Path(__file__).parent.parent / "linkroof" / "data" / "h200x2.profile.json"

# Fields that change on every run (wall-clock time of the probe itself)
VOLATILE = [(re.compile(r'"probed_at": "[^"]*"'), '"probed_at": "<time>"'),
            (re.compile(r'"probe_seconds": [0-9.e-]+'), '"probe_seconds": "<seconds>"')]


def _normalise(text: str) -> str:
    for pattern, repl in VOLATILE:
        text = pattern.sub(repl, text)
    return text


def _run(args, store):
    result = CliRunner().invoke(cli, ["--store", str(store), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return _normalise(result.stdout)


def _check(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("LINKROOF_GOLDEN_UPDATE"):
        path.write_text(text)
    assert path.exists(), f"no golden file {path}; generate it with LINKROOF_GOLDEN_UPDATE=1"
    want = path.read_text()
    assert text == want, f"output of {name} changed; if deliberate, regenerate with LINKROOF_GOLDEN_UPDATE=1"


CASES = {
    "probe-replay-h200x2.txt": ["probe", "--replay", "h200x2"],
    "probe-replay-h200x2.json": ["probe", "--replay", "h200x2", "--json"],
    "roofline-reference.txt": ["roofline", "--profile", "reference"],
    "roofline-reference.json": ["roofline", "--profile", "reference", "--json"],
    "runs-show-reference.txt": ["runs", "show", "{id}"],
    "runs-show-reference.json": ["runs", "show", "{id}", "--json"],
}
TRACE = str(Path(__file__).parent / "data" / "traces" / "h200x1_torch2.11_rank0.json.gz")
TWO_RANKS = [str(Path(__file__).parent / "data" / "traces" / f"hta_sampled_rank{r}.json.gz") for r in (0, 1)]
# the tables at three terminal widths: the key and the figures whole at each, details left
# out in the stated order where they cannot fit (render.Table)
for _w in (80, 100, 200):
    CASES[f"roofline-reference-w{_w}.txt"] = ["--width", str(_w), "roofline", "--profile", "reference"]
    CASES[f"trace-h200x1-w{_w}.txt"] = ["--width", str(_w), "trace", TRACE, "--profile", "reference"]
    CASES[f"trace-two-ranks-w{_w}.txt"] = ["--width", str(_w), "trace", *TWO_RANKS, "--profile", "reference"]
    CASES[f"advise-reference-w{_w}.txt"] = ["--width", str(_w), "advise", "--profile", "reference", "--size", "1MiB"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_output(name, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    store = tmp_path / "store.sqlite"
    pid = json.loads(BUNDLED.read_text())["id"]
    if "{id}" in CASES[name]:
        _run(["runs", "import", str(BUNDLED)], store)
    args = [a.replace("{id}", pid) for a in CASES[name]]
    text = _run(args, store)
    if args[0] == "--width":  # no line wider than asked, and the key column's header whole
        assert max(len(line) for line in text.splitlines()) <= int(args[1])
        key = {"roofline": "Resource", "trace": "Collective", "advise": "Mechanism"}[args[2]]
        assert key in text
    _check(name, text)
