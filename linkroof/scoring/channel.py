"""The channel a `linkroof score` child reports on: a Unix socket the parent listens on in
a folder of its own, one connection per rank, made by the harness before any candidate
code is imported, every frame signed with a key the parent handed to that connection.

A candidate runs in the harness's process, so nothing keeps it from everything that
process can do; what the channel does is make a forged result visible instead of
accepted. The candidate cannot write a result file (there is none: outputs and timings
travel on the socket, into a folder the child is never told of); a second connection
claiming a rank, a frame with a wrong signature, a second timing for a rank or one
frame too large all mark the target `tampered`, with the reason. The token that opens a
connection is taken out of the environment before the candidate is imported (it stays
readable in /proc/self/environ, but each rank's one connection is already made by
then, so a second is seen for what it is).

Frames: 4 bytes (big-endian) of header length, the JSON header, then `bytes` of payload;
the header's `mac` is HMAC-SHA256 over the header without it (sorted keys) and the
payload. Outputs are NumPy .npy files streamed to disk, never held whole in memory, so
the parent compares them chunk by chunk through a memory map, and an output over the
limit is refused by the child (with a row saying so) and by the parent (whatever the
child says)."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import socket
import struct
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ENV_ADDRESS, ENV_TOKEN = "LINKROOF_SCORE_CHANNEL", "LINKROOF_SCORE_TOKEN"
MAX_HEADER = 1 << 20
DEFAULT_MAX_OUTPUT_BYTES = 4 << 30  # one rank's outputs of one trial together
KINDS = ("output", "trials", "perf", "error", "checks")


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


class Listener:
    """The parent's end: listens in `folder` (the parent's own), accepts one connection
    per rank, writes outputs under `outputs` (a folder the child is never told of), and
    records what each rank sent and every violation."""

    def __init__(self, folder: str, outputs: str, ranks: int, max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES):
        self.folder, self.outputs = Path(folder), Path(outputs)
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.outputs.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.ranks, self.max_output_bytes = ranks, max_output_bytes
        self.token = secrets.token_hex(16)
        self.address = str(self.folder / "s")
        self.reports: dict[int, RankReport] = {}
        self.violations: list[str] = []
        self.connections = 0
        self._lock = threading.Lock()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(self.address)
        os.chmod(self.address, 0o600)
        self._sock.listen(max(8, ranks * 2))
        self._sock.settimeout(0.2)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._accepter = threading.Thread(target=self._accept, daemon=True)
        self._accepter.start()

    def env(self) -> dict[str, str]:
        return {ENV_ADDRESS: self.address, ENV_TOKEN: self.token}

    def _violation(self, why: str) -> None:
        with self._lock:
            if why not in self.violations and len(self.violations) < 20:
                self.violations.append(why)

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, socket.timeout):
                continue
            except OSError:
                return
            with self._lock:
                self.connections += 1
                if self.connections > self.ranks * 4 + 8:  # a flood: stop taking connections
                    conn.close()
                    continue
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            t.start()
            self._threads.append(t)

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(None)
        f = conn.makefile("rb")
        try:
            hello = _read_header(f)
            rank = hello.get("rank")
            if not hmac.compare_digest(str(hello.get("token", "")), self.token):
                self._violation("a connection to the result channel without the harness's token")
                return
            if not isinstance(rank, int) or not 0 <= rank < self.ranks:
                self._violation(f"a connection claimed rank {str(rank)[:20]!r} of a {self.ranks}-rank run")
                return
            with self._lock:
                if rank in self.reports:
                    self.violations.append(f"a second connection claimed rank {rank}: something in the candidate's "
                                           "process tried to report for the harness")
                    return
                rep = self.reports[rank] = RankReport()
            key = secrets.token_bytes(32)
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
            path = self.outputs / f"r{rank}_t{_safe(trial)}_{index}.npy"
            with open(path, "wb") as out:
                left = size
                while left:
                    chunk = f.read(min(left, 1 << 20))
                    if not chunk:
                        raise EOFError("the output was cut off")
                    digest.update(chunk)
                    out.write(chunk)
                    left -= len(chunk)
            if not hmac.compare_digest(str(header.get("mac")), _mac(key, header, digest.digest())):
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
        """Stop listening; wait for the connections' readers (the child is gone by now, so
        each ends at its end of stream) and remove the socket's folder."""
        self._stop.set()
        try:
            self._sock.close()
        except OSError:
            pass
        self._accepter.join(timeout=2)
        for t in self._threads:
            t.join(timeout=wait_s)
        try:
            os.unlink(self.address)
            os.rmdir(self.folder)
        except OSError:
            pass


def _safe(s: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in s)


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
    """The child's end, made before any candidate code is imported: connects with the
    token (then taken out of the environment), and sends signed frames."""

    def __init__(self, rank: int, address: str, token: str):
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.connect(address)
        self._sock.sendall(_frame({"rank": rank, "token": token}))
        f = self._sock.makefile("rb")
        self._key = bytes.fromhex(_read_header(f)["key"])
        f.close()

    @staticmethod
    def from_env(rank: int) -> "Reporter | None":
        address, token = os.environ.pop(ENV_ADDRESS, None), os.environ.pop(ENV_TOKEN, None)
        if not address or not token:
            return None
        return Reporter(rank, address, token)

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
        try:
            self._sock.close()
        except OSError:
            pass
