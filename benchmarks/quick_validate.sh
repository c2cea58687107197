#!/usr/bin/env bash
# Measures on a 2-GPU machine (kind nvidia-h200-x2) in about 5 minutes: the GPU tests;
# the SM and TMA peer copies with their message-size sweeps (full suite's points);
# `linkroof check` of a fresh quick run against the bundled reference; and NCCL timed
# gated, graph-replayed and host-launched side by side (nccl_timing.py).
#   bash benchmarks/quick_validate.sh
source "$(dirname "$0")/prologue.sh"
log="$out/quick_validate.log"
{
  echo "== GPU tests"; t=$(date +%s%N)
  timeout 240 $py -m pytest -q -p no:cacheprovider --durations=5 tests/gpu 2>&1 | tail -15; echo "wall $(ms $t) ms"
  echo "== SM / TMA peer copies and sweeps (full suite points)"; t=$(date +%s%N)
  timeout 200 $py -m linkroof --store $st bench --suite full --only peer_sm,peer_tma,sweep --no-save --json \
    --out "$out/peer_sweeps.json" >/dev/null 2>"$out/sweeps.err" || tail -5 "$out/sweeps.err"; echo "wall $(ms $t) ms"
  $py benchmarks/summarize.py "$out/peer_sweeps.json" | grep -v fastest | tail -25
  echo "== linkroof check --baseline reference (fresh quick run)"; t=$(date +%s%N)
  timeout 90 $py -m linkroof --store $st check --baseline reference --junit "$out/check.xml" 2>&1 | tail -12
  echo "rc=${PIPESTATUS[0]} wall $(ms $t) ms"
  echo "== NCCL: gated / graph / host-launched"
  timeout 200 $py benchmarks/nccl_timing.py --json "$out/nccl_timing.json" 2>&1 | tail -20
} > "$log" 2>&1
rm -f "$out/sweeps.err"
cat "$log"
