"""The contradiction checker's rules at their edges (issue 44, item 2: facts in their own
units; each case kills survivors of mutmut's run over roofline/contradictions.py, listed
in tests/mutation/survivors/). A timeline summary is built by hand: span 100 us."""

from types import SimpleNamespace as NS

from linkroof.roofline import contradictions as K
from linkroof.schema import ClockState

US = 1e-6


def kernel(cls, t):
    return NS(kernel_class=cls, time_per_call_s=t)


def timeline(span=100 * US, class_s=(("memory", 60 * US),), kernels=(("memory", 60 * US),), alone=(), pieces=(),
             path=(), shorten=()):
    return NS(span_s=span, class_s=list(class_s), kernels=[kernel(c, t) for c, t in kernels],
              class_alone_s=list(alone), pieces=list(pieces), critical_path_s=list(path), shorten_s=list(shorten))


def test_every_part_is_checked_together_and_each_text_is_named():
    t = timeline(class_s=[("memory", 60 * US), ("compute", 30 * US)])  # compute in the decomposition, not the table
    bad = K.check(timeline=t, clock=None, texts=["fine (99% hits)", "served from L2 (333% hits), DRAM 2% of its peak"])
    assert len(bad) == 2 and bad[0].startswith("class: the decomposition gives compute 30.0 us")
    assert bad[1] == "text 2: a share of 333% (over 100 %): ...served from L2 (333% hits), DRAM 2% of it..."


def test_a_share_excerpt_starts_40_characters_before_it():
    text = "x" * 50 + " 150% busy"
    [msg] = K.check_text(text, "t")
    assert msg == f"t: a share of 150% (over 100 %): ...{text[11:]}..."
    [short] = K.check_text("150% busy")
    assert short == "text: a share of 150% (over 100 %): ...150% busy..."


def test_a_minor_class_at_exactly_one_percent_is_not_held_to_the_table():
    edge = timeline(class_s=[("memory", 60 * US), ("compute", 1 * US)])  # 1 % of 100 us: not over it
    assert K.check_timeline(edge) == []
    over = timeline(class_s=[("memory", 60 * US), ("compute", 1.01 * US)])
    assert len(K.check_timeline(over)) == 1
    table_only = timeline(kernels=[("memory", 60 * US), ("compute", 1 * US)])
    assert K.check_timeline(table_only) == []
    assert K.check_timeline(timeline(kernels=[("memory", 60 * US), ("compute", 2 * US)]))[0].startswith(
        "class: the kernel table calls 2.0 us a call compute")


def test_two_kernels_of_one_class_add_up_in_the_table():
    t = timeline(class_s=[("memory", 60 * US)], kernels=[("memory", 0.6 * US), ("memory", 0.6 * US),
                                                          ("compute", 0.6 * US), ("compute", 0.6 * US)])
    # 1.2 us of compute over two kernels: over 1 % of the span, and no compute in the decomposition
    assert [x.split(",")[0] for x in K.check_timeline(t)] == ["class: the kernel table calls 1.2 us a call compute"]


def test_alone_equal_to_all_is_no_contradiction_and_a_hair_over_is():
    assert K.check_timeline(timeline(alone=[("memory", 60 * US)])) == []
    [msg] = K.check_timeline(timeline(alone=[("memory", 60.01 * US)]))
    assert msg == "shares: memory alone 60.0 us is more than all of memory (60.0 us)"
    assert K.check_timeline(timeline(alone=[("compute", 0.5 * US)]))  # a class the decomposition lacks: 0 us of it


def test_pieces_that_add_up_to_the_span_pass_and_off_by_a_nanosecond_fail():
    assert K.check_timeline(timeline(pieces=[("memory", 60 * US), ("idle", 40 * US)])) == []
    [msg] = K.check_timeline(timeline(pieces=[("memory", 60 * US), ("idle", 40.001 * US)]))
    assert msg == "shares: the pieces add up to 100.0 us, the span is 100.0 us"


def test_a_saving_equal_to_its_time_on_the_path_or_the_span_is_no_contradiction():
    ok = timeline(path=[("memory", 100 * US)], shorten=[("memory", 100 * US, "its 100.0 us on the critical path")])
    assert K.check_timeline(ok) == []
    over = timeline(path=[("memory", 100 * US)], shorten=[("memory", 100.2 * US, "x")])
    assert [m.split(":")[0] for m in K.check_timeline(over)] == ["critical path", "critical path"]
    assert "more than the span" in K.check_timeline(over)[1]


def test_a_reasons_time_at_the_span_passes_and_past_it_fails():
    at = timeline(path=[("memory", 60 * US)], shorten=[("memory", 60 * US, "its 100.0 us on the critical path")])
    assert K.check_timeline(at) == []
    past = timeline(path=[("memory", 60 * US)], shorten=[("memory", 60 * US, "its 100.2 us on the critical path")])
    [msg] = K.check_timeline(past)
    assert "longer than the call's span (100.0 us)" in msg


def test_no_span_no_timeline_checks():
    assert K.check_timeline(timeline(span=0.0, class_s=[("compute", 30 * US)])) == []
    assert K.check_timeline(NS(span_s=None)) == []


def test_a_drift_of_exactly_3_percent_is_not_a_moving_clock_and_a_small_one_needs_evidence():
    def drift(first, last, note="SM clock"):
        return ClockState(state="drifting", samples=10, sm_mhz_first=first, sm_mhz_last=last, note=note)

    assert K.check_clock(drift(2000, 1940))  # 3.0 %: not over 3 %, and nothing else said: no evidence
    assert K.check_clock(drift(2000, 1939)) == []  # 3.05 %: the clock moved
    assert K.check_clock(drift(1980, 1975))  # 0.25 %: not a moving clock
    assert K.check_clock(drift(1980, 1975, "... the power rising ...")) == []


def test_a_nan_excerpt_starts_40_characters_before_it():
    text = "y" * 50 + " bound nan us, and more text after it"
    [msg] = K.check_text(text, "t")
    i = text.index("nan us")
    assert msg == f"t: a figure printed as NaN: ...{text[i - 40:i + 6 + 20]}..."
    [short] = K.check_text("nan%")
    assert short == "text: a figure printed as NaN: ...nan%..."


def _placed(measured, bound, limiter="memory", flags=()):
    from linkroof.schema import Placement, Workload

    return Placement(workload=Workload(name="w"), measured_time_s=measured, bound_time_s=bound, limiter=limiter,
                     ceilings_kind="measured", flags=flags)


def test_a_bound_within_one_percent_of_the_time_is_no_contradiction():
    p = _placed(1.0, 1.0)
    assert K.check_placements([p]) == []
    at = _placed(1.0, 1.0 * (1 + p.BELOW_BOUND))  # exactly at the tolerance: not above it
    assert K.check_placements([at]) == []
    assert K.check_placements([_placed(1.0, 1.005)]) == []
    [msg] = K.check_placements([_placed(1.0, 1.5)])
    assert msg == "bounds: w's bound 1500000.0 us is above its measured 1000000.0 us and nothing says so"
    assert K.check_placements([_placed(1.0, 1.5, flags=("faster than its roofline",))]) == []
    assert K.check_placements([_placed(0.0, 1.0, limiter="unknown")]) == []  # no time measured: no bound to hold
