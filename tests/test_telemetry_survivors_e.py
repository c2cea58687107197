"""Per-rank summaries and the Inspector's Prometheus textfile, held to their rules:

- nccl-tests -I 1 process rows: per iteration, the slowest row (by more than TIE_US) is
  the straggler, late by its distance to the fastest row; a tie at the top blames no one;
  each row's median time and count; rows beyond the process list keep their index.
- other telemetry: calls grouped per rank (calls without a rank left out), the median of
  the times recorded, how often each rank was last and by how much on average, and one
  sentence saying how that was found (measured / inferred / not measured / one rank).
- parse_inspector_prom: what each group of samples lacks, named with its collective and
  size; a time over a day refused; versions read or refused; the notes said; every error
  names the file it came from.
"""

import pytest

from linkroof.readers import telemetry as T

NT = "nccl-tests -I 1"


# ------------------------------------------------------------------ helpers


def nt_call(rows, seq=0):
    """One nccl-tests size with its per-process rows (us per iteration)."""
    return T.TelemetryCall(NT, None, "h0", "nccl-tests", seq, "all_reduce", "float", 1 << 20, 2, 1e-4,
                           stats={"per_process_us": rows})


def nt_summary(calls, processes=None):
    tel = T.Telemetry(NT, "nt.json", calls, processes=processes if processes is not None else [])
    return T._per_rank([tel], [], [])


def icall(rank, seq=1, start_us=None, time_s=None, host=None, source="NCCL Inspector"):
    return T.TelemetryCall(source, rank, host if host is not None else f"n{rank}", "c0", seq, "all_reduce", "bf16",
                           1 << 20, 4, time_s, start_us=start_us)


def summary(calls):
    return T._per_rank([T.Telemetry("NCCL Inspector", "x.log", calls)], calls, T._skews(calls))


def err(text, path="m.prom"):
    with pytest.raises(T.TelemetryError) as e:
        T.parse_inspector_prom(text, path)
    return str(e.value)


def v5_labels(collective="AllReduce", size="4-5GB", nranks=4, version="v5.1", p2p=False, node="nodeA", gpu="GPU0",
              comm="DP Group 0"):
    op = f'p2p_operation="{collective}"' if p2p else f'collective="{collective}"'
    tail = "" if p2p else ',algo_proto="Ring_ll"'
    return (f'version="{version}",node="{node}",gpu="{gpu}",comm_name="{comm}",n_nodes="1",nranks="{nranks}",{op},'
            f'message_size="{size}"{tail}')


def v5(busbw=100.0, t_us=50.0, p2p=False, **kw):
    names = ("nccl_p2p_bus_bandwidth_gbs", "nccl_p2p_exec_time_microseconds") if p2p else \
        ("nccl_bus_bandwidth_gbs", "nccl_collective_exec_time_microseconds")
    lab = v5_labels(p2p=p2p, **kw)
    return f"{names[0]}{{{lab}}} {busbw:.6g}\n{names[1]}{{{lab}}} {t_us:.6g}\n"


def v229_labels(rank=0, nranks=2, host="pool0", size="1.00MB", collective="AllReduce", sn=7):
    return (f'comm_id="0xabc",hostname="{host}",rank="{rank}",nranks="{nranks}",n_nodes="1",gpu_device_id="GPU{rank}",'
            f'collective="{collective}",coll_sn="{sn}",message_size="{size}"')


def v229(rank=0, algbw=10.0, busbw=10.0, t_us=104.8576, which=("algbw", "busbw", "time"), **kw):
    """NCCL 2.29's three gauges of one communicator's latest collective (1 MiB in 104.8576 us
    is 10 GB/s algbw)."""
    lab = v229_labels(rank=rank, **kw)
    out = ""
    if "algbw" in which:
        out += f"nccl_algorithm_bandwidth_gbs{{{lab}}} {algbw:.6g}\n"
    if "busbw" in which:
        out += f"nccl_bus_bandwidth_gbs{{{lab}}} {busbw:.6g}\n"
    if "time" in which:
        out += f"nccl_collective_exec_time_microseconds{{{lab}}} {t_us:.6g}\n"
    return out


# ------------------------------------------------------------------ nccl-tests process rows


def test_the_slowest_process_row_is_late_by_its_distance_to_the_fastest():
    """Process 0 is slowest in both iterations (10 vs 5 us, then 20 vs 8 us): it was last
    twice, late 5 us and 12 us, 8.5 us on average; process 1 never, lateness 0.0; each
    row's count is its iterations and its median time in seconds."""
    p0, p1 = nt_summary([nt_call([[10.0, 20.0], [5.0, 8.0]])])
    assert (p0.rank, p0.calls, p0.times_last) == (0, 2, 2)
    assert p0.mean_lateness_s == pytest.approx(8.5e-6, rel=1e-9)
    assert p0.median_s == pytest.approx(15e-6, rel=1e-9)
    assert (p1.rank, p1.calls, p1.times_last, p1.mean_lateness_s) == (1, 2, 0, 0.0)
    assert p1.median_s == pytest.approx(6.5e-6, rel=1e-9)
    assert p0.how.startswith("measured: per iteration, the process row with the longest time")


def test_a_tie_at_the_top_blames_no_process_and_later_iterations_still_count():
    """Iteration 0: both rows 10 us (a tie: no one last); iteration 1: row 1 is 40 us
    slower than row 0. Only row 1 is last, once, by 40 us."""
    p0, p1 = nt_summary([nt_call([[10.0, 10.0], [10.0, 50.0]])])
    assert (p0.times_last, p0.mean_lateness_s) == (0, 0.0)
    assert p1.times_last == 1 and p1.mean_lateness_s == pytest.approx(40e-6, rel=1e-9)


def test_rows_exactly_tie_us_apart_are_a_tie():
    """TIE_US (1 us) apart counts as together: 11 us against 10 us names no one."""
    rows = nt_summary([nt_call([[10.0 + T.TIE_US], [10.0]])])
    assert [r.times_last for r in rows] == [0, 0]
    rows = nt_summary([nt_call([[10.0 + 2 * T.TIE_US], [10.0]])])
    assert [r.times_last for r in rows] == [1, 0]


def test_three_rows_with_two_tied_at_the_top_blame_no_one():
    """Rows 30, 30 and 10 us: two tie at the top, so no row was the slowest."""
    rows = nt_summary([nt_call([[30.0], [30.0], [10.0]])])
    assert [r.times_last for r in rows] == [0, 0, 0]


def test_a_size_with_one_process_row_is_skipped_not_the_end_of_the_file():
    """A size recorded with a single row has no straggler; the sizes after it are still read."""
    p0, p1 = nt_summary([nt_call([[7.0, 7.0]], seq=0), nt_call([[3.0], [9.0]], seq=1)])
    assert (p0.calls, p1.calls) == (1, 1) and p1.times_last == 1
    assert p1.mean_lateness_s == pytest.approx(6e-6, rel=1e-9)


def test_rows_take_the_rank_and_host_of_their_process():
    """The process list gives each row its rank and host, in row order."""
    p0, p1 = nt_summary([nt_call([[5.0], [4.0]])], processes=[{"row": 0, "host": "alpha", "rank": 5},
                                                              {"row": 1, "host": "beta", "rank": 7}])
    assert (p0.rank, p0.host, p1.rank, p1.host) == (5, "alpha", 7, "beta")


@pytest.mark.parametrize("processes", [[], [{"row": 0, "host": "alpha", "rank": 3}]])
def test_rows_beyond_the_process_list_keep_their_index_and_no_host(processes):
    """More rows than processes named (none, or one): a row with no process entry is
    reported under its row index with an empty host, never refused."""
    rows = nt_summary([nt_call([[5.0], [4.0]])], processes=processes)
    assert [r.rank for r in rows][1:] == [1] and rows[1].host == ""
    if not processes:
        assert rows[0].rank == 0 and rows[0].host == ""
    else:
        assert rows[0].rank == 3 and rows[0].host == "alpha"


def test_empty_process_rows_give_no_median_rather_than_fail():
    """Two process rows of zero iterations: counted as rows with 0 calls and no median."""
    rows = nt_summary([nt_call([[], []])])
    assert [(r.calls, r.median_s, r.times_last, r.mean_lateness_s) for r in rows] == [(0, None, 0, 0.0)] * 2


# ------------------------------------------------------------------ other telemetry, per rank


def test_ranks_last_twice_average_their_lateness_and_say_it_was_measured():
    """Three ranks, two calls with kernel starts: rank 1 starts 30 us late, then 50 us
    late. Rank 1: last twice, 40 us on average; ranks 0 and 2: never, 0.0. The method is
    said as the skews' own word, "measured"; each rank's median time is its calls'."""
    calls = []
    for seq, late in ((1, 30.0), (2, 50.0)):
        for r in range(3):
            calls.append(icall(r, seq, start_us=1000.0 * seq + (late if r == 1 else 0.0),
                               time_s=(1e-3 if seq == 1 else 3e-3) + r * 1e-3))
    s = {r.rank: r for r in summary(calls)}
    assert s[1].times_last == 2 and s[1].mean_lateness_s == pytest.approx(40e-6, rel=1e-6)
    assert (s[0].times_last, s[0].mean_lateness_s, s[2].mean_lateness_s) == (0, 0.0, 0.0)
    assert [s[r].calls for r in range(3)] == [2, 2, 2]
    assert s[0].median_s == pytest.approx(2e-3) and s[2].median_s == pytest.approx(4e-3)
    assert {r.how for r in s.values()} == {"measured"}
    assert s[0].host == "n0"


def test_measured_and_inferred_skews_are_both_named():
    """Two communicators' calls, one with starts, one with only times: the method says both."""
    calls = [icall(0, 1, start_us=10.0), icall(1, 1, start_us=60.0),
             icall(0, 2, time_s=2e-3), icall(1, 2, time_s=1e-3)]
    assert {r.how for r in summary(calls)} == {"inferred and measured"}


def test_calls_without_a_time_give_no_median_but_are_counted():
    """Calls recorded with no time (0 or None) are counted; the median is of the timed ones."""
    calls = [icall(0, 1, time_s=None), icall(0, 2, time_s=0.0), icall(0, 3, time_s=4e-3)]
    (r,) = summary(calls)
    assert r.calls == 3 and r.median_s == pytest.approx(4e-3)
    (r,) = summary([icall(0, 1, time_s=None)])
    assert r.calls == 1 and r.median_s is None


def test_one_rank_only_says_there_is_no_other_rank():
    (r,) = summary([icall(0, 1, time_s=1e-3), icall(0, 2, time_s=1e-3)])
    assert r.how == "one rank's calls only: no other rank to compare with"
    assert (r.times_last, r.mean_lateness_s) == (0, 0.0)


def test_four_ranks_without_a_shared_time_are_all_listed_without_ellipsis():
    calls = [icall(r, seq=r + 1) for r in range(4)]  # each rank a different sequence number: nothing shared
    hows = {r.how for r in summary(calls)}
    assert hows == {"not measured: the calls recorded (rank 0: 1, rank 1: 1, rank 2: 1, rank 3: 1) carry no start or "
                    "time that two ranks share"}


def test_five_ranks_without_a_shared_time_list_four_and_an_ellipsis():
    calls = [icall(r, seq=r + 1) for r in range(5)]
    (how,) = {r.how for r in summary(calls)}
    assert "(rank 0: 1, rank 1: 1, rank 2: 1, rank 3: 1 ...)" in how and "rank 4" not in how


def test_calls_without_a_rank_have_no_per_rank_row():
    """A v5 Prometheus bucket names no rank: no per-rank row comes of it."""
    t = T.parse_inspector_prom(v5(), "m.prom")
    assert t.calls[0].rank is None
    assert T._per_rank([t], t.calls, T._skews(t.calls)) == []


# ------------------------------------------------------------------ Prometheus: what a group lacks


def test_a_collective_group_missing_its_time_is_named_by_collective_and_size():
    msg = err(v5().split("\n")[0] + "\n")
    assert msg.startswith("m.prom: ") and "the samples of AllReduce (4-5GB) lack time_us" in msg


def test_a_p2p_group_missing_its_time_is_named_by_its_operation():
    msg = err(v5(p2p=True, collective="Send", size="512-513MB").split("\n")[0] + "\n")
    assert "the samples of Send (512-513MB) lack time_us" in msg


def test_a_group_without_collective_or_size_labels_shows_question_marks():
    msg = err('nccl_bus_bandwidth_gbs{version="v5.1",message_size="1-2MB"} 3\n')
    assert "the samples of ? (1-2MB) lack time_us" in msg
    msg = err('nccl_bus_bandwidth_gbs{version="v5.1",collective="AllReduce"} 3\n')
    assert "the samples of AllReduce (?) lack time_us" in msg


def test_an_unversioned_collective_without_algbw_is_refused_saying_so():
    """NCCL 2.29's form needs algbw (the size is algbw x time): without it, refused, algbw
    named first."""
    msg = err(v229(which=("busbw", "time")))
    assert msg.startswith("m.prom: ") and "the samples of AllReduce (1.00MB) lack algbw" in msg
    msg = err(v229(which=("busbw",)))
    assert "lack algbw, time_us" in msg


def test_an_unversioned_p2p_group_is_refused_in_one_line():
    """NCCL 2.29's unversioned form records collectives only: p2p samples without a version
    label are refused in one line naming the file and the operation (they crashed with a
    raw KeyError on the missing algbw)."""
    lab = 'comm_id="c",hostname="h",rank="0",nranks="2",p2p_operation="Send",message_size="1.00MB"'
    with pytest.raises(T.TelemetryError) as e:
        T.parse_inspector_prom(f"nccl_p2p_bus_bandwidth_gbs{{{lab}}} 1\nnccl_p2p_exec_time_microseconds{{{lab}}} "
                               "100\n", "m.prom")
    msg = str(e.value)
    assert msg.startswith("m.prom: ") and "Send (1.00MB)" in msg and "no version label" in msg
    assert "\n" not in msg


def test_a_time_of_exactly_a_day_is_kept_and_over_a_day_refused():
    (c,) = T.parse_inspector_prom(v5(t_us=T.MAX_TIME_US), "m.prom").calls
    assert c.time_s == pytest.approx(86400.0)
    msg = err(v5(t_us=8.64001e10))
    assert msg.startswith("m.prom: ") and "AllReduce (4-5GB): 86400100000.0 us is over a day" in msg


# ------------------------------------------------------------------ Prometheus: versions and notes


def test_two_unversioned_communicators_are_both_read_with_the_latest_only_note():
    t = T.parse_inspector_prom(v229(rank=0) + v229(rank=1), "m.prom")
    assert t.source == "NCCL Inspector (Prometheus)" and t.path == "m.prom"
    assert sorted(c.rank for c in t.calls) == [0, 1]
    assert t.calls[0].size_bytes == pytest.approx(1 << 20, rel=1e-5)
    assert t.notes[0] == "NCCL Inspector Prometheus format NCCL 2.29's form, without a version label"
    assert any("latest collective only" in n for n in t.notes)
    assert not any("v5:" in n for n in t.notes)


def test_a_v5_file_says_its_buckets_carry_no_rank():
    t = T.parse_inspector_prom(v5(), "m.prom")
    assert t.source == "NCCL Inspector (Prometheus)"
    assert t.notes[0] == "NCCL Inspector Prometheus format v5.1"
    assert any(n.startswith("v5:") and "no rank or sequence number" in n for n in t.notes)
    assert not any("latest collective only" in n for n in t.notes)


def test_an_unknown_version_is_refused_naming_it_and_the_versions_read():
    version = "v6.0-abcdefghijklmnopqrstuvwxyz"
    msg = err(v5(version=version))
    assert msg.startswith("m.prom: ")
    assert "format 'v6.0-abcdefghijklmno':" in msg  # its first 20 characters
    assert "v5.0, v5.1" in msg


def test_repeated_samples_are_counted_and_the_first_kept():
    one = v5(busbw=100.0, t_us=50.0)
    t = T.parse_inspector_prom(one + v5(busbw=999.0, t_us=999.0), "m.prom")
    (c,) = t.calls
    assert c.recorded_busbw == pytest.approx(100e9) and c.time_s == pytest.approx(50e-6)
    assert any(n.startswith("2 samples repeated") and "first kept" in n for n in t.notes)


@pytest.mark.parametrize("text", [v229(host="h\ud800x"), v5(comm="DP\udc80")])
def test_a_lone_surrogate_in_a_label_is_shown_as_ufffd_and_said(text):
    t = T.parse_inspector_prom(text, "m.prom")
    (c,) = t.calls
    assert "\ufffd" in c.host + c.comm
    assert any(n.startswith("1 names with a lone surrogate") and "U+FFFD" in n for n in t.notes)


# ------------------------------------------------------------------ Prometheus: errors name the file


def test_an_empty_textfile_is_refused_under_the_default_name():
    with pytest.raises(T.TelemetryError) as e:
        T.parse_inspector_prom("")
    assert str(e.value) == "<prom>: no nccl_bus_bandwidth_gbs / nccl_collective_exec_time_microseconds samples"
    assert T.parse_inspector_prom(v5()).path == "<prom>"


@pytest.mark.parametrize("text, said", [
    ("", "no nccl_bus_bandwidth_gbs"),
    (v5(busbw=float("nan")), "is not a bandwidth or a time"),  # found while grouping the samples
    (v5(nranks=0), "not a rank count"),  # a v5 bucket's own check
    (v229(rank=5, nranks=2), "rank below nranks"),  # a 2.29 sample's own check
    (v229(which=("busbw", "time")), "lack algbw"),
    (v5(t_us=1e11), "over a day"),
    (v5(version="v9.9"), "format 'v9.9'"),
])
def test_every_refusal_names_the_file(text, said):
    msg = err(text, "/data/run1/nccl.prom")
    assert msg.startswith("/data/run1/nccl.prom: ") and said in msg
