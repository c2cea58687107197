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


# --- the figures in the messages: a 1 s span, so a factor of 1.000001 shows in the first decimal ---
# (0.5 s is 500000.0 us; 0.5 s * 1000001 would print 500000.5, and 0.5 s / 1e6 would print 0.0)

def test_a_class_with_no_kernel_in_an_empty_table_is_named_with_its_time():
    t = timeline(1.0, class_s=[("compute", 0.5)])
    assert K.check_timeline(t) == [
        "class: the decomposition gives compute 500000.0 us a call, and no kernel in the table is compute "
        "(the table's classes: none)"]


def test_a_class_with_no_kernel_lists_the_tables_classes_joined_by_a_comma():
    # memory and idle have kernels and time; compute has time and no kernel
    t = timeline(1.0, class_s=[("compute", 0.5), ("memory", 0.3), ("idle", 0.2)],
                 kernels=[("memory", 0.3), ("idle", 0.2)])
    assert K.check_timeline(t) == [
        "class: the decomposition gives compute 500000.0 us a call, and no kernel in the table is compute "
        "(the table's classes: idle, memory)"]


def test_a_kernel_class_with_no_time_in_the_decomposition_is_named_with_its_time():
    t = timeline(1.0, kernels=[("memory", 0.5)])
    assert K.check_timeline(t) == [
        "class: the kernel table calls 500000.0 us a call memory, and the decomposition gives memory no time"]


def test_a_class_alone_longer_than_all_of_it_gives_both_times():
    t = timeline(1.0, class_s=[("compute", 0.5)], kernels=[("compute", 0.5)], alone=[("compute", 0.75)])
    assert K.check_timeline(t) == ["shares: compute alone 750000.0 us is more than all of compute (500000.0 us)"]


def test_pieces_short_of_a_1_s_span_give_both_times():
    t = timeline(1.0, pieces=[("memory", 0.5)])
    assert K.check_timeline(t) == ["shares: the pieces add up to 500000.0 us, the span is 1000000.0 us"]


def test_a_class_said_off_the_path_with_time_on_it_gives_that_time():
    # 0.5 s on the path, saving 0.25 s: within its time on the path and the span
    t = timeline(1.0, path=[("memory", 0.5)], shorten=[("memory", 0.25, "not on the critical path")])
    assert K.check_timeline(t) == [
        "critical path: memory is said not to be on the critical path, and has 500000.0 us on it"]


def test_a_saving_over_the_time_on_the_path_gives_both_times():
    t = timeline(1.0, path=[("memory", 0.5)], shorten=[("memory", 0.75, "x")])
    assert K.check_timeline(t) == [
        "critical path: shortening memory could save at most 750000.0 us, more than its 500000.0 us on the path"]


def test_a_saving_over_a_1_s_span_gives_the_saving():
    # 2 s on the path and 2 s saved: only the span is exceeded
    t = timeline(1.0, path=[("memory", 2.0)], shorten=[("memory", 2.0, "x")])
    assert K.check_timeline(t) == ["critical path: shortening memory could save 2000000.0 us, more than the span"]


def test_a_reasons_time_over_a_1_s_span_gives_the_span():
    # nothing on the path and nothing saved: only the reason's 2 s against the 1 s span
    t = timeline(1.0, shorten=[("memory", 0.0, "its 2 s on the critical path")])
    assert K.check_timeline(t) == [
        "critical path: memory's reason gives 'its 2 s on the critical path', longer than the call's span "
        "(1000000.0 us): a figure of another unit (a sum over calls?) beside a per-call one"]


def test_a_drift_with_no_evidence_is_called_clock_by_default():
    # 2000 -> 2010 MHz is 0.5 %, under 3 %: not moved, and the note names no evidence
    c = NS(state="drifting", sm_mhz_first=2000, sm_mhz_last=2010, note="")
    msg = ("clock: called drifting with no evidence (SM clock 2000 -> 2010 MHz, no cap, no power rise named): "
           "a drift is the GPU's only with evidence")
    assert K.check_clock(c) == [msg]
    assert K.check(clock=c) == [msg]
