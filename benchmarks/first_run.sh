#!/usr/bin/env bash
# The default suite's first run on one GPU (issue 43: a user's first run is the cold one,
# goal < 10 s): from an idle GPU with an empty CuPy kernel cache (twice, the first under
# benchmarks/stack_sample.py: where the time goes), from an idle GPU with a warm cache, and at once after (warm GPU, warm cache).
# The SM clock is read before each run. Writes $OUT/first_run.log and the runs' JSON.
#   bash benchmarks/first_run.sh
source "$(dirname "$0")/prologue.sh"
smi() { nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader; }
bench() { timeout 120 $py "$@" -m linkroof --store $st bench --no-save --json --out "$out/$name.json" >/dev/null 2>"$out/$name.err"; }
sampled() { timeout 120 $py benchmarks/stack_sample.py -m linkroof --store $st bench --no-save --json --out "$out/$name.json" >/dev/null 2>"$out/$name.err"; }
{
  for step in "cold-cache-idle-gpu-1 new profile" "cold-cache-idle-gpu-2 new" "warm-cache-idle-gpu keep" "warm-cache-warm-gpu keep now"; do
    set -- $step; name=$1
    [ "${2}" = new ] && export CUPY_CACHE_DIR=$(mktemp -d)
    [ "${4:-${3:-}}" = now ] || sleep ${IDLE_S:-30}
    echo "== $name (SM clock, power, temperature before: $(smi))"
    t=$(date +%s%N)
    if [ "${3:-}" = profile ]; then sampled; else bench; fi
    echo "wall $(ms $t) ms"
    $py -c "import json,sys; print(json.load(open(sys.argv[1]))['notes'][-1][:600])" "$out/$name.json" 2>&1
  done
  sed -n '/^== .* samples/,/^-- linkroof chains/p' "$out/cold-cache-idle-gpu-1.err" | head -60
} > "$out/first_run.log" 2>&1
cat "$out/first_run.log"
