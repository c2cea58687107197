#!/usr/bin/env bash
# NCCL against nccl-tests in one lease (kind nvidia-h200-x2), about 5 minutes: the host
# cost of a grouped call by buffer kind and registration; nccl-tests 2.19.6 plain and
# -G 1 (built by nccl_tests.sh), 8 B - 1 GiB, x2 steps, all seven collectives; three
# linkroof runs of the same grid, compared size by size (median over the runs) and
# their run-to-run spread.
#   bash benchmarks/nccl_parity.sh
source "$(dirname "$0")/prologue.sh"
log="$out/nccl_parity.log"
{
  echo "== host cost of a grouped NCCL call"
  for e in "X=1" "LINKROOF_NCCL_BUFFERS=pool" "NCCL_LOCAL_REGISTER=0"; do env $e timeout 90 $py benchmarks/nccl_host_cost.py 2>&1 | grep -v Warn; done
  echo "== nccl-tests"; t=$(date +%s%N)
  NCCL_TESTS_ITERS=${NCCL_TESTS_ITERS:-50} timeout 300 bash benchmarks/nccl_tests.sh \
    "all_reduce all_gather reduce_scatter alltoall broadcast reduce sendrecv" "-b 8 -e 1G -f 2" 2>/dev/null > "$out/nccl_tests.txt"
  echo "rc=$? wall $(ms $t) ms"
  for i in 1 2 3; do
    t=$(date +%s%N)
    timeout 150 $py -m linkroof --store $st bench --only nccl --sizes 8:1G:2 --no-save --json --out "$out/n$i.json" \
      >/dev/null 2>"$out/n.err" || tail -5 "$out/n.err"
    echo "linkroof run $i wall $(ms $t) ms"
  done
  $py benchmarks/compare_nccl_tests.py "$out"/n1.json "$out"/n2.json "$out"/n3.json "$out/nccl_tests.txt" > "$out/compare.txt"
  grep -c SLOWER "$out/compare.txt"; grep SLOWER "$out/compare.txt" | head -60; tail -1 "$out/compare.txt"
  $py -m linkroof runs spread "$out"/n1.json "$out"/n2.json "$out"/n3.json --mechanism nccl --min-size 1M --json \
    > "$out/spread.json"
  $py benchmarks/spread_summary.py < "$out/spread.json"
} > "$log" 2>&1
rm -f "$out/n.err"
cat "$log"
