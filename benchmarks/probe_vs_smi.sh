#!/usr/bin/env bash
# Measures the probe on any GPU machine (kinds nvidia-h200, nvidia-h200-x2, ...): records
# every NVML answer, times linkroof.probe(), and keeps nvidia-smi's topology beside
# linkroof's, and the live probe beside its replay, for comparison.
#   bash benchmarks/probe_vs_smi.sh NAME      (NAME: the recording's bundled name, e.g. h200x2)
source "$(dirname "$0")/prologue.sh"
name=${1:?recording name}
log="$out/$name.log.txt"
{
  echo "== date"; date -u
  echo "== nvidia-smi topo -m"; nvidia-smi topo -m
  echo "== nvidia-smi topo -p2p r"; nvidia-smi topo -p2p r
  echo "== nvidia-smi topo -p2p w"; nvidia-smi topo -p2p w
  echo "== nvidia-smi topo -p2p a"; nvidia-smi topo -p2p a
  echo "== nvidia-smi nvlink -s (head)"; nvidia-smi nvlink -s | head -4
  echo "== versions"; $py --version; $py -m pip show nvidia-ml-py cupy-cuda13x 2>/dev/null | grep -E '^(Name|Version)'
  echo "== sysfs"; ls /sys/class/infiniband 2>&1; ls -l /sys/class/net; ls /sys/devices/system/node
  echo "== env"; env | grep -E '^(NCCL|NVSHMEM|TORCH_SYMM|CUDA)' | sort
  echo "== linkroof probe --record"; $py -m linkroof probe --record "$out/$name.probe.json"; echo "rc=$?"
  echo "== linkroof probe --replay (the recording)"; $py -m linkroof probe --replay "$out/$name.probe.json" --json > "$out/$name.replay.json"; echo "rc=$?"
  echo "== linkroof probe --json (live)"; $py -m linkroof probe --json > "$out/$name.topology.json"; echo "rc=$?"
  echo "== live vs replay (differences besides time)"
  $py - "$out/$name.topology.json" "$out/$name.replay.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for k in ("probed_at", "probe_seconds", "source"):
    a.pop(k, None); b.pop(k, None)
print("identical" if a == b else "DIFFERENT")
PY
  echo "== probe speed"; $py benchmarks/probe_speed.py --runs 5
} > "$log" 2>&1
cat "$log"
