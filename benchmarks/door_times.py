"""How long the doors take to refuse what would hang them, and what a hanging candidate
costs a score batch: the wall-time targets the CPU tests used to assert (they failed
under load; the tests keep the behaviour, this script the time). Runs the tests' own
cases (tests/test_bad_input.py, tests/test_score.py) and prints one JSON line.

    python3 benchmarks/door_times.py
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from click.testing import CliRunner  # noqa: E402

from linkroof.cli import cli  # noqa: E402
from linkroof.scoring import score as S  # noqa: E402

TARGETS = {"fifo_refusals_s": 10.0, "huge_recording_refusal_s": 5.0, "score_batch_with_a_hang_s": 30.0}


def main() -> None:
    import test_score as T

    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        fifo = Path(tmp) / "pipe"
        os.mkfifo(fifo)
        store = str(Path(tmp) / "s.sqlite")
        t0 = time.monotonic()
        for args in (["runs", "import", str(fifo)], ["import", "nccl-tests", str(fifo)],
                     ["roofline", "--profile", "reference", "--workload", str(fifo), "--time", "1ms"],
                     ["probe", "--replay", str(fifo)]):
            assert CliRunner().invoke(cli, ["--store", store, *args]).exit_code != 0
        out["fifo_refusals_s"] = time.monotonic() - t0
        rec = json.loads((ROOT / "linkroof" / "data" / "h200x1.probe.json").read_text())
        worst = 0.0
        for count in (1000, 100_000):
            rec["nvml"]["device_count"] = {"value": count}
            f = Path(tmp) / "rec.json"
            f.write_text(json.dumps(rec))
            t0 = time.monotonic()
            assert CliRunner().invoke(cli, ["probe", "--replay", str(f)]).exit_code != 0
            worst = max(worst, time.monotonic() - t0)
        out["huge_recording_refusal_s"] = worst
        t0 = time.perf_counter()
        rows = S.score("m:reference", ["m:good", "m:slow", "m:wrong", "m:nan", "m:shape", "m:raises", "m:hangs",
                                       "m:crash"], "m:inputs", ranks=1, protocol="pkb", trials=3, deadline_s=4.0,
                       command=T.fake())
        out["score_batch_with_a_hang_s"] = time.perf_counter() - t0
        assert len(rows) == 8
    print(json.dumps({**{k: round(v, 2) for k, v in out.items()},
                      "within_targets": all(out[k] < t for k, t in TARGETS.items()), "targets": TARGETS}))


if __name__ == "__main__":
    main()
