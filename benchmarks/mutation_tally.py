"""One module's mutation figure from everything that judged its mutants: mutmut's saved
results (a meta file from benchmarks/mutation.py's --out folder), and the logs of
tests/tools/mutants.py --diffs runs ("killed NAME" / "SURVIVED NAME"), which apply the
very mutants mutmut made (benchmarks/mutant_diffs.py rebuilds them with mutmut's code) to a
copy of the tree and run named tests.

    python benchmarks/mutation_tally.py linkroof.scoring.score \
        --meta benchmarks/data/DATE-mutation/meta/linkroof.scoring.score.meta.json.gz \
        --log 'benchmarks/data/DATE-mutation/score-*-reapplied.txt' [--json]

Each mutant gets one class, in this order:
- killed (mutmut): mutmut's exit code 1;
- killed (log): a log says "killed" (which log is kept);
- equivalent: named in tests/mutation/equivalent.txt;
- text: only a message's wording changed (benchmarks/mutation.py's classify);
- timeout: mutmut's timeout codes (left out of the share, as mutation.py does);
- open: survived mutmut, or survived every log that ran it;
- no tests: mutmut found no test running its function, and no log ran it;
- not run: neither mutmut nor a log ran it.
The share is killed / (killed + open + no tests), as in mutation.py's reports; "not run"
is counted beside it, never in it. A saved result for a function changed since is refused
(its mutant numbers would name other changes) unless --void-changed: then that function's
saved results are dropped and its current mutants are judged by the logs alone.
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutant_diffs import STATUS, load_meta, mutant_diffs  # noqa: E402
from mutation import ROOT, classify, equivalents  # noqa: E402

CLASSES = ("killed (mutmut)", "killed (log)", "equivalent", "text", "timeout", "open", "no tests", "not run")


def read_logs(paths: list[Path]) -> tuple[dict[str, str], dict[str, str]]:
    """(killed, survived): mutant name -> the log (file name) that said so. A mutant
    killed in any log is killed."""
    killed: dict[str, str] = {}
    survived: dict[str, str] = {}
    for p in paths:
        for line in p.read_text().splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "killed":
                killed.setdefault(parts[1], p.name)
            elif len(parts) == 2 and parts[0] == "SURVIVED":
                survived.setdefault(parts[1], p.name)
    return killed, survived


def tally(module: str, meta: dict, logs: list[Path], root: Path = ROOT,
          equiv: dict[str, str] | None = None, void_changed: bool = False, fresh: list[Path] = ()) -> dict:
    """`fresh`: logs made against the current source, the only ones that judge a function
    changed since the results were saved (older logs' names meant other changes there)."""
    diffs, hashes = mutant_diffs(module, root)
    saved = meta.get("hash_by_function_name", {})
    changed = sorted(f for f, h in saved.items() if hashes and hashes.get(f) != h)
    if changed and not void_changed:
        raise SystemExit(f"{module}: functions changed since the results were saved: {', '.join(changed)} "
                         "(--void-changed: their saved results dropped, their mutants made again from the source)")
    codes = dict(meta["exit_code_by_key"])
    for func in changed:  # mutmut's numbers name other changes now: only logs of the current source judge them
        prefix = f"{module}.{func}__mutmut_"
        codes = {n: c for n, c in codes.items() if not n.startswith(prefix)}
        codes.update({n: None for n in diffs if n.startswith(prefix)})
    equiv = equivalents() if equiv is None else equiv
    killed, survived = read_logs([*logs, *fresh])
    if changed:
        stale = tuple(f"{module}.{func}__mutmut_" for func in changed)
        new_killed, new_survived = read_logs(list(fresh))
        killed = {n: w for n, w in killed.items() if not n.startswith(stale)} | {
            n: w for n, w in new_killed.items() if n.startswith(stale)}
        survived = {n: w for n, w in survived.items() if not n.startswith(stale)} | {
            n: w for n, w in new_survived.items() if n.startswith(stale)}
    classes: dict[str, str] = {}
    for name, code in sorted(codes.items()):
        if code == 1:
            cls = "killed (mutmut)"
        elif name in killed:
            cls = "killed (log)"
        elif name in equiv:
            cls = "equivalent"
        elif name in diffs and classify(diffs[name]) == "text":
            cls = "text"
        elif code in STATUS["timeout"]:
            cls = "timeout"
        elif code in STATUS["survived"] or name in survived:
            cls = "open"
        elif code in STATUS["no tests"]:
            cls = "no tests"
        else:
            cls = "not run"
        classes[name] = cls
    counts = {c: sum(v == c for v in classes.values()) for c in CLASSES}
    k = counts["killed (mutmut)"] + counts["killed (log)"]
    judged = k + counts["open"] + counts["no tests"]
    return {"module": module, "mutants": len(classes), "counts": counts,
            "killed_share": round(k / judged, 4) if judged else None,
            "logs": sorted({p.name for p in logs}), "fresh_logs": sorted({p.name for p in fresh}), "changed_since_saved": changed,
            "open": sorted(n for n, c in classes.items() if c in ("open", "no tests", "not run")),
            "classes": classes, "killed_by": {n: killed[n] for n, c in classes.items() if c == "killed (log)"}}


def write_survivors(t: dict, root: Path = ROOT) -> Path:
    """The module's survivors file from a tally: each mutant neither mutmut nor a log
    killed, one line each (name, class, why), as benchmarks/mutation.py writes it."""
    equiv = equivalents()
    why = {"equivalent": lambda n: equiv.get(n, ""), "text": lambda n: "the wording of a message or docstring, not a verdict",
           "timeout": lambda n: "mutmut timed out on it (a test made to hang: detected, left out of the share)",
           "not run": lambda n: "neither mutmut nor a log ran it"}
    lines = [f"{n} {c} - " + why.get(c, lambda n: "TODO: a killing test, or why equivalent")(n)
             for n, c in sorted(t["classes"].items()) if not c.startswith("killed")]
    path = root / "tests" / "mutation" / "survivors" / f"{t['module']}.txt"
    path.write_text(f"# Surviving mutants of {t['module']} (mutmut 3.8.1's mutants, judged by mutmut and by "
                    "tests/tools/mutants.py logs: benchmarks/mutation_tally.py), one per line: name, class, why.\n"
                    "# 'text' mutants change only a string's wording; 'equivalent' ones are justified in\n"
                    "# tests/mutation/equivalent.txt; 'open', 'no tests' and 'not run' ones still need a run or a test.\n"
                    + "\n".join(lines) + "\n")
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("module")
    ap.add_argument("--meta", required=True, help="mutmut's saved results for the module (.meta.json[.gz])")
    ap.add_argument("--log", action="append", default=[], help="a mutants.py log, or a glob of them (repeatable)")
    ap.add_argument("--fresh-log", action="append", default=[],
                    help="a log (or glob) made against the current source: with --void-changed, the only logs "
                         "that judge a changed function")
    ap.add_argument("--void-changed", action="store_true",
                    help="a function changed since the results were saved: drop its saved results and judge its "
                         "current mutants by the logs only (give only logs made against the current source)")
    ap.add_argument("--json", action="store_true", help="print the whole tally as JSON")
    ap.add_argument("--write-survivors", action="store_true",
                    help="rewrite tests/mutation/survivors/MODULE.txt from this tally: every mutant not killed, "
                         "with its class and reason")
    args = ap.parse_args()
    logs = sorted({Path(p) for pattern in args.log for p in glob.glob(pattern)})
    fresh = sorted({Path(p) for pattern in args.fresh_log for p in glob.glob(pattern)})
    logs = [p for p in logs if p not in fresh]
    missing = [p for p in args.log + args.fresh_log if not glob.glob(p)]
    if missing:
        ap.error(f"no log matches {', '.join(missing)}")
    t = tally(args.module, load_meta(Path(args.meta)), logs, void_changed=args.void_changed, fresh=fresh)
    if args.write_survivors:
        write_survivors(t)
    if args.json:
        print(json.dumps(t, indent=1))
    else:
        print(f"{t['module']}: {t['mutants']} mutants; " + "; ".join(f"{c} {n}" for c, n in t["counts"].items()))
        share = t["killed_share"]
        print(f"killed share {share * 100:.1f} %" if share is not None else "nothing judged")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
