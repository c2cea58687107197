"""`linkroof roofline`, `advise`, `compare`, `score` and `trace`: the machine's roofline,
and work placed on it (kernels, candidates, PyTorch profiler traces)."""

from __future__ import annotations

import json
import math
from typing import Any
from pathlib import Path

import click

from .common import (
    FITS_NOTE, JSON_HELP, PROFILE_HELP, UserError, _banner, _console, _echo_json, _finite, _load_profile,
    _placement_profile, _store, _stream_json, _write, cli,
)


@cli.command()
@click.option("--profile", "which", metavar="ID|FILE|reference", help=PROFILE_HELP)
@click.option("--workload", type=click.Path(dir_okay=False), help="A workload TOML file to place on the roofline.")
@click.option("--time", "time_", metavar="T", help="The workload's measured time (slowest rank), e.g. 1.2ms.")
@click.option("--plot", type=click.Path(dir_okay=False), help="Write the roofline figure (.html, or .png/.svg with kaleido).")
@click.option("--force", is_flag=True, help="Place the workload even if the profile describes another machine.")
@click.option("--fits", "show_fits", is_flag=True, help="Also the latency + bandwidth fit of every mechanism and "
              "collective, piecewise, with each fit's worst error.")
@click.option("--launch-path", type=click.Choice(["graph", "cuda", "cupy", "nccl", "torch"]), default="graph",
              show_default=True, help="Cost model: how the workload is launched (CUDA-graph replay, a raw CUDA "
              "stream, CuPy from Python, an NCCL call from one process, a torch.distributed collective per rank; "
              "the last needs a profile measured under torchrun).")
@click.option("--launches", type=click.IntRange(min=0), default=1, show_default=True,
              help="Cost model: launches per call of the workload.")
@click.option("--syncs", type=click.IntRange(min=0), default=0, show_default=True,
              help="Cost model: synchronisations per call.")
@click.option("--sync-kind", type=click.Choice(["cta", "grid", "gpu"]), default="grid", show_default=True,
              help="Cost model: what one sync is (an SM's mbarrier, a barrier over every SM, a flag to another GPU).")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def roofline(ctx: click.Context, which: str | None, workload: str | None, time_: str | None, plot: str | None,
             force: bool, show_fits: bool, launch_path: str, launches: int, syncs: int, sync_kind: str,
             as_json: bool) -> None:
    """The machine's roofline: ceilings for compute per data type, HBM and every link
    class, spec and measured side by side, with ridge points; optionally a workload
    placed on it, two ways: the bandwidth-only roofline (max of compute, HBM and link
    time) and the cost model (launch + sync + max of compute, HBM and latency-aware
    link time), with the measured time decomposed into the model's terms."""
    from ..roofline.model import MachineModel
    from ..roofline.place import place
    from ..roofline.workload import load_toml
    from ..units import parse_time

    if (workload is None) != (time_ is None):
        raise click.UsageError("--workload and --time go together")
    placements = []
    if workload:
        try:
            seconds = parse_time(time_)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--time") from None
        if not (seconds > 0 and math.isfinite(seconds)) or seconds > 1e6:
            raise click.BadParameter(f"{time_!r}: a measured time is more than zero and finite (at most 1e6 s)",
                                     param_hint="--time")
        wl = load_toml(workload)
        profile, _ = _placement_profile(ctx, which, force, wl)
    else:
        profile = _load_profile(ctx, which)
    banner = _banner(profile)
    model = MachineModel.from_profile(profile)
    if workload:
        from ..roofline.baseline import nccl_baseline
        from ..roofline.cost import with_cost

        from ..roofline.place import place_spec

        base = nccl_baseline(profile, wl)
        spec, spec_notes = place_spec(wl, seconds, model)
        placements = [with_cost(place(wl, seconds, model, "measured"), profile, model, launch_path, launches, syncs,
                                sync_kind, base.median_s if base else None)] + spec
        for n in spec_notes:
            click.echo(n, err=True)
    if plot:
        from ..dashboard.figures import roofline_figure
        from ..dashboard.report import write_figure

        write_figure(roofline_figure(model, placements[:1]), plot)
        click.echo(f"Wrote {plot}", err=True)
    if as_json:
        import json

        from ..schema import to_dict

        from ..roofline.cost import machine_terms

        doc = {"profile": profile.id, "provenance": banner, "gpu": model.gpu_name, "roofs": to_dict(model.roofs),
               "ridge_points": [{"dtype": d, "resource": r, "flop_per_byte": v} for d, r, v in model.ridge_points()],
               "cost_terms": machine_terms(profile), "placements": to_dict(placements)}
        if show_fits:
            from ..roofline.fits import profile_fits

            doc["fits"] = [{"name": f.name, "worst_error": f.worst_error, "points": len(f.points),
                            "segments": to_dict(f.segments)} for f in profile_fits(profile)]
            doc["fits_note"] = FITS_NOTE
        _echo_json(json.dumps(doc, indent=1))
        return
    from ..render import placements_table, roofs_table, terms_table
    from ..roofline.cost import machine_terms

    _console().print(roofs_table(model, profile))
    terms = machine_terms(profile)
    if terms:
        _console().print(terms_table(terms))
    else:
        click.echo("No launch or sync figures in this profile: `linkroof bench --only launch,sync` measures them.")
    if show_fits:
        from ..render import fits_table
        from ..roofline.fits import profile_fits

        _console().print(fits_table(profile_fits(profile)))
    if placements:
        _console().print(placements_table(placements))
        from ..render import decomposition_view

        _console().print(decomposition_view(placements))
        from ..roofline.place import overlap_note

        note = overlap_note(placements[0].workload, model)
        if note:
            click.echo(note)


@cli.command()
@click.option("--size", required=True, metavar="SIZE", help="Message size: 64K or 64KiB (binary), 1GB (10^9 bytes, as linkroof prints GB), 1GiB.")
@click.option("--pattern", default="p2p_write", show_default=True,
              help="p2p_write, p2p_read (or a collective name when NCCL sweeps are in the profile).")
@click.option("--dtype", help="Collectives: only this data type (fp32, bf16, fp16, ...; default: one row each).")
@click.option("--profile", "which", metavar="ID|FILE|reference", help=PROFILE_HELP)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def advise(ctx: click.Context, size: str, pattern: str, dtype: str | None, which: str | None, as_json: bool) -> None:
    """Which mechanism moves a message of this size fastest on this machine, by how
    much, with how many blocks, and where each reaches 50 % / 90 % of its peak."""
    from ..roofline.advise import advise as run_advise
    from ..units import parse_size

    try:
        nbytes = parse_size(size)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--size") from None
    if nbytes <= 0:
        raise click.BadParameter(f"{size!r}: a message size must be at least 1 byte", param_hint="--size")
    chosen = _load_profile(ctx, which)
    _banner(chosen)
    advice = run_advise(chosen, nbytes, pattern, dtype=dtype)
    if as_json:
        import dataclasses
        import json

        _echo_json(json.dumps({"size": advice.size, "pattern": advice.pattern,
                               "fastest": advice.fastest.mechanism if advice.fastest else None,
                               "margin": advice.margin, "notes": advice.notes,
                               "mechanisms": [dataclasses.asdict(m) for m in advice.mechanisms]}, indent=1))
        return
    if not advice.mechanisms:
        raise UserError(advice.notes[0] if advice.notes else "nothing to advise")
    from ..render import advice_view

    _console().print(advice_view(advice))


@cli.command()
@click.argument("kernel", metavar="MODULE:FUNCTION")
@click.option("--inputs", required=True, metavar="MODULE:FUNCTION", help="Returns the kernel's arguments (a tuple, "
              "a dict or one object); called again for fresh input sets when they fit in L2.")
@click.option("--reference", metavar="MODULE:FUNCTION", help="A baseline: checked against and timed the same way.")
@click.option("--workload", type=click.Path(dir_okay=False), help="What the kernel must do (TOML); link bytes default "
              "to what NVML's counters saw.")
@click.option("--profile", "which", metavar="ID|FILE|reference", help=PROFILE_HELP)
@click.option("--reps", type=click.IntRange(1), default=50, show_default=True)
@click.option("--warmup", type=click.IntRange(0), default=10, show_default=True)
@click.option("--rtol", type=click.FloatRange(0, 1e6), default=1e-3, show_default=True, callback=_finite,
              help="Relative tolerance of the check against --reference.")
@click.option("--atol", type=click.FloatRange(0, 1e30), default=1e-5, show_default=True, callback=_finite,
              help="Absolute tolerance of the check against --reference.")
@click.option("--no-counters", is_flag=True, help="Do not read NVML's NVLink / PCIe byte counters.")
@click.option("--plot", type=click.Path(dir_okay=False), help="Write the roofline with the kernel placed on it.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.option("--no-save", is_flag=True, help="Do not save the placements in the store.")
@click.option("--force", is_flag=True, help="Place the kernel even if the profile describes another machine.")
@click.option("--gated", is_flag=True, help="Queue the timed calls behind the spin gate (the GPU's own time, as the "
              "ceilings are measured); only for code that never waits on the host.")
@click.option("--no-timeline", is_flag=True, help="Do not record the calls' GPU timeline through CUPTI (the "
              "decomposition is then the cost model's, inferred).")
@click.option("--record-timeline", type=click.Path(dir_okay=False), help="Also write the raw activity records of "
              "the recorded calls to this JSON file.")
@click.option("--counters", "count_kernels", is_flag=True, help="Count each kernel's DRAM bytes, FLOPs per data type "
              "and NVLink bytes with Nsight Compute (ncu, in a child process, clocks as they are): --workload becomes "
              "optional, a given one is compared with the counts, and each kernel is placed by itself.")
@click.option("--record-counters", type=click.Path(dir_okay=False), help="Also write ncu's raw counter page (CSV) "
              "to this file.")
@click.option("--steady", is_flag=True, help="Run the call until the GPU's SM clock settles (at most 10 s) before "
              "timing it: the sustained state, as a long job runs (a power-capped GEMM runs 20 % slower than its "
              "first calls). Without it the first calls are timed, and where the clock drifts under them the call "
              "is timed again once settled, both figures with their clocks.")
@click.pass_context
def compare(ctx: click.Context, kernel: str, inputs: str, reference: str | None, workload: str | None,
            which: str | None, reps: int, warmup: int, rtol: float, atol: float, no_counters: bool, plot: str | None,
            as_json: bool, no_save: bool, force: bool, gated: bool, no_timeline: bool,
            record_timeline: str | None, count_kernels: bool, record_counters: str | None, steady: bool) -> None:
    """Time a kernel written in Python (CuPy, PyTorch, ...) on the GPU, count the bytes
    it moved over the links, and place it, its reference and the matching NCCL
    baseline on this machine's roofline. Under torchrun / mpirun every rank runs it
    and the slowest rank counts."""
    import dataclasses

    from ..profiler.compare import run_compare

    from ..roofline.workload import load_toml

    profile, here = _placement_profile(ctx, which, force, load_toml(workload) if workload else None)
    out = run_compare(kernel, inputs, reference, workload, profile, reps, warmup, rtol, atol, not no_counters,
                      topology=here, gated=gated, timeline=not no_timeline, count_kernels=count_kernels,
                      steady=steady)
    if out.result is None:
        return  # not rank 0
    if record_counters and out.counters_log:
        _write(record_counters, out.counters_log)
        click.echo(f"Wrote ncu's counter page to {record_counters}", err=True)
    if record_timeline and out.result.recording is not None:
        import json as _json

        _write(record_timeline, _json.dumps(out.result.recording) + "\n")
        click.echo(f"Wrote the recorded activities to {record_timeline}", err=True)
    placements = out.placements
    if plot:
        from ..dashboard.figures import roofline_figure
        from ..dashboard.report import write_figure
        from ..roofline.model import MachineModel

        write_figure(roofline_figure(MachineModel.from_profile(out.profile), placements), plot)
    if not no_save:
        from ..profiler.environment import collect_environment
        from ..profiler.session import make_profile

        saved = make_profile([out.topology], [collect_environment()], label=f"compare:{kernel}", notes=out.notes)
        saved = dataclasses.replace(saved, placements=tuple(placements))
        with _store(ctx) as store:
            store.put(saved)
            click.echo(f"Saved placements in profile {saved.id}", err=True)
    if as_json:
        import json

        from ..schema import to_dict

        r = out.result
        _echo_json(json.dumps({"kernel": kernel, "median_s": r.median_s, "times_s": r.times_s,
                               "input_sets": r.input_sets, "checked": r.checked,
                               "counter_bytes_per_call": {str(k): v for k, v in r.counter_bytes_per_call.items()},
                               "placements": to_dict(placements), "notes": out.notes,
                               "overhead_s": r.overhead_s, "host_s_per_call": r.host_s_per_call,
                               "gated_times_s": r.gated_times_s, "launch_share_s": r.launch_share_s,
                               "timeline": to_dict(r.timeline), "timeline_note": r.timeline_note,
                               "kernel_counters": out.kernel_counts, "counters_note": out.counters_note,
                               "clock": to_dict(r.clock), "gated_clock": to_dict(r.gated_clock),
                               "sustained_times_s": r.sustained_times_s, "sustained_clock": to_dict(r.sustained_clock),
                               "steady_note": r.steady_note, "host_verdict": _host_verdict(r),
                               "reference": _reference_json(out.reference, reference)}, indent=1))
        return
    from ..render import decomposition_view, kernels_table, placements_table

    _console().print(placements_table(placements))
    if out.result.timeline is not None:
        _console().print(kernels_table(out.result.timeline))
    if out.reference is not None and out.reference.timeline is not None:  # both sides measured alike
        _console().print(kernels_table(out.reference.timeline, title=f"Reference {out.reference.name}"))
    _console().print(decomposition_view(placements))
    for note in out.notes + [out.result.checked]:
        click.echo(note)


def _reference_json(r: Any, spec: str | None) -> dict[str, Any] | None:
    """The reference as measured: its times, timeline, clock state and host verdict, as
    the candidate's (None without --reference)."""
    if r is None:
        return None
    from ..schema import to_dict

    return {"function": spec, "name": r.name, "median_s": r.median_s, "times_s": r.times_s,
            "host_s_per_call": r.host_s_per_call, "timeline": to_dict(r.timeline), "timeline_note": r.timeline_note,
            "clock": to_dict(r.clock), "host_verdict": _host_verdict(r)}


def _host_verdict(r: Any) -> str | None:
    from ..roofline.timeline import host_verdict

    return host_verdict(r.timeline, r.median_s) if r.timeline is not None else None


@cli.command()
@click.argument("reference", metavar="REFERENCE")
@click.argument("candidates", nargs=-1, required=True, metavar="CANDIDATE...")
@click.option("--inputs", required=True, metavar="MODULE:FUNCTION|pkb:ROOT", help="Returns the arguments for "
              "(rank, world_size, trial), or takes no arguments (Python's, NumPy's, torch's and CuPy's generators are then "
              "seeded from the trial and rank first: the same inputs for the reference and every candidate); "
              "pkb:ROOT uses ParallelKernelBench's own create_input_tensor from its checkout at ROOT (the problem "
              "id from the file name).")
@click.option("--ranks", type=click.IntRange(1, 64), default=1, show_default=True, help="Ranks (GPUs) per run; "
              "several run under torchrun, every rank checked, the slowest timed.")
@click.option("--protocol", type=click.Choice(["linkroof", "pkb"]), default="linkroof", show_default=True,
              help="pkb: ParallelKernelBench's exact protocol (5 trials, 500 + 100 calls, the mean); linkroof: "
              "compare's timing and the measured timeline.")
@click.option("--trials", type=click.IntRange(1, 100), default=5, show_default=True)
@click.option("--atol", type=click.FloatRange(0, 1e30), default=1e-2, show_default=True, callback=_finite)
@click.option("--rtol", type=click.FloatRange(0, 1e6), default=1e-2, show_default=True, callback=_finite)
@click.option("--deadline", type=click.FloatRange(1, 86400), default=300.0, show_default=True, callback=_finite,
              help="Seconds a run may take before its ranks are named and killed (finite).")
@click.option("--workload", type=click.Path(dir_okay=False), help="What the kernel must do (TOML): places each "
              "candidate on this machine's roofline and cost bound, and sets its physical floor.")
@click.option("--profile", "which", metavar="ID|FILE|reference", help=PROFILE_HELP)
@click.option("--warmup", type=click.IntRange(0), default=500, show_default=True, help="pkb: warm-up calls.")
@click.option("--iters", type=click.IntRange(1), default=100, show_default=True, help="pkb: timed calls.")
@click.option("--m", "m", type=click.IntRange(1), default=1024, show_default=True, help="pkb: base shape rows.")
@click.option("--n", "n", type=click.IntRange(1), default=1024, show_default=True, help="pkb: base shape columns.")
@click.option("--dtype", default="bfloat16", show_default=True, help="pkb: the inputs' torch dtype.")
@click.option("--counters", is_flag=True, help="Count each correct one-rank candidate's kernels with Nsight Compute "
              "afterwards: its DRAM bytes and FLOPs give a physical floor of their own, and its longest kernel a "
              "why-sentence.")
@click.option("--max-output-bytes", type=click.IntRange(1), default=4 << 30, show_default=True,
              help="The most one rank's outputs of one trial may hold; a larger output is a failure row.")
@click.option("--max-memory", "max_memory", type=click.FloatRange(0.001, min_open=False), default=None,
              metavar="GIB", help="The most host memory (GiB) a target's processes may hold together, watched by "
              "the judge; over it the target is killed and its row says so. Default: half this machine's memory.")
@click.option("--format", "fmt", type=click.Choice(["linkroof", "kernelbench"]), default="linkroof",
              show_default=True, help="--json rows: linkroof's (PKB's field names kept), or KernelBench's "
              "KernelExecResult (compiled, correctness, runtime, runtime_stats, ref_runtime, metadata).")
@click.option("--sandbox", type=click.Choice(["auto", "namespaces", "none"]), default="auto", show_default=True,
              help="auto: each target in new PID, mount, IPC and network namespaces (read-only files but a fresh "
              "/tmp; as uid 65534 where it can run so) where this machine allows, else a plain session, said in "
              "each row; namespaces: the same, an error where not allowed; none: a plain session (docs/scoring.md: "
              "what each guarantees).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per candidate (JSON lines), nothing else.")
@click.pass_context
def score(ctx: click.Context, reference: str, candidates: tuple[str, ...], inputs: str, ranks: int, protocol: str,
          trials: int, atol: float, rtol: float, deadline: float, workload: str | None, which: str | None,
          warmup: int, iters: int, m: int, n: int, dtype: str, counters: bool, max_output_bytes: int,
          max_memory: float | None, fmt: str, sandbox: str, as_json: bool) -> None:
    """Score candidates (files with solution(*x), as ParallelKernelBench lays them out,
    or MODULE:FUNCTION) against a reference: correct over trials, timed, the speedup,
    and why a candidate is slow, from what was measured (its timeline, and with
    --workload its place on this machine's roofline and its physical floor).

    Each target runs in namespaces of its own where the machine allows (--sandbox),
    reports on a socket the judge connected before it started, sees no linkroof setting,
    and is killed whole at its end, daemons included. Each trial's inputs are drawn by
    the judge; the reference's outputs stay in the judge's memory; a reported time the
    judge's own clock contradicts makes the row tampered.
    A candidate that raises, hangs, exits, runs out of memory, returns what cannot be
    checked or forges a result gets a row saying so; one timed below the physical floor,
    or caught by the checks after the timing (timing functions replaced, work left on
    another stream, a cached output), is marked suspect and never ranked by speedup.

    Everything is checked before any child starts. Exit status: 0 when the reference ran
    and at least one candidate was scored; 4 when every candidate failed to run; 5 when
    the reference failed; 1 for bad input."""
    import json

    from ..scoring.score import exit_code, kernelbench_row
    from ..scoring.score import score as run_score
    from ..render import clean
    from ..roofline.workload import load_toml

    wl = load_toml(workload) if workload else None
    profile = None
    if wl is not None or counters:
        profile, _ = _placement_profile(ctx, which, True, wl)

    def emit(row: dict) -> None:
        if as_json:
            _echo_json(json.dumps(kernelbench_row(row) if fmt == "kernelbench" else row, default=str))
        else:
            click.echo(clean(f"{row['candidate']}: " + ("correct" if row.get("correct") else "NOT correct") +
                             f" - {row['feedback']}"))

    rows = run_score(reference, list(candidates), inputs, ranks, protocol, trials, atol, rtol, deadline, wl, profile,
                     warmup, iters, (m, n), dtype, on_row=emit, max_output_bytes=max_output_bytes, counters=counters,
                     max_memory_bytes=None if max_memory is None else int(max_memory * 2**30),
                     sandbox=sandbox)
    if not as_json:
        from ..render import score_view

        _console().print(score_view(rows))
    ctx.exit(exit_code(rows))


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--profile", "which", metavar="ID|FILE|reference", help=PROFILE_HELP)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Also write one row per collective call "
              "to this CSV file.")
@click.option("--no-save", is_flag=True, help="Do not save the calls' placements in the store.")
@click.option("--force", is_flag=True, help="Place against the profile even if it describes another machine.")
@click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Where the ranks are read and placed: local processes (one per core), or a Dask cluster "
                   "(--scheduler ADDRESS, else a local one); matching across ranks runs here.")
@click.option("--scheduler", metavar="ADDRESS", help="A Dask scheduler's address (tcp://host:8786) for --engine dask.")
@click.option("--workers", type=click.IntRange(1, 4096), help="Processes to read with (default: one per core, "
              "at most one per file).")
@click.option("--clock-tolerance", "tolerance_ms", type=click.FloatRange(0, 60_000), default=1.0, show_default=True,
              metavar="MS", help="How far apart one collective's kernels on two ranks may seem and still be one call "
              "(ranks on several hosts: their clocks' difference). On one host's clock they overlap.")
@click.pass_context
def trace(ctx: click.Context, files: tuple[str, ...], which: str | None, as_json: bool, csv_path: str | None,
          no_save: bool, force: bool, engine: str, scheduler: str | None, workers: int | None,
          tolerance_ms: float) -> None:
    """Read PyTorch profiler traces (one file per rank, .json or .json.gz) and place
    every collective against this machine: its size, group and busbw, NCCL's time here
    at that size and the cost-model bound; each step's GPU time by class, communication
    overlapped and exposed; across ranks, the arrival skew and transfer time.

    Several ranks are read and placed in parallel, each rank's step where it is read
    (local processes, or Dask workers with --engine dask for jobs of hundreds of ranks);
    only the compact results come back to be matched across ranks."""
    import os
    import sys

    from ..readers.traces import analyze, analyze_job, read_trace

    if scheduler is not None and engine != "dask":
        raise click.UsageError("--scheduler needs --engine dask")
    if scheduler is not None:
        from ..readers.traces import check_scheduler

        check_scheduler(scheduler)  # one line before any file is read or any connection tried
    for f in files:  # every file checked before any is read (one clear line for a bad name)
        from ..files import regular_file

        regular_file(f, "trace")
    profile, here = _placement_profile(ctx, which, force)
    big = len(files) > 1 or sum(os.path.getsize(f) for f in files) > (64 << 20)
    bar = None
    if big and sys.stderr.isatty():  # a bar on the terminal for traces that take seconds
        from ..profiler.bench import _ProgressBar

        bar = _ProgressBar()
    try:
        if len(files) == 1 and engine == "local":
            one = read_trace(files[0], (lambda d, t: bar.update(d, t, f"reading {Path(files[0]).name}"))
                             if bar else None)
            report = analyze([one], profile)
        else:
            report = analyze_job(list(files), profile, engine=engine, workers=workers, scheduler=scheduler,
                                 progress=bar.update if bar else None, tolerance_s=tolerance_ms * 1e-3)
    finally:
        if bar is not None:
            bar.close()
    placements = [r.placement for r in report.rows if r.placement is not None]
    if csv_path:
        from ..files import csv_text

        _write(csv_path, csv_text(report.to_dataframe()))
        click.echo(f"Wrote {len(report.rows)} calls to {csv_path}", err=True)
    if placements and not no_save:
        import dataclasses

        from ..profiler.environment import collect_environment
        from ..profiler.session import make_profile

        saved = make_profile([here or profile.topology], [collect_environment()],
                             label=f"trace:{Path(files[0]).name}" + (f" +{len(files) - 1}" if len(files) > 1 else ""),
                             notes=report.warnings)
        saved = dataclasses.replace(saved, placements=tuple(placements))
        with _store(ctx) as store:
            store.put(saved)
            click.echo(f"Saved {len(placements)} placements in profile {saved.id}", err=True)
    if as_json:
        _stream_json(report.to_dict())
        return
    from ..render import trace_view

    _console().print(trace_view(report))


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--profile", "which", metavar="ID|FILE|reference", help=PROFILE_HELP)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Also write one row per collective to this "
              "CSV file.")
@click.option("--force", is_flag=True, help="Place against the profile even if it describes another machine.")
@click.pass_context
def telemetry(ctx: click.Context, files: tuple[str, ...], which: str | None, as_json: bool, csv_path: str | None,
              force: bool) -> None:
    """Read NCCL's own telemetry and place every collective against this machine.

    FILES: NCCL Inspector logs (one JSON record per line, `<host>-pid<pid>.log`) or
    Prometheus textfiles (`nccl_inspector_metrics_<uuid>.prom`), PyTorch Flight
    Recorder dumps (one per rank, pickle or JSON; the rank is the name's trailing
    number), or nccl-tests JSON written with `-I 1 -J FILE.json`; the format is told
    from each file's contents. Each collective gets NCCL's time here at its size and
    rank count and the cost-model bound; across ranks, each call's skew and the rank
    the others waited for (measured where the file records kernel starts, else
    inferred, and said); per rank and node, how often each was last."""
    from ..readers.telemetry import analyze_telemetry, read_telemetry

    tels = [read_telemetry(f) for f in files]
    profile, _here = _placement_profile(ctx, which, force)
    report = analyze_telemetry(tels, profile)
    from ..readers.flightrec import diagnose_hang, dumps_of

    hang = diagnose_hang(dumps_of(tels)) if dumps_of(tels) else None
    if csv_path:
        import csv
        import io

        buf = io.StringIO()
        rows = [r.to_dict() for r in report.rows]
        w = csv.DictWriter(buf, fieldnames=list(rows[0]) if rows else ["source"], extrasaction="ignore")
        w.writeheader()
        w.writerows({k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in r.items()} for r in rows)
        _write(csv_path, buf.getvalue())
        click.echo(f"Wrote {len(rows)} calls to {csv_path}", err=True)
    if as_json:
        doc = report.to_dict()
        if hang:
            doc["hang"] = hang.to_dict()
        _echo_json(json.dumps(doc, indent=1))
        return
    from ..render import telemetry_view

    _console().print(telemetry_view(report))
    if hang:
        from rich.text import Text

        from ..render import clean

        who = f"rank{'s' if len(hang.behind) > 1 else ''} {','.join(map(str, hang.behind))}"
        head = f"Hang: {who} {'are' if len(hang.behind) > 1 else 'is'} behind" if hang.behind else "Hang"
        _console().print(Text(clean(head + " (Flight Recorder, by process group)"), style="bold"))
        for line in hang.sentences():
            _console().print(Text(clean("  " + line)))
