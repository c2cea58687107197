"""`linkroof probe`, `run`, `bench`, `import` and `check`: what a machine is, what it
delivers, other tools' results, and the health gate."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..errors import LinkroofError
from .common import (
    JSON_HELP, UserError, _banner, _console, _deliver, _echo_json, _finite, _load_profile, _probe_here,
    _store, _warn, _write, cli,
)


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
    from ..profiler.probe import probe as run_probe

    if record and replay:
        raise click.UsageError("--record and --replay exclude each other")
    topology = run_probe(replay=replay, record=record)
    if as_json:
        from ..schema import dumps

        _echo_json(dumps(topology))
        return
    from ..render import topology_view

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

    from ..profiler.session import probe_profile

    profile, fallback = probe_profile(allow_reference=True)
    if fallback:
        _warn(fallback)
    elif not no_bench:
        from ..microbench.cuda import CudaUnavailable

        try:
            from ..profiler import bench as api

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
        from ..schema import dumps

        # what is printed says what it is (the stored copy stays the bundled document)
        _echo_json(dumps(dataclasses.replace(profile, notes=profile.notes + (fallback,)) if fallback else profile))
    if serve is None:
        serve = sys.stdin.isatty() and sys.stdout.isatty()
    if not as_json:
        from ..render import bench_summary, summary_screen, topology_view

        if serve:  # a screen the URL follows, not hundreds of lines above it
            _console().print(summary_screen(profile))
        else:
            _console().print(topology_view(profile.topology))
            if profile.measurements:
                _console().print(bench_summary(profile))
        if fallback:
            _warn(fallback)  # once more under the tables, where a reader ends up
    if saved_to:
        click.echo(f"Saved profile {profile.id} to {saved_to}", err=True)
    if as_json:
        return
    if serve:
        from ..dashboard.app import check_listen, create_app
        from ..dashboard.app import serve as serve_app

        check_listen("127.0.0.1", port)  # a port in use: said, with --port, before the URL
        click.echo(f"Dashboard on http://127.0.0.1:{port}/  (Ctrl-C to stop; the full tables: linkroof runs show "
                   f"{profile.id})", err=True)
        serve_app(create_app(ctx.obj.get("store"), profile, here=_probe_here()), "127.0.0.1", port)
    else:
        from ..dashboard.report import report_html

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
    from ..profiler import bench as api
    from ..units import parse_size_range

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
        from ..microbench.multicast import check_allowed

        check_allowed(allow_multicast)
    if replay and not show_plan:
        raise click.UsageError("--replay plans against a recording; add --plan (nothing can run without the GPUs)")
    from ..profiler.launch import connect, detect

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
        from ..render import plan_table

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

    from ..readers.tools import bare_topology, import_file, imported_environment
    from ..profiler.session import make_profile

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
        from ..schema import dumps

        _echo_json(dumps(profile))
    else:
        from ..render import bench_summary

        _console().print(bench_summary(dataclasses.replace(profile, measurements=tuple(imported.measurements))))
    click.echo(f"Imported {len(imported.measurements)} {tool} figures into profile {profile.id}"
               + ("" if not no_save else " (not saved)"), err=True)


def _bench_distributed(ctx: click.Context, comm: Any, suite: str, families: list[str] | None, reps: int | None,
                       label: str, standin: bool, timeout_s: float, out: str | None, no_save: bool,
                       as_json: bool, sizes: list[int] | None = None) -> None:
    """One rank per GPU under a launcher; rank 0 merges, saves and prints."""
    from ..profiler.distributed import incomplete, run_distributed

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


def _minimums_file(path: str) -> list[dict[str, Any]] | None:
    """A file of minimum figures ([[minimum]] tables in TOML, or {"minimum": [...]} in
    JSON), or None when the file is something else (a profile)."""
    import json

    from ..files import read_text
    from ..profiler.session import _names_a_file

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
    generation, a slow GEMM; 3 when there was nothing to check (the profile is the
    baseline itself, as with no GPU here and the reference as baseline, or they share no
    figure); 2 for a bad option."""
    from ..roofline import gate

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
            if base.id == profile.id or (profile.measurements and base.measurements == profile.measurements):
                raise UserError(f"nothing to check: the profile checked ({profile.id}) is the baseline itself"
                                + (" (no GPU here to measure a fresh one)" if which is None else "")
                                + "; measure this machine (a GPU and CuPy) or give --profile", exit_code=3)
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
        from ..render import gate_table

        _console().print(gate_table(report, profile))
    if not report.compared:
        raise UserError("nothing was compared: the profile and the baseline share no figure"
                        + (", and the topology checks need what one side does not know (listed above)"
                           if report.not_checked else ""), exit_code=3)
    if not report.passed:
        raise UserError(f"{len(report.failed)} of {len(report.checks)} checks failed", exit_code=1)


def _check_subject(ctx: click.Context, which: str | None) -> Any:
    """The profile `check` looks at: the one named, else a fresh quick run where a GPU
    and CuPy are here (saved), else the newest stored."""
    if which is not None:
        return _load_profile(ctx, which)
    from ..errors import NoGpuError

    try:
        from ..microbench.cuda import CudaUnavailable
        from ..profiler import bench as api

        plan, topology = api.plan_for(suite="quick")
        click.echo("Running the quick suite to check ...", err=True)
        profile = api.run(plan, topology, label="check:quick", progress=sys.stderr.isatty())
        with _store(ctx) as store:
            store.put(profile)
        return profile
    except (NoGpuError, CudaUnavailable) as e:
        click.echo(f"Not measuring here ({e}); checking the newest stored profile.", err=True)
        return _load_profile(ctx, None)
