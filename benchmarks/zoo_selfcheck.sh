#!/usr/bin/env bash
# Issue 43's "done when": the self-check (roofline/contradictions.py) on every zoo program's
# compare output (text notes, flags, ncu's why: PART=time over all of examples/zoo) and on
# score feedback for the zoo's candidate/reference pairs, on the device (kind nvidia-h200).
# Packs everything into $OUT/selfcheck.tgz; prints the self-check lines found.
set -u; export PYTHONUNBUFFERED=1
o=$OUT/s; mkdir -p $o/time
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/cupti .whl/cupti-13.0.1/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/cupti:$PWD TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NCCL_NVLS_ENABLE=0
OUT=$o/time SAVE_EACH=1 PART=time timeout ${ZOO_LIMIT:-330} python3 benchmarks/zoo.py > $o/zoo_time.log 2>&1
for pair in "triton_softmax softmax_ref" "scale_by_max scale_by_max_sync_ref" "atomics_spread atomics_contended"; do set -- $pair
  timeout 120 python3 -m linkroof --store /tmp/score.sqlite score examples/zoo/programs.py:$2 examples/zoo/programs.py:$1 \
    --inputs examples/zoo/programs.py:$1_inputs --trials 2 --profile reference --json > $o/score_$1.json 2> $o/score_$1.err
done
python3 - $o > $o/selfcheck.txt 2>&1 <<'PY'
import json, pathlib, sys
o = pathlib.Path(sys.argv[1]); n = found = 0
for line in (o / "time" / "zoo.jsonl").read_text().splitlines():
    d = json.loads(line); n += 1
    bad = [x for x in d.get("notes", []) if "self-check" in x]
    found += len(bad)
    print(d["program"], "error" if d.get("error") else "ok", len(bad), bad[:2], d.get("error", "")[:200])
for f in sorted(o.glob("score_*.json")):
    try:  # JSON lines: one row per candidate
        rows = [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
    except Exception as e:
        print(f.name, "unreadable", e); continue
    if not rows:
        print(f.name, "no row:", (o / f.name.replace(".json", ".err")).read_text()[-300:])
    for r in rows:
        fb = r.get("feedback", ""); bad = "self-check" in fb; found += bad
        print(f.name, r.get("candidate"), "self-check" if bad else "clean", fb[:300])
print(f"{n} zoo programs; {found} self-check line(s) in all")
PY
tar czf $OUT/selfcheck.tgz -C $o .
tail -3 $o/zoo_time.log; grep -c " ok=True" $o/zoo_time.log; tail -8 $o/selfcheck.txt
