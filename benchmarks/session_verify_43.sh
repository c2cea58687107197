#!/usr/bin/env bash
# Issue 43's device checks in one call (kind nvidia-h200), everything packed into
# $OUT/verify43.tgz (the device tool brings back at most 8 files):
#   cold.log        the default suite from an empty CuPy cache, its main thread sampled
#                   (benchmarks/stack_sample.py): where a user's first run spends its time
#   time/, counters/  the zoo's clock, cache-state, atomics, pageable and drift programs
#                   (benchmarks/zoo.py PART=time, then PART=counters with ncu)
#   pairs/          candidate and reference through `linkroof compare --reference`, text and JSON
#   gpu_tests.log   tests/gpu (without the judge's, verified in issue 41) when GPU_TESTS=1
set -u
export PYTHONUNBUFFERED=1
o=$OUT/v; mkdir -p $o/time $o/counters $o/pairs
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/cupti .whl/cupti-13.0.1/*.whl 2>&1 | tail -2
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv > $o/cold.log
CUPY_CACHE_DIR=$(mktemp -d) timeout 120 python3 benchmarks/stack_sample.py -m linkroof --store /tmp/cold.sqlite bench --no-save --json --out $o/cold.json >/dev/null 2>>$o/cold.log
export PYTHONPATH=/tmp/cupti:$PWD TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NCCL_NVLS_ENABLE=0
[ -n "${ZOO_TIME-x}" ] && OUT=$o/time SAVE_EACH=1 PART=time ONLY=${ZOO_TIME:-gemm_capped,one_warp_l2,spin,atomics_contended,atomics_spread,h2d_pageable,side_copy_event,host_jitter} timeout 240 python3 benchmarks/zoo.py > $o/zoo_time.log 2>&1
OUT=$o/counters SAVE_EACH=1 PART=counters ONLY=${ZOO_COUNTERS:-atomics_contended,atomics_spread,spin,one_warp_l2} timeout 150 python3 benchmarks/zoo.py > $o/zoo_counters.log 2>&1
for pair in "triton_softmax softmax_ref" "atomics_contended atomics_spread" "scale_by_max scale_by_max_sync_ref"; do
  set -- $pair
  args="compare examples/zoo/programs.py:$1 --inputs examples/zoo/programs.py:$1_inputs --reference examples/zoo/programs.py:$2 --profile reference --force --no-save"
  timeout 120 python3 -m linkroof --store /tmp/pairs.sqlite $args > $o/pairs/$1.txt 2>&1
  timeout 120 python3 -m linkroof --store /tmp/pairs.sqlite $args --json > $o/pairs/$1.json 2>$o/pairs/$1.json.err
done
if [ "${GPU_TESTS:-1}" = 1 ]; then
  nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv > $o/gpu_tests.log
  timeout ${LIMIT:-200} python3 -m pytest ${TESTS:-tests/gpu --deselect tests/gpu/test_score_gpu.py} -q -rs -p no:cacheprovider --durations=15 >> $o/gpu_tests.log 2>&1
  echo "rc=$?" >> $o/gpu_tests.log
fi
tar czf $OUT/verify43.tgz -C $o .
grep -E "^==|^ *[0-9.]+ s" $o/cold.log | head -30; tail -9 $o/zoo_time.log; tail -4 $o/zoo_counters.log; grep -l contradiction $o/pairs/*; tail -5 $o/gpu_tests.log 2>/dev/null
