"""The `linkroof` command. Each command parses, calls the library, renders; no logic here."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import click

from . import __version__
from .errors import LinkroofError

JSON_HELP = "Print JSON on stdout and nothing else there."


class UserError(click.ClickException):
    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(message)
        self.exit_code = exit_code

    def show(self, file: Any = None) -> None:
        click.echo(f"linkroof: {self.format_message()}", err=True)


class Group(click.Group):
    """Turns errors a user can cause into one line and an exit code, not a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except LinkroofError as e:
            raise UserError(str(e), e.exit_code) from None
        except KeyboardInterrupt:
            raise UserError("interrupted", 130) from None


def _console(err: bool = False) -> Any:
    from rich.console import Console

    return Console(stderr=err, soft_wrap=False, width=None if sys.stdout.isatty() else 160)


def _warn(text: str) -> None:
    """A warning on stderr, yellow unless NO_COLOR is set (https://no-color.org); any
    text from a profile in it shown as text (control characters escaped)."""
    import os

    from .render import clean

    text = "\n".join(clean(line) for line in text.split("\n"))
    if os.environ.get("NO_COLOR"):
        click.echo(text, err=True)
    else:
        click.secho(text, fg="yellow", err=True)


def _echo_json(text: str) -> None:
    click.echo(text)


def _write(path: str | Path, text: str) -> None:
    """Write a file the user asked for; a missing folder or a read-only file system is
    one line, not a traceback."""
    try:
        Path(path).write_text(text)
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror or e}") from None


def _finite(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """An option's number must be a number: NaN passes every range check and is refused here."""
    if isinstance(value, float) and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a number")
    return value


def _store(ctx: click.Context) -> Any:
    from .store import Store

    return Store(ctx.obj.get("store"))


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="linkroof")
@click.option("--store", type=click.Path(dir_okay=False), envvar="LINKROOF_STORE", default=None,
              help="SQLite file of saved profiles (default: $LINKROOF_STORE, else your data directory).")
@click.pass_context
def cli(ctx: click.Context, store: str | None) -> None:
    """linkroof: what your multi-GPU machine's links deliver, by which mechanism, and how
    close your kernels come to it.

    \b
    Start with:
      linkroof run            probe, quick bench (GPU + CuPy), save, open the dashboard
                              (no GPU: the bundled 2xH200 reference, said so)
      linkroof probe          GPUs, NVLinks, PCIe, NUMA, NICs and spec ceilings
      linkroof bench          measure every path by every mechanism (--suite quick|default|full)
      linkroof roofline       ceilings spec vs measured; --workload/--time places a kernel
      linkroof advise         the fastest mechanism for a message size
      linkroof compare        time your kernel, count its link bytes, place it
      linkroof dashboard      the web dashboard; linkroof report: the same as one HTML file
      linkroof import         nvbandwidth / nccl-tests results
      linkroof runs list      profiles saved in the store
    """
    ctx.ensure_object(dict)
    ctx.obj["store"] = store
    _HERE.clear()  # this machine is probed afresh by each command


@cli.command()
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.option("--record", type=click.Path(dir_okay=False, writable=True),
              help="Save every raw NVML and sysfs answer (errors too) to this file, for --replay.")
@click.option("--replay", metavar="NAME|FILE",
              help="Rebuild the topology from a recording instead of the driver: a bundled name "
                   "(e.g. h200x2) or a file written by --record.")
def probe(as_json: bool, record: str | None, replay: str | None) -> None:
    """Discover GPUs, NVLinks, PCIe, NUMA and NICs, and derive spec ceilings.

    Reads NVML and sysfs only: nothing is run on the GPUs. Without an NVIDIA driver or
    GPU it says so and exits with status 3; --replay works anywhere."""
    from .profiler.probe import probe as run_probe

    if record and replay:
        raise click.UsageError("--record and --replay exclude each other")
    topology = run_probe(replay=replay, record=record)
    if as_json:
        from .schema import dumps

        _echo_json(dumps(topology))
        return
    from .render import topology_view

    _console().print(topology_view(topology))
    if record:
        click.echo(f"Recorded every NVML and sysfs answer to {record} (replay with --replay {record}).", err=True)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.option("--no-save", is_flag=True, help="Do not save the profile in the store.")
@click.option("--label", default=None, help="A label for the saved profile.")
@click.option("--no-bench", is_flag=True, help="Probe only, even where a GPU and CuPy are present.")
@click.option("--dashboard/--no-dashboard", "serve", default=None,
              help="Open the dashboard afterwards (default: when run in a terminal; otherwise a report file is written).")
@click.option("--port", default=8050, show_default=True, type=click.IntRange(1, 65535))
@click.pass_context
def run(ctx: click.Context, as_json: bool, no_save: bool, label: str | None, no_bench: bool, serve: bool | None,
        port: int) -> None:
    """The whole job: probe this machine, run the quick benchmark suite when a GPU and
    CuPy are here, save the profile, and open the dashboard on it.

    With no NVIDIA GPU here, uses the bundled reference profile measured on a real
    2xH200 machine instead, and says so."""
    import dataclasses

    from .profiler.session import probe_profile

    profile, fallback = probe_profile(allow_reference=True)
    if fallback:
        _warn(fallback)
    elif not no_bench:
        from .microbench.cuda import CudaUnavailable

        try:
            from .profiler import bench as api

            plan, topology = api.plan_for(suite="quick")
            click.echo("Running the quick benchmark suite (linkroof bench --suite quick) ...", err=True)
            profile = api.run(plan, topology, label="run:quick", progress=sys.stderr.isatty())
        except CudaUnavailable as e:
            _warn(f"Not measuring: {e}. Probe saved; install linkroof[cuda13] (or [cuda12]) to measure.")
    if label:
        profile = dataclasses.replace(profile, label=label)
    saved_to = None
    if not no_save:
        with _store(ctx) as store:
            try:
                store.put(profile)  # the reference is stored once, however often shown
                saved_to = store.path
            except LinkroofError:
                if fallback is None:
                    raise
                profile = store.get(profile.id)  # extended since (import --into): kept, and shown as it is
                _warn(f"Profile {profile.id} in the store differs from the bundled reference (figures were added "
                      "to it): kept as it is, nothing overwritten; showing it.")
    if as_json:
        from .schema import dumps

        # what is printed says what it is (the stored copy stays the bundled document)
        _echo_json(dumps(dataclasses.replace(profile, notes=profile.notes + (fallback,)) if fallback else profile))
    else:
        from .render import bench_summary, topology_view

        _console().print(topology_view(profile.topology))
        if profile.measurements:
            _console().print(bench_summary(profile))
        if fallback:
            _warn(fallback)  # once more under the tables, where a reader ends up
    if saved_to:
        click.echo(f"Saved profile {profile.id} to {saved_to}", err=True)
    if as_json:
        return
    if serve is None:
        serve = sys.stdin.isatty() and sys.stdout.isatty()
    if serve:
        from .dashboard.app import create_app

        click.echo(f"Dashboard on http://127.0.0.1:{port}/  (Ctrl-C to stop)", err=True)
        create_app(ctx.obj.get("store"), profile, here=_probe_here()).run(host="127.0.0.1", port=port)
    else:
        from .dashboard.report import report_html

        try:
            Path("linkroof-report.html").write_text(report_html(profile, fallback))
        except OSError as e:
            saved = f"profile {profile.id} is saved; " if saved_to else ""
            raise UserError(f"cannot write linkroof-report.html in this folder ({e.strerror or e}); {saved}"
                            "`linkroof report --out PATH` writes the report elsewhere") from None
        click.echo("Wrote linkroof-report.html (open it in a browser; `linkroof dashboard` serves the same live).",
                   err=True)


@cli.command()
@click.option("--suite", type=click.Choice(["quick", "default", "full"]), default="default", show_default=True,
              help="quick: the headline figures in seconds; default: every family once; full: every pair, size and "
                   "mechanism.")
@click.option("--gpus", metavar="LIST", help="GPUs to use, e.g. 0,1 (default: all).")
@click.option("--only", metavar="FAMILIES",
              help="Comma-separated families: host, local, peer_ce, peer_sm, peer_tma, reduce, concurrency, "
                   "latency, launch, sync, sweep, compute, overlap, nccl, oneshot, multicast.")
@click.option("--sizes", metavar="RANGE", help="Message sizes of the sweeps and collectives, e.g. 4K:1G (x4 steps), "
              "8:1G:2 (x2 steps, like nccl-tests -b 8 -e 1G -f 2) or 64K,1M.")
@click.option("--reps", type=click.IntRange(1, 1000), help="Repetitions per figure (default: by suite).")
@click.option("--allow-multicast", is_flag=True,
              help="Also run the NVSwitch multicast benchmark (refused where multicast is disabled; unvalidated).")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.option("--out", type=click.Path(dir_okay=False), help="Also write the profile JSON to this file.")
@click.option("--no-save", is_flag=True, help="Do not save the profile in the store.")
@click.option("--label", default="", help="A label for the saved profile.")
@click.option("--plan", "show_plan", is_flag=True, help="Print what would run, and run nothing.")
@click.option("--replay", metavar="NAME|FILE", help="Plan against a recorded topology (with --plan).")
@click.option("--rank-timeout", type=click.FloatRange(1, 86400), default=600, show_default=True, callback=_finite,
              help="Under mpirun/srun/torchrun: seconds rank 0 waits for the other ranks' results.")
@click.option("--cpu-standin", is_flag=True, hidden=True,
              help="Replace the GPU work by a CPU copy (tests the multi-process orchestration without GPUs).")
@click.pass_context
def bench(ctx: click.Context, suite: str, gpus: str | None, only: str | None, sizes: str | None, reps: int | None,
          allow_multicast: bool, as_json: bool, out: str | None, no_save: bool, label: str, show_plan: bool,
          replay: str | None, rank_timeout: float, cpu_standin: bool) -> None:
    """Measure every path of this machine by every mechanism: host links, local HBM, peer
    copies (copy engine, SM, TMA), reductions into peer memory, concurrency, latency,
    size sweeps, compute peaks, NCCL collectives (device time and time with the host's
    launch), and the cost model's terms (launch, sync, GEMM beside communication,
    one-shot collectives).

    Figures are GPU times from CUDA events, queued behind a spin kernel so Python's
    enqueue cost never reaches them; every transfer and collective result is verified.
    Saves a profile in the store; Ctrl-C keeps what was measured. Under mpirun, srun or
    torchrun, one rank per GPU; rank 0 merges and saves."""
    from .profiler import bench as api
    from .units import parse_size_range

    try:
        gpu_list = [int(g) for g in gpus.split(",")] if gpus else None
    except ValueError:
        raise click.BadParameter(f"not a list of GPU indices: {gpus!r}", param_hint="--gpus") from None
    if gpu_list is not None and len(set(gpu_list)) != len(gpu_list):
        dup = next(g for g in gpu_list if gpu_list.count(g) > 1)
        raise click.BadParameter(f"GPU {dup} is listed twice in {gpus!r}", param_hint="--gpus")
    if gpu_list is not None and any(g < 0 for g in gpu_list):
        raise click.BadParameter(f"a GPU index is not negative: {gpus!r}", param_hint="--gpus")
    families = [f.strip() for f in only.split(",") if f.strip()] if only is not None else None
    if only is not None and not families:
        raise click.BadParameter(f"{only!r} names no family", param_hint="--only")
    try:
        size_list = parse_size_range(sizes, factor=4) if sizes else None
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--sizes") from None
    if (families and "multicast" in families) or allow_multicast:
        from .microbench.multicast import check_allowed

        check_allowed(allow_multicast)
    if replay and not show_plan:
        raise click.UsageError("--replay plans against a recording; add --plan (nothing can run without the GPUs)")
    from .profiler.launch import connect, detect

    launch = detect()
    if (launch.distributed or cpu_standin) and not show_plan:
        _bench_distributed(ctx, connect(launch), suite, families, reps, label, cpu_standin, rank_timeout, out, no_save,
                           as_json, size_list)
        return
    try:
        plan, topology = api.plan_for(suite=suite, gpus=gpu_list, only=families, sizes=size_list, reps=reps,
                                      allow_multicast=allow_multicast, replay=replay)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None
    if show_plan:
        from .render import plan_table

        if as_json:
            import json

            _echo_json(json.dumps([{"family": i.family, "title": i.title, "function": i.function_name, "args": i.kwargs}
                                   for i in plan.items], indent=1))
        else:
            _console().print(plan_table(plan))
        return
    import signal

    def terminated(signum: int, frame: Any) -> None:  # `timeout`, a batch system: keep what was measured
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        profile = api.run(plan, topology, label=label, progress=not as_json or sys.stderr.isatty())
    finally:
        signal.signal(signal.SIGTERM, previous)
    _deliver(ctx, profile, out, no_save, as_json)


def _deliver(ctx: click.Context, profile: Any, out: str | None, no_save: bool, as_json: bool, what: str = "") -> None:
    """Write, save and print a measured profile (bench, distributed bench)."""
    from .schema import dumps

    if out:
        _write(out, dumps(profile) + "\n")
        click.echo(f"Wrote {out}", err=True)
    if not no_save:
        with _store(ctx) as store:
            store.put(profile)
            click.echo(f"Saved profile {profile.id}{what} to {store.path}", err=True)
    if as_json:
        _echo_json(dumps(profile))
    else:
        from .render import bench_summary

        _console().print(bench_summary(profile))


@cli.command("import")
@click.argument("tool", type=click.Choice(["nvbandwidth", "nccl-tests"]))
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--into", "into", metavar="PROFILE_ID", help="Add the figures to this stored profile instead of a new one.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.option("--no-save", is_flag=True, help="Do not save anything in the store.")
@click.pass_context
def import_(ctx: click.Context, tool: str, file: str, into: str | None, as_json: bool, no_save: bool) -> None:
    """Import nvbandwidth (text or -j JSON) or nccl-tests (text or -J JSON) results as
    measurements labelled with their source. The whole file is checked first: a
    malformed or truncated file changes nothing."""
    import dataclasses

    from .profiler.importers import bare_topology, import_file, imported_environment
    from .profiler.session import make_profile

    imported = import_file(tool, file)
    label = Path(file).name
    if imported.skipped:
        click.echo(f"Skipped {len(imported.skipped)} {tool} tests linkroof does not import: "
                   + ", ".join(imported.skipped), err=True)
    if not imported.measurements:
        raise UserError(f"{file}: nothing imported (no {tool} test linkroof knows); nothing saved")
    with _store(ctx) as store:
        if into:
            base = store.get(into)
            # a figure already in the profile (the same file imported twice) is not added again
            def same(m: Any) -> tuple[Any, ...]:
                return (m.spec.key(), m.source, m.times_s, tuple(sorted(m.reported.items())))

            have = {same(m) for m in base.measurements}
            fresh = [m for m in imported.measurements if same(m) not in have]
            if not fresh:
                raise UserError(f"{file}: every one of its {len(imported.measurements)} figures is already in profile "
                                f"{base.id}: nothing added")
            if len(fresh) < len(imported.measurements):
                click.echo(f"{len(imported.measurements) - len(fresh)} figures of {file} are already in profile "
                           f"{base.id}: not added again", err=True)
            imported.measurements = fresh
            profile = dataclasses.replace(base, measurements=base.measurements + tuple(imported.measurements),
                                          notes=base.notes + tuple(f"{tool} {label}: {n}" for n in imported.notes))
        else:
            profile = make_profile([bare_topology(imported, label)], [imported_environment(imported)],
                                   imported.measurements, label=f"import:{tool}:{label}", notes=imported.notes)
        if not no_save:
            store.put(profile, replace=bool(into))
    if as_json:
        from .schema import dumps

        _echo_json(dumps(profile))
    else:
        from .render import bench_summary

        _console().print(bench_summary(dataclasses.replace(profile, measurements=tuple(imported.measurements))))
    click.echo(f"Imported {len(imported.measurements)} {tool} figures into profile {profile.id}"
               + ("" if not no_save else " (not saved)"), err=True)


def _load_profile(ctx: click.Context, which: str | None) -> Any:
    """The --profile option through the one resolver (profiler.session)."""
    from .profiler.session import resolve_profile

    profile, note = resolve_profile(which, ctx.obj.get("store"))
    if note:
        click.echo(note, err=True)
    return profile


_HERE: list[Any] = []


def _probe_here() -> Any:
    """This machine's topology, or None where no GPU can be probed (probed once a run)."""
    from .errors import NoGpuError
    from .profiler import probe as probe_mod

    if not _HERE:
        try:
            _HERE.append(probe_mod.probe())
        except NoGpuError:
            _HERE.append(None)
    return _HERE[0]


def _banner(profile: Any) -> str | None:
    """Say first, on stderr, when the profile shown is not this machine's (the bundled
    reference, or another machine's); the same line tops the dashboard and the report."""
    from .profiler.session import provenance

    text = provenance(profile, _probe_here())
    if text:
        _warn(text)
    return text


def _placement_profile(ctx: click.Context, which: str | None, force: bool, workload: Any = None) -> tuple[Any, Any]:
    """The profile a workload is placed against, and this machine's topology (None
    without a GPU): the one named (refused if it describes another machine, unless
    forced), else the newest profile of this machine holding the ceilings the workload
    needs (said which, and why)."""
    if which is not None:
        profile = _load_profile(ctx, which)
        return profile, _same_machine(profile, force)
    from .profiler.session import pick_profile

    here = _probe_here()
    profile, why = pick_profile(ctx.obj.get("store"), here, workload)
    _say_profile(profile, why)
    _banner(profile)
    if here is None:
        click.echo("No GPU here: cannot check that this profile describes the machine the time came from.", err=True)
    return profile, here


def _say_profile(profile: Any, why: str = "") -> None:
    from .render import clean

    click.echo(clean(f"Using profile {profile.id} ({profile.label or 'no label'}, {profile.created_at[:19]}, "
                     f"{', '.join(profile.hostnames)})") + (f": {clean(why)}" if why else "") + ".", err=True)


def _same_machine(profile: Any, force: bool) -> Any:
    """Say which profile places the workload, and refuse one measured on another machine
    (GPU model, count, active NVLinks) unless forced. Returns this machine's topology,
    or None where no GPU can be probed (then nothing can be checked, and it says so)."""
    from .roofline.summaries import machine_differences

    _say_profile(profile)
    here = _probe_here()
    if here is None:
        click.echo("No GPU here: cannot check that this profile describes the machine the time came from.", err=True)
        return None
    diffs = machine_differences(profile.topology, here)
    if diffs and not force:
        raise UserError(f"profile {profile.id} describes another machine ({'; '.join(diffs)}): measure this one "
                        "(linkroof bench), choose another with --profile, or --force to place against it anyway")
    if diffs:
        _warn(f"Placing against another machine's profile (--force): {'; '.join(diffs)}.")
    return here


FITS_NOTE = ("time = latency_s + size / bandwidth_bytes_per_s fitted to the points: curve parameters, not link "
             "properties (the cost model bounds with the measured points' lower envelope, never with a fit)")
PROFILE_HELP = "Profile id (or prefix), a profile JSON file, or 'reference' (default: newest in the store)."


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
    from .roofline.model import MachineModel
    from .roofline.place import place
    from .roofline.workload import load_toml
    from .units import parse_time

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
        from .roofline.baseline import nccl_baseline
        from .roofline.cost import with_cost

        from .roofline.place import place_spec

        base = nccl_baseline(profile, wl)
        spec, spec_notes = place_spec(wl, seconds, model)
        placements = [with_cost(place(wl, seconds, model, "measured"), profile, model, launch_path, launches, syncs,
                                sync_kind, base.median_s if base else None)] + spec
        for n in spec_notes:
            click.echo(n, err=True)
    if plot:
        from .dashboard.figures import roofline_figure
        from .dashboard.report import write_figure

        write_figure(roofline_figure(model, placements[:1]), plot)
        click.echo(f"Wrote {plot}", err=True)
    if as_json:
        import json

        from .schema import to_dict

        from .roofline.cost import machine_terms

        doc = {"profile": profile.id, "provenance": banner, "gpu": model.gpu_name, "roofs": to_dict(model.roofs),
               "ridge_points": [{"dtype": d, "resource": r, "flop_per_byte": v} for d, r, v in model.ridge_points()],
               "cost_terms": machine_terms(profile), "placements": to_dict(placements)}
        if show_fits:
            from .roofline.fits import profile_fits

            doc["fits"] = [{"name": f.name, "worst_error": f.worst_error, "points": len(f.points),
                            "segments": to_dict(f.segments)} for f in profile_fits(profile)]
            doc["fits_note"] = FITS_NOTE
        _echo_json(json.dumps(doc, indent=1))
        return
    from .render import placements_table, roofs_table, terms_table
    from .roofline.cost import machine_terms

    _console().print(roofs_table(model, profile))
    terms = machine_terms(profile)
    if terms:
        _console().print(terms_table(terms))
    else:
        click.echo("No launch or sync figures in this profile: `linkroof bench --only launch,sync` measures them.")
    if show_fits:
        from .render import fits_table
        from .roofline.fits import profile_fits

        _console().print(fits_table(profile_fits(profile)))
    if placements:
        _console().print(placements_table(placements))
        from .render import decomposition_view

        _console().print(decomposition_view(placements))
        from .roofline.place import overlap_note

        note = overlap_note(placements[0].workload, model)
        if note:
            click.echo(note)


@cli.command()
@click.option("--size", required=True, metavar="SIZE", help="Message size, e.g. 64K.")
@click.option("--pattern", default="p2p_write", show_default=True,
              help="p2p_write, p2p_read (or a collective name when NCCL sweeps are in the profile).")
@click.option("--dtype", help="Collectives: only this data type (fp32, bf16, fp16, ...; default: one row each).")
@click.option("--profile", "which", metavar="ID|FILE|reference", help=PROFILE_HELP)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def advise(ctx: click.Context, size: str, pattern: str, dtype: str | None, which: str | None, as_json: bool) -> None:
    """Which mechanism moves a message of this size fastest on this machine, by how
    much, with how many blocks, and where each reaches 50 % / 90 % of its peak."""
    from .roofline.advise import advise as run_advise
    from .units import parse_size

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
    from .render import advice_view

    _console().print(advice_view(advice))


def _bench_distributed(ctx: click.Context, comm: Any, suite: str, families: list[str] | None, reps: int | None,
                       label: str, standin: bool, timeout_s: float, out: str | None, no_save: bool,
                       as_json: bool, sizes: list[int] | None = None) -> None:
    """One rank per GPU under a launcher; rank 0 merges, saves and prints."""
    from .profiler.distributed import incomplete, run_distributed

    profile = run_distributed(comm, suite, families, reps, label, standin, timeout_s, sizes)
    if profile is None or not incomplete(profile, comm.ctx.world):
        comm.close()
    if profile is None:
        if comm.ctx.rank != 0:
            click.echo(f"rank {comm.ctx.rank} on {comm.ctx.hostname}: results sent to rank 0", err=True)
            return
        raise UserError("no rank produced a topology; nothing to save")
    _deliver(ctx, profile, out, no_save, as_json, f" ({comm.ctx.world} ranks)")
    if incomplete(profile, comm.ctx.world):
        click.echo("linkroof: some ranks failed or did not report; what was measured is saved", err=True)
        sys.stdout.flush()
        sys.stderr.flush()
        comm.abort(1)  # also ends ranks that hang


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
@click.pass_context
def compare(ctx: click.Context, kernel: str, inputs: str, reference: str | None, workload: str | None,
            which: str | None, reps: int, warmup: int, rtol: float, atol: float, no_counters: bool, plot: str | None,
            as_json: bool, no_save: bool, force: bool, gated: bool, no_timeline: bool,
            record_timeline: str | None, count_kernels: bool, record_counters: str | None) -> None:
    """Time a kernel written in Python (CuPy, PyTorch, ...) on the GPU, count the bytes
    it moved over the links, and place it, its reference and the matching NCCL
    baseline on this machine's roofline. Under torchrun / mpirun every rank runs it
    and the slowest rank counts."""
    import dataclasses

    from .profiler.compare import run_compare

    from .roofline.workload import load_toml

    profile, here = _placement_profile(ctx, which, force, load_toml(workload) if workload else None)
    out = run_compare(kernel, inputs, reference, workload, profile, reps, warmup, rtol, atol, not no_counters,
                      topology=here, gated=gated, timeline=not no_timeline, count_kernels=count_kernels)
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
        from .dashboard.figures import roofline_figure
        from .dashboard.report import write_figure
        from .roofline.model import MachineModel

        write_figure(roofline_figure(MachineModel.from_profile(out.profile), placements), plot)
    if not no_save:
        from .profiler.environment import collect_environment
        from .profiler.session import make_profile

        saved = make_profile([out.topology], [collect_environment()], label=f"compare:{kernel}", notes=out.notes)
        saved = dataclasses.replace(saved, placements=tuple(placements))
        with _store(ctx) as store:
            store.put(saved)
            click.echo(f"Saved placements in profile {saved.id}", err=True)
    if as_json:
        import json

        from .schema import to_dict

        r = out.result
        _echo_json(json.dumps({"kernel": kernel, "median_s": r.median_s, "times_s": r.times_s,
                               "input_sets": r.input_sets, "checked": r.checked,
                               "counter_bytes_per_call": {str(k): v for k, v in r.counter_bytes_per_call.items()},
                               "placements": to_dict(placements), "notes": out.notes,
                               "overhead_s": r.overhead_s, "host_s_per_call": r.host_s_per_call,
                               "gated_times_s": r.gated_times_s, "launch_share_s": r.launch_share_s,
                               "timeline": to_dict(r.timeline), "timeline_note": r.timeline_note,
                               "kernel_counters": out.kernel_counts, "counters_note": out.counters_note}, indent=1))
        return
    from .render import decomposition_view, kernels_table, placements_table

    _console().print(placements_table(placements))
    if out.result.timeline is not None:
        _console().print(kernels_table(out.result.timeline))
    _console().print(decomposition_view(placements))
    for note in out.notes + [out.result.checked]:
        click.echo(note)


@cli.command()
@click.argument("reference", metavar="REFERENCE")
@click.argument("candidates", nargs=-1, required=True, metavar="CANDIDATE...")
@click.option("--inputs", required=True, metavar="MODULE:FUNCTION|pkb:ROOT", help="Returns the arguments for "
              "(rank, world_size, trial); pkb:ROOT uses ParallelKernelBench's own create_input_tensor from its "
              "checkout at ROOT (the problem id from the file name).")
@click.option("--ranks", type=click.IntRange(1, 64), default=1, show_default=True, help="Ranks (GPUs) per run; "
              "several run under torchrun, every rank checked, the slowest timed.")
@click.option("--protocol", type=click.Choice(["linkroof", "pkb"]), default="linkroof", show_default=True,
              help="pkb: ParallelKernelBench's exact protocol (5 trials, 500 + 100 calls, the mean); linkroof: "
              "compare's timing and the measured timeline.")
@click.option("--trials", type=click.IntRange(1, 100), default=5, show_default=True)
@click.option("--atol", type=click.FloatRange(0, 1e30), default=1e-2, show_default=True, callback=_finite)
@click.option("--rtol", type=click.FloatRange(0, 1e6), default=1e-2, show_default=True, callback=_finite)
@click.option("--deadline", type=click.FloatRange(1, 86400), default=300.0, show_default=True,
              help="Seconds a run may take before its ranks are named and killed.")
@click.option("--workload", type=click.Path(dir_okay=False), help="What the kernel must do (TOML): places each "
              "candidate on this machine's roofline and cost bound.")
@click.option("--profile", "which", metavar="ID|FILE|reference", help=PROFILE_HELP)
@click.option("--warmup", type=click.IntRange(0), default=500, show_default=True, help="pkb: warm-up calls.")
@click.option("--iters", type=click.IntRange(1), default=100, show_default=True, help="pkb: timed calls.")
@click.option("--m", "m", type=click.IntRange(1), default=1024, show_default=True, help="pkb: base shape rows.")
@click.option("--n", "n", type=click.IntRange(1), default=1024, show_default=True, help="pkb: base shape columns.")
@click.option("--dtype", default="bfloat16", show_default=True, help="pkb: the inputs' torch dtype.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per candidate (JSON lines), nothing else.")
@click.pass_context
def score(ctx: click.Context, reference: str, candidates: tuple[str, ...], inputs: str, ranks: int, protocol: str,
          trials: int, atol: float, rtol: float, deadline: float, workload: str | None, which: str | None,
          warmup: int, iters: int, m: int, n: int, dtype: str, as_json: bool) -> None:
    """Score candidates (files with solution(*x), as ParallelKernelBench lays them out,
    or MODULE:FUNCTION) against a reference: correct over trials, timed, the speedup,
    and why a candidate is slow, from what was measured (its timeline, and with
    --workload its place on this machine's roofline). Each runs in its own process; a
    candidate that raises, hangs or runs out of memory gets a row saying so."""
    import json

    from .profiler.score import score as run_score
    from .roofline.workload import load_toml

    wl = load_toml(workload) if workload else None
    profile = None
    if wl is not None:
        profile, _ = _placement_profile(ctx, which, True, wl)

    def emit(row: dict) -> None:
        if as_json:
            _echo_json(json.dumps(row, default=str))
        else:
            click.echo(f"{row['candidate']}: " + ("correct" if row.get("correct") else "NOT correct") +
                       f" - {row['feedback']}")

    rows = run_score(reference, list(candidates), inputs, ranks, protocol, trials, atol, rtol, deadline, wl, profile,
                     warmup, iters, (m, n), dtype, on_row=emit)
    if not as_json:
        from .render import score_table

        _console().print(score_table(rows))


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--profile", "which", metavar="ID|FILE|reference", help=PROFILE_HELP)
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Also write one row per collective call "
              "to this CSV file.")
@click.option("--no-save", is_flag=True, help="Do not save the calls' placements in the store.")
@click.option("--force", is_flag=True, help="Place against the profile even if it describes another machine.")
@click.pass_context
def trace(ctx: click.Context, files: tuple[str, ...], which: str | None, as_json: bool, csv_path: str | None,
          no_save: bool, force: bool) -> None:
    """Read PyTorch profiler traces (one file per rank, .json or .json.gz) and place
    every collective against this machine: its size, group and busbw, NCCL's time here
    at that size and the cost-model bound; each step's GPU time by class, communication
    overlapped and exposed; across ranks, the arrival skew and transfer time."""
    from .profiler.traces import analyze, read_job

    traces = read_job(list(files))
    profile, here = _placement_profile(ctx, which, force)
    report = analyze(traces, profile)
    placements = [r.placement for r in report.rows if r.placement is not None]
    if csv_path:
        import io

        buf = io.StringIO()
        report.to_dataframe().to_csv(buf, index=False)
        _write(csv_path, buf.getvalue())
        click.echo(f"Wrote {len(report.rows)} calls to {csv_path}", err=True)
    if placements and not no_save:
        import dataclasses

        from .profiler.environment import collect_environment
        from .profiler.session import make_profile

        saved = make_profile([here or profile.topology], [collect_environment()],
                             label=f"trace:{Path(files[0]).name}" + (f" +{len(files) - 1}" if len(files) > 1 else ""),
                             notes=report.warnings)
        saved = dataclasses.replace(saved, placements=tuple(placements))
        with _store(ctx) as store:
            store.put(saved)
            click.echo(f"Saved {len(placements)} placements in profile {saved.id}", err=True)
    if as_json:
        import json

        _echo_json(json.dumps(report.to_dict(), indent=1))
        return
    from .render import trace_view

    _console().print(trace_view(report))


@cli.command()
@click.option("--profile", "which", metavar="ID|FILE|reference", help="Profile shown first (default: the store's).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to serve on.")
@click.option("--port", default=8050, show_default=True, type=click.IntRange(1, 65535))
@click.option("--debug", is_flag=True, help="Dash debug mode (reloads on code changes).")
@click.option("--trace", "trace_files", multiple=True, type=click.Path(dir_okay=False),
              help="A PyTorch profiler trace (one per rank; repeat the option) shown on the Trace page.")
@click.pass_context
def dashboard(ctx: click.Context, which: str | None, host: str, port: int, debug: bool,
              trace_files: tuple[str, ...]) -> None:
    """Serve the dashboard: overview, topology, bandwidth, collectives, roofline, trace, runs."""
    from .dashboard.app import create_app
    from .profiler.traces import read_job

    traces = read_job(list(trace_files)) if trace_files else None
    profile = _load_profile(ctx, which) if which else None
    if host not in ("127.0.0.1", "localhost", "::1"):
        _warn(f"Warning: serving on {host}: the dashboard has no login; anyone who can reach this address "
                    "can read and add profiles.",)
    app = create_app(ctx.obj.get("store"), profile, here=_probe_here(), traces=traces)
    click.echo(f"linkroof dashboard on http://{host}:{port}/  (Ctrl-C to stop)", err=True)
    app.run(host=host, port=port, debug=debug)


@cli.command()
@click.option("--profile", "which", metavar="ID|FILE|reference", help=PROFILE_HELP)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="The HTML file to write.")
@click.option("--images", type=click.Path(file_okay=False), help="Also write each figure as SVG here (needs kaleido: pip install 'linkroof[images]').")
@click.option("--trace", "trace_files", multiple=True, type=click.Path(dir_okay=False),
              help="A PyTorch profiler trace (one per rank; repeat the option): adds the Trace page.")
@click.pass_context
def report(ctx: click.Context, which: str | None, out: str, images: str | None, trace_files: tuple[str, ...]) -> None:
    """Write one self-contained HTML report with every page's figures (for clusters
    without a browser session); optionally each figure as an SVG file too."""
    import re

    from .dashboard.report import report_figures, report_html
    from .dashboard.report import write_figure

    from .profiler.traces import read_job

    traces = read_job(list(trace_files)) if trace_files else None
    profile = _load_profile(ctx, which)
    _write(out, report_html(profile, _banner(profile), traces))
    click.echo(f"Wrote {out} ({Path(out).stat().st_size / 1e6:.1f} MB) for profile {profile.id}", err=True)
    if images:
        try:
            Path(images).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UserError(f"cannot create {images}: {e.strerror or e}") from None
        for title, fig in report_figures(profile):
            write_figure(fig, str(Path(images) / (re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") + ".svg")))
        click.echo(f"Wrote the figures as SVG to {images}", err=True)


def _minimums_file(path: str) -> list[dict[str, Any]] | None:
    """A file of minimum figures ([[minimum]] tables in TOML, or {"minimum": [...]} in
    JSON), or None when the file is something else (a profile)."""
    import json

    from .files import read_text
    from .profiler.session import _names_a_file

    p = Path(path)
    if not _names_a_file(path):
        return None
    text = read_text(p, "file of minimum figures or profile")
    doc: Any = None
    if p.suffix == ".toml":
        import tomllib

        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise UserError(f"{path}: not valid TOML ({e})") from None
    else:
        try:
            doc = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            return None
    if isinstance(doc, dict) and "minimum" in doc:
        if not isinstance(doc["minimum"], list):
            raise UserError(f"{path}: minimum must be a list of entries")
        return doc["minimum"]
    return None


@cli.command()
@click.option("--baseline", metavar="ID|FILE|reference",
              help="What to hold the profile to: a profile (id, file or 'reference'), or a file of minimum figures "
                   "([[minimum]] entries with name, optional mechanism / pattern / devices / message_bytes / dtype, "
                   "and min in bytes/s or FLOP/s, or max_s for a time).")
@click.option("--profile", "which", metavar="ID|FILE|reference",
              help="The profile to check (default: a fresh quick run where a GPU and CuPy are here, else the "
                   "newest stored).")
@click.option("--threshold", default="5%", show_default=True,
              help="How much worse than the baseline a figure may be.")
@click.option("--min-spec", metavar="PERCENT", help="Also require each headline figure to reach this share of spec, "
              "e.g. 80%.")
@click.option("--junit", type=click.Path(dir_okay=False), help="Also write the checks as JUnit XML here.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def check(ctx: click.Context, baseline: str | None, which: str | None, threshold: str, min_spec: str | None,
          junit: str | None, as_json: bool) -> None:
    """A health gate for CI and fleets: compare a profile with a baseline figure by
    figure (matched on benchmark, mechanism, pattern, GPUs, size and parameters), and
    the topology a node must keep (GPUs, active NVLinks, PCIe generation and width).
    Exits 1 when any check fails: a degraded or down NVLink, PCIe trained at a lower
    generation, a slow GEMM."""
    from .roofline import gate

    if baseline is None and min_spec is None:
        raise click.UsageError("give --baseline (a profile or a file of minimum figures) and/or --min-spec")
    try:
        limit = gate.parse_percent(threshold)
        spec_share = gate.parse_percent(min_spec) if min_spec else None
    except gate.GateError as e:
        raise click.BadParameter(str(e)) from None
    profile = _check_subject(ctx, which)
    if not as_json:
        _banner(profile)
    report = gate.GateReport()
    if baseline is not None:
        minimums = _minimums_file(baseline)
        if minimums is not None:
            report = gate.against_minimums(profile, minimums)
        else:
            base = _load_profile(ctx, baseline)
            if base.id == profile.id and which is None:
                click.echo(f"Note: checking profile {profile.id} against itself.", err=True)
            report = gate.against_baseline(profile, base, limit)
    if spec_share is not None:
        report.checks += gate.against_spec(profile, spec_share).checks
    if junit:
        _write(junit, gate.junit_xml(report))
    if as_json:
        import dataclasses
        import json

        _echo_json(json.dumps({"profile": profile.id, "passed": report.passed, "not_compared": report.not_compared,
                               "not_checked": report.not_checked,
                               "checks": [dataclasses.asdict(c) for c in report.checks]}, indent=1))
    else:
        from .render import gate_table

        _console().print(gate_table(report, profile))
    if not report.compared:
        raise UserError("nothing was compared: the profile and the baseline share no figure"
                        + (", and the topology checks need what one side does not know (listed above)"
                           if report.not_checked else ""))
    if not report.passed:
        raise UserError(f"{len(report.failed)} of {len(report.checks)} checks failed", exit_code=1)


def _check_subject(ctx: click.Context, which: str | None) -> Any:
    """The profile `check` looks at: the one named, else a fresh quick run where a GPU
    and CuPy are here (saved), else the newest stored."""
    if which is not None:
        return _load_profile(ctx, which)
    from .errors import NoGpuError

    try:
        from .microbench.cuda import CudaUnavailable
        from .profiler import bench as api

        plan, topology = api.plan_for(suite="quick")
        click.echo("Running the quick suite to check ...", err=True)
        profile = api.run(plan, topology, label="check:quick", progress=sys.stderr.isatty())
        with _store(ctx) as store:
            store.put(profile)
        return profile
    except (NoGpuError, CudaUnavailable) as e:
        click.echo(f"Not measuring here ({e}); checking the newest stored profile.", err=True)
        return _load_profile(ctx, None)


@cli.group(cls=Group)
def runs() -> None:
    """Manage the profiles saved in the store (list, show, export, import, rm)."""


@runs.command("list")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1), help="Profiles per page.")
@click.option("--page", default=1, show_default=True, type=click.IntRange(1), help="Page to show (newest first).")
@click.pass_context
def runs_list(ctx: click.Context, as_json: bool, limit: int, page: int) -> None:
    """List saved profiles, newest first."""
    import json

    with _store(ctx) as store:
        rows = store.list(limit=limit, offset=(page - 1) * limit)
        total = store.count()
    if as_json:
        _echo_json(json.dumps({"total": total, "page": page, "profiles": rows}, indent=1))
        return
    from .render import profiles_table

    if not rows:
        click.echo(f"No profiles{' on this page' if total else ''} in the store (linkroof run saves one).")
        return
    _console().print(profiles_table(rows))
    click.echo(f"{len(rows)} of {total} profiles (page {page}).")


@runs.command("show")
@click.argument("profile_id")
@click.option("--collectives", is_flag=True, help="Only the collectives, one nccl-tests-style table each.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def runs_show(ctx: click.Context, profile_id: str, collectives: bool, as_json: bool) -> None:
    """Show one profile (an id, or a unique prefix of one)."""
    with _store(ctx) as store:
        profile = store.get(profile_id)
    if not as_json:
        _banner(profile)
    if collectives:
        from .roofline.summaries import collective_rows

        tables = collective_rows(profile)
        if as_json:
            import json

            _echo_json(json.dumps({"profile": profile.id, "collectives": tables}, indent=1))
            return
        if not tables:
            raise UserError(f"profile {profile.id} holds no collectives (linkroof bench --only nccl, or linkroof "
                            "import nccl-tests FILE)")
        from .render import collectives_tables

        _console().print(collectives_tables(tables))
        return
    if as_json:
        from .schema import dumps

        _echo_json(dumps(profile))
        return
    from .render import profile_summary

    _console().print(profile_summary(profile))


@runs.command("diff")
@click.argument("profile_a")
@click.argument("profile_b")
@click.option("--noise", default="2%", show_default=True,
              help="Changes smaller than this (or than 3x either run's CV) are noise.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def runs_diff(ctx: click.Context, profile_a: str, profile_b: str, noise: str, as_json: bool) -> None:
    """Figures of two profiles (ids, files or 'reference') that changed beyond the noise,
    matched on the full benchmark key; the same either way round."""
    from .roofline.gate import GateError, parse_percent
    from .roofline.summaries import compare_profiles

    try:
        share = parse_percent(noise)
    except GateError as e:
        raise click.BadParameter(str(e), param_hint="--noise") from None
    a, b = _load_profile(ctx, profile_a), _load_profile(ctx, profile_b)
    result = compare_profiles(a, b, share)
    if as_json:
        import json

        _echo_json(json.dumps({"a": a.id, "b": b.id, "compared": result.compared, "only_in_a": result.only_in_a,
                               "only_in_b": result.only_in_b, "changed": result.changed,
                               "verdict": result.verdict(a.id, b.id)}, indent=1))
        return
    from .render import diff_table

    _console().print(diff_table(result, a, b))


@runs.command("spread")
@click.argument("profiles", nargs=-1, required=True)
@click.option("--mechanism", help="Only this mechanism (e.g. nccl, ce, sm).")
@click.option("--min-size", default="0", show_default=True, help="Only figures of at least this message size.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
@click.pass_context
def runs_spread(ctx: click.Context, profiles: tuple[str, ...], mechanism: str | None, min_size: str,
                as_json: bool) -> None:
    """How much the same figures vary from run to run (ids, files or 'reference'): for
    every figure in at least two of them, the median over the runs, the inter-quartile
    range and the full spread as a share of the median."""
    from .roofline.summaries import spread_across
    from .units import parse_size

    if len(profiles) < 2:
        raise click.UsageError("give at least two profiles")
    try:
        lo = parse_size(min_size)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--min-size") from None
    rows = spread_across([_load_profile(ctx, p) for p in profiles], mechanism, lo)
    if as_json:
        import json

        _echo_json(json.dumps({"profiles": list(profiles), "figures": rows}, indent=1))
        return
    if not rows:
        raise UserError("no figure is in two of these profiles")
    from .render import spread_table

    _console().print(spread_table(rows))


@runs.command("export")
@click.argument("profile_id")
@click.option("-o", "--out", type=click.Path(dir_okay=False), help="Write here instead of stdout.")
@click.option("--format", "fmt", type=click.Choice(["json", "csv", "parquet"]), default="json", show_default=True,
              help="json: the whole profile, schema-versioned; csv / parquet: one row per measurement (parquet "
                   "needs pyarrow: pip install 'linkroof[parquet]').")
@click.pass_context
def runs_export(ctx: click.Context, profile_id: str, out: str | None, fmt: str) -> None:
    """Write a profile as schema-versioned JSON, or its measurements as a table."""
    from .schema import dumps

    with _store(ctx) as store:
        profile = store.get(profile_id)
    if fmt == "json":
        text = dumps(profile)
        if out:
            _write(out, text + "\n")
            click.echo(f"Wrote {out}", err=True)
        else:
            _echo_json(text)
        return
    frame = profile.to_dataframe()
    if fmt == "csv":
        text = frame.to_csv(index=False)
        if out:
            _write(out, text)
            click.echo(f"Wrote {out} ({len(frame)} rows)", err=True)
        else:
            click.echo(text, nl=False)
        return
    if not out:
        raise click.UsageError("--format parquet writes a file: give -o FILE")
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise UserError("parquet needs pyarrow: pip install 'linkroof[parquet]' (csv needs nothing more)") from None
    try:
        frame.to_parquet(out, index=False)
    except OSError as e:
        raise UserError(f"cannot write {out}: {e.strerror or e}") from None
    click.echo(f"Wrote {out} ({len(frame)} rows)", err=True)


@runs.command("import")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--replace", is_flag=True, help="Overwrite a stored profile with the same id.")
@click.pass_context
def runs_import(ctx: click.Context, file: str, replace: bool) -> None:
    """Validate a profile JSON file and add it to the store (nothing is written if invalid)."""
    from .store import load_profile_file

    profile = load_profile_file(file)
    with _store(ctx) as store:
        store.put(profile, replace=replace)
        unchanged = store.unchanged
    click.echo(f"Profile {profile.id} is already in the store, identical: nothing to do" if unchanged
               else f"Imported profile {profile.id}")


@runs.command("rm")
@click.argument("profile_id")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def runs_rm(ctx: click.Context, profile_id: str, yes: bool) -> None:
    """Remove a profile from the store: its exact id, or a prefix of exactly one id
    (said so before anything is removed). A damaged profile can be removed too."""
    from .render import clean

    with _store(ctx) as store:
        full = store.resolve(profile_id)
        row = store.row(full)
        what = f"{full} ({clean(row.get('hostname', ''))}, {clean(row.get('label', ''))})"
        if full != profile_id:
            click.echo(f"{profile_id!r} is a prefix of profile {full}.", err=True)
        if not yes and not click.confirm(f"Remove profile {what}?"):
            raise UserError("not removed")
        store.remove(full)
    click.echo(f"Removed profile {full}")


def main() -> None:
    cli(prog_name="linkroof")
