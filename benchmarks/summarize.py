"""Headline figures of a profile against the 2xH200 references, and the crossover
sizes of the message-size sweeps (where each mechanism reaches 50% / 90% of its peak,
and which is fastest at each size).

    python benchmarks/summarize.py PROFILE.json [PROFILE2.json ...]
"""

import sys
from collections import defaultdict

from linkroof.roofline.model import Curve
from linkroof.schema import Profile
from linkroof.store import load_profile_file
from linkroof.units import format_size

# name, mechanism, pattern, reference (GB/s, ns or TFLOP/s), better ("ge" or "le"), source of the reference
HEADLINES = [
    ("p2p_read_bandwidth", "ce", "p2p_read", 393.8, "ge", "nvbandwidth"),
    ("p2p_write_bandwidth", "ce", "p2p_write", 396.1, "ge", "nvbandwidth"),
    ("p2p_bidir_read_total_bandwidth", "ce", "bidir", 778.9, "ge", "nvbandwidth"),
    ("p2p_bidir_write_total_bandwidth", "ce", "bidir", 783.4, "ge", "nvbandwidth"),
    ("p2p_read_bandwidth", "sm", "p2p_read", 376.2, "ge", "nvbandwidth"),
    ("p2p_write_bandwidth", "sm", "p2p_write", 370.0, "ge", "nvbandwidth"),
    ("p2p_bidir_read_total_bandwidth", "sm", "bidir", 676.8, "ge", "nvbandwidth"),
    ("p2p_bidir_write_total_bandwidth", "sm", "bidir", 731.5, "ge", "nvbandwidth"),
    ("p2p_read_bandwidth", "tma", "p2p_read", 374.2, "ge", "probe"),
    ("p2p_write_bandwidth", "tma", "p2p_write", 371.2, "ge", "probe"),
    ("h2d_bandwidth", "ce", "h2d", 55.3, "ge", "nvbandwidth"),
    ("d2h_bandwidth", "ce", "d2h", 55.3, "ge", "nvbandwidth"),
    ("local_copy_bandwidth", "ce", "local", 2079, "ge", "nvbandwidth"),
    ("pointer_chase_latency", "latency", "peer", 830, "le", "nvbandwidth"),
    ("pointer_chase_latency", "latency", "host", 1189, "le", "nvbandwidth"),
    ("gemm_throughput:fp16", "compute", "gemm", 790, "ge", "target (probe 802)"),
]


def value(m):
    if m.flops_per_rep:
        return m.flop_rate / 1e12, "TFLOP/s"
    if not m.bytes_per_rep:
        return m.median_s * 1e9, "ns"
    return m.bandwidth_bytes_per_s / 1e9, "GB/s"


def headline(p: Profile):
    rows = []
    for name, mech, pattern, ref, better, source in HEADLINES:
        base, _, dtype = name.partition(":")
        cands = [m for m in p.measurements
                 if (m.spec.name, m.spec.mechanism, m.spec.pattern) == (base, mech, pattern)
                 and not m.spec.params.get("sweep") and m.verified
                 and (not dtype or m.spec.params.get("dtype") == dtype)
                 and m.spec.params.get("host_memory", "pinned") == "pinned"]
        if not cands:
            rows.append((name, mech, pattern, None, ref, better, source, "-"))
            continue
        best = (max if better == "ge" else min)(cands, key=lambda m: value(m)[0])
        v, unit = value(best)
        ok = v >= ref if better == "ge" else v <= ref * 1.02
        rows.append((name, mech, pattern, v, ref, better, source, f"{unit} {'ok' if ok else 'BELOW' if better == 'ge' else 'ABOVE'}"))
    return rows


def sweeps(p: Profile):
    by = defaultdict(list)
    for m in p.measurements:
        if m.spec.params.get("sweep") and m.verified:
            by[(m.spec.mechanism, m.spec.pattern)].append((m.spec.message_bytes, m.bandwidth_bytes_per_s))
    out = []
    for (mech, pattern), pts in sorted(by.items()):
        peak = max(bw for _, bw in pts)
        curve = Curve("", mech, pattern, sorted(pts))
        out.append((mech, pattern, peak / 1e9, curve.reaches(0.5), curve.reaches(0.9)))
    fastest = defaultdict(dict)
    for (mech, pattern), pts in by.items():
        for size, bw in pts:
            fastest[(pattern, size)][mech] = bw
    return out, fastest


def main() -> None:
    for path in sys.argv[1:]:
        p = load_profile_file(path)
        bad = [m for m in p.measurements if not m.verified]
        print(f"== {path}: {p.id} {p.label} ({len(p.measurements)} measurements, {len(bad)} unverified, "
              f"{len(p.skipped)} skipped)")
        for m in bad[:10]:
            print(f"  UNVERIFIED {m.spec.name} {m.spec.pattern} {m.spec.message_bytes} B {m.spec.params}: "
                  f"{m.verification}")
        for name, mech, pattern, v, ref, better, source, verdict in headline(p):
            vs = f"{v:9.1f}" if v is not None else "        -"
            print(f"  {name:34s} {mech:8s} {pattern:10s} {vs}  ref {ref:7.1f} ({source}) {verdict}")
        rows, fastest = sweeps(p)
        for mech, pattern, peak, s50, s90 in rows:
            print(f"  sweep {mech:4s} {pattern:10s} peak {peak:6.1f} GB/s  50% at {format_size(s50) if s50 else '-'}"
                  f"  90% at {format_size(s90) if s90 else '-'}")
        for (pattern, size), bws in sorted(fastest.items()):
            if len(bws) > 1:
                best = max(bws, key=bws.get)
                print(f"  fastest {pattern:9s} {format_size(size):>9s}: {best} "
                      + "  ".join(f"{k} {v / 1e9:.1f}" for k, v in sorted(bws.items())))


if __name__ == "__main__":
    main()
