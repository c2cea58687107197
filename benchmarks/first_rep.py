"""Per benchmark name and mechanism: the first repetition and the slowest one against
the median (a warm-up check), and the spread of every NCCL measurement.

    python benchmarks/first_rep.py PROFILE.json
"""

import sys

from linkroof.store import load_profile_file


def main() -> None:
    p = load_profile_file(sys.argv[1])
    worst: dict[tuple[str, str], tuple[float, float, str]] = {}
    for m in p.measurements:
        t = m.times_s
        if len(t) < 3:
            continue
        med = sorted(t)[len(t) // 2]
        key = (m.spec.name, m.spec.mechanism)
        first, top = t[0] / med, max(t) / med
        where = f"{m.spec.message_bytes} B {m.spec.params.get('dtype', '')}"
        if key not in worst or top > worst[key][1]:
            worst[key] = (first, top, where)
    for (name, mech), (first, top, where) in sorted(worst.items()):
        print(f"{name[:32]:32s} {mech:8s} worst max/median {top:7.3f} (first/median {first:6.3f}) at {where}")


if __name__ == "__main__":
    main()
