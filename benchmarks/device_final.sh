#!/usr/bin/env bash
# On the accelerator machine: GPU tests, the quick suite twice (cold CuPy cache, then
# warm), the default suite and the full suite, with wall times. Writes under $OUT.
set -u
out=${OUT:-out}; mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
py=${PYTHON:-python3}
store="$out/store.sqlite"
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
log="$out/final.log"
{
  $py -m pytest -q tests/gpu 2>&1 | tail -3
  export CUPY_CACHE_DIR=$(mktemp -d)
  t=$(date +%s%N); $py -m linkroof --store "$store" bench --suite quick --json --out "$out/quick1.json" > /dev/null 2>&1
  echo "quick suite (cold CuPy cache) wall: $(ms $t) ms"
  t=$(date +%s%N); $py -m linkroof --store "$store" bench --suite quick --json --out "$out/quick2.json" > /dev/null 2>&1
  echo "quick suite (warm cache) wall: $(ms $t) ms"
  t=$(date +%s%N); $py -m linkroof --store "$store" bench --json --out "$out/default.json" > /dev/null 2>&1
  echo "default suite wall: $(ms $t) ms"
  t=$(date +%s%N); timeout ${FULL_TIMEOUT:-300} $py -m linkroof --store "$store" bench --suite full --label "reference:h200x2" --json --out "$out/full.json" > /dev/null 2> "$out/full.err"
  echo "full suite wall: $(ms $t) ms (rc $?)"
  tail -3 "$out/full.err"
  $py benchmarks/summarize.py "$out/quick1.json" "$out/quick2.json" "$out/default.json" "$out/full.json" > "$out/summary.txt" 2>&1
} > "$log" 2>&1
cat "$log"; grep -v "fastest" "$out/summary.txt"
