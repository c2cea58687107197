"""The channel a `linkroof score` child reports on: one socket per rank, connected by the
judge before the child starts (a socketpair; the child inherits its end as a descriptor,
named by LINKROOF_SCORE_FDS, which holds descriptor numbers, never a secret), every frame
signed with a key the judge hands to that connection. There is no address to find and
no token to steal: another candidate, or anything in this one, cannot open a connection
of its own. A candidate runs in the harness's process, so nothing keeps it from
everything that process can do; what the channel does is make a forged result visible
instead of accepted, and the judge does not believe what arrives on its word (score.py
cross-checks times against what it observes from outside, and draws the inputs). The
candidate cannot write a result file (there is none); a frame on a connection of
another rank, a frame with a wrong signature, a second timing for a rank or one frame
too large all mark the target `tampered`, with the reason.

Frames: 4 bytes (big-endian) of header length, the JSON header, then `bytes` of payload;
the header's `mac` is HMAC-SHA256 over the header without it (sorted keys) and the
payload. Outputs are NumPy .npy files streamed out, never held whole in the child: a
candidate's into files in a folder the child is never told of, the reference's (the
answers) into anonymous memory files (memfd) of the judge, never on a file system a
candidate could read. `mark` frames (the timed loop's start and end) are stamped with
the judge's own clock when they arrive: by the judge's kernel, on a second socket per
rank (SOCK_SEQPACKET with SO_TIMESTAMPNS), when the child sends them, so a judge slowed
by a loaded machine (its reader scheduled late) does not shrink the wall time it saw
and call an honest time impossible (a 30 ms loop read as 0.07 ms under 4 suites on 2
cores, 2026-12-04). Without that socket a mark comes on the stream, stamped when read."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ENV_FDS = "LINKROOF_SCORE_FDS"  # "RANK:FD[:MARKFD],...": the inherited descriptors, by rank
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux's value; Python names it on some builds only
SCM_TIMESTAMPNS = SO_TIMESTAMPNS
MAX_MARK = 512  # a mark message's bytes
MAX_HEADER = 1 << 20
DEFAULT_MAX_OUTPUT_BYTES = 4 << 30  # one rank's outputs of one trial together
KINDS = ("output", "trials", "perf", "error", "checks", "mark")


def _mac(key: bytes, header: dict, payload_digest: bytes) -> str:
    body = json.dumps({k: v for k, v in header.items() if k != "mac"}, sort_keys=True).encode()
    return hmac.new(key, body + payload_digest, hashlib.sha256).hexdigest()


@dataclass
class RankReport:
    """What one rank's harness sent."""

    outputs: dict[str, list[Path]] = field(default_factory=dict)  # trial key -> the output leaves' .npy files
    output_bytes: dict[str, int] = field(default_factory=dict)
    trials_done: int = 0
    perf: dict | None = None
    error: dict | None = None
    checks: dict | None = None
    marks: dict[str, float] = field(default_factory=dict)  # mark -> the judge's time at its arrival (s, CLOCK_REALTIME)


class Listener:
    """The judge's end: one connected socket per rank (`connect` makes them; the child
    inherits the other ends), outputs written under `outputs` (a folder the child is
    never told of) or, with `in_memory`, into memfd files (the reference's), and a record
    of what each rank sent and of every violation."""

    def __init__(self, folder: str, outputs: str, ranks: int, max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
                 in_memory: bool = False):
        self.outputs = Path(outputs)
        self.in_memory = in_memory and hasattr(os, "memfd_create")
        if not self.in_memory:
            self.outputs.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.ranks, self.max_output_bytes = ranks, max_output_bytes
        self.reports: dict[int, RankReport] = {}
        self.violations: list[str] = []
        self.memfds: list[int] = []
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._children: list[socket.socket] = []
        self._keys: dict[int, bytes] = {}
        self.mark_fds: dict[int, int] = {}  # rank -> the child's end of its mark socket

    def connect(self) -> dict[int, int]:
        """One socketpair per rank: the judge serves its end; the child's ends (rank ->
        descriptor, inheritable) are for the child to inherit, then `release`d here."""
        out = {}
        for rank in range(self.ranks):
            mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            theirs.set_inheritable(True)
            self._children.append(theirs)
            out[rank] = theirs.fileno()
            t = threading.Thread(target=self._serve, args=(mine, rank), daemon=True)
            t.start()
            self._threads.append(t)
            try:  # the marks' own socket, stamped by the kernel as they are sent
                mmine, mtheirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                mmine.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            except OSError:
                continue  # no such socket here: marks come on the stream, stamped when read
            mtheirs.set_inheritable(True)
            self._children.append(mtheirs)
            self.mark_fds[rank] = mtheirs.fileno()
            t = threading.Thread(target=self._serve_marks, args=(mmine, rank), daemon=True)
            t.start()
            self._threads.append(t)
        return out

    def inherited(self, fds: dict[int, int]) -> list[int]:
        """The descriptors a child holding `fds` (rank -> stream) inherits: its streams
        and their ranks' mark sockets."""
        return sorted(list(fds.values()) + [self.mark_fds[r] for r in fds if r in self.mark_fds])

    def env(self, fds: dict[int, int]) -> dict[str, str]:
        return {ENV_FDS: ",".join(f"{r}:{fd}" + (f":{self.mark_fds[r]}" if r in self.mark_fds else "")
                                  for r, fd in sorted(fds.items()))}

    def release(self) -> None:
        """Close the child's ends in the judge (once the child holds them): a rank's
        reader then ends when the child's end closes."""
        for s in self._children:
            try:
                s.close()
            except OSError:
                pass
        self._children = []

    def _violation(self, why: str) -> None:
        with self._lock:
            if why not in self.violations and len(self.violations) < 20:
                self.violations.append(why)

    def _serve(self, conn: socket.socket, rank: int) -> None:
        conn.settimeout(None)
        f = conn.makefile("rb")
        try:
            try:
                hello = _read_header(f)
            except EOFError:  # the child ended (or never started) without reporting: no report, no violation
                return
            if hello.get("rank") != rank:
                self._violation(f"the connection made for rank {rank} claimed rank {str(hello.get('rank'))[:20]!r}")
                return
            with self._lock:
                if rank in self.reports:
                    self.violations.append(f"a second report for rank {rank}: something in the candidate's "
                                           "process tried to report for the harness")
                    return
                rep = self.reports[rank] = RankReport()
            key = secrets.token_bytes(32)
            with self._lock:
                self._keys[rank] = key  # before the child has it: its marks can be checked on arrival
            conn.sendall(_frame({"key": key.hex()}))
            while True:
                try:
                    header = _read_header(f)
                except EOFError:
                    return
                self._take(rank, rep, key, header, f)
        except (EOFError, OSError, ValueError) as e:
            self._violation(f"a malformed frame on the result channel ({type(e).__name__}: {str(e)[:100]})")
        finally:
            f.close()
            conn.close()

    def _serve_marks(self, conn: socket.socket, rank: int) -> None:
        """A rank's marks, each one message, stamped by the kernel when the child sent it
        (SCM_TIMESTAMPNS, CLOCK_REALTIME) and signed: HMAC(key, "mark:" + name)."""
        try:
            while True:
                data, anc, flags, _ = conn.recvmsg(MAX_MARK, socket.CMSG_SPACE(16))
                if not data:
                    return  # the child's end closed
                stamp = None
                for level, kind, value in anc:
                    if level == socket.SOL_SOCKET and kind == SCM_TIMESTAMPNS and len(value) >= 16:
                        sec, nsec = struct.unpack("qq", value[:16])
                        stamp = sec + nsec * 1e-9
                try:
                    doc = json.loads(data) if not flags & socket.MSG_TRUNC else None
                except ValueError:
                    doc = None
                if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
                    self._violation(f"a malformed mark on rank {rank}'s mark socket")
                    continue
                name = doc["name"][:40]
                with self._lock:
                    key, rep = self._keys.get(rank), self.reports.get(rank)
                if key is None or rep is None or not hmac.compare_digest(str(doc.get("mac")), _mark_mac(key, name)):
                    self._violation(f"rank {rank}'s mark frame failed its signature")
                    continue
                self._mark(rep, name, stamp if stamp is not None else time.time())
        except OSError:
            return
        finally:
            conn.close()

    def _mark(self, rep: RankReport, name: str, at: float) -> None:
        """The first mark of each name counts, 16 names at most."""
        with self._lock:
            if name and name not in rep.marks and len(rep.marks) < 16:
                rep.marks[name] = at

    def _take(self, rank: int, rep: RankReport, key: bytes, header: dict, f: Any) -> None:
        kind, size = header.get("type"), header.get("bytes", 0)
        if kind not in KINDS or not isinstance(size, int) or size < 0:
            raise ValueError(f"unknown frame {str(kind)[:30]!r}")
        digest = hashlib.sha256()
        if kind == "output":
            trial = str(header.get("trial"))[:32]
            index = int(header.get("index", 0))
            if rep.output_bytes.get(trial, 0) + size > self.max_output_bytes:
                raise ValueError(f"rank {rank} sent outputs over the {self.max_output_bytes:,} B limit")
            if self.in_memory:  # the answers: in the judge's memory, on no file system
                fd = os.memfd_create(f"r{rank}_t{_safe(trial)}_{index}", os.MFD_CLOEXEC)  # never inherited
                with self._lock:
                    self.memfds.append(fd)
                path = Path(f"/proc/{os.getpid()}/fd/{fd}")
                out_f = os.fdopen(os.dup(fd), "wb")
            else:
                path = self.outputs / f"r{rank}_t{_safe(trial)}_{index}.npy"
                out_f = open(path, "wb")
            with out_f as out:
                left = size
                while left:
                    chunk = f.read(min(left, 1 << 20))
                    if not chunk:
                        raise EOFError("the output was cut off")
                    digest.update(chunk)
                    out.write(chunk)
                    left -= len(chunk)
            if not hmac.compare_digest(str(header.get("mac")), _mac(key, header, digest.digest())):
                if not self.in_memory:
                    path.unlink(missing_ok=True)
                self._violation(f"rank {rank}'s output frame failed its signature")
                return
            rep.output_bytes[trial] = rep.output_bytes.get(trial, 0) + size
            leaves = rep.outputs.setdefault(trial, [])
            leaves.append(path)
            return
        if size > MAX_HEADER:
            raise ValueError(f"a {kind} frame of {size} B")
        payload = f.read(size)
        if len(payload) != size:
            raise EOFError("a frame was cut off")
        digest.update(payload)
        if not hmac.compare_digest(str(header.get("mac")), _mac(key, header, digest.digest())):
            self._violation(f"rank {rank}'s {kind} frame failed its signature")
            return
        doc = json.loads(payload or b"null")
        if kind == "mark":  # on the stream (no mark socket): stamped when read
            name = str((doc or {}).get("name", ""))[:40] if isinstance(doc, dict) else ""
            self._mark(rep, name, time.time())
            return
        with self._lock:
            if kind == "trials":
                rep.trials_done = int(doc.get("done", 0))
            elif kind in ("perf", "error", "checks"):
                if getattr(rep, kind) is not None:
                    self.violations.append(f"rank {rank} reported its {kind} twice: the second was not the "
                                           "harness's")
                    return
                setattr(rep, kind, doc)

    def failed_ranks(self) -> list[int]:
        with self._lock:
            return sorted(r for r, rep in self.reports.items() if rep.error is not None)

    def close(self, wait_s: float = 30.0) -> None:
        """Wait for the connections' readers (the child is gone by now, so each ends at
        its end of stream). The memfd outputs stay open until `free`."""
        self.release()
        for t in self._threads:
            t.join(timeout=wait_s)

    def free(self) -> None:
        """Close the memfd outputs (the reference's answers): after the rows are made."""
        with self._lock:
            fds, self.memfds = self.memfds, []
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass


def _safe(s: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in s)


def _mark_mac(key: bytes, name: str) -> str:
    return hmac.new(key, b"mark:" + name.encode(), hashlib.sha256).hexdigest()


def _frame(header: dict, payload: bytes = b"") -> bytes:
    body = json.dumps(header).encode()
    return struct.pack(">I", len(body)) + body + payload


def _read_header(f: Any) -> dict:
    raw = f.read(4)
    if len(raw) < 4:
        raise EOFError("closed")
    (n,) = struct.unpack(">I", raw)
    if n > MAX_HEADER:
        raise ValueError(f"a header of {n} B")
    body = f.read(n)
    if len(body) != n:
        raise EOFError("a header was cut off")
    doc = json.loads(body)
    if not isinstance(doc, dict):
        raise ValueError("a header that is not an object")
    return doc


class Reporter:
    """The child's end, made before any candidate code is imported: the inherited
    descriptor of its rank (then taken out of the environment), signed frames."""

    MARK_FDS: dict[int, int] = {}  # rank -> the inherited mark socket, from LINKROOF_SCORE_FDS

    def __init__(self, rank: int, fd: int, mark_fd: int | None = None):
        self._sock = socket.socket(fileno=fd)
        self._sock.set_inheritable(False)  # the candidate's subprocesses do not inherit it
        mark_fd = Reporter.MARK_FDS.pop(rank, None) if mark_fd is None else mark_fd
        self._marks = None
        if mark_fd is not None:
            try:
                self._marks = socket.socket(fileno=mark_fd)
                self._marks.set_inheritable(False)
            except OSError:
                self._marks = None
        self._sock.sendall(_frame({"rank": rank}))
        f = self._sock.makefile("rb")
        self._key = bytes.fromhex(_read_header(f)["key"])
        f.close()

    @staticmethod
    def fds_from_env() -> dict[int, int]:
        """rank -> inherited descriptor, from LINKROOF_SCORE_FDS (removed from the environment);
        each rank's mark socket, where given, into Reporter.MARK_FDS."""
        out = {}
        for item in os.environ.pop(ENV_FDS, "").split(","):
            r, _, rest = item.partition(":")
            fd, _, mark = rest.partition(":")
            if r.strip().isdigit() and fd.strip().isdigit():
                out[int(r)] = int(fd)
                if mark.strip().isdigit():
                    Reporter.MARK_FDS[int(r)] = int(mark)
        return out

    @staticmethod
    def from_env(rank: int) -> "Reporter | None":
        fd = Reporter.fds_from_env().get(rank)
        if fd is None:
            return None
        return Reporter(rank, fd)

    def mark(self, name: str) -> None:
        """A point the judge stamps with its own clock on arrival (the timed loop's start
        and end: score.py checks the reported time against the wall time between them):
        on the mark socket, where the judge's kernel stamps it as it is sent."""
        if self._marks is not None:
            self._marks.send(json.dumps({"name": name, "mac": _mark_mac(self._key, name)}).encode())
            return
        self.send("mark", {"name": name})

    def send(self, kind: str, doc: Any) -> None:
        payload = json.dumps(doc, default=str).encode()
        header = {"type": kind, "bytes": len(payload)}
        header["mac"] = _mac(self._key, header, hashlib.sha256(payload).digest())
        self._sock.sendall(_frame(header, payload))

    def send_array(self, trial: str, index: int, array: Any) -> None:
        """One output leaf as a .npy file's bytes (header, then the data in C order),
        streamed: the array is never copied whole into a second buffer."""
        import numpy as np

        a = np.ascontiguousarray(array)
        import io

        head = io.BytesIO()
        np.lib.format.write_array_header_1_0(head, np.lib.format.header_data_from_array_1_0(a))
        data = memoryview(a.reshape(-1).view(np.uint8)) if a.size else memoryview(b"")
        digest = hashlib.sha256(head.getvalue())
        for s in range(0, len(data), 1 << 24):
            digest.update(data[s:s + (1 << 24)])
        header = {"type": "output", "trial": str(trial), "index": index, "bytes": len(head.getvalue()) + len(data)}
        header["mac"] = _mac(self._key, header, digest.digest())
        self._sock.sendall(_frame(header, head.getvalue()))
        for s in range(0, len(data), 1 << 24):
            self._sock.sendall(data[s:s + (1 << 24)])

    def close(self) -> None:
        for sock in (self._sock, self._marks):
            try:
                if sock is not None:
                    sock.close()
            except OSError:
                pass
