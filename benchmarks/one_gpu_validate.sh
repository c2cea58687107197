#!/usr/bin/env bash
# On one GPU (kind nvidia-h200), in about 6 minutes: the GPU tests; what moves the launch
# term and the HBM read-only figure (one_gpu_terms_and_hbm.py); a quick and a launch /
# local bench with NVML's throttle counters read around each benchmark; `compare` of a
# bf16 / fp16 / fp8 torch kernel with a reference, placed without --profile while the
# newest stored profile lacks the HBM ceiling (it must take the newest one that has it);
# which cupti-python wheels (carried in .whl/cupti-<version>/) work with this driver.
#   bash benchmarks/one_gpu_validate.sh [quick]      (quick: no launch / read-kernel study)
source "$(dirname "$0")/prologue.sh"
log="$out/one_gpu_validate.log"
rm -f "$st" "$out/compare.txt" "$out/cupti_probe.jsonl"
{
  echo "== GPU tests"; t=$(date +%s%N)
  timeout 300 $py -m pytest -q -p no:cacheprovider --durations=5 tests/gpu 2>&1 | tail -25; echo "wall $(ms $t) ms"
  if [ "${1:-}" != quick ]; then
    echo "== launch term and HBM read kernel"; t=$(date +%s%N)
    timeout 240 $py benchmarks/one_gpu_terms_and_hbm.py --json "$out/one_gpu_terms_and_hbm.json" 2>&1 | tail -45
    echo "wall $(ms $t) ms"
  fi
  echo "== bench with throttle counters: launch, sync, local, compute"; t=$(date +%s%N)
  timeout 180 $py -m linkroof --store $st bench --only launch,sync,local,compute --label with-hbm --json \
    --out "$out/bench_one_gpu.json" >/dev/null 2>"$out/bench.err" || tail -5 "$out/bench.err"
  echo "wall $(ms $t) ms"
  $py - "$out/bench_one_gpu.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for m in doc["measurements"]:
    s = m["spec"]
    if s["name"] in ("launch_latency", "local_read_bandwidth", "gemm_throughput") or m["warnings"]:
        print(s["name"], s["pattern"], s["params"].get("dtype", ""), s["params"].get("launches_per_sample", ""),
              round(m["derived"]["median_s"] * 1e6, 3), "us", m["derived"]["bandwidth_bytes_per_s"] and
              round(m["derived"]["bandwidth_bytes_per_s"] / 1e9, 1), m["derived"]["flop_rate"] and
              round(m["derived"]["flop_rate"] / 1e12, 1), m["warnings"])
print("notes:", [n for n in doc["notes"] if "throttled" in n])
PY
  timeout 60 $py -m linkroof --store $st bench --only launch,sync --label partial >/dev/null 2>&1
  $py -m linkroof --store $st runs list
  echo "== compare picks the newest profile with the ceilings the workload needs"
  for dt in bfloat16 float16 float8_e4m3fn; do
    echo "-- $dt"
    LINKROOF_EXAMPLE_DTYPE=$dt timeout 120 $py -m linkroof --store $st compare examples/scale_torch.py:scale \
      --inputs examples/scale_torch.py:make_inputs --reference examples/scale_torch.py:scale_reference \
      --workload examples/scale.toml --no-save > /tmp/compare_$dt.txt 2>&1
    echo "rc=$?"; grep -E "Using profile|matches the reference|differs|Error|scale " /tmp/compare_$dt.txt | head -6
    { echo "== $dt"; cat /tmp/compare_$dt.txt; } >> "$out/compare.txt"
  done
  echo "== cupti-python with this driver"
  $py -m pip show nvidia-cuda-cupti cuda-bindings 2>/dev/null | grep -E "^(Name|Version)"
  for d in .whl/cupti-*; do
    v=${d#.whl/cupti-}; tgt=/tmp/cupti-$v; rm -rf $tgt
    $py -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target $tgt $d/*.whl 2>&1 | tail -2
    echo "-- cupti-python $v"
    PYTHONPATH=$tgt:$PYTHONPATH timeout 120 $py benchmarks/cupti_probe.py --json /tmp/cupti-$v.json 2>&1 | tail -8
    cat /tmp/cupti-$v.json >> "$out/cupti_probe.jsonl"; echo >> "$out/cupti_probe.jsonl"
  done
  echo "== ncu and its python report module"
  which ncu; ncu --version 2>&1 | tail -1; ls -d /opt/nvidia/nsight-compute/*/extras/python 2>/dev/null
} > "$log" 2>&1
rm -f "$out/bench.err"
cat "$log"
