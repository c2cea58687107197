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


# ---- the write door: what linkroof writes is made by a serializer and parsed back first,
# at a path built from a safe slug and kept inside its folder.

class FileOutputError(LinkroofError):
    """A file linkroof was asked to write cannot be written as asked; the message names it."""


SLUG_MAX = 80


def slug(text: object, fallback: str = "x") -> str:
    """`text` as a file-name part: letters, digits, '.', '_' and '-' only (every other run
    of characters one '-'), no leading '.' or '-', at most SLUG_MAX characters; never
    empty, '.' or '..'. A GPU named '../x' or 'H200/SXM5' gives 'x' and 'H200-SXM5'."""
    out, dash = [], False
    for c in str(text):
        if c.isascii() and (c.isalnum() or c in "._-"):
            out.append(c)
            dash = False
        elif not dash:
            out.append("-")
            dash = True
    s = "".join(out).lstrip(".-")[:SLUG_MAX].rstrip(".-")
    return s or fallback


def path_inside(folder: str | Path, name: str) -> Path:
    """`folder/name`, if it names a file directly inside `folder`; FileOutputError otherwise
    (a name with a '/', '..' or an absolute path)."""
    base = Path(folder).resolve()
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        raise FileOutputError(f"{name!r} is not a file name inside {folder}")
    if (base / name).parent.resolve() != base:
        raise FileOutputError(f"{name!r} would be written outside {folder}")
    return base / name  # a link of that name is replaced by write_text, never followed


def write_text(path: str | Path, text: str, check: "object | None" = None) -> Path:
    """Write `text` to `path` as UTF-8, all or nothing (a temporary file beside it, then
    renamed over it: a link at `path` is replaced, never followed). `check(text)`, where
    given, parses the text back and raises if it is not what was meant; nothing is written
    then. A folder that is missing or read-only is one FileOutputError."""
    import tempfile

    p = Path(path)
    if check is not None:
        check(text)  # type: ignore[operator]
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise FileOutputError(f"cannot write {p}: its text is not UTF-8 ({e.reason})") from None
    try:
        fd, tmp = tempfile.mkstemp(dir=p.parent if str(p.parent) else ".", prefix="." + p.name[:60], suffix=".tmp")
    except OSError as e:
        raise FileOutputError(f"cannot write {p}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, p)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise FileOutputError(f"cannot write {p}: {e.strerror or e}") from None
    return p


def plain(text: object, newlines: bool = False) -> str:
    """`text` with no control characters (C0, DEL, C1; newlines kept only if asked, as
    '\\n'), no lone surrogates and no bidirectional overrides: what a comment, a plain-text
    file or an identifier may hold. Other characters are kept."""
    out = []
    for c in str(text).replace("\r\n", "\n"):
        o = ord(c)
        if c == "\n" and newlines:
            out.append(c)
        elif c == "\t":
            out.append(" ")
        elif o < 0x20 or 0x7F <= o < 0xA0 or 0xD800 <= o < 0xE000 or 0x202A <= o <= 0x202E or \
                0x2066 <= o <= 0x2069 or o in (0x2028, 0x2029, 0xFEFF):
            out.append("\ufffd" if 0xD800 <= o < 0xE000 else "?")
        else:
            out.append(c)
    return "".join(out)


FORMULA_START = ("=", "+", "@", "\t", "\r", "|")


def csv_cell(value: object) -> object:
    """A table cell as a spreadsheet will read it as text, not as a formula: a string that
    begins with '=', '+', '@', '|', a tab, or '-' not followed by a number gets a leading
    "'" (OWASP's CSV-injection advice). Numbers and other strings are kept."""
    if not isinstance(value, str) or not value:
        return value
    if value.startswith(FORMULA_START) or (value[0] == "-" and not _number(value)):
        return "'" + value
    return value


def _number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def csv_text(frame: "object") -> str:
    """A pandas frame as CSV with every text cell made safe (csv_cell) and control
    characters dropped; the text is parsed back (csv) to as many records as the frame has
    rows before it is returned."""
    import csv
    import io

    f = frame.copy()  # type: ignore[attr-defined]
    for col in f.columns:
        if getattr(f[col].dtype, "kind", "O") not in "biufcmM":  # text (object or pandas' str), not numbers
            f[col] = f[col].map(lambda v: csv_cell(plain(v, newlines=True)) if isinstance(v, str) else v)
    f.columns = [csv_cell(plain(c)) if isinstance(c, str) else c for c in f.columns]
    text = f.to_csv(index=False)
    rows = list(csv.reader(io.StringIO(text)))
    if len(rows) != len(f) + 1:
        raise FileOutputError(f"the CSV parses back as {len(rows) - 1} rows, not {len(f)}: not written")
    return text
