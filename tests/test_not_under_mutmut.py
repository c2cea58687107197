"""The tests left out of mutation testing (marked not_under_mutmut, tests/conftest.py) are
these three only, skipped only where mutmut runs them (MUTANT_UNDER_TEST set)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKED = ["tests/test_trace_engines.py::test_dask_local_cluster_gives_the_same_report",
          "tests/test_trace_engines.py::test_cli_trace_on_dask",
          "tests/test_trace_memory.py::test_the_trace_and_its_analysis_hold_no_object_per_activity"]


def _pytest(*args, mutant=None):
    env = {k: v for k, v in os.environ.items() if k != "MUTANT_UNDER_TEST"}
    if mutant is not None:
        env["MUTANT_UNDER_TEST"] = mutant
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def test_exactly_three_tests_are_marked():
    out = _pytest("tests/", "--ignore=tests/gpu", "-m", "not_under_mutmut", "--collect-only", "-q").stdout
    assert sorted(line for line in out.splitlines() if "::" in line) == sorted(MARKED)


def test_a_marked_test_is_skipped_under_mutmut_with_the_reason():
    out = _pytest(MARKED[0], "-q", "-rs", mutant="linkroof.roofline.traces.x_f__mutmut_1")
    assert out.returncode == 0 and "1 skipped" in out.stdout
    assert "not_under_mutmut: left out of mutation testing (tests/conftest.py)" in out.stdout


def test_outside_mutmut_a_marked_test_is_not_skipped():
    # the Dask engine against the local processes, run for real: about 3 s
    out = _pytest(MARKED[0], "-q", "-rs")
    assert out.returncode == 0 and "1 passed" in out.stdout and "skipped" not in out.stdout
