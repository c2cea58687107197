"""Mutation testing of the modules that make verdicts, with mutmut, in chunks (issue 44).

    python benchmarks/mutation.py [MODULE ...] [--budget-min 40] [--work .mutation]
        [--out benchmarks/data/DATE-mutation] [--no-run] [--rerun-survivors] [--restore FOLDER]
        [--fresh-stats]

MODULE is a dotted module (linkroof.roofline.clockstate); default: every module in
VERDICT_MODULES. A copy of the working tree is kept under --work (git-ignored) so that
mutmut's results carry over: each run continues where the last stopped, and a chunk
stops at its time budget. Afterwards, every surviving mutant is classified from its diff:

- "text": the mutant changes only the text of a string (a message's or docstring's
  wording), not a figure, a comparison or a branch: equivalent for the verdicts;
- "equivalent": named in tests/mutation/equivalent.txt with a one-line reason;
- "open": neither. Each must get a killing test or a line in equivalent.txt.

The figure reported is killed / (killed + open): the share of non-equivalent mutants
killed. tests/mutation/survivors/<module>.txt is written with one line per survivor and why.

--rerun-survivors first runs again the survivors mutmut kept (it keeps a result until its
function changes, so a new test kills nothing already run), but those the last report
classed 'text' or 'equivalent', then the rest of the module.

Each module's mutmut results (each mutant's exit code, each function's hash) are saved,
gzipped, under OUT/meta: the raw file of its figures. A checkout starts without the work
copy, so --restore OUT puts those results back into a fresh one: mutmut keeps each whose
function is unchanged and runs only the rest, and a module too large for one session is
finished over several.

--fresh-stats drops mutmut's record of which tests run which function before the run, so
that it is taken again over the whole suite (a few minutes here). mutmut 3.8.1 updates
that record only for tests new since it was taken: a function added or changed since
keeps only the new tests, so an old test that calls it never runs against its mutants
and they "survive" (export's `_ops` did, though tests/test_export_survivors_spec.py kills
all but one of them). Use it whenever verdict code changed since the last full record.

--no-run classifies and reports mutmut's results as they stand in --work, without a run:
after `mutmut run NAME ...` there re-ran only the survivors against new tests (each
mutant's result is mutmut's own either way).
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERDICT_MODULES = ["linkroof.roofline.timeline", "linkroof.roofline.traces", "linkroof.roofline.cost",
                   "linkroof.readers.telemetry", "linkroof.readers.flightrec", "linkroof.roofline.clockstate",
                   "linkroof.roofline.export", "linkroof.scoring.score", "linkroof.roofline.advise",
                   "linkroof.roofline.contradictions"]
# the tests that can kill a verdict's mutant: not the GPU's, the browser's, nor those about the repository's
# files (citations, docs, layers), which a mutant cannot change
SELECTION = ["tests/", "--ignore=tests/gpu", "--ignore=tests/test_dashboard_browser.py",
             "--ignore=tests/test_results_citations.py", "--ignore=tests/test_results_figures.py",
             "--ignore=tests/test_docs.py", "--ignore=tests/test_readme.py", "--ignore=tests/test_layers.py",
             # the hostile judge batteries: under mutmut's stats run a hanging stand-in outlived its
             # deadline (2026-12-04); scoring's rules are mutated by tests/tools/mutants.py meanwhile
             "--ignore=tests/test_score_hostile.py", "--ignore=tests/test_hostile_suite.py",
             "-p", "no:cacheprovider", "-q"]
# a mutant that makes a test wait (not spin: mutmut's CPU limit misses it) is killed after 60 s, not the
# suite's 300 s (4 of cost's mutants took 335 s each, 2026-12-04); through pytest-timeout's environment
# variable, since a change of the selection above makes mutmut forget every result it kept
TEST_TIMEOUT_S = 60
SKIP = (".git", ".venv", ".mirror", ".mutation", "mutants", ".hypothesis", "__pycache__")


def work_tree(work: Path, modules: list[str], leave_out: tuple[str, ...] = ()) -> None:
    """The working tree copied to `work` (its mutmut state kept), with a mutmut
    configuration naming the modules' files; files named by the `leave_out` patterns are
    not copied (and removed from an earlier copy)."""
    work.mkdir(parents=True, exist_ok=True)
    for item in ROOT.iterdir():
        if item.name in SKIP or item.name.startswith(".venv"):
            continue
        dest = work / item.name
        if item.is_dir():
            shutil.copytree(item, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*SKIP, "*.pyc", *leave_out))
            for pattern in leave_out:
                for old in dest.rglob(pattern):
                    old.unlink()
        else:
            shutil.copy2(item, dest)
    files = [m.replace(".", "/") + ".py" for m in modules]
    text = (ROOT / "pyproject.toml").read_text()
    copy = sorted(i.name + ("/" if i.is_dir() else "") for i in work.iterdir()
                  if i.name not in SKIP and i.name not in ("pyproject.toml",) and not i.name.endswith(".egg-info"))
    text += "\n[tool.mutmut]\nsource_paths = " + json.dumps(files) + "\npytest_add_cli_args_test_selection = " + \
        json.dumps(SELECTION) + "\nalso_copy = " + json.dumps(copy) + "\n"
    (work / "pyproject.toml").write_text(text)


def meta_path(work: Path, module: str) -> Path:
    """mutmut's own results for a module's file in the work copy: each mutant's exit code,
    and each function's hash (a result is kept while its function's hash holds)."""
    return work / "mutants" / (module.replace(".", "/") + ".py.meta")


def save_results(work: Path, module: str, out: Path) -> Path | None:
    """The module's mutmut results, gzipped, under out/meta: the raw file of its figures,
    and what --restore gives a later session's fresh work copy."""
    src = meta_path(work, module)
    if not src.exists():
        return None
    dest = out / "meta" / f"{module}.meta.json.gz"
    dest.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(dest, "wt") as f:
        f.write(json.dumps(json.loads(src.read_text()), separators=(",", ":")))
    return dest


def restore_results(work: Path, modules: list[str], folders: list[Path]) -> dict[str, str]:
    """Results saved by save_results, put back into a work copy that has none of its own for
    the module (the work copy's own come first), the last folder given that holds it winning.
    mutmut keeps each restored result whose function is unchanged and runs the rest."""
    done = {}
    for module in modules:
        dest = meta_path(work, module)
        if dest.exists():
            continue
        for folder in reversed(folders):
            src = folder / "meta" / f"{module}.meta.json.gz"
            if src.exists():
                dest.parent.mkdir(parents=True, exist_ok=True)
                with gzip.open(src, "rt") as f:
                    dest.write_text(f.read())
                done[module] = str(folder)
                break
    return done


def drop_stats(work: Path) -> bool:
    """Remove mutmut's record of which tests run which function (and each test's duration)
    from the work copy, so its next run takes it again over the whole suite; True if there
    was one. The mutants' results are kept: mutmut re-runs only what it has no result for."""
    stats = work / "mutants" / "mutmut-stats.json"
    if not stats.exists():
        return False
    stats.unlink()
    return True


def mutmut(work: Path, *args: str, timeout: float | None = None) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("mutmut")
    env = dict(os.environ, PYTEST_TIMEOUT=str(TEST_TIMEOUT_S))
    return subprocess.run([str(exe), *args], cwd=work, capture_output=True, text=True, timeout=timeout, env=env)


_STRING = re.compile(r'([rRbBuUfF]{0,2})("(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\')')


def _fields(literal: str) -> list[str]:
    """The {...} fields of an f-string's body (nested braces counted; {{ is no field)."""
    out, depth, cur, i = [], 0, "", 0
    while i < len(literal):
        ch = literal[i]
        if depth == 0 and literal[i:i + 2] in ("{{", "}}"):
            i += 2
            continue
        if ch == "{":
            depth += 1
            if depth == 1:
                cur = ""
                i += 1
                continue
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                out.append(cur)
                i += 1
                continue
        if depth:
            cur += ch
        i += 1
    return out


def _wording(prefix: str, a: str, b: str) -> bool:
    """Whether literal a -> b changes only a message's wording: not an f-string's fields
    (code: `{x / 1e9}`), and not a string without a space, which is a key, a kind, a type
    code or a separator that code reads ("idle", "sync", "q", ":")."""
    if "f" in prefix.lower() and _fields(a) != _fields(b):
        return False
    body = re.sub(r"\{[^{}]*\}", "", a[1:-1]) if "f" in prefix.lower() else a[1:-1]
    return any(c.isspace() for c in body)


def classify(diff: str) -> str:
    """'text' where the mutant only changes the wording of messages (string literals with
    a space in them, f-strings' fields untouched), else 'open'."""
    minus = [line[1:] for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    plus = [line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    if not minus or len(minus) != len(plus):
        return "open"
    for a, b in zip(minus, plus):
        if _STRING.sub('""', a) != _STRING.sub('""', b):
            return "open"
        la, lb = _STRING.findall(a), _STRING.findall(b)
        if len(la) != len(lb):
            return "open"
        for (pa, sa), (pb, sb) in zip(la, lb):
            if (pa, sa) != (pb, sb) and (pa.lower() != pb.lower() or not _wording(pa, sa, sb)):
                return "open"
    return "text"


def rebuilt_diffs(module: str, work: Path) -> dict[str, str]:
    """Each mutant's diff made again from the work copy's source (benchmarks/mutant_diffs.py);
    empty where that fails (mutmut's `show` is asked then)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    try:
        from mutant_diffs import mutant_diffs
        return mutant_diffs(module, work)[0]
    except Exception:
        return {}


def equivalents() -> dict[str, str]:
    out = {}
    path = ROOT / "tests" / "mutation" / "equivalent.txt"
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#") and " - " in line:
                name, why = line.split(" - ", 1)
                out[name.strip()] = why.strip()
    return out


def settled(module: str) -> set[str]:
    """The survivors the last report classed 'text' (a string's wording) or 'equivalent':
    --rerun-survivors leaves them be, as no new test is meant to kill them."""
    path = ROOT / "tests" / "mutation" / "survivors" / f"{module}.txt"
    if not path.exists():
        return set()
    return {line.split()[0] for line in path.read_text().splitlines()
            if not line.startswith("#") and len(line.split()) > 1 and line.split()[1] in ("text", "equivalent")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="*", default=VERDICT_MODULES)
    ap.add_argument("--budget-min", type=float, default=40.0, help="stop each chunk after this many minutes")
    ap.add_argument("--work", default=str(ROOT / ".mutation"), help="the copy mutmut works in (kept between runs)")
    ap.add_argument("--out", help="folder for the raw results (default benchmarks/data/<today>-mutation)")
    ap.add_argument("--no-run", action="store_true", help="report the results kept in --work without running mutmut")
    ap.add_argument("--rerun-survivors", action="store_true",
                    help="first run again each module's kept survivors (mutmut keeps a result until the function "
                         "changes, so new tests kill nothing it already ran)")
    ap.add_argument("--restore", action="append", default=[], metavar="FOLDER",
                    help="an earlier run's --out folder: its saved results (FOLDER/meta) are put back into a work "
                         "copy that has none for a module, so a fresh checkout goes on where that run stopped")
    ap.add_argument("--max-children", type=int, default=None,
                    help="mutmut's workers at once (its default: the cores); more where the tests mostly wait "
                         "(score's: deadlines of hung stand-ins)")
    ap.add_argument("--leave-out", action="append", default=[], metavar="GLOB",
                    help="files not copied into the work copy, e.g. a test file still being written beside the run")
    ap.add_argument("--fresh-stats", action="store_true",
                    help="take mutmut's record of which tests run which function again over the whole suite first "
                         "(it otherwise updates it for new tests only, missing old tests of changed functions)")
    args = ap.parse_args()
    work = Path(args.work)
    out = Path(args.out or ROOT / "benchmarks" / "data" / f"{datetime.date.today().isoformat()}-mutation")
    out.mkdir(parents=True, exist_ok=True)
    if not args.no_run:
        work_tree(work, VERDICT_MODULES, tuple(args.leave_out))
    restored = restore_results(work, VERDICT_MODULES, [Path(f) for f in args.restore])
    fresh = drop_stats(work) if args.fresh_stats and not args.no_run else False
    version = mutmut(work, "--version").stdout.strip()
    report = {"tool": version, "python": sys.version.split()[0], "machine": f"{os.cpu_count()} cores",
              "load": os.getloadavg(), "restored": restored,
              "stats": "taken again over the whole suite" if fresh else "kept (new tests added)", "modules": {}}
    equiv = equivalents()
    workers = ["--max-children", str(args.max_children)] if args.max_children else []
    for module in args.modules:
        lines: list[str] = []
        stopped: list[str] = []
        t0 = time.time()
        try:
            if args.rerun_survivors and not args.no_run:
                kept = [line.strip().rsplit(":", 1)[0].strip()
                        for line in mutmut(work, "results").stdout.splitlines()
                        if line.strip().startswith(module + ".") and line.strip().endswith(": survived")]
                kept = [n for n in kept if n not in settled(module) and n not in equiv]
                if kept:
                    mutmut(work, "run", *workers, *kept, timeout=args.budget_min * 60)
            if args.no_run:
                finished = True
            else:
                run = mutmut(work, "run", *workers, f"{module}.*",
                             timeout=max(60.0, args.budget_min * 60 - (time.time() - t0)))
                finished = run.returncode == 0
                if not finished:  # mutmut stopped of itself: its last words kept in the report
                    stopped = (run.stderr or run.stdout).strip().splitlines()[-3:]
        except subprocess.TimeoutExpired:
            finished = False
            stopped = [f"the chunk's budget of {args.budget_min:g} min ran out"]
        results = mutmut(work, "results", "--all", "true").stdout
        status = {}
        for line in results.splitlines():
            if ":" in line and line.strip().startswith(module + "."):
                name, st = line.strip().rsplit(":", 1)
                status[name.strip()] = st.strip()
        counts = {"killed": 0, "text": 0, "equivalent": 0, "open": 0, "no tests": 0, "other": 0}
        rebuilt = None
        for name, st in sorted(status.items()):
            if st == "killed":
                counts["killed"] += 1
            elif st == "survived":
                if name in equiv:
                    counts["equivalent"] += 1
                    lines.append(f"{name} equivalent - {equiv[name]}")
                    continue
                # the diff rebuilt from the work copy's source with mutmut's own generator: `mutmut show`
                # printed nothing for some (export's 3 'open' of 2026-12-05c were messages' wording)
                if rebuilt is None:
                    rebuilt = rebuilt_diffs(module, work)
                kind = classify(rebuilt.get(name) or mutmut(work, "show", name).stdout)
                counts[kind] += 1
                lines.append(f"{name} {kind} - " + ("the wording of a message or docstring, not a verdict"
                                                     if kind == "text" else "TODO: a killing test, or why equivalent"))
            elif st == "no tests":
                counts["no tests"] += 1
                lines.append(f"{name} no-tests - TODO: no test runs this function")
            else:
                counts["other"] += 1
        judged = counts["killed"] + counts["open"] + counts["no tests"]
        counts["killed_share"] = round(counts["killed"] / judged, 4) if judged else None
        counts["finished"] = finished
        if stopped:
            counts["stopped"] = stopped
        counts["run"] = "results kept in the work copy, not run again" if args.no_run else "run"
        counts["minutes"] = round((time.time() - t0) / 60, 1)
        saved = save_results(work, module, out)
        counts["results"] = str(saved.relative_to(ROOT)) if saved and saved.is_relative_to(ROOT) else str(saved)
        report["modules"][module] = counts
        # written after each module, so a chain stopped in its next module leaves this one's figures
        name = "report-" + "-".join(m.rsplit(".", 1)[-1] for m in args.modules)[:80] + ".json"
        (out / name).write_text(json.dumps(report, indent=1) + "\n")
        print(module, json.dumps(counts), flush=True)
        survivors = ROOT / "tests" / "mutation" / "survivors" / f"{module}.txt"
        survivors.parent.mkdir(parents=True, exist_ok=True)
        survivors.write_text(
            f"# Surviving mutants of {module} ({version}, benchmarks/mutation.py), one per line: name, class, why.\n"
            "# 'text' mutants change only a string's wording; 'equivalent' ones are justified in\n"
            "# tests/mutation/equivalent.txt; 'open' and 'no-tests' ones still need a killing test.\n"
            + "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
