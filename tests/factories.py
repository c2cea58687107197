"""The one set of factories for tests: measurements, topologies and profiles built from
the bundled recordings and synthetic scenarios, with defaults a test overrides."""

from __future__ import annotations

from typing import Any, Sequence

from linkroof import probe
from linkroof.profiler.environment import collect_environment
from linkroof.profiler.session import make_profile
from linkroof.schema import BenchSpec, Measurement, Profile, Skipped, Topology


def measurement(name: str = "p2p_write_bandwidth", mechanism: str = "ce", pattern: str = "p2p_write",
                devices: tuple[int, ...] = (0, 1), nbytes: int = 1 << 30, times: Sequence[float] = (1e-3,) * 3,
                verified: bool = True, busbw: float | None = None, flops: float = 0.0, source: str = "linkroof",
                host: str = "", rank: int | None = None, warnings: tuple[str, ...] = (),
                convention: str = "bytes copied (a copy of N bytes counts N)", **params: Any) -> Measurement:
    """A verified copy-engine peer write of 1 GiB at 1 ms a repetition, unless told otherwise."""
    spec = BenchSpec(name, mechanism, pattern, tuple(devices), nbytes, len(times), params=params)
    return Measurement(spec=spec, times_s=tuple(times), bytes_per_rep=nbytes, bytes_convention=convention,
                       verified=verified, busbw_factor=busbw, source=source, host=host, rank=rank,
                       flops_per_rep=flops, warnings=warnings)


def collective(coll: str = "all_reduce", nbytes: int = 1 << 20, seconds: float = 1e-4, ranks: int = 2,
               **params: Any) -> Measurement:
    """A linkroof NCCL figure, out of place in fp32 unless told otherwise."""
    from linkroof.roofline.collectives import busbw_factor

    params = {"dtype": "fp32", "in_place": False, **params}
    return measurement(f"nccl_{coll}", "nccl", coll, tuple(range(ranks)), nbytes, (seconds,) * 5,
                       busbw=busbw_factor(coll, ranks), convention="nccl-tests: algbw = size / time", **params)


def topology(name: str = "h200x2") -> Topology:
    """A bundled recording ('h200x2', 'h200x1') or a synthetic scenario of tests/fakes.py."""
    import fakes

    if name in fakes.SCENARIOS:
        from linkroof.profiler.probe import probe_source
        from linkroof.profiler.recording import replay_source

        return probe_source(replay_source(fakes.SCENARIOS[name]().recording(), name))
    return probe(replay=name)


def profile(measurements: Sequence[Measurement] = (), topologies: Sequence[Topology] | None = None,
            label: str = "", skipped: Sequence[Skipped] = (), notes: Sequence[str] = ()) -> Profile:
    """A profile of the recorded 2xH200 topology holding `measurements`."""
    topos = list(topologies) if topologies is not None else [topology()]
    return make_profile(topos, [collect_environment()] * len(topos), measurements, skipped, label=label, notes=notes)


def showcase_profile() -> Profile:
    """The bundled 2 x H200 profile with placements recorded on H200s, for the pages as a
    person reads them (the browser's screenshot test, docs/img): the bundled examples
    (linkroof/data/examples.placements.json, made by examples/roofline/make_placements.py:
    the zoo's twelve kernels that ncu counted on one H200 and a 128 MiB all-reduce on 2 x
    H200), placed as the user's own."""
    import dataclasses

    from linkroof.profiler.session import bundled_profile, example_placements

    return dataclasses.replace(bundled_profile(), id="showcase", label="2 x H200 reference, with kernels and calls placed",
                               placements=example_placements())
