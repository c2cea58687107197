"""Re-apply survivors' diffs to a copy of the tree and run chosen tests: a quick check that
new tests kill mutants mutmut left open, before mutmut's own (slower) run of them.

    python tests/tools/reapply.py DIFFS FILE TEST ...

DIFFS: "## name" then the mutant's "-" and "+" lines (as `mutmut show` prints them);
FILE: the module in a copy of the tree (never the working tree). Prints killed/SURVIVED
per mutant and restores FILE."""

import subprocess
import sys
from pathlib import Path

diffs = Path(sys.argv[1]).read_text().split("## ")[1:]
target = Path(sys.argv[2]); tests = sys.argv[3:]
orig = target.read_text()
alive = []
for d in diffs:
    name = d.splitlines()[0].strip()
    minus = [l[1:] for l in d.splitlines()[1:] if l.startswith("-")]
    plus = [l[1:] for l in d.splitlines()[1:] if l.startswith("+")]
    old = "\n".join(minus); new = "\n".join(plus)
    if orig.count(old) != 1:
        print(name, "SKIP (", orig.count(old), "matches)"); continue
    target.write_text(orig.replace(old, new))
    r = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests], capture_output=True, text=True, cwd=target.parents[2])
    print(name, "killed" if r.returncode else "SURVIVED")
    if not r.returncode: alive.append(name)
target.write_text(orig)
print("alive:", alive)
