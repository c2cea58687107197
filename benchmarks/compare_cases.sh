#!/usr/bin/env bash
# On a 2-GPU machine (kind nvidia-h200-x2), about 2 minutes: reference-style torch
# programs placed through `torchrun -m linkroof compare` against the bundled profile
# (issue 12's cases): an all-reduce after a clone at 2 MiB and 128 MiB, an all-gather +
# GEMM with B replicated and K = 512 at 1024^2 and 8192^2, a GEMM + reduce-scatter at
# 1024^3 and 8192^3; then each measured time's decomposition, baseline and wire
# efficiency (benchmarks/decomposition_summary.py).
#   bash benchmarks/compare_cases.sh
source "$(dirname "$0")/prologue.sh"
w=$(mktemp -d)
run() {  # name, callable, inputs, workload toml, env
  local name=$1; shift
  env "${@:4}" OMP_NUM_THREADS=1 timeout 150 torchrun --nproc-per-node 2 -m linkroof --store $st compare "$1" \
    --inputs "$2" --workload "$3" --profile reference --reps 30 --no-save --json > "$out/case-$name.json" \
    2>"$out/case.err" || { echo "$name failed"; tail -5 "$out/case.err"; }
}
for size in 2097152 134217728; do
  printf '[workload]\nname = "all-reduce + clone %s B"\nhbm_bytes = %s\nmessage_bytes = %s\nranks = 2\npattern = "all_reduce"\ndtype = "fp32"\n[workload.link_bytes]\nnvlink = %s\n' \
    $size $((2 * size)) $size $size > $w/ar$size.toml
  run ar-clone-$size examples/allreduce_torch.py:all_reduce_clone examples/allreduce_torch.py:make_inputs \
    $w/ar$size.toml LINKROOF_EXAMPLE_BYTES=$size
done
for mn in 1024 8192; do
  k=512; s=2
  printf '[workload]\nname = "all-gather + GEMM %sx%sx%s fp16, B replicated"\nmessage_bytes = %s\nranks = 2\npattern = "all_gather"\ndtype = "fp16"\nhbm_bytes = %s\n[workload.flops]\nfp16 = %s\n[workload.link_bytes]\nnvlink = %s\n' \
    $mn $mn $k $((s * mn * k)) $((s * (mn * k + k * mn + mn * mn))) $((2 * mn * mn * k)) $((s * mn * k / 2)) > $w/ag$mn.toml
  run ag-gemm-$mn examples/allgather_gemm_naive.py:allgather_gemm_replicated \
    examples/allgather_gemm_naive.py:make_inputs_replicated $w/ag$mn.toml LINKROOF_EXAMPLE_MNK=$mn,$mn,$k
  printf '[workload]\ntemplate = "gemm_reduce_scatter"\nm = %s\nn = %s\nk = %s\ndtype = "fp16"\nranks = 2\n' $mn $mn $mn > $w/rs$mn.toml
  run gemm-rs-$mn examples/gemm_reduce_scatter_torch.py:gemm_reduce_scatter \
    examples/gemm_reduce_scatter_torch.py:make_inputs $w/rs$mn.toml LINKROOF_EXAMPLE_MNK=$mn,$mn,$mn
done
rm -f "$out/case.err"
$py benchmarks/decomposition_summary.py "$out"/case-*.json | tee "$out/cases.txt"
