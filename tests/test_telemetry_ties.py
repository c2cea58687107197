"""Telemetry across ranks when nobody was last (issue 42 and issue 45, item 8): a tie
is said as a tie, never counted as "rank 0 last"; ranks whose calls carry no time say
so instead of "no call recorded"."""

from linkroof.readers import telemetry as T


def call(rank, start_us=None, time_s=None, seq=1, host="n0"):
    return T.TelemetryCall("NCCL Inspector", rank, host, "c0", seq, "all_reduce", "bf16", 1 << 20, 4, time_s,
                           start_us=start_us)


def test_ranks_that_start_together_name_no_last_rank():
    """Four ranks start at 100 us: skew 0, no rank named last; in a second call rank 2
    starts 30 us after the others: rank 2 is last, 30 us."""
    tie, late = T._skews([call(r, 100.0) for r in range(4)] +
                         [call(r, 200.0 + (30.0 if r == 2 else 0.0), seq=2) for r in range(4)])
    assert tie.last_rank is None and tie.skew_s == 0.0 and "a tie" in tie.how
    assert late.last_rank == 2 and round(late.skew_s * 1e6) == 30 and "tie" not in late.how


def test_two_ranks_tied_last_are_no_straggler_either():
    [s] = T._skews([call(0, 100.0), call(1, 130.0), call(2, 130.0)])
    assert s.last_rank is None and round(s.skew_s * 1e6) == 30


def test_tied_times_name_no_rank_when_the_skew_is_inferred():
    [s] = T._skews([call(r, None, 1e-3) for r in range(3)])
    assert s.last_rank is None and s.how.startswith("inferred")
    [s] = T._skews([call(0, None, 1e-3), call(1, None, 0.7e-3), call(2, None, 1e-3)])
    assert s.last_rank == 1


def test_per_rank_and_per_node_blame_no_one_after_ties():
    calls = [call(r, 100.0, host=f"n{r // 2}") for r in range(4)]
    tel = T.Telemetry("NCCL Inspector", "x.jsonl", calls)
    skews = T._skews(calls)
    per_rank = T._per_rank([tel], calls, skews)
    assert [r.times_last for r in per_rank] == [0, 0, 0, 0]
    nodes = T._per_node(per_rank)
    assert [n["worst_rank"] for n in nodes] == [None, None]


def test_calls_without_a_shared_time_say_so_not_no_call_recorded():
    calls = [call(0, None, None), call(0, None, None, seq=2), call(1, None, None)]
    per_rank = T._per_rank([T.Telemetry("NCCL Inspector", "x.jsonl", calls)], calls, T._skews(calls))
    assert per_rank[0].how.startswith("not measured: the calls recorded (rank 0: 2, rank 1: 1) carry no start or time")
    assert "no call recorded" not in per_rank[0].how


def test_ranks_a_day_apart_are_said():
    calls = [call(0, 1e6), call(1, 1e6 + 86400e6)]
    assert T._apart_warnings(calls) == ["rank 1's calls start 24.0 h after rank 0's: not one window of one job; skews "
                                        "between them mean nothing"]
    assert T._apart_warnings([call(0, 1e6), call(1, 1e6 + 5e6)]) == []
