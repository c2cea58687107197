"""The architecture's one-way dependencies, checked by import-linter with the contracts
in pyproject.toml: the tree as it is keeps them, and a deliberately added upward import
breaks them (so the check can fail)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
LINT = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")


def _lint(tree: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(tree)}  # the copy's linkroof first on the path
    return subprocess.run([LINT, "--config", str(tree / "pyproject.toml"), "--no-cache"], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=120)


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "linkroof", tree / "linkroof", ignore=shutil.ignore_patterns("__pycache__", "data"))
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


def test_the_tree_keeps_every_contract(tmp_path):
    res = _lint(_copy(tmp_path))
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert "5 kept, 0 broken" in res.stdout


@pytest.mark.parametrize("module, line, contract", [
    ("microbench/timing.py", "from ..profiler import probe as _upward", "Layers"),
    ("roofline/model.py", "from ..dashboard import figures as _upward", "Layers"),
    ("roofline/place.py", "import numpy as _forbidden", "roofline is pure"),
    ("store.py", "from .profiler import session as _upward", "Layers"),
    ("readers/traces.py", "from ..profiler import session as _sideways", "Layers"),
    ("profiler/compare.py", "from ..readers import traces as _sideways", "Layers"),
    ("readers/tools.py", "import pynvml as _forbidden", "readers read files only"),
    ("profiler/compare.py", "from ..scoring import score as _upward", "the profiler never imports the judge"),
    ("dashboard/app.py", "from ..scoring import batch as _sideways", "the profiler never imports the judge"),
    ("scoring/score.py", "from ..dashboard import app as _sideways", "Layers"),
])
def test_an_upward_import_breaks_a_contract(tmp_path, module, line, contract):
    tree = _copy(tmp_path)
    path = tree / "linkroof" / module
    text = path.read_text()
    head, sep, rest = text.partition("\nfrom __future__ import annotations\n")
    path.write_text(head + sep + line + "  # noqa\n" + rest)
    res = _lint(tree)
    assert res.returncode != 0
    broken = [ln for ln in res.stdout.splitlines() if ln.rstrip().endswith("BROKEN")]
    assert any(contract in b for b in broken) or contract in res.stdout.split("Broken contracts")[-1], res.stdout[-2000:]
