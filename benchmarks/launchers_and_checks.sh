#!/usr/bin/env bash
# On a 2-GPU machine (kind nvidia-h200-x2), about 5 minutes: NCCL over the nccl-tests
# grid (8 B - 1 GiB, x2) by one process, under mpirun and under torchrun (one rank per
# GPU), compared figure by figure; nccl-tests twice (-G 1 and plain: its own
# run-to-run spread); the GPU tests of the cost-model terms and NCCL; GEMM checks with
# signed and positive inputs in turn; pointer chases sampled on every SM and on a
# quarter of them.
#   bash benchmarks/launchers_and_checks.sh
source "$(dirname "$0")/prologue.sh"
log="$out/launchers.log"
grid="--only nccl --sizes 8:1G:2 --no-save --json"
{
  echo "== GPU tests (terms, nccl)"; t=$(date +%s%N)
  timeout 200 $py -m pytest -q -p no:cacheprovider tests/gpu/test_terms_gpu.py tests/gpu/test_nccl_gpu.py 2>&1 | tail -6
  echo "wall $(ms $t) ms"
  echo "== NCCL grid: one process, mpirun, torchrun"
  t=$(date +%s%N); timeout 150 $py -m linkroof --store $st bench $grid --out "$out/single.json" >/dev/null 2>"$out/e1" || tail -5 "$out/e1"; echo "single wall $(ms $t) ms"
  t=$(date +%s%N); timeout 170 mpirun $mpi_extra -n 2 $py -m linkroof --store $st bench $grid --out "$out/mpirun.json" >/dev/null 2>"$out/e2" || tail -5 "$out/e2"; echo "mpirun wall $(ms $t) ms"
  t=$(date +%s%N); timeout 170 torchrun --nproc-per-node 2 -m linkroof --store $st bench $grid --out "$out/torchrun.json" >/dev/null 2>"$out/e3" || tail -5 "$out/e3"; echo "torchrun wall $(ms $t) ms"
  $py benchmarks/launcher_parity.py "$out/single.json" "$out/mpirun.json" "$out/torchrun.json"
  $py benchmarks/launcher_parity.py "$out/mpirun.json" "$out/torchrun.json" | head -3
  echo "== nccl-tests, twice"
  for i in 1 2; do NCCL_TESTS_ITERS=50 timeout 150 bash benchmarks/nccl_tests.sh \
    "all_reduce all_gather reduce_scatter alltoall broadcast reduce sendrecv" "-b 8 -e 1G -f 2" 2>/dev/null \
    > "$out/nccl_tests$i.txt"; done
  grep -c "Collective test starting" "$out/nccl_tests1.txt" "$out/nccl_tests2.txt"
  echo "== GEMM: signed and positive inputs in turn"
  timeout 120 $py - <<'PY'
from linkroof.microbench import compute
for dist in ("normal", "uniform", "normal", "uniform"):
    for dt in ("fp16", "bf16", "tf32"):
        m = compute.gemm(0, dt, reps=3, dist=dist)
        print(f"{dt:5} {dist:8} {m.flop_rate / 1e12:7.1f} TFLOP/s  verified={m.verified}  {m.verification}")
PY
  echo "== pointer chases: every SM vs a quarter"
  timeout 120 $py - <<'PY'
from linkroof.microbench import latency
for where, kw in (("host", {}), ("peer", {"target": 1})):
    for sms in (None, 33, None, 33):
        m = latency.pointer_chase(0, where, reps=5, sms=sms, **kw)
        print(f"{where:5} sms={m.spec.params['sms_sampled']:4}  {m.median_s * 1e9:8.1f} ns  spread "
              f"{(max(m.times_s) - min(m.times_s)) / m.median_s:.1%}  verified={m.verified}")
PY
} > "$log" 2>&1
rm -f "$out"/e1 "$out"/e2 "$out"/e3
cat "$log"
