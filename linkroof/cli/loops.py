"""`linkroof batch`, `batch-merge` and `export`: what a kernel-generation loop needs
beside `score` (many candidates across GPUs and nodes; the measured machine for its
prompts)."""

from __future__ import annotations

import json
from typing import Any

import click

from .common import JSON_HELP, PROFILE_HELP, UserError, _console, _echo_json, _load_profile, _placement_profile, cli


@cli.command()
@click.argument("manifest", type=click.Path(dir_okay=False))
@click.option("--results", required=True, type=click.Path(dir_okay=False), help="JSON-lines file the rows are "
              "appended to as each job ends; run again with the same file to resume (finished jobs are skipped).")
@click.option("--gpus", metavar="LIST", help="GPUs to use, as 0,1,2 (default: CUDA_VISIBLE_DEVICES, else every GPU "
              "NVML lists). A job takes as many as its ranks; no GPU runs two timings at once.")
@click.option("--shard", metavar="I/N", default="0/1", show_default=True, help="Run only the jobs whose position in "
              "the manifest is I modulo N (a Slurm array task or Kubernetes job index); batch-merge joins the shards.")
@click.option("--profile", "which", metavar="ID|FILE|reference", help=PROFILE_HELP + " Used for problems with a "
              "workload (roofline place, physical floor).")
@click.option("--sandbox", type=click.Choice(["auto", "namespaces", "none"]), default="auto", show_default=True,
              help="Where each target runs, as score's --sandbox (docs/scoring.md: what each mode guarantees).")
@click.option("--key-file", type=click.Path(dir_okay=False), help="The secret each --results row is signed with "
              "(HMAC-SHA256); default ~/.config/linkroof/results.key, made (0600) on first use. Never passed to a "
              "candidate; rows that fail it are not believed on resume, nor by batch-merge.")
@click.option("--json", "as_json", is_flag=True, help="Every row of this shard (JSON lines) at the end, nothing else "
              "on stdout.")
@click.pass_context
def batch(ctx: click.Context, manifest: str, results: str, gpus: str | None, shard: str, which: str | None,
          sandbox: str, key_file: str | None, as_json: bool) -> None:
    """Score many problems x candidates from a manifest (TOML or JSON: [[problem]] tables
    with reference, inputs, candidates, and optionally ranks, protocol, trials, atol,
    rtol, deadline, workload, warmup, iters, m, n, dtype, counters; [defaults] for all), running
    jobs concurrently across this node's GPUs, each candidate in a fresh, contained
    process as `score` does. Progress and a running summary go to stderr; rows to
    --results as they end. Exit status as score's."""
    from ..scoring import batch as B
    from ..scoring.score import exit_code
    from ..render import score_view
    from ..roofline.workload import load_toml

    problems = B.load_manifest(manifest)
    part = B.parse_shard(shard)
    pool = parse_gpus(gpus) if gpus else B.visible_gpus()
    key = B.results_key(key_file)
    if not pool:
        raise UserError("no GPU to run on: this machine lists none (give --gpus, or run where the GPUs are)")

    def profile_for(p: Any) -> tuple[Any, Any]:
        if not p.workload:
            return None, None
        wl = load_toml(p.workload)
        return wl, _placement_profile(ctx, which, True, wl)[0]

    rows, summary = B.run_batch(problems, results, pool, part, profile_for,
                                progress=lambda line: click.echo(line, err=True), sandbox=sandbox, key=key)
    click.echo(summary.line(), err=True)
    if as_json:
        for r in rows:
            _echo_json(json.dumps(r, default=str))
    else:
        _console().print(score_view(rows))
    ctx.exit(exit_code(rows) if rows else 0)


def parse_gpus(text: str) -> list[str]:
    """--gpus: indices or UUIDs, comma-separated; an empty item or a GPU given twice is
    refused (two jobs would time on one GPU at once)."""
    items = [g.strip() for g in text.split(",")]
    if any(not g for g in items):
        raise click.BadParameter(f"{text!r}: an empty item (give GPUs as 0,1,2)", param_hint="--gpus")
    bad = next((g for g in items if g.startswith("-")), None)
    if bad is not None:
        raise click.BadParameter(f"{bad}: not a GPU", param_hint="--gpus")
    twice = sorted({g for g in items if items.count(g) > 1})
    if twice:
        raise click.BadParameter(f"GPU {', '.join(twice)} given twice: each GPU runs one timing at a time",
                                 param_hint="--gpus")
    return items


@cli.command("batch-merge")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--manifest", type=click.Path(dir_okay=False), help="The manifest the shards ran: rows in its order, "
              "and the jobs with no row yet named.")
@click.option("--results", "out", type=click.Path(dir_okay=False), help="Write the merged rows here (JSON lines).")
@click.option("--key-file", type=click.Path(dir_okay=False), help="The key the rows were signed with (batch's "
              "--key-file; default ~/.config/linkroof/results.key): rows that fail it are refused, with a message.")
@click.option("--json", "as_json", is_flag=True, help=JSON_HELP)
def batch_merge(files: tuple[str, ...], manifest: str | None, out: str | None, key_file: str | None,
                as_json: bool) -> None:
    """Join the results of a batch's shards (one file per shard) into one: one row per
    job, in manifest order, and one table."""
    from ..scoring import batch as B
    from ..render import clean, score_view

    problems = B.load_manifest(manifest) if manifest else None
    key = B.results_key(key_file)
    rows, notes = B.merge(files, problems, key)
    for n in notes:
        if "refused" in n:
            click.echo(clean(f"linkroof: {n}"), err=True)
    if out:
        from .common import _write

        _write(out, "".join(B.signed_line({k: v for k, v in r.items() if k != "mac"}, key) for r in rows))
    if as_json:
        for r in rows:
            _echo_json(json.dumps(r, default=str))
        return
    _console().print(score_view(rows))
    for n in notes:
        click.echo(clean(n))


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
