"""Per-file seconds from a `pytest --durations=0` output, written to tests/file_seconds.json.

    python tests/tools/file_seconds.py DURATIONS.txt

The suite's conftest hands the files to pytest-xdist's workers longest first (longest
processing time first), so no long file starts last and runs alone at the end. The
figures only order the files: a stale or missing entry changes the order, never a result.
"""

import json
import re
import sys
from collections import Counter
from pathlib import Path

LINE = re.compile(r"\s*([\d.]+)s (?:call|setup|teardown)\s+(tests/[^:\s]+)")


def per_file(text: str) -> dict[str, float]:
    seconds: Counter = Counter()
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            seconds[m.group(2)] += float(m.group(1))
    return {f: round(s, 1) for f, s in seconds.most_common()}


if __name__ == "__main__":
    out = Path(__file__).resolve().parents[1] / "file_seconds.json"
    out.write_text(json.dumps(per_file(Path(sys.argv[1]).read_text()), indent=0) + "\n")
    print(f"{out}: {len(json.loads(out.read_text()))} files")
