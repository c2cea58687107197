"""The cost model's decomposition, copy-time bound and below-model note as facts (issue 44:
the 54 mutants of roofline/cost.py that survived mutmut 3.8.1 in decompose, comm_time and
with_bound, benchmarks/data/2026-12-05-mutation/cost-open-diffs.txt).

Each case states a measured time and a bound term by term, in microseconds, and the
whole decomposition that follows: every part's name, seconds and what it says."""

import pytest

from linkroof.roofline import cost
from linkroof.roofline.model import Curve, MachineModel
from linkroof.schema import Placement, Workload

US = 1e-6
HOW = {"launch": "L-how", "sync": "S-how", "compute": "C-how", "memory": "M-how", "link:nvlink": "N-how",
       "link:pcie": "P-how"}


def _bound(terms_us: dict[str, float], limiter: str, how: dict[str, str] | None = None) -> cost.CostBound:
    terms = {k: v * US for k, v in terms_us.items()}
    over = {k: v for k, v in terms.items() if k not in ("launch", "sync")}
    bound = terms.get("launch", 0.0) + terms.get("sync", 0.0) + over[limiter]
    return cost.CostBound(terms, bound, limiter, dict(HOW if how is None else how))


def _us(parts):
    return [(name, round(v / US, 6), how) for name, v, how in parts]


# launch 10, sync 5, compute 100 (the limiter), memory 60, nvlink 40: alphabetically the
# link comes before the memory, by size after it
FULL = {"launch": 10, "sync": 5, "compute": 100, "memory": 60, "link:nvlink": 40}


def test_a_long_time_gives_every_term_in_full_the_larger_first_then_unexplained():
    """Timed at 300 us: launch 10, sync 5, compute 100, memory 60 and nvlink 40 not
    overlapped (the larger first), 85 us unexplained; nothing below the model."""
    got = _us(cost.decompose(300 * US, _bound(FULL, "compute")))
    assert got == [
        ("launch", 10, "L-how"),
        ("sync", 5, "S-how"),
        ("compute", 100, "C-how"),
        ("memory (not overlapped, inferred)", 60, "inferred: of 60.0 us, the time left after compute, taken to have "
                                                  "run after it rather than beside it"),
        ("link:nvlink (not overlapped, inferred)", 40, "inferred: of 40.0 us, the time left after compute, taken to "
                                                       "have run after it rather than beside it"),
        ("unexplained", 85, "measured minus the terms above"),
    ]


def test_a_term_partly_beside_the_limiter_says_how_much_of_it():
    """Timed at 200 us: after launch, sync and compute 85 us are left; memory's 60 fit,
    of nvlink's 40 only 25 do, so 15 us of it ran beside compute."""
    got = _us(cost.decompose(200 * US, _bound(FULL, "compute")))
    assert got[3:] == [
        ("memory (not overlapped, inferred)", 60, "inferred: of 60.0 us, the time left after compute, taken to have "
                                                  "run after it rather than beside it"),
        ("link:nvlink (not overlapped, inferred)", 25, "inferred: of 40.0 us, the time left after compute, taken to "
                                                       "have run after it rather than beside it"),
        ("link:nvlink", 0, "15.0 us of it beside compute"),
        ("unexplained", 0, "measured minus the terms above"),
    ]


def test_a_short_time_caps_the_terms_and_says_the_whole_excess():
    """Timed at 12 us: launch 10 whole, sync capped at 2 (3 over), compute has nothing
    left (100 over, and no part of 0 s), memory and nvlink wholly beside compute; the
    model's terms exceed the time by 103 us in all, not by the last term's 100."""
    got = _us(cost.decompose(12 * US, _bound(FULL, "compute")))
    assert got == [
        ("launch", 10, "L-how"),
        ("sync (capped)", 2, "S-how; the model's term is 5000 ns, more than was left"),
        ("memory", 0, "60.0 us of it beside compute"),
        ("link:nvlink", 0, "40.0 us of it beside compute"),
        ("unexplained", 0, "measured minus the terms above"),
        (cost.BELOW_MODEL, 0, "the measured time is 103.0 us shorter than the model's terms add up to: check the "
                              "workload's counts, its launch path and syncs"),
    ]


def test_the_measured_launch_is_a_part_beside_the_bound_with_its_own_words():
    got = _us(cost.decompose(300 * US, _bound(FULL, "compute"), launch_s=7 * US))
    assert got[0] == ("host launch (measured)", 7, "measured host share per call: the ungated time less the gated "
                                                   "one, both at one clock state; a part beside the bound, not in it")
    assert _us(cost.decompose(300 * US, _bound(FULL, "compute"), launch_s=-3 * US))[0] == \
        ("sync", 5, "S-how")  # a negative measured launch is none


def test_terms_without_words_say_nothing_rather_than_a_placeholder():
    got = _us(cost.decompose(300 * US, _bound(FULL, "compute", how={})))
    assert [(n, h) for n, _, h in got[:3]] == [("launch", ""), ("sync", ""), ("compute", "")]


def test_a_zero_or_negative_time_is_refused_with_its_reason():
    for t in (0.0, -1 * US):
        with pytest.raises(cost.CostError, match="measured time must be positive"):
            cost.decompose(t, _bound(FULL, "compute"))


def test_no_launch_term_gives_no_launch_part():
    got = _us(cost.decompose(300 * US, _bound({"compute": 100}, "compute")))
    assert got == [("compute", 100, "C-how"), ("unexplained", 200, "measured minus the terms above")]


LINKS = {"compute": 10, "link:nvlink": 60, "link:pcie": 30}


def test_nccl_time_replaces_the_link_only_when_longer_and_holds_every_link():
    """nvlink 60 us is the limiter beside pcie 30 us. NCCL measured at 80 us takes the
    main part and holds both links (no part for either); at exactly 60 us it is not
    longer, so the link stays the main part and pcie is not overlapped."""
    b = _bound(LINKS, "link:nvlink")
    got = _us(cost.decompose(200 * US, b, collective_s=80 * US))
    assert got == [
        (cost.NCCL_MEASURED, 80, "NCCL's own device time at this size (the profile's)"),
        ("compute (not overlapped, inferred)", 10, "inferred: of 10.0 us, the time left after measured NCCL, taken "
                                                   "to have run after it rather than beside it"),
        ("unexplained", 110, "measured minus the terms above"),
    ]
    tie = _us(cost.decompose(200 * US, b, collective_s=60 * US))
    assert [n for n, _, _ in tie] == ["link:nvlink", "link:pcie (not overlapped, inferred)",
                                      "compute (not overlapped, inferred)", "unexplained"]
    assert tie[0] == ("link:nvlink", 60, "N-how")


# ------------------------------------------------------------------ comm_time

def _model(*curves: Curve) -> MachineModel:
    return MachineModel("test GPU", None, [], list(curves))


GBS = 1e9


def test_a_variant_curve_never_bounds_a_copy_even_when_faster():
    """A gated-off p2p_read curve at 400 GB/s beside the plain one at 100 GB/s: the bound
    is the plain one's 10.0 us for 1 MB."""
    plain = Curve("nvlink", "ce", "p2p_read", [(1_000_000, 100 * GBS)])
    fast = Curve("nvlink", "sm", "p2p_read", [(1_000_000, 400 * GBS)], (("gated", False),))
    t, text = cost.comm_time(None, "nvlink", 1_000_000, 1_000_000, _model(plain, fast))
    assert t == pytest.approx(10 * US)
    assert text == "ce p2p_read: 10.0 us per 1000000 B message, the lower envelope of its measured times " \
                   "(at a swept size)"


def test_between_swept_sizes_it_says_so_and_counts_the_messages():
    c = Curve("nvlink", "ce", "p2p_write", [(1000, 1 * GBS), (1_000_000, 100 * GBS)])
    t, text = cost.comm_time(None, "nvlink", 40_000, 4000, _model(c))
    assert t == pytest.approx(10 * 1 * US)
    assert text == "ce p2p_write: 1000 ns per 4000 B message, the lower envelope of its measured times " \
                   "(between swept sizes: the smaller size's time), x 10 messages"


def test_of_two_equal_curves_the_first_is_named():
    a = Curve("nvlink", "ce", "p2p_read", [(1_000_000, 100 * GBS)])
    b = Curve("nvlink", "tma", "p2p_read", [(1_000_000, 100 * GBS)])
    assert cost.comm_time(None, "nvlink", 1_000_000, None, _model(a, b))[1].startswith("ce p2p_read")
    assert cost.comm_time(None, "nvlink", 1_000_000, None, _model(b, a))[1].startswith("tma p2p_read")


def test_less_than_a_byte_is_one_message_of_one_byte():
    c = Curve("nvlink", "ce", "p2p_read", [(1000, 1 * GBS)])
    assert "per 1 B message" in cost.comm_time(None, "nvlink", 0.5, None, _model(c))[1]


# ------------------------------------------------------------------ with_bound

def test_the_below_model_note_only_within_the_placements_own_margin():
    """Placement.BELOW_BOUND is 1 %. Timed at 1 s: a bound of exactly 1.01 s (compute's
    term 1.01 s) is within it, so the cost notes say the time is faster than the terms;
    a bound of 1.5 s is past it (the placement flags that itself) and 0.995 s leaves no
    excess, so neither says it."""
    p = Placement(Workload(name="w", flops={"bf16": 1.0}), 1.0, 1.0, "compute", "measured")

    def notes(bound_s):
        b = cost.CostBound({"compute": bound_s}, bound_s, "compute", {"compute": "C-how"})
        return [n for n in cost.with_bound(p, b).cost_notes if n.startswith("faster than")]

    assert notes(1.01) == ["faster than the cost model's terms: the measured time is 10.00 ms shorter than the "
                           "model's terms add up to: check the workload's counts, its launch path and syncs"]
    assert notes(1.005) != []
    assert notes(1.5) == []
    assert notes(0.995) == []
