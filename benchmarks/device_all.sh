#!/usr/bin/env bash
# One call on nvidia-h200-x2 that re-validates everything measured: the GPU tests, the
# full suite (the bundled reference), NCCL single-process / mpirun / torchrun, and
# compare's targets. At most 8 files under $OUT (the device tool's limit).
set -u
out=${OUT:-out}; mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
py=${PYTHON:-python3}
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
log="$out/all.log"
{
  echo "== GPU tests"; $py -m pytest -q tests/gpu 2>&1 | tail -8
  echo "== quick suite (cold CuPy cache)"
  t=$(date +%s%N); CUPY_CACHE_DIR=$(mktemp -d) $py -m linkroof --store "$out/s.sqlite" bench --suite quick --no-save --json >/dev/null 2>&1; echo "wall $(ms $t) ms"
  echo "== default suite"
  t=$(date +%s%N); $py -m linkroof --store "$out/s.sqlite" bench --no-save --json >/dev/null 2>&1; echo "wall $(ms $t) ms"
  echo "== full suite"
  t=$(date +%s%N); timeout 300 $py -m linkroof --store "$out/s.sqlite" bench --suite full --label reference:h200x2 --json --out "$out/full.json" >/dev/null 2>&1; echo "wall $(ms $t) ms"
  $py benchmarks/summarize.py "$out/full.json" | grep -v fastest
  echo "== NCCL"
  extra=""; mpirun --version 2>&1 | grep -q "Open MPI" && extra="--allow-run-as-root"
  t=$(date +%s%N); $py -m linkroof --store "$out/s.sqlite" bench --only nccl --suite full --no-save --json --out "$out/nccl_single.json" >/dev/null 2>&1; echo "single-process sweep wall $(ms $t) ms"
  t=$(date +%s%N); mpirun $extra -n 2 $py -m linkroof --store "$out/s.sqlite" bench --only nccl --no-save --json --out "$out/nccl_mpi.json" >/dev/null 2>"$out/mpi.err" || tail -3 "$out/mpi.err"; echo "mpirun wall $(ms $t) ms"
  t=$(date +%s%N); torchrun --nproc-per-node 2 -m linkroof --store "$out/s.sqlite" bench --only nccl --no-save --json --out "$out/nccl_torchrun.json" >/dev/null 2>"$out/torchrun.err" || tail -3 "$out/torchrun.err"; echo "torchrun wall $(ms $t) ms"
  $py benchmarks/compare_nccl.py "$out/nccl_single.json" "$out/nccl_mpi.json" "$out/nccl_torchrun.json"
  echo "== compare targets"; $py benchmarks/compare_targets.py --profile "$out/full.json"
} > "$log" 2>&1
cat "$log"
