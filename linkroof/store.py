"""The results store: profiles in SQLite (standard library), one file, WAL journal.

Every write is one transaction: an interrupted write (an exception, a crash, a killed
process) leaves the store exactly as it was. Location: `--store PATH`, else
`$LINKROOF_STORE`, else the user's data directory (`$XDG_DATA_HOME/linkroof/store.sqlite`,
`~/.local/share/linkroof/store.sqlite`)."""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import LinkroofError
from .schema import Profile, dumps, loads
from .units import gbps

SCHEMA = """
CREATE TABLE IF NOT EXISTS profiles (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    hostname TEXT NOT NULL,
    label TEXT NOT NULL,
    gpus TEXT NOT NULL,
    n_measurements INTEGER NOT NULL,
    document TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS measurements (
    profile_id TEXT NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    mechanism TEXT NOT NULL,
    pattern TEXT NOT NULL,
    devices TEXT NOT NULL,
    message_bytes INTEGER NOT NULL,
    bandwidth_gbps REAL,
    verified INTEGER NOT NULL,
    source TEXT NOT NULL,
    PRIMARY KEY (profile_id, position)
);
CREATE INDEX IF NOT EXISTS profiles_created ON profiles(created_at);
CREATE TABLE IF NOT EXISTS checked (
    id TEXT PRIMARY KEY REFERENCES profiles(id) ON DELETE CASCADE,
    ok INTEGER NOT NULL,
    reason TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS measurements_kind ON measurements(mechanism, pattern, message_bytes);
"""


class StoreError(LinkroofError):
    """The store cannot be opened or does not hold what was asked for."""


MAX_ID = 128


def check_id(value: str, what: str) -> None:
    """An id is plain text: not empty, at most MAX_ID characters, no control characters
    (NUL, newlines, terminal escapes)."""
    if not isinstance(value, str) or not value.strip():
        raise StoreError(f"{what} must not be empty")
    if len(value) > MAX_ID:
        raise StoreError(f"{what} of {len(value)} characters is longer than the {MAX_ID} an id may have")
    bad = next((c for c in value if not c.isprintable()), None)
    if bad is not None:
        raise StoreError(f"{what} holds the control character {bad!r}: ids are plain text")


def default_path() -> Path:
    env = os.environ.get("LINKROOF_STORE")
    if env:
        return Path(env)
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "linkroof" / "store.sqlite"


def _measurement_rows(profile: Profile) -> Iterator[tuple[Any, ...]]:
    for i, m in enumerate(profile.measurements):
        bw = m.bandwidth_bytes_per_s
        yield (profile.id, i, m.spec.name, m.spec.mechanism, m.spec.pattern,
               ",".join(map(str, m.spec.devices)), m.spec.message_bytes,
               gbps(bw) if bw == bw else None, int(m.verified), m.source)


def _gpu_summary(profile: Profile) -> str:
    names: dict[str, int] = {}
    for topo in profile.topologies:
        for g in topo.gpus:
            key = str(g.name)
            names[key] = names.get(key, 0) + 1
    return ", ".join(f"{n} x {k}" for k, n in names.items())


def _damaged(path: Path, e: Exception) -> StoreError:
    return StoreError(f"the store at {path} is damaged or not a linkroof store ({e}): move it aside "
                      f"(mv {path} {path}.damaged) and re-import your profiles with `linkroof runs import`, or use "
                      "another store with --store")


def _guarded(method: Any) -> Any:
    """Store errors a user can meet (a damaged or read-only file) as one clear message."""
    import functools

    @functools.wraps(method)
    def call(self: "Store", *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.OperationalError as e:
            if "readonly" in str(e) or "read-only" in str(e):
                raise StoreError(f"the store at {self.path} is read-only here: it can be read, not written "
                                 "(use --store for another one)") from None
            raise StoreError(f"the store at {self.path}: {e}") from None
        except sqlite3.DatabaseError as e:
            raise _damaged(self.path, e) from None

    return call


class Store:
    """Profiles in one SQLite file. Use as a context manager or call close(). A store
    that cannot be written (read-only file or file system) opens read-only."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else default_path()
        self.read_only = False
        self.unchanged = False  # the last put found the same document already stored
        try:
            if self.path.exists() and not (os.access(self.path, os.W_OK) and os.access(self.path.parent, os.W_OK)):
                self.read_only = True
                self.conn = self._open_read_only()
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self.conn.executescript(SCHEMA)
        except sqlite3.OperationalError as e:
            raise StoreError(f"cannot open the store at {self.path}: {e}") from None
        except sqlite3.DatabaseError as e:
            raise _damaged(self.path, e) from None
        except OSError as e:
            raise StoreError(f"cannot open the store at {self.path}: {e.strerror or e}") from None

    def _open_read_only(self) -> sqlite3.Connection:
        """A store this process may not write: read with its write-ahead log, so every
        committed profile shows (an 'immutable' open would skip the log's). Where SQLite
        cannot read the log in place (no shared-memory file and a folder it may not write),
        a private copy of the file and its log is read instead."""
        import shutil
        import tempfile

        wal = self.path.with_name(self.path.name + "-wal")
        try:
            conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=30,
                                   isolation_level=None)
            conn.execute("SELECT COUNT(*) FROM profiles").fetchone()
            return conn
        except sqlite3.OperationalError:
            if not (wal.exists() and wal.stat().st_size):
                conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro&immutable=1", uri=True,
                                       timeout=30, isolation_level=None)
                conn.execute("SELECT COUNT(*) FROM profiles").fetchone()
                return conn
        self._snapshot = tempfile.TemporaryDirectory(prefix="linkroof-store-")
        copy = Path(self._snapshot.name) / self.path.name
        shutil.copyfile(self.path, copy)
        shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
        conn = sqlite3.connect(f"{copy.as_uri()}?mode=ro", uri=True, timeout=30, isolation_level=None)
        conn.execute("SELECT COUNT(*) FROM profiles").fetchone()
        return conn

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()

    def put(self, profile: Profile, replace: bool = False) -> str:
        """Save a profile in one transaction; returns its id. A profile already stored
        under that id is never overwritten unless `replace`: the same document again
        changes nothing (`self.unchanged` is then True); another one is refused."""
        if self.read_only:
            raise StoreError(f"the store at {self.path} is read-only here: it can be read, not written "
                             "(use --store for another one)")
        check_id(profile.id, "a profile's id")
        try:
            document = dumps(profile, indent=None)
            loads(document, Profile)  # what is written reads back: the same validation as reading, first
        except (LinkroofError, ValueError) as e:
            raise StoreError(f"profile {profile.id} not stored: {e}") from None
        self.unchanged = False
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                row = self.conn.execute("SELECT document FROM profiles WHERE id = ?", (profile.id,)).fetchone()
                if row is not None and row[0] == document:
                    self.conn.execute("COMMIT")
                    self.unchanged = True
                    return profile.id
                if row is not None and not replace:
                    raise StoreError(f"a profile with id {profile.id} is already in the store, with other contents: "
                                     "nothing was written (replace it explicitly, e.g. runs import --replace)")
                if replace:
                    self.conn.execute("DELETE FROM profiles WHERE id = ?", (profile.id,))
                self.conn.execute(
                    "INSERT INTO profiles (id, created_at, hostname, label, gpus, n_measurements, document)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (profile.id, profile.created_at, ", ".join(profile.hostnames), profile.label,
                     _gpu_summary(profile), len(profile.measurements), document))
                self.conn.executemany(
                    "INSERT INTO measurements VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", _measurement_rows(profile))
                self.conn.execute("INSERT OR REPLACE INTO checked (id, ok, reason) VALUES (?, 1, '')", (profile.id,))
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")
        except sqlite3.IntegrityError:
            raise StoreError(f"a profile with id {profile.id} is already in the store") from None
        except sqlite3.OperationalError as e:
            raise StoreError(f"cannot write to the store at {self.path}: {e}") from None
        except sqlite3.DatabaseError as e:
            raise _damaged(self.path, e) from None
        return profile.id

    @_guarded
    def resolve(self, profile_id: str) -> str:
        """The full id of the profile `profile_id` names: the id itself, or the one id it
        is a prefix of (said by the caller). Matched as text, never as a pattern: '_',
        '%' and the like are characters of an id."""
        check_id(profile_id, "a profile id")
        if self.conn.execute("SELECT 1 FROM profiles WHERE id = ?", (profile_id,)).fetchone():
            return profile_id
        matches = [r[0] for r in self.conn.execute(
            "SELECT id FROM profiles WHERE substr(id, 1, ?) = ? ORDER BY created_at DESC",
            (len(profile_id), profile_id)).fetchall()]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise StoreError(f"profile id {profile_id!r} is ambiguous ({len(matches)} profiles start with it: "
                             f"{', '.join(matches[:3])}{', ...' if len(matches) > 3 else ''})")
        raise StoreError(f"no profile {profile_id!r} in the store at {self.path}")

    @_guarded
    def get(self, profile_id: str) -> Profile:
        """A stored profile by id or unique prefix. One that no longer validates raises a
        StoreError saying so (and how to remove it), and is marked damaged in the list."""
        full = self.resolve(profile_id)
        (document,) = self.conn.execute("SELECT document FROM profiles WHERE id = ?", (full,)).fetchone()
        try:
            return loads(document, Profile)
        except LinkroofError as e:
            self._mark_damaged(full, str(e))
            raise StoreError(f"profile {full} in the store is damaged ({e}); `linkroof runs rm {full}` removes "
                             "it") from None

    def _mark(self, profile_id: str, reason: str | None) -> None:
        """Remember whether a stored document reads back (None: it does)."""
        if self.read_only:
            return
        try:
            self.conn.execute("INSERT OR REPLACE INTO checked (id, ok, reason) VALUES (?, ?, ?)",
                              (profile_id, int(reason is None), (reason or "")[:500]))
        except sqlite3.DatabaseError:
            pass  # best effort: the list checks again next time

    def _mark_damaged(self, profile_id: str, reason: str) -> None:
        self._mark(profile_id, reason)

    def _check(self, profile_id: str) -> str | None:
        """Why the stored document of `profile_id` does not read back (None: it does),
        checked once and remembered: profiles written by this version were checked on
        the way in; older or foreign ones are read once here."""
        row = self.conn.execute("SELECT ok, reason FROM checked WHERE id = ?", (profile_id,)).fetchone()
        if row is not None:
            return None if row[0] else row[1]
        (document,) = self.conn.execute("SELECT document FROM profiles WHERE id = ?", (profile_id,)).fetchone()
        try:
            loads(document, Profile)
            reason = None
        except LinkroofError as e:
            reason = str(e)
        self._mark(profile_id, reason)
        return reason

    @_guarded
    def latest(self) -> Profile | None:
        """The newest stored profile that reads back; a damaged one is skipped (and marked)."""
        for (pid,) in self.conn.execute("SELECT id FROM profiles ORDER BY created_at DESC, rowid DESC").fetchall():
            try:
                return self.get(pid)
            except StoreError:
                continue
        return None

    @_guarded
    def list(self, limit: int = 50, offset: int = 0) -> list[dict[str, Any]]:
        """Rows of the index, newest first; `damaged` holds why a profile no longer reads
        back (found by get or latest), else None."""
        rows = self.conn.execute(
            "SELECT id, created_at, hostname, label, gpus, n_measurements FROM profiles"
            " ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?", (limit, offset)).fetchall()
        keys = ("id", "created_at", "hostname", "label", "gpus", "measurements")
        return [{**dict(zip(keys, r)), "damaged": self._check(r[0])} for r in rows]

    @_guarded
    def row(self, profile_id: str) -> dict[str, Any]:
        """The index row of one profile (by id or unique prefix), without reading it."""
        full = self.resolve(profile_id)
        r = self.conn.execute("SELECT id, created_at, hostname, label, gpus, n_measurements FROM profiles "
                              "WHERE id = ?", (full,)).fetchone()
        return {**dict(zip(("id", "created_at", "hostname", "label", "gpus", "measurements"), r)),
                "damaged": self._check(full)}

    @_guarded
    def count(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM profiles").fetchone()[0]

    @_guarded
    def remove(self, profile_id: str) -> str:
        """Remove the profile `profile_id` names (exactly, or a unique prefix), without
        reading it: a damaged one goes too. Returns the full id."""
        if self.read_only:
            raise StoreError(f"the store at {self.path} is read-only here: it can be read, not written")
        full_id = self.resolve(profile_id)
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute("DELETE FROM checked WHERE id = ?", (full_id,))
        self.conn.execute("DELETE FROM profiles WHERE id = ?", (full_id,))
        self.conn.execute("COMMIT")
        return full_id

    @_guarded
    def measurements(self, mechanism: str | None = None, pattern: str | None = None) -> list[dict[str, Any]]:
        """Index rows over every stored profile (for comparisons across runs)."""
        sql = "SELECT * FROM measurements WHERE 1=1"
        args: list[Any] = []
        if mechanism:
            sql += " AND mechanism = ?"
            args.append(mechanism)
        if pattern:
            sql += " AND pattern = ?"
            args.append(pattern)
        cur = self.conn.execute(sql, args)
        cols = [c[0] for c in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]


def load_profile_file(path: str | Path, max_bytes: int = 256 * 1024 * 1024) -> Profile:
    """Read and validate a profile JSON file, plain or gzip-compressed (.gz) (export /
    import / --profile FILE)."""
    import gzip
    import zlib

    from .files import read_bytes, regular_file

    p = regular_file(path, "profile")
    try:
        if p.suffix == ".gz":
            with gzip.open(p, "rb") as f:
                text = f.read(max_bytes + 1)
            if len(text) > max_bytes:
                raise StoreError(f"{p}: over the {max_bytes}-byte limit for a profile once decompressed")
        else:
            text = read_bytes(p, "profile", max_bytes)
    except (OSError, EOFError, zlib.error) as e:
        raise StoreError(f"cannot read {p}: {getattr(e, 'strerror', None) or e}") from None
    try:
        return loads(text, Profile)
    except LinkroofError as e:
        raise type(e)(f"{p}: {e}") from None

