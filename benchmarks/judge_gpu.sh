#!/usr/bin/env bash
# On one GPU (kind nvidia-h200), issue 41's GPU part: the jail's mode on this machine,
# the judge against real candidates (tests/gpu/test_score_gpu.py: the hostile ones of
# examples/score/hostile under both protocols, an honest Triton candidate and the
# reference untampered), then the CPU hostile suite run here as well (root, namespaces).
# Writes $OUT/judge_gpu.log. TESTS='-k ...' picks GPU tests; NO_CPU_SUITE=1 skips the CPU suite.
source "$(dirname "$0")/prologue.sh"
[ -d .whl/cupti-13.0.1 ] && $py -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/cupti .whl/cupti-13.0.1/*.whl
export PYTHONPATH=/tmp/cupti:$PYTHONPATH TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NCCL_NVLS_ENABLE=0
log=$out/judge_gpu.log
{
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
  echo "== jail probe"; $py -c "from linkroof.scoring import jail; print(jail.probe())"
  echo "== GPU: tests/gpu/test_score_gpu.py"; t=$(date +%s%N)
  # -s: one progress line a scored row; faulthandler: every thread's stack if a test runs past FH (500) s
  timeout ${LIMIT:-560} $py -m pytest tests/gpu/test_score_gpu.py -s -q -rs -p no:cacheprovider --durations=5 \
    -o faulthandler_timeout=${FH:-500} ${TESTS:-} 2>&1 | tail -80
  echo "rc=${PIPESTATUS[0]} wall $(ms $t) ms"
  if [ -z "${NO_CPU_SUITE:-}" ]; then
    echo "== CPU hostile suite on the device"; t=$(date +%s%N)
    timeout 150 $py -m pytest tests/test_hostile_suite.py -q -p no:cacheprovider 2>&1 | tail -8
    echo "wall $(ms $t) ms"
  fi
} > $log 2>&1
tail -70 $log
