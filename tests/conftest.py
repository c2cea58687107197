import json
import os
import sys
from pathlib import Path

import pytest

# Bytecode caches are written here even where PYTHONDONTWRITEBYTECODE is set (as on our CI
# machines): the suite starts about a thousand interpreters (the judge's stand-ins, its
# sandbox launcher, the CLI), each of which compiled linkroof's modules from source again
# (0.30 s of CPU against 0.16 s for the same imports from caches), and each xdist worker
# rewrote every test file's asserts (about 4 s of CPU each). The caches land in
# __pycache__ folders, which git ignores; the variable is dropped for this run only.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

sys.path.insert(0, str(Path(__file__).parent))

import fakes  # noqa: E402
from childprocs import no_process_left, tracker_stopped_after, unset_subreaper  # noqa: E402
from hypothesis import settings  # noqa: E402

# no test's verdict depends on the machine's load: hypothesis's default deadline (200 ms an
# example) failed test_statistics_properties under four suites at once on 2 cores (2026-12-04)
settings.register_profile("linkroof", deadline=None)
settings.load_profile("linkroof")


@pytest.fixture(autouse=True)
def _no_terminal_size_from_the_runner(monkeypatch):
    """Tables are laid out for --width, else $COLUMNS (cli/common.py): a test sees no
    COLUMNS or LINES of the shell or runner that started it (pytest-xdist's workers set
    80 x 24), so its output is the same wherever the suite runs."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


# pytest-xdist hands files (--dist loadfile) to its workers in collection order, or by
# their number of tests (its default reordering). The longest files go first instead,
# from a recorded run's per-file seconds (tests/tools/file_seconds.py), so that no long file
# (the browser's: 167 s of 1461) can start last. Measured gain: none beyond run-to-run noise
# (312.0 s before, 314.8 s with it alone, 2026-12-04). The order changes no result.
FILE_SECONDS = json.loads((Path(__file__).parent / "file_seconds.json").read_text())


def pytest_configure(config):
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


# mutmut runs a mutant's tests in one process with MUTANT_UNDER_TEST set (its stats run too).
# There the tests marked not_under_mutmut are skipped: two engines agreeing (Dask against the
# local processes) or memory held per activity, each several seconds, which a surviving mutant
# paid in full (traces' rate fell from about 100 to 10 mutants a minute, 2026-12-05), and which a
# verdict's mutant changes on both sides alike. They run in every other run of the suite.
UNDER_MUTMUT = "MUTANT_UNDER_TEST" in os.environ


def pytest_collection_modifyitems(session, config, items):
    if UNDER_MUTMUT:
        skip = pytest.mark.skip(reason="not_under_mutmut: left out of mutation testing (tests/conftest.py)")
        for item in items:
            if item.get_closest_marker("not_under_mutmut"):
                item.add_marker(skip)
    if getattr(config.option, "dist", "no") == "no":  # one process (mutmut's runs too): the files' own order
        return
    items.sort(key=lambda item: -FILE_SECONDS.get(item.nodeid.split("::")[0], 0.0))  # stable: a file's order kept


def pytest_sessionfinish(session, exitstatus):
    # "No tests collected" must fail loudly, never pass as an empty run.
    if session.testscollected == 0 and exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        print("\nlinkroof: no tests were collected; this is an error, not a pass", file=sys.stderr)


@pytest.fixture(autouse=True)
def _no_resource_tracker_left():
    """multiprocessing's resource tracker, started by a test's process pool or Dask cluster,
    stopped after it: the tracker outlives the pool as a child of the test's process, and
    in one process (mutmut's runs) it was a child that never ended: mutmut 3.8 waits for
    any child of its own and hung on it (2026-12-04)."""
    with tracker_stopped_after():
        yield


@pytest.fixture(autouse=True)
def _no_subreaper_left():
    """Under mutmut, the scoring's child subreaper (linkroof.scoring.procs) undone after each
    test: its stats run runs the tests in mutmut's own process, which then adopted the orphans
    of later mutants' tests, and its wait for a mutant's worker met a pid it never started
    (KeyError, score's run stopped after 7 min, 2026-12-05). Elsewhere the test's process keeps it."""
    yield
    if UNDER_MUTMUT:
        unset_subreaper()


@pytest.fixture
def leaves_no_process():
    """The test leaves no process behind (no_process_left)."""
    with no_process_left():
        yield

@pytest.fixture
def scenario_file(tmp_path):
    """Write a synthetic scenario's recording to a file; returns its path."""

    def write(name: str) -> Path:
        path = tmp_path / f"{name}.probe.json"
        path.write_text(json.dumps(fakes.SCENARIOS[name]().recording()))
        return path

    return write


@pytest.fixture
def store_path(tmp_path, monkeypatch):
    path = tmp_path / "store.sqlite"
    monkeypatch.setenv("LINKROOF_STORE", str(path))
    return path


@pytest.fixture
def no_gpu(monkeypatch):
    """Make the live NVML backend behave as on a machine without a driver, whatever
    this machine has."""
    from linkroof.profiler import nvml

    def refuse(self):
        raise nvml.NvmlUnavailable("no NVIDIA driver usable here (NVML: NVML Shared Library Not Found)")

    monkeypatch.setattr(nvml.LiveBackend, "__init__", refuse)
