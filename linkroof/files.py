"""Reading the files a user names (profiles, tool outputs, workloads, recordings, traces):
one door, bounded. Only regular files are read (a FIFO, a device or a directory would
block or mislead), at most `max_bytes` of them, and a failure is one FileInputError
naming the file, never a traceback or a hang."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import LinkroofError

MAX_TEXT = 256 * 1024 * 1024  # a profile, a tool's output or a recording larger than this is not one


class FileInputError(LinkroofError):
    """A file the user named cannot be read as what it should be; the message names it."""


def regular_file(path: str | Path, what: str = "file") -> Path:
    """`path` as a Path, if it names an existing regular file."""
    p = Path(path)
    try:
        st = os.stat(p)
    except OSError as e:
        raise FileInputError(f"cannot read {p}: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise FileInputError(f"{p} is a folder, not a {what}")
    if not stat.S_ISREG(st.st_mode):
        raise FileInputError(f"{p} is not a regular file (a pipe, socket or device): a {what} is read from a file")
    return p


def read_bytes(path: str | Path, what: str = "file", max_bytes: int = MAX_TEXT) -> bytes:
    """The bytes of a regular file of at most `max_bytes`."""
    p = regular_file(path, what)
    try:
        size = p.stat().st_size
        if size > max_bytes:
            raise FileInputError(f"{p}: {size} bytes is over the {max_bytes}-byte limit for a {what}")
        with open(p, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as e:
        raise FileInputError(f"cannot read {p}: {e.strerror or e}") from None
    if len(data) > max_bytes:
        raise FileInputError(f"{p}: over the {max_bytes}-byte limit for a {what}")
    return data


def read_text(path: str | Path, what: str = "file", max_bytes: int = MAX_TEXT) -> str:
    """A regular file of at most `max_bytes` as UTF-8 text."""
    data = read_bytes(path, what, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise FileInputError(f"{path}: not a text file (a {what} is UTF-8 text)") from None
