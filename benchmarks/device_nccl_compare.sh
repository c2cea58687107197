#!/usr/bin/env bash
# One call on nvidia-h200-x2: GPU tests, NCCL single process / mpirun / torchrun, and
# compare's targets, each step under its own timeout so one hang cannot eat the call.
set -u
out=${OUT:-out}; mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
py=${PYTHON:-python3}
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
log="$out/nccl_compare.log"
{
  echo "== GPU tests"; t=$(date +%s%N)
  timeout 200 $py -m pytest -q -x --durations=8 tests/gpu 2>&1 | tail -30; echo "wall $(ms $t) ms"
  echo "== NCCL"
  extra=""; mpirun --version 2>&1 | grep -q "Open MPI" && extra="--allow-run-as-root"
  t=$(date +%s%N); timeout 100 $py -m linkroof --store "$out/s.sqlite" bench --only nccl --suite full --no-save --json --out "$out/nccl_single.json" >/dev/null 2>"$out/single.err" || tail -5 "$out/single.err"; echo "single-process full sweep wall $(ms $t) ms"
  t=$(date +%s%N); timeout 90 mpirun $extra -n 2 $py -m linkroof --store "$out/s.sqlite" bench --only nccl --no-save --json --out "$out/nccl_mpi.json" >/dev/null 2>"$out/mpi.err" || tail -5 "$out/mpi.err"; echo "mpirun wall $(ms $t) ms"
  t=$(date +%s%N); timeout 90 torchrun --nproc-per-node 2 -m linkroof --store "$out/s.sqlite" bench --only nccl --no-save --json --out "$out/nccl_torchrun.json" >/dev/null 2>"$out/torchrun.err" || tail -5 "$out/torchrun.err"; echo "torchrun wall $(ms $t) ms"
  $py benchmarks/compare_nccl.py "$out/nccl_single.json" "$out/nccl_mpi.json" "$out/nccl_torchrun.json"
  echo "== compare targets"; timeout 60 $py benchmarks/compare_targets.py
  echo "== compare CLI on the examples"
  timeout 90 torchrun --nproc-per-node 2 -m linkroof --store "$out/s.sqlite" compare examples/allgather_gemm_naive.py:allgather_gemm --inputs examples/allgather_gemm_naive.py:make_inputs --workload examples/allgather_gemm.toml 2>&1 | tail -15
  timeout 90 torchrun --nproc-per-node 2 -m linkroof --store "$out/s.sqlite" compare examples/allreduce_torch.py:all_reduce --inputs examples/allreduce_torch.py:make_inputs --workload examples/allreduce.toml 2>&1 | tail -15
} > "$log" 2>&1
rm -f "$out/s.sqlite"*
cat "$log"
