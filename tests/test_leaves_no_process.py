"""The guard that a test leaves no process behind (tests/childprocs.py: no_process_left), on
children of its own: it must see one left, and must not see one waited for."""

import subprocess
import sys

import pytest
from childprocs import no_process_left, own_children


def test_a_child_started_before_the_guard_is_not_the_guarded_code_s():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with no_process_left(wait_s=0.3):
            pass
        assert child.pid in own_children()
    finally:
        child.kill()
        child.wait()


def test_a_child_started_inside_and_left_running_fails_the_guard():
    box = []
    with pytest.raises(AssertionError, match=r"processes left behind: \{\d+: .*time\.sleep\(30\)"):
        with no_process_left(wait_s=0.3):
            box.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]))
    assert box[0].pid in own_children()
    box[0].kill()
    box[0].wait()
    assert box[0].pid not in own_children()


def test_a_child_that_ends_and_is_waited_for_passes():
    with no_process_left(wait_s=0.3):
        subprocess.run([sys.executable, "-c", "pass"], check=True)


def test_a_zombie_is_reaped_not_left():
    # a child that exited and that nobody waited for: the guard reaps it and passes
    with no_process_left(wait_s=5.0):
        p = subprocess.Popen([sys.executable, "-c", "pass"])
        pid = p.pid
        p.returncode = 0  # subprocess will not wait for it: only the guard can
        import time

        deadline = time.monotonic() + 5
        while own_children().get(pid) and time.monotonic() < deadline and "python" in own_children().get(pid, ""):
            time.sleep(0.05)
    assert pid not in own_children()
