"""The README's commands are the ones CI and users run."""

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent


def readme_commands():
    return re.findall(r"```\n(python3 -m venv [^\n]+)\n```", (ROOT / "README.md").read_text())


def test_ci_runs_the_readme_test_command():
    main, test = readme_commands()
    assert "pytest" in test and "linkroof run" in main
    ci_lines = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert test in ci_lines


def test_readme_output_is_current():
    """The pasted probe output (docs/measuring.md) is what the bundled recording renders today."""
    from click.testing import CliRunner

    from linkroof.cli import cli

    out = CliRunner().invoke(cli, ["probe", "--replay", "h200x2"]).output
    text = (ROOT / "docs" / "measuring.md").read_text()
    for line in out.splitlines():
        if "GB/s" in line or line.startswith(("GPU0", "GPU1")):
            assert line.rstrip() in text, line


def test_readme_is_short():
    assert len((ROOT / "README.md").read_bytes()) < 10 * 1024
