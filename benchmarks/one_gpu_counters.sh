#!/usr/bin/env bash
# On one GPU (kind nvidia-h200): `compare --counters` on the programs of
# examples/programs_torch.py (each kernel's DRAM bytes, FLOPs, NVLink bytes from ncu, the
# raw pages kept as the CPU tests' recordings), the same kernels counted by ncu run by
# hand (benchmarks/ncu_plain.py: the 2 % check, and gpu__time_duration for the gated
# time), torch.utils.benchmark (the ungated time), what grows a small call's host cost,
# and the GPU tests.
#   bash benchmarks/one_gpu_counters.sh
source "$(dirname "$0")/prologue.sh"
log="$out/one_gpu_counters.log"
rm -f "$st"; d=/tmp/counters; rm -rf $d; mkdir -p $d
$py -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/cupti .whl/cupti-13.0.1/*.whl
export PYTHONPATH=/tmp/cupti:$PYTHONPATH
plain="dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum"
{
  echo "== profile of this GPU (local, compute, launch, sync)"; t=$(date +%s%N)
  timeout 120 $py -m linkroof --store $st bench --only local,compute,launch,sync --label ceilings >/dev/null 2>&1
  echo "rc=$? wall $(ms $t) ms"
  run() {  # name, function, workload ("-" for none), extra args...
    local name=$1 fn=$2 wl=$3; shift 3
    local w=(); [ "$wl" != "-" ] && w=(--workload examples/$wl)
    echo "== compare --counters $name"; t=$(date +%s%N)
    timeout 300 $py -m linkroof --store $st compare examples/programs_torch.py:$fn \
      --inputs examples/programs_torch.py:${fn}_inputs "${w[@]}" --no-save --counters \
      --record-counters $d/$name.ncu.csv --json "$@" > $d/$name.json 2> $d/$name.err
    echo "rc=$? wall $(ms $t) ms"; tail -3 $d/$name.err
    $py - $d/$name.json <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    print("no JSON:", e); sys.exit()
g = sorted(j["gated_times_s"])
print("median_us", round(j["median_s"] * 1e6, 2), "gated_median_us", round(g[len(g) // 2] * 1e6, 2) if g else None)
print("counters_note:", j["counters_note"])
for k, v in (j["kernel_counters"] or {}).items():
    print(" ", k[:70], {a: f"{b:.5g}" for a, b in v.items() if b})
for n in j["notes"]:
    print(" note:", n[:300])
for p in j["placements"][:6]:
    print(" placed:", p["workload"]["name"][:60], p["workload"]["source"], p["limiter"], round(p["measured_time_s"] * 1e6, 2), "us")
PY
    echo "-- ncu by hand: $name"; t=$(date +%s%N)
    timeout 200 ncu --clock-control none --profile-from-start off --csv --page raw --print-units base \
      --metrics $plain --log-file $d/$name.plain.csv $py benchmarks/ncu_plain.py $fn 5 > /dev/null 2>&1
    echo "rc=$? wall $(ms $t) ms"; grep -v "^==" $d/$name.plain.csv | cut -c1-400 | head -4
  }
  run scale scale scale_fp32.toml
  LINKROOF_EXAMPLE_MNK=1024 run gemm1024 gemm gemm1024.toml
  run gemm8192 gemm -
  run layernorm layernorm layernorm.toml
  echo "== GPU tests"; t=$(date +%s%N)
  timeout 400 $py -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tail -15; echo "wall $(ms $t) ms"
  echo "== torch.utils.benchmark"
  timeout 200 $py benchmarks/torch_benchmark_check.py 2>&1 | tee $d/torch_benchmark.jsonl
  echo "== host cost factors"
  timeout 120 $py benchmarks/host_cost_factors.py 2>&1 | tee $d/host_cost_factors.jsonl
  echo "== compare --counters chain (200 kernels)"; t=$(date +%s%N)
  run chain chain chain.toml
  echo "-- ncu by hand, caches not flushed (--cache-control none): gemm1024, scale"
  for c in gemm1024:gemm scale:scale; do n=${c%%:*} f=${c##*:}
    [ $n = gemm1024 ] && export LINKROOF_EXAMPLE_MNK=1024
    timeout 120 ncu --clock-control none --cache-control none --profile-from-start off --csv --page raw --print-units base \
      --metrics $plain --log-file $d/$n.hot.csv $py benchmarks/ncu_plain.py $f 5 > /dev/null 2>&1; echo "$n rc=$?"
    unset LINKROOF_EXAMPLE_MNK
  done
  echo "== compare --counters layernorm, as text"
  timeout 200 $py -m linkroof --store $st compare examples/programs_torch.py:layernorm \
    --inputs examples/programs_torch.py:layernorm_inputs --workload examples/layernorm.toml --no-save --counters \
    > $d/layernorm.txt 2>&1; echo "rc=$?"; cat $d/layernorm.txt
} > "$log" 2>&1
tar czf "$out/counters.tgz" -C /tmp counters
cat "$log"
