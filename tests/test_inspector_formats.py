"""Every format NCCL Inspector's plugin writes, built as its writer writes it, read.

JSON lines: NVIDIA/nccl plugins/profiler/inspector/inspector_json.cc (json.cc's compact
form: no spaces, doubles as %lf, one record a line), function by function:
inspectorCommInfoHeader, inspectorCommInfoMetaHeader, inspectorCompletedColl,
inspectorCompletedP2p, inspectorCommInfoDumpStats, inspectorCommInfoDump. Versions, each
from the commit that writes it: v4.0 b3aeda4a (NCCL 2.30), v4.1 (dump_stats marker,
headered records), v4.2 35d819ec (coll_algo, coll_proto), v4.3 8224472d (coll_user_tag,
headered), v4.3 headerless as inspector_json_reader.py (08618d4a) restores it, v4.4
f3f1ee07 (headerless after the marker, proxy_trace records, proxy counts).

Prometheus: inspector_prom.cc of NCCL 2.30 (b3aeda4a, 5067397c): inspectorPromGetLabelsColl,
inspectorPromFormatMessageSizeRange, inspectorPromWriteCollBucket (busbw's geometric
mean, time's mean, %.6g), inspectorPromWriteP2pBucket; busbw factors from
inspector.cc's inspectorComputeOpBw."""

import json
import math

import pytest

from linkroof.readers import telemetry as T

GB = 1e9
MiB = 1 << 20


# ------------------------------------------------------------------ the JSON writer, as json.cc writes


def emit(x):
    """json.cc: keys and values without spaces; jsonDouble is printf("%lf"); jsonStr escapes."""
    if isinstance(x, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{emit(v)}" for k, v in x.items()) + "}"
    if isinstance(x, list):
        return "[" + ",".join(emit(v) for v in x) + "]"
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, float):
        return "%f" % x
    return json.dumps(x)


def header(rank, n_ranks, comm="0x7f8c496ae9f661", nnodes=1):
    # inspectorCommInfoHeader (comm_name since NCCL 2.30)
    return {"id": comm, "comm_name": "DP Group 0", "rank": rank, "n_ranks": n_ranks, "nnodes": nnodes}


def metadata(version, host="node0", pid=1639453):
    # inspectorCommInfoMetaHeader
    return {"inspector_output_format_version": version, "git_rev": "fixture", "rec_mechanism":
            "nccl_profiler_interface", "dump_timestamp_us": 1748030377748202, "hostname": host, "pid": pid}


FACTOR = {"AllReduce": lambda n: 2 * (n - 1) / n, "AllGather": lambda n: (n - 1) / n,
          "ReduceScatter": lambda n: (n - 1) / n, "Broadcast": lambda n: 1, "Reduce": lambda n: 1}


def coll_perf(version, coll, sn, msg, t_us, n_ranks, tag=None):
    """inspectorCompletedColl; bandwidths as inspectorComputeOpBw computes them."""
    traffic = msg * n_ranks if coll in ("AllGather", "ReduceScatter") else msg
    algbw = traffic / 1e9 / (t_us / 1e6) if t_us else 0.0
    d = {"coll": coll}
    if version >= "v4.2":
        d |= {"coll_algo": "RING", "coll_proto": "SIMPLE"}
    d["coll_sn"] = sn
    if tag is not None:  # v4.3 of 8224472d: an opaque uint64 as a decimal string
        d["coll_user_tag"] = str(tag)
    d |= {"coll_msg_size_bytes": msg, "coll_exec_time_us": t_us, "coll_timing_source": "kernel_gpu",
          "coll_algobw_gbs": float(algbw), "coll_busbw_gbs": float(algbw * FACTOR[coll](n_ranks))}
    return d


def p2p_perf(op, sn, peer, msg, t_us):
    # inspectorCompletedP2p
    bw = msg / 1e9 / (t_us / 1e6)
    return {"p2p": op, "p2p_sn": sn, "p2p_peer": peer, "p2p_msg_size_bytes": msg, "p2p_exec_time_us": t_us,
            "p2p_timing_source": "kernel_gpu", "p2p_algobw_gbs": float(bw), "p2p_busbw_gbs": float(bw)}


def dump_stats(version, rank, n_ranks, colls, p2ps=0, dropped=0, proxy=None, **kw):
    # inspectorCommInfoDumpStats; proxy counts only with NCCL_INSPECTOR_ENABLE_PROXY (v4.4)
    stats = {"coll_records": colls, "coll_dropped_total": dropped, "coll_dropped_since_last_dump": dropped,
             "p2p_records": p2ps, "p2p_dropped_total": 0, "p2p_dropped_since_last_dump": 0}
    if proxy is not None:
        stats |= {"proxy_records": proxy, "proxy_dropped_total": 0, "proxy_dropped_since_last_dump": 0,
                  "proxy_ops_dropped_total": 0, "proxy_ops_dropped_since_last_dump": 0,
                  "proxy_steps_overwritten_total": 0, "proxy_steps_overwritten_since_last_dump": 0,
                  "proxy_output_mode": "nested", "proxy_segment_step_capacity": 8,
                  "proxy_pxn_skipped_process_total": 0, "proxy_steps_enabled": 1}
    return {"header": header(rank, n_ranks, **kw), "metadata": metadata(version), "dump_stats": stats}


def dump(version, rank, n_ranks, perfs, p2ps=(), headerless=False, dropped=0, proxy=(), **kw):
    """One communicator's dump (inspectorCommInfoDump): from v4.1 the marker first, then
    the collectives, then the p2p records (then, v4.4, the proxy records)."""
    lines = []
    if version >= "v4.1":
        lines.append(dump_stats(version, rank, n_ranks, len(perfs), len(p2ps), dropped,
                                len(proxy) if version >= "v4.4" else None, **kw))
    for kind, items in (("coll_perf", perfs), ("p2p_perf", p2ps), ("proxy_trace", proxy)):
        for perf in items:
            if headerless:
                lines.append({kind: perf})
            else:
                lines.append({"header": header(rank, n_ranks, **kw), "metadata": metadata(version), kind: perf})
    return lines


def write(path, lines):
    path.write_text("".join(emit(x) + "\n" for x in lines))
    return path


def three_calls(version, rank=0, n=8, tag=False):
    return [coll_perf(version, "AllReduce", sn, MiB, 17, n, tag=(1 << 63) + sn if tag else None)
            for sn in (1, 2, 3)]


# ------------------------------------------------------------------ JSON lines, v4.0 to v4.4


@pytest.mark.parametrize("version, headerless, tag", [
    ("v4.0", False, False), ("v4.1", False, False), ("v4.2", False, False), ("v4.3", False, True),
    ("v4.3", True, False), ("v4.4", True, False)])
def test_every_json_version_reads_three_all_reduces_of_1_mib(tmp_path, version, headerless, tag):
    f = write(tmp_path / "node0-pid1639453.log", dump(version, 0, 8, three_calls(version, tag=tag),
                                                      headerless=headerless))
    t = T.read_telemetry(f)
    assert [(c.collective, c.size_bytes, c.seq, c.rank, c.group_size) for c in t.calls] == [
        ("all_reduce", MiB, sn, 0, 8) for sn in (1, 2, 3)]
    # 1 MiB in 17 us on 8 ranks: algbw 61.68 GB/s, busbw 1.75x that = 107.9 GB/s, as the Inspector printed
    for c in t.calls:
        assert c.busbw == pytest.approx(107.94 * GB, rel=1e-4) and c.recorded_busbw == pytest.approx(107.94 * GB, rel=1e-4)
        assert c.host == "node0" and c.comm == "0x7f8c496ae9f661"
    assert f"NCCL Inspector JSON format {version}" in t.notes[0]


def test_v4_4_two_communicators_each_headerless_dump_takes_its_own_marker(tmp_path):
    lines = (dump("v4.4", 3, 4, [coll_perf("v4.4", "AllGather", 9, 4 * MiB, 100, 4)], headerless=True, comm="0xaa")
             + dump("v4.4", 1, 2, [coll_perf("v4.4", "Broadcast", 2, 1000, 10, 2)],
                    p2ps=[p2p_perf("Send", 5, 0, 2 * MiB, 40)], headerless=True, comm="0xbb"))
    t = T.read_telemetry(write(tmp_path / "n-pid2.log", lines))
    ag, bc, send = t.calls
    # an all-gather of 4 MiB per rank on 4 ranks is nccl-tests' 16 MiB
    assert (ag.comm, ag.rank, ag.group_size, ag.collective, ag.size_bytes) == ("0xaa", 3, 4, "all_gather", 16 * MiB)
    assert (bc.comm, bc.rank, bc.group_size, bc.collective, bc.size_bytes) == ("0xbb", 1, 2, "broadcast", 1000)
    # a Send of 2 MiB to peer 0: a two-rank sendrecv, never compared across ranks (no sequence number)
    assert (send.comm, send.collective, send.size_bytes, send.group_size, send.seq) == ("0xbb", "sendrecv", 2 * MiB,
                                                                                       2, None)
    assert "Send #5 with peer 0" in send.notes[0]


def test_v4_4_proxy_records_counted_not_read(tmp_path):
    proxy = [{"record_type": "proxy_op", "record_sn": 1, "parent_type": "coll", "parent_sn": 1, "proxy_op_sn": 1,
              "rank": 0, "channel_id": 0, "peer": 1, "direction": "send", "timing_source": "proxy_cpu",
              "n_steps": 2, "chunk_size_bytes": 100, "n_steps_started": 2, "n_steps_completed": 2,
              "n_steps_dropped": 0, "trans_size_bytes": 200, "total_us": 5, "op_bw_gbs": 0.04,
              "event_trace_ts": {"proxy_op_start_ts": 1, "proxy_op_stop_ts": 6}}]
    f = write(tmp_path / "n-pid3.log", dump("v4.4", 0, 2, three_calls("v4.4", n=2), headerless=True, proxy=proxy))
    t = T.read_telemetry(f)
    assert len(t.calls) == 3 and any("1 proxy_trace records" in n for n in t.notes)


def test_records_the_ring_dropped_are_said(tmp_path):
    f = write(tmp_path / "n-pid4.log", dump("v4.2", 0, 8, three_calls("v4.2"), dropped=41))
    t = T.read_telemetry(f)
    assert any("dropped 41 coll records of communicator 0x7f8c496ae9f661 rank 0" in n for n in t.notes)


def test_inspector_sequence_numbers_count_per_collective_type(tmp_path):
    """NCCL's comm->seqNumber[func]: AllReduce #1 and AllGather #1 are two calls; each is
    compared across the two ranks."""
    files = []
    for rank in (0, 1):
        perfs = [coll_perf("v4.2", "AllReduce", 1, MiB, 20 if rank == 0 else 30, 2),
                 coll_perf("v4.2", "AllGather", 1, MiB, 50 if rank == 0 else 10, 2)]
        files.append(write(tmp_path / f"n{rank}-pid{rank}.log", dump("v4.2", rank, 2, perfs)))
    report = T.analyze_telemetry([T.read_telemetry(f) for f in files], _reference())
    by = {s.collective: s for s in report.skews}
    # inferred: the rank with the shorter time arrived last; skews of 10 us and 40 us
    assert by["all_reduce"].last_rank == 0 and by["all_reduce"].skew_s == pytest.approx(10e-6)
    assert by["all_gather"].last_rank == 1 and by["all_gather"].skew_s == pytest.approx(40e-6)


@pytest.mark.parametrize("lines, message", [
    # a headerless record with no marker before it has no rank and no communicator
    (lambda: [{"coll_perf": coll_perf("v4.4", "AllReduce", 1, MiB, 17, 8)}], "before any dump_stats marker"),
    # more records than the marker announced
    (lambda: dump("v4.4", 0, 8, three_calls("v4.4"), headerless=True)
     + [{"coll_perf": coll_perf("v4.4", "AllReduce", 4, MiB, 17, 8)}], "more coll_perf records than"),
    # a dump that owes records when the next begins: interleaved
    (lambda: dump("v4.4", 0, 8, three_calls("v4.4"), headerless=True)[:2] + dump("v4.4", 0, 8, three_calls("v4.4"),
                                                                                   headerless=True),
     "announced 2 more records than followed"),
    (lambda: [dict(x, metadata=metadata("v4.5")) for x in dump("v4.4", 0, 8, three_calls("v4.4"))],
     "format 'v4.5': linkroof reads v4.0 to v4.4"),
    (lambda: [dict(x, metadata=metadata("v5.0")) for x in dump("v4.0", 0, 8, three_calls("v4.0"))],
     "format 'v5.0'"),
])
def test_headerless_and_unknown_versions_refused(tmp_path, lines, message):
    f = write(tmp_path / "n-pid5.log", lines())
    with pytest.raises(T.TelemetryError, match=message):
        T.read_telemetry(f)


def test_a_dump_cut_short_at_the_end_is_said(tmp_path):
    f = write(tmp_path / "n-pid6.log", dump("v4.4", 0, 8, three_calls("v4.4"), headerless=True)[:3])
    t = T.read_telemetry(f)
    assert len(t.calls) == 2 and any("lacks 1 of the records it announced" in n for n in t.notes)


def test_a_file_of_markers_only_is_read_as_inspector_and_refused_for_no_records(tmp_path):
    f = write(tmp_path / "n-pid7.log", [dump_stats("v4.2", 0, 8, 0, dropped=5)])
    with pytest.raises(T.TelemetryError, match="no Inspector records"):
        T.read_telemetry(f)


def test_nan_bandwidth_written_as_the_string_nan_is_no_figure(tmp_path):
    perf = coll_perf("v4.0", "AllReduce", 1, MiB, 17, 8)
    perf["coll_busbw_gbs"] = "nan"  # json.cc's jsonDouble for a NaN
    t = T.read_telemetry(write(tmp_path / "n-pid8.log", dump("v4.0", 0, 8, [perf])))
    assert t.calls[0].recorded_busbw is None and t.calls[0].busbw == pytest.approx(107.94 * GB, rel=1e-4)


# ------------------------------------------------------------------ Prometheus v5.1 (NCCL 2.30)


def prom_labels(collective="AllReduce", size="4-5GB", nranks=4, algo_proto="Ring_ll", gpu="GPU0", comm="DP Group 0",
                version="v5.1", p2p=False):
    # inspectorPromGetLabelsColl / inspectorPromGetLabelsP2p, in their order
    op = f'p2p_operation="{collective}"' if p2p else f'collective="{collective}"'
    tail = "" if p2p else f',algo_proto="{algo_proto}"'
    return (f'version="{version}",slurm_job_id="unknown",node="nvl72004-T01",gpu="{gpu}",comm_name="{comm}",'
            f'n_nodes="1",nranks="{nranks}",{op},message_size="{size}"{tail}')


def prom_bucket(busbw, t_us, p2p=False, **kw):
    # inspectorPromWriteCollBucket: "%.6g" of busbw's geometric mean and time's mean
    name = ("nccl_p2p_bus_bandwidth_gbs", "nccl_p2p_exec_time_microseconds") if p2p else \
        ("nccl_bus_bandwidth_gbs", "nccl_collective_exec_time_microseconds")
    labels = prom_labels(p2p=p2p, **kw)
    return f"{name[0]}{{{labels}}} {busbw:.6g}\n{name[1]}{{{labels}}} {t_us:.6g}\n"


def test_prometheus_v5_1_bucket_reads_as_a_range_with_derived_algbw(tmp_path):
    # README's example: AllReduce, 4 ranks, 4-5GB, Ring_ll, busbw 678.263 GB/s, 9498.47 us
    f = tmp_path / "nccl_inspector_metrics_GPU-0.prom"
    f.write_text(prom_bucket(678.263, 9498.47) + prom_bucket(464.9, 1154.87, p2p=True, collective="Send",
                                                              size="512-513MB"))
    t = T.read_telemetry(f)
    ar, send = t.calls
    assert (ar.collective, ar.group_size, ar.rank, ar.seq, ar.size_bytes) == ("all_reduce", 4, None, None, None)
    assert ar.size_range == (4 << 30, 5 << 30) and ar.host == "nvl72004-T01" and ar.device == "GPU0"
    assert ar.time_s == pytest.approx(9498.47e-6) and ar.recorded_busbw == pytest.approx(678.263e9)
    # algbw = busbw / (2 x 3 / 4) = 452.175 GB/s, and said so
    assert ar.recorded_algbw == pytest.approx(452.175e9, rel=1e-6)
    assert any("derived: busbw / 1.5" in n for n in ar.notes)
    assert any("[4294967296, 5368709120) B" in n for n in ar.notes)
    # a Send of 512-513 MiB: a two-rank sendrecv, its algbw its busbw
    assert (send.collective, send.group_size, send.size_range) == ("sendrecv", 2, (512 * MiB, 513 * MiB))
    assert send.recorded_algbw == pytest.approx(464.9e9)


def test_prometheus_per_rank_message_bucket_times_ranks(tmp_path):
    f = tmp_path / "m.prom"
    f.write_text(prom_bucket(100.0, 50.0, collective="AllGather", size="1-2MB", nranks=8))
    (c,) = T.read_telemetry(f).calls
    # the bucket is of each rank's message: nccl-tests' all-gather is 8x, [8 MiB, 16 MiB)
    assert c.size_range == (8 * MiB, 16 * MiB)
    assert c.recorded_algbw == pytest.approx(100e9 / (7 / 8))


def test_prometheus_bucket_placed_at_its_lower_bound_and_said(tmp_path):
    f = tmp_path / "m.prom"
    f.write_text(prom_bucket(20.0, 150.0, size="1-2MB", nranks=2))
    report = T.analyze_telemetry([T.read_telemetry(f)], _reference())
    (row,) = report.rows
    assert row.nccl_s and "placed at its lower bound" in row.nccl_how
    # NCCL's time here at 1 MiB on 2 ranks, the bundled H200 pair's all-reduce: under the 150 us recorded
    assert row.nccl_s < 150e-6
    d = report.to_dict()["collectives"][0]
    assert d["size_range"] == [MiB, 2 * MiB] and d["size_bytes"] is None and d["busbw"] is None
    assert row.placement.workload.message_bytes == MiB  # the bucket's low end, 1 MiB, not 2 MiB


def test_prometheus_bucket_whose_busbw_x_time_falls_under_it_is_said(tmp_path):
    # 4-5GB all-reduce on 4 ranks: busbw 1.5 GB/s for 1000 us is algbw 1 GB/s, 1 MB moved: under 4 GiB
    f = tmp_path / "m.prom"
    f.write_text(prom_bucket(1.5, 1000.0))
    (c,) = T.read_telemetry(f).calls
    assert any("algbw x time is 1000000 B, under the bucket" in n for n in c.notes)
    f.write_text(prom_bucket(1.5 * 4.5 * 2 ** 30 / 1e6, 1000.0))  # 4.5 GiB moved: inside the bucket, nothing said
    (c,) = T.read_telemetry(f).calls
    assert not any("under the bucket" in n for n in c.notes)


@pytest.mark.parametrize("label, want", [("0B", (0, 1)), ("1-2B", (1, 2)), ("1023-1024KB", (1023 << 10, 1 << 20)),
                                         ("4-5GB", (4 << 30, 5 << 30)), ("2048-2049TB", (2048 << 40, 2049 << 40)),
                                         ("4-6GB", None), ("1024-1025GB", None), ("0-1MB", None), ("4.5GB", None)])
def test_prometheus_size_buckets_as_inspectorPromFormatMessageSizeRange_writes_them(label, want):
    assert T.prom_bucket(label) == want


@pytest.mark.parametrize("text, message", [
    (prom_bucket(1.0, 2.0, version="v6.1"), "format 'v6.1'"),
    (prom_bucket(1.0, 2.0, version="v5.2"), "format 'v5.2'"),
    (prom_bucket(1.0, 2.0, size="4-6GB"), "not one of the Inspector's buckets"),
    (prom_bucket(1.0, 2.0).split("\n")[0] + "\n", "lack time_us"),
    (prom_bucket(1.0, 2.0, nranks=0), "not a rank count"),
    (prom_bucket(1.0, 2.0, size="1-2TB", collective="AllGather", nranks=1 << 20), "over 1 PiB"),
    ("nccl_bus_bandwidth_gbs{version=\"v5.1\" 3\n", "not a Prometheus exposition"),
])
def test_prometheus_bad_files_refused(tmp_path, text, message):
    f = tmp_path / "m.prom"
    f.write_text(text)
    with pytest.raises(T.TelemetryError, match=message):
        T.read_telemetry(f)


def _reference():
    from linkroof.profiler.session import bundled_profile

    return bundled_profile()


def test_json_numbers_are_never_nan_in_the_report(tmp_path):
    f = write(tmp_path / "n-pid9.log", dump("v4.0", 0, 2, three_calls("v4.0", n=2)))
    report = T.analyze_telemetry([T.read_telemetry(f)], _reference())
    doc = report.to_dict()
    text = json.dumps(doc, allow_nan=False)  # raises on NaN or Infinity
    assert "NaN" not in text and len(doc["collectives"]) == 3 and not math.isnan(doc["collectives"][0]["time_s"])


def test_the_telemetry_table_shows_a_buckets_range_not_unknown(tmp_path):
    from click.testing import CliRunner

    from linkroof.cli import cli

    f = tmp_path / "nccl_inspector_metrics_GPU-0.prom"
    f.write_text(prom_bucket(678.263, 9498.47))
    out = CliRunner().invoke(cli, ["--width", "250", "telemetry", str(f), "--profile", "reference"])
    assert out.exit_code == 0, out.output
    assert "4 GiB-5 GiB (bucket)" in out.output
