#!/usr/bin/env bash
# For the 8-GPU (or 4-GPU) NVSwitch machine, when one is lent: two calls, each well
# inside the device tool's 10-minute limit, each writing at most 8 files under $OUT.
#
#   bash benchmarks/device_x8.sh probe-default   # probe vs topo -m, default suite on
#                                                # 2 / 4 / all GPUs (wall), NCCL one
#                                                # process, mpirun and torchrun
#   bash benchmarks/device_x8.sh full            # the full suite: the second bundled
#                                                # reference (linkroof/data/)
# Never enables NVLink multicast (the machines set NCCL_NVLS_ENABLE=0).
set -u
part=${1:?probe-default or full}
out=${OUT:-out}; mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
py=${PYTHON:-python3}
st=/tmp/linkroof-x8.sqlite
n=$(nvidia-smi -L | wc -l)
all=$(seq -s, 0 $((n - 1)))
name=h200x$n
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
extra=""; mpirun --version 2>&1 | grep -q "Open MPI" && extra="--allow-run-as-root"
case $part in
probe-default)
  {
    echo "== $n GPUs"; OUT=$out bash benchmarks/device_probe.sh "$name" | tail -25
    for g in 0,1 0,1,2,3 "$all"; do
      t=$(date +%s%N)
      timeout 240 $py -m linkroof --store $st bench --gpus "$g" --no-save --json \
        --out "$out/default-$(echo "$g" | tr -cd , | wc -c).json" >/dev/null 2>&1
      echo "default suite on GPUs $g: wall $(ms $t) ms"
    done
    t=$(date +%s%N); timeout 90 mpirun $extra -n "$n" $py -m linkroof --store $st bench --only nccl --no-save \
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
