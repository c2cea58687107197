#!/usr/bin/env bash
# One device round: GPU tests, SM read with/without the L2 prefetch hint, default and
# full suites (full under a time limit; SIGTERM keeps what was measured). Under $OUT.
set -u
out=${OUT:-out}; mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
py=${PYTHON:-python3}
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
{
  $py -m pytest -q -x tests/gpu 2>&1 | tail -25
  $py - <<'PY'
from linkroof.microbench import copies
for pf in (False, True, False, True):
    for mode in ("read", "write"):
        (m,) = copies.peer_copy(0, 1, mode, "sm", 512 << 20, 10, unroll=8, blocks=264, threads=1024, loops=8, l2_prefetch=pf)
        print(f"sm {mode} l2_prefetch={pf}: {m.bandwidth_bytes_per_s/1e9:.2f} GB/s cv {m.cv:.4f} {m.verified}")
PY
  t=$(date +%s%N); $py -m linkroof --store "$out/s.sqlite" bench --json --out "$out/default.json" > /dev/null 2>&1
  echo "default suite wall: $(ms $t) ms"
  t=$(date +%s%N); timeout ${FULL_TIMEOUT:-200} $py -m linkroof --store "$out/s.sqlite" bench --suite full --label "reference:h200x2" --json --out "$out/full.json" > /dev/null 2> "$out/full.err"
  echo "full suite wall: $(ms $t) ms"
  $py benchmarks/summarize.py "$out/default.json" "$out/full.json" > "$out/summary.txt" 2>&1
  $py -c "
import json
for f in ('default', 'full'):
    try: print(f, json.load(open('$out/' + f + '.json'))['notes'][-3:])
    except Exception as e: print(f, e)
"
} > "$out/round.log" 2>&1
cat "$out/round.log"; grep -v fastest "$out/summary.txt" | head -60
