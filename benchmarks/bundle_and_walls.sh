#!/usr/bin/env bash
# On a 2-GPU machine (kind nvidia-h200-x2), about 6 minutes: the GPU tests; the full
# suite labelled as the bundled reference (copy $OUT/full.json to
# linkroof/data/h200x2.profile.json); the default suite's and the quick suite's wall
# times; NCCL's host-launch time per rank under mpirun bound to cores (its default) and
# unbound, beside torchrun, on small messages.
#   bash benchmarks/bundle_and_walls.sh
source "$(dirname "$0")/prologue.sh"
log="$out/bundle.log"
{
  echo "== GPU tests"; t=$(date +%s%N)
  timeout 240 $py -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tail -4; echo "wall $(ms $t) ms"
  echo "== full suite (bundled reference)"; t=$(date +%s%N)
  timeout 420 $py -m linkroof --store $st bench --suite full --label reference:h200x2 --no-save --json \
    --out "$out/full.json" >/dev/null 2>"$out/full.err" || tail -5 "$out/full.err"; echo "wall $(ms $t) ms"
  echo "== default suite (warm)"; t=$(date +%s%N)
  timeout 120 $py -m linkroof --store $st bench --no-save --json --out "$out/default.json" >/dev/null 2>&1
  echo "wall $(ms $t) ms"
  echo "== quick suite (cold kernel cache)"; t=$(date +%s%N)
  CUPY_CACHE_DIR=$(mktemp -d) timeout 60 $py -m linkroof --store $st bench --suite quick --no-save --json \
    --out "$out/quick.json" >/dev/null 2>&1; echo "wall $(ms $t) ms"
  $py - "$out/full.json" "$out/default.json" "$out/quick.json" <<'PY'
import json, sys
for f in sys.argv[1:]:
    p = json.load(open(f))
    bad = [m for m in p["measurements"] if not m["verified"]]
    print(f.split("/")[-1], len(p["measurements"]), "measurements,", len(bad), "unverified,", len(p["skipped"]), "skipped")
    for n in p["notes"][-2:]:
        print("  ", n[:600])
    for s in p["skipped"][:10]:
        print("   skipped:", s)
PY
  echo "== host launch per rank: mpirun bound (default), mpirun unbound, torchrun"
  small="--only nccl --sizes 8:64K:8 --no-save --json"
  timeout 60 mpirun $mpi_extra -n 2 $py -m linkroof --store $st bench $small --out "$out/mpi_bound.json" >/dev/null 2>&1
  timeout 60 mpirun $mpi_extra --bind-to none -n 2 $py -m linkroof --store $st bench $small --out "$out/mpi_unbound.json" >/dev/null 2>&1
  timeout 60 torchrun --nproc-per-node 2 -m linkroof --store $st bench $small --out "$out/torchrun_small.json" >/dev/null 2>&1
  $py benchmarks/launcher_parity.py "$out/mpi_bound.json" "$out/mpi_unbound.json" "$out/torchrun_small.json" --limit 100
  $py - "$out/mpi_bound.json" "$out/mpi_unbound.json" "$out/torchrun_small.json" <<'PY'
import json, statistics, sys
for f in sys.argv[1:]:
    ms = [m for m in json.load(open(f))["measurements"] if m["spec"]["params"].get("timing") == "host_launch"
          and m["spec"]["params"].get("rank_time") != "this rank"]
    meds = [statistics.median(m["times_s"]) * 1e6 for m in ms]
    print(f.split("/")[-1], f"host launch per call over {len(meds)} figures: median {statistics.median(meds):.2f} us")
PY
} > "$log" 2>&1
rm -f "$out/full.err"
cat "$log"
