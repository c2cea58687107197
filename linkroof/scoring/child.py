"""One target of `linkroof score` on one rank (scoring/score.py starts it, under
torchrun for several ranks): the process group (NCCL, as ParallelKernelBench's worker),
the trials' outputs saved for the parent to check, the time by the protocol, the CUPTI
timeline of more calls where it is here. Everything goes to the parent on the result
channel (scoring.channel: a socket connected before the candidate is imported, signed
frames); there is no result file a candidate could write. What fails is reported with
its kind (import_error, oom, exception, bad_output) before the process exits.

After the timing, checks against the known ways a candidate games a timing: the timing
functions replaced in its module (the harness times with the functions it held before
the import, and says so), work left on another stream past the last timed event, an
output that does not follow new values written into the inputs it was timed on (a
cached result), outputs that share memory with inputs.

    python -m linkroof.scoring.child --fn F --inputs I ...
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import traceback
from typing import Any


def _args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="linkroof.scoring.child")
    p.add_argument("--fn", required=True)
    p.add_argument("--inputs", required=True)
    p.add_argument("--max-output-bytes", type=int, default=4 << 30)
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--first-trial", type=int, default=0)
    p.add_argument("--protocol", choices=("pkb", "linkroof"), default="linkroof")
    p.add_argument("--warmup", type=int, default=500)
    p.add_argument("--iters", type=int, default=100)
    p.add_argument("--m", type=int, default=1024)
    p.add_argument("--n", type=int, default=1024)
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--problem-id", type=int, default=1)
    p.add_argument("--seeds", default="", help="the judge's input seed of each trial, then one for the check after "
                   "new values (comma-separated); default: the trial numbers")
    return p.parse_args(argv)


def seed_of(a: argparse.Namespace) -> Any:
    """trial number -> the value the inputs are made from: the judge's seed where it drew
    them, else the trial number (PKB's own runs)."""
    seeds = [int(x) for x in a.seeds.split(",") if x.strip().lstrip("-").isdigit()] if a.seeds else []

    def of(t: int) -> int:
        k = t - a.first_trial
        return seeds[k] if 0 <= k < len(seeds) else t

    return of


def make_inputs_factory(spec: str, problem_id: int, shape: tuple[int, int], dtype: str) -> Any:
    """(rank, world, trial) -> the arguments: `pkb:ROOT` is ParallelKernelBench's own
    create_input_tensor (its problem id from the target's file name); else a
    module:function taking (rank, world_size, trial), or nothing."""
    from ..profiler.usercode import resolve

    if spec.startswith("pkb:"):
        root = spec[4:]
        sys.path.insert(0, root)
        import torch
        from utils.input_output_tensors import create_input_tensor  # PKB's, from its root

        pid = problem_id
        dt = getattr(torch, dtype)

        def pkb(rank: int, world: int, trial: int) -> tuple:
            dev = torch.device("cuda", rank % max(1, torch.cuda.device_count()))
            return tuple(create_input_tensor(rank, world, pid, shape, dt, trial=trial, device=dev))

        return pkb
    f = resolve(spec)
    try:
        takes = len(inspect.signature(f).parameters)
    except (TypeError, ValueError):
        takes = 3
    if takes >= 3:
        return lambda rank, world, trial: tuple(_as_tuple(f(rank, world, trial)))

    def seeded(rank: int, world: int, trial: int) -> tuple:
        # a function of no arguments (as compare takes) draws from the global generators:
        # seeded from the trial and rank first, the reference and every candidate get the
        # same inputs (unseeded, each process drew its own and every candidate read wrong)
        seed_generators(int(trial) * 1_000_003 + rank)
        return tuple(_as_tuple(f()))

    return seeded


def seed_generators(seed: int) -> None:
    """Python's, NumPy's, torch's (every GPU) and CuPy's global random generators seeded,
    each where it is importable."""
    import random

    seed %= 2 ** 32
    random.seed(seed)
    try:
        import numpy as np

        np.random.seed(seed)
    except ImportError:
        pass
    try:
        import torch

        torch.manual_seed(seed)  # the CPU's and every CUDA device's
    except ImportError:
        pass
    if "cupy" in sys.modules:  # imported by the inputs' module: seeded; never imported here for nothing
        try:
            sys.modules["cupy"].random.seed(seed)
        except Exception:  # noqa: BLE001 - no GPU: nothing of CuPy's to seed
            pass


def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


class BadOutput(Exception):
    """An output the harness cannot send for checking: the row says why."""


def _leaves(y: Any) -> list[Any]:
    out: list[Any] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for k in sorted(v, key=str):
                walk(v[k])
        elif isinstance(v, (list, tuple)):
            for w in v:
                walk(w)
        else:
            out.append(v)

    walk(y)
    return out


def _nbytes(v: Any) -> int:
    if hasattr(v, "element_size") and hasattr(v, "numel"):  # torch: a broadcast view counts its full size
        return int(v.element_size()) * int(v.numel())
    return int(getattr(v, "nbytes", 8))


def send_outputs(rep: Any, trial: Any, y: Any, limit: int) -> None:
    """One trial's outputs to the parent, leaf by leaf; what cannot be sent is a
    BadOutput naming why (None, an object, over the size limit, a data type NumPy
    cannot hold)."""
    import numpy as np

    from ..profiler.usercode import to_numpy

    if y is None:
        raise BadOutput("the candidate returned None, not a tensor")
    leaves = _leaves(y)
    if not leaves:
        raise BadOutput(f"the candidate returned an empty {type(y).__name__}")
    for v in leaves:
        if v is None:
            raise BadOutput("the candidate returned None inside its output")
        if not hasattr(v, "shape") and not isinstance(v, (bool, int, float, complex, np.generic)):
            raise BadOutput(f"the candidate returned a {type(v).__name__}, not a tensor")
    total = sum(_nbytes(v) for v in leaves)
    if total > limit:
        raise BadOutput(f"its output is {total:,} B, over the limit of {limit:,} B for one trial's outputs "
                        "(--max-output-bytes)")
    for i, v in enumerate(leaves):
        if getattr(v, "is_sparse", False) or str(getattr(v, "layout", "")).endswith(("sparse_coo", "sparse_csr")):
            raise BadOutput("the candidate returned a sparse tensor")
        try:
            a = to_numpy(v) if hasattr(v, "shape") else np.asarray(v)
        except Exception as e:  # noqa: BLE001 - a data type NumPy cannot hold, a tensor that cannot be read
            raise BadOutput(f"output {i} cannot be read for checking ({type(e).__name__}: {str(e)[:160]})") from None
        if a.dtype.kind not in "biufc":
            raise BadOutput(f"output {i} has data type {a.dtype}, which cannot be compared")
        rep.send_array(str(trial), i, a)


class Clock:
    """The timing functions as they were before the candidate was imported: the harness
    times with these, and `replaced()` names any the candidate's import or calls changed."""

    NAMES = ("torch.cuda.Event", "torch.cuda.Event.record", "torch.cuda.Event.elapsed_time",
             "torch.cuda.Event.synchronize", "torch.cuda.synchronize", "time.perf_counter")

    def __init__(self) -> None:
        self.held = {n: self._look(n) for n in self.NAMES}

    @staticmethod
    def _look(name: str) -> Any:
        import time as time_mod

        import torch

        obj: Any = {"torch": torch, "time": time_mod}[name.split(".")[0]]
        for part in name.split(".")[1:]:
            obj = getattr(obj, part, None)
        return obj

    def replaced(self) -> list[str]:
        return [n for n, f in self.held.items() if self._look(n) is not f]

    def restore(self) -> list[str]:
        """Put back every timing function the candidate replaced (so every timer, the
        protocols' own included, reads the GPU's events); the names it had to put back."""
        import time as time_mod

        import torch

        names = self.replaced()
        for n in names:
            parent: Any = {"torch": torch, "time": time_mod}[n.split(".")[0]]
            for part in n.split(".")[1:-1]:
                parent = getattr(parent, part)
            try:
                setattr(parent, n.rsplit(".", 1)[1], self.held[n])
            except (AttributeError, TypeError):
                pass
        return names

    def event(self) -> Any:
        return self.held["torch.cuda.Event"](enable_timing=True)

    def record(self, e: Any) -> None:
        self.held["torch.cuda.Event.record"](e)

    def elapsed_ms(self, a: Any, b: Any) -> float:
        return float(self.held["torch.cuda.Event.elapsed_time"](a, b))

    def sync(self) -> None:
        self.held["torch.cuda.synchronize"]()

    def now(self) -> float:
        return self.held["time.perf_counter"]()


def _pkb_perf(fn: Any, x: tuple, warmup: int, iters: int, clock: Clock, mark: Any = None) -> tuple[dict, list]:
    """ParallelKernelBench's measure_solution_performance, step by step; with the
    input groups it cycled (timed with the functions held before the candidate's import)."""
    import torch

    from .score import PKB_DEFAULT_L2, first_tensor_path, num_input_groups, pkb_metrics, substitute

    path = first_tensor_path(x, lambda a: isinstance(a, torch.Tensor))
    if path is None:
        raise RuntimeError("the inputs hold no torch.Tensor: nothing to time by PKB's protocol")
    i, j = path
    tensor = x[i] if j is None else x[i][j]
    try:
        l2 = int(torch.cuda.get_device_properties(tensor.device).l2_cache_size) or PKB_DEFAULT_L2
    except Exception:  # noqa: BLE001 - PKB's fallback
        l2 = PKB_DEFAULT_L2
    nbytes = int(tensor.element_size() * tensor.numel())
    groups = num_input_groups(nbytes, l2)
    clones = [tensor.clone() for _ in range(groups)]
    run = [substitute(x, path, c) for c in clones]
    clock.sync()
    for k in range(warmup):
        fn(*run[k % groups])
    clock.sync()
    events = [clock.event() for _ in range(iters + 1)]
    if mark is not None:
        mark("timing_start")  # the judge stamps the loop's start and end with its own clock
    clock.record(events[0])
    for k in range(iters):
        fn(*run[k % groups])
        clock.record(events[k + 1])
    clock.sync()
    if mark is not None:
        mark("timing_end")
    per = [clock.elapsed_ms(events[k], events[k + 1]) for k in range(iters)]
    perf = pkb_metrics(per, clock.elapsed_ms(events[0], events[iters]), warmup, groups, l2, nbytes)
    perf["iteration_ms"] = per
    return perf, run


def _counters(local: int) -> tuple[Any, str]:
    """NVML's NVLink / PCIe byte counters of this rank's GPU (compare's), or None, and
    why the NVLink bytes will be unknown where they will be."""
    try:
        from ..profiler.counters import NvmlCounters
        from ..profiler.probe import probe

        topo = probe()
        gpu = next(g for g in topo.gpus if g.index == local % max(1, len(topo.gpus)))
        why = "" if gpu.nvlinks else f"NVML lists no active NVLink on GPU {gpu.index}"
        return NvmlCounters([gpu.index], {gpu.index: len(gpu.nvlinks)}), why
    except Exception as e:  # noqa: BLE001 - no counters: the row says the link bytes are unknown, and why
        return None, f"NVML's counters could not be read ({type(e).__name__}: {str(e)[:120]})"


def _linkroof_perf(name: str, fn: Any, x: tuple, local: int = 0, mark: Any = None) -> dict:
    from ..profiler.clocks import sampler
    from ..profiler.compare import CudaTimer, run_callable

    counters, why = _counters(local)
    if mark is not None:
        mark("timing_start")
    r = run_callable(name, fn, lambda: x, CudaTimer("torch"), counters, reps=50, warmup=10, clocks=sampler(local))
    if mark is not None:
        mark("timing_end")
    link = r.link_bytes()
    return {"median_ms": r.median_s * 1e3, "times_ms": [t * 1e3 for t in r.times_s],
            "host_ms_per_call": r.host_s_per_call * 1e3, "how": "linkroof: ungated median of batches (compare's)",
            "link_bytes_per_call": link,
            "link_bytes_note": None if link is not None else (why or "NVML gave no NVLink byte counts"),
            "clock": _clock_doc(r.clock)}


def _clock_doc(c: Any) -> dict:
    """A ClockState as the channel carries it (JSON), or an unknown state saying why."""
    from ..schema import to_dict

    if c is None:
        return {"state": "unknown", "samples": 0, "note": "NVML's clocks could not be read in the harness"}
    return to_dict(c)


def _timeline(fn: Any, runs: list, measured_s: float, host_s: float) -> dict | None:
    """The CUPTI timeline of 20 more calls, apart from the timed ones, on the inputs as
    the timed loop cycled them (PKB's input groups; compare's one set): the decomposition."""
    from ..profiler.compare import CuptiRecorder

    rec = CuptiRecorder()
    ok, why = rec.available()
    if not ok:
        return {"note": why}
    import torch

    from ..roofline.timeline import host_verdict, summarize, timed_parts, with_host

    acts, starts, host = rec.record(20, lambda i: fn(*runs[i % len(runs)]), torch.cuda.synchronize)
    t = summarize(acts, starts, host, "cupti")
    try:  # what the host did while the GPU idled (compare's second pass): names a sync, host work or launches
        t = with_host(t, *rec.record_host(20, lambda i: fn(*runs[i % len(runs)]), torch.cuda.synchronize))
    except Exception:  # noqa: BLE001 - the GPU-side timeline stands without it
        pass
    timed, scaled = timed_parts(t, measured_s)  # compare's decomposition of the same facts
    parts = {k: v for k, v, _ in timed}
    return {"note": why + (f"; {scaled}" if scaled else ""), "kernels_per_call": t.kernels_per_call, "busy_s": t.busy_s,
            "exposed_communication_s": t.exposed_communication_s, "parts": parts,
            "activities_per_call": t.activities_per_call,
            "kernels": [{"name": k.name[:200], "kind": k.kind, "class": k.kernel_class,
                         "launches_per_call": k.launches_per_call, "time_per_call_s": k.time_per_call_s}
                        for k in t.kernels[:20]],
            "launch_verdict": host_verdict(t, measured_s)}


def _tensors(x: Any) -> list[Any]:
    """The torch tensors among the arguments, and one level inside lists and tuples."""
    import torch

    out = []
    for v in x:
        if isinstance(v, torch.Tensor):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            out += [w for w in v if isinstance(w, torch.Tensor)]
    return out


def _aliases(y: Any, x: Any) -> list[str]:
    """Outputs that share memory with an input (the same storage): said, and judged
    against the reference's (an in-place all-reduce returns its input, legitimately)."""
    import torch

    ins = {}
    for i, t in enumerate(_tensors(x)):
        try:
            ins.setdefault(t.untyped_storage().data_ptr(), i)
        except Exception:  # noqa: BLE001 - a tensor without storage (meta, sparse)
            continue
    said = []
    for j, v in enumerate(_leaves(y)):
        if isinstance(v, torch.Tensor):
            try:
                k = ins.get(v.untyped_storage().data_ptr())
            except Exception:  # noqa: BLE001
                continue
            if k is not None:
                said.append(f"output {j} shares memory with input tensor {k}")
    return said


def _tail(fn: Any, run: list, clock: Clock, calls: int = 10) -> dict:
    """Work left past the timing event: `calls` calls timed by events on the current
    stream, then how long the whole device stayed busy after the last event completed
    (a candidate that leaves work on a stream it never waits for is timed short by the
    events, and the device-wide synchronize waits for it)."""
    clock.sync()
    a, b = clock.event(), clock.event()
    clock.record(a)
    for k in range(calls):
        fn(*run[k % len(run)])
    clock.record(b)
    b.synchronize()
    t0 = clock.now()
    clock.sync()
    busy_after = clock.now() - t0
    return {"calls": calls, "event_s": clock.elapsed_ms(a, b) / 1e3, "device_busy_after_s": busy_after}


def _fresh_values(run: list, new: tuple) -> bool:
    """Write new values into the tensors the candidate was timed on (the arguments of the
    timed loop's first input group), in place: True when every tensor took them."""
    old_t, new_t = _tensors(run[0]), _tensors(new)
    if not old_t or len(old_t) != len(new_t):
        return False
    import torch

    with torch.no_grad():
        for o, n in zip(old_t, new_t):
            if o.shape != n.shape or o.dtype != n.dtype:
                return False
            o.copy_(n)
    return True


def _checks(fn: Any, run: list, make: Any, rank: int, world: int, trial: int, clock: Clock, rep: Any,
            limit: int, y0: Any, x0: tuple) -> dict:
    """After the timing: the timing functions' identity, work past the timing event, a
    cached output, aliasing. Each what it saw; the parent judges (against the reference
    where the reference may do the same legitimately)."""
    out: dict[str, Any] = {"replaced": clock.replaced(), "aliases": _aliases(y0, x0)}
    try:
        out["tail"] = _tail(fn, run, clock)
    except Exception as e:  # noqa: BLE001 - the check is said undone, never passed
        out["tail_note"] = f"not checked ({type(e).__name__}: {str(e)[:120]})"
    try:
        if _fresh_values(run, make(rank, world, trial)):
            y = fn(*run[0])
            clock.sync()
            send_outputs(rep, "post", y, limit)
            out["post"] = True
        else:
            out["post_note"] = "not checked: the inputs hold no tensor the next trial's values fit"
    except BadOutput as e:
        out["post_note"] = f"not checked: after new values, {e}"
    except Exception as e:  # noqa: BLE001
        out["post_note"] = f"not checked ({type(e).__name__}: {str(e)[:120]})"
    return out


def _failure_kind(e: BaseException, phase: str) -> str:
    if isinstance(e, BadOutput):
        return "bad_output"
    if isinstance(e, SystemExit):
        return "exit"
    if phase == "import" and isinstance(e, (ImportError, SyntaxError, AttributeError, FileNotFoundError)):
        return "import_error"
    try:
        import torch

        if isinstance(e, torch.cuda.OutOfMemoryError):
            return "oom"
    except ImportError:
        pass
    return "oom" if "out of memory" in str(e).lower() else "exception"


def main(argv: list[str]) -> int:
    rank, world = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    from .channel import Reporter

    rep = Reporter.from_env(rank)  # before anything of the candidate's is imported
    if rep is None:
        print("linkroof.scoring.child: no result channel (run by linkroof score, not by hand)", file=sys.stderr)
        return 2
    # bound before the candidate's import, as the timing functions are (Clock): a candidate that replaces
    # Reporter's methods on the class changes nothing the harness sends with
    mark, send, send_array, close = rep.mark, rep.send, rep.send_array, rep.close

    class _Bound:
        def __init__(self) -> None:
            self.send, self.send_array, self.mark, self.close = send, send_array, mark, close

    rep = _Bound()
    a = _args(argv)
    local = int(os.environ.get("LOCAL_RANK", rank))
    phase = "import"
    try:
        import torch
        import torch.distributed as dist

        clock = Clock()  # the timing functions as they are before the candidate's import
        torch.cuda.set_device(local % max(1, torch.cuda.device_count()))
        try:
            dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", local))
        except TypeError:
            dist.init_process_group("nccl", rank=rank, world_size=world)
        from ..profiler.usercode import resolve

        fn = resolve(a.fn)
        made = make_inputs_factory(a.inputs, a.problem_id, (a.m, a.n), a.dtype)
        seed = seed_of(a)

        def make(r: int, w: int, t: int) -> tuple:  # the judge's seed of trial t
            return made(r, w, seed(t))

        phase = "trials"
        y0 = x0 = None
        for k, t in enumerate(range(a.first_trial, a.first_trial + a.trials)):
            x = make(rank, world, t)
            y = fn(*x)
            torch.cuda.synchronize()
            send_outputs(rep, t, y, a.max_output_bytes)
            rep.send("trials", {"done": k + 1})
            if k == 0:
                y0, x0 = y, x
        dist.barrier()
        phase = "timing"
        restored = clock.restore()  # the candidate's replacements out of the way before anything is timed
        x = make(rank, world, a.first_trial)  # timed on the first trial's inputs (PKB: each trial's job times its own)
        t0 = clock.now()
        if a.protocol == "pkb":
            import contextlib

            from ..profiler.clocks import sampler
            from ..profiler.compare import _clock_state

            sam = sampler(local)
            with sam if sam is not None else contextlib.nullcontext():
                perf, runs = _pkb_perf(fn, x, a.warmup, a.iters, clock, mark)
            # NVML sampled through PKB's timed iterations, the first third of them against the last
            perf["clock"] = _clock_doc(_clock_state([t / 1e3 for t in perf.pop("iteration_ms")], [], sam,
                                                    "PKB's timed iterations", marked=False))
        else:
            perf, runs = _linkroof_perf(a.fn.rsplit(":", 1)[-1], fn, x, local, mark), [x]
        perf["protocol"] = a.protocol
        measured = (perf.get("wall_time_ms") or perf.get("median_ms")) / 1e3
        host = perf.get("host_ms_per_call", measured * 1e3) / 1e3
        perf["timing_wall_s"] = clock.now() - t0
        dist.barrier()
        phase = "checks"
        checks = _checks(fn, runs, make, rank, world, a.first_trial + a.trials, clock, rep, a.max_output_bytes,
                         y0, x0)
        dist.barrier()
        phase = "timeline"
        try:
            perf["timeline"] = _timeline(fn, runs, measured, host)
        except Exception as e:  # noqa: BLE001 - the timeline explains; the time stands without it
            perf["timeline"] = {"note": f"no CUPTI timeline ({type(e).__name__}: {str(e)[:200]})"}
        checks["replaced"] = sorted(set(checks["replaced"]) | set(clock.replaced()) | set(restored))
        rep.send("checks", checks)
        rep.send("perf", perf)
        dist.barrier()
        dist.destroy_process_group()
        rep.close()
        return 0
    except BaseException as e:  # noqa: BLE001 - every failure becomes a row, never a lost candidate
        kind = _failure_kind(e, phase)
        msg = str(e) if kind == "bad_output" else f"{type(e).__name__}: {str(e)[:1000]}"
        if kind == "exit":
            msg = f"the candidate called sys.exit({str(e.code)[:100]!s}) during {phase}"
        try:
            rep.send("error", {"kind": kind, "phase": phase, "rank": rank, "message": msg,
                               "traceback": traceback.format_exc()[-4000:]})
        except OSError:
            pass
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
