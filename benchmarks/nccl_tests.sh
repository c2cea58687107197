#!/usr/bin/env bash
# Builds NVIDIA's nccl-tests on a GPU machine (kinds nvidia-h200-x2 and up) from a copy
# of its public source in the git-ignored folder .nccl-tests/ (never committed; bring
# it with the search tool's fetch), against the NCCL of the nvidia-nccl wheel, then runs
# the given collectives as nccl-tests does, plain and with -G 1 (CUDA graph replay).
#   bash benchmarks/nccl_tests.sh "all_reduce alltoall sendrecv all_gather" "-b 8 -e 1G -f 2"
source "$(dirname "$0")/prologue.sh"
colls=${1:-"all_reduce all_gather reduce_scatter alltoall broadcast reduce sendrecv"}
range=${2:-"-b 8 -e 1G -f 2"}
src=$PWD/.nccl-tests
[ -d "$src/src" ] || { echo "no nccl-tests source in $src (fetch NVIDIA/nccl-tests there)"; exit 2; }
nccl=$($py -c "import nvidia.nccl, os; print(os.path.dirname(list(nvidia.nccl.__path__)[0] + '/'))")
home=/tmp/nccl-home; mkdir -p $home/lib
ln -sfn "$nccl/include" $home/include
for f in "$nccl"/lib/libnccl.so*; do ln -sf "$f" $home/lib/; done
[ -e $home/lib/libnccl.so ] || ln -sf "$(ls "$nccl"/lib/libnccl.so.* | head -1)" $home/lib/libnccl.so
build=/tmp/nccl-tests-build
if [ ! -x $build/all_reduce_perf ]; then
  t=$(date +%s%N)
  make -C "$src/src" -j 16 MPI=0 NCCL_HOME=$home BUILDDIR=$build \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" >"$out/nccl_tests_build.log" 2>&1 \
    || { tail -20 "$out/nccl_tests_build.log"; exit 3; }
  echo "built nccl-tests in $(ms $t) ms" >&2
fi
export LD_LIBRARY_PATH=$home/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for g in 1 0; do
  for c in $colls; do
    timeout 300 $build/${c}_perf $range -g 2 -G $g -n ${NCCL_TESTS_ITERS:-100}
  done
done
