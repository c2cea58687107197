#!/usr/bin/env bash
# On nvidia-h200-x2: NCCL collectives single-process, then one rank per GPU under mpirun
# and under torchrun; the figures of the three must agree within 2 %. Writes under $OUT.
set -u
out=${OUT:-out}; mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
py=${PYTHON:-python3}
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
{
  $py -m pytest -q tests/gpu/test_nccl_gpu.py 2>&1 | tail -3
  t=$(date +%s%N); $py -m linkroof --store "$out/s.sqlite" bench --only nccl --suite full --json --out "$out/nccl_single.json" >/dev/null 2>"$out/single.err"
  echo "single-process collectives sweep (7 collectives, 8 B-512 MiB, in/out of place): $(ms $t) ms"
  extra=""; mpirun --version 2>&1 | grep -q "Open MPI" && extra="--allow-run-as-root"
  t=$(date +%s%N); mpirun $extra -n 2 $py -m linkroof --store "$out/s.sqlite" bench --only nccl --json --out "$out/nccl_mpi.json" >/dev/null 2>"$out/mpi.err" || tail -5 "$out/mpi.err"
  echo "mpirun 2 ranks: $(ms $t) ms"
  t=$(date +%s%N); torchrun --nproc-per-node 2 -m linkroof --store "$out/s.sqlite" bench --only nccl --json --out "$out/nccl_torchrun.json" >/dev/null 2>"$out/torchrun.err" || tail -5 "$out/torchrun.err"
  echo "torchrun 2 ranks: $(ms $t) ms"
  $py benchmarks/compare_nccl.py "$out/nccl_single.json" "$out/nccl_mpi.json" "$out/nccl_torchrun.json"
} > "$out/nccl.log" 2>&1
cat "$out/nccl.log"
