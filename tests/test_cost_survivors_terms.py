"""The cost model's launch and sync terms as the profile measured them: where each
figure was taken, which figures count, and the refusal when a profile has none (issue 44:
the 9 mutants of roofline/cost.py that survived mutmut 3.8.1's run of 2026-12-05,
benchmarks/data/2026-12-05c-mutation/cost-open-diffs.txt)."""

import dataclasses

import pytest

from linkroof.profiler.session import bundled_profile
from linkroof.roofline import cost

REF = bundled_profile()


def _sync(m):
    return (m.spec.name, m.spec.mechanism, m.spec.pattern) == cost.SYNC_KINDS["grid"][:3]


def _with(profile, pick, **change):
    """The profile with each measurement that `pick` chooses changed (spec params merged)."""
    out = []
    for m in profile.measurements:
        if pick(m):
            params = dict(m.spec.params, **change.pop("params", {})) if "params" in change else m.spec.params
            m = dataclasses.replace(m, spec=dataclasses.replace(m.spec, params=params), **change)
        out.append(m)
    return dataclasses.replace(profile, measurements=out)


def test_a_figure_from_a_launchers_rank_says_which_rank_of_how_many():
    """A grid-barrier figure taken by rank 1 of 2 processes says so; the bound is read
    knowing it was not one process's own."""
    p = _with(REF, _sync, rank=1, params={"processes": 2})
    s, what = cost.sync_cost(p, "grid")
    assert "rank 1 of 2 processes" in what and "one process" not in what
    assert s == min(m.median_s for m in p.measurements if _sync(m) and m.verified and m.median_s > 0)


def test_a_figure_without_a_rank_or_a_process_count_is_one_processs():
    assert "(one process" in cost.sync_cost(_with(REF, _sync, rank=None, params={"processes": 2}), "grid")[1]
    assert "(one process" in cost.sync_cost(_with(REF, _sync, rank=1, params={"processes": None}), "grid")[1]


def test_a_zero_second_figure_is_no_figure():
    """A sync measured at 0 s (a timer's floor) is not the least a sync costs: left out, and
    a profile with only such figures has none."""
    p = _with(REF, _sync, times_s=(0.0, 0.0, 0.0))
    with pytest.raises(cost.CostError) as e:
        cost.sync_cost(p, "grid")
    assert "no grid sync figure" in str(e.value)


def test_a_profile_without_sync_figures_names_the_bench_that_measures_them():
    p = dataclasses.replace(REF, measurements=[m for m in REF.measurements if not _sync(m)])
    with pytest.raises(cost.CostError) as e:
        cost.sync_cost(p, "grid")
    assert "this profile has no grid sync figure (linkroof bench --only sync measures it)" == str(e.value)
