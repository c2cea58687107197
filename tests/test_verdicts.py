"""Verdicts that must be able to fail: each test names the rule it guards, sits on the
edge of it, and fails when the rule is loosened, removed or turned around (the
surviving mutations of the code, killed one by one)."""

import dataclasses
import statistics

import pytest

import factories
from linkroof.profiler.session import bundled_profile
from linkroof.roofline import cost
from linkroof.roofline import workload as W
from linkroof.roofline.baseline import nccl_baseline
from linkroof.roofline.checks import flag_above_spec
from linkroof.roofline.model import MachineModel
from linkroof.roofline.place import place
from linkroof.schema import Placement, Workload

REF = bundled_profile()
MODEL = MachineModel.from_profile(REF)
TOPO = factories.topology("h200x2")
GiB = 1 << 30


def _above(m):
    (got,) = flag_above_spec(TOPO, [m])
    return any(w.startswith("above spec") for w in got.warnings)


def _at_rate(rate, nbytes=GiB, **kw):
    """A measurement of `nbytes` at `rate` bytes/s."""
    return factories.measurement(nbytes=nbytes, times=(nbytes / rate,) * 3, **kw)


# ----------------------------------------------------------------- above spec


def test_above_spec_guards_peer_figures_at_the_data_rate_not_the_line_rate():
    """Guards: the above-spec check holds peer figures to the data rate (450 GB/s on
    18 NVLink 4 links), not the line rate (478.1) nor anything looser: 460 GB/s (between
    the two) is flagged, 445 is not, and 1.2x the data rate (a check loosened 2x would
    pass it) is flagged."""
    assert _above(_at_rate(460e9)) and _above(_at_rate(540e9))
    assert not _above(_at_rate(445e9))
    (flagged,) = flag_above_spec(TOPO, [_at_rate(460e9)])
    assert "pair0-1's data rate 450.0 GB/s (line rate 478.1 GB/s)" in flagged.warnings[-1]


@pytest.mark.parametrize("coll", ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "sendrecv",
                                  "all_to_all"])
def test_above_spec_guards_every_collective_by_its_bus_bandwidth(coll):
    """Guards: every collective is held to its link by its bus bandwidth (a 1074 GB/s
    all-reduce passed when only all-to-all was checked): busbw 10 % over the data rate
    is flagged, 10 % under is not."""
    from linkroof.roofline.collectives import busbw_factor

    factor = busbw_factor(coll, 2)
    for busbw, flagged in ((495e9, True), (405e9, False)):
        algbw = busbw / factor
        m = factories.collective(coll, 1 << 28, (1 << 28) / algbw)
        assert m.busbw_bytes_per_s == pytest.approx(busbw)
        assert _above(m) is flagged, (coll, busbw)


def test_above_spec_guards_local_copies_by_the_bytes_they_move_through_hbm():
    """Guards: a local copy moves twice what it copies through HBM (read + write): one
    counted at 2.6 TB/s moves 5.2 > 4.8 TB/s and is flagged (held to the full HBM rate it
    passed); a read-only kernel at 4.9 TB/s is flagged, at 4.6 it is not."""
    copy = factories.measurement("local_copy_bandwidth", "ce", "local", (0,), GiB, (GiB / 2.6e12,) * 3)
    assert _above(copy)
    assert not _above(dataclasses.replace(copy, times_s=(GiB / 2.3e12,) * 3))
    read = factories.measurement("local_read_bandwidth", "sm", "local_read", (0,), GiB, (GiB / 4.9e12,) * 3)
    assert _above(read) and not _above(dataclasses.replace(read, times_s=(GiB / 4.6e12,) * 3))


def test_a_flagged_figure_makes_no_ceiling():
    """Guards: a figure flagged above spec never becomes a roof."""
    good, bad = _at_rate(396e9), _at_rate(600e9)
    model = MachineModel.from_profile(factories.profile(flag_above_spec(TOPO, [good, bad])))
    assert model.find("link:nvlink", "measured").value == pytest.approx(396e9)


# ----------------------------------------------------------------- placement verdicts


def test_faster_than_the_roofline_is_flagged_at_its_threshold():
    """Guards: a measured time below its bandwidth-only bound by more than 1 % (the
    figures' own noise) is flagged (a threshold doubled would let 1.5 % pass); 0.5 %
    below, or at the bound, it is not."""
    w = Workload("copy", link_bytes={"nvlink": GiB}, message_bytes=GiB)
    bound = place(w, 1.0, MODEL).bound_time_s
    assert any("faster than its measured roofline" in f for f in place(w, bound / 1.015, MODEL).flags)
    assert not place(w, bound / 1.005, MODEL).flags and not place(w, bound, MODEL).flags
    assert Placement.BELOW_BOUND == 0.01


def test_faster_than_the_cost_bound_is_said_in_every_view_by_one_rule():
    """Guards: a time below its cost bound is flagged in the placement's verdicts (CLI
    table, JSON, dashboard, report all print `verdicts`), at 1.5 % below; not at 0.5 %."""
    from linkroof.schema import to_dict

    w = W.collective("all_reduce", 1 << 20, 2)
    b = cost.cost_bound(w, REF, MODEL)
    fast = cost.with_cost(place(w, b.bound_s / 1.015, MODEL), REF, MODEL)
    exact = cost.with_cost(place(w, b.bound_s / 1.005, MODEL), REF, MODEL)
    assert fast.below_cost_bound and any("faster than its cost-model bound" in v for v in fast.verdicts)
    assert not exact.below_cost_bound and not any("cost-model bound" in v for v in exact.verdicts)
    assert to_dict(fast)["derived"]["verdicts"] == list(fast.verdicts)


def test_faster_than_the_models_terms_is_noted():
    """Guards: a time above the bound but below the terms the decomposition counts (NCCL
    took longer than the link term) says so, and no part goes negative."""
    w = W.collective("all_reduce", 64 << 20, 2)
    b = cost.cost_bound(w, REF, MODEL, launches=1)
    measured = b.bound_s * 1.5
    p = cost.with_cost(place(w, measured, MODEL), REF, MODEL, collective_s=measured * 2)
    assert not p.below_cost_bound
    assert any(n.startswith("faster than the cost model's terms") for n in p.cost_notes)
    assert any(v.startswith("faster than the cost model's terms") for v in p.verdicts)
    assert min(p.decomposition_s.values()) >= 0 and sum(p.decomposition_s.values()) == pytest.approx(measured)


def test_the_bound_never_holds_the_calls_own_host_time():
    """Guards (issue 29): the bound's launch term comes from the profile; a call's own
    measured host share is a part of its decomposition beside the bound. A slower host
    (200 us of measured launch share instead of 0.2 us) leaves the bound where it was,
    and a 1 GiB HBM-bound kernel back to back is not 'faster than its bound'."""
    w = Workload("scale", hbm_bytes=2 * GiB)
    memory = place(w, 1.0, MODEL).terms_s["memory"]
    graph = cost.launch_cost(REF, "graph")[0]
    fast_host = cost.with_cost(place(w, memory * 1.01, MODEL), REF, MODEL, launch_s=0.2e-6)
    slow_host = cost.with_cost(place(w, memory * 1.01 + 200e-6, MODEL), REF, MODEL, launch_s=200e-6)
    assert fast_host.cost_bound_s == slow_host.cost_bound_s == pytest.approx(memory + graph)
    assert fast_host.cost_terms_s["launch"] == graph and not fast_host.below_cost_bound
    assert slow_host.decomposition_s["host launch (measured)"] == pytest.approx(200e-6)
    modelled = cost.cost_bound(w, REF, MODEL)
    assert modelled.terms_s["launch"] == graph


def test_a_negative_launch_share_is_never_a_part():
    """Guards: the gated pass can come out slower than the ungated one (noise); the
    launch share is then 0, never negative, in the result and in the decomposition."""
    from linkroof.profiler.compare import CompareResult

    r = CompareResult("k", [10e-6] * 5, gated_times_s=[11e-6] * 5)
    assert r.launch_share_s == 0
    b = cost.cost_bound(W.collective("all_reduce", 1 << 20, 2), REF, MODEL)
    parts = cost.decompose(50e-6, b, launch_s=-3e-6)
    assert all(v >= 0 for _, v, _ in parts) and sum(v for _, v, _ in parts) == pytest.approx(50e-6)


# ----------------------------------------------------------------- baselines and ceilings


def test_the_nccl_baseline_is_the_gpus_own_time_not_the_host_launch():
    """Guards: the baseline takes the device time where both timings exist (the host's
    launch is the decomposition's own term); switched to host-launch timing it would
    read about twice the time at small sizes."""
    w = W.collective("all_reduce", 1 << 20, 2)
    base = nccl_baseline(REF, w)
    device = [m for m in REF.measurements if m.spec.mechanism == "nccl" and m.spec.pattern == "all_reduce"
              and m.spec.message_bytes == 1 << 20 and m.spec.params["dtype"] == "fp32"
              and not m.spec.params["in_place"]]
    by_timing = {m.spec.params["timing"]: m.median_s for m in device}
    assert by_timing["host_launch"] > 1.2 * by_timing["device"]
    assert base.median_s == by_timing["device"] and base.exact


def test_a_copy_beside_other_work_makes_no_ceiling():
    """Guards: a figure taken while other work shared the GPU (the overlap benchmark's
    copies beside a GEMM) never becomes a roof, even where it is the larger figure."""
    alone = _at_rate(390e9)
    beside = _at_rate(420e9, beside="gemm")
    model = MachineModel.from_profile(factories.profile([alone, beside]))
    assert model.find("link:nvlink", "measured").value == pytest.approx(390e9)
    assert all(c.peak() == pytest.approx(390e9) for c in model.curves)


def test_host_launch_figures_of_linkroof_make_no_ceiling():
    """Guards: linkroof's collectives timed with the host's launch stand beside their
    device time and make no roof; the device time does."""
    dev = factories.collective("all_reduce", 1 << 28, (1 << 28) / 300e9, timing="device")
    host = factories.collective("all_reduce", 1 << 28, (1 << 28) / 350e9, timing="host_launch")
    model = MachineModel.from_profile(factories.profile([dev, host]))
    assert model.find("link:nvlink", "measured").value == pytest.approx(300e9)


def test_the_cost_bound_takes_the_lowest_launch_figure():
    """Guards: with two launch figures (a default and a full suite, 0.70 and 0.52 us on
    one H200), the bound takes the lower one and says it is the lowest of two."""
    def launch(t):
        return factories.measurement("launch_latency", "launch", "graph", (0,), 0, (t,) * 5, launches_per_sample=1000)

    p = factories.profile([launch(0.70e-6), launch(0.52e-6)])
    t, what = cost.launch_cost(p, "graph")
    assert t == pytest.approx(0.52e-6) and "the lowest of 2 figures" in what


def test_the_link_term_is_never_above_a_measured_point():
    """Guards: the latency-aware link term at a swept size is at most the least time
    measured there (a fit put 82 of 166 points below their bound)."""
    for c in MODEL.curves:
        if c.mechanism in ("ce", "sm", "tma") and c.link == "nvlink" and not c.variant:
            for size, bw in c.points:
                t, _ = cost.comm_time(REF, "nvlink", size, size, MODEL)
                assert t <= size / bw * (1 + 1e-12), (c.label, c.pattern, size)


def test_advise_and_roofline_give_one_time_for_a_collective():
    """Guards: advise's time per message for a collective is the one roofline --workload
    and compare place NCCL at (the profile's own time at that size), not size over the
    bus bandwidth (85.3 us for a 16 MiB all-gather whose time is 42.65 us)."""
    from linkroof.roofline.advise import advise

    for coll in ("all_gather", "all_to_all", "reduce_scatter", "all_reduce"):
        base = nccl_baseline(REF, W.collective(coll, 16 << 20, 2))
        row = next(m for m in advise(REF, 16 << 20, coll, dtype="fp32").mechanisms)
        assert row.time_s == base.median_s and row.dtype == "fp32"
    ag = next(m for m in advise(REF, 16 << 20, "all_gather").mechanisms)
    assert ag.time_s == pytest.approx(42.65e-6, rel=1e-3)


def test_spec_share_is_one_basis():
    """Guards: % of spec is against the data rate everywhere (the heatmap used the line
    rate: 82.9 % against 88.1 % elsewhere for one CE write)."""
    from linkroof.dashboard import figures as F
    from linkroof.roofline.summaries import headline_rows

    heat = F.pair_matrix_figure(REF, "p2p_write", "ce", relative=True)
    best_write = max(m.bandwidth_bytes_per_s for m in REF.measurements if m.spec.name == "p2p_write_bandwidth"
                     and m.spec.mechanism == "ce" and m.spec.devices == (0, 1) and not m.spec.params.get("sweep")
                     and "parts" not in m.spec.params and m.verified)
    assert heat.data[0].z[0][1] == pytest.approx(100 * best_write / 450e9)
    nvlink_ce = next(r for r in headline_rows(REF, MODEL) if r["figure"] == "NVLink peer (ce)")
    assert nvlink_ce["spec"] == 450.0
    assert statistics.median([nvlink_ce["percent_of_spec"]]) == pytest.approx(
        round(100 * MODEL.find("link:nvlink", "measured", "ce").value / 450e9, 1))


def test_the_envelope_never_assumes_a_message_faster_than_a_larger_one_took():
    """Guards: the lower envelope is monotone: where a larger message was measured in less
    time (noise), the smaller one's bound is that time, not its own longer one."""
    from linkroof.roofline.model import Curve

    c = Curve("nvlink", "ce", "p2p_write", [(1024, 1024 / 2e-6), (2048, 2048 / 1.5e-6), (1 << 20, (1 << 20) / 5e-6)])
    assert c.time_at(1024) == pytest.approx(1.5e-6) and c.time_at(2048) == pytest.approx(1.5e-6)
    assert c.time_at(1 << 20) == pytest.approx(5e-6)
    assert c.time_at(3000) == pytest.approx(max(1.5e-6, 3000 / c.peak()))  # between sizes: the smaller one's


def test_nvlink_is_inferred_only_from_figures_no_pcie_link_can_reach():
    """Guards: an import's peer figure makes NVLink only when it is faster than any
    PCIe x16 link (121 GB/s); a 50 GB/s one stays of unknown path."""
    from linkroof.roofline.model import infer_nvlink, link_class
    from linkroof.readers.tools import Imported, bare_topology

    def imported(rate):
        m = dataclasses.replace(_at_rate(rate), source="nvbandwidth")
        topo = bare_topology(Imported("nvbandwidth", [m], [(0, "NVIDIA H200", ""), (1, "NVIDIA H200", "")]), "f")
        return topo, m

    slow_topo, slow = imported(50e9)
    assert not infer_nvlink(slow_topo, (slow,)) and link_class(slow_topo, slow, 1, infer_nvlink(slow_topo, (slow,))) is None
    fast_topo, fast = imported(390e9)
    assert link_class(fast_topo, fast, 1, infer_nvlink(fast_topo, (fast,))) == "nvlink"


def test_check_never_reads_unknown_nvlinks_as_down():
    """Guards: an import (no NVLink or PCIe facts) held to the reference gets no NVLink
    or PCIe check, and says what it could not check (it failed '18 NVLinks down')."""
    from linkroof.readers.tools import import_file, bare_topology, imported_environment
    from linkroof.profiler.session import make_profile
    from linkroof.roofline import gate
    from fakes import DATA

    imp = import_file("nccl-tests", DATA / "anchor" / "nt_allreduce.txt")
    p = make_profile([bare_topology(imp, "f")], [imported_environment(imp)], imp.measurements)
    checks, unknown = gate.topology_checks(p, REF)
    assert [c.name for c in checks] == ["GPUs"] and all(c.passed for c in checks)
    assert any("active NVLinks" in u for u in unknown) and any("PCIe generation" in u for u in unknown)
    report = gate.against_baseline(p, REF)
    assert not report.passed and not report.failed  # nothing compared is no pass, and no failure either
    # the reference against itself: every NVLink and PCIe fact checked, nothing unknown
    own, none = gate.topology_checks(REF, REF)
    assert none == [] and sum("active NVLinks" in c.name for c in own) == 2


def test_runs_diff_reports_a_change_just_over_the_noise():
    """Guards: a 3 % change of a steady figure (CV 0) is over a 2 % noise and reported;
    1.5 % is not."""
    from linkroof.roofline.summaries import compare_profiles

    a = factories.profile([_at_rate(390e9)])
    for factor, reported in ((1.03, True), (1.015, False)):
        b = factories.profile([_at_rate(390e9 * factor)])
        assert bool(compare_profiles(a, b, 0.02).changed) is reported, factor


def test_the_profile_picked_is_this_machines(tmp_path):
    """Guards: with no --profile, the newest stored profile of another machine (an 8-GPU
    board) is passed over for an older one of this machine; a newer partial one of this
    machine lacking the ceiling is passed over too, and said so."""
    from linkroof.profiler.session import pick_profile
    from linkroof.store import Store

    here = factories.topology("h200x2")
    ours = factories.profile([_at_rate(396e9), factories.measurement(
        "local_read_bandwidth", "sm", "local_read", (0,), GiB, (GiB / 4.4e12,) * 3)], label="ours")
    partial = factories.profile([factories.measurement("launch_latency", "launch", "graph", (0,), 0, (5e-7,) * 3)],
                                label="partial")
    other = factories.profile([_at_rate(396e9)], topologies=[factories.topology("hgx_h100_8")], label="other")
    store = tmp_path / "s.sqlite"
    with Store(store) as s:
        for p, when in ((ours, "2026-12-01T00:00:00+00:00"), (partial, "2026-12-01T01:00:00+00:00"),
                        (other, "2026-12-01T02:00:00+00:00")):
            s.put(dataclasses.replace(p, created_at=when))
    hbm = Workload("scale", hbm_bytes=2 * GiB)
    got, why = pick_profile(str(store), here, hbm)
    assert got.label == "ours" and "of this machine" in why and "lack" in why
    anything, _ = pick_profile(str(store), here, None)
    assert anything.label == "partial"  # no workload: the newest of this machine, not the other machine's


# ----------------------------------------------------------------- views


def test_a_bf16_or_fp8_result_is_compared_not_a_crash():
    """Guards: torch's bfloat16 and float8 outputs (which NumPy cannot hold) are widened to
    float32 before the comparison with the reference (a TypeError before)."""
    import numpy as np

    from linkroof.profiler.usercode import to_numpy

    class FakeTensor:  # the surface to_numpy uses of a torch tensor
        def __init__(self, values, dtype):
            self.values, self.dtype = np.asarray(values, dtype=np.float32), dtype

        def detach(self):
            return self

        def float(self):
            return FakeTensor(self.values, "torch.float32")

        def cpu(self):
            return self

        def numpy(self):
            if self.dtype != "torch.float32":
                raise TypeError(f"Got unsupported ScalarType {self.dtype}")
            return self.values

    for dtype in ("torch.bfloat16", "torch.float8_e4m3fn"):
        got = to_numpy(FakeTensor([1.5, 2.0], dtype))
        assert got.dtype == np.float32 and got.tolist() == [1.5, 2.0]


def test_heatmap_colours_are_anchored_at_zero_and_spec():
    """Guards: equal links get equal colours: the scale runs from 0 to the pair's spec
    (or, for an import with no spec, to the largest figure), never 396.15-396.17."""
    heat = F_pair(REF, False)
    assert heat.zmin == 0 and heat.zmax == pytest.approx(450.0)
    from fakes import DATA
    from linkroof.readers.tools import bare_topology, import_file, imported_environment
    from linkroof.profiler.session import make_profile

    imp = import_file("nvbandwidth", DATA / "anchor" / "nvb.json")
    p = make_profile([bare_topology(imp, "f")], [imported_environment(imp)], imp.measurements)
    heat = F_pair(p, False)
    values = [v for row in heat.z for v in row if v is not None]
    assert heat.zmin == 0 and heat.zmax == pytest.approx(max(values)) and min(values) > 0.99 * max(values)


def F_pair(profile, relative):
    from linkroof.dashboard import figures as F

    return F.pair_matrix_figure(profile, "p2p_write", "ce", relative).data[0]


def test_report_legends_fit_and_the_decomposition_marks_the_measured_time():
    """Guards: a static page cannot scroll a legend: long ones go under the plot; the
    decomposition bars carry the measured time as a marker."""
    from linkroof.dashboard import figures as F
    from linkroof.dashboard.report import report_figures

    for title, fig in report_figures(REF):
        if sum(1 for t in fig.data if t.showlegend is not False and t.name) > 8:
            assert fig.layout.legend.orientation == "h", title
    w = W.collective("all_reduce", 2 << 20, 2)
    placed = cost.with_cost(place(w, 92e-6, MODEL), REF, MODEL, collective_s=28e-6, launch_s=45e-6)
    fig = F.decomposition_figure([placed])
    marker = next(t for t in fig.data if t.name == "measured time")
    assert marker.x[0] == pytest.approx(92)


def test_a_narrow_terminal_keeps_the_identifying_columns_whole():
    """Guards: at 100 columns the Bus ID is printed whole (it was cut to 00000000...)."""
    from rich.console import Console

    from linkroof.render import gpu_table

    console = Console(width=100, record=True)
    console.print(gpu_table(TOPO))
    text = console.export_text()
    assert "00000000:00:06.0" in text and "00000000:00:07.0" in text and "…" not in text


def test_a_stored_runs_account_says_when_it_ran():
    """Guards: the bundled reference's 'suite full: 997 measurements in 155.4 s' reads as
    the account of a run recorded on its date, not of one that just happened."""
    from rich.console import Console

    from linkroof.render import bench_summary

    console = Console(width=200, record=True)
    console.print(bench_summary(REF))
    assert "recorded 2026-11-30 19:39: suite full: 997 measurements" in console.export_text()


def test_placements_work_on_an_nccl_tests_import():
    """Guards: the import holds the all-reduce at 256 MiB and an inferred NVLink roof, so
    a 256 MiB all-reduce workload is placed (it said 'nothing to bound'), measured only."""
    from fakes import DATA
    from linkroof.readers.tools import bare_topology, import_file, imported_environment
    from linkroof.profiler.session import make_profile
    from linkroof.roofline.place import place_spec

    imp = import_file("nccl-tests", DATA / "anchor" / "nt_allreduce.txt")
    p = make_profile([bare_topology(imp, "f")], [imported_environment(imp)], imp.measurements)
    model = MachineModel.from_profile(p)
    w = W.collective("all_reduce", 256 << 20, 2)
    measured = place(w, 1e-3, model)
    assert measured.limiter == "link:nvlink" and 0 < measured.fraction_of_roofline < 1
    spec, notes = place_spec(w, 1e-3, model)
    assert spec == [] and "no spec NVLink ceiling" in notes[0]
    base = nccl_baseline(p, w)
    assert base is not None and base.dtype == "fp32"
