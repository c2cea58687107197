"""The diffs of a module's open mutants (survived, not 'text', not in equivalent.txt), from
a saved mutmut result file and the module's current source, in groups for killing tests.

    python benchmarks/mutant_diffs.py linkroof.readers.telemetry \
        --meta benchmarks/data/DATE-mutation/meta/linkroof.readers.telemetry.meta.json.gz \
        [--group 50] [--out benchmarks/data/DATE-mutation] [--status survived]

Each group is written to OUT/<module's last part>-open-<n>-diffs.txt as "## NAME" followed
by the mutant's unified diff: the format tests/tools/mutants.py --diffs applies. The
mutants are made again from the current source with mutmut's own code (not read back from
mutmut's work copy, where `mutmut show` prints nothing while a run regenerates the file).
A result kept for a function that has changed since is skipped (its mutant numbers no
longer name the same change); the count of those is printed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutation import ROOT, classify, equivalents  # noqa: E402

# exit codes as mutmut 3.8.1 reads them (mutmut.stats.status_by_exit_code)
STATUS = {"survived": {0}, "not run": {None}, "timeout": {36, -24, 24, 152, 255}, "no tests": {5, 33}}


def load_meta(path: Path) -> dict:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return json.load(f)


def mutant_diffs(module: str, root: Path = ROOT) -> tuple[dict[str, str], dict[str, str]]:
    """Each mutant's unified diff for the module's current source, by mutmut's name for it
    (mutmut's own mutation code: function by function, mutant i is the function's i-th
    mutation), and each function's hash as mutmut computes it."""
    from difflib import unified_diff

    import libcst as cst
    from mutmut import configuration
    from mutmut.mutation.file_mutation import (compute_function_hashes, create_mutations, deep_replace,
                                              group_by_top_level_node)
    from mutmut.mutation.trampoline_templates import mangle_function_name
    from mutmut.utils.file_utils import change_cwd

    rel = Path(module.replace(".", "/") + ".py")
    src = (root / rel).read_text()
    with tempfile.TemporaryDirectory() as tmp:  # mutmut reads its settings from the working folder
        (Path(tmp) / "pyproject.toml").write_text(f"[tool.mutmut]\nsource_paths = [{json.dumps(str(rel))}]\n")
        (Path(tmp) / rel).parent.mkdir(parents=True)
        (Path(tmp) / rel).write_text(src)
        # mutmut keeps its settings in one global: the caller's are put back after, for under mutmut's
        # own run (its stats run calls this through tests/test_mutant_diffs.py) the temporary ones
        # were saved as the run's and reset every kept result on the next (2026-12-05)
        kept = configuration._config
        try:
            with change_cwd(tmp):
                configuration.reset_config()
                tree, mutations, _, _ = create_mutations(str(rel), src)
                try:
                    hashes = compute_function_hashes(src)
                except Exception:
                    hashes = {}
        finally:
            configuration._config = kept
    grouped = group_by_top_level_node(mutations)
    funcs = []
    for stmt in tree.body:
        if isinstance(stmt, cst.FunctionDef):
            funcs.append((stmt, None))
        elif isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
            funcs += [(m, stmt.name.value) for m in stmt.body.body if isinstance(m, cst.FunctionDef)]
    diffs = {}
    for func, cls in funcs:
        mangled = mangle_function_name(name=func.name.value, class_name=cls) + "__mutmut"
        orig = cst.Module([func]).code.strip().split("\n")
        for i, mut in enumerate(grouped.get(func, ()), 1):
            changed = deep_replace(func, mut.original_node, mut.mutated_node)
            new_lines = cst.Module([changed]).code.strip().split("\n")
            diffs[f"{module}.{mangled}_{i}"] = "\n".join(
                unified_diff(orig, new_lines, fromfile=str(rel), tofile=str(rel), lineterm=""))
    return diffs, hashes


def open_diffs(module: str, meta: dict, status: str = "survived", root: Path = ROOT,
               equiv: dict[str, str] | None = None) -> tuple[list[tuple[str, str, str]], int]:
    """(name, class, diff) for each mutant of the module whose saved exit code is in the
    status asked, not in equivalent.txt; and how many were skipped as their function changed."""
    diffs, hashes = mutant_diffs(module, root)
    saved_hashes = meta.get("hash_by_function_name", {})
    equiv = equivalents() if equiv is None else equiv
    out, changed = [], 0
    for key, exit_code in sorted(meta["exit_code_by_key"].items()):
        if exit_code not in STATUS[status] or key in equiv:
            continue
        func = key.rsplit(".", 1)[-1].rsplit("__mutmut_", 1)[0]
        if hashes and saved_hashes.get(func) is not None and hashes.get(func) != saved_hashes.get(func):
            changed += 1
            continue
        if key not in diffs:  # the function or mutant is gone from the current source
            changed += 1
            continue
        out.append((key, classify(diffs[key]), diffs[key]))
    return out, changed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("module")
    ap.add_argument("--meta", required=True, help="a saved result file (OUT/meta/MODULE.meta.json.gz) or mutmut's .meta")
    ap.add_argument("--group", type=int, default=50, help="mutants per file (kept whole by function where it can)")
    ap.add_argument("--out", default=".", help="folder for the diff files")
    ap.add_argument("--status", choices=sorted(STATUS), default="survived")
    ap.add_argument("--json", action="store_true", help="print the names and classes as JSON, write no files")
    args = ap.parse_args()
    found, changed = open_diffs(args.module, load_meta(Path(args.meta)), args.status)
    found = [f for f in found if f[1] == "open" or args.status != "survived"]
    if args.json:
        print(json.dumps({"mutants": [n for n, _, _ in found], "changed_functions_skipped": changed}))
        return 0
    groups: list[list[tuple[str, str, str]]] = [[]]
    for item in found:
        func = item[0].rsplit("__mutmut_", 1)[0]
        last = groups[-1]
        if len(last) >= args.group and last[-1][0].rsplit("__mutmut_", 1)[0] != func:
            groups.append([])
        elif len(last) >= 2 * args.group:
            groups.append([])
        groups[-1].append(item)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    short = args.module.rsplit(".", 1)[-1]
    for i, group in enumerate(g for g in groups if g):
        path = out / f"{short}-{'open' if args.status == 'survived' else args.status.replace(' ', '-')}-{i + 1}-diffs.txt"
        path.write_text("".join(f"## {n}\n{d}\n\n" for n, _, d in group))
        funcs = sorted({n.rsplit('.', 1)[-1].rsplit('__mutmut_', 1)[0] for n, _, _ in group})
        print(f"{path}: {len(group)} mutants; {', '.join(funcs)}")
    print(f"{len(found)} {args.status}; {changed} skipped (their function changed since the result was saved)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
