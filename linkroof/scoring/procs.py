"""Keeping a candidate's processes in hand: each target runs in a session of its own,
marked by an environment variable only its processes carry, and at its end every
process of it is found and killed, daemons included.

A process that calls setsid() leaves the process group a kill of the group reaches, and
one that forks twice is adopted by init. Two ways find them anyway, on Linux: the
scoring process makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so
orphans of its children are adopted by it, not by init, and stay its descendants; and
every process whose environment carries the target's mark is the target's, whoever its
parent. At the end of a target: the mark's processes and the descendants that carry no
mark of any target (a process that cleared its environment) are stopped, then killed,
then reaped, until none is left. Elsewhere than Linux, only the process group is
killed, and the result says so."""

from __future__ import annotations

import os
from typing import Any
import secrets
import signal
import sys
import threading
import time

MARK = "LINKROOF_SCORE_JOB"
_subreaper: bool | None = None
_live: set[str] = set()  # the marks of the targets running now (a batch runs several at once)
_issued: set[str] = set()  # every mark this process gave out: its own targets, not another judge's
_lock = threading.Lock()


def new_mark() -> str:
    """A mark for a target about to start, registered as running until `finish`."""
    m = secrets.token_hex(8)
    with _lock:
        _live.add(m)
        _issued.add(m)
    return m


def live_marks() -> set[str]:
    with _lock:
        return set(_live)


def issued_marks() -> set[str]:
    """Every mark this process gave out (a judge's own targets, finished or not)."""
    with _lock:
        return set(_issued)


def finish(mark: str) -> None:
    with _lock:
        _live.discard(mark)


def become_subreaper() -> bool:
    """Make this process adopt its descendants' orphans (Linux); True if it does."""
    global _subreaper
    if _subreaper is None:
        _subreaper = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                libc = ctypes.CDLL(None, use_errno=True)
                _subreaper = libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
            except (OSError, AttributeError):
                _subreaper = False
    return _subreaper


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, state) from /proc/PID/stat, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode(errors="replace")
    except OSError:
        return None
    rest = raw[raw.rfind(")") + 2:].split()
    return int(rest[1]), rest[0]


def _mark_of(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read()
    except OSError:
        return None
    for item in env.split(b"\0"):
        if item.startswith(MARK.encode() + b"="):
            return item[len(MARK) + 1:].decode(errors="replace")
    return ""


def processes() -> dict[int, tuple[int, str]]:
    out = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for n in names:
        if n.isdigit():
            st = _stat(int(n))
            if st is not None:
                out[int(n)] = st
    return out


def rss_bytes(pids: Any) -> int:
    """The resident host memory of these processes together (each one's resident pages
    from /proc/<pid>/statm; pages two of them share are counted twice: an upper figure)."""
    page = os.sysconf("SC_PAGE_SIZE")
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm", "rb") as f:
                total += int(f.read().split()[1]) * page
        except (OSError, ValueError, IndexError):
            pass  # gone, or not ours to read
    return total


def total_memory_bytes() -> int | None:
    """This machine's memory (MemTotal), or None where /proc/meminfo does not say."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def descendants(root: int, table: dict[int, tuple[int, str]] | None = None) -> set[int]:
    table = processes() if table is None else table
    kids: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        kids.setdefault(ppid, []).append(pid)
    out, todo = set(), [root]
    while todo:
        for k in kids.get(todo.pop(), []):
            if k not in out:
                out.add(k)
                todo.append(k)
    return out


def tree_of(root: int, mark: str) -> set[int]:
    """A running target's processes for the memory watch: `root`'s descendants (in a PID
    namespace, all of them) and, among this process's other descendants (where it is the
    subreaper, a daemon that left the tree is one), those carrying its mark. Only those
    environments are read: the watch runs every 0.25 s."""
    table = processes()
    tree = descendants(root, table) | {root}
    others = descendants(os.getpid(), table) - tree
    return tree | {p for p in others if table[p][1] != "Z" and _mark_of(p) == mark}


def of_mark(mark: str, live_marks: set[str] | frozenset[str] = frozenset(),
            before: set[int] | frozenset[int] = frozenset()) -> list[int]:
    """The live (not zombie) processes of a target: those carrying its mark anywhere, and
    this process's descendants that were not there `before` the target started and carry
    no mark of a target still running (a process that cleared its environment)."""
    table = processes()
    mine = descendants(os.getpid(), table)
    found = []
    for pid, (_, state) in table.items():
        if pid == os.getpid() or state == "Z":
            continue
        m = _mark_of(pid)
        # a descendant whose environment cannot be read (it made itself undumpable) is this target's
        # when no other target runs now; in a batch, the PID namespace (jail.py) is what ends it
        # a descendant with no mark (one that cleared its environment, or another target's child
        # between its fork and its exec, which still holds the judge's environment) is this target's
        # only when no other target runs: in a batch a just-forked child of another job was killed
        if m == mark or (pid in mine and pid not in before and (m not in live_marks if m else not live_marks)):
            found.append(pid)
    return found


def kill_mark(mark: str, before: set[int] | frozenset[int] = frozenset(), rounds: int = 50) -> int:
    """Stop, kill and reap every process of the target (not those of another target
    running now); how many were killed. The mark is then no longer running."""
    killed: set[int] = set()
    others = live_marks() - {mark}
    for _ in range(rounds):
        pids = of_mark(mark, others, before)
        if not pids:
            break
        for sig in (signal.SIGSTOP, signal.SIGKILL):  # stopped first: none forks while the others die
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
        killed.update(pids)
        time.sleep(0.02)
        reap()
    reap()
    finish(mark)
    return len(killed)


def reap() -> None:
    """Collect the exit of every adopted child that has ended (zombies), and only those:
    the children this process started itself are waited for by their own Popen."""
    table = processes()
    for pid, (ppid, state) in table.items():
        if ppid == os.getpid() and state == "Z":
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
