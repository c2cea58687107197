"""What every `linkroof` command shares: the group, the store and profile options, JSON
and file output, the profile a workload is placed against, and the errors users see."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import click

from .. import __version__
from ..errors import LinkroofError


JSON_HELP = "Print JSON on stdout and nothing else there."


class UserError(click.ClickException):
    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(message)
        self.exit_code = exit_code

    def show(self, file: Any = None) -> None:
        click.echo(f"linkroof: {self.format_message()}", err=True)


class Group(click.Group):
    """Turns errors a user can cause into one line and an exit code, not a traceback."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if ctx.parent is None:  # the root: --width is taken wherever it is given (issue 45)
            args = width_first(args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except LinkroofError as e:
            raise UserError(str(e), e.exit_code) from None
        except KeyboardInterrupt:
            raise UserError("interrupted", 130) from None


def width_first(args: list[str]) -> list[str]:
    """The arguments with each `--width N` (or `--width=N`) moved before the command,
    where the root takes it: `linkroof runs list --width 100` works as `linkroof --width
    100 runs list`. Nothing after a `--` moves."""
    moved: list[str] = []
    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            out += args[i:]
            break
        if a == "--width" and i + 1 < len(args):
            moved += args[i:i + 2]
            i += 2
            continue
        if a.startswith("--width="):
            moved.append(a)
        else:
            out.append(a)
        i += 1
    return moved + out


PIPE_WIDTH = 160  # piped output with no COLUMNS and no --width


def width() -> int | None:
    """The width tables are laid out for: --width, else $COLUMNS, else the terminal's
    (None: rich asks it), else PIPE_WIDTH for piped output."""
    import os

    ctx = click.get_current_context(silent=True)
    given = ctx.find_root().obj.get("width") if ctx is not None and isinstance(ctx.find_root().obj, dict) else None
    if given:
        return int(given)
    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    return None if sys.stdout.isatty() else PIPE_WIDTH


def _console(err: bool = False) -> Any:
    from rich.console import Console

    return Console(stderr=err, soft_wrap=False, width=width())


def _warn(text: str) -> None:
    """A warning on stderr, yellow unless NO_COLOR is set (https://no-color.org); any
    text from a profile in it shown as text (control characters escaped)."""
    import os

    from ..render import clean

    text = "\n".join(clean(line) for line in text.split("\n"))
    if os.environ.get("NO_COLOR"):
        click.echo(text, err=True)
    else:
        click.secho(text, fg="yellow", err=True)


def _echo_json(text: str) -> None:
    click.echo(text)


def _stream_json(obj: Any) -> None:
    """`obj` as indented JSON on stdout, written piece by piece as it is encoded: the
    same text as `_echo_json(json.dumps(obj, indent=1))`, without holding it all (a 1 GB
    trace's report held 300 MiB of string pieces until the final join)."""
    import json
    import sys

    out = sys.stdout
    json.dump(obj, out, indent=1)
    out.write("\n")
    out.flush()


def _write(path: str | Path, text: str) -> None:
    """Write a file the user asked for; a missing folder or a read-only file system is
    one line, not a traceback."""
    from ..files import FileOutputError, write_text

    try:
        write_text(path, text)
    except FileOutputError as e:
        raise UserError(str(e)) from None


def _finite(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """An option's number must be a number: NaN passes every range check and is refused here."""
    if isinstance(value, float) and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a number")
    return value


def _store(ctx: click.Context) -> Any:
    from ..store import Store

    return Store(ctx.obj.get("store"))


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="linkroof")
@click.option("--store", type=click.Path(dir_okay=False), envvar="LINKROOF_STORE", default=None,
              help="SQLite file of saved profiles (default: $LINKROOF_STORE, else your data directory).")
@click.option("--width", type=click.IntRange(40, 1000), default=None, metavar="COLUMNS",
              help="Lay tables out for this many columns (default: $COLUMNS, else the terminal's, else 160 when "
                   "piped).")
@click.pass_context
def cli(ctx: click.Context, store: str | None, width: int | None) -> None:
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
    ctx.obj["width"] = width
    _HERE.clear()  # this machine is probed afresh by each command


def _deliver(ctx: click.Context, profile: Any, out: str | None, no_save: bool, as_json: bool, what: str = "") -> None:
    """Write, save and print a measured profile (bench, distributed bench)."""
    from ..schema import dumps

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
        from ..render import bench_summary

        _console().print(bench_summary(profile))


def _load_profile(ctx: click.Context, which: str | None) -> Any:
    """The --profile option through the one resolver (profiler.session)."""
    from ..profiler.session import resolve_profile

    profile, note = resolve_profile(which, ctx.obj.get("store"))
    if note:
        click.echo(note, err=True)
    return profile


_HERE: list[Any] = []


def _probe_here() -> Any:
    """This machine's topology, or None where no GPU can be probed (probed once a run)."""
    from ..errors import NoGpuError
    from ..profiler import probe as probe_mod

    if not _HERE:
        try:
            _HERE.append(probe_mod.probe())
        except NoGpuError:
            _HERE.append(None)
    return _HERE[0]


def _banner(profile: Any) -> str | None:
    """Say first, on stderr, when the profile shown is not this machine's (the bundled
    reference, or another machine's); the same line tops the dashboard and the report."""
    from ..profiler.session import provenance

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
    from ..profiler.session import pick_profile

    here = _probe_here()
    profile, why = pick_profile(ctx.obj.get("store"), here, workload)
    _say_profile(profile, why)
    _banner(profile)
    if here is None:
        click.echo("No GPU here: cannot check that this profile describes the machine the time came from.", err=True)
    return profile, here


def _say_profile(profile: Any, why: str = "") -> None:
    from ..render import clean

    click.echo(clean(f"Using profile {profile.id} ({profile.label or 'no label'}, {profile.created_at[:19]}, "
                     f"{', '.join(profile.hostnames)})") + (f": {clean(why)}" if why else "") + ".", err=True)


def _same_machine(profile: Any, force: bool) -> Any:
    """Say which profile places the workload, and refuse one measured on another machine
    (GPU model, count, active NVLinks) unless forced. Returns this machine's topology,
    or None where no GPU can be probed (then nothing can be checked, and it says so)."""
    from ..roofline.summaries import machine_differences

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


PROFILE_HELP = ("Profile id (or prefix), a profile JSON file, or 'reference' (default: the newest profile linkroof measured, "
                "else the bundled reference; an imported one only when named).")
