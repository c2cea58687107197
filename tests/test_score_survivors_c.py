"""Guards linkroof.scoring.score's pkb_metrics and substitute against the mutants mutmut left
open (benchmarks/data/2026-12-05d-mutation/score-open-c-diffs.txt): every field of PKB's perf
dict by its exact key, the std's n - 1 rule at its boundaries (no samples, one, two), the
no-sample case (NaN mean, min and max, std 0), and a top-level tensor substituted in place."""

import math

import numpy as np
import pytest

from linkroof.scoring import score as S

L2 = 50 * 1024 * 1024
KEYS = {"wall_time_ms", "wall_time_total_ms", "wall_time_std_ms", "min_time_ms", "max_time_ms", "iterations",
        "warmup_iterations", "num_input_groups", "l2_cache_size_bytes", "timed_tensor_bytes"}


def test_every_field_by_its_key_with_an_odd_count_of_samples():
    # samples 1, 2, 4 ms; total 9 ms over 3 calls -> mean 3.0; deviations -2, -1, 1 -> 6 / 2 = 3 -> std sqrt(3)
    m = S.pkb_metrics([1.0, 2.0, 4.0], 9.0, 0, 3, L2, 1024)
    assert m == {"wall_time_ms": 3.0, "wall_time_total_ms": 9.0, "wall_time_std_ms": pytest.approx(math.sqrt(3.0)),
                 "min_time_ms": 1.0, "max_time_ms": 4.0, "iterations": 3, "warmup_iterations": 0,
                 "num_input_groups": 3.0, "l2_cache_size_bytes": float(L2), "timed_tensor_bytes": 1024.0}
    assert set(m) == KEYS
    for k in ("num_input_groups", "l2_cache_size_bytes", "timed_tensor_bytes"):
        assert type(m[k]) is float


def test_one_sample_has_no_spread():
    # n = 1: std is 0.0 (no n - 1 division), min = max = the sample, mean = total / 1
    m = S.pkb_metrics([2.5], 2.5, 10, 1, 0, 8)
    assert m == {"wall_time_ms": 2.5, "wall_time_total_ms": 2.5, "wall_time_std_ms": 0.0, "min_time_ms": 2.5,
                 "max_time_ms": 2.5, "iterations": 1, "warmup_iterations": 10, "num_input_groups": 1.0,
                 "l2_cache_size_bytes": 0.0, "timed_tensor_bytes": 8.0}


def test_two_samples_already_have_a_spread():
    # n = 2: samples 1, 3, total 4 -> mean 2; (1 + 1) / 1 = 2 -> std sqrt(2)
    m = S.pkb_metrics([1.0, 3.0], 4.0, 5, 2, L2, 4096)
    assert m["wall_time_std_ms"] == pytest.approx(math.sqrt(2.0))
    assert m["wall_time_std_ms"] > 0
    assert (m["wall_time_ms"], m["min_time_ms"], m["max_time_ms"], m["iterations"]) == (2.0, 1.0, 3.0, 2)


def test_equal_samples_have_zero_spread():
    m = S.pkb_metrics([1.5, 1.5, 1.5, 1.5], 6.0, 1, 2, L2, 16)
    assert (m["wall_time_ms"], m["wall_time_std_ms"], m["min_time_ms"], m["max_time_ms"]) == (1.5, 0.0, 1.5, 1.5)


def test_no_samples_give_nan_times_and_no_spread():
    # n = 0: no division by zero, no min/max of an empty list: mean, min and max are NaN, std 0.0
    m = S.pkb_metrics([], 0.0, 3, 1, L2, 0)
    assert set(m) == KEYS
    assert math.isnan(m["wall_time_ms"]) and math.isnan(m["min_time_ms"]) and math.isnan(m["max_time_ms"])
    assert m["wall_time_std_ms"] == 0.0 and math.copysign(1.0, m["wall_time_std_ms"]) == 1.0
    assert (m["wall_time_total_ms"], m["iterations"], m["warmup_iterations"], m["num_input_groups"],
            m["l2_cache_size_bytes"], m["timed_tensor_bytes"]) == (0.0, 0, 3, 1.0, float(L2), 0.0)


def test_a_top_level_tensor_is_replaced_and_the_rest_kept():
    a, b = np.zeros(2), np.ones(2)
    got = S.substitute((3, a, "x"), (1, None), b)
    assert isinstance(got, list) and len(got) == 3
    assert got[0] == 3 and got[1] is b and got[2] == "x"
    got = S.substitute([a], (0, None), b)
    assert got[0] is b


def test_a_tensor_inside_a_list_keeps_the_list_type():
    a, b = np.zeros(2), np.ones(2)
    got = S.substitute((3, [7, a]), (1, 1), b)
    assert type(got[1]) is list and got[1][0] == 7 and got[1][1] is b and got[0] == 3
