"""The cost model's text and plumbing at their edges, as facts (issue 44: the mutants of
roofline/cost.py that survived mutmut 3.8.1's first chunk): the decomposition's one
line, word for word; the bound from the model it is given and the grid sync by default;
a timeline's parts replacing the model's, with what it says."""

import dataclasses

import pytest

from linkroof.profiler.session import bundled_profile
from linkroof.roofline import cost
from linkroof.roofline import timeline as T
from linkroof.roofline import workload as W
from linkroof.roofline.model import MachineModel
from linkroof.roofline.place import place
from linkroof.schema import Workload

REF = bundled_profile()
MODEL = MachineModel.from_profile(REF)
US = 1e-6


def test_the_one_line_decomposition_word_for_word():
    """A bound of compute 80 us beside memory 10 us. Timed at 120 us: compute 80, the
    memory's 10 not overlapped, 30 unexplained. Timed at 50 us: compute capped at 50, the
    memory wholly beside it (0, not shown), nothing unexplained (shown, 0 ns), and the
    model's terms 30 us over the time."""
    b = cost.CostBound({"compute": 80 * US, "memory": 10 * US}, 80 * US, "compute", {"compute": "c", "memory": "m"})
    assert cost.decomposition_text(120 * US, cost.decompose(120 * US, b)) == \
        "of 120.0 us: compute 80.0 us, memory (not overlapped, inferred) 10.0 us, unexplained 30.0 us"
    assert cost.decomposition_text(50 * US, cost.decompose(50 * US, b)) == \
        "of 50.0 us: compute (capped) 50.0 us, unexplained 0 ns, below the model's terms by 30.0 us"


def _sync_figure(kind):
    name, mech, pattern, _ = cost.SYNC_KINDS[kind]
    return min(m.median_s for m in REF.measurements if (m.spec.name, m.spec.mechanism, m.spec.pattern) ==
               (name, mech, pattern) and m.verified)


def test_a_sync_is_the_grid_barrier_unless_told():
    w = W.collective("all_reduce", 1 << 20, 2)
    p = cost.with_cost(place(w, 1e-3, MODEL), REF, MODEL, syncs=2)
    assert p.cost_terms_s["sync"] == 2 * _sync_figure("grid")
    cta = cost.with_cost(place(w, 1e-3, MODEL), REF, MODEL, syncs=2, sync_kind="cta")
    assert cta.cost_terms_s["sync"] == 2 * _sync_figure("cta") != p.cost_terms_s["sync"]


def test_the_bound_uses_the_model_it_is_given():
    """A GEMM of 2 x 8192^3 FLOPs in bf16 against a model whose bf16 roof is half the
    profile's: the compute term doubles."""
    roof = MODEL.compute("bf16")
    half = MachineModel(MODEL.gpu_name, MODEL.spec, [dataclasses.replace(r, value=r.value / 2) if r is roof else r
                                                      for r in MODEL.roofs], MODEL.curves)
    flops = 2 * 8192 ** 3
    w = Workload(name="gemm 8192^3", flops={"bf16": flops})
    p = cost.with_cost(place(w, 10e-3, half), REF, half)
    assert p.cost_terms_s["compute"] == pytest.approx(flops / (roof.value / 2), rel=1e-12)


def _timeline(busy_ns):
    """One call of one kernel running `busy_ns` from the call's start."""
    return T.summarize([T.Activity("kernel", "k", 0, 7, 0, busy_ns)], [0])


def test_a_timeline_replaces_the_models_parts_and_says_so():
    """Timed at 50 us while the recorded kernel ran 100 us: the parts are scaled to 50 us,
    the note says the recording took 100.0 % longer, the model's 'faster than' note goes
    (its parts are gone) and every other note stays, then the timeline's own."""
    w = W.collective("all_reduce", 1 << 20, 2)
    placed = dataclasses.replace(place(w, 50 * US, MODEL), cost_notes=(
        "link: kept", "faster than the cost model's terms: gone"))
    p = cost.with_timeline(placed, _timeline(100_000))
    assert sum(p.decomposition_s.values()) == pytest.approx(50 * US, rel=1e-12)
    assert p.cost_notes == ("link: kept", "the recorded kernels took 100.0% longer per call than the timed calls: "
                            "the measured parts are scaled to the timed median",
                            "decomposition measured from the call's GPU timeline (CUPTI); the cost model's bound and "
                            "terms beside it are modelled")
    assert p.timeline is not None and p.timeline.span_s == pytest.approx(100 * US)


def test_a_timeline_with_nothing_recorded_is_kept_and_changes_nothing_else():
    w = W.collective("all_reduce", 1 << 20, 2)
    placed = dataclasses.replace(place(w, 50 * US, MODEL), cost_notes=("link: kept",))
    empty = T.summarize([], [0])
    assert T.timed_parts(empty, 50 * US) == ([], None)
    p = cost.with_timeline(placed, empty)
    assert p.timeline is empty and p.cost_notes == ("link: kept",) and p.decomposition_s == placed.decomposition_s


@pytest.mark.parametrize("seconds, text", [(9.9994e-6, "9999 ns"), (10 * US, "10.0 us"), (9.9999999e-6, "10.0 us"),
                                           (999.94 * US, "999.9 us"), (999.96 * US, "1.00 ms"),
                                           (0.999994, "999.99 ms"), (0.999996, "1.00 s"), (0.0, "0 ns")])
def test_a_time_at_a_units_edge_is_written_in_the_next_unit_once_it_rounds_there(seconds, text):
    """10 x 1e-6 s is 9.999999999999999e-06 in floating point: it is "10.0 us", never
    "10000 ns" (the decomposition printed that for a 10 us memory term)."""
    from linkroof.units import format_time

    assert format_time(seconds) == text
