#!/usr/bin/env bash
# The GPU test suite on the device (kind nvidia-h200: one GPU; the two-GPU tests skip),
# with CUPTI's wheel carried (.whl/) for the compared calls' timelines. Writes
# $OUT/gpu_tests.log (pytest's summary, the skips' reasons and the slowest tests).
source "$(dirname "$0")/prologue.sh"
$py -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/cupti .whl/cupti-13.0.1/*.whl
export PYTHONPATH=/tmp/cupti:$PYTHONPATH TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $out/gpu_tests.log 2>&1
timeout ${LIMIT:-540} $py -m pytest tests/gpu -q -rs -p no:cacheprovider --durations=15 ${TESTS:-} >> $out/gpu_tests.log 2>&1
echo "rc=$?" >> $out/gpu_tests.log
tail -60 $out/gpu_tests.log
