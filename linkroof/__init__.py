"""linkroof: a topology-aware communication profiler and roofline visualizer for multi-GPU machines.

The library is the product; the CLI and the dashboard are thin faces over it::

    import linkroof
    topo = linkroof.probe()                    # this machine, through NVML
    topo = linkroof.probe(replay="h200x2")     # a bundled recording from a real 2xH200 machine

`import linkroof` needs no GPU, no driver and no CuPy.
"""

__version__ = "0.1.0"

from .errors import LinkroofError, NoGpuError  # noqa: E402
from .profiler.probe import probe  # noqa: E402
from .schema import Profile, Topology, Unknown, dumps, loads  # noqa: E402

__all__ = ["__version__", "probe", "Topology", "Profile", "Unknown", "dumps", "loads", "LinkroofError", "NoGpuError"]
