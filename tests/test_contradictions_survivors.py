"""The contradiction checker (linkroof/roofline/contradictions.py) exactly at its tolerances,
and on summaries that lack a field. Guards the survivors of the 2026-12-04c mutmut run
(benchmarks/data/2026-12-04c-mutation/contradictions-open-diffs.txt): every rule that
tolerates float noise ("more than", "off by") lets a figure exactly at the tolerance pass,
and an object without a span or a clock state is simply not checked. Timeline summaries
are built by hand; each expected line is worked out from the figures given here.
"""

from types import SimpleNamespace as NS

from linkroof.roofline import contradictions as K

US = 1e-6
PS = 1e-12


def timeline(span, class_s=(), kernels=(), alone=(), pieces=(), path=(), shorten=()):
    return NS(span_s=span, class_s=list(class_s),
              kernels=[NS(kernel_class=c, time_per_call_s=t) for c, t in kernels],
              class_alone_s=list(alone), pieces=list(pieces), critical_path_s=list(path), shorten_s=list(shorten))


# --- objects without the field: nothing to check, no error ---------------------------------

def test_a_summary_without_a_span_is_not_checked():
    assert K.check_timeline(NS()) == []
    assert K.check(timeline=NS()) == []


def test_a_clock_without_a_state_is_not_called_drifting():
    assert K.check_clock(NS()) == []
    assert K.check(clock=NS(sm_mhz_first=2000, sm_mhz_last=2000, note="")) == []


# --- "alone" against all of a class: 1 ps of absolute slack --------------------------------

def test_one_picosecond_alone_of_a_class_with_no_time_is_rounding_and_more_is_not():
    # the decomposition gives compute no time: 0 us * (1 + 1e-6) + 1 ps = 1 ps allowed alone
    t = timeline(100 * US, class_s=[("memory", 60 * US)], kernels=[("memory", 60 * US)], alone=[("compute", 1 * PS)])
    assert K.check_timeline(t) == []
    over = timeline(100 * US, class_s=[("memory", 60 * US)], kernels=[("memory", 60 * US)],
                    alone=[("compute", 0.2 * US)])
    assert K.check_timeline(over) == ["shares: compute alone 0.2 us is more than all of compute (0.0 us)"]


# --- the pieces against the span: a millionth of the span plus 1 ps -------------------------

def test_pieces_short_by_exactly_the_tolerance_add_up():
    # a 2 ps span: tolerance 2 ps * 1e-6 + 1 ps = 1.000002 ps; the pieces give 0.999998 ps,
    # 1.000002 ps short: exactly the tolerance, so they add up
    t = timeline(2 * PS, pieces=[("memory", 0.999998 * PS)])
    assert K.check_timeline(t) == []
    short = timeline(2 * PS, pieces=[("memory", 0.5 * PS)])  # 1.5 ps short: past it
    assert K.check_timeline(short) == ["shares: the pieces add up to 0.0 us, the span is 0.0 us"]


def test_pieces_off_by_a_millionth_of_a_1_ms_span_add_up():
    # 1 ms span: tolerance 1 ns + 1 ps; pieces of 600 us and 400.001 us are 1 ns over: they add up
    assert K.check_timeline(timeline(1e-3, pieces=[("memory", 600 * US), ("idle", 400.001 * US)])) == []
    # 3 ns over is past it
    [msg] = K.check_timeline(timeline(1e-3, pieces=[("memory", 600 * US), ("idle", 400.003 * US)]))
    assert msg == "shares: the pieces add up to 1000.0 us, the span is 1000.0 us"


# --- savings against the time on the path and the span ------------------------------------

def test_a_class_off_the_path_may_be_credited_one_picosecond():
    # compute has 0 us on the path: 0 * (1 + 1e-6) + 1 ps = 1 ps is the most it may save
    t = timeline(100 * US, path=[("memory", 100 * US)], shorten=[("compute", 1 * PS, "not on the critical path")])
    assert K.check_timeline(t) == []
    over = timeline(100 * US, path=[("memory", 100 * US)], shorten=[("compute", 2 * US, "not on the critical path")])
    assert K.check_timeline(over) == [
        "critical path: shortening compute could save at most 2.0 us, more than its 0.0 us on the path"]


def test_a_saving_of_exactly_the_span_plus_a_millionth_is_within_it():
    # 1 ms span: 1 ms * (1 + 1e-6) = 1.000001 ms, the most any class may save
    edge = 0.001000001
    t = timeline(1e-3, path=[("memory", edge)], shorten=[("memory", edge, "x")])
    assert K.check_timeline(t) == []
    past = timeline(1e-3, path=[("memory", 0.0011)], shorten=[("memory", 0.0011, "x")])
    assert K.check_timeline(past) == ["critical path: shortening memory could save 1100.0 us, more than the span"]


def test_a_reasons_time_at_the_span_plus_a_thousandth_and_a_nanosecond_passes():
    # 9 us span: 9 us * 1.001 + 1 ns = 9.010 us is the longest time a reason may name
    def reason(text):
        return timeline(9 * US, path=[("memory", 5 * US)], shorten=[("memory", 5 * US, text)])

    assert K.check_timeline(reason("its 9.01 us on the critical path")) == []
    assert K.check_timeline(reason("its 9.009 us a call on the critical path")) == []
    assert K.check_timeline(reason("its 9.02 us on the critical path")) == [
        "critical path: memory's reason gives 'its 9.02 us on the critical path', longer than the call's span "
        "(9.0 us): a figure of another unit (a sum over calls?) beside a per-call one"]
