"""The README and docs/ as a user reads them: every `sh` block runs (on the bundled data
of a 2x H200 machine; a block after `<!-- needs a GPU -->` must, without one, stop with a
one-line message and no traceback), a `text` block right after a command block is that
command's real output (each line of it appears in what the command prints), every
relative link resolves, and docs/reference.md is click's help of today."""

import re
import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from linkroof.cli import cli

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
BLOCK = re.compile(r"(<!-- needs a GPU -->\n)?```(sh|text)\n(.*?)```", re.S)


def blocks():
    for page in PAGES:
        found = list(BLOCK.finditer(page.read_text()))
        for i, m in enumerate(found):
            if m.group(2) != "sh":
                continue
            nxt = found[i + 1] if i + 1 < len(found) else None
            shown = nxt.group(3) if nxt is not None and nxt.group(2) == "text" and \
                page.read_text()[m.end():nxt.start()].strip() == "" else None
            yield pytest.param(page.name, m.group(3), bool(m.group(1)), shown, id=f"{page.name}:{i}")


def _gpu_here():
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001
        return False


@pytest.mark.parametrize("page, code, needs_gpu, shown", list(blocks()))
def test_every_command_block_runs(tmp_path, monkeypatch, page, code, needs_gpu, shown):
    monkeypatch.chdir(tmp_path if needs_gpu else ROOT)
    outputs = []
    for line in code.strip().splitlines():
        argv = shlex.split(line)
        assert argv[0] == "linkroof", f"{page}: a sh block holds linkroof commands only: {line}"
        argv = [a.replace("linkroof-report.html", str(tmp_path / "r.html")) for a in argv[1:]]
        res = CliRunner().invoke(cli, ["--store", str(tmp_path / "s.sqlite"), *argv], catch_exceptions=True)
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            raise AssertionError(f"{page}: {line}: {res.exception!r}\n{res.output[-1500:]}")
        assert "Traceback" not in res.output
        if needs_gpu and not _gpu_here():
            if res.exit_code != 0:
                assert [x for x in res.output.splitlines() if x.startswith(("linkroof:", "Error:"))], res.output[-500:]
        else:
            assert res.exit_code == 0, f"{page}: {line}\n{res.output[-1500:]}"
        outputs.append(res.stdout)
    if shown is not None:
        printed = "\n".join(outputs)
        for want in shown.splitlines():
            if want.strip() and want.strip() != "...":
                assert want.rstrip() in printed, f"{page}: not in today's output: {want!r}"


def test_every_code_block_says_what_it_is():
    """Every fenced block is `sh` (run by the test above), `text` (output, checked where it
    follows a command, or a synopsis), `toml` or `python`: nothing goes unchecked unnoticed.
    The README's two set-up commands stay bare (tests/test_readme.py holds CI to them)."""
    for page in PAGES:
        if page.name == "reference.md":
            continue
        inside = False
        lines = page.read_text().splitlines()
        for n, line in enumerate(lines, 1):
            if line.startswith("```"):
                if not inside:
                    setup = page.name == "README.md" and n < len(lines) and lines[n].startswith("python3 -m venv")
                    assert setup or line[3:].strip() in ("sh", "text", "toml", "python"), f"{page.name}:{n}: {line!r}"
                inside = not inside


def test_every_relative_link_resolves():
    bad = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" not in target and not (page.parent / target).exists():
                bad.append(f"{page.name} -> {target}")
    assert not bad, bad


def test_the_command_reference_is_current():
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import make_reference
    finally:
        sys.path.pop(0)
    assert (ROOT / "docs" / "reference.md").read_text() == make_reference.reference(), \
        "docs/reference.md is stale: python3 docs/make_reference.py > docs/reference.md"


def test_every_command_has_a_page_or_the_reference():
    ref = (ROOT / "docs" / "reference.md").read_text()
    for name in cli.commands:
        assert f"## `linkroof {name}`" in ref, name
