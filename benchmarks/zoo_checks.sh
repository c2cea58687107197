#!/usr/bin/env bash
# On one GPU (kind nvidia-h200): the GPU tests, compare's CLI on three zoo programs
# (a drifting GEMM: burst and sustained; a sync; --steady), and the host-bound chain
# timed with and without the clock sampler's thread (does sampling slow the host?).
#   bash benchmarks/zoo_checks.sh
source "$(dirname "$0")/prologue.sh"
{
  echo "== GPU tests"; t=$(date +%s%N)
  [ -n "${SKIP_TESTS:-}" ] || timeout 330 $py -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tail -8; echo "wall $(ms $t) ms"
  for p in gemm_bf16 cpu_sync; do
    echo "== compare $p"
    timeout 60 $py -m linkroof --store $st compare examples/zoo/programs.py:$p --inputs examples/zoo/programs.py:${p}_inputs \
      --no-save --no-counters --profile reference --force 2>&1 | grep -v "^[│┃┏┗┡└├]" | cut -c1-400 | tail -25
  done
  echo "== compare gemm_bf16 --steady --json"
  timeout 60 $py -m linkroof --store $st compare examples/zoo/programs.py:gemm_bf16 --inputs examples/zoo/programs.py:gemm_bf16_inputs \
    --no-save --no-counters --profile reference --force --steady --json > $out/gemm_steady.json 2>/dev/null; echo "rc=$?"
  echo "== the chain with and without the sampler thread"
  timeout 120 $py benchmarks/sampler_ab.py
} 2>&1 | tee "$out/zoo_checks.log"
