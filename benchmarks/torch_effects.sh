#!/usr/bin/env bash
# On a 2-GPU machine (kind nvidia-h200-x2), about 1 minute: the torch.distributed
# all-reduce cost per call and the launch / sync terms per rank under torchrun; and
# whether importing torch changes NCCL's device time at small sizes (mpirun with and
# without `import torch` first, same grid).
#   bash benchmarks/torch_effects.sh
source "$(dirname "$0")/prologue.sh"
{
  echo "== torchrun: bench --only launch,sync"
  OMP_NUM_THREADS=1 timeout 120 torchrun --nproc-per-node 2 -m linkroof --store $st bench --only launch,sync --no-save \
    --json --out "$out/torch_launch.json" >/dev/null 2>"$out/e" || tail -5 "$out/e"
  $py benchmarks/dump.py "$out/torch_launch.json" --names torch_collective_cost,launch_latency,sync_latency | cut -c1-160
  small="--only nccl --sizes 8:4K:8 --no-save --json"
  echo "== mpirun, plain and with torch imported first"
  timeout 90 mpirun $mpi_extra -n 2 $py -m linkroof --store $st bench $small --out "$out/mpi_plain.json" >/dev/null 2>&1
  timeout 90 mpirun $mpi_extra -n 2 $py -c "import torch, runpy, sys; sys.argv = ['linkroof'] + sys.argv[1:]; \
runpy.run_module('linkroof', run_name='__main__')" --store $st bench $small --out "$out/mpi_torch.json" >/dev/null 2>&1
  timeout 90 mpirun $mpi_extra -n 2 $py -m linkroof --store $st bench $small --out "$out/mpi_plain2.json" >/dev/null 2>&1
  $py benchmarks/launcher_parity.py "$out/mpi_plain.json" "$out/mpi_plain2.json" --limit 1
  $py benchmarks/launcher_parity.py "$out/mpi_plain.json" "$out/mpi_torch.json" --limit 1
} > "$out/torch_effects.log" 2>&1
rm -f "$out/e"
cat "$out/torch_effects.log"
