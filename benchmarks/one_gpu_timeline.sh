#!/usr/bin/env bash
# On one GPU (kind nvidia-h200): the five programs of examples/programs_torch.py through
# `compare` with the CUPTI timeline (cupti-python carried in .whl/cupti-13.0.1), each
# call's activity records kept (the CPU tests' recordings), the same calls timed by
# torch.utils.benchmark, and ncu's metric names for the counters.
#   bash benchmarks/one_gpu_timeline.sh
source "$(dirname "$0")/prologue.sh"
log="$out/one_gpu_timeline.log"
rm -f "$st"; tl=/tmp/timelines; rm -rf $tl; mkdir -p $tl
$py -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/cupti .whl/cupti-13.0.1/*.whl
export PYTHONPATH=/tmp/cupti:$PYTHONPATH
{
  echo "== GPU tests"; t=$(date +%s%N)
  timeout 200 $py -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tail -2; echo "wall $(ms $t) ms"
  $py -m linkroof probe --json > $tl/probe.json 2>&1; echo "probe rc=$?"
  echo "== profile of this GPU (local, compute, launch, sync)"; t=$(date +%s%N)
  timeout 120 $py -m linkroof --store $st bench --only local,compute,launch,sync --label ceilings >/dev/null 2>&1
  echo "rc=$? wall $(ms $t) ms"
  run() {  # name, function, workload, extra args...
    local name=$1 fn=$2 wl=$3; shift 3
    echo "== compare $name"; t=$(date +%s%N)
    timeout 200 $py -m linkroof --store $st compare examples/programs_torch.py:$fn \
      --inputs examples/programs_torch.py:${fn}_inputs --workload examples/$wl --no-save \
      --record-timeline $tl/$name.json "$@" > $tl/$name.txt 2>&1
    echo "rc=$? wall $(ms $t) ms"
    sed -n '/Timeline per call/,$p' $tl/$name.txt | head -40
  }
  run scale scale scale_fp32.toml
  run gemm8192 gemm gemm.toml
  LINKROOF_EXAMPLE_MNK=1024 run gemm1024 gemm gemm1024.toml
  LINKROOF_EXAMPLE_MNK=1024 run gemm1024_gated gemm gemm1024.toml --gated
  run chain chain chain.toml
  run layernorm layernorm layernorm.toml
  echo "== torch.utils.benchmark"
  timeout 200 $py benchmarks/torch_benchmark_check.py 2>&1 | tee $tl/torch_benchmark.jsonl
  echo "== ncu metric names (dram, nvlink, flop)"
  timeout 120 ncu --query-metrics --chip gh100 2>/dev/null | grep -iE "^(dram__bytes|nvl[rt]x__bytes|sm__sass_thread_inst_executed_op_[dfh](add|mul|fma)_pred_on|sm__ops_path_tensor|sm__inst_executed_pipe_tensor|gpu__time_duration)" | head -40 > $tl/ncu_metrics.txt
  wc -l $tl/ncu_metrics.txt; head -40 $tl/ncu_metrics.txt
} > "$log" 2>&1
tar czf "$out/timelines.tgz" -C /tmp timelines
cat "$log"
