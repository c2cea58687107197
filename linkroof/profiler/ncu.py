"""Each kernel's work counted by Nsight Compute: DRAM bytes read and written, FLOPs per
data type (tensor cores and CUDA cores), NVLink bytes, for `compare --counters`.

ncu runs a child process (profiler/ncu_child.py) that warms the user's call up, then
runs it between cudaProfilerStart and cudaProfilerStop: only those calls' kernels are
replayed and counted (`--profile-from-start off`). Clocks are left as they are
(`--clock-control none`); caches are flushed before each kernel (ncu's default), so a
kernel's DRAM bytes are what it moves from a cold L2. The raw page is read as CSV, in
base units (no extra module needed).

Where counting cannot happen, `count` says why and counts nothing: no ncu, counters
restricted to admins (ERR_NVGPUCTRPERM), several ranks (their kernels would need
lock-step replay), a child that failed or ran out of time.
"""

from __future__ import annotations

import csv
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field


# What linkroof reads, and ncu's metric for it. NVLink: the user data of the link's
# transmit and receive sides (the protocol's overhead is in nvltx__bytes, not here).
BASE_METRICS = {
    "dram_read_bytes": "dram__bytes_read.sum",
    "dram_write_bytes": "dram__bytes_write.sum",
    "gpu_time_s": "gpu__time_duration.sum",
    "nvlink_tx_bytes": "nvltx__bytes_data_user.sum",
    "nvlink_rx_bytes": "nvlrx__bytes_data_user.sum",
    # global atomics and reductions: the 32-byte sectors L1 sent to L2 for them (Hopper's
    # names, from `ncu --query-metrics --chip gh100`); a GPU without them leaves them out
    "atom_sectors": "l1tex__m_l1tex2xbar_write_sectors_mem_global_op_atom.sum",
    "red_sectors": "l1tex__m_l1tex2xbar_write_sectors_mem_global_op_red.sum",
}
# Why a kernel sits below its roof (asked for where this ncu has them; read per launch and
# averaged over the call weighted by each launch's time): DRAM and SM throughput as a
# share of their peaks, L2 hit rate, achieved occupancy, the share of each loaded /
# stored 32-byte sector the threads used (coalescing), and the tensor pipes' activity
WHY_METRICS = {
    "why:dram_pct": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "why:sm_pct": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "why:l2_hit_pct": "lts__t_sector_hit_rate.pct",
    "why:occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "why:ld_use_pct": "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
    "why:st_use_pct": "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct",
    "why:ld_sectors_per_req": "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio",
    "why:tensor_pct": "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "why:tensor_gmma_pct": "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
}
# CUDA-core FLOPs as Nsight Compute's roofline counts them: 2 x FMA + ADD + MUL, per thread
CORE_PREFIX = {"d": "fp64", "f": "fp32", "h": "fp16"}
CORE_METRIC = "smsp__sass_thread_inst_executed_op_{p}{op}_pred_on.sum"
# Tensor-core math ops by path and source type (Hopper: sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32);
# the ones this GPU has are read from `ncu --query-metrics`
TENSOR = re.compile(r"^sm__ops_path_tensor_op_([a-z]+)_src_([a-z0-9]+?)(?:_dst_[a-z0-9]+)?$")
TENSOR_TYPES = {"bf16": "bf16", "fp16": "fp16", "tf32": "tf32", "fp8": "fp8", "e4m3": "fp8", "e5m2": "fp8",
                "int8": "int8", "s8": "int8", "u8": "int8", "fp64": "fp64", "f64": "fp64", "fp4": "fp4"}
# One tensor-core "math op" is one FLOP (a multiply-add counts two): checked on one H200
# against 2*m*n*k of a bf16 GEMM (benchmarks/RESULTS.md, counters)
TENSOR_FLOPS_PER_OP = 1.0
# ncu's units (2025.3 prints base time as "ns"), to bytes, seconds and counts
UNITS = {"": 1.0, "byte": 1.0, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12,
         "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3,
         "second": 1.0, "inst": 1.0, "cycle": 1.0, "sector": 1.0, "request": 1.0}  # --print-units base: counts are counts
TIMEOUT_S = 900


class CountersUnavailable(RuntimeError):
    """ncu cannot count here; the message says why."""


@dataclass(frozen=True)
class KernelCount:
    """One profiled kernel launch: its mangled name, grid, block and counters
    (dram_read_bytes, dram_write_bytes, gpu_time_s, nvlink_*_bytes, flops:<dtype>)."""

    name: str
    grid: str = ""
    block: str = ""
    values: dict[str, float] = field(default_factory=dict)


@dataclass
class CounterReport:
    kernels: list[KernelCount]
    calls: int
    how: str
    metrics: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # what this GPU's ncu does not count
    log: str = ""

    def per_name(self) -> dict[str, dict[str, float]]:
        """Each kernel name's counters per call (its launches summed), with `launches`."""
        out: dict[str, dict[str, float]] = {}
        weight: dict[tuple[str, str], float] = {}
        for k in self.kernels:
            d = out.setdefault(k.name, {"launches": 0.0})
            d["launches"] += 1.0 / self.calls
            w = k.values.get("gpu_time_s", 0.0) or 1e-9
            for key, v in k.values.items():
                if key.startswith("why:"):  # a time-weighted mean, not a sum
                    d[key] = d.get(key, 0.0) + v * w
                    weight[(k.name, key)] = weight.get((k.name, key), 0.0) + w
                else:
                    d[key] = d.get(key, 0.0) + v / self.calls
        for (name, key), w in weight.items():
            out[name][key] /= w
        for d in out.values():
            d["dram_bytes"] = d.get("dram_read_bytes", 0.0) + d.get("dram_write_bytes", 0.0)
        return out

    def totals(self) -> dict[str, float]:
        """The call's counters per call, every kernel summed."""
        return self.sum_names(self.per_name())

    @staticmethod
    def sum_names(per_name: dict[str, dict[str, float]]) -> dict[str, float]:
        out: dict[str, float] = {}
        for d in per_name.values():
            for key, v in d.items():
                if not key.startswith("why:"):  # shares do not add up across kernels
                    out[key] = out.get(key, 0.0) + v
        return out


def find_ncu() -> str | None:
    """ncu from LINKROOF_NCU, the PATH, or CUDA's and Nsight Compute's usual homes."""
    given = os.environ.get("LINKROOF_NCU")
    if given:
        return given if os.path.isfile(given) and os.access(given, os.X_OK) else None
    found = shutil.which("ncu")
    if found:
        return found
    for pattern in ("/usr/local/cuda/bin/ncu", "/usr/local/cuda-*/bin/ncu", "/opt/nvidia/nsight-compute/*/ncu",
                    "/usr/local/NVIDIA-Nsight-Compute*/ncu"):
        for hit in sorted(glob.glob(pattern), reverse=True):
            if os.access(hit, os.X_OK):
                return hit
    return None


def metric_names(query_text: str) -> set[str]:
    """The metric base names `ncu --query-metrics` lists (its first column)."""
    return {m.group(1) for m in re.finditer(r"(?m)^\s*([a-z0-9]+__[a-z0-9_]+)\s", query_text)}


def wanted_metrics(available: set[str] | None) -> tuple[dict[str, str], list[str]]:
    """({our key: ncu metric}, keys this ncu lacks). With `available` None every base
    and CUDA-core metric is asked for, and no tensor path (they differ by GPU)."""
    want = dict(BASE_METRICS)
    want.update(WHY_METRICS)
    for p, dtype in CORE_PREFIX.items():
        for op in ("fma", "add", "mul"):
            want[f"core_{op}:{dtype}"] = CORE_METRIC.format(p=p, op=op)
    if available is not None:
        for name in sorted(available):
            m = TENSOR.match(name)
            if m and "sparsity" not in name and m.group(2) in TENSOR_TYPES:
                want[f"tensor:{m.group(1)}:{TENSOR_TYPES[m.group(2)]}"] = f"{name}.sum"
    missing = []
    if available is not None:
        for key, metric in list(want.items()):
            if metric.split(".", 1)[0] not in available:
                missing.append(key)
                del want[key]
    return want, missing


def _number(text: str) -> float | None:
    t = text.strip().replace(",", "")
    if not t or t.lower() in ("n/a", "nan", "-"):
        return None
    try:
        return float(t)
    except ValueError:
        return None


def parse_raw_csv(text: str, metrics: dict[str, str]) -> list[KernelCount]:
    """ncu's raw page as CSV (`--csv --page raw`): a header row (ID, Process ID, ...,
    Kernel Name, ..., the metrics), a row of units, then one row a kernel launch. ncu's
    own messages (==PROF==, ==WARNING==) and the program's output are skipped. FLOPs are
    made from the instruction and tensor-op counts."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    rows = list(csv.reader(lines))
    head = next((i for i, r in enumerate(rows) if "Kernel Name" in r and "ID" in r), None)
    if head is None:
        return []
    header = rows[head]
    col = {name: i for i, name in enumerate(header)}
    body = rows[head + 1:]
    units: list[str] = [""] * len(header)
    if body and (not body[0] or not body[0][col["ID"]].strip()):
        units, body = body[0] + [""] * (len(header) - len(body[0])), body[1:]
    out = []
    for r in body:
        if len(r) != len(header) or r[col["ID"]].strip() == "ID":
            continue
        raw: dict[str, float] = {}
        for key, metric in metrics.items():
            i = col.get(metric)
            if i is None:
                continue
            v = _number(r[i])
            if v is None:
                continue
            if key.startswith("why:"):  # percentages and ratios, read as printed
                raw[key] = v
                continue
            scale = UNITS.get(units[i].strip().lower())
            if scale is None:
                raise CountersUnavailable(f"ncu printed {metric} in an unknown unit {units[i]!r}")
            raw[key] = v * scale
        values = {k: v for k, v in raw.items() if not k.startswith(("core_", "tensor:"))}
        for dtype in CORE_PREFIX.values():
            parts = [raw.get(f"core_{op}:{dtype}") for op in ("fma", "add", "mul")]
            if any(p is not None for p in parts):
                f = 2 * (parts[0] or 0.0) + (parts[1] or 0.0) + (parts[2] or 0.0)
                if f:
                    values[f"flops:{dtype}"] = values.get(f"flops:{dtype}", 0.0) + f
        for key, v in raw.items():
            if key.startswith("tensor:") and v:
                dtype = key.rsplit(":", 1)[1]
                values[f"flops:{dtype}"] = values.get(f"flops:{dtype}", 0.0) + v * TENSOR_FLOPS_PER_OP
        out.append(KernelCount(r[col["Kernel Name"]], r[col["Grid Size"]] if "Grid Size" in col else "",
                               r[col["Block Size"]] if "Block Size" in col else "", values))
    return out


def read_page(text: str, calls: int = 1, how: str = "a recorded ncu page") -> CounterReport:
    """A raw page written before (compare --record-counters) read back: the metrics are
    the ones its header names that linkroof reads."""
    rows = list(csv.reader(ln for ln in text.splitlines() if ln.startswith('"')))
    header = next((r for r in rows if "Kernel Name" in r and "ID" in r), [])
    names = {c.split(".", 1)[0] for c in header if "__" in c}
    metrics, missing = wanted_metrics(names)
    return CounterReport(parse_raw_csv(text, metrics), calls, how, sorted(metrics.values()), missing, text)


def why_not(log: str) -> str | None:
    """What ncu's messages say stopped it, in words (None: nothing known)."""
    if "ERR_NVGPUCTRPERM" in log:
        return ("the GPU's performance counters are restricted to administrators on this machine "
                "(ncu: ERR_NVGPUCTRPERM); an administrator can allow them (NVreg_RestrictProfilingToAdminUsers=0) "
                "or run compare --counters as root")
    for pattern in (r"==ERROR==\s*(.+)", r"==PROF==\s*(Error.+)"):
        m = re.search(pattern, log)
        if m:
            return f"ncu: {m.group(1).strip()[:300]}"
    return None


def child_command(kernel: str, inputs: str, warmup: int, calls: int) -> list[str]:
    return [sys.executable, "-m", "linkroof.profiler.ncu_child", kernel, inputs, str(warmup), str(calls)]


def count(kernel: str, inputs: str, warmup: int = 3, calls: int = 1, ranks: int = 1,
          timeout_s: float = TIMEOUT_S, env: dict[str, str] | None = None) -> CounterReport:
    """Count the kernels of `calls` calls of `kernel` (after `warmup` calls) in a child
    process under ncu (in a session of its own, with `env` where given: score runs a
    candidate so, marked and in a clean environment). Raises CountersUnavailable with the
    reason where it cannot."""
    if ranks > 1:
        raise CountersUnavailable(f"not counted: the call runs on {ranks} ranks, and its kernels wait for each "
                                  "other, so ncu would have to replay every rank in lock-step (ncu "
                                  "--replay-mode application --target-processes all under one launcher); "
                                  "count one rank's kernels by running compare --counters on one GPU")
    ncu = find_ncu()
    if ncu is None:
        raise CountersUnavailable("not counted: Nsight Compute (ncu) was not found on the PATH, in /usr/local/cuda/bin "
                                  "or /opt/nvidia/nsight-compute (LINKROOF_NCU names it)")
    try:
        q = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True, timeout=120)
        available = metric_names(q.stdout) or None
    except (OSError, subprocess.TimeoutExpired):
        available = None
    metrics, missing = wanted_metrics(available)
    with tempfile.TemporaryDirectory(prefix="linkroof-ncu-") as tmp:
        log = os.path.join(tmp, "ncu.csv")
        cmd = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--print-kernel-base", "mangled",
               "--print-units", "base", "--csv", "--page", "raw", "--metrics", ",".join(sorted(set(metrics.values()))),
               "--log-file", log] + child_command(kernel, inputs, warmup, calls)
        try:
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=env,
                                 start_new_session=True)
        except subprocess.TimeoutExpired:
            raise CountersUnavailable(f"not counted: ncu ran past {timeout_s:.0f} s (each kernel is replayed once "
                                      "per group of counters)") from None
        text = open(log, encoding="utf-8", errors="replace").read() if os.path.exists(log) else ""
    whole = text + "\n" + run.stdout + "\n" + run.stderr
    kernels = parse_raw_csv(text, metrics)
    if not kernels:
        reason = why_not(whole) or (f"the child exited {run.returncode}: {run.stderr.strip()[-300:]}"
                                    if run.returncode else "ncu profiled no kernel between the profiler's start "
                                                           "and stop")
        raise CountersUnavailable(f"not counted: {reason}")
    how = (f"Nsight Compute ({os.path.basename(ncu)}), {calls} call(s) after {warmup} warm-up, each kernel replayed "
           "with caches flushed and clocks as they are (--clock-control none)")
    return CounterReport(kernels, calls, how, sorted(set(metrics.values())), missing, text)
