"""The bound claim tested on points measured apart from the ceiling that bounds them.

Within one profile it holds by construction: a copy's bound comes from the lower
envelope of that profile's own copy figures, and a collective placed on a profile whose
best NVLink figure is NCCL's own is bounded by itself. So the points here come from other
runs of the same 2 x H200 machine (2026-11-29, benchmarks/data/2026-11-29-2), placed on
the bundled profile's model (2026-11-30): a bound that held only by construction would
fail on them."""

import gzip
from pathlib import Path

from linkroof.profiler.session import bundled_profile
from linkroof.roofline import workload as W
from linkroof.roofline.model import MachineModel
from linkroof.roofline.place import place
from linkroof.schema import Profile, Workload, loads

DATA = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "2026-11-29-2"
MODEL = MachineModel.from_profile(bundled_profile())


def _profile(name: str) -> Profile:
    return loads(gzip.open(DATA / name).read(), Profile)


def _copy_fractions() -> list[tuple[int, float, str]]:
    out = []
    for m in _profile("default.json.gz").measurements:
        if m.spec.pattern in ("p2p_write", "p2p_read") and m.spec.mechanism in ("ce", "sm", "tma") and m.verified \
                and len(m.spec.devices) == 2 and m.spec.message_bytes >= 64:
            w = Workload(f"{m.spec.mechanism} {m.spec.pattern}", link_bytes={"nvlink": float(m.bytes_per_rep)},
                         message_bytes=m.spec.message_bytes, pattern=m.spec.pattern)
            out.append((m.spec.message_bytes, place(w, m.median_s, MODEL).fraction_of_roofline, w.name))
    return out


def test_copies_measured_apart_sit_at_or_under_their_bound():
    """60 copy figures of another day's run: at 4 KiB and above every one at or under its
    bound within 1.5 % (run-to-run noise); below, where a copy is latency-bound, a run can
    beat another run's envelope, and the docs say the bound is not a bound there."""
    got = _copy_fractions()
    assert len(got) > 40
    big = [(s, f, n) for s, f, n in got if s >= 4096]
    assert big and max(f for _, f, _ in big) <= 1.015, sorted(big, key=lambda x: -x[1])[:3]


def test_collectives_measured_apart_sit_under_their_bound():
    """NCCL's figures of two other runs (settled, and under mpirun), from 1 KiB: each under
    the bound of its collective's link bytes at the bundled profile's ceilings."""
    n = 0
    for name in ("nccl-full-settled.json.gz", "nccl-mpirun.json.gz"):
        for m in _profile(name).measurements:
            if m.spec.mechanism != "nccl" or m.spec.params.get("in_place") or \
                    m.spec.params.get("timing") == "host_launch" or m.spec.message_bytes < 1024 or len(m.spec.devices) < 2:
                continue
            p = place(W.collective(m.spec.pattern, m.spec.message_bytes, len(m.spec.devices)), m.median_s, MODEL)
            assert p.fraction_of_roofline <= 1.0, (name, m.spec.pattern, m.spec.message_bytes, p.fraction_of_roofline)
            n += 1
    assert n > 100
