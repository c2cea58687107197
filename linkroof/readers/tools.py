"""Importers for NVIDIA's own tools: nvbandwidth (text and -j JSON) and nccl-tests (text
and -J JSON). Their figures become `Measurement`s labelled with their source, so they
sit beside linkroof's own in tables, the roofline and the dashboard.

Traps handled here, once:
- nvbandwidth's JSON numbers are strings ("393.817", "N/A");
- its SUM line adds cells measured one after another: it is not a simultaneous total
  and is never imported as one;
- in GPU<->GPU titles the arrow points against the data flow: "GPU(row) -> GPU(column)"
  (read tests) moves data from the column GPU into the row GPU, which issues the copy;
  "GPU(row) <- GPU(column)" (write tests) moves data from the row GPU into the column;
- its local copy counts bytes copied (not read + write);
- nccl-tests' "Avg bus bandwidth" is a mean over the sizes run, kept only as a note.

A file is parsed completely before anything is returned: a malformed or truncated file
raises ImportFormatError naming the line, and nothing is half-imported.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import LinkroofError
from ..roofline.collectives import busbw_factor, canonical, canonical_dtype
from ..schema import BenchSpec, Environment, Fabric, Gpu, Host, Measurement, Mig, Pair, Topology, Unknown

MAX_IMPORT_BYTES = 64 * 1024 * 1024  # a tool's output over this is not one run of it
MAX_MATRIX = 256  # GPUs in an imported matrix: rows and cells beyond it are refused, never parsed
NVB_BUFFER = 512 << 20  # nvbandwidth's default buffer; its output does not print the size
GB = 1e9


class ImportFormatError(LinkroofError):
    """The file is not what the importer expects; the message names file and line."""


@dataclass
class Imported:
    tool: str
    measurements: list[Measurement]
    gpus: list[tuple[int, str, str]]  # (index, name, PCI bus id) as the tool printed them
    hostname: str = ""
    notes: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # test names this importer does not know


def _err(path: str, line: int | None, msg: str) -> ImportFormatError:
    return ImportFormatError(f"{path}" + (f", line {line}" if line else "") + f": {msg}")


# ------------------------------------------------------------------ nvbandwidth

# name -> (mechanism, kind)
def _nvb_kind(name: str) -> tuple[str, str] | None:
    mech = "sm" if name.endswith("_sm") else "ce"
    base = re.sub(r"_(ce|sm)$", "", name)
    kinds = {
        "host_to_device_memcpy": "h2d", "device_to_host_memcpy": "d2h",
        "host_to_device_bidirectional_memcpy": "h2d_bidir", "device_to_host_bidirectional_memcpy": "d2h_bidir",
        "device_to_device_memcpy_read": "p2p_read", "device_to_device_memcpy_write": "p2p_write",
        "device_to_device_bidirectional_memcpy_read": "bidir_read",
        "device_to_device_bidirectional_memcpy_write": "bidir_write",
        "all_to_host_memcpy": "d2h_all", "all_to_host_bidirectional_memcpy": "d2h_all_bidir",
        "host_to_all_memcpy": "h2d_all", "host_to_all_bidirectional_memcpy": "h2d_all_bidir",
        "all_to_one_write": "all_to_one_write", "all_to_one_read": "all_to_one_read",
        "one_to_all_write": "one_to_all_write", "one_to_all_read": "one_to_all_read",
        "host_device_latency": "latency_host", "device_to_device_latency": "latency_peer",
        "device_local_copy": "local",
    }
    if name == "device_local_copy":
        return "ce", "local"
    kind = kinds.get(base)
    return (mech, kind) if kind else None


def _number(text: str, path: str, line: int | None, where: str) -> float:
    """A figure of a tool's output: a finite number >= 0, else an error naming where."""
    try:
        value = float(text)
    except ValueError:
        raise _err(path, line, f"{where}: not a number: {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise _err(path, line, f"{where}: {text!r} is not a figure (a finite number >= 0)")
    return value


def _cell(value: Any, path: str, where: str, line: int | None = None) -> float | None:
    text = str(value).strip()
    if text in ("N/A", "", "-"):
        return None
    return _number(text, path, line, where)


def _nvb_measurements(path: str, name: str, matrix: list[list[float | None]], passed: bool,
                      line: int | None) -> list[Measurement] | None:
    """The test's figures; None for a test name linkroof does not know."""
    kind_info = _nvb_kind(name)
    if kind_info is None:
        return None
    mech, kind = kind_info
    # nvbandwidth checks no data: "Passed" says the test ran. Its figures count as printed, labelled.
    verified = False
    verification = ("not checked by nvbandwidth (it verifies no data; the test reported Passed)" if passed
                    else "nvbandwidth did not report Passed (and it verifies no data)")
    out: list[Measurement] = []

    def add(mname: str, pattern: str, devices: tuple[int, ...], value: float, latency: bool = False,
            convention: str = "bytes copied (as nvbandwidth counts)", **params: Any) -> None:
        reported = {"median_s": value * 1e-9} if latency else {"bandwidth_bytes_per_s": value * GB}
        spec = BenchSpec(mname, "latency" if latency else mech, pattern, devices, 0 if latency else NVB_BUFFER, 0,
                         params={"testcase": name, "buffer_size": "nvbandwidth default (512 MiB, not printed)",
                                 **params})
        out.append(Measurement(spec=spec, times_s=(), bytes_per_rep=0 if latency else NVB_BUFFER,
                               bytes_convention="seconds per dependent load" if latency else convention,
                               verified=verified, verification=verification, source="nvbandwidth",
                               reported=reported))

    n = max((len(r) for r in matrix), default=0)
    if kind in ("p2p_read", "p2p_write", "latency_peer", "bidir_read", "bidir_write"):
        blocks = [matrix]
        if kind.startswith("bidir"):
            if len(matrix) != 3 * n:
                raise _err(path, line, f"{name}: expected three {n}x{n} matrices (two directions and the total), "
                                       f"got {len(matrix)} rows")
            blocks = [matrix[k * n:(k + 1) * n] for k in range(3)]
        for k, block in enumerate(blocks):
            for i, row in enumerate(block):
                for j, v in enumerate(row):
                    if v is None or i == j:
                        continue
                    if kind == "latency_peer":
                        add("pointer_chase_latency", "peer", (i, j), v, latency=True)
                    elif kind == "p2p_read":  # row reads the column's memory: data column -> row
                        add("p2p_read_bandwidth", "p2p_read", (j, i), v, issuer=i)
                    elif kind == "p2p_write":  # row writes into the column: data row -> column
                        add("p2p_write_bandwidth", "p2p_write", (i, j), v, issuer=i)
                    else:
                        # Three matrices: each test cell (row i, column j) ran both directions at
                        # once; the first matrix holds the direction the title's arrow names
                        # (read: data j -> i; write: i -> j), the second the other, the third the sum.
                        mode = kind.split("_")[1]
                        first = (j, i) if mode == "read" else (i, j)
                        if k == 2:
                            add(f"p2p_bidir_{mode}_total_bandwidth", "bidir", (i, j), v,
                                convention="sum of both directions measured at the same time (nvbandwidth)",
                                mode=mode, parts=2, cell=f"{i},{j}")
                        else:
                            add(f"p2p_bidir_{mode}_bandwidth", "bidir", first if k == 0 else first[::-1], v, mode=mode,
                                cell=f"{i},{j}")
        return out
    # single-row matrices: the row is the CPU (or nothing), the columns are GPUs
    row = matrix[0] if matrix else []
    for j, v in enumerate(row):
        if v is None:
            continue
        if kind == "latency_host":
            add("pointer_chase_latency", "host", (j,), v, latency=True)
        elif kind == "local":
            add("local_copy_bandwidth", "local", (j,), v)
        elif kind in ("h2d", "d2h"):
            add(f"{kind}_bandwidth", kind, (j,), v, host_memory="pinned")
        elif kind in ("h2d_bidir", "d2h_bidir"):
            add("host_bidir_bandwidth", "bidir_host", (j,), v, host_memory="pinned", direction=kind[:3])
        elif kind in ("h2d_all", "d2h_all", "h2d_all_bidir", "d2h_all_bidir"):
            d = kind[:3]
            add(f"{d}_all_gpus_bandwidth", f"{d}_all", (j,), v, host_memory="pinned",
                bidirectional=kind.endswith("bidir"))
        else:  # all_to_one_*, one_to_all_*: the column GPU's total in or out
            pattern, mode = kind.rsplit("_", 1)
            add(f"{pattern}_total_bandwidth", pattern, (j,), v, mode=mode, parts="all other GPUs")
    return out


def _shape_checked(parse: Any, text: str, path: str, what: str) -> Imported:
    """A JSON output whose fields are not of the shape the tool writes (a list where an
    object belongs, a number for a name) is refused in one line, whichever field it is."""
    try:
        return parse(text, path)
    except ImportFormatError:
        raise
    except (TypeError, AttributeError, KeyError, ValueError, IndexError, OverflowError) as e:
        raise _err(path, None, f"not {what} (a field of the wrong shape: {type(e).__name__}: {str(e)[:120]})") from None


def parse_nvbandwidth(text: str, path: str = "<nvbandwidth>") -> Imported:
    stripped = text.lstrip()
    if stripped.startswith("{"):
        return _shape_checked(_parse_nvb_json, text, path, "nvbandwidth -j output")
    return _parse_nvb_text(text, path)


def _parse_nvb_json(text: str, path: str) -> Imported:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise _err(path, e.lineno, f"not valid JSON ({e.msg}); truncated?") from None
    nvb = doc.get("nvbandwidth") if isinstance(doc, dict) else None
    if not isinstance(nvb, dict) or not isinstance(nvb.get("testcases"), list):
        raise _err(path, None, "not nvbandwidth -j output (no nvbandwidth.testcases)")
    gpus = []
    for entry in nvb.get("GPU Device list", []):
        m = re.match(r"\s*(\d+):\s*(.*?)\s*\(([0-9A-Fa-f:.]+)\)", str(entry))
        if m:
            gpus.append((int(m.group(1)), m.group(2), m.group(3)))
    out: list[Measurement] = []
    skipped: list[str] = []
    for k, case in enumerate(nvb["testcases"]):
        name = case.get("name")
        if not isinstance(name, str):
            raise _err(path, None, f"testcases[{k}]: no name")
        matrix_raw = case.get("bandwidth_matrix", case.get("latency_matrix"))
        if not isinstance(matrix_raw, list) or not all(isinstance(r, list) for r in matrix_raw):
            if case.get("status") != "Passed":
                continue  # a waived or failed test case carries no matrix
            raise _err(path, None, f"testcases[{k}] ({name}): no matrix")
        if len(matrix_raw) > 3 * MAX_MATRIX or any(len(r) > MAX_MATRIX for r in matrix_raw):
            raise _err(path, None, f"testcases[{k}] ({name}): a matrix of more than {MAX_MATRIX} GPUs is not "
                                   "nvbandwidth output of one machine")
        matrix = [[_cell(v, path, f"testcases[{k}] ({name})") for v in r] for r in matrix_raw]
        got = _nvb_measurements(path, name, matrix, case.get("status") == "Passed", None)
        if got is None:
            skipped.append(name)
        else:
            out += got
    return Imported("nvbandwidth", out, gpus, skipped=skipped,
                    notes=[f"nvbandwidth {nvb.get('version', '?')} (JSON); SUM values not imported: they add "
                           "cells measured one after another"])


def _parse_nvb_text(text: str, path: str) -> Imported:
    lines = text.splitlines()
    if not any(line.startswith("nvbandwidth Version") for line in lines[:5]):
        raise _err(path, 1, "not nvbandwidth output (no 'nvbandwidth Version' header)")
    gpus = []
    out: list[Measurement] = []
    skipped: list[str] = []
    current: str | None = None
    start = 0
    matrix: list[list[float | None]] = []
    for no, line in enumerate(lines, 1):
        m = re.match(r"Device (\d+): (.*?) \(([0-9A-Fa-f:.]+)\)", line)
        if m and current is None:
            gpus.append((int(m.group(1)), m.group(2), m.group(3)))
            continue
        m = re.match(r"Running (\w+)\.", line)
        if m:
            if current is not None:
                raise _err(path, no, f"{current} has no SUM line before the next test (truncated?)")
            current, start, matrix = m.group(1), no, []
            continue
        if current is None:
            continue
        # One SUM line per test; nvbandwidth 0.8 prints one per matrix of a bidirectional
        # test (SUM <test>_read1, _read2, then _total): the test ends with its total.
        m = re.match(rf"SUM {re.escape(current)}(_\w+)? [\d.]+\s*$", line)
        if m:
            if not matrix:
                raise _err(path, no, f"{current}: no matrix rows before SUM")
            if m.group(1) and m.group(1) != "_total":
                continue
            got = _nvb_measurements(path, current, matrix, True, start)
            if got is None:
                skipped.append(current)
            else:
                out += got
            current = None
            continue
        cells = line.split()
        if cells and re.fullmatch(r"\d+", cells[0]) and len(cells) > 1 and not all(re.fullmatch(r"\d+", c) for c in cells):
            if len(cells) > MAX_MATRIX + 1 or len(matrix) >= 3 * MAX_MATRIX:
                raise _err(path, no, f"{current}: a matrix of more than {MAX_MATRIX} GPUs is not nvbandwidth "
                                     "output of one machine")
            matrix.append([_cell(c, path, f"{current}: matrix row {cells[0]}", no) for c in cells[1:]])
    if current is not None:
        raise _err(path, len(lines), f"{current} ends without its SUM line (truncated?)")
    if not out and not skipped:
        raise _err(path, None, "no test results found")
    return Imported("nvbandwidth", out, gpus, skipped=skipped,
                    notes=["SUM lines not imported: they add cells measured one after another"])


# ------------------------------------------------------------------ nccl-tests

def _nccl_measurement(coll: str, ranks: int, size: int, dtype: str, redop: str, root: str, in_place: bool,
                      time_us: float, algbw: float, busbw: float, wrong: str, iters: int,
                      graph: int = 0, count: int | None = None) -> Measurement:
    """One nccl-tests figure. With -G (graph launches) its time is the GPU's per call
    (linkroof's "device" timing); without, the host's launch is in it ("host_launch").
    The bandwidths are size / time and that times the bus factor, as nccl-tests computes
    them before rounding to two decimals (an 8 B row prints 0.00 GB/s); the printed
    figures and the count column are kept beside them as the file gave them."""
    checked = wrong not in ("N/A", "nan")
    ok = checked and float(wrong) == 0  # the parsers let through only "N/A" or a count
    coll, dtype = canonical(coll), canonical_dtype(dtype)  # nccl-tests' alltoall and float: all_to_all and fp32
    spec = BenchSpec(f"nccl_{coll}", "nccl", coll, tuple(range(ranks)), size, iters,
                     params={"dtype": dtype, "redop": redop, "root": root, "in_place": in_place,
                             "timing": "device" if graph else "host_launch"})
    factor = busbw_factor(coll, ranks)
    seconds = time_us * 1e-6
    reported = {"median_s": seconds, "bandwidth_bytes_per_s": size / seconds,
                "busbw_bytes_per_s": size / seconds * factor,
                "printed_algbw_bytes_per_s": algbw * GB, "printed_busbw_bytes_per_s": busbw * GB}
    if count is not None:
        reported["count"] = float(count)
    return Measurement(spec=spec, times_s=(), bytes_per_rep=size,
                       bytes_convention="nccl-tests: algbw = size / time, busbw = algbw x factor",
                       verified=ok, verification=(f"nccl-tests #wrong = {wrong}" if checked
                                                  else "not checked by nccl-tests (#wrong N/A)"),
                       busbw_factor=factor, source="nccl-tests", reported=reported)


def _inconsistent(coll: str, ranks: int, size: int, time_us: float, algbw: float, busbw: float,
                  json_digits: bool = False) -> str | None:
    """What is wrong when a row's columns do not agree as nccl-tests computes them
    (algbw = size / time, busbw = algbw x factor), within its printing: two decimals of
    the time and the bandwidths in text, six in -J JSON. None when they agree."""
    if not time_us > 0:
        return None
    factor = busbw_factor(canonical(coll), ranks)
    alg = size / (time_us * 1e-6) / GB
    slack = (5e-7 if json_digits else 0.006) + alg * ((5e-7 if json_digits else 0.005) / time_us) + 1e-3 * alg
    if abs(algbw - alg) > slack:
        return f"algbw {algbw:g} GB/s is not size / time ({alg:.4g} GB/s)"
    if abs(busbw - algbw * factor) > slack * max(1.0, factor) + (1e-6 if json_digits else 0.011):
        return f"busbw {busbw:g} GB/s is not algbw x {factor:g} ({algbw * factor:.4g} GB/s)"
    return None


def parse_nccl_tests(text: str, path: str = "<nccl-tests>") -> Imported:
    if text.lstrip().startswith("{"):
        return _shape_checked(_parse_nccl_json, text, path, "nccl-tests -J output")
    lines = text.splitlines()
    coll = None
    ranks = 0
    iters = 0
    graph = 0
    gpus = []
    hostname = ""
    out: list[Measurement] = []
    notes = []
    concluded = False
    skipped_rows = 0
    for no, line in enumerate(lines, 1):
        m = re.search(r"Collective test starting: (\w+?)_perf", line)
        if m:
            if coll is not None and not concluded:
                raise _err(path, no, f"{coll}_perf ends before '# Collective test concluded' (truncated?)")
            coll, ranks, concluded = m.group(1), 0, False  # each test lists its ranks again
            continue
        m = re.search(r"nThread (\d+) nGpus (\d+)", line)
        if m:
            it = re.search(r"(?<![a-z] )iters: (\d+)", line)  # not "warmup iters:" nor "agg iters:"
            iters = int(it.group(1)) if it else 0
            g = re.search(r"graph: (\d+)", line)
            graph = int(g.group(1)) if g else 0
            continue
        m = re.match(r"#\s+Rank\s+(\d+) .* on\s+(\S+) device\s+(\d+) \[([0-9a-fA-F:.]+)\]\s+(.*)$", line)
        if m:
            ranks += 1
            hostname = m.group(2)
            gpus.append((int(m.group(3)), m.group(5).strip(), m.group(4)))
            continue
        m = re.search(r"Avg bus bandwidth\s*:\s*([\d.]+)", line)
        if m:
            notes.append(f"nccl-tests 'Avg bus bandwidth' {m.group(1)} GB/s is a mean over the sizes run; not imported")
            continue
        if "Collective test concluded" in line:
            concluded = True
            continue
        if line.startswith("#") or not line.strip():
            continue
        if coll is None:
            raise _err(path, no, "data before '# Collective test starting: <name>_perf' (not nccl-tests output?)")
        cells = line.split()
        if len(cells) != 13:
            raise _err(path, no, f"expected 13 columns (size count type redop root, then time algbw busbw #wrong "
                                 f"out-of-place and in-place), got {len(cells)}")
        try:
            size, count = int(cells[0]), int(cells[1])
        except ValueError:
            raise _err(path, no, f"unreadable row {line.strip()!r}") from None
        if size < 0 or count < 0:
            raise _err(path, no, f"a negative size or count ({size} B, {count} elements)")
        for c, where in ((cells[8], "out-of-place #wrong"), (cells[12], "in-place #wrong")):
            if c != "N/A" and not c.isdigit():
                raise _err(path, no, f"{where}: {c!r} is neither a count nor N/A")
        names = ("out-of-place time", "out-of-place algbw", "out-of-place busbw", "in-place time", "in-place algbw",
                 "in-place busbw")
        values = [_number(c, path, no, what) for c, what in zip(
            (cells[5], cells[6], cells[7], cells[9], cells[10], cells[11]), names)]
        if size == 0:
            skipped_rows += 1  # nothing moved: no figure (nccl-tests prints the empty launch's time)
            continue
        if not (values[0] > 0 and values[3] > 0):
            raise _err(path, no, f"a time of 0 us for {size} B: not a measurement")
        n = max(ranks, 1)
        for t_us, algbw, busbw, where in ((values[0], values[1], values[2], "out of place"),
                                          (values[3], values[4], values[5], "in place")):
            problem = _inconsistent(coll, n, size, t_us, algbw, busbw)
            if problem:
                raise _err(path, no, f"{where}: {problem} (columns swapped, or not nccl-tests' own figures?)")
        out.append(_nccl_measurement(coll, n, size, cells[2], cells[3], cells[4], False, values[0], values[1],
                                     values[2], cells[8], iters, graph, count))
        out.append(_nccl_measurement(coll, n, size, cells[2], cells[3], cells[4], True, values[3], values[4],
                                     values[5], cells[12], iters, graph, count))
    if coll is None:
        raise _err(path, 1, "not nccl-tests output (no '# Collective test starting' line)")
    if not concluded:
        raise _err(path, len(lines), "ends before '# Collective test concluded' (truncated?)")
    if not out:
        raise _err(path, None, "no result rows")
    if skipped_rows:
        notes.append(f"{skipped_rows} rows of size 0 not imported (nothing moved)")
    return Imported("nccl-tests", out, gpus, hostname=hostname, notes=notes)


def _parse_nccl_json(text: str, path: str) -> Imported:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise _err(path, e.lineno, f"not valid JSON ({e.msg}); truncated?") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list) or "config" not in doc:
        raise _err(path, None, "not nccl-tests -J output (no config / results)")
    args = doc.get("args") or [""]
    m = re.search(r"(\w+?)_perf", str(args[0]))
    if not m:
        raise _err(path, None, f"cannot tell the collective from args[0] {args[0]!r}")
    coll = m.group(1)
    cfg = doc["config"]
    devices = cfg.get("devices") or []
    try:
        threads, ngpus, iters = int(cfg.get("nthreads", 1)), int(cfg.get("ngpus", 1)), int(cfg.get("iterations", 0))
    except (TypeError, ValueError):
        raise _err(path, None, "config: nthreads, ngpus and iterations must be whole numbers") from None
    if not (1 <= threads <= MAX_MATRIX and 1 <= ngpus <= MAX_MATRIX and 0 <= iters) or len(devices) > MAX_MATRIX:
        raise _err(path, None, f"config: nthreads {threads}, ngpus {ngpus}, {len(devices)} devices, iterations "
                               f"{iters}: not a run of nccl-tests (each 1 to {MAX_MATRIX}, iterations >= 0)")
    ranks = max(len(devices), threads * ngpus)
    if ranks > MAX_MATRIX:
        raise _err(path, None, f"config: {ranks} ranks, more than the {MAX_MATRIX} linkroof imports")
    gpus = [(int(d.get("device", i)), str(d.get("device_info", "")), str(d.get("device_hex", ""))) for i, d in
            enumerate(devices)]
    # -J lists one entry per process; with -g N a process drives N GPUs (as the text output lists them)
    listed = {g[0] for g in gpus}
    gpus += [(i, gpus[0][1] if gpus else "", "") for i in range(ranks) if i not in listed]
    out = []
    skipped_rows = 0
    for k, r in enumerate(doc["results"]):
        try:
            if int(r["size"]) == 0:
                skipped_rows += 1
                continue
            for in_place, key in ((False, "out_of_place"), (True, "in_place")):
                part = r[key]
                wrong = part.get("nwrong")
                if wrong is not None and (isinstance(wrong, bool) or not isinstance(wrong, (int, float))
                                          or (wrong == wrong and not 0 <= wrong < 1e18)):
                    raise ValueError(f"{key} nwrong {wrong!r} is neither a count nor null")
                t_us, algbw, busbw = (float(part[k]) for k in ("time", "alg_bw", "bus_bw"))
                if not (math.isfinite(t_us) and t_us > 0):
                    raise ValueError(f"{key} time {part['time']!r} is not a positive number of microseconds")
                problem = _inconsistent(coll, ranks, int(r["size"]), t_us, algbw, busbw, json_digits=True)
                if problem:
                    raise ValueError(f"{key}: {problem}")
                out.append(_nccl_measurement(coll, ranks, int(r["size"]), str(r["type"]), str(r["redop"]),
                                             str(r["root"]).strip(), in_place, float(part["time"]),
                                             float(part["alg_bw"]), float(part["bus_bw"]),
                                             "N/A" if wrong is None or wrong != wrong else str(wrong), iters,
                                             int(cfg.get("graph", 0) or 0),
                                             int(r["count"]) if "count" in r else None))
        except (KeyError, TypeError, ValueError) as e:
            raise _err(path, None, f"results[{k}]: missing or bad field ({e})") from None
    host = devices[0].get("hostname", "") if devices and isinstance(devices[0], dict) else ""
    env = doc.get("env", [])
    notes = [f"nccl-tests JSON, NCCL {doc.get('nccl_version', '?')}, env: {', '.join(map(str, env)) if isinstance(env, list) else env}"]
    if skipped_rows:
        notes.append(f"{skipped_rows} results of size 0 not imported (nothing moved)")
    return Imported("nccl-tests", out, gpus, hostname=host, notes=notes)


IMPORTERS = {"nvbandwidth": parse_nvbandwidth, "nccl-tests": parse_nccl_tests}


def import_file(tool: str, path: str | Path) -> Imported:
    if tool not in IMPORTERS:
        raise ImportFormatError(f"unknown tool {tool!r} (one of {', '.join(IMPORTERS)})")
    from ..files import read_text

    p = Path(path)
    return IMPORTERS[tool](read_text(p, f"{tool} output", MAX_IMPORT_BYTES), str(p))


def bare_topology(imported: Imported, label: str) -> Topology:
    """A topology holding only what the tool printed (GPU names and bus ids); how each
    pair of GPUs is linked is unknown (every ordered pair is there, with unknown fields)."""
    none = Unknown(f"not in {imported.tool} output")
    gpus = tuple(
        Gpu(index=i, uuid=none, name=name or none, pci_bus_id=bus or none, architecture=none, compute_capability=none,
            sm_count=none, memory_total_bytes=none, memory_bus_width_bits=none, max_sm_clock_mhz=none,
            max_memory_clock_mhz=none, pcie_gen_current=none, pcie_gen_max=none, pcie_width_current=none,
            pcie_width_max=none, cpu_affinity=none, numa_affinity=none, gpu_numa_id=none,
            mig=Mig(none, none, none), fabric=Fabric(none, none, none))
        for i, name, bus in sorted(set(imported.gpus)))
    import datetime as _dt

    pairs = tuple(Pair(a=a.index, b=b.index, pcie_level=none, nvlink_count=none, nvlink_via=none, p2p_read=none,
                       p2p_write=none, p2p_atomics=none, p2p_nvlink=none, p2p_pcie=none)
                  for a in gpus for b in gpus if a.index != b.index)
    return Topology(host=Host(hostname=imported.hostname or "unknown", cpu_model=none), driver_version=none,
                    nvml_version=none, cuda_driver_version=none, gpus=gpus, pairs=pairs, nics=(), ceilings=(),
                    source=f"import:{imported.tool}:{label}",
                    probed_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))


def imported_environment(imported: Imported) -> Environment:
    import datetime as _dt
    import platform

    from importlib.metadata import PackageNotFoundError, version

    try:  # the package's own version, read without importing the package root (it imports profiler/)
        __version__ = version("linkroof")
    except PackageNotFoundError:
        __version__ = "unknown"
    none = Unknown(f"not in {imported.tool} output")
    return Environment(linkroof_version=__version__, hostname=imported.hostname or "unknown",
                       time=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), driver_version=none,
                       cuda_driver_version=none, cuda_runtime_version=none, nccl_version=none, cupy_version=none,
                       nvml_py_version=none, python_version=platform.python_version())
