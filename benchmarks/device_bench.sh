#!/usr/bin/env bash
# On the accelerator machine, from the repository root: the quick suite from a cold
# CuPy cache (wall time), then the default suite, then the GPU tests. Writes under $OUT.
set -u
out=${OUT:-out}; mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
py=${PYTHON:-python3}
export CUPY_CACHE_DIR=$(mktemp -d)   # cold compile cache
store="$out/store.sqlite"
what=${1:-quick,default,tests}
if [[ $what == *quick* ]]; then
  start=$(date +%s%N)
  $py -m linkroof --store "$store" bench --suite quick --out "$out/quick.json" 2>&1 | tee "$out/quick.txt"
  end=$(date +%s%N); echo "quick suite wall: $(( (end - start) / 1000000 )) ms (cold CuPy cache)" | tee -a "$out/quick.txt"
fi
if [[ $what == *default* ]]; then
  start=$(date +%s%N)
  $py -m linkroof --store "$store" bench --out "$out/default.json" > "$out/default.txt" 2>&1
  end=$(date +%s%N); echo "default suite wall: $(( (end - start) / 1000000 )) ms" | tee -a "$out/default.txt"
  tail -60 "$out/default.txt"
fi
if [[ $what == *tests* ]]; then
  $py -m pytest -q tests/gpu 2>&1 | tail -15
fi
