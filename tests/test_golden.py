"""Golden outputs: the CLI's text and JSON for the bundled recording and profile.

Any change to what these commands print shows up here, but a golden file is the second
line only: each case first asserts the few facts it protects, taken from the data and
not from the golden (FACTS), so a regenerated golden cannot hide a wrong figure. After a
deliberate change, regenerate with the reason:

    LINKROOF_GOLDEN_UPDATE="why the output changed" python -m pytest tests/test_golden.py

which prints each file's diff and appends the reason, the date and the files changed to
tests/data/golden/CHANGES.md (kept beside the goldens, reviewed like code). A bare
LINKROOF_GOLDEN_UPDATE=1 is refused.
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


def update_reason() -> str | None:
    """The reason given to regenerate the goldens, or None where none is asked; a reason
    that says nothing ("1", "yes", a few letters) fails the run."""
    why = os.environ.get("LINKROOF_GOLDEN_UPDATE")
    if why is None:
        return None
    if len(why.strip()) < 12 or why.strip().lower() in ("1", "true", "yes", "update"):
        pytest.fail("LINKROOF_GOLDEN_UPDATE needs the reason the output changed, in words "
                    "(LINKROOF_GOLDEN_UPDATE=\"the trace table's Matched by column shortened\")")
    return why.strip()


def _check(name: str, text: str) -> None:
    import datetime
    import difflib

    path = GOLDEN / name
    why = update_reason()
    if why is not None:
        old = path.read_text() if path.exists() else ""
        if old != text:
            diff = list(difflib.unified_diff(old.splitlines(), text.splitlines(), f"a/{name}", f"b/{name}",
                                             lineterm="", n=1))
            print("\n".join(diff[:200]))
            path.write_text(text)
            with open(GOLDEN / "CHANGES.md", "a") as log:
                log.write(f"- {datetime.date.today().isoformat()} `{name}` ({sum(1 for d in diff if d[:1] in '+-')}"
                          f" lines): {why}\n")
    assert path.exists(), f"no golden file {path}; generate it with LINKROOF_GOLDEN_UPDATE=\"<why>\""
    want = path.read_text()
    assert text == want, f"output of {name} changed; if deliberate, regenerate with LINKROOF_GOLDEN_UPDATE=\"<why>\""


def bf16_roof() -> float:
    """The bf16 compute roof from the bundled profile's raw timings: 2mnk over the median
    time of each verified GEMM, the best GPU's (not through linkroof's model)."""
    import statistics

    from linkroof.profiler.session import bundled_profile

    return max(2 * m.spec.params["m"] * m.spec.params["n"] * m.spec.params["k"] / statistics.median(m.times_s)
               for m in bundled_profile().measurements
               if m.spec.name == "gemm_throughput" and m.spec.params.get("dtype") == "bf16" and m.verified)


def _facts(name: str) -> list[str]:
    """What a case's output must say, from the data it reads (not from its golden)."""
    import sys

    from linkroof.profiler.session import bundled_profile
    from linkroof.units import format_flops

    if name.startswith("probe-replay"):
        raw = (Path(__file__).parent.parent / "linkroof" / "data" / "h200x2.probe.json").read_text()
        return sorted(set(re.findall(r"0000000[0-9A-Fa-f]:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.0", raw))) + ["NVIDIA H200"]
    if name.startswith("runs-show"):
        return ["NVIDIA H200", bundled_profile().id]
    if name.startswith("roofline") and name.endswith(".txt"):
        return ["NVIDIA H200", format_flops(bf16_roof())]
    sys.path.insert(0, str(Path(__file__).parent / "tools"))
    import plain_trace_reader as plain

    if name.startswith("trace-h200x1"):  # each step a row (whole names where the width leaves them whole)
        steps = plain.read(TRACE)["steps"]
        return ["ProfilerStep#"] * steps if name.endswith("w200.txt") else ["Steps per rank"]
    if name.startswith("trace-two-ranks"):
        n = sum(plain.read(f)["comm_kernels"] for f in TWO_RANKS)
        return [f"of {n} collective"]
    if name.startswith("advise"):
        return ["Moving 1 MiB", "│ sm ", "│ tma ", "│ ce "]
    return []


def _json_facts(name: str, text: str) -> None:
    doc = json.loads(text)
    if name.startswith("roofline"):
        want = bf16_roof()
        got = [c for c in json.dumps(doc).split('"value": ')[1:] if abs(float(c.split(",")[0].split("}")[0]) - want)
               <= 1e-6 * want]
        assert got, "the bf16 compute roof is not in the roofline's JSON"
    if name.startswith("probe-replay"):
        assert "NVIDIA H200" in text


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
    for fact in _facts(name):  # the facts first: a golden regenerated over a wrong figure still fails here
        assert text.count(fact) >= _facts(name).count(fact), (name, fact)
    if name.endswith(".json"):
        _json_facts(name, text)
    _check(name, text)


def test_a_golden_update_needs_a_reason(monkeypatch):
    monkeypatch.setenv("LINKROOF_GOLDEN_UPDATE", "1")
    with pytest.raises(pytest.fail.Exception, match="needs the reason"):
        update_reason()
    monkeypatch.setenv("LINKROOF_GOLDEN_UPDATE", "the trace table's Matched by column shortened")
    assert update_reason() == "the trace table's Matched by column shortened"
