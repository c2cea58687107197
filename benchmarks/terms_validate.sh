#!/usr/bin/env bash
# Measures on a 2-GPU machine (kind nvidia-h200-x2) in about 5 minutes: the GPU tests;
# the cost-model terms of the full suite (launch, sync, reductions, GEMM beside
# communication); every GEMM data type with signed (normal) inputs; the default
# suite's wall time with where it goes.
#   bash benchmarks/terms_validate.sh
source "$(dirname "$0")/prologue.sh"
log="$out/terms_validate.log"
{
  echo "== GPU tests"; t=$(date +%s%N)
  timeout 300 $py -m pytest -q -p no:cacheprovider --durations=8 tests/gpu 2>&1 | tail -30; echo "wall $(ms $t) ms"
  echo "== cost-model terms (full suite: launch, sync, reduce, overlap)"; t=$(date +%s%N)
  timeout 200 $py -m linkroof --store $st bench --suite full --only launch,sync,reduce,overlap --no-save --json \
    --out "$out/terms.json" >/dev/null 2>"$out/terms.err" || tail -20 "$out/terms.err"; echo "wall $(ms $t) ms"
  $py benchmarks/dump.py "$out/terms.json"
  echo "== GEMM, signed (normal) and uniform inputs"
  timeout 120 $py - <<'PY'
from linkroof.microbench import compute
for dist in ("normal", "uniform"):
    for dt in compute.GEMM_DTYPES:
        m = compute.gemm(0, dt, reps=3, dist=dist)
        print(f"{dt:5} {dist:8} {m.flop_rate / 1e12:7.1f} TFLOP/s  verified={m.verified}  {m.verification}")
PY
  echo "== default suite"; t=$(date +%s%N)
  timeout 150 $py -m linkroof --store $st bench --no-save --json --out "$out/default.json" >/dev/null 2>"$out/default.err" \
    || tail -5 "$out/default.err"; echo "wall $(ms $t) ms"
  $py - "$out/default.json" <<'PY'
import json, sys
for n in json.load(open(sys.argv[1]))["notes"][-2:]:
    print(n[:700])
PY
} > "$log" 2>&1
rm -f "$out/terms.err" "$out/default.err"
cat "$log"
