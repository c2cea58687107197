"""Every figure of a profile, one line each: name, mechanism, pattern, GPUs, message
size, the parameters that tell figures apart, median (ns, GB/s or TFLOP/s), spread
((max - min) / median) and whether the data was verified.

    python3 benchmarks/dump.py PROFILE.json [--names launch_latency,sync_latency]
"""

import argparse

from linkroof.store import load_profile_file
from linkroof.units import format_size

SKIP = {"issuer", "dtype", "loops", "threads", "unroll", "stages", "smem", "through", "path", "wait",
        "op", "launches_per_sample", "calls_per_sample", "per_rep", "rounds", "m", "n", "k"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("--names", default="")
    args = ap.parse_args()
    names = set(filter(None, args.names.split(",")))
    for m in load_profile_file(args.profile).measurements:
        if names and m.spec.name not in names:
            continue
        if m.flops_per_rep:
            v, unit = m.flop_rate / 1e12, "TFLOP/s"
        elif not m.bytes_per_rep:
            v, unit = m.median_s * 1e9, "ns"
        else:
            v, unit = m.bandwidth_bytes_per_s / 1e9, "GB/s"
        t = sorted(m.times_s)
        spread = (t[-1] - t[0]) / m.median_s if m.median_s else float("nan")
        params = " ".join(f"{k}={v_}" for k, v_ in sorted(m.spec.params.items()) if k not in SKIP)
        gpus = ",".join(map(str, m.spec.devices))
        print(f"{m.spec.name:<24} {m.spec.mechanism:<8} {m.spec.pattern:<14} {gpus:<4} "
              f"{format_size(m.spec.message_bytes) if m.spec.message_bytes else '-':>8} {v:>10.2f} {unit:<8} "
              f"spread {spread:5.1%} {'ok' if m.verified else 'NOT VERIFIED: ' + m.verification}  {params}")


if __name__ == "__main__":
    main()
