"""The clock-state rules at their edges, stated as facts in their own units (issue 44:
the mutants of roofline/clockstate.py that survived mutmut 3.8.1).

Each case gives the batches' times, the SM clock NVML read in each batch's window and
what the state must be: every field of ClockState, the note word for word. Boundaries
are hit exactly (a drift of exactly 3 %, a clock exactly 3 % under the first, a GPU
exactly 90 % busy, a power exactly 5 % up), so a rule that moves by one comparison
fails here."""

import pytest

from linkroof.roofline import clockstate as CS


def batches(times, clocks, power=500.0, reasons=None, mem=3201.0):
    """Batches 1 s apart: each its host window [i, i + 0.5] and one NVML sample at
    i + 0.25 with the batch's SM clock (None: not read), `power` W (a number or one per
    batch) and the reason bits (one per batch)."""
    n = len(times)
    powers = power if isinstance(power, list) else [power] * n
    bits = reasons or [0] * n
    windows = [(float(i), i + 0.5) for i in range(n)]
    samples = [CS.ClockSample(i + 0.25, clocks[i], mem, powers[i], bits[i]) for i in range(n)]
    return list(times), windows, samples


def state(times, clocks, **kw):
    opts = {k: kw.pop(k) for k in ("power", "reasons", "mem") if k in kw}
    t, w, s = batches(times, clocks, **opts)
    return CS.clock_state(t, w, s, **kw)


MS = 1e-3
HOST = ("; the calls' times moved {move} from the first batches to the last with no clock, power or thermal "
        "evidence of a GPU state (SM clock steady, no cap holding it, power flat): host-side variance{spread}")


# ---- the fields, when nothing moved


def test_a_steady_run_reports_every_field_and_the_note_word_for_word():
    st = state([1 * MS] * 6, [1980.0] * 6, max_sm_mhz=1980.0, how="timed by events")
    assert st == CS.ClockState(state="burst", samples=6, sm_mhz_first=1980.0, sm_mhz_last=1980.0,
                               sm_mhz_median=1980.0, sm_mhz_max=1980.0, mem_mhz=3201.0, power_w=500.0,
                               reasons=(), burst_s=1 * MS, sustained_s=1 * MS, drift=0.0,
                               note="SM clock 1980 -> 1980 MHz (max 1980); 500 W; timed by events")


def test_no_how_adds_nothing_and_no_power_reading_prints_no_watts():
    assert state([1 * MS] * 6, [1980.0] * 6).note == "SM clock 1980 -> 1980 MHz; 500 W"
    st = state([1 * MS] * 6, [1980.0] * 6, power=None, max_sm_mhz=1980.0)
    assert (st.note, st.power_w) == ("SM clock 1980 -> 1980 MHz (max 1980)", None)


def test_a_reason_in_the_first_sample_alone_is_held_for_the_whole_run():
    st = state([1 * MS] * 6, [1980.0] * 6, reasons=[0x4, 0, 0, 0, 0, 0])
    assert st.reasons == ("sw_power_cap",) and st.note == "SM clock 1980 -> 1980 MHz; 500 W; held by sw_power_cap"


def test_the_clock_unread_in_the_first_third_is_said_not_read():
    """NVML gave no SM clock in the first two batches (read 1980 MHz after): the note
    says it was not read rather than print a move from nothing."""
    st = state([1 * MS] * 6, [None, None, 1980.0, 1980.0, 1980.0, 1980.0])
    assert (st.sm_mhz_first, st.sm_mhz_last, st.note) == (None, 1980.0, "SM clock not read; 500 W")


def test_the_median_is_over_every_nvml_sample_not_only_the_windows():
    """Six windows read 1980 MHz; ten samples outside them (between batches) read 1000:
    the run's median SM clock is 1000 MHz, under 97 % of the 1980 maximum: sustained. The
    first and last thirds' clocks are the windows' own, 1980."""
    t, w, s = batches([1 * MS] * 6, [1980.0] * 6)
    s += [CS.ClockSample(10.0 + i, 1000.0, 3201.0, 500.0, 0) for i in range(10)]
    st = CS.clock_state(t, w, s, max_sm_mhz=1980.0)
    assert (st.state, st.sm_mhz_median, st.sm_mhz_first, st.sm_mhz_last, st.samples) == \
        ("sustained", 1000.0, 1980.0, 1980.0, 16)


def test_a_median_exactly_3_percent_under_the_maximum_is_still_burst():
    at = (1 - CS.DRIFT) * 1980.0
    assert state([1 * MS] * 6, [at] * 6, max_sm_mhz=1980.0).state == "burst"
    assert state([1 * MS] * 6, [at - 1.0] * 6, max_sm_mhz=1980.0).state == "sustained"


# ---- the GPU's own clock (nvbench's method)


MEASURED = "each batch's SM clock measured on the GPU (SM 0's clock64 over %globaltimer, nvbench's method)"


def test_the_gpus_own_clock_replaces_nvmls_everywhere_and_is_said_after_how():
    st = state([1 * MS] * 6, [1980.0] * 6, gpu_mhz=[1900.0] * 6)
    assert (st.sm_mhz_first, st.sm_mhz_last, st.sm_mhz_median) == (1900.0, 1900.0, 1900.0)
    assert st.note == "SM clock 1900 -> 1900 MHz; 500 W; " + MEASURED
    st = state([1 * MS] * 6, [1980.0] * 6, gpu_mhz=[1900.0] * 6, how="timed by events")
    assert st.note == "SM clock 1900 -> 1900 MHz; 500 W; timed by events; " + MEASURED


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan")])
def test_a_batch_whose_own_clock_read_zero_negative_or_nan_leaves_nvmls(bad):
    st = state([1 * MS] * 6, [1980.0] * 6, gpu_mhz=[1900.0] * 5 + [bad])
    assert (st.sm_mhz_first, st.sm_mhz_median) == (1980.0, 1980.0) and MEASURED not in st.note


def test_any_positive_own_clock_counts_however_low():
    assert state([1 * MS] * 6, [1980.0] * 6, gpu_mhz=[1.0] * 6).sm_mhz_median == 1.0


# ---- no windows: the samples' own thirds


def test_without_windows_the_first_and_last_thirds_of_the_samples_give_the_clocks():
    """Seven samples 1000..1600 MHz and no windows: first = mean of the first 7 // 3 = 2
    (1050), last = mean of the last 2 (1550), median 1300. Three samples: one each
    (1000, 1200)."""
    samples = [CS.ClockSample(float(i), 1000.0 + 100 * i, 3201.0, 500.0, 0) for i in range(7)]
    st = CS.clock_state([1 * MS] * 3, [], samples)
    assert (st.sm_mhz_first, st.sm_mhz_last, st.sm_mhz_median, st.state) == (1050.0, 1550.0, 1300.0, "burst")
    st = CS.clock_state([1 * MS] * 3, [], samples[:3])
    assert (st.sm_mhz_first, st.sm_mhz_last, st.sm_mhz_median) == (1000.0, 1200.0, 1100.0)
    st = CS.clock_state([1 * MS] * 3, [], samples[:2])  # 2 // 3 = 0: at least one
    assert (st.sm_mhz_first, st.sm_mhz_last) == (1000.0, 1100.0)


def test_samples_that_never_read_the_clock_give_no_median():
    samples = [CS.ClockSample(float(i), None, 3201.0, 500.0, 0) for i in range(3)]
    st = CS.clock_state([1 * MS] * 3, [], samples)
    assert (st.sm_mhz_median, st.sm_mhz_first, st.note) == (None, None, "SM clock not read; 500 W")


# ---- times of zero


def test_a_burst_of_zero_seconds_has_no_drift_and_no_late_batch():
    st = state([0.0] * 5 + [5 * MS], [1980.0] * 5 + [1500.0])
    assert (st.state, st.drift, st.burst_s, st.sustained_s) == ("burst", 0.0, 0.0, 2.5 * MS)
    assert st.note == "SM clock 1980 -> 1740 MHz; 500 W"


def test_a_batch_of_zero_seconds_leaves_the_spread_unsaid():
    st = state([1 * MS, 1 * MS, 1 * MS, 0.0, 2 * MS, 2 * MS], [1980.0] * 6)
    assert st.note == "SM clock 1980 -> 1980 MHz; 500 W" + HOST.format(move="+100.0%", spread="")


# ---- the clock's move


def test_a_clock_that_moved_while_the_last_batch_recovered_is_still_a_drift():
    """Times 1, 1 | 1, 1.2 | 1.2, 1.0 ms (burst 1.0, sustained 1.1: +10 %), the clock
    1980 -> 1600 MHz: drifting because the clock moved, though the last batch alone is
    back at the burst time."""
    st = state([1 * MS, 1 * MS, 1 * MS, 1.2 * MS, 1.2 * MS, 1.0 * MS], [1980.0] * 3 + [1800.0, 1600.0, 1600.0])
    assert st.state == "drifting" and (st.sm_mhz_first, st.sm_mhz_last) == (1980.0, 1600.0)
    assert st.note == ("SM clock 1980 -> 1600 MHz; 500 W; the calls slowed +10.0% from the first batches to the "
                       "last as the SM clock went from 1980 to 1600 MHz")


def test_a_clock_exactly_3_percent_down_has_not_moved_nor_fallen_late():
    """1000 -> 970 MHz (exactly 3 %) while the times moved +5 %: host-side variance, not
    a drift, neither by the thirds nor by the last batch."""
    st = state([1 * MS] * 4 + [1.05 * MS] * 2, [1000.0] * 4 + [970.0] * 2)
    assert st.state == "burst"
    assert st.note == "SM clock 1000 -> 970 MHz; 500 W" + HOST.format(
        move="+5.0%", spread=" (batches from 1 to 1.05 ms, 5.0% apart)")


def test_a_small_clock_move_is_relative_to_the_first_clock():
    st = state([1 * MS] * 4 + [1.05 * MS] * 2, [1980.0] * 4 + [1970.0] * 2)
    assert st.state == "burst" and "host-side variance" in st.note
    st = state([1 * MS] * 4 + [1.10 * MS, 1.0 * MS], [1.0] * 4 + [2.0] * 2)  # 1 -> 2 MHz: a move
    assert st.state == "drifting"


def test_a_first_clock_of_zero_is_not_read_and_moves_nothing():
    st = state([1 * MS] * 4 + [1.05 * MS] * 2, [0.0] * 4 + [1980.0] * 2)
    assert st.state == "burst" and st.note.startswith("SM clock not read; 500 W; the calls' times moved +5.0%")


def test_a_drift_of_exactly_3_percent_with_the_clock_moved_is_no_drift():
    st = state([100.0] * 3 + [103.0] * 3, [1980.0] * 3 + [1800.0] * 3)
    assert (st.drift, st.state, st.note) == (0.03, "burst", "SM clock 1980 -> 1800 MHz; 500 W")


# ---- the late fall: the last batch alone


def test_the_last_batch_alone_slower_at_a_lower_clock_is_a_late_fall_with_its_own_figures():
    """Six batches 100 | 100 | 96, 110 s: burst 100, the last third's median 103 (a drift
    of exactly 3 %, not over it); the last batch 10 % off at 1900 MHz (under 97 % of
    1980): drifting, the sustained figure the last batch's 110 and its clock 1900."""
    st = state([100.0] * 4 + [96.0, 110.0], [1980.0] * 5 + [1900.0])
    assert st.state == "drifting"
    assert (st.sustained_s, st.drift, st.sm_mhz_last) == (110.0, 0.1, 1900.0)


def test_a_last_batch_exactly_3_percent_off_is_not_late():
    st = state([100.0] * 5 + [103.0], [1980.0] * 5 + [1500.0])
    assert st.state == "burst" and st.drift == 0.015


def test_a_late_fall_needs_the_last_batch_off_in_time_not_only_in_clock():
    st = state([1 * MS] * 6, [1980.0] * 5 + [1900.0])
    assert (st.state, st.note) == ("burst", "SM clock 1980 -> 1940 MHz; 500 W")


# ---- the GPU's state, on evidence


def test_the_gpu_state_at_exactly_90_percent_busy_with_a_cap_named():
    st = state([1 * MS] * 4 + [1.1 * MS] * 2, [1980.0] * 6, reasons=[0, 0, 0, 0, 0x4, 0x4], busy_share=0.9)
    assert st.state == "drifting"
    assert st.note == ("SM clock 1980 -> 1980 MHz; 500 W; held by sw_power_cap; the calls slowed +10.0% from the "
                       "first batches to the last with the GPU busy 90% of the time and NVML reporting sw_power_cap: "
                       "a GPU state (inferred: NVML's clock reading, which lags, did not show the clock fall)")


def test_a_drift_of_exactly_3_percent_is_not_the_gpus_even_with_evidence():
    st = state([100.0] * 3 + [103.0] * 3, [1980.0] * 6, reasons=[0x4] * 6, busy_share=1.0)
    assert (st.state, st.note) == ("burst", "SM clock 1980 -> 1980 MHz; 500 W; held by sw_power_cap")


def test_exactly_90_percent_busy_without_evidence_leaves_the_cause_open():
    st = state([1 * MS] * 4 + [1.1 * MS] * 2, [1980.0] * 6, busy_share=0.9)
    assert st.state == "burst"
    assert st.note == "SM clock 1980 -> 1980 MHz; 500 W" + HOST.format(
        move="+10.0%", spread=" (batches from 1 to 1.1 ms, 10.0% apart)") + \
        ", though the recorded pass kept the GPU busy 90%: cause not established"


def test_an_idle_gpu_makes_the_move_the_hosts_own_speed():
    st = state([1 * MS] * 4 + [1.1 * MS] * 2, [1980.0] * 6, busy_share=0.25)
    assert st.note == "SM clock 1980 -> 1980 MHz; 500 W" + HOST.format(
        move="+10.0%", spread=" (batches from 1 to 1.1 ms, 10.0% apart)") + \
        ", the GPU idle 75% of the call: the host's own speed, not a clock state"


def test_power_exactly_5_percent_up_is_no_evidence_and_over_it_is():
    up = (1 + CS.POWER_RISE) * 400.0
    t, w, s = batches([1 * MS] * 6, [1980.0] * 6, power=[400.0, 400.0, 450.0, 450.0, up, up])
    assert CS.gpu_evidence(s, w, 2) == ""
    t, w, s = batches([1 * MS] * 6, [1980.0] * 6, power=[400.0, 400.0, 450.0, 450.0, up + 1, up + 1])
    assert CS.gpu_evidence(s, w, 2) == "the power rising from 400 to 421 W"


def test_samples_without_reason_bits_are_no_evidence():
    t, w, s = batches([1 * MS] * 6, [1980.0] * 6, reasons=[None] * 6)
    assert CS.gpu_evidence(s, w, 2) == ""


def test_the_reason_masks_are_ored_and_none_read_is_none():
    assert CS._or([None, None]) is None
    assert CS._or([0x4, None, 0x20]) == 0x24
    assert CS._or([0x8]) == 0x8


# ---- settled: exact windows (1/64 s samples, 1/8 s windows, binary fractions)


def grid(clock_of_k, n=25, power=500.0):
    return [CS.ClockSample(k / 64, clock_of_k(k), 3201.0, power, 0) for k in range(n)]


def test_a_history_of_exactly_three_windows_is_enough():
    """Samples at 0 .. 24/64 s: the first at exactly end - 3 x 1/8 s: settled."""
    assert CS.settled(grid(lambda k: 1980.0), window_s=1 / 8)
    assert not CS.settled(grid(lambda k: 1980.0)[1:], window_s=1 / 8)


def test_the_last_sample_belongs_to_the_last_window():
    """All at 1980 MHz but the last sample, at 1000: the last window's mean falls 12 %."""
    assert not CS.settled(grid(lambda k: 1000.0 if k == 24 else 1980.0), window_s=1 / 8)


def test_windows_exactly_1_percent_off_their_mean_have_settled():
    """Windows (newest first) at 99, 100 and 101 MHz: each within exactly 1 % of 100."""
    def clock(k):
        return 101.0 if k > 16 else (100.0 if k > 8 else 99.0)

    assert CS.settled(grid(clock), window_s=1 / 8)
    assert not CS.settled(grid(lambda k: 102.0 if k > 16 else (100.0 if k > 8 else 98.0)), window_s=1 / 8)


# ---- a ceiling scaled to a clock


def test_a_ceiling_scales_with_the_clock_and_without_one_is_none():
    assert CS.scale_to_clock(800.0, 1980.0, 990.0) == 400.0
    assert CS.scale_to_clock(800.0, 990.0, 1980.0) == 1600.0
    assert CS.scale_to_clock(800.0, None, 1980.0) is None
    assert CS.scale_to_clock(800.0, 1980.0, None) is None
    assert CS.scale_to_clock(800.0, 0.0, 1980.0) is None
