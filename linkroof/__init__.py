"""linkroof: a topology-aware communication profiler and roofline visualizer for multi-GPU machines.

The library is the product; the CLI and the dashboard are thin faces over it::

    import linkroof
    topo = linkroof.probe()                    # this machine, through NVML
    topo = linkroof.probe(replay="h200x2")     # a bundled recording from a real 2xH200 machine
    prof = linkroof.load("reference")           # a profile: id or prefix in the store, file, or "reference"
    df = prof.to_dataframe()                    # one row per measurement (pandas)

`import linkroof` needs no GPU, no driver and no CuPy.
"""

__version__ = "0.1.0"

from .errors import LinkroofError, NoGpuError  # noqa: E402
from .profiler.probe import probe  # noqa: E402
from .schema import Profile, Topology, Unknown, dumps, loads  # noqa: E402


def load(which: str | None = None, store: str | None = None) -> Profile:
    """A profile: an id (or unique prefix) in the store, a profile JSON file (.json or
    .json.gz), or "reference" (the bundled 2xH200 profile); None: the newest measured
    profile in the store, else the reference. `store`: another store file."""
    from .profiler.session import resolve_profile

    return resolve_profile(which, store)[0]


__all__ = ["__version__", "probe", "load", "Topology", "Profile", "Unknown", "dumps", "loads", "LinkroofError",
           "NoGpuError"]
