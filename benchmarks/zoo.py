"""The zoo on one GPU: every program of examples/zoo/programs.py through linkroof
compare (time, CUPTI timeline with the host's API records, clock state, the gated pass;
with PART=counters, ncu's counters too) and through torch.utils.benchmark, each verdict
checked against examples/zoo/answers.toml and answers_new.toml (merged; a name in both
is an error; a program whose answer says `unavailable` and raises that RuntimeError is a
known gap, its line marked so; `steady = true` adds a --steady run). Writes, under $OUT (else ./out):

  zoo.jsonl             one line per program and part: what compare said, the references
  zoo_recordings.json.gz  the raw timelines (activities, host pass) per program: the CPU tests' data
  zoo_ncu.json.gz       ncu's raw pages per program (PART=counters)

    PART=time|counters|graph ONLY=name,name python3 benchmarks/zoo.py
"""

from __future__ import annotations

import gzip
import json
import os
import statistics
import sys
import time
import tomllib
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PROGRAMS = "examples/zoo/programs.py"


def load_answers(paths=("examples/zoo/answers.toml", "examples/zoo/answers_new.toml")):
    """The answer keys merged: the first 28 (answers.toml) and issue 43's (answers_new.toml,
    written before its programs). A program answered in both is an error, not an override."""
    merged: dict = {}
    for p in paths:
        path = Path(p)
        if not path.exists():
            continue
        one = tomllib.loads(path.read_text())
        both = sorted(set(one) & set(merged))
        if both:
            raise ValueError(f"{p}: answered twice (also in an earlier key): {', '.join(both)}")
        merged.update(one)
    return merged


ANSWERS = load_answers()
OUT = Path(os.environ.get("OUT") or "out")
OUT.mkdir(parents=True, exist_ok=True)
PART = os.environ.get("PART", "time")
ONLY = [x for x in os.environ.get("ONLY", "").split(",") if x]
COUNTED = ["layernorm", "reduction", "transpose", "strided", "triton_softmax", "cupy_scale", "cupy_elementwise",
           "gemm_bf16", "sdpa", "gemm_small", "conv2d", "compiled"]
# issue 43's programs whose answer names something only ncu's counters can show
COUNTED += [n for n, a in ANSWERS.items()
            if n not in COUNTED and {"limiter", "atomics", "fits_l2", "dram_bytes"} & set(a)]


def torch_reference(fn, x, sampler):
    import torch
    import torch.utils.benchmark as tb

    torch.cuda.synchronize()
    t = tb.Timer(stmt="fn(*x)", globals={"fn": fn, "x": x})
    if sampler is not None:
        sampler.samples.clear()
        with sampler:
            m = t.blocked_autorange(min_run_time=1.0)
        sm = [s.sm_mhz for s in sampler.samples if s.sm_mhz]
        clock = statistics.median(sm) if sm else None
    else:
        m, clock = t.blocked_autorange(min_run_time=1.0), None
    return {"median_s": m.median, "iqr_s": m.iqr, "runs": len(m.times), "sm_mhz_median": clock}


def summary(name, out, verdict):
    from linkroof.schema import to_dict

    r = out.result
    t = r.timeline
    return {"program": name, "median_s": r.median_s, "times_s": r.times_s, "host_s_per_call": r.host_s_per_call,
            "gated_median_s": statistics.median(r.gated_times_s) if r.gated_times_s else None,
            "gated_note": r.gated_note, "launch_share_s": r.launch_share_s, "clock": to_dict(r.clock),
            "gated_clock": to_dict(r.gated_clock), "steady_note": r.steady_note,
            "warm_median_s": statistics.median(r.warm_times_s) if r.warm_times_s else None,
            "input_bytes": r.input_bytes, "l2_bytes": r.l2_bytes,
            "timeline": to_dict(t), "timeline_note": r.timeline_note, "verdict": verdict, "notes": out.notes,
            "kernel_counters": out.kernel_counts, "counters_note": out.counters_note,
            "placements": [{"name": p.workload.name, "limiter": p.limiter, "flags": list(p.flags),
                            "decomposition": p.decomposition_s} for p in out.placements[:3]]}


def check(name, s):
    """The run's facts against the answer written beside the program."""
    a = ANSWERS.get(name, {})
    t = s["timeline"] or {}
    got = {}
    kernels = t.get("kernels_per_call")
    if "kernels" in a:
        got["kernels"] = (kernels, kernels == a["kernels"])
    if "kernels_min" in a:
        got["kernels_min"] = (kernels, kernels is not None and kernels >= a["kernels_min"])
    if "copies" in a:
        n = sum(k.get("launches_per_call", 0) for k in t.get("kernels", []) if k.get("kind") == "memcpy") \
            if t.get("kernels") is not None else None
        got["copies"] = (n, n == a["copies"])
    if "critical_path" in a:
        path = dict(t.get("critical_path_s", []))
        got["critical_path"] = (path, all(path.get(c, 0) > 0 for c in a["critical_path"]))
    kind = s["cause"] or "gpu"
    want = a.get("verdict")
    if want:
        got["verdict"] = (kind, kind in (want if isinstance(want, list) else [want]))
    if "overlapped" in a:
        x, y = a["overlapped"]
        pairs = {(p[0], p[1]): p[2] for p in t.get("overlap_s", [])}
        both = pairs.get((x, y), pairs.get((y, x), 0.0))
        cls = dict(t.get("class_s", []))
        smaller = min(cls.get(x, 0.0), cls.get(y, 0.0))
        got["overlap"] = (both / smaller if smaller else None, smaller > 0 and both >= a["overlap_min"] * smaller)
    if "serial" in a:
        x, y = a["serial"]
        pairs = {(p[0], p[1]): p[2] for p in t.get("overlap_s", [])}
        both = pairs.get((x, y), pairs.get((y, x), 0.0))
        got["serial"] = (both, both < 0.02 * max(s["median_s"], 1e-9))
    return got


def run_time(names, topo, part):
    from linkroof.profiler.clocks import sampler
    from linkroof.profiler.compare import run_compare
    from linkroof.profiler.usercode import call, resolve
    from linkroof.roofline.timeline import host_cause, host_verdict

    rec, pages = {}, {}
    clocks = sampler(0)
    for name in names:
        t0 = time.perf_counter()
        line = {"program": name, "part": part}
        try:
            kw = dict(count_kernels=part == "counters")
            out = run_compare(f"{PROGRAMS}:{name}", f"{PROGRAMS}:{name}_inputs", counters_on=False, topology=topo,
                              **kw)
            verdict = host_verdict(out.result.timeline, out.result.median_s) if out.result.timeline else None
            line.update(summary(name, out, verdict))
            line["cause"] = host_cause(out.result.timeline, out.result.median_s) if out.result.timeline else None
            if out.result.recording:
                rec[name] = out.result.recording
            if out.counters_log:
                pages[name] = out.counters_log
            if part == "time":
                fn, make = resolve(f"{PROGRAMS}:{name}"), resolve(f"{PROGRAMS}:{name}_inputs")
                x = make()
                for _ in range(3):
                    call(fn, x)
                line["torch_benchmark"] = torch_reference(fn, x, clocks)
                if name in ("gemm_bf16", "sdpa") or ANSWERS.get(name, {}).get("steady"):
                    st = run_compare(f"{PROGRAMS}:{name}", f"{PROGRAMS}:{name}_inputs", counters_on=False,
                                     topology=topo, steady=True, timeline=False)
                    line["steady"] = {"median_s": st.result.median_s, "clock": summary(name, st, None)["clock"],
                                      "note": st.result.steady_note}
            line["check"] = check(name, line)
        except Exception as e:  # noqa: BLE001 - one program's failure is a line, not the end
            gap = ANSWERS.get(name, {}).get("unavailable")
            if gap and isinstance(e, RuntimeError) and str(e).startswith(gap.split(":")[0]):
                line["unavailable"] = str(e)[:2000]  # a known gap of this machine, said as one
            line["error"] = f"{type(e).__name__}: {e}"[:2000]
            line["traceback"] = traceback.format_exc()[-3000:]
        line["wall_s"] = time.perf_counter() - t0
        with open(OUT / "zoo.jsonl", "a") as f:
            f.write(json.dumps(line, default=str) + "\n")
        c = line.get("check", {})
        ok = all(v[1] for v in c.values()) if c else None
        tb = line.get("torch_benchmark", {}).get("median_s")
        print(f"{name:24s} {line.get('median_s', 0) * 1e6:10.1f} us  torch {tb * 1e6 if tb else 0:10.1f} us  "
              f"kernels {((line.get('timeline') or {}).get('kernels_per_call'))}  ok={ok} {c} "
              f"{line.get('error', '')[:200]}  ({line['wall_s']:.1f} s)", flush=True)
        if rec and os.environ.get("SAVE_EACH"):  # a run cut at its time limit keeps what it recorded
            with gzip.open(OUT / f"zoo_recordings_{part}.json.gz", "wt") as f:
                json.dump(rec, f)
    if rec:
        with gzip.open(OUT / f"zoo_recordings_{part}.json.gz", "wt") as f:
            json.dump(rec, f)
    if pages:
        with gzip.open(OUT / "zoo_ncu.json.gz", "wt") as f:
            json.dump(pages, f)


def run_graph():
    """The gated-graph question: a 50-kernel graph replay timed ungated, gated with no
    lead call (the old protocol), gated with one (the new), interleaved five times."""
    import torch

    from linkroof.microbench.timing import time_calls
    from linkroof.profiler.usercode import resolve

    for which in ("graph_replay", "graph_replay_small"):
        _graph(which)


def _graph(which):
    import torch

    from linkroof.microbench.timing import time_calls
    from linkroof.profiler.usercode import resolve

    fn, make = resolve(f"{PROGRAMS}:{which}"), resolve(f"{PROGRAMS}:{which}_inputs")
    x = make()
    for _ in range(5):
        fn(*x)
    torch.cuda.synchronize()
    res = {"ungated": [], "gated_no_lead": [], "gated_lead": [], "gated_no_lead_big_batch": []}
    for _ in range(5):
        res["ungated"].append(statistics.median(time_calls(lambda i: fn(*x), 50, "torch", min_batch_s=2e-3)))
        res["gated_no_lead"].append(statistics.median(time_calls(lambda i: fn(*x), 50, "torch", gated=True,
                                                                 ops_per_call=50, min_batch_s=2e-3, lead=False)))
        res["gated_lead"].append(statistics.median(time_calls(lambda i: fn(*x), 50, "torch", gated=True,
                                                              ops_per_call=50, min_batch_s=2e-3, lead=True)))
        res["gated_no_lead_big_batch"].append(statistics.median(time_calls(
            lambda i: fn(*x), 50, "torch", gated=True, ops_per_call=1, min_batch_s=2e-3, lead=False)))
    line = {"experiment": "graph_gate", "program": which, **{k: [v * 1e6 for v in vs] for k, vs in res.items()}}
    with open(OUT / "zoo.jsonl", "a") as f:
        f.write(json.dumps(line) + "\n")
    print(f"graph gate {which} (us):", {k: round(statistics.median(v) * 1e6, 2) for k, v in res.items()}, flush=True)


def main():
    import torch

    from linkroof.profiler.probe import probe

    torch.cuda.init()
    topo = probe()
    names = ONLY or list(ANSWERS)
    if PART == "graph":
        run_graph()
    elif PART == "counters":
        run_time([n for n in names if n in COUNTED] if not ONLY else names, topo, "counters")
    else:
        run_time(names, topo, "time")


if __name__ == "__main__":
    main()
