#!/usr/bin/env bash
# One device call for the kernel-generation-loop work (kind nvidia-h200): PARTS picks
#   hostile - benchmarks/score_hostile.sh's hostile candidates (real child, one H200)
#   batch   - the 20-candidate batch of examples/score/batch.toml, whole, checked against
#             examples/score/batch_answers.toml
#   tests   - tests/gpu/test_score_gpu.py (the examples, and the forging, None, daemon
#             and store candidates)
#   pkb     - per-candidate overhead beside ParallelKernelBench's own harness
#             (benchmarks/score_vs_pkb.sh PARTS=pkb; .pkb/ carried)
# Everything lands in $OUT/loops.tgz and $OUT/loops.log.
source "$(dirname "$0")/prologue.sh"
PARTS=${PARTS:-"hostile batch tests"}
w=/tmp/loops; rm -rf $w; mkdir -p $w
$py -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/cupti .whl/cupti-13.0.1/*.whl
export PYTHONPATH=/tmp/cupti:$PYTHONPATH TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NCCL_NVLS_ENABLE=0
{
  if [[ " $PARTS " == *" hostile "* ]]; then
    OUT=$w/hostile PARTS=hostile bash benchmarks/score_hostile.sh > /dev/null 2>&1; cat $w/hostile/score_hostile.log
  fi
  if [[ " $PARTS " == *" batch "* ]]; then
    echo "== batch, whole"; t=$(date +%s%N)
    timeout 330 $py -m linkroof batch examples/score/batch.toml --results $w/batch.jsonl --profile reference \
      > $w/batch.txt 2> $w/batch.err
    echo "rc=$? wall $(ms $t) ms"; tail -1 $w/batch.err
    $py benchmarks/score_hostile.py $w/batch.jsonl
  fi
  if [[ " $PARTS " == *" tests "* ]]; then
    echo "== GPU tests: score"; timeout 300 $py -m pytest -q -p no:cacheprovider tests/gpu/test_score_gpu.py 2>&1 | tail -4
  fi
  if [[ " $PARTS " == *" pkb "* ]]; then
    OUT=$w/pkb PARTS=pkb CANDS=${CANDS:-fast} TRIALS=${TRIALS:-3} bash benchmarks/score_vs_pkb.sh 2>&1 | tail -40
  fi
} > $OUT/loops.log 2>&1
tar czf $OUT/loops.tgz -C /tmp loops
cat $OUT/loops.log
