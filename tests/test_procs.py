"""Which processes a finished target's cleanup takes (scoring/procs.py): its own marked
ones, and an unmarked descendant of the judge only when no other target runs (in a batch
another job's child between its fork and its exec carries no mark yet, and was killed:
"exited -9 without a result" under load)."""

import os
import subprocess
import sys

from linkroof.scoring import procs


def test_an_unmarked_child_is_taken_only_when_no_other_target_runs():
    env = {k: v for k, v in os.environ.items() if k != procs.MARK}
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], env=env)
    try:
        import time

        for _ in range(200):  # until its environment is the sleeper's (after exec)
            if procs._mark_of(child.pid) == "" and "sleep" in open(f"/proc/{child.pid}/cmdline").read():
                break
            time.sleep(0.01)
        assert child.pid not in procs.of_mark("mine", live_marks={"another job"})
        assert child.pid in procs.of_mark("mine", live_marks=frozenset())
        assert child.pid not in procs.of_mark("mine", live_marks=frozenset(), before={child.pid})
    finally:
        child.kill()
        child.wait()


def test_a_marked_process_is_its_targets_only():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"],
                             env=dict(os.environ, **{procs.MARK: "job-a"}))
    try:
        import time

        for _ in range(200):
            if procs._mark_of(child.pid) == "job-a":
                break
            time.sleep(0.01)
        assert child.pid in procs.of_mark("job-a", live_marks={"job-b"})
        assert child.pid not in procs.of_mark("job-b", live_marks={"job-a"})
    finally:
        child.kill()
        child.wait()
