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

from typing import TYPE_CHECKING, Any

from .errors import LinkroofError, NoGpuError  # noqa: E402

if TYPE_CHECKING:
    from .profiler.probe import probe
    from .schema import Profile, Topology, Unknown, dumps, loads

_LAZY = {"probe": ".profiler.probe", "Profile": ".schema", "Topology": ".schema", "Unknown": ".schema",
         "dumps": ".schema", "loads": ".schema"}


def __getattr__(name: str) -> Any:
    """The API's names, imported when first used: a process that imports only a part of
    linkroof (the judge's sandbox launcher and every candidate's child start one each)
    does not pay for the schema and the probe (about 80 ms of CPU each)."""
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'linkroof' has no attribute {name!r}")


def load(which: str | None = None, store: str | None = None) -> "Profile":
    """A profile: an id (or unique prefix) in the store, a profile JSON file (.json or
    .json.gz), or "reference" (the bundled 2xH200 profile); None: the newest measured
    profile in the store, else the reference. `store`: another store file."""
    from .profiler.session import resolve_profile

    return resolve_profile(which, store)[0]


__all__ = ["__version__", "probe", "load", "Topology", "Profile", "Unknown", "dumps", "loads", "LinkroofError",
           "NoGpuError"]
