"""Recordings of everything a probe asked NVML and sysfs, and the sources that answer a probe.

A recording is one JSON file::

    {"format": "linkroof.probe-recording", "version": 1,
     "meta": {"recorded_at": ..., "hostname": ..., "linkroof_version": ..., "nvml_py_version": ...},
     "nvml": {"name|0": {"value": "NVIDIA H200"}, "numa_node_id|0": {"error": "NotSupported", ...}},
     "fs":   {"read:/sys/class/net/eth0/speed": "100000", "listdir:/sys/class/infiniband": null}}

Bundled recordings from real machines live in ``linkroof/data/<name>.probe.json``.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import LinkroofError
from .nvml import LiveBackend, Nvml, RecordingBackend, ReplayBackend
from .sysfs import LiveFs, RecordingFs, ReplayFs

FORMAT = "linkroof.probe-recording"
VERSION = 1
SUFFIX = ".probe.json"


class RecordingError(LinkroofError, ValueError):
    """A recording file is missing, malformed or of another kind; the message says where."""


@dataclass
class Source:
    """What a probe reads from: an NVML adapter and a filesystem, live or replayed."""

    nvml: Nvml
    fs: Any
    name: str  # "nvml" or "replay:<name>"

    def recording(self) -> dict[str, Any]:
        backend, fs = self.nvml.backend, self.fs
        if not isinstance(backend, RecordingBackend) or not isinstance(fs, RecordingFs):
            raise RuntimeError("this source was not opened with record=True")
        from .. import __version__
        from .environment import package_version

        return {
            "format": FORMAT, "version": VERSION,
            "meta": {
                "recorded_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                "hostname": fs.inner.read("/proc/sys/kernel/hostname") or "",
                "linkroof_version": __version__,
                "nvml_py_version": package_version("nvidia-ml-py"),
            },
            "nvml": backend.answers,
            "fs": fs.answers,
        }

    def close(self) -> None:
        self.nvml.close()


def live_source(record: bool = False) -> Source:
    """The real driver and /sys. Raises NvmlUnavailable with a one-line reason."""
    backend: Any = LiveBackend()
    fs: Any = LiveFs()
    if record:
        backend, fs = RecordingBackend(backend), RecordingFs(fs)
    return Source(Nvml(backend), fs, "nvml")


def replay_source(recording: dict[str, Any], name: str) -> Source:
    return Source(Nvml(ReplayBackend(recording["nvml"])), ReplayFs(recording["fs"]), f"replay:{name}")


def bundled_names() -> list[str]:
    data = resources.files("linkroof") / "data"
    return sorted(p.name[: -len(SUFFIX)] for p in data.iterdir() if p.name.endswith(SUFFIX))


def resolve(name_or_path: str) -> tuple[dict[str, Any], str]:
    """A bundled name ('h200x2') or a file path -> (validated recording, label)."""
    path = Path(name_or_path)
    if not path.exists():
        if os.sep in name_or_path or name_or_path.endswith(".json"):
            raise RecordingError(f"recording file not found: {name_or_path}")
        names = bundled_names()
        if name_or_path not in names:
            raise RecordingError(
                f"no bundled recording named {name_or_path!r} (bundled: {', '.join(names) or 'none'}; or give a file path)")
        data = resources.files("linkroof") / "data" / f"{name_or_path}{SUFFIX}"
        return validate(_parse(data.read_text(), name_or_path), name_or_path), name_or_path
    from ..files import FileInputError, read_text

    try:
        text = read_text(path, "recording")
    except FileInputError as e:
        raise RecordingError(str(e)) from None
    return validate(_parse(text, name_or_path), name_or_path), path.name


def _parse(text: str, label: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise RecordingError(f"recording {label}: not valid JSON (line {e.lineno}: {e.msg})") from None


def validate(data: Any, label: str) -> dict[str, Any]:
    """Check the shape of a recording; every problem names its place."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RecordingError(f"recording {label}: not a linkroof probe recording (no \"format\": \"{FORMAT}\")")
    if data.get("version") != VERSION:
        raise RecordingError(f"recording {label}: version {data.get('version')!r} not supported (expected {VERSION})")
    nvml, fs = data.get("nvml"), data.get("fs")
    if not isinstance(nvml, dict):
        raise RecordingError(f"recording {label}: \"nvml\" must be an object of answers")
    if not isinstance(fs, dict):
        raise RecordingError(f"recording {label}: \"fs\" must be an object of answers")
    for key, answer in nvml.items():
        if not isinstance(answer, dict) or not (("value" in answer) ^ ("error" in answer)):
            raise RecordingError(
                f"recording {label}: nvml[{key!r}] must be {{\"value\": ...}} or {{\"error\": ...}}")
    for key, answer in fs.items():
        op = key.split(":", 1)[0]
        ok = answer is None or (isinstance(answer, list) if op == "listdir" else isinstance(answer, str))
        if op not in ("listdir", "read", "realpath") or not ok:
            raise RecordingError(f"recording {label}: fs[{key!r}] is not a valid answer")
    if "device_count" not in nvml:
        raise RecordingError(f"recording {label}: no device_count answer; was the probe recorded completely?")
    return data


def save(recording: dict[str, Any], path: str | Path) -> None:
    """Write atomically: a crash leaves the old file or none, never half a file."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent or ".", prefix=path.name, suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a recording is meant to be shared
        with os.fdopen(fd, "w") as f:
            json.dump(recording, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
