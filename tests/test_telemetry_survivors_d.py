"""NCCL Inspector's Prometheus textfile, v5 buckets (inspector_prom.cc of NCCL 2.30),
read label by label: what each label becomes, which values are refused (with the file
and the value named), when the derived algbw and the "under the bucket" note are given,
and how prometheus_client's exposition is walked (long lines, repeated samples, other
metrics in a family, the timestamp label).

A bucket is one pair of gauges, busbw (GB/s, the geometric mean of its calls') and the
mean time (us), labelled by GPU, communicator, collective, 1024-based message-size range
and algorithm; no rank, no sequence number, no algbw (linkroof derives it as busbw over
the collective's busbw factor, and says so)."""

import re

import pytest

from linkroof.readers import telemetry as T

MiB = 1 << 20
GiB = 1 << 30
TiB = 1 << 40

_DEFAULT = object()


def labels(p2p=False, collective="AllReduce", size="4-5GB", nranks="4", node="nvl72004-T01", gpu="GPU0",
           comm="DP Group 0", n_nodes="1", algo_proto="Ring_ll", version="v5.1", **extra):
    """inspectorPromGetLabelsColl / _P2p's labels, in their order; a label given as None
    is left out of the line."""
    pairs = [("version", version), ("slurm_job_id", "unknown"), ("node", node), ("gpu", gpu), ("comm_name", comm),
             ("n_nodes", n_nodes), ("nranks", nranks), ("p2p_operation" if p2p else "collective", collective),
             ("message_size", size)]
    if not p2p:
        pairs.append(("algo_proto", algo_proto))
    pairs += list(extra.items())
    return ",".join(f'{k}="{v}"' for k, v in pairs if v is not None)


def bucket(busbw, t_us, p2p=False, **kw):
    """One bucket's two samples; the values are written as given (a str verbatim)."""
    names = ("nccl_p2p_bus_bandwidth_gbs", "nccl_p2p_exec_time_microseconds") if p2p else \
        ("nccl_bus_bandwidth_gbs", "nccl_collective_exec_time_microseconds")
    lab = labels(p2p=p2p, **kw)
    return f"{names[0]}{{{lab}}} {busbw}\n{names[1]}{{{lab}}} {t_us}\n"


def read(tmp_path, text, name="m.prom"):
    f = tmp_path / name
    f.write_text(text)
    return T.read_telemetry(f)


def refusal(tmp_path, text, name="m.prom"):
    """The TelemetryError's message; it must start with the file's path (and line)."""
    f = tmp_path / name
    f.write_text(text)
    with pytest.raises(T.TelemetryError) as e:
        T.read_telemetry(f)
    msg = str(e.value)
    assert msg.startswith((f"{f}:", f"{f} line ")), msg
    return msg


def one(tmp_path, text):
    (c,) = read(tmp_path, text).calls
    return c


def has(notes, phrase):
    return any(phrase in n for n in notes)


def repeats_said(notes):
    """The count the "samples repeated" note gives (None if there is no such note)."""
    counts = [int(m[1]) for n in notes for m in [re.match(r"(-?\d+) samples repeated", n)] if m]
    return counts[0] if counts else None


# ------------------------------------------------------------------ what each label becomes


def test_every_label_of_a_bucket_lands_in_its_field(tmp_path):
    """node is the host, gpu the device, comm_name the communicator, n_nodes the node
    count; the figures are the file's own (busbw 3 GB/s is 3e9 B/s exactly), the time
    in seconds, the source and how it was timed are said."""
    t = read(tmp_path, bucket(3, 1000, node="nvl72004-T07", gpu="GPU3", comm="TP Group 7", n_nodes="2",
                              algo_proto="Tree_simple"))
    (c,) = t.calls
    assert c.source == "NCCL Inspector (Prometheus)"
    assert (c.host, c.device, c.comm, c.nodes) == ("nvl72004-T07", "GPU3", "TP Group 7", 2)
    assert (c.rank, c.seq, c.size_bytes, c.group_size) == (None, None, None, 4)
    assert c.collective == "all_reduce" and c.size_range == (4 * GiB, 5 * GiB)
    assert c.timing == "mean of the bucket's calls"
    assert c.recorded_busbw == 3e9
    assert c.time_s == pytest.approx(1e-3, rel=1e-12)
    assert has(c.notes, "algorithm and protocol Tree_simple")
    # a clean file: nothing repeated, nothing unknown, nothing at zero
    assert repeats_said(t.notes) is None
    assert not has(c.notes, "unknown to linkroof") and not has(c.notes, "busbw 0")


def test_derived_algbw_is_busbw_over_the_busbw_factor_exactly(tmp_path):
    """All-reduce on 4 ranks: busbw factor 2 x 3 / 4 = 1.5; busbw 3 GB/s is algbw
    2 GB/s, i.e. 2e9 B/s, and the note gives the factor."""
    c = one(tmp_path, bucket(3, 1000))
    assert c.recorded_algbw == pytest.approx(2e9, rel=1e-12)
    assert has(c.notes, "derived: busbw / 1.5")


def test_an_all_reduce_bucket_is_of_the_whole_message(tmp_path):
    """The size note gives the label and the bytes; only an all-gather's or
    reduce-scatter's bucket is of each rank's message."""
    c = one(tmp_path, bucket(3, 1000))
    (size_note,) = [n for n in c.notes if "size recorded only as the bucket" in n]
    assert "bucket 4-5GB: [4294967296, 5368709120) B in nccl-tests' convention" in size_note
    assert "each rank's message" not in size_note


def test_an_all_gather_bucket_is_of_each_ranks_message_and_says_so(tmp_path):
    c = one(tmp_path, bucket(7, 1000, collective="AllGather", size="1-2MB", nranks="8"))
    assert c.size_range == (8 * MiB, 16 * MiB)
    assert has(c.notes, "bucket 1-2MB of each rank's message: [8388608, 16777216) B")


def test_labels_left_out_read_as_empty_names(tmp_path):
    """A bucket written without node, gpu, comm_name or n_nodes: those fields are empty
    (None for the node count), never a made-up name."""
    c = one(tmp_path, bucket(3, 1000, node=None, gpu=None, comm=None, n_nodes=None, algo_proto=None))
    assert (c.host, c.device, c.comm, c.nodes) == ("", "", "", None)
    assert not has(c.notes, "algorithm and protocol")


def test_a_bucket_without_a_collective_label_is_an_unnamed_unknown_collective(tmp_path):
    """No collective label: the call is read, its collective unknown, and the note
    quotes the (empty) name it had, not 'None' or any other placeholder."""
    c = one(tmp_path, bucket(3, 1000, collective=None))
    assert c.collective is None
    assert has(c.notes, "collective '' unknown to linkroof")


def test_an_unknown_collective_gets_no_derived_algbw(tmp_path):
    """A collective linkroof has no busbw factor for: its name is said, its busbw kept,
    and no algbw is invented (nor is a busbw of 5 GB/s called zero)."""
    c = one(tmp_path, bucket(5, 1000, collective="AllToAll"))
    assert c.collective is None and c.recorded_busbw == 5e9
    assert c.recorded_algbw is None and not has(c.notes, "derived")
    assert has(c.notes, "collective 'AllToAll' unknown to linkroof")
    assert not has(c.notes, "busbw 0")


def test_a_known_collective_is_not_called_unknown(tmp_path):
    c = one(tmp_path, bucket(3, 1000, collective="ReduceScatter", size="1-2MB", nranks="2"))
    assert c.collective == "reduce_scatter" and not has(c.notes, "unknown")


def test_busbw_zero_is_kept_and_said_with_no_algbw(tmp_path):
    """busbw 0 (every call timed 0 us): accepted, no algbw derived from it, and said."""
    c = one(tmp_path, bucket(0, 1000))
    assert c.recorded_busbw == 0.0 and c.recorded_algbw is None
    assert has(c.notes, "busbw 0: no call in the bucket had a bandwidth")
    assert not has(c.notes, "derived")


def test_busbw_under_one_gb_per_s_still_derives_algbw(tmp_path):
    """A slow bucket (0.6 GB/s) is a bandwidth like any other: algbw 0.6 / 1.5 = 0.4 GB/s."""
    c = one(tmp_path, bucket(0.6, 1000))
    assert c.recorded_busbw == pytest.approx(0.6e9) and c.recorded_algbw == pytest.approx(0.4e9)
    assert not has(c.notes, "busbw 0")


@pytest.mark.parametrize("t_us, time_s", [("0", None), ("0.5", 0.5e-6), ("1", 1e-6)])
def test_a_mean_time_of_zero_is_no_time_but_any_positive_one_is_kept(tmp_path, t_us, time_s):
    """time 0 us is "not timed" (None); 0.5 us (a mean of 0 and 1 us calls) is 0.5 us."""
    c = one(tmp_path, bucket(3, t_us))
    assert c.time_s == (None if time_s is None else pytest.approx(time_s))


# ------------------------------------------------------------------ algbw x time against the bucket

# A broadcast (busbw factor 1) of the 4-5GB bucket for 1 s: algbw x time is busbw x 1 s.
# The note says a product under the bucket's low end, allowing 10 ppm and 1 B for %.6g:
# the line is 4 GiB x (1 - 1e-5) - 1 B = 4294924345.32704 B.
LINE = 4 * GiB * (1 - 1e-5) - 1


@pytest.mark.parametrize("busbw, said", [
    ("4.294967296", False),        # exactly the bucket's low end, 4 GiB moved: inside it
    ("4.29492434632704", False),   # 1 B over the line
    ("4.294924345327041", False),  # exactly on the line (this double times 1e9 x 1e6 x 1e-6 is LINE)
    ("4.29492434482704", True),    # half a byte under the line
    ("4.29492433", True),          # 15 B under
])
def test_under_the_bucket_note_is_given_strictly_under_its_tolerance_line(tmp_path, busbw, said):
    c = one(tmp_path, bucket(busbw, "1000000", collective="Broadcast"))
    assert c.recorded_algbw == pytest.approx(float(busbw) * 1e9)  # the factor of a broadcast is 1
    assert has(c.notes, "under the bucket: some calls were timed 0 us") is said


def test_the_tolerance_line_is_where_the_parametrised_cases_put_it():
    """The cases above sit where they claim (a check of the fixture, not of linkroof)."""
    assert LINE == pytest.approx(4294924345.32704, abs=1e-4)
    assert 4.294924345327041 * 1e9 * 1e6 * 1e-6 == LINE


# ------------------------------------------------------------------ refused, with the file and the value named


@pytest.mark.parametrize("nranks", ["1", str(1 << 20)])
def test_rank_counts_from_one_to_2_to_the_20_are_taken(tmp_path, nranks):
    c = one(tmp_path, bucket(3, 1000, collective="Broadcast", nranks=nranks))
    assert c.group_size == int(nranks)


@pytest.mark.parametrize("nranks", ["0", str((1 << 20) + 1), "many"])
def test_a_rank_count_outside_1_to_2_to_the_20_is_refused_and_quoted(tmp_path, nranks):
    msg = refusal(tmp_path, bucket(3, 1000, nranks=nranks))
    assert f"AllReduce: nranks '{nranks}' is not a rank count" in msg


def test_a_p2p_bucket_refused_names_its_operation(tmp_path):
    msg = refusal(tmp_path, bucket(3, 1000, p2p=True, collective="Recv", size="1-2MB", nranks="0"))
    assert "Recv: nranks '0'" in msg


def test_a_p2p_bucket_with_a_bad_size_names_its_operation_and_the_label(tmp_path):
    msg = refusal(tmp_path, bucket(3, 1000, p2p=True, collective="Send", size="3-5MB"))
    assert "Send: message_size '3-5MB' is not one of the Inspector's buckets" in msg


def test_a_size_label_that_is_no_bucket_is_quoted_in_the_refusal(tmp_path):
    msg = refusal(tmp_path, bucket(3, 1000, size="4-6GB"))
    assert "message_size '4-6GB' is not one of the Inspector's buckets" in msg


def test_a_bucket_without_a_size_label_is_refused_not_a_traceback(tmp_path):
    msg = refusal(tmp_path, bucket(3, 1000, size=None))
    assert "message_size '' is not one of the Inspector's buckets" in msg


def test_a_long_bad_size_label_is_quoted_to_30_characters(tmp_path):
    label = "9" * 40 + "GB"
    msg = refusal(tmp_path, bucket(3, 1000, size=label))
    assert f"message_size '{'9' * 30}' is not" in msg


def test_a_bucket_at_exactly_1_pib_is_a_message_but_over_it_is_refused(tmp_path):
    """The 1024-1025TB bucket starts at 2^50 B, the limit itself: taken. An all-gather's
    1-2TB of each of 2^20 ranks starts at 2^60 B: refused, with the file named."""
    c = one(tmp_path, bucket(3, 1000, size="1024-1025TB"))
    assert c.size_range == (1 << 50, 1025 * TiB)
    msg = refusal(tmp_path, bucket(3, 1000, collective="AllGather", size="1-2TB", nranks=str(1 << 20)))
    assert f"a message of {1 << 60} B or more (over 1 PiB)" in msg


# ------------------------------------------------------------------ point-to-point buckets


def test_a_p2p_bucket_is_a_two_rank_sendrecv_whatever_its_operation_is_called(tmp_path):
    """The p2p gauges are point-to-point by their metric name: a Send, a Recv or an
    operation name linkroof does not know are all sendrecv, algbw their busbw."""
    text = (bucket(4, 1000, p2p=True, collective="Send", size="1-2MB", nranks="8")
            + bucket(4, 1000, p2p=True, collective="Put", size="2-3MB", nranks="8"))
    calls = read(tmp_path, text).calls
    assert [(c.collective, c.group_size) for c in calls] == [("sendrecv", 2), ("sendrecv", 2)]
    for c in calls:
        assert c.recorded_algbw == 4e9 and not has(c.notes, "unknown")


# ------------------------------------------------------------------ lone surrogates


@pytest.mark.parametrize("label, field", [("node", "host"), ("comm", "comm"), ("gpu", "device"),
                                          ("algo_proto", None)])
def test_a_lone_surrogate_in_a_name_is_shown_as_ufffd_and_said(label, field):
    """A label value holding half a UTF-16 character (text handed in as str): shown with
    U+FFFD and counted in the file's notes."""
    t = T.parse_inspector_prom(bucket(3, 1000, **{label: "X\udcffY"}), "m.prom")
    (c,) = t.calls
    if field:
        assert getattr(c, field) == "X\ufffdY"
    else:
        assert has(c.notes, "algorithm and protocol X\ufffdY")
    assert has(t.notes, "1 names with a lone surrogate")


# ------------------------------------------------------------------ the exposition, line by line


def test_a_line_over_64_kib_is_refused_with_its_number_and_length(tmp_path):
    """Line 3 of 65537 characters (a comment of words): refused, naming the line and
    its length, whatever whitespace it holds."""
    long_line = ("# " + "ab " * 30_000)[:T.MAX_PROM_LINE + 1]
    assert len(long_line) == 65537 and " " in long_line
    msg = refusal(tmp_path, bucket(3, 1000) + long_line + "\n")
    assert "line 3: a line of 65537 characters" in msg


def test_a_line_of_exactly_64_kib_is_taken(tmp_path):
    comment = "#" + "x" * (T.MAX_PROM_LINE - 1)
    assert len(comment) == T.MAX_PROM_LINE
    assert len(read(tmp_path, comment + "\n" + bucket(3, 1000)).calls) == 1


def test_many_short_lines_are_no_long_line(tmp_path):
    """A textfile of 2000 buckets (over 64 KiB in all, each line short) is read whole."""
    text = "".join(bucket(3, 1000, comm=f"group {i}") for i in range(2000))
    assert len(text) > T.MAX_PROM_LINE
    assert len(read(tmp_path, text).calls) == 2000


def test_repeated_samples_are_counted_the_first_kept_and_the_family_read_on(tmp_path):
    """In one gauge family, bucket A's busbw three times then bucket B's: A keeps its
    first value (3 GB/s), two repeats are said, and B (after the repeats) is read."""
    a, b = labels(), labels(size="1-2MB")
    text = ("# TYPE nccl_bus_bandwidth_gbs gauge\n"
            f"nccl_bus_bandwidth_gbs{{{a}}} 3\nnccl_bus_bandwidth_gbs{{{a}}} 30\nnccl_bus_bandwidth_gbs{{{a}}} 300\n"
            f"nccl_bus_bandwidth_gbs{{{b}}} 6\n"
            "# TYPE nccl_collective_exec_time_microseconds gauge\n"
            f"nccl_collective_exec_time_microseconds{{{a}}} 1000\nnccl_collective_exec_time_microseconds{{{b}}} 50\n")
    t = read(tmp_path, text)
    assert sorted((c.size_range[0], c.recorded_busbw) for c in t.calls) == [(MiB, 6e9), (4 * GiB, 3e9)]
    assert repeats_said(t.notes) == 2
    assert has(t.notes, "samples repeated one of the same name and labels: the first kept")


def test_one_repeated_sample_is_said_as_one(tmp_path):
    """The busbw of one bucket written twice: one repeat, the first value kept."""
    text = bucket(3, 1000) + f"nccl_bus_bandwidth_gbs{{{labels()}}} 4\n"
    t = read(tmp_path, text)
    assert [c.recorded_busbw for c in t.calls] == [3e9]
    assert repeats_said(t.notes) == 1


def test_a_whole_bucket_written_twice_is_two_repeats(tmp_path):
    t = read(tmp_path, bucket(3, 1000) + bucket(4, 2000))
    assert [(c.recorded_busbw, c.time_s) for c in t.calls] == [(3e9, pytest.approx(1e-3))]
    assert repeats_said(t.notes) == 2


def test_other_samples_in_a_family_do_not_hide_the_known_ones_after_them(tmp_path):
    """A family typed summary holds a _count sample (not an Inspector gauge) before the
    busbw gauge itself: the _count is skipped, the busbw read."""
    a = labels()
    text = ("# TYPE nccl_bus_bandwidth_gbs summary\n"
            f"nccl_bus_bandwidth_gbs_count{{{a}}} 7\nnccl_bus_bandwidth_gbs{{{a}}} 3\n"
            f"nccl_collective_exec_time_microseconds{{{a}}} 1000\n")
    c = one(tmp_path, text)
    assert c.recorded_busbw == 3e9 and c.time_s == pytest.approx(1e-3)


def test_two_buckets_differing_in_size_are_two_calls(tmp_path):
    t = read(tmp_path, bucket(3, 1000, size="4-5GB") + bucket(6, 50, size="1-2MB"))
    assert [c.size_range for c in t.calls] == [(4 * GiB, 5 * GiB), (MiB, 2 * MiB)]
    assert repeats_said(t.notes) is None


def test_samples_differing_only_in_their_timestamp_label_are_one_call(tmp_path):
    """NCCL 2.29's form stamps each sample; a time written a second after its
    bandwidths still belongs with them."""
    from test_telemetry import _prom

    text = _prom().split("\n")
    text[3] = text[3].replace('timestamp="2025-10-17T03:31:47Z"', 'timestamp="2025-10-17T03:31:48Z"')
    assert "03:31:48Z" in text[3] and "03:31:48Z" not in text[2]
    (c,) = read(tmp_path, "\n".join(text)).calls
    assert c.rank == 4 and c.time_s == pytest.approx(8e-3)


@pytest.mark.parametrize("value, shown", [("-1", "value -1 is not"), ("-0.25", "value -0.25 is not")])
def test_a_negative_value_is_refused_and_shown(tmp_path, value, shown):
    msg = refusal(tmp_path, bucket(value, 1000))
    assert f"nccl_bus_bandwidth_gbs: {shown} a bandwidth or a time" in msg


def test_a_value_of_hundreds_of_digits_is_refused_and_shown_cut_to_20_characters(tmp_path):
    msg = refusal(tmp_path, bucket(3, "9" * 400))
    assert f"value {'9' * 20} is not a bandwidth or a time" in msg


def test_an_exposition_the_parser_refuses_is_said_with_its_reason(tmp_path):
    msg = refusal(tmp_path, "nccl_bus_bandwidth_gbs{a=b} 3\n")
    assert "not a Prometheus exposition (ValueError: Invalid labels: a=b)" in msg


def test_the_parsers_reason_is_quoted_to_120_characters(tmp_path):
    msg = refusal(tmp_path, 'nccl_bus_bandwidth_gbs{version="v5.1",comm_name="' + "y" * 300 + '" 3\n')
    (reason,) = re.findall(r"\(ValueError: (.*)\)$", msg, re.S)
    assert len(reason) == 120 and reason.startswith("Invalid value")
