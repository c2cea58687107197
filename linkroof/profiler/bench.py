"""The benchmark API behind `linkroof bench`:

    from linkroof.profiler import bench
    plan, topo = bench.plan_for(suite="quick")
    profile = bench.run(plan, topo)
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from ..schema import Profile, Topology
from .plan import Plan, make_plan
from .probe import probe


def plan_for(suite: str = "default", gpus: Iterable[int] | None = None, only: Iterable[str] | None = None,
             sizes: list[int] | None = None, reps: int | None = None, allow_multicast: bool = False,
             replay: str | None = None) -> tuple[Plan, Topology]:
    topology = probe(replay=replay)
    return make_plan(topology, suite, gpus, only, sizes, reps, allow_multicast), topology


def run(plan: Plan, topology: Topology, label: str = "", progress: bool = True) -> Profile:
    from ..microbench.cuda import cp
    from .environment import collect_environment, gpu_states, throttle_counters
    from .recording import live_source
    from .runner import cuda_versions, run_plan, run_profile

    cp()  # a clear error now if CuPy or CUDA is missing
    source = live_source()
    try:
        def states() -> Any:
            return gpu_states(source.nvml, len(topology.gpus))

        def counters() -> Any:
            return throttle_counters(source.nvml, len(topology.gpus))

        import dataclasses

        env = dataclasses.replace(collect_environment(source.nvml, 0), **cuda_versions())
        reporter = _ProgressBar() if progress else None
        try:
            from .clocks import ClockSampler

            result = run_plan(plan, states=states, progress=reporter.update if reporter else None,
                              throttle=counters, clocks=lambda g: ClockSampler(source.nvml, g))
        finally:
            if reporter:
                reporter.close()
    finally:
        source.close()
    return run_profile(topology, env, plan, result, label=label)


class _ProgressBar:
    """A rich progress bar on stderr."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.p = Progress(TextColumn("{task.description:<48}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                          console=Console(file=sys.stderr), transient=False)
        self.task = None
        self.p.start()

    def update(self, done: int, total: int, title: str) -> None:
        if self.task is None:
            self.task = self.p.add_task(title, total=total)
        self.p.update(self.task, completed=done, description=title)

    def close(self) -> None:
        self.p.stop()
