"""The clock-state rules in their own units (issue 44: mutants of clockstate.py that
survived mutmut): which NVML samples belong to a call's window, and when a clock has
settled."""

import pytest

from linkroof.roofline import clockstate as CS


def s(t, mhz):
    return CS.ClockSample(t, mhz, 3201.0, 500.0, 0)


SAMPLES = [s(0.0, 1980.0), s(0.5, 1900.0), s(1.0, 1800.0), s(1.5, 1700.0), s(3.0, 1600.0)]


def test_the_samples_in_a_window_are_those_taken_in_it_in_time_order():
    got = CS.in_window(list(reversed(SAMPLES)), 0.5, 1.5)
    assert [x.t for x in got] == [0.5, 1.0, 1.5]  # both ends included, sorted by time


def test_a_window_with_no_sample_takes_the_nearest_to_its_middle():
    assert [x.t for x in CS.in_window(SAMPLES, 2.0, 2.4)] == [1.5]  # middle 2.2: 0.7 from 1.5, 0.8 from 3.0
    assert [x.t for x in CS.in_window(SAMPLES, 2.5, 2.9)] == [3.0]  # middle 2.7
    # middle 2.325: 3.0 is 0.675 from it, 1.5 is 0.825 (though 1.5 is nearer the window's start)
    assert [x.t for x in CS.in_window(SAMPLES, 1.7, 2.95)] == [3.0]
    assert CS.in_window([], 0.0, 1.0) == []


def steady(n, mhz=1980.0, dt=0.01, wobble=0.0):
    return [s(i * dt, mhz + (wobble if i % 2 else -wobble)) for i in range(n)]


def test_a_clock_within_one_percent_over_three_windows_has_settled():
    """Three windows of 0.1 s at 1980 MHz, +-10 MHz (0.5 %): settled. A clock whose
    windows' means are 1980, 1950 and 1920 MHz (3 % apart) has not."""
    assert CS.settled(steady(40, wobble=10.0))
    falling = [s(i * 0.01, 1980.0 - 300.0 * i * 0.01) for i in range(40)]
    assert not CS.settled(falling)


def test_settled_needs_three_windows_of_history_and_a_reading_in_each():
    assert not CS.settled([])
    assert not CS.settled(steady(25))  # 0.24 s of samples: less than three windows
    gap = steady(40)
    gap = [x for x in gap if not 0.19 < x.t <= 0.29]  # the middle window (0.19-0.29 s) holds no sample
    assert not CS.settled(gap)
    unread = [CS.ClockSample(x.t, None, None, None, None) for x in steady(40)]
    assert not CS.settled(unread)


def test_the_settled_margin_is_one_percent_of_the_mean():
    """Windows at 1980, 1980 and 2000 MHz (their mean 1986.7, 2000 is 0.67 % above):
    settled; at 1980, 1980 and 2030 (the last 1.7 % above): not."""
    def three(last):
        return [s(i * 0.01, 1980.0 if i < 30 else last) for i in range(1, 41)]

    assert CS.settled(three(2000.0))
    assert not CS.settled(three(2030.0))


def batches(times_ms, mhz):
    """Batches 1 s apart, each with its host window and one NVML sample in it."""
    times = [t * 1e-3 for t in times_ms]
    windows = [(float(i), i + 0.5) for i in range(len(times))]
    samples = [CS.ClockSample(i + 0.25, m, 3201.0, 600.0, 0) for i, m in enumerate(mhz)]
    return times, windows, samples


def test_burst_is_the_first_thirds_median_and_sustained_the_last_thirds():
    """Nine batches: 1.0, 1.2, 1.1 ms | 1.5 ... | 1.9, 2.0, 2.1 ms, the clock 1980 ->
    1600 MHz: burst 1.1 ms (the first three's median), sustained 2.0 ms, a drift of
    81.8 %, and the state drifting, first 1980 and last 1600 MHz (each third's mean)."""
    times, windows, samples = batches([1.0, 1.2, 1.1, 1.5, 1.5, 1.5, 1.9, 2.0, 2.1],
                                      [1980] * 3 + [1800] * 3 + [1600] * 3)
    st = CS.clock_state(times, windows, samples, max_sm_mhz=1980.0)
    assert (round(st.burst_s * 1e3, 3), round(st.sustained_s * 1e3, 3)) == (1.1, 2.0)
    assert round(st.drift, 4) == round(0.9 / 1.1, 4)
    assert st.state == "drifting" and (st.sm_mhz_first, st.sm_mhz_last) == (1980.0, 1600.0)
    assert st.sm_mhz_median == 1800.0 and st.samples == 9
    assert "the calls slowed +81.8% from the first batches to the last as the SM clock went from 1980 to 1600 MHz" \
        in st.note


def test_no_samples_is_unknown_with_none_taken_said():
    st = CS.clock_state([1e-3], [(0.0, 1.0)], [])
    assert (st.state, st.samples, st.note) == ("unknown", 0, "no NVML clock samples were taken")


def test_the_gpus_own_clock_counts_only_where_every_batch_read_one():
    """Three batches with the GPU's clock read for each (1980, 1980, 1500 MHz): measured,
    said; one unread (NaN) and NVML's samples are used instead."""
    times, windows, samples = batches([1.0, 1.0, 1.4], [1980, 1980, 1980])
    st = CS.clock_state(times, windows, samples, gpu_mhz=[1980.0, 1980.0, 1500.0])
    assert "measured on the GPU" in st.note and st.sm_mhz_last == 1500.0
    st = CS.clock_state(times, windows, samples, gpu_mhz=[1980.0, float("nan"), 1500.0])
    assert "measured on the GPU" not in st.note and st.sm_mhz_last == 1980.0


# ---- issue 43: a drift is the GPU's only with clock, power or thermal evidence


def _run(power, reasons, slower=1.10):
    """Nine batches of 1 ms then `slower`, NVML's SM clock at 1980 MHz throughout (it
    lags), power per sample from `power(i)`, reason bits from `reasons(i)`."""
    times = [1.0e-3] * 3 + [1.0e-3] * 3 + [1.0e-3 * slower] * 3
    wins = [(i * 0.1, i * 0.1 + 0.1) for i in range(9)]
    samples = [CS.ClockSample(i * 0.01, 1980, 3201, power(i), reasons(i)) for i in range(90)]
    return CS.clock_state(times, wins, samples, 1980, busy_share=0.99)


def test_a_drift_with_the_clock_steady_and_no_evidence_is_host_side_variance_with_its_spread():
    s = _run(lambda i: 500, lambda i: 0)
    assert s.state == "burst" and "host-side variance" in s.note and ": a GPU state" not in s.note
    assert "batches from 1 to 1.1 ms, 10.0% apart" in s.note


def test_rising_power_is_evidence_and_a_flat_or_small_rise_is_not():
    up = _run(lambda i: 500 if i <= 30 else (540 if i < 60 else 560), lambda i: 0)  # 500 -> 560 W: +12 %
    assert up.state == "drifting" and "the power rising from 500 to 560 W" in up.note
    small = _run(lambda i: 500 if i < 60 else 520, lambda i: 0)  # +4 %: under POWER_RISE
    assert small.state == "burst" and "host-side variance" in small.note


@pytest.mark.parametrize("bit, name", [(0x4, "sw_power_cap"), (0x20, "sw_thermal_slowdown"), (0x40, "hw_thermal_slowdown")])
def test_a_cap_or_a_thermal_slowdown_is_evidence(bit, name):
    s = _run(lambda i: 500, lambda i: bit if i > 70 else 0)
    assert s.state == "drifting" and f"NVML reporting {name}" in s.note


def test_application_clocks_are_no_evidence():
    s = _run(lambda i: 500, lambda i: 0x2)
    assert s.state == "burst" and "host-side variance" in s.note


# ---- issue 43: --steady settles on the clock and the power


def _load(power_of_t, clock_of_t=lambda t: 1500.0, secs=1.0):
    return [CS.ClockSample(i * 0.01, clock_of_t(i * 0.01), 3201, power_of_t(i * 0.01), 4) for i in range(int(secs * 100))]


def test_a_clock_flat_in_nvml_but_power_still_climbing_has_not_settled():
    """An 8192^3 GEMM: NVML's SM clock reads flat while the power climbs toward the cap
    (its clock falls after it): not settled until the power holds within 2 %."""
    climbing = _load(lambda t: 500 + 200 * t)  # +40 W over the last three 0.1 s windows: 5 % apart
    assert not CS.settled(climbing)
    held = _load(lambda t: 690 + (t * 7) % 5)  # 690-695 W
    assert CS.settled(held)
    assert CS.settled(_load(lambda t: None))  # no power reading: the clock alone decides


@pytest.mark.parametrize("d, done", [(0.019, True), (0.021, False)])
def test_power_settles_at_2_percent(d, done):
    """The last three 0.1 s windows' mean power at 600 (1 - d), 600 and 600 (1 + d) W, the
    clock flat: settled while each is within 2 % of their mean."""
    end, w = 0.99, 0.1

    def power(t):
        k = min(2, int((end - t) / w - 1e-9)) if t > end - 3 * w else 2
        return 600 * (1 + d * (k - 1))

    assert CS.settled(_load(power)) is done


def test_steady_waits_at_least_its_minimum_and_says_clock_and_power(monkeypatch):
    from linkroof.profiler import compare as C

    class Clocks:
        samples: list = []

        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

    clocks = Clocks()
    t = {"now": 0.0}

    def call():
        t["now"] += 0.01
        clocks.samples.append(CS.ClockSample(t["now"], 1500.0, 3201, 690.0, 4))

    monkeypatch.setattr(C.time, "perf_counter", lambda: t["now"])
    note = C.settle(call, lambda: None, clocks, most_s=5.0)
    took = float(note.split(" for ")[1].split(" s")[0])
    assert C.SETTLE_MIN_S <= took < C.SETTLE_MIN_S + 0.1 and "the SM clock and the power settled" in note
