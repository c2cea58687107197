"""NCCL 2.29's Prometheus textfile (no version label): per communicator and rank, three
gauges of its latest collective (algbw, busbw in GB/s and the time in us), labelled with
comm_id, hostname, rank, nranks (or n_ranks), n_nodes, gpu_device_id, collective, coll_sn,
coll_timing_source and message_size (1024-based, two decimals). What linkroof reads from
them (_prom_latest): the size is algbw x time; the label only checks it, to 1 % of the
size plus 1 KiB; the rank must lie below the rank count; a size over 1 PiB or a time of
0 us is no figure. Each test names the rule it guards."""

import pytest

from linkroof.readers import telemetry as T

PATH = "pool0-0002.prom"
SOURCE = "NCCL Inspector (Prometheus)"

LABELS = {"comm_id": "0xd152c00f111816", "hostname": "pool0-0002", "rank": "3", "slurm_job": "unknown",
          "slurm_job_id": "unknown", "nranks": "8", "n_nodes": "2", "gpu_device_id": "GPU3",
          "collective": "AllReduce", "coll_sn": "228924", "coll_timing_source": "kernel_gpu",
          "timestamp": "2025-10-17T03:31:47Z", "message_size": "2.00GB"}


def latest(algbw, busbw, t_us, **labels):
    """The three gauges NCCL 2.29 writes for one communicator's latest collective;
    a label given as None is left out."""
    lab = {**LABELS, **labels}
    text = ",".join(f'{k}="{v}"' for k, v in lab.items() if v is not None)
    return (f"# HELP nccl_bus_bandwidth_gbs NCCL bus bandwidth\n"
            f"nccl_algorithm_bandwidth_gbs{{{text}}} {algbw}\n"
            f"nccl_bus_bandwidth_gbs{{{text}}} {busbw}\n"
            f"nccl_collective_exec_time_microseconds{{{text}}} {t_us}\n")


def one(text, path=PATH):
    t = T.parse_inspector_prom(text, path)
    (c,) = t.calls
    return t, c


def refused(text, path=PATH):
    with pytest.raises(T.TelemetryError) as e:
        T.parse_inspector_prom(text, path)
    return str(e.value)


# 2 GiB all-reduce in 8000 us: algbw 2^31 B / 8 ms = 268.435456 GB/s, busbw x 2*7/8
ALGBW_2G = 268.435456
BUSBW_2G = 469.762048


# ------------------------------------------------------------------ what one sample becomes


def test_every_label_lands_in_its_field():
    """host, communicator, rank, sequence number, rank count, node count, GPU and how
    NCCL timed it come from their labels unchanged; the source says which reader."""
    t, c = one(latest(ALGBW_2G, BUSBW_2G, 8000))
    assert c.source == SOURCE and t.source == SOURCE
    assert (c.host, c.comm, c.rank, c.seq) == ("pool0-0002", "0xd152c00f111816", 3, 228924)
    assert (c.collective, c.group_size, c.nodes) == ("all_reduce", 8, 2)
    assert c.device == "GPU3"
    assert c.timing == "kernel_gpu"
    assert c.dtype is None and c.size_range is None


def test_size_is_algbw_times_time_to_the_byte():
    """The size is algbw x time, rounded to a whole byte: 100 GB/s for 10 ms is exactly
    10^9 B (a unit of 10^9, not anything near it)."""
    _, c = one(latest(100, 175, 10000, message_size="953.67MB"))
    assert c.size_bytes == 1_000_000_000
    assert c.time_s == pytest.approx(0.01, rel=1e-12)


def test_recorded_bandwidths_are_the_gauges_in_bytes_per_second():
    """algbw and busbw are written in GB/s (10^9 B/s): 100 and 175 GB/s are kept as
    1e11 and 1.75e11 B/s exactly, as the tool printed them."""
    _, c = one(latest(100, 175, 10000, message_size="953.67MB"))
    assert c.recorded_algbw == 1e11
    assert c.recorded_busbw == 1.75e11


def test_the_size_is_said_to_be_derived():
    """Since 2.29 records no size but the label, the call says where its size came from."""
    _, c = one(latest(ALGBW_2G, BUSBW_2G, 8000))
    assert isinstance(c.notes, tuple)
    assert any("algbw x time" in n for n in c.notes)


def test_labels_missing_leave_empty_names_not_placeholders():
    """A sample without hostname, comm_id, gpu_device_id, coll_timing_source or n_nodes
    is still read: those fields are empty (or None), never a made-up value."""
    _, c = one(latest(ALGBW_2G, BUSBW_2G, 8000, hostname=None, comm_id=None, gpu_device_id=None,
                      coll_timing_source=None, n_nodes=None))
    assert (c.host, c.comm, c.device, c.timing, c.nodes) == ("", "", "", "", None)
    assert c.size_bytes == 2 << 30 and c.rank == 3


def test_a_missing_collective_label_is_an_unknown_collective():
    _, c = one(latest(ALGBW_2G, BUSBW_2G, 8000, collective=None))
    assert c.collective is None and c.group_size == 8


def test_lone_surrogates_in_names_are_replaced_and_said():
    """A name holding half a UTF-16 character (text handed over in Python, not from a
    file) is shown with U+FFFD in each field, and the file's notes count them."""
    text = latest(ALGBW_2G, BUSBW_2G, 8000, hostname="node\udc80", comm_id="0x\udc81", gpu_device_id="GPU\udc82",
                  coll_timing_source="kernel\udc83")
    t, c = one(text)
    assert (c.host, c.comm, c.device, c.timing) == ("node\ufffd", "0x\ufffd", "GPU\ufffd", "kernel\ufffd")
    assert any(n.startswith("4 names with a lone surrogate") for n in t.notes)


# ------------------------------------------------------------------ the rank count, either label


def test_n_ranks_is_read_where_nranks_is_absent():
    """Some 2.29 builds spell the rank count n_ranks: it counts as nranks."""
    _, c = one(latest(ALGBW_2G, BUSBW_2G, 8000, nranks=None, n_ranks="8"))
    assert c.group_size == 8 and c.rank == 3


def test_nranks_wins_over_n_ranks():
    _, c = one(latest(ALGBW_2G, BUSBW_2G, 8000, nranks="8", n_ranks="4"))
    assert c.group_size == 8


@pytest.mark.parametrize("labels", [
    {"nranks": None},  # no rank count at all
    {"rank": None},  # no rank
    {"rank": "8"},  # rank 8 of 8: ranks count from 0
    {"rank": "9"},
    {"rank": "-1"},
    {"nranks": str((1 << 20) + 1), "message_size": None},  # over 2^20 ranks: no NCCL communicator
    {"rank": "x"},
], ids=["no-nranks", "no-rank", "rank-equals-nranks", "rank-above", "negative-rank", "too-many-ranks", "bad-rank"])
def test_a_sample_whose_rank_is_not_below_its_rank_count_is_refused(labels):
    """The rank and the rank count are both needed and 0 <= rank < nranks <= 2^20;
    otherwise the file is refused, naming it and the labels."""
    msg = refused(latest(ALGBW_2G, BUSBW_2G, 8000, **labels))
    assert msg.startswith(PATH + ": ")
    assert "rank below nranks" in msg


@pytest.mark.parametrize("rank, nranks", [(0, 8), (7, 8), (0, 1), (0, 1 << 20), ((1 << 20) - 1, 1 << 20)])
def test_ranks_from_0_to_nranks_minus_1_are_read(rank, nranks):
    """Rank 0 is a rank; a communicator of 2^20 ranks (the most NCCL has) is one."""
    _, c = one(latest(ALGBW_2G, BUSBW_2G, 8000, rank=str(rank), nranks=str(nranks)))
    assert (c.rank, c.group_size) == (rank, nranks)


# ------------------------------------------------------------------ 0 us, and the 1 PiB bound


def test_a_time_of_0_us_gives_no_size_and_no_time():
    """A call timed 0 us (under the resolution) has no time and, since the size is
    algbw x time, no size either: None, not 0 B or 0 s."""
    _, c = one(latest(0, 0, 0))
    assert c.time_s is None and c.size_bytes is None and c.busbw is None
    assert c.duration_s == 0.0


def test_exactly_1_pib_is_a_message():
    """1 PiB (2^50 B) is the largest message taken: 1125899.906842624 GB/s for 1 s."""
    _, c = one(latest(1125899.906842624, 1, 1e6, message_size=None))
    assert c.size_bytes == 1 << 50


def test_over_1_pib_is_refused_with_the_size():
    msg = refused(latest(2 * 1125899.906842624, 1, 1e6, message_size=None))
    assert msg.startswith(PATH + ": ")
    assert "over 1 PiB" in msg and str(2 << 50) in msg


# ------------------------------------------------------------------ message_size only checks


def test_without_a_message_size_label_the_size_is_still_read():
    """The label only checks algbw x time: a sample without one is read unchecked."""
    _, c = one(latest(ALGBW_2G, BUSBW_2G, 8000, message_size=None))
    assert c.size_bytes == 2 << 30


def test_an_unparsable_message_size_label_checks_nothing():
    _, c = one(latest(ALGBW_2G, BUSBW_2G, 8000, message_size="lots"))
    assert c.size_bytes == 2 << 30


def test_message_size_of_an_all_gather_is_each_ranks_message():
    """An all-gather's label is each rank's message (256 MiB on 8 ranks); algbw x time
    is the whole output (2 GiB): they agree."""
    _, c = one(latest(ALGBW_2G, 1, 8000, collective="AllGather", message_size="256.00MB"))
    assert (c.collective, c.size_bytes) == ("all_gather", 2 << 30)


def test_a_whole_size_label_on_an_all_gather_disagrees():
    """Read as each rank's message, 2.00GB on 8 ranks is 16 GiB: not the 2 GiB moved."""
    msg = refused(latest(ALGBW_2G, 1, 8000, collective="AllGather", message_size="2.00GB"))
    assert "disagrees" in msg and msg.startswith(PATH + ": ")


def test_message_size_units_are_1024_based_within_one_percent():
    """1.00GB is 2^30 B: a size 0.9 % under it (1064075428 B) is within the 1 % the check
    allows, so read; were GB 1025^3 B it would be 1.2 % off."""
    _, c = one(latest(1064.075428, 1, 1000, message_size="1.00GB"))
    assert c.size_bytes == 1064075428


def test_small_messages_get_a_kib_of_slack():
    """A 1000 B call labelled 1.00KB (1024 B) is 24 B off: under the 1 KiB allowed on
    top of 1 %, so read."""
    _, c = one(latest(1, 1, 1, message_size="1.00KB"))
    assert c.size_bytes == 1000


def test_the_tolerance_is_one_percent_plus_1_kib_inclusive():
    """A 100 B call: allowed 1 B + 1024 B. A label 1025 B off is read; 1025.5 B off is
    refused, with the size it disagrees with."""
    _, c = one(latest(0.1, 0.1, 1, message_size="1125B"))
    assert c.size_bytes == 100
    msg = refused(latest(0.1, 0.1, 1, message_size="1125.5B"))
    assert msg.startswith(PATH + ": ") and "disagrees" in msg and "(100 B)" in msg


# ------------------------------------------------------------------ through read_telemetry


def test_a_2_29_textfile_read_from_disk(tmp_path):
    """read_telemetry takes the file by its gauges and gives the same call."""
    f = tmp_path / "nccl_inspector_metrics_1234.prom"
    f.write_text(latest(ALGBW_2G, BUSBW_2G, 8000))
    t = T.read_telemetry(f)
    (c,) = t.calls
    assert c.source == SOURCE and c.host == "pool0-0002" and c.nodes == 2 and c.device == "GPU3"
    assert c.size_bytes == 2 << 30 and c.recorded_busbw == pytest.approx(BUSBW_2G * 1e9, rel=1e-12)
    assert any("latest collective" in n for n in t.notes)
