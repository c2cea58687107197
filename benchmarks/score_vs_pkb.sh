#!/usr/bin/env bash
# On one GPU (kind nvidia-h200): `linkroof score --protocol pkb` beside
# ParallelKernelBench's own harness (its public source in the git-ignored .pkb/, carried
# to the device, never committed) on the same pair: PKB's problem 12 (all-gather + GEMM,
# 1024 x 512 x 1024 bf16, one rank) against two candidates of examples/score/ (the fp32
# one, slow; the one-rank shortcut, fast), 3 trials each side; then the example batch
# under linkroof's protocol (fast, slow, wrong, hangs, raises), and the GPU tests.
#   bash benchmarks/score_vs_pkb.sh
source "$(dirname "$0")/prologue.sh"
log="$out/score_vs_pkb.log"
d=/tmp/score; rm -rf $d; mkdir -p $d/slow $d/fast
$py -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/cupti .whl/cupti-13.0.1/*.whl
export PYTHONPATH=/tmp/cupti:$PYTHONPATH TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NCCL_NVLS_ENABLE=0
cp examples/score/allgather_gemm_slow.py $d/slow/12_allgather_gemm_cuda.py
cp examples/score/allgather_gemm_fast.py $d/fast/12_allgather_gemm_cuda.py
{
  for c in slow fast; do
    echo "== PKB's harness, $c"; t=$(date +%s%N)
    (cd .pkb && timeout 200 $py run_local.py --nproc-per-node 1 --mode eval --problem 12 --solution cuda \
      --solutions-dir $d/$c --measure-perf --trials 3) > $d/pkb_$c.txt 2>&1
    echo "rc=$? wall $(ms $t) ms"; grep -E "trial [0-9]+:" $d/pkb_$c.txt | cut -c1-200
  done
  echo "== linkroof score --protocol pkb, same pair"; t=$(date +%s%N)
  timeout 250 $py -m linkroof score .pkb/reference/12_allgather_gemm.py $d/slow/12_allgather_gemm_cuda.py \
    $d/fast/12_allgather_gemm_cuda.py --inputs pkb:$PWD/.pkb --protocol pkb --trials 3 --json > $d/linkroof_pkb.jsonl 2> $d/linkroof_pkb.err
  echo "rc=$? wall $(ms $t) ms"; tail -3 $d/linkroof_pkb.err
  $py -c "
import json,sys
for l in open('$d/linkroof_pkb.jsonl'):
    r=json.loads(l); print(r['spec'][-40:], r['correct'], [round(x,4) for x in r.get('trial_speedups') or []], [ (t.get('reference_wall_time_ms'), t.get('wall_time_ms')) for t in r['trials']], r.get('failure'))
"
  echo "== linkroof score, the example batch (linkroof protocol)"; t=$(date +%s%N)
  timeout 300 $py -m linkroof score examples/score/allgather_gemm.py examples/score/allgather_gemm_fast.py \
    examples/score/allgather_gemm_slow.py examples/score/allgather_gemm_wrong.py examples/score/allgather_gemm_hangs.py \
    examples/score/allgather_gemm_raises.py --inputs examples/score/inputs.py:allgather_gemm_inputs --deadline 30 \
    --json > $d/examples.jsonl 2> $d/examples.err
  echo "rc=$? wall $(ms $t) ms"; tail -3 $d/examples.err
  $py -c "
import json
for l in open('$d/examples.jsonl'):
    r=json.loads(l); print(r['candidate'], r['correct'], r.get('speedup'), round(r['wall_s'],1), '|', r['feedback'][:400])
"
  echo "== GPU tests (score)"
  timeout 120 $py -m pytest -q -p no:cacheprovider tests/gpu/test_score_gpu.py 2>&1 | tail -3
} > "$log" 2>&1
tar czf "$out/score.tgz" -C /tmp score
cat "$log"
