"""Memory and CPU time of `linkroof trace FILE --json` on a 1 GB trace, beside the limits
of the stream (issue 42, item 7: under 512 MB peak, CPU at or under a raw ijson pass).

Writes, in a temporary folder, a Kineto trace laid out as torch's profiler writes it
(output_json.cpp: one event per block of lines, the args indented below): per step, 24
layers of aten ops (linear > t > transpose > as_strided, addmm, a GELU, a copy_), each
kernel with its runtime launch and its flow events (ac2g), a cudaStreamSynchronize, a
memcpy and a memset, the host's ProfilerStep and the GPU's annotation of it, and an
all-reduce (record_param_comms over c10d::allreduce_ over nccl:all_reduce, its NCCL
kernel carrying the collective's args and Seq); plain and gzipped (level 6). Then each
pass over the same file, each in a fresh process:

- inflate: the file's bytes read (gzip: inflated by Python's zlib) and dropped;
- ijson tokens: ijson's C tokenizer (yajl2_c basic_parse), no event built;
- ijson items: ijson's C backend building every event of traceEvents (`items`), the
  "raw ijson stream" issue 42 measures against;
- decode_only: linkroof's event decoding alone (the standard library's C decoder over
  batches of 64 KiB, `_events` with a collector that drops each event);
- orjson_batches (with --only; ORJSON_PYTHON names a Python that has orjson): orjson, a
  fast C tokenizer and builder, over the same 64 KiB batches: the limit of decoding
  every event;
- read_trace: linkroof's reader alone (`linkroof.readers.traces.read_trace`), no analysis;
- linkroof trace: `python -m linkroof trace FILE --json --no-save --profile reference`,
  its JSON to /dev/null;
- json_whole and json_streamed (with --only): what `linkroof trace --json` does (the
  reading, analyze against the reference profile, TraceReport.to_dict), its JSON made
  whole with json.dumps(indent=1) as the command makes it, or written as it is encoded
  with json.dump(indent=1): the same text, without holding it all in pieces at once.

`--code DIR` runs the linkroof passes on the linkroof of another checkout (DIR holding
its linkroof/, e.g. an old commit's `git archive`), so that before and after are
measured on one run of a shared machine; the lines say which.

For each: wall, CPU (user + system of the process and every child it waited for, from
wait4), the process's peak RSS (ru_maxrss), and the process tree's peak RSS and PSS
polled every 20 ms from /proc (a forked worker's shared pages count once in PSS).

With `--line-gb N`, also a file whose first line is N GB with no structure (a key that
never ends), plain and gzipped: `linkroof trace` on it, its peak memory (item 8's door).

With `--shape dense`, the file is trace_speed.py's instead (40 GEMMs and an all-reduce a
step, one event a line, no flows or host-only ops: the most GPU activities a byte).

    python benchmarks/trace_memory.py [SIZE_MB] [--shape kineto|dense] [--forms plain,gz] [--keep DIR]
                                      [--only inflate,ijson_tokens,ijson_items,read_trace,linkroof] [--line-gb 5]
                                      [--code DIR]
"""

from __future__ import annotations

import gzip
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
T0 = 1_733_300_000_000.0  # microseconds, as Kineto writes absolute times


def _event(ph: str, cat: str, name: str, pid: int, tid: int, ts: float, dur: float | None, args: str | None) -> str:
    head = f'  {{\n    "ph": "{ph}", "cat": "{cat}", "name": "{name}", "pid": {pid}, "tid": {tid},\n    "ts": {ts:.3f}'
    if dur is not None:
        head += f', "dur": {dur:.3f}'
    if args is not None:
        head += f',\n    "args": {{\n{args}\n    }}'
    return head + "\n  }"


def _flow(ph: str, corr: int, pid: int, tid: int, ts: float) -> str:
    return (f'  {{\n    "ph": "{ph}", "id": {corr}, "pid": {pid}, "tid": {tid}, "ts": {ts:.3f},\n'
            f'    "cat": "ac2g", "name": "ac2g"' + (', "bp": "e"' if ph == "f" else "") + "\n  }")


def generate(path: Path, target_bytes: int, rank: int = 0, world: int = 8, layers: int = 24) -> dict:
    """Write steps until the file reaches `target_bytes`; returns what was written."""
    pid, tid = 4242, 4242
    meta = {"schemaVersion": 1,
            "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150_000_000_000,
                                  "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024,
                                  "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 32,
                                  "sharedMemPerBlock": 49152, "numSms": 132}],
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": world, "pg_count": 1,
                                "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config":
                                               "cuda:nccl", "pg_size": world, "ranks": list(range(world))}],
                                "nccl_version": "2.21.5"},
            "record_shapes": 1, "with_stack": 0}
    corr, ext, t, steps, kernels, events = 0, 0, T0, 0, 0, 0
    random.seed(42)
    jitter = [round(random.uniform(0.5, 3.0), 3) for _ in range(4096)]  # gaps on the GPU: not all alike
    gemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off"
    gelu = "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, " \
           "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda(c10::BFloat16)#1}, " \
           "at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, " \
           "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda(c10::BFloat16)#1}, " \
           "at::detail::Array<char*, 2>)"
    copy = "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::" \
           "direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::" \
           "{lambda()#7}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, " \
           "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::" \
           "{lambda()#7}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1}>(int, " \
           "at::native::gpu_kernel_impl_nocast<...>)"

    def kernel_args(c: int, e: int, grid: tuple, block: tuple, extra: str = "") -> str:
        return (f'      "External id": {e},\n      "queued": 0, "device": 0, "context": 1,\n'
                f'      "stream": 7, "correlation": {c},\n      "registers per thread": 168,\n'
                f'      "shared memory": 213504,\n      "blocks per SM": 0.969697,\n      "warps per SM": 11.636364,\n'
                f'      "grid": [{grid[0]}, {grid[1]}, {grid[2]}],\n      "block": [{block[0]}, {block[1]}, {block[2]}],\n'
                f'      "est. achieved occupancy %": 18{extra}')

    with open(path, "w") as out:
        head = json.dumps(meta, indent=2)
        out.write(head[:-2] + ',\n  "traceEvents": [\n')
        sep = ""
        while out.tell() < target_bytes:
            evs = []
            step_ts, gpu_t = t, t + 40.0
            for layer in range(layers):
                base = t + layer * 60.0
                ext += 1
                e_lin = ext
                evs.append(_event("X", "cpu_op", "aten::linear", pid, tid, base, 30.5,
                                  f'      "External id": {e_lin},"Record function id": 0, "Ev Idx": {e_lin},\n'
                                  '      "Input Dims": [[8, 2048, 4096], [4096, 4096], [4096]], "Input type": '
                                  '["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"], "Input Strides": '
                                  '[[8388608, 4096, 1], [4096, 1], [1]], "Concrete Inputs": ["", "", ""]'))
                for k, name in enumerate(("aten::t", "aten::transpose", "aten::as_strided")):
                    ext += 1
                    evs.append(_event("X", "cpu_op", name, pid, tid, base + 1 + k, 1.2,
                                      f'      "External id": {ext},"Record function id": 0, "Ev Idx": {ext}'))
                for name, kname, dur, grid, block in (("aten::addmm", gemm, 38.0, (128, 1, 1), (384, 1, 1)),
                                                      ("aten::gelu", gelu, 6.0, (16384, 1, 1), (128, 1, 1)),
                                                      ("aten::copy_", copy, 4.0, (8192, 1, 1), (128, 1, 1))):
                    ext += 1
                    corr += 1
                    cpu_ts = base + (5 if name == "aten::addmm" else 20 if name == "aten::gelu" else 25)
                    evs.append(_event("X", "cpu_op", name, pid, tid, cpu_ts, 4.5,
                                      f'      "External id": {ext},"Record function id": 0, "Ev Idx": {ext},\n'
                                      '      "Input Dims": [[4096], [16384, 4096], [4096, 4096], [], []], '
                                      '"Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", '
                                      '"Scalar"], "Input Strides": [[1], [4096, 1], [1, 4096], [], []], '
                                      '"Concrete Inputs": ["", "", "", "1", "1"]'))
                    evs.append(_event("X", "cuda_runtime", "cudaLaunchKernel", pid, tid, cpu_ts + 1.0, 3.1,
                                      f'      "External id": {ext},\n      "cbid": 211, "correlation": {corr}'))
                    evs.append(_flow("s", corr, pid, tid, cpu_ts + 1.0))
                    dur *= 1 + jitter[(kernels * 7) & 4095] / 30
                    evs.append(_event("X", "kernel", kname, 0, 7, gpu_t, dur,
                                      kernel_args(corr, ext, grid, block)))
                    evs.append(_flow("f", corr, 0, 7, gpu_t))
                    gpu_t += dur + jitter[kernels & 4095]
                    kernels += 1
            # the step's all-reduce: record_param_comms > c10d::allreduce_ > nccl:all_reduce
            ext += 1
            corr += 1
            cbase = t + layers * 60.0
            comm = (f'      "Collective name": "allreduce", "In msg nelems": 16777216, "Out msg nelems": 16777216, '
                    f'"Group size": {world}, "dtype": "BFloat16", "In split size": "[]", "Out split size": "[]", '
                    f'"Global rank start": 0, "Global rank stride": 1, "Process Group Name": "0", '
                    f'"Process Group Description": "default_pg", "Process Group Ranks": "{list(range(world))}", '
                    f'"Rank": {rank}, "Seq": {steps}')
            evs.append(_event("X", "cpu_op", "c10d::allreduce_", pid, tid, cbase, 40.0,
                              f'      "External id": {ext},"Record function id": 0, "Ev Idx": {ext},\n'
                              '      "Input Dims": [[[16777216]], [], [], [], []], "Input type": ["TensorList", '
                              '"__torch__.torch.classes.c10d.ProcessGroup", "__torch__.torch.classes.c10d.ReduceOp", '
                              '"", "Int"]'))
            evs.append(_event("X", "cpu_op", "record_param_comms", pid, tid, cbase + 2, 30.0,
                              f'      "External id": {ext + 1},"Record function id": 0, "Ev Idx": {ext + 1},\n{comm}'))
            evs.append(_event("X", "user_annotation", "nccl:all_reduce", pid, tid, cbase + 4, 20.0,
                              f'      "External id": {ext + 2}'))
            ext += 2
            evs.append(_event("X", "cuda_runtime", "cudaLaunchKernelExC", pid, tid, cbase + 8, 9.0,
                              f'      "External id": {ext},\n      "cbid": 430, "correlation": {corr}'))
            evs.append(_flow("s", corr, pid, tid, cbase + 8))
            evs.append(_event("X", "kernel", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 0, 20, gpu_t, 700.0,
                              kernel_args(corr, ext, (32, 1, 1), (512, 1, 1), ",\n" + comm)))
            evs.append(_flow("f", corr, 0, 20, gpu_t))
            gpu_t += 700.0
            kernels += 1
            # a copy and a memset, each with its launch; a synchronize with no GPU work
            for name, cat, gname in (("cudaMemcpyAsync", "gpu_memcpy", "Memcpy DtoH (Device -> Pinned)"),
                                     ("cudaMemsetAsync", "gpu_memset", "Memset (Device)")):
                corr += 1
                ts = cbase + 60 + (10 if cat == "gpu_memset" else 0)
                evs.append(_event("X", "cuda_runtime", name, pid, tid, ts, 4.0,
                                  f'      "External id": {ext},\n      "cbid": 41, "correlation": {corr}'))
                evs.append(_event("X", cat, gname, 0, 7, gpu_t, 3.0,
                                  f'      "External id": {ext},\n      "device": 0, "context": 1,\n'
                                  f'      "stream": 7, "correlation": {corr},\n      "bytes": 4096, '
                                  '"memory bandwidth (GB/s)": 1.36'))
                gpu_t += 4.0
                kernels += 1
            corr += 1
            evs.append(_event("X", "cuda_runtime", "cudaStreamSynchronize", pid, tid, cbase + 80, gpu_t - cbase - 80,
                              f'      "External id": {ext},\n      "cbid": 131, "correlation": {corr}'))
            step_end = max(gpu_t, cbase + 90) + 5
            evs.append(_event("X", "user_annotation", f"ProfilerStep#{steps}", pid, tid, step_ts, step_end - step_ts,
                              f'      "External id": {ext + 1},"Record function id": 0, "Ev Idx": {ext + 1}'))
            evs.append(_event("X", "gpu_user_annotation", f"ProfilerStep#{steps}", 0, 7, step_ts + 40,
                              gpu_t - step_ts - 40, f'      "External id": {ext + 1}'))
            ext += 1
            out.write(sep + ",\n".join(evs))
            sep = ",\n"
            events += len(evs)
            t = step_end + 10
            steps += 1
        out.write('\n  ],\n  "traceName": "generated", "displayTimeUnit": "ms", "baseTimeNanoseconds": 1733300000000000000\n}\n')
    return {"bytes": path.stat().st_size, "steps": steps, "events": events, "gpu_activities": kernels}


PASSES = {
    "inflate": "import gzip,sys\n"
               "f=open(sys.argv[1],'rb'); gz=f.read(2)==b'\\x1f\\x8b'; f.close()\n"
               "f=gzip.open(sys.argv[1],'rb') if gz else open(sys.argv[1],'rb')\n"
               "n=0\n"
               "while b:=f.read(8<<20): n+=len(b)\n"
               "print(n)",
    "ijson_tokens": "import gzip,sys,ijson\n"
                    "f=open(sys.argv[1],'rb'); gz=f.read(2)==b'\\x1f\\x8b'; f.close()\n"
                    "f=gzip.open(sys.argv[1],'rb') if gz else open(sys.argv[1],'rb')\n"
                    "n=0\n"
                    "for _ in ijson.basic_parse(f, use_float=True): n+=1\n"
                    "print(n, ijson.backend)",
    "decode_only": "import sys\n"
                   "from pathlib import Path\n"
                   "from linkroof.readers import traces as T\n"
                   "class Drop:\n"
                   "    not_utf8, tail = [], ''\n"
                   "    def on_event(self, e): pass\n"
                   "    def on_events(self, b): pass\n"
                   "print(T._events(Path(sys.argv[1]), Drop()))",
    "orjson_batches": "import sys,gzip,re,orjson\n"
                      "f=open(sys.argv[1],'rb'); gz=f.read(2)==b'\\x1f\\x8b'; f.close()\n"
                      "f=gzip.open(sys.argv[1],'rb') if gz else open(sys.argv[1],'rb')\n"
                      "buf=f.read(1<<20); i=buf.index(b'[',buf.index(b'traceEvents'))+1; buf=buf[i:]; n=0\n"
                      "cut=re.compile(rb'\\}\\s*,\\s*\\{')\n"
                      "while True:\n"
                      "    more=f.read(1<<16); buf+=more\n"
                      "    k=buf.rfind(b'}', 0, 1<<16) if more else -1\n"
                      "    while k>0 and not cut.match(buf, k): k=buf.rfind(b'}', 0, k)\n"
                      "    if k<=0: break\n"
                      "    n+=len(orjson.loads(b'['+buf[:k+1].lstrip(b', \\n')+b']')); buf=buf[k+1:]\n"
                      "print(n)",
    "read_trace": "import sys\n"
                  "from linkroof.readers.traces import read_trace\n"
                  "t=read_trace(sys.argv[1])\n"
                  "print(len(t.activities), len(t.launches), len(t.ops), len(t.steps))",
    "json_whole": "import sys,json\n"
                  "from linkroof.readers.traces import read_trace, analyze\n"
                  "from linkroof.profiler.session import bundled_profile\n"
                  "rep=analyze([read_trace(sys.argv[1])], bundled_profile())\n"
                  "sys.stdout.write(json.dumps(rep.to_dict(), indent=1)+'\\n')",
    "json_streamed": "import sys,json\n"
                     "from linkroof.readers.traces import read_trace, analyze\n"
                     "from linkroof.profiler.session import bundled_profile\n"
                     "rep=analyze([read_trace(sys.argv[1])], bundled_profile())\n"
                     "json.dump(rep.to_dict(), sys.stdout, indent=1); sys.stdout.write('\\n')",
    "ijson_items": "import gzip,sys,ijson\n"
                   "f=open(sys.argv[1],'rb'); gz=f.read(2)==b'\\x1f\\x8b'; f.close()\n"
                   "f=gzip.open(sys.argv[1],'rb') if gz else open(sys.argv[1],'rb')\n"
                   "n=0\n"
                   "for _ in ijson.items(f, 'traceEvents.item', use_float=True): n+=1\n"
                   "print(n, ijson.backend)",
}


def _tree(pid: int) -> tuple[int, int]:
    """Resident and proportional bytes of a process and its descendants (Linux /proc)."""
    rss = pss = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1]) * 1024
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1]) * 1024
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return rss, pss


def measure(argv: list[str], code: Path = ROOT) -> dict:
    """Run `argv` in a fresh process (linkroof from `code`), stdout to /dev/null: wall,
    CPU, peak memory."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=code,
                            env={**os.environ, "PYTHONPATH": str(code)})
    peak_rss = peak_pss = 0
    status = None
    while status is None:
        got_pid, st, ru = os.wait4(proc.pid, os.WNOHANG)
        if got_pid:
            status = st
            break
        rss, pss = _tree(proc.pid)
        peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, pss)
        time.sleep(0.02)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace")
    return {"rc": proc.returncode, "wall_s": round(wall, 2), "cpu_s": round(ru.ru_utime + ru.ru_stime, 2),
            "user_s": round(ru.ru_utime, 2), "sys_s": round(ru.ru_stime, 2),
            "maxrss_mib": round(ru.ru_maxrss / 1024, 1), "tree_rss_mib": round(peak_rss / 2**20, 1),
            "tree_pss_mib": round(peak_pss / 2**20, 1), "stderr_tail": err[-300:]}


def long_line(path: Path, gigabytes: float, gz: bool) -> None:
    """A first line of `gigabytes` with no structure: a key that never ends ('{"xxx...')."""
    block = b"x" * (64 << 20)
    with (gzip.open(path, "wb", compresslevel=1) if gz else open(path, "wb")) as out:
        out.write(b'{"')
        for _ in range(int(gigabytes * 1e9) // len(block)):
            out.write(block)


def main() -> None:
    args = sys.argv[1:]
    if "-h" in args or "--help" in args:
        print(__doc__)
        return
    code = Path(args[args.index("--code") + 1]).resolve() if "--code" in args else ROOT
    size_mb = int(args[0]) if args and args[0].isdigit() else 1024
    forms = args[args.index("--forms") + 1].split(",") if "--forms" in args else ["plain", "gz"]
    only = args[args.index("--only") + 1].split(",") if "--only" in args else \
        ["inflate", "ijson_tokens", "ijson_items", "decode_only", "read_trace", "linkroof"]
    keep = Path(args[args.index("--keep") + 1]) if "--keep" in args else None
    shape = args[args.index("--shape") + 1] if "--shape" in args else "kineto"
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(json.dumps({"python": platform.python_version(), "cpus": os.cpu_count(), "machine": platform.machine(),
                      "load_before": load, "date": time.strftime("%Y-%m-%d %H:%M")}), flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="linkroof-trace-memory-")) if keep is None else keep
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        plain = tmp / f"trace_{shape}_{size_mb}mb.json"
        if not plain.exists() or plain.stat().st_size < size_mb * 1e6:
            t0 = time.perf_counter()
            if shape == "dense":  # trace_speed.py's: 40 GEMMs a step, no flows, compact lines (issue 30's 1 GB)
                sys.path.insert(0, str(ROOT / "benchmarks"))
                from trace_speed import generate as dense

                info = {"steps": dense(plain, int(size_mb * 1e6)), "bytes": plain.stat().st_size}
            else:
                info = generate(plain, int(size_mb * 1e6))
            info["generate_s"] = round(time.perf_counter() - t0, 1)
            print(json.dumps({"generated": plain.name, **info}), flush=True)
        for form in forms:
            path = plain
            if form == "gz":
                path = tmp / (plain.name + ".gz")
                if not path.exists():
                    with open(plain, "rb") as src, gzip.open(path, "wb", compresslevel=6) as dst:
                        shutil.copyfileobj(src, dst, 8 << 20)
            for name in only:
                if name == "linkroof":
                    argv = [sys.executable, "-m", "linkroof", "trace", str(path), "--json", "--no-save",
                            "--profile", "reference"]
                else:  # orjson from a Python that has it (ORJSON_PYTHON): it is no dependency of linkroof
                    python = os.environ.get("ORJSON_PYTHON", sys.executable) if name == "orjson_batches" else \
                        sys.executable
                    argv = [python, "-c", PASSES[name], str(path)]
                with open("/proc/loadavg") as f:
                    load = f.read().split()[:3]
                res = measure(argv, code)
                print(json.dumps({"form": form, "file_mb": round(path.stat().st_size / 1e6, 1), "pass": name,
                                  **({"code": str(code)} if code != ROOT else {}), "load": load, **res}), flush=True)
        if "--line-gb" in args:  # item 8's door: a 5 GB first line must not exhaust memory
            gb = float(args[args.index("--line-gb") + 1])
            for form in forms:
                path = tmp / (f"line_{gb:g}gb.json" + (".gz" if form == "gz" else ""))
                if not path.exists():
                    long_line(path, gb, form == "gz")
                res = measure([sys.executable, "-m", "linkroof", "trace", str(path), "--json", "--no-save",
                               "--profile", "reference"])
                print(json.dumps({"form": form, "file_mb": round(path.stat().st_size / 1e6, 1),
                                  "pass": f"linkroof on a {gb:g} GB first line", **res}), flush=True)
                path.unlink()
    finally:
        if keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
