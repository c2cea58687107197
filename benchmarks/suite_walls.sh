#!/usr/bin/env bash
# Measures the suites' wall times on a 2-GPU machine (kind nvidia-h200-x2): the quick
# suite from a cold kernel cache, the default suite cold (under cProfile: where the
# wall time goes) and warm, and the NCCL sweep on its own (full grid).
#   bash benchmarks/suite_walls.sh
source "$(dirname "$0")/prologue.sh"
{
  echo "== quick suite (cold CuPy cache)"
  t=$(date +%s%N); CUPY_CACHE_DIR=$(mktemp -d) timeout 60 $py -m linkroof --store $st bench --suite quick --no-save --json --out "$out/quick.json" >/dev/null 2>&1; echo "wall $(ms $t) ms"
  export CUPY_CACHE_DIR=$(mktemp -d)
  echo "== default suite, cold cache, under cProfile"
  t=$(date +%s%N); timeout 150 $py -m cProfile -o /tmp/default.prof -m linkroof --store $st bench --no-save --json --out "$out/default_cold.json" >/dev/null 2>&1; echo "wall $(ms $t) ms"
  $py -c "import pstats; s=pstats.Stats('/tmp/default.prof'); s.sort_stats('tottime').print_stats(25)" 2>&1 | tail -40
  echo "== default suite, warm cache"
  t=$(date +%s%N); timeout 120 $py -m linkroof --store $st bench --no-save --json --out "$out/default.json" >/dev/null 2>&1; echo "wall $(ms $t) ms"
  echo "== NCCL sweep, full grid"
  t=$(date +%s%N); timeout 120 $py -m linkroof --store $st bench --only nccl --suite full --no-save --json --out "$out/nccl_full.json" >/dev/null 2>&1; echo "wall $(ms $t) ms"
  $py benchmarks/compare_nccl.py "$out/default.json" "$out/nccl_full.json"
  $py - "$out"/*.json <<'PY'
import json, sys
for f in sys.argv[1:]:
    print(f.split("/")[-1], json.load(open(f))["notes"][-1][:400])
PY
} > "$out/walls.log" 2>&1
cat "$out/walls.log"
