"""Three zoo programs through compare on the GPU (examples/zoo): the sync case is
host-bound by a sync, host work is host work, the two-stream copy is overlapped, and
every timed figure carries its clock state (benchmarks/zoo.py runs the whole zoo)."""

import pytest

from gpuinfo import torch_cuda_or_skip

torch_cuda_or_skip()

Z = "examples/zoo/programs.py"


def _run(name, **kw):
    from linkroof.profiler.compare import run_compare
    from linkroof.roofline.timeline import host_cause

    out = run_compare(f"{Z}:{name}", f"{Z}:{name}_inputs", counters_on=False, reps=20, **kw)
    r = out.result
    assert r.clock is not None and r.clock.state != "unknown" and r.clock.samples > 0
    return out, host_cause(r.timeline, r.median_s) if r.timeline is not None else None


def test_a_host_sync_is_named_a_sync():
    out, cause = _run("item_sync")
    if out.result.timeline is None or out.result.timeline.host is None:
        pytest.skip("no CUPTI here: " + out.result.timeline_note)
    assert cause == "sync" and any(n.startswith("host-bound by a device-to-host sync") for n in out.notes)
    assert not any("launch-bound" in n for n in out.notes)


def test_host_work_is_host_work():
    out, cause = _run("host_work")
    if out.result.timeline is None or out.result.timeline.host is None:
        pytest.skip("no CUPTI here")
    assert cause == "host work"


def test_the_side_stream_copy_is_overlapped():
    out, cause = _run("gemm_with_d2h")
    t = out.result.timeline
    if t is None:
        pytest.skip("no CUPTI here")
    pairs = {frozenset((a, b)): v for a, b, v in t.overlap_s}
    assert cause is None
    assert pairs[frozenset(("compute", "transfer"))] > 0.9 * dict(t.class_s)["transfer"]
