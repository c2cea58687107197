"""Under mutmut (MUTANT_UNDER_TEST set) no test leaves its process a child subreaper: mutmut
runs its stats in its own process, and a subreaper there adopted later workers' orphans,
which mutmut's wait took for a worker it never started (KeyError, 2026-12-05)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux's")


def _run(tmp_path, mutant):
    # two tests in one process: the first makes it a subreaper as the scoring does, the second
    # says whether it still is; conftest's fixtures are the suite's own (a copy of it beside them)
    for name in ("conftest.py", "file_seconds.json"):
        (tmp_path / name).write_text((ROOT / "tests" / name).read_text())
    (tmp_path / "test_pair.py").write_text(textwrap.dedent("""
        from childprocs import is_subreaper
        from linkroof.scoring import procs

        def test_a_becomes():
            assert procs.become_subreaper() and is_subreaper()

        def test_b_after(record_property):
            print("SUBREAPER", is_subreaper())
    """))
    env = {k: v for k, v in os.environ.items() if k != "MUTANT_UNDER_TEST"}
    if mutant:
        env["MUTANT_UNDER_TEST"] = "linkroof.scoring.score.x_slowest__mutmut_1"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests"), str(ROOT)])
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-s", "-p", "no:randomly",
                          str(tmp_path / "test_pair.py"), "--rootdir", str(tmp_path)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert "2 passed" in out.stdout, out.stdout + out.stderr
    return out.stdout


def test_under_mutmut_the_subreaper_is_undone_after_each_test(tmp_path):
    assert "SUBREAPER False" in _run(tmp_path, mutant=True)


def test_elsewhere_the_process_stays_a_subreaper(tmp_path):
    assert "SUBREAPER True" in _run(tmp_path, mutant=False)
