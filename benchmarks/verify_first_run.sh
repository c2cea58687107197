#!/usr/bin/env bash
# Issue 43 after the first-run fix (kind nvidia-h200): benchmarks/first_run.sh (cold and warm
# runs of the default suite), every figure of those runs verified, the microbench GPU tests,
# and two candidate/reference pairs through compare; all packed into $OUT/w.tgz.
set -u; export PYTHONUNBUFFERED=1
o=$OUT/w; mkdir -p $o
OUT=$o IDLE_S=25 bash benchmarks/first_run.sh > /dev/null 2>&1
python3 - $o/*.json > $o/verified.txt 2>&1 <<'PY'
import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f)); ms = d.get("measurements", [])
    bad = [m["spec"]["name"] + " " + m.get("verification", "")[:200] for m in ms if not m.get("verified")]
    print(f.split("/")[-1], len(ms), "measurements,", len(bad), "unverified:", bad)
    print("  ", [m.get("verification", "")[:160] for m in ms if m["spec"]["name"] in ("gemm_throughput", "local_read_bandwidth")][:3])
PY
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NCCL_NVLS_ENABLE=0
timeout 150 python3 -m pytest tests/gpu/test_microbench_gpu.py -q -rs -p no:cacheprovider --durations=8 > $o/microbench_gpu.log 2>&1; echo "rc=$?" >> $o/microbench_gpu.log
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/cupti .whl/cupti-13.0.1/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/cupti:$PWD
for pair in "triton_softmax softmax_ref" "scale_by_max scale_by_max_sync_ref"; do set -- $pair
  timeout 100 python3 -m linkroof --store /tmp/pairs.sqlite compare examples/zoo/programs.py:$1 --inputs examples/zoo/programs.py:$1_inputs --reference examples/zoo/programs.py:$2 --profile reference --force --no-save > $o/pair_$1.txt 2>&1
done
tar czf $OUT/w.tgz -C $o .
grep -E "^==|^wall" $o/first_run.log; cat $o/verified.txt; tail -3 $o/microbench_gpu.log
