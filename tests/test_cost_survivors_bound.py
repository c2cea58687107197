"""The cost model's bound term by term, as facts (issue 44: the mutants of
roofline/cost.py's cost_bound, comm_time, machine_terms and sync_cost that survived
mutmut 3.8.1's run of 2026-12-05, benchmarks/data/2026-12-05b-mutation/cost-open-bound-diffs.txt).

Launch and sync come from the bundled 2xH200 profile's own figures (graph launch 0.72 us,
grid barrier 1.00 us; it has no torch collective figure); compute, HBM and links from a
small model built here, so each term is a number written down: 1e12 FLOP at 1000
TFLOP/s is 1 ms, 1 MB at 100 GB/s is 10 us."""

import dataclasses

import pytest

from linkroof.profiler.session import bundled_profile
from linkroof.roofline import cost
from linkroof.roofline.model import Curve, MachineModel, Roof
from linkroof.schema import Workload

REF = bundled_profile()
US, GBS, TFS = 1e-6, 1e9, 1e12


def _figure(table, key):
    return cost._term(REF, table, key, "x", "x")[0]


GRAPH = _figure(cost.LAUNCH_PATHS, "graph")
GRID = _figure(cost.SYNC_KINDS, "grid")
CTA = _figure(cost.SYNC_KINDS, "cta")


def model(*, roofs=(), curves=()) -> MachineModel:
    base = [Roof("compute:bf16", "measured", 1000 * TFS, "gemm"), Roof("compute:fp8", "measured", 2000 * TFS, "gemm"),
            Roof("hbm", "measured", 4000 * GBS)]
    return MachineModel("test GPU", None, base + list(roofs), list(curves))


GEMM = Workload("gemm", flops={"bf16": 1e12})  # 1 ms at 1000 TFLOP/s


# ------------------------------------------------------------------ the launch as measured


def test_a_measured_launch_is_one_call_in_its_own_words_not_the_profiles_figure_times_launches():
    """launch_s 2 us with launches=3: the launch term is 2 us (the call's own, once), not 3 x
    the profile's graph launch, and says so."""
    b = cost.cost_bound(GEMM, REF, model(), launches=3, launch_s=2 * US)
    assert b.terms_s == {"launch": 2 * US, "compute": pytest.approx(1e-3)}
    assert b.how["launch"] == ("2000 ns a call as measured: the ungated time less the gated one (calls back to back "
                               "hide their launch behind the previous call)")
    assert b.bound_s == pytest.approx(1e-3 + 2 * US)


def test_a_negative_measured_launch_is_none():
    b = cost.cost_bound(GEMM, REF, model(), launch_s=-1 * US)
    assert b.terms_s["launch"] == 0.0
    assert b.how["launch"].startswith("0 ns a call as measured")


def test_a_small_measured_launch_is_kept_as_measured():
    """0.3 us measured: 0.3 us, not rounded up to anything."""
    assert cost.cost_bound(GEMM, REF, model(), launch_s=0.3 * US).terms_s["launch"] == pytest.approx(0.3 * US)


def test_no_launches_means_no_launch_term_even_when_measured():
    assert "launch" not in cost.cost_bound(GEMM, REF, model(), launches=0, launch_s=2 * US).terms_s


# ------------------------------------------------------------------ the profile's launch and sync


def test_the_sync_is_the_grid_barrier_unless_told():
    b = cost.cost_bound(GEMM, REF, model(), syncs=2)
    assert b.terms_s["sync"] == 2 * GRID
    assert b.terms_s["launch"] == GRAPH
    assert cost.cost_bound(GEMM, REF, model(), syncs=2, sync_kind="cta").terms_s["sync"] == 2 * CTA


def test_no_launch_still_counts_the_syncs():
    b = cost.cost_bound(GEMM, REF, model(), launches=0, syncs=1)
    assert set(b.terms_s) == {"sync", "compute"} and b.terms_s["sync"] == GRID


def test_a_launch_path_the_profile_lacks_is_a_note_and_the_syncs_still_count():
    """The bundled profile has no torch collective figure: the launch term is left out with
    a note saying the bound is lower for it, and the grid sync still counts."""
    b = cost.cost_bound(GEMM, REF, model(), launch_path="torch", syncs=1)
    assert b.terms_s["sync"] == GRID and "launch" not in b.terms_s
    assert b.notes == ("this profile has no torch launch figure (linkroof bench --only launch measures it): the "
                       "launch term is left out, so the bound is lower than it would be",)


def test_an_unknown_launch_path_or_sync_kind_is_refused_not_noted():
    with pytest.raises(cost.CostError, match=r"unknown launch path 'warp' \(one of graph, cuda, cupy, nccl, torch\)"):
        cost.cost_bound(GEMM, REF, model(), launch_path="warp")
    with pytest.raises(cost.CostError, match=r"unknown sync kind 'warp' \(one of cta, grid, gpu\)"):
        cost.cost_bound(GEMM, REF, model(), syncs=1, sync_kind="warp")
    with pytest.raises(cost.CostError, match=r"unknown sync kind 'warp'"):
        cost.sync_cost(REF, "warp")


def test_machine_terms_go_on_past_a_launch_path_the_profile_lacks():
    """A profile without its graph-launch figure still lists its stream, CuPy and NCCL
    launch figures and its three syncs."""
    no_graph = dataclasses.replace(REF, measurements=[
        m for m in REF.measurements if (m.spec.name, m.spec.pattern) != ("launch_latency", "graph")])
    assert [(r["term"], r["kind"]) for r in cost.machine_terms(no_graph)] == [
        ("launch", "cuda"), ("launch", "cupy"), ("launch", "nccl"), ("sync", "cta"), ("sync", "grid"), ("sync", "gpu")]


def test_without_a_model_the_bound_builds_the_profiles_own():
    w = Workload("gemm", flops={"bf16": 1e12}, hbm_bytes=1e9)
    assert cost.cost_bound(w, REF).terms_s == cost.cost_bound(w, REF, MachineModel.from_profile(REF)).terms_s


# ------------------------------------------------------------------ compute and memory


def test_compute_adds_each_data_types_time_and_notes_a_type_without_a_ceiling():
    """1e12 bf16 FLOP (1 ms) + 1e12 fp8 FLOP (0.5 ms) = 1.5 ms; 1e9 fp64 FLOP have no
    ceiling here: left out, with a note; 0 FLOP of tf32 say nothing."""
    w = Workload("mixed", flops={"bf16": 1e12, "tf32": 0, "fp64": 1e9, "fp8": 1e12})
    b = cost.cost_bound(w, REF, model(), launches=0)
    assert b.terms_s == {"compute": pytest.approx(1.5e-3)}
    assert b.how == {"compute": "FLOPs / the measured GEMM peak per data type"}
    assert b.notes == ("no measured compute ceiling for fp64: its time is left out",)


def test_memory_is_bytes_over_the_hbm_figure_and_says_which():
    b = cost.cost_bound(Workload("copy", hbm_bytes=4e9), REF, model(), launches=0)
    assert b.terms_s == {"memory": pytest.approx(1e-3)}
    assert b.how == {"memory": "bytes / HBM 4000.0 GB/s"}
    assert b.limiter == "memory"


def test_nothing_to_bound_says_which_workload():
    with pytest.raises(cost.CostError, match=r"^workload 'empty': nothing to bound \(no FLOPs, bytes or measured "
                                             r"ceilings\)$"):
        cost.cost_bound(Workload("empty"), REF, model(), launches=0)


# ------------------------------------------------------------------ links


CE = Curve("nvlink", "ce", "p2p_read", [(1000, 1 * GBS), (1_000_000, 100 * GBS)])


def test_links_go_on_past_one_with_no_bytes_and_one_with_nothing_measured():
    """No bytes on PCIe, bytes on the network with no ceiling at all (a note), then 1 MB on
    NVLink at 100 GB/s: its 10 us term is there."""
    w = Workload("w", link_bytes={"pcie_peer": 0, "network": 1e6, "nvlink": 1e6})
    b = cost.cost_bound(w, REF, model(curves=[CE]), launches=0)
    assert b.terms_s == {"link:nvlink": pytest.approx(10 * US)}
    assert b.notes == ("no measured copy and no ceiling for link network: its time is left out",)


def test_the_link_term_is_per_message_at_the_workloads_message_size():
    """1 MB in messages of 1000 B: 1000 messages of 1 us each (the curve's time at 1000 B),
    1 ms, not one message of 1 MB at 100 GB/s (10 us)."""
    w = Workload("w", link_bytes={"nvlink": 1e6}, message_bytes=1000)
    b = cost.cost_bound(w, REF, model(curves=[CE]), launches=0)
    assert b.terms_s["link:nvlink"] == pytest.approx(1e-3)
    assert b.how["link:nvlink"] == ("ce p2p_read: 1000 ns per 1000 B message, the lower envelope of its measured "
                                    "times (at a swept size), x 1000 messages")


def test_a_slower_link_ceiling_than_the_copies_gives_the_bandwidth_only_term_and_says_both():
    """The copies move 1 MB in 10 us (100 GB/s), but the link's measured ceiling (no message
    size: the roof) is 50 GB/s: the term is the bandwidth-only 20 us, saying the copies'."""
    w = Workload("w", link_bytes={"nvlink": 1e6})
    b = cost.cost_bound(w, REF, model(roofs=[Roof("link:nvlink", "measured", 50 * GBS, "nccl", "busbw")],
                                      curves=[CE]), launches=0)
    assert b.terms_s["link:nvlink"] == pytest.approx(20 * US)
    assert b.how["link:nvlink"] == ("bytes / 50.0 GB/s, the bandwidth-only term (measured nccl busbw; the copies' "
                                    "envelope gave 10.0 us)")


def test_at_a_tie_the_copies_envelope_is_kept():
    w = Workload("w", link_bytes={"nvlink": 1e6})
    b = cost.cost_bound(w, REF, model(roofs=[Roof("link:nvlink", "measured", 100 * GBS, "ce")], curves=[CE]),
                        launches=0)
    assert b.how["link:nvlink"].startswith("ce p2p_read: 10.0 us per 1000000 B message")


def test_the_ceiling_at_the_message_size_comes_from_the_curves_not_the_roof():
    """Messages of 1000 B: the link's ceiling there is the curve's 1 GB/s, not the roof's
    400 GB/s, so the copies' envelope (1 ms for 1 MB) is the term."""
    w = Workload("w", link_bytes={"nvlink": 1e6}, message_bytes=1000)
    b = cost.cost_bound(w, REF, model(roofs=[Roof("link:nvlink", "measured", 400 * GBS, "ce")], curves=[CE]),
                        launches=0)
    assert b.terms_s["link:nvlink"] == pytest.approx(1e-3)
    assert b.how["link:nvlink"].startswith("ce p2p_read")


def test_copies_measured_without_a_link_ceiling_give_the_envelope():
    """A model with the NVLink copy curve but no NVLink roof and no message size: the
    copies' 10 us, no bandwidth-only term to compare."""
    b = cost.cost_bound(Workload("w", link_bytes={"nvlink": 1e6}), REF, model(curves=[CE]), launches=0)
    assert b.terms_s["link:nvlink"] == pytest.approx(10 * US)


def test_a_link_with_a_ceiling_and_no_copies_is_bytes_over_it():
    b = cost.cost_bound(Workload("w", link_bytes={"nvlink": 1e6}), REF,
                        model(roofs=[Roof("link:nvlink", "measured", 50 * GBS, "nccl")]), launches=0)
    assert b.terms_s["link:nvlink"] == pytest.approx(20 * US)
    assert b.how["link:nvlink"] == "bytes / 50.0 GB/s (no copy measured on this link: no latency term)"


def test_two_messages_are_counted_in_words():
    c = cost.comm_time(None, "nvlink", 2000, 1000, model(curves=[CE]))
    assert c[1].endswith(", x 2 messages")
    assert not cost.comm_time(None, "nvlink", 1000, 1000, model(curves=[CE]))[1].endswith("messages")


def test_at_a_message_size_the_link_ceiling_is_the_curves_even_where_the_roof_is_lower():
    """Messages of 1000 B, the curve's 1 GB/s there and a roof of 0.5 GB/s: the bound at that
    size is the curves' (1 ms for 1 MB, the copies' envelope), never the roof's 2 ms."""
    w = Workload("w", link_bytes={"nvlink": 1e6}, message_bytes=1000)
    b = cost.cost_bound(w, REF, model(roofs=[Roof("link:nvlink", "measured", 0.5 * GBS, "ce")], curves=[CE]),
                        launches=0)
    assert b.terms_s["link:nvlink"] == pytest.approx(1e-3)
    assert b.how["link:nvlink"].startswith("ce p2p_read: 1000 ns per 1000 B message")
