"""Checks rows of `linkroof score` / `linkroof batch` against the answers written beside
the candidates (examples/score/batch_answers.toml): each job's verdict (correct, wrong,
suspect with its likely cause, or a failure kind), and prints one line per row with the
facts behind it (time, floor, peak fraction, speedup, the suspect reasons).

    python3 benchmarks/score_hostile.py ROWS.jsonl [ANSWERS.toml]
Exit 0 when every row with an answer matches it."""

import json
import sys
import tomllib


def verdict(r):
    f = r.get("failure")
    if f:
        return f"failure:{f['kind']}"
    if r.get("suspect"):
        return "suspect:" + ",".join(r["suspect"]["likely_causes"])
    return "correct" if r.get("correct") else "wrong"


def key(r):
    if "job" in r:
        prob, cand = r["job"].split("::", 1)
        return prob, cand
    return None, r.get("spec", "")


def main(rows_path, answers_path="examples/score/batch_answers.toml"):
    answers = tomllib.load(open(answers_path, "rb"))["answers"]
    rows = [json.loads(line) for line in open(rows_path) if line.strip()]
    bad = 0
    for r in rows:
        prob, cand = key(r)
        want = next((v for k, v in answers.items() if (prob is None or k.split("::")[0] == prob)
                     and cand.split(":")[0].endswith(k.split("::", 1)[1])), None)
        got = verdict(r)
        ok = want is None or got == want or (want.startswith("suspect:") and got.startswith("suspect:")
                                             and want.split(":", 1)[1] in got)
        bad += not ok
        t = r.get("time_s")
        facts = [f"time {t * 1e6:.1f} us" if t else "no time", f"wall {r.get('wall_s', 0):.1f} s"]
        if r.get("floor_s"):
            facts.append(f"floor {r['floor_s'] * 1e6:.1f} us")
        if r.get("peak_fraction") is not None:
            facts.append(f"peak {r['peak_fraction']:.0%}")
        if r.get("speedup"):
            facts.append(f"{r['speedup']:.2f}x")
        if r.get("processes_killed_after"):
            facts.append(f"{r['processes_killed_after']} processes killed after")
        print(("ok  " if ok else "BAD ") + f"{prob or '-'}::{cand}: {got}" + (f" (want {want})" if not ok else "")
              + " | " + ", ".join(facts))
        for why in (r.get("suspect") or {}).get("reasons", []):
            print("      suspect:", why[:220])
        if r.get("failure"):
            print("      failure:", r["failure"]["message"][:220])
    print(f"{len(rows)} rows, {bad} not as answered")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
