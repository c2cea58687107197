# Sourced by every benchmarks/*.sh script: where results go, which Python, a scratch
# store, a millisecond timer, and the flag Open MPI needs to run as root.
# Results go under $OUT (the device tool's folder that comes back), else ./out.
set -u
out=${OUT:-out}; mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
py=${PYTHON:-python3}
st=${LINKROOF_BENCH_STORE:-/tmp/linkroof-bench.sqlite}
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
mpi_extra=""; mpirun --version 2>&1 | grep -q "Open MPI" && mpi_extra="--allow-run-as-root"
