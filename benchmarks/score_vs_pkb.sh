#!/usr/bin/env bash
# On one GPU (kind nvidia-h200): `linkroof score --protocol pkb` beside
# ParallelKernelBench's own harness (its public source in the git-ignored .pkb/, carried
# to the device, never committed) on the same pair: PKB's problem 12 (all-gather + GEMM,
# M x 512 x N bf16, one rank) against two candidates of examples/score/ (the fp32 one,
# slow; the one-rank shortcut, fast), TRIALS trials each side; then the example batches
# under linkroof's protocol (all-gather + GEMM: fast, slow, wrong, hangs, raises;
# all-reduce: fast, slow), and the GPU tests.
#   bash benchmarks/score_vs_pkb.sh                                   # PKB's default size, 3 trials
#   M=16384 N=16384 TRIALS=5 PARTS=pkb bash benchmarks/score_vs_pkb.sh  # where the GPU sets the time
#   CANDS=fast M=16384 ... : one candidate of the pair (both harnesses), where a lease is short
#   SIZE=_large PARTS="batch tests" bash benchmarks/score_vs_pkb.sh     # the batches at the large inputs,
#                                     placed on a profile measured first (bench --only local,compute,launch,sync)
source "$(dirname "$0")/prologue.sh"
M=${M:-1024}; N=${N:-1024}; TRIALS=${TRIALS:-3}; PARTS=${PARTS:-"pkb batch tests"}; SIZE=${SIZE:-}
CANDS=${CANDS:-"slow fast"}  # the pair's candidates to run this time (PKB's harness and linkroof's, each)
tag="${SIZE}_${PARTS// /_}_${CANDS// /_}"
log="$out/score_vs_pkb$tag.log"
d=/tmp/score; rm -rf $d; mkdir -p $d/slow $d/fast
$py -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/cupti .whl/cupti-13.0.1/*.whl
export PYTHONPATH=/tmp/cupti:$PYTHONPATH TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NCCL_NVLS_ENABLE=0
cp examples/score/allgather_gemm_slow.py $d/slow/12_allgather_gemm_cuda.py
cp examples/score/allgather_gemm_fast.py $d/fast/12_allgather_gemm_cuda.py
rows() {  # one line per row of a JSON-lines file: the facts, then whether the feedback agrees with them
  $py - "$1" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print("/".join(r["spec"].split(":")[0].split("/")[-2:]), "correct" if r["correct"] else "NOT correct", r.get("speedup"), round(r["wall_s"], 1),
          [round(x, 4) for x in r.get("trial_speedups") or []],
          [(t.get("reference_wall_time_ms"), t.get("wall_time_ms")) for t in r["trials"]][:5], r.get("failure"))
    d = r.get("decomposition") or {}
    if d and r.get("time_s"):
        tot = sum(v for v in d.values() if v > 0)
        print("   decomposition:", {k: f"{v * 1e6:.1f} us" for k, v in d.items()}, f"sum/time {tot / r['time_s']:.3f}")
        top = sorted(d.items(), key=lambda kv: -kv[1])[:2]
        said = all(f"{k} {v / tot:.0%}" in r["feedback"] for k, v in top)
        print("   feedback names the two largest measured parts:", said)
    for k in ("fraction_of_roofline", "fraction_of_cost_bound", "limiter", "link_bytes_per_call", "wire_efficiency"):
        if r.get(k) is not None:
            print(f"   {k}: {r[k]}")
    print("   |", r["feedback"][:700])
PY
}
{
  if [[ " $PARTS " == *" pkb "* ]]; then
    for c in $CANDS; do
      echo "== PKB's harness, $c, M=$M N=$N trials $TRIALS"; t=$(date +%s%N)
      (cd .pkb && timeout 280 $py run_local.py --nproc-per-node 1 --mode eval --problem 12 --solution cuda \
        --solutions-dir $d/$c --measure-perf --trials $TRIALS --m $M --n $N) > $d/pkb_$c.txt 2>&1
      echo "rc=$? wall $(ms $t) ms"; grep -E "trial [0-9]+:" $d/pkb_$c.txt | cut -c1-200
    done
    echo "== linkroof score --protocol pkb, same pair"; t=$(date +%s%N)
    cand=(); for c in $CANDS; do cand+=($d/$c/12_allgather_gemm_cuda.py); done
    timeout 280 $py -m linkroof score .pkb/reference/12_allgather_gemm.py "${cand[@]}" --inputs pkb:$PWD/.pkb --protocol pkb --trials $TRIALS --m $M --n $N \
      --json > $d/linkroof_pkb.jsonl 2> $d/linkroof_pkb.err
    echo "rc=$? wall $(ms $t) ms"; tail -3 $d/linkroof_pkb.err; rows $d/linkroof_pkb.jsonl
  fi
  if [[ " $PARTS " == *" batch "* ]]; then
    place=()
    if [[ -n "$SIZE" ]]; then
      echo "== this machine's profile: HBM, GEMM peaks per data type, launch and sync"; t=$(date +%s%N)
      timeout 150 $py -m linkroof --store $st bench --only local,compute,launch,sync > $d/bench.txt 2>&1
      echo "rc=$? wall $(ms $t) ms"
    fi
    echo "== linkroof score, the all-gather + GEMM batch (linkroof protocol), inputs allgather_gemm_inputs$SIZE"
    [[ -n "$SIZE" ]] && place=(--workload examples/score/allgather_gemm$SIZE.toml)
    t=$(date +%s%N)
    timeout 300 $py -m linkroof --store $st score examples/score/allgather_gemm.py examples/score/allgather_gemm_fast.py \
      examples/score/allgather_gemm_slow.py examples/score/allgather_gemm_wrong.py examples/score/allgather_gemm_hangs.py \
      examples/score/allgather_gemm_raises.py --inputs examples/score/inputs.py:allgather_gemm_inputs$SIZE --deadline 30 \
      "${place[@]}" --json > $d/examples.jsonl 2> $d/examples.err
    echo "rc=$? wall $(ms $t) ms"; tail -3 $d/examples.err; rows $d/examples.jsonl
    echo "== linkroof score, the all-reduce batch (linkroof protocol), inputs allreduce_inputs$SIZE"
    [[ -n "$SIZE" ]] && place=(--workload examples/score/allreduce$SIZE.toml)
    t=$(date +%s%N)
    timeout 200 $py -m linkroof --store $st score examples/score/allreduce.py examples/score/allreduce_fast.py \
      examples/score/allreduce_slow.py --inputs examples/score/inputs.py:allreduce_inputs$SIZE --deadline 30 \
      "${place[@]}" --json > $d/allreduce.jsonl 2> $d/allreduce.err
    echo "rc=$? wall $(ms $t) ms"; tail -3 $d/allreduce.err; rows $d/allreduce.jsonl
  fi
  if [[ " $PARTS " == *" tests "* ]]; then
    echo "== GPU tests"
    timeout 240 $py -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tail -4
  fi
} > "$log" 2>&1
tar czf "$out/score$tag.tgz" -C /tmp score
cat "$log"
