"""`linkroof runs ...`: the profiles in the store."""

from __future__ import annotations

import click

from .common import Group, JSON_HELP, UserError, _banner, _console, _echo_json, _load_profile, _store, _write, cli


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

    from ..profiler.session import kind_of

    with _store(ctx) as store:
        rows = store.list(limit=limit, offset=(page - 1) * limit)
        total = store.count()
    for r in rows:  # measured, imported, placements or reference: which one the commands take by default
        r["kind"] = kind_of(r["label"] or "", r["measurements"] or 0)
    if as_json:
        _echo_json(json.dumps({"total": total, "page": page, "profiles": rows}, indent=1))
        return
    from ..render import profiles_table

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
        from ..roofline.summaries import collective_rows

        tables = collective_rows(profile)
        if as_json:
            import json

            _echo_json(json.dumps({"profile": profile.id, "collectives": tables}, indent=1))
            return
        if not tables:
            raise UserError(f"profile {profile.id} holds no collectives (linkroof bench --only nccl, or linkroof "
                            "import nccl-tests FILE)")
        from ..render import collectives_tables

        _console().print(collectives_tables(tables))
        return
    if as_json:
        from ..schema import dumps

        _echo_json(dumps(profile))
        return
    from ..render import profile_summary

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
    from ..roofline.gate import GateError, parse_percent
    from ..roofline.summaries import compare_profiles

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
    from ..render import diff_table

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
    from ..roofline.summaries import spread_across
    from ..units import parse_size

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
    from ..render import spread_table

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
    from ..schema import dumps

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
        from ..files import csv_text

        text = csv_text(frame)
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
    from ..store import load_profile_file

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
    from ..render import clean

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
