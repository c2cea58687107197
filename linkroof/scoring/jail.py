"""The candidate's side of the judge's wall (isolate / nsjail, in the small): a process
that takes a target's processes into namespaces of their own before any of them runs.

    python -m linkroof.scoring.jail   (its plan as JSON on standard input)

It unshares PID, mount, IPC and network namespaces (and a user namespace where it is not
root), forks the namespace's first process (its init: when it ends, the kernel kills
every process left in the namespace, daemons included), and there:
- mounts a /proc of the namespace (the candidate sees its own processes only, not the
  judge's environment, descriptors or memory, nor another candidate's);
- mounts fresh, empty /tmp, /var/tmp and /dev/shm (a private temporary folder: the
  judge's temporary files, other candidates' and the store's folder are not there);
- brings up its own loopback (ranks rendezvous on 127.0.0.1; nothing else is reached);
- sets rlimits (open files, file size, core dumps, processes, and memory where asked);
- starts the target's processes with no capabilities: the bounding set emptied, the
  ambient set cleared and SECBIT_NOROOT locked, so even as root in the namespaces (where
  uid 65534 cannot run the code) a candidate can neither remount a file system
  read-write, nor ptrace or stop the init, nor regain a capability through exec;
- as root, starts them as `uid`/`gid` (65534 by default) with no supplementary groups
  and PR_SET_NO_NEW_PRIVS, so no file of the judge's (0600, 0700) can be read either;
  the init keeps its identity and is undumpable;
- starts each process of the plan with only its own inherited descriptors, waits for
  them, then kills whatever is left and exits with the first failure's status.

`probe()` says which of these this machine allows, once per process: the judge runs
the candidate in the strongest mode it has and the row says which (docs/scoring.md has
what each mode guarantees)."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
from typing import Any

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
PR_SET_NO_NEW_PRIVS, PR_SET_PDEATHSIG = 38, 1
PR_CAPBSET_DROP, PR_SET_SECUREBITS, PR_GET_SECUREBITS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 28, 27, 47, 4
CAP_SETPCAP = 8
# root gains no capability at exec, and cannot raise an ambient one; both locked (capabilities(7))
SECURE_BITS = 0x01 | 0x02 | 0x40 | 0x80  # SECBIT_NOROOT(_LOCKED), SECBIT_NO_CAP_AMBIENT_RAISE(_LOCKED)
NOBODY = 65534
RLIMITS = {"nofile": 4096, "fsize": 64 << 30, "core": 0}  # the defaults; "nproc" and "as" where asked

_probed: dict[str, Any] | None = None


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")


def _mount(libc: Any, source: str, target: str, fstype: str, flags: int, data: str = "") -> None:
    _check(libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
                      data.encode() if data else None), f"mount {target}")


def _loopback_up() -> None:
    import fcntl
    import socket
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifr = struct.pack("16sH", b"lo", 0x1 | 0x8 | 0x40)  # IFF_UP | IFF_LOOPBACK | IFF_RUNNING
        fcntl.ioctl(s, 0x8914, ifr)  # SIOCSIFFLAGS


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


MS_RDONLY, MS_REMOUNT, MS_BIND = 1, 32, 4096
KEEP = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": 1024, "nodiratime": 2048,
        "relatime": 1 << 21, "strictatime": 1 << 24}


def readonly(libc: Any) -> None:
    """Every file system the namespace inherited, read-only (its own flags kept): the
    candidate writes only to its fresh /tmp, /var/tmp and /dev/shm, never to the store,
    the results, or anything of the judge's. Device nodes still open for writing (the
    GPU's). A mount that will not change is left as it is."""
    with open("/proc/self/mountinfo") as f:
        rows = [line.split() for line in f]
    for row in sorted(rows, key=lambda r: len(r[4])):
        point = row[4].replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY
        for opt in row[5].split(","):
            flags |= KEEP.get(opt, 0)
        try:
            _mount(libc, "none", point, "", flags)
        except OSError:
            pass


def enter(plan: dict) -> None:
    """In the forked first process of the new namespaces: the file systems, the network,
    the limits, the identity (raises OSError naming what failed)."""
    libc = _libc()
    _mount(libc, "none", "/", "", MS_REC | MS_PRIVATE)  # nothing mounted here reaches the judge's namespace
    if plan.get("readonly", True):
        readonly(libc)
    _mount(libc, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    fresh = [d for d in ("/tmp", "/var/tmp", "/dev/shm") if os.path.isdir(d)]
    keep = []  # folders under those the target needs (its working folder, its code): kept visible, read-only
    for d in plan.get("expose") or []:
        d = os.path.realpath(d)
        if os.path.isdir(d) and any(d.startswith(r + "/") for r in fresh):  # never a fresh folder itself
            keep.append((d, os.open(d, os.O_PATH | os.O_DIRECTORY)))
    for d in fresh:
        _mount(libc, "tmpfs", d, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=50%")
    for d, fd in sorted(keep):
        os.makedirs(d, exist_ok=True)
        _mount(libc, f"/proc/self/fd/{fd}", d, "", MS_BIND | MS_REC)
        try:
            _mount(libc, "none", d, "", MS_REMOUNT | MS_BIND | MS_RDONLY)
        except OSError:
            pass
        os.close(fd)
    os.makedirs("/tmp/home", mode=0o777, exist_ok=True)  # HOME: compile caches (Triton, CUDA) land here
    os.chmod("/tmp/home", 0o777)
    if plan.get("net", True):
        _loopback_up()
    for name, value in {**RLIMITS, **(plan.get("rlimits") or {})}.items():
        import resource

        res = getattr(resource, f"RLIMIT_{name.upper()}")
        try:
            resource.setrlimit(res, (int(value), int(value)))
        except (ValueError, OSError):
            soft, hard = resource.getrlimit(res)
            resource.setrlimit(res, (min(int(value), hard) if hard >= 0 else int(value), hard))
    libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: the namespace's init is not the candidate's to ptrace


def no_capabilities(libc: Any) -> None:
    """This process and what it execs hold no capability: SECBIT_NOROOT locked (root
    gains none at exec), the bounding set emptied (CAP_SETPCAP last: dropping needs it)
    and the ambient set cleared. Raises OSError where the kernel refuses (then the jail
    fails, and probe() falls back to a weaker mode that says so)."""
    last = 63
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            last = int(f.read())
    except (OSError, ValueError):
        pass
    _check(libc.prctl(PR_SET_SECUREBITS, libc.prctl(PR_GET_SECUREBITS, 0, 0, 0, 0) | SECURE_BITS, 0, 0, 0),
           "securebits")
    for cap in [c for c in range(last + 1) if c != CAP_SETPCAP] + [CAP_SETPCAP]:
        _check(libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), f"capability {cap}")
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # EINVAL on kernels before 4.3: none to clear


def _drop(plan: dict) -> Any:
    """What each process of the plan runs before its program (the init itself keeps its
    identity, so a candidate can neither ptrace nor stop it): no capabilities through
    exec, no supplementary groups, `gid`, `uid`, and no new privileges."""
    uid, gid = plan.get("uid"), plan.get("gid")

    def drop() -> None:
        if plan.get("capabilities", "none") == "none":
            no_capabilities(_libc())
        if uid is not None and os.geteuid() == 0 and not plan.get("userns"):
            os.setgroups([])
            os.setgid(int(gid if gid is not None else uid))
            os.setuid(int(uid))
        _check(_libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")

    return drop


def init(plan: dict) -> int:
    """The namespace's first process: start the plan's processes, reap every orphan,
    and when the plan's processes have ended kill what is left (the namespace dies with
    this process anyway). Its status: the first failure's."""
    procs = []
    for p in plan["procs"]:
        fds = [int(x) for x in p.get("fds", [])]
        procs.append(subprocess.Popen(p["argv"], env=p["env"], cwd=p.get("cwd") or "/tmp", pass_fds=fds,
                                      stdout=None, stderr=None, preexec_fn=_drop(plan) if plan.get("unshare", True)
                                      else None))
    for p in plan["procs"]:
        for fd in p.get("fds", []):
            try:
                os.close(int(fd))
            except OSError:
                pass
    pending = {p.pid: p for p in procs}
    status = 0
    while pending:
        try:
            pid, st = os.wait()
        except ChildProcessError:
            break
        if pid in pending:
            code = os.waitstatus_to_exitcode(st)
            pending.pop(pid).returncode = code
            if code != 0 and status == 0:
                status = code if code > 0 else 128 - code
    if os.getpid() == 1:  # the namespace's init: every process left in it (never outside a namespace)
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
    return status


def run(plan: dict) -> int:
    """Unshare, fork the namespace's first process, wait for it (this process stays in
    the judge's namespace, so the judge can kill the whole target through it)."""
    if not plan.get("unshare", True):  # no namespaces here: a plain launcher (procs.py ends its processes)
        return init(plan)
    libc = _libc()
    flags = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | (CLONE_NEWNET if plan.get("net", True) else 0)
    uid, gid = os.getuid(), os.getgid()
    if plan.get("userns"):
        flags |= CLONE_NEWUSER
    _check(libc.unshare(flags), "unshare")
    if plan.get("userns"):
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"0 {uid} 1")
        _write("/proc/self/gid_map", f"0 {gid} 1")
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    pid = os.fork()
    if pid == 0:
        try:
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the judge killed the jail: the namespace goes
            enter(plan)
            code = init(plan)
        except BaseException as e:  # noqa: BLE001 - said on stderr (the child's log), with a status of its own
            print(f"linkroof jail: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            code = 125
        os._exit(code)
    for p in plan["procs"]:
        for fd in p.get("fds", []):
            try:
                os.close(int(fd))
            except OSError:
                pass
    while True:
        try:
            _, st = os.waitpid(pid, 0)
            return os.waitstatus_to_exitcode(st) if os.waitstatus_to_exitcode(st) >= 0 else \
                128 - os.waitstatus_to_exitcode(st)
        except InterruptedError:
            continue


def python_paths() -> list[str]:
    """What this Python needs to run and import linkroof: its prefixes (a virtual
    environment's too), its site-packages and linkroof's own folder. A fresh /tmp must
    keep these visible where they lie under it (a virtual environment in /tmp)."""
    import site

    import linkroof

    out = [sys.prefix, sys.exec_prefix, sys.base_prefix, os.path.dirname(sys.executable),
           os.path.dirname(os.path.dirname(os.path.abspath(linkroof.__file__)))]
    try:
        out += site.getsitepackages()
    except AttributeError:
        pass
    return [p for p in dict.fromkeys(out) if p]


def _try(userns: bool, uid: int | None) -> tuple[bool, str]:
    plan = {"procs": [{"argv": [sys.executable, "-c", "import os, linkroof; os.listdir('/proc'); open('/tmp/x', 'w')"],
                       "env": _env_for_probe(), "fds": []}],
            "userns": userns, "uid": uid, "gid": uid, "expose": python_paths()}
    try:
        r = subprocess.run([sys.executable, "-m", "linkroof.scoring.jail"], input=json.dumps(plan), text=True,
                           capture_output=True, timeout=60, env=_env_for_probe())
        return r.returncode == 0, (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]
    except (OSError, subprocess.SubprocessError) as e:
        return False, f"{type(e).__name__}: {e}"


def probe() -> dict[str, Any]:
    """What this machine allows, tried once (a forked process unshares, mounts and
    imports linkroof): {"mode": "namespaces+uid" | "namespaces" | "none", "why": ...}.
    As root: namespaces and a drop to uid 65534 where that uid can run this Python and
    read linkroof, else namespaces as root in them; not root: a user namespace where
    unprivileged ones are allowed; else none."""
    global _probed
    if _probed is not None:
        return _probed
    if not sys.platform.startswith("linux"):
        _probed = {"mode": "none", "why": "not Linux: no namespaces"}
        return _probed
    if os.geteuid() == 0:
        ok, why = _try(False, NOBODY)
        if ok:
            _probed = {"mode": "namespaces+uid", "why": f"new PID, mount, IPC and network namespaces, as uid {NOBODY}"}
            return _probed
        ok, why2 = _try(False, None)
        if ok:
            _probed = {"mode": "namespaces", "why": "new PID, mount, IPC and network namespaces, as root in them "
                       f"(uid {NOBODY} cannot run this Python and linkroof: {why[:160]})"}
            return _probed
        why = why2
    else:
        ok, why = _try(True, None)
        if ok:
            _probed = {"mode": "namespaces", "why": "new user, PID, mount, IPC and network namespaces (not root)"}
            return _probed
    _probed = {"mode": "none", "why": f"namespaces are not allowed here ({why[:200]})"}
    return _probed


def _env_for_probe() -> dict[str, str]:
    keep = ("PATH", "PYTHONPATH", "HOME", "LANG", "VIRTUAL_ENV")
    return {k: v for k, v in os.environ.items() if k in keep}


def main() -> int:
    plan = json.loads(sys.stdin.read())
    try:
        return run(plan)
    except OSError as e:
        print(f"linkroof jail: {e}", file=sys.stderr, flush=True)
        return 125


if __name__ == "__main__":
    sys.exit(main())
