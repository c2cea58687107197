#!/usr/bin/env bash
# On one GPU (kind nvidia-h200), in about 6 minutes: the GPU tests; what moves the launch
# term and the HBM read-only figure (one_gpu_terms_and_hbm.py); `compare` of a bf16 /
# fp16 / fp8 torch kernel with a reference, placed without --profile while the newest
# stored profile lacks the HBM ceiling (it must take the newest one that has it).
#   bash benchmarks/one_gpu_validate.sh
source "$(dirname "$0")/prologue.sh"
log="$out/one_gpu_validate.log"
rm -f "$st"
{
  echo "== GPU tests"; t=$(date +%s%N)
  timeout 300 $py -m pytest -q -p no:cacheprovider --durations=5 tests/gpu 2>&1 | tail -25; echo "wall $(ms $t) ms"
  echo "== launch term and HBM read kernel"; t=$(date +%s%N)
  timeout 240 $py benchmarks/one_gpu_terms_and_hbm.py --json "$out/one_gpu_terms_and_hbm.json" 2>&1 | tail -45
  echo "wall $(ms $t) ms"
  echo "== compare picks the newest profile with the ceilings the workload needs"
  timeout 60 $py -m linkroof --store $st bench --only local --label with-hbm >/dev/null 2>&1
  timeout 60 $py -m linkroof --store $st bench --only launch,sync --label partial >/dev/null 2>&1
  $py -m linkroof --store $st runs list
  for dt in bfloat16 float16 float8_e4m3fn; do
    echo "-- $dt"
    LINKROOF_EXAMPLE_DTYPE=$dt timeout 120 $py -m linkroof --store $st compare examples/scale_torch.py:scale \
      --inputs examples/scale_torch.py:make_inputs --reference examples/scale_torch.py:scale_reference \
      --workload examples/scale.toml --no-save 2>&1 | tail -14
    echo "rc=${PIPESTATUS[0]}"
  done
} > "$log" 2>&1
cat "$log"
