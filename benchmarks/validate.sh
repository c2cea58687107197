#!/usr/bin/env bash
# Measures everything linkroof claims on a 2-GPU NVLink machine (kind nvidia-h200-x2),
# in one call of about 6 minutes: the GPU tests; the quick suite's wall from a cold
# kernel cache; the default and full suites (the full one labelled as a reference);
# NCCL as one process, under mpirun and under torchrun, compared; compare's targets.
# Each step has its own timeout; at most 8 files under $OUT.
#   bash benchmarks/validate.sh
source "$(dirname "$0")/prologue.sh"
log="$out/all.log"
{
  echo "== GPU tests"; t=$(date +%s%N)
  timeout 150 $py -m pytest -q --durations=5 tests/gpu 2>&1 | tail -12; echo "wall $(ms $t) ms"
  echo "== quick suite (cold CuPy cache)"
  t=$(date +%s%N); CUPY_CACHE_DIR=$(mktemp -d) timeout 60 $py -m linkroof --store $st bench --suite quick --no-save --json --out "$out/quick.json" >/dev/null 2>&1; echo "wall $(ms $t) ms"
  echo "== default suite"
  t=$(date +%s%N); timeout 120 $py -m linkroof --store $st bench --no-save --json --out "$out/default.json" >/dev/null 2>&1; echo "wall $(ms $t) ms"
  echo "== full suite"
  t=$(date +%s%N); timeout 280 $py -m linkroof --store $st bench --suite full --label reference:h200x2 --json --out "$out/full.json" >/dev/null 2>"$out/full.err" || tail -5 "$out/full.err"; echo "wall $(ms $t) ms"
  $py benchmarks/summarize.py "$out/full.json" | grep -v fastest
  echo "== NCCL under launchers (default suite)"
  t=$(date +%s%N); timeout 60 mpirun $mpi_extra -n 2 $py -m linkroof --store $st bench --only nccl --no-save --json --out "$out/nccl_mpi.json" >/dev/null 2>"$out/mpi.err" || tail -5 "$out/mpi.err"; echo "mpirun wall $(ms $t) ms"
  t=$(date +%s%N); timeout 60 torchrun --nproc-per-node 2 -m linkroof --store $st bench --only nccl --no-save --json --out "$out/nccl_torchrun.json" >/dev/null 2>"$out/torchrun.err" || tail -5 "$out/torchrun.err"; echo "torchrun wall $(ms $t) ms"
  $py benchmarks/compare_nccl.py "$out/default.json" "$out/full.json" "$out/nccl_mpi.json" "$out/nccl_torchrun.json"
  echo "== compare targets"; timeout 60 $py benchmarks/compare_targets.py --profile "$out/full.json"
} > "$log" 2>&1
rm -f "$out/mpi.err" "$out/torchrun.err" "$out/full.err"
cat "$log"
