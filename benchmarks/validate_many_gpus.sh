#!/usr/bin/env bash
# Measures a 4- or 8-GPU NVSwitch machine (kinds nvidia-h200-x4, nvidia-h200-x8) in two
# calls, each inside the device tool's 10-minute limit and 8 files under $OUT:
#   bash benchmarks/validate_many_gpus.sh probe-default  # probe vs topo -m; default suite
#                                                        # on 2 / 4 / all GPUs (wall);
#                                                        # NCCL one process, mpirun, torchrun
#   bash benchmarks/validate_many_gpus.sh full           # the full suite: a bundled reference
# Never enables NVLink multicast (the machines set NCCL_NVLS_ENABLE=0).
source "$(dirname "$0")/prologue.sh"
part=${1:?probe-default or full}
n=$(nvidia-smi -L | wc -l)
all=$(seq -s, 0 $((n - 1)))
name=h200x$n
case $part in
probe-default)
  {
    echo "== $n GPUs"; OUT=$out bash benchmarks/probe_vs_smi.sh "$name" | tail -25
    for g in 0,1 0,1,2,3 "$all"; do
      t=$(date +%s%N)
      timeout 240 $py -m linkroof --store $st bench --gpus "$g" --no-save --json \
        --out "$out/default-$(echo "$g" | tr -cd , | wc -c).json" >/dev/null 2>&1
      echo "default suite on GPUs $g: wall $(ms $t) ms"
    done
    t=$(date +%s%N); timeout 90 mpirun $mpi_extra -n "$n" $py -m linkroof --store $st bench --only nccl --no-save \
      --json --out "$out/nccl_mpi.json" >/dev/null 2>"$out/mpi.err" || tail -5 "$out/mpi.err"
    echo "mpirun wall $(ms $t) ms"
    t=$(date +%s%N); timeout 90 torchrun --nproc-per-node "$n" -m linkroof --store $st bench --only nccl \
      --no-save --json --out "$out/nccl_torchrun.json" >/dev/null 2>"$out/torchrun.err" || tail -5 "$out/torchrun.err"
    echo "torchrun wall $(ms $t) ms"
    $py benchmarks/compare_nccl.py "$out/default-$((n - 1)).json" "$out/nccl_mpi.json" "$out/nccl_torchrun.json"
    $py benchmarks/summarize.py "$out/default-$((n - 1)).json" | head -20
  } > "$out/x8-probe-default.log" 2>&1
  rm -f "$out/mpi.err" "$out/torchrun.err" "$out/$name.replay.json" "$out/$name.topology.json"
  cat "$out/x8-probe-default.log" ;;
full)
  t=$(date +%s%N)
  timeout 560 $py -m linkroof --store $st bench --suite full --label "reference:$name" --json \
    --out "$out/$name.profile.json" >/dev/null 2>"$out/full.err" || tail -5 "$out/full.err"
  echo "full suite wall $(ms $t) ms" | tee "$out/x8-full.log"
  $py benchmarks/summarize.py "$out/$name.profile.json" | tee -a "$out/x8-full.log" ;;
*) echo "unknown part $part" >&2; exit 2 ;;
esac
