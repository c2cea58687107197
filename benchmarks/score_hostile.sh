#!/usr/bin/env bash
# On one GPU (kind nvidia-h200): the hostile candidates of examples/score/hostile through
# the real child, then the 20-candidate batch of examples/score/batch.toml interrupted and
# resumed. Checks: one honest row each (benchmarks/score_hostile.py against
# examples/score/batch_answers.toml), no process of a candidate left after the run, the
# store a candidate tried to delete still there, no raw escape byte on the terminal, the
# rows written before the interruption unchanged by the resume.
#   bash benchmarks/score_hostile.sh            # PARTS="hostile batch" by default
source "$(dirname "$0")/prologue.sh"
PARTS=${PARTS:-"hostile batch"}
log="$out/score_hostile.log"
$py -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/cupti .whl/cupti-13.0.1/*.whl
export PYTHONPATH=/tmp/cupti:$PYTHONPATH TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NCCL_NVLS_ENABLE=0
E=examples/score
leftover() {  # live processes carrying a score target's mark
  for p in /proc/[0-9]*; do { tr '\0' '\n' < $p/environ; } 2>/dev/null | grep -q '^LINKROOF_SCORE_JOB=' && echo ${p#/proc/}; done | wc -l
}
{
  if [[ " $PARTS " == *" hostile "* ]]; then
    export LINKROOF_STORE=/tmp/hostile-store.sqlite; echo "a store" > $LINKROOF_STORE
    echo "== hostile candidates, linkroof protocol (processes marked before: $(leftover))"; t=$(date +%s%N)
    timeout 500 $py -m linkroof score $E/softmax.py $E/softmax_triton.py $E/hostile/cached.py $E/hostile/sidestream.py \
      $E/hostile/patched.py $E/hostile/forge.py $E/hostile/none.py $E/hostile/huge.py $E/hostile/exit.py \
      $E/hostile/daemon.py $E/hostile/store.py $E/hostile/nan.py --inputs $E/inputs.py:softmax_inputs \
      --workload $E/softmax.toml --profile reference --trials 2 --deadline 120 --json \
      > $out/hostile.jsonl 2> $out/hostile.err
    echo "rc=$? wall $(ms $t) ms"; tail -3 $out/hostile.err
    echo "processes marked after: $(leftover); store still there: $(test -f $LINKROOF_STORE && echo yes || echo NO)"
    $py benchmarks/score_hostile.py $out/hostile.jsonl
    echo "== an escaping candidate on the terminal"
    timeout 200 $py -m linkroof score $E/softmax.py $E/hostile/escape.py --inputs $E/inputs.py:softmax_inputs \
      --trials 1 > $out/escape.txt 2>&1
    echo "rc=$? raw ESC bytes in the output: $(grep -c $'\x1b' $out/escape.txt)"; grep -a "owned" $out/escape.txt | head -2
    unset LINKROOF_STORE
  fi
  if [[ " $PARTS " == *" batch "* ]]; then
    echo "== batch: 20 candidates over 4 problems, interrupted after 90 s"; t=$(date +%s%N)
    rm -f $out/batch.jsonl
    timeout -s INT 90 $py -m linkroof batch $E/batch.toml --results $out/batch.jsonl --profile reference \
      > $out/batch_1.txt 2> $out/batch_1.err
    echo "rc=$? wall $(ms $t) ms; rows before the interruption: $(wc -l < $out/batch.jsonl)"
    cp $out/batch.jsonl /tmp/batch_before.jsonl
    echo "processes marked after the interruption: $(leftover)"
    t=$(date +%s%N)
    timeout 520 $py -m linkroof batch $E/batch.toml --results $out/batch.jsonl --profile reference \
      > $out/batch_2.txt 2> $out/batch_2.err
    echo "rc=$? wall $(ms $t) ms; rows: $(wc -l < $out/batch.jsonl)"; tail -2 $out/batch_2.err
    n=$(wc -l < /tmp/batch_before.jsonl)
    head -n $n $out/batch.jsonl | cmp -s - /tmp/batch_before.jsonl && echo "rows before the interruption unchanged: yes" \
      || echo "rows before the interruption unchanged: NO"
    echo "processes marked after: $(leftover)"
    $py benchmarks/score_hostile.py $out/batch.jsonl
    $py - $out/batch.jsonl <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
keys = [r["job"] for r in rows]
print("jobs", len(keys), "distinct", len(set(keys)))
w = [r["wall_s"] for r in rows if not r.get("failure") and r["protocol"] == "linkroof"]
print("per-candidate wall (linkroof protocol, scored rows): median %.1f s, min %.1f, max %.1f" % (sorted(w)[len(w) // 2], min(w), max(w)))
PY
  fi
} > "$log" 2>&1
cp /tmp/batch_before.jsonl "$out/" 2>/dev/null
tar czf "$out/score_hostile.tgz" -C "$out" --exclude score_hostile.tgz $(cd "$out" && ls)
cat "$log"
