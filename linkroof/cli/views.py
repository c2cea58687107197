"""`linkroof dashboard` and `report`: the views."""

from __future__ import annotations

from pathlib import Path

import click

from .common import PROFILE_HELP, UserError, _banner, _load_profile, _probe_here, _warn, _write, cli


@cli.command()
@click.option("--profile", "which", metavar="ID|FILE|reference", help="Profile shown first (default: the store's).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to serve on. Anything but this machine (127.0.0.1, localhost, ::1) needs --public.")
@click.option("--port", default=8050, show_default=True, type=click.IntRange(1, 65535))
@click.option("--public", is_flag=True, help="Allow --host to be an address other machines reach. The dashboard "
              "then asks for a token (--token, or one made and printed at start); anyone with it can read the "
              "store and add profiles to it.")
@click.option("--token", metavar="TEXT", envvar="LINKROOF_DASHBOARD_TOKEN", show_envvar=True,
              help="Require this token on every request (?token=TEXT once, then a cookie); made for you with "
              "--public when not given. At least 16 characters.")
@click.option("--debug", is_flag=True, help="Dash debug mode (reloads on code changes; its debugger runs code "
              "sent to it, so it is refused with --public).")
@click.option("--trace", "trace_files", multiple=True, type=click.Path(dir_okay=False),
              help="A PyTorch profiler trace (one per rank; repeat the option) shown on the Trace page.")
@click.pass_context
def dashboard(ctx: click.Context, which: str | None, host: str, port: int, public: bool, token: str | None,
              debug: bool, trace_files: tuple[str, ...]) -> None:
    """Serve the dashboard: overview, topology, bandwidth, collectives, roofline, trace, runs.
    It listens on this machine only unless --public is given."""
    import secrets

    from ..dashboard.app import LOCAL_HOSTS, check_listen, create_app, serve
    from ..readers.traces import read_job

    local = host in LOCAL_HOSTS
    if not local and not public:
        raise UserError(f"--host {host} serves the dashboard to other machines: it has no login, and anyone who "
                        "reaches it can read the store and add profiles. Give --public to do so (a token is then "
                        "required), or use an SSH tunnel to 127.0.0.1.")
    if public and debug:
        raise UserError("--debug with --public is refused: Dash's debugger runs code sent to it")
    if token is not None and (len(token) < 16 or not token.isprintable() or " " in token):
        raise UserError("--token must be at least 16 printable characters without spaces")
    if public and not token:
        token = secrets.token_urlsafe(24)
    traces = read_job(list(trace_files)) if trace_files else None
    profile = _load_profile(ctx, which) if which else None
    if not local:
        _warn(f"Warning: serving on {host}, reachable from other machines: anyone with the token can read the "
              "store and add profiles to it; traffic is not encrypted (put it behind TLS or an SSH tunnel).")
    check_listen(host, port)  # a port in use or a host that does not resolve: said before anything is built
    app = create_app(ctx.obj.get("store"), profile, here=_probe_here(), traces=traces, token=token)
    shown = "[::1]" if host == "::1" else host
    click.echo(f"linkroof dashboard on http://{shown}:{port}/" + (f"?token={token}" if token else "")
               + "  (Ctrl-C to stop)", err=True)
    serve(app, host, port, debug)


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

    from ..dashboard.report import report_figures, report_html
    from ..dashboard.report import write_figure

    from ..readers.traces import read_job

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
