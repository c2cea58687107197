"""RESULTS.md cites what reproduces each figure: every benchmarks/ path it names exists,
and every script in benchmarks/ is named there (a script nothing cites is removed)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = (ROOT / "benchmarks" / "RESULTS.md").read_text()
CITED = set(re.findall(r"benchmarks/[A-Za-z0-9_./*-]+[A-Za-z0-9_/*]", RESULTS))


def test_every_cited_path_exists():
    """A cited file or folder exists; a cited pattern (repeat-*.json.gz) matches one."""
    missing = sorted(p for p in CITED if not ((ROOT / p).exists() if "*" not in p else list(ROOT.glob(p))))
    assert not missing, missing


def test_every_script_is_cited():
    scripts = sorted(p.name for p in (ROOT / "benchmarks").iterdir() if p.suffix in (".py", ".sh"))
    uncited = [s for s in scripts if s not in RESULTS]
    assert not uncited, f"scripts RESULTS.md does not cite (cite them where their figures are, or remove them): {uncited}"


def test_every_raw_data_folder_is_cited():
    folders = sorted(p.name for p in (ROOT / "benchmarks" / "data").iterdir() if p.is_dir())
    uncited = [f for f in folders if f"benchmarks/data/{f}" not in RESULTS]
    assert not uncited, uncited
