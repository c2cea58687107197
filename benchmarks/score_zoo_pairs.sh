#!/usr/bin/env bash
# Two zoo pairs through `linkroof score` on the device (kind nvidia-h200), their inputs
# functions taking no arguments (seeded by the child from the trial): correct, timed, and
# their feedback. Packed into $OUT/score_pairs.tgz.
set -u; o=$OUT/p; mkdir -p $o
export PYTHONPATH=$PWD TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NCCL_NVLS_ENABLE=0
for pair in "triton_softmax softmax_ref" "scale_by_max scale_by_max_sync_ref"; do set -- $pair
  timeout 100 python3 -m linkroof --store /tmp/score.sqlite score examples/zoo/programs.py:$2 examples/zoo/programs.py:$1 \
    --inputs examples/zoo/programs.py:$1_inputs --trials 2 --profile reference --json > $o/score_$1.json 2> $o/score_$1.err
  python3 -c "import json,sys; [print(r['candidate'], r.get('correct'), r.get('speedup'), r['feedback'][:400]) for r in map(json.loads, open(sys.argv[1]))]" $o/score_$1.json
done
tar czf $OUT/score_pairs.tgz -C $o .
