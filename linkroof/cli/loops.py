"""`linkroof batch`, `batch-merge` and `export`: what a kernel-generation loop needs
beside `score` (many candidates across GPUs and nodes; the measured machine for its
prompts)."""

from __future__ import annotations

import json
from typing import Any

import click

from .common import JSON_HELP, PROFILE_HELP, UserError, _console, _echo_json, _load_profile, _placement_profile, cli


TABLE_ROWS = 200  # rows a batch's table shows; --json and --results hold them all

KEY_HELP = ("The secret each --results row is signed with (HMAC-SHA256), in a file other users may not read; default "
            "$XDG_CONFIG_HOME/linkroof/results.key (~/.config/linkroof/results.key), made (0600) on first use. Never "
            "passed to a candidate. Give every node of a sharded batch the same file.")


@cli.command()
@click.argument("manifest", type=click.Path(dir_okay=False))
@click.option("--results", required=True, type=click.Path(dir_okay=False), help="JSON-lines file the rows are "
              "appended to as each job ends, each signed (--key-file); run again with the same file to resume "
              "(finished jobs are skipped; rows that fail their MAC, or are another manifest's, run again).")
@click.option("--gpus", metavar="LIST", help="GPUs to use, as 0,1,2 or GPU UUIDs (default: CUDA_VISIBLE_DEVICES, "
              "else every GPU NVML lists). A job takes as many as its ranks; no GPU runs two timings at once, and a "
              "GPU given twice is refused.")
@click.option("--shard", metavar="I/N", default="0/1", show_default=True, help="Run only the jobs whose position in "
              "the manifest is I modulo N (a Slurm array task or Kubernetes job index); batch-merge joins the shards.")
@click.option("--profile", "which", metavar="ID|FILE|reference", help=PROFILE_HELP + " Used for problems with a "
              "workload (roofline place, physical floor).")
@click.option("--sandbox", type=click.Choice(["auto", "namespaces", "none"]), default="auto", show_default=True,
              help="Where each target runs, as score's --sandbox (docs/scoring.md: what each mode guarantees).")
@click.option("--key-file", type=click.Path(dir_okay=False), help=KEY_HELP)
@click.option("--json", "as_json", is_flag=True, help="Every row of this shard (JSON lines) at the end, nothing else "
              "on stdout.")
@click.pass_context
def batch(ctx: click.Context, manifest: str, results: str, gpus: str | None, shard: str, which: str | None,
          sandbox: str, key_file: str | None, as_json: bool) -> None:
    """Score many problems x candidates from a manifest (TOML or JSON: [[problem]] tables
    with reference, inputs, candidates, and optionally ranks, protocol, trials, atol,
    rtol, deadline, workload, warmup, iters, m, n, dtype, counters; [defaults] for all), running
    jobs concurrently across this node's GPUs, each candidate in a fresh, contained
    process as `score` does. A manifest's options are held to score's ranges. Progress,
    a running summary and refused rows go to stderr; rows to --results as they end.
    Exit status as score's."""
    from ..scoring import batch as B
    from ..scoring.score import exit_code
    from ..roofline.workload import load_toml

    problems = B.load_manifest(manifest)
    _as_score_would(manifest, problems)
    part = B.parse_shard(shard)
    pool = parse_gpus(gpus) if gpus else _visible_gpus()
    if not pool:
        raise UserError("no GPU to run on: this machine lists none (give --gpus, or run where the GPUs are)")
    key = B.results_key(key_file)

    def profile_for(p: Any) -> tuple[Any, Any]:
        if not p.workload:
            return None, None
        wl = load_toml(p.workload)
        return wl, _placement_profile(ctx, which, True, wl)[0]

    rows, summary = B.run_batch(problems, results, pool, part, profile_for,
                                progress=lambda line: click.echo(_line(line), err=True), sandbox=sandbox, key=key)
    click.echo(summary.line(), err=True)
    _show(rows, as_json)
    ctx.exit(exit_code(rows) if rows else 0)


def _line(text: str) -> str:
    from ..render import clean

    return clean(f"linkroof: {text}" if " refused" in text else text)


def _show(rows: list[dict], as_json: bool) -> None:
    """Rows as JSON lines (strict JSON: no NaN), or the table of the first TABLE_ROWS."""
    from ..render import score_view

    if as_json:
        for r in rows:
            _echo_json(json.dumps(r, default=str, allow_nan=False))
        return
    _console().print(score_view(rows[:TABLE_ROWS]))
    if len(rows) > TABLE_ROWS:
        click.echo(f"... and {len(rows) - TABLE_ROWS} more rows (--json or --results has them all)")


def _as_score_would(manifest: str, problems: Any) -> None:
    """A manifest's options through `score`'s own option types (its ranges: ranks 1 to
    64, trials 1 to 100, a finite deadline of 1 s to a day, ...): one UserError naming
    each fault. The library's load_manifest holds them to score's check_options already."""
    from .placing import score as score_command

    params = {p.name: p for p in score_command.params}
    faults = []
    for prob in problems:
        for field, name in (("ranks", "ranks"), ("trials", "trials"), ("atol", "atol"), ("rtol", "rtol"),
                            ("deadline_s", "deadline"), ("warmup", "warmup"), ("iters", "iters"), ("m", "m"),
                            ("n", "n"), ("max_output_bytes", "max_output_bytes")):
            param, value = params[name], getattr(prob, field)
            try:
                got = param.type.convert(value, None, None)
                if param.callback is not None:
                    param.callback(click.Context(score_command), param, got)
            except click.BadParameter as e:
                faults.append(f"problem {prob.name!r}: {name} {e.message}")
    if faults:
        raise UserError(f"{manifest}: " + "; ".join(faults[:20]) + (f"; and {len(faults) - 20} more"
                                                                    if len(faults) > 20 else ""))


def parse_gpus(text: str) -> list[str]:
    """--gpus: indices or UUIDs, comma-separated; an empty item, a negative or other
    non-GPU, or a GPU given twice is refused (two jobs would time on one GPU at once)."""
    from ..scoring.batch import check_gpus

    try:
        return check_gpus(text.split(","))
    except ValueError as e:
        raise click.BadParameter(f"{text!r}: {e}", param_hint="--gpus") from None


def _visible_gpus() -> list[str]:
    """The GPUs CUDA_VISIBLE_DEVICES or NVML list, by --gpus' rules (a GPU listed twice refused)."""
    from ..scoring import batch as B

    try:
        return B.check_gpus(B.visible_gpus())
    except ValueError as e:
        raise UserError(f"CUDA_VISIBLE_DEVICES: {e}") from None


@cli.command("batch-merge")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--manifest", type=click.Path(dir_okay=False), help="The manifest the shards ran: rows in its order, "
              "the jobs with no row yet named, and rows of another manifest refused.")
@click.option("--results", "out", type=click.Path(dir_okay=False), help="Write the merged rows here (JSON lines, "
              "each as signed).")
@click.option("--key-file", type=click.Path(dir_okay=False), help="The key the rows were signed with (batch's "
              "--key-file; default $XDG_CONFIG_HOME/linkroof/results.key): rows that fail it are refused, with a "
              "message on stderr, and the rest kept.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def batch_merge(files: tuple[str, ...], manifest: str | None, out: str | None, key_file: str | None,
                as_json: bool) -> None:
    """Join the results of a batch's shards (one file per shard) into one: one row per
    job, in manifest order, and one table. Rows that fail their MAC (forged, edited, or
    signed with another key), torn lines, rows not of a row's shape and rows of another
    manifest are refused, each file's in one line on stderr; the rest are kept."""
    from ..scoring import batch as B
    from ..render import clean

    problems = B.load_manifest(manifest) if manifest else None
    key = B.results_key(key_file)
    lines: dict[str, bytes] = {}
    rows, notes = B.merge(files, problems, key, lines)
    import gc

    gc.freeze()  # the rows live until the command ends: the cycle collector need not walk them again
    for n in notes:
        if " refused" in n:
            click.echo(clean(f"linkroof: {n}"), err=True)
    if out:
        from .common import _write

        # each row's line as read and checked: its MAC holds under the same key
        _write(out, b"".join(lines[r["job"]] for r in rows).decode("utf-8"))
    _show(rows, as_json)
    summary = B.Summary(total=len(rows), skipped=0)
    for r in rows:
        summary.add(r)
    for n in notes:
        if " refused" not in n:
            click.echo(clean(n), err=as_json)
    click.echo(summary.line(merged=True), err=True)


@cli.command()
@click.option("--profile", "which", metavar="ID|FILE|reference", help=PROFILE_HELP)
@click.option("--format", "fmt", type=click.Choice(["brief", "pkb", "kernelbench", "tracelens", "all"]),
              default="brief", show_default=True, help="brief: plain text under 2 KB for a prompt; pkb: a "
              "[hardware_profiles.*] table for ParallelKernelBench's prompts.toml; kernelbench: a gpu_specs.py "
              "module (GPU_SPEC_INFO, GPU_DEFINITIONS, GPU_BEST_PRACTICES); tracelens: an arch JSON; all: the four "
              "into --out.")
@click.option("--name", metavar="KEY", help="The GPU / profile key in the written file (default: from the GPU's name).")
@click.option("--out", type=click.Path(), help="File to write (a folder for --format all); default stdout.")
@click.option("--json", "as_json", is_flag=True, help="The figures themselves, each with its provenance, as JSON.")
@click.pass_context
def export(ctx: click.Context, which: str | None, fmt: str, name: str | None, out: str | None, as_json: bool) -> None:
    """The measured machine, for a kernel-generation loop's prompts and for other tools:
    HBM, compute per data type, each link per mechanism and message size, NCCL's
    collectives, launch and sync terms, the SMs a copy needs. Every figure says whether
    it was measured or comes from the spec sheet, and at what clock state."""
    from ..roofline import export as E

    profile = _load_profile(ctx, which)
    facts = E.facts(profile)
    if as_json:
        _echo_json(json.dumps([f.as_dict() for f in facts], indent=1))
        return
    key = name or E.default_key(profile)
    if fmt == "all":
        if not out:
            raise UserError("--format all writes four files: give --out FOLDER")
        for path in E.write_all(profile, out, key):
            click.echo(path)
        return
    text = E.render(profile, fmt, key, facts)
    if out:
        from ..files import write_text

        write_text(out, text)
        click.echo(out)
    else:
        click.echo(text, nl=False)
