"""compare --counters on the CPU: ncu's raw pages recorded on one H200 read back to each
kernel's DRAM bytes, time and FLOPs; the reasons counting cannot happen; a workload held
against the counts; each kernel placed by its own time and counted work."""

import gzip
import json
import os
import stat
import sys
from pathlib import Path

import pytest

from linkroof.profiler import compare as C
from linkroof.profiler import ncu
from linkroof.profiler.session import bundled_profile
from linkroof.roofline import timeline as T
from linkroof.roofline.baseline import COUNTED, counted_workload, kernel_group_placements, workload_against_counters
from linkroof.roofline.model import MachineModel
from linkroof.schema import Workload

DATA = Path(__file__).parent / "data"
MODEL = MachineModel.from_profile(bundled_profile())
PLAIN = {"dram_read_bytes": "dram__bytes_read.sum", "dram_write_bytes": "dram__bytes_write.sum",
         "gpu_time_s": "gpu__time_duration.sum", "tensor:hgmma:bf16": "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum"}


def _page(name):
    return (DATA / "ncu" / name).read_text()


def test_a_recorded_gemm_page_gives_2mnk_tensor_flops_and_its_time():
    """ncu run by hand on a 1024^3 bf16 GEMM (one H200, 2026-12-02, five calls): one
    tensor-core op per FLOP, so the count is 2*m*n*k exactly; time read in ns."""
    ks = ncu.parse_raw_csv(_page("gemm1024.plain.csv"), PLAIN)
    assert len(ks) == 5 and {k.name for k in ks} == {"nvjet_sm90_tst_128x64_64x8_1x2_h_bz_NNT"}
    assert all(k.values["flops:bf16"] == 2 * 1024 ** 3 for k in ks)
    assert ks[0].values["gpu_time_s"] == pytest.approx(7.296e-6)
    assert ks[0].values["dram_read_bytes"] == 4_213_504 and "dram_write_bytes" in ks[0].values
    assert ks[0].grid == "(2, 64, 1)" and ks[0].block == "(384, 1, 1)"


def test_the_layer_norms_extra_traffic_is_reported_against_its_workload():
    """The layer norm over 32768 x 8192 bf16 needs 1.07 GB (read once, written once);
    ncu saw 0.99 GB read and 0.52 GB written: 1.40x, said so."""
    ks = ncu.parse_raw_csv(_page("layernorm.plain.csv"), PLAIN)
    rep = ncu.CounterReport(ks, calls=len(ks), how="recorded")
    totals = rep.totals()
    assert totals["launches"] == 1
    assert totals["dram_read_bytes"] == pytest.approx(0.9903e9, rel=1e-3)
    wl = Workload(name="layernorm", hbm_bytes=2 * 32768 * 8192 * 2)
    [note] = workload_against_counters(wl, totals)
    assert "1.40x" in note and "0.99 GB read" in note and "1.07 GB" in note and "more than the work needs" in note
    assert not workload_against_counters(Workload(name="x"), totals)  # nothing claimed, nothing compared


def test_an_unknown_unit_is_refused_not_misread():
    page = _page("gemm1024.plain.csv").replace('"ns"', '"furlong"')
    with pytest.raises(ncu.CountersUnavailable, match="furlong"):
        ncu.parse_raw_csv(page, PLAIN)


def test_sector_counts_are_read_as_counts():
    """ncu 2025 on the H200 printed the atomic and reduction sector counts in the unit
    'sector' (--print-units base); the whole page was refused over it (device run of
    2026-12-05, tests/gpu/test_counters_gpu.py)."""
    metrics, _ = ncu.wanted_metrics(None)
    names = [m for _, m in sorted(metrics.items())]
    head = '"ID","Kernel Name","' + '","'.join(names) + '"'
    unit = {"l1tex__m_l1tex2xbar_write_sectors_mem_global_op_atom.sum": "sector",
            "l1tex__m_l1tex2xbar_write_sectors_mem_global_op_red.sum": "sector"}
    units = '"",""' + "".join(f',"{unit.get(n, "")}"' for n in names)
    vals = {"l1tex__m_l1tex2xbar_write_sectors_mem_global_op_atom.sum": "540,672",
            "l1tex__m_l1tex2xbar_write_sectors_mem_global_op_red.sum": "7"}
    row = '"0","k"' + "".join(f',"{vals.get(n, "0")}"' for n in names)
    [k] = ncu.parse_raw_csv("\n".join([head, units, row]), metrics)
    assert k.values["atom_sectors"] == 540672 and k.values["red_sectors"] == 7


def test_cuda_core_flops_are_two_fma_plus_add_plus_mul():
    head = '"ID","Kernel Name","' + '","'.join(m for _, m in sorted(ncu.wanted_metrics(None)[0].items())) + '"'
    metrics, _ = ncu.wanted_metrics(None)
    names = [m for _, m in sorted(metrics.items())]
    vals = {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": "10", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": "3",
            "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum": "4", "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum": "1,000"}
    units = '"",""' + ',""' * len(names)
    row = '"0","k"' + "".join(f',"{vals.get(n, "0")}"' for n in names)
    [k] = ncu.parse_raw_csv("\n".join([head, units, row]), metrics)
    assert k.values["flops:fp32"] == 2 * 10 + 3 + 4 and k.values["flops:fp16"] == 2000
    assert "flops:fp64" not in k.values


def test_the_metric_list_follows_what_this_ncu_has():
    query = ("sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32   Counter  # ops\n"
             "sm__ops_path_tensor_op_hgmma_src_fp8_sparsity_on   Counter\n"
             "dram__bytes_read  Counter byte\n")
    want, missing = ncu.wanted_metrics(ncu.metric_names(query))
    assert want["tensor:hgmma:bf16"] == "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum"
    assert not any("sparsity" in m for m in want.values())
    assert "dram_write_bytes" in missing and "dram_read_bytes" in want


@pytest.mark.parametrize("name, identifier", [
    ("_ZN2at6native53_GLOBAL__N__21739cd4_20_layer_norm_kernel_cu_9c5ada8a28vectorized_layer_norm_kernelIN3c10"
     "8BFloat16EfLb0EEEviT0_PKT_S8_S8_PS5_S9_PS6_", "vectorized_layer_norm_kernel"),
    ("_Z5scalePfS_f", "scale"), ("nvjet_sm90_tst_128x64_64x8_1x2_h_bz_NNT", "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_NNT")])
def test_short_names(name, identifier):
    assert T.short_name(name) == identifier


def _fake_ncu(tmp_path, body):
    exe = tmp_path / "ncu"
    exe.write_text(f"#!{sys.executable}\nimport sys\na = sys.argv[1:]\nif a == ['--query-metrics']:\n"
                   "    print('dram__bytes_read Counter byte\\ndram__bytes_write Counter byte\\n"
                   "gpu__time_duration Counter ns')\n    sys.exit(0)\nlog = a[a.index('--log-file') + 1]\n" + body)
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return str(exe)


def test_count_reads_what_ncu_wrote_per_call(tmp_path, monkeypatch):
    """count() through a stand-in ncu that writes a recorded page: two calls counted,
    the counters per call, the child asked for those calls, clocks left alone."""
    page = _page("layernorm.plain.csv")
    (tmp_path / "page.csv").write_text(page)
    monkeypatch.setenv("LINKROOF_NCU", _fake_ncu(tmp_path, f"open('{tmp_path}/args', 'w').write(' '.join(a))\n"
                                                 f"open(log, 'w').write(open('{tmp_path}/page.csv').read())\n"))
    rep = ncu.count("m:f", "m:g", warmup=2, calls=5)
    assert rep.per_name()[rep.kernels[0].name]["launches"] == 1
    assert rep.totals()["dram_write_bytes"] == pytest.approx(0.516e9, rel=2e-3)
    args = (tmp_path / "args").read_text()
    assert "--clock-control none" in args and "--profile-from-start off" in args
    assert args.endswith("linkroof.profiler.ncu_child m:f m:g 2 5")
    assert "nvlink_tx_bytes" in rep.missing  # this stand-in lists no NVLink metric


@pytest.mark.parametrize("body, reason", [
    ("print('==ERROR== ERR_NVGPUCTRPERM - The user does not have permission')\n", "administrators"),
    ("print('==ERROR== Failed to find target process')\n", "Failed to find target process"),
    ("open(log, 'w').write('==PROF== Disconnected\\n')\n", "no kernel"),
    ("sys.exit(3)\n", "exited 3")])
def test_count_says_why_it_cannot(tmp_path, monkeypatch, body, reason):
    monkeypatch.setenv("LINKROOF_NCU", _fake_ncu(tmp_path, body))
    with pytest.raises(ncu.CountersUnavailable, match=reason):
        ncu.count("m:f", "m:g")


def test_count_refuses_several_ranks_and_a_missing_ncu(monkeypatch):
    with pytest.raises(ncu.CountersUnavailable, match="lock-step"):
        ncu.count("m:f", "m:g", ranks=2)
    monkeypatch.setenv("LINKROOF_NCU", os.devnull + ".none")
    with pytest.raises(ncu.CountersUnavailable, match="not found"):
        ncu.count("m:f", "m:g")


def _layernorm_timeline():
    doc = json.loads(gzip.open(DATA / "cupti" / "layernorm.json.gz").read())
    return T.summarize(*T.from_record(doc))


def test_each_kernel_is_placed_by_its_timeline_time_and_counted_work():
    """The recorded layer norm's one kernel, its counters from the recorded ncu page
    (the same kernel by its mangled name): placed memory-bound with the timeline's time,
    its work ncu's; the timeline's kernel carries the counters and the class they give."""
    t = _layernorm_timeline()
    [g] = t.kernels
    ks = ncu.parse_raw_csv(_page("layernorm.plain.csv"), PLAIN)
    counts = ncu.CounterReport(ks, calls=len(ks), how="recorded").totals()
    counts["dram_bytes"] = counts["dram_read_bytes"] + counts["dram_write_bytes"]
    placed, t2, notes = kernel_group_placements("layernorm", t, {g.name: counts}, MODEL)
    [p] = placed
    assert p.workload.source == COUNTED and p.limiter == "memory"
    assert p.workload.hbm_bytes == pytest.approx(1.506e9, rel=2e-3)
    assert p.measured_time_s == pytest.approx(g.time_per_call_s)
    assert "vectorized_layer_norm_kernel" in p.workload.name
    assert t2.kernels[0].counters["dram_bytes"] == counts["dram_bytes"] and t2.kernels[0].kernel_class == "memory"
    # a kernel ncu counted that the timeline lacks is placed by ncu's own time, said so
    placed, _, _ = kernel_group_placements("layernorm", t, {"other": counts}, MODEL)
    assert placed and "ncu's replay" in " ".join(placed[0].flags)
    assert not notes


def test_without_a_workload_the_calls_work_is_what_was_counted():
    wl = counted_workload("k", {"dram_read_bytes": 2e9, "dram_write_bytes": 1e9, "flops:bf16": 5e12,
                                "nvlink_tx_bytes": 3e6})
    assert wl.hbm_bytes == 3e9 and wl.flops == {"bf16": 5e12} and wl.link_bytes == {"nvlink": 3e6}
    assert wl.source == COUNTED


def test_compare_says_why_not_counted_and_keeps_timing(monkeypatch):
    """run_compare with --counters where ncu is missing: the note says so, the call is
    still timed and placed from its workload."""
    import types

    monkeypatch.setenv("LINKROOF_NCU", os.devnull + ".none")
    mod = types.ModuleType("lr_fake_prog")
    import numpy as np

    mod.f = lambda a: a
    mod.g = lambda: (np.ones(4, dtype=np.float32),)
    monkeypatch.setitem(sys.modules, "lr_fake_prog", mod)

    class Timer(C.Timer):
        def __init__(self, *a, **k):
            pass

        def sync(self):
            pass

        def time_calls(self, call, reps, ops_per_call=1, min_batch_s=0.0):
            for i in range(reps):
                call(i)
            return [1e-3] * reps

    monkeypatch.setattr(C, "CudaTimer", Timer)
    import factories

    out = C.run_compare("lr_fake_prog:f", "lr_fake_prog:g", reps=3, warmup=1, counters_on=False,
                        topology=factories.topology(), timeline=False, count_kernels=True,
                        workload_path=str(Path(__file__).parents[1] / "examples" / "scale_fp32.toml"))
    assert "not found" in out.counters_note and out.kernel_counts is None
    assert out.result.median_s == 1e-3 and out.placements[0].workload.source != COUNTED
    assert out.counters_note in out.notes


def _counted(name):
    return ncu.read_page(gzip.open(DATA / "ncu" / f"{name}.ncu.csv.gz", "rt").read())


@pytest.mark.parametrize("name, kernels, dram, flops", [
    ("scale", 1, 2.1231e9, {"fp32": 2.6844e8}), ("gemm1024", 1, 4.2135e6, {"bf16": 2 * 1024 ** 3}),
    ("layernorm", 1, 1.5133e9, {"fp32": 4.1208e9}), ("chain", 200, 1.8545e6, {"fp32": 200 * 2048})])
def test_pages_compare_counted_on_one_h200(name, kernels, dram, flops):
    """The pages `compare --counters --record-counters` wrote on one H200 (2026-12-02,
    benchmarks/one_gpu_counters.sh): each kernel's launches, DRAM bytes and FLOPs per
    data type per call; each page's kernel names are the CUPTI timeline's own (mangled),
    so each timeline kernel gets its counters."""
    rep = _counted(name)
    totals = rep.totals()
    assert totals["launches"] == kernels and totals["dram_bytes"] == pytest.approx(dram, rel=1e-3)
    for dtype, want in flops.items():
        assert totals[f"flops:{dtype}"] == pytest.approx(want, rel=1e-3)
    doc = json.loads(gzip.open(DATA / "cupti" / f"{name}.json.gz").read())
    t = T.summarize(*T.from_record(doc))
    placed, t2, _ = kernel_group_placements(name, t, rep.per_name(), MODEL)
    assert all(k.counters for k in t2.kernels if k.kind == "kernel")
    assert len(placed) == len(rep.per_name())
    assert all("timeline (CUPTI)" in " ".join(p.flags) for p in placed)


def test_counted_kernels_are_shown_in_the_cli_the_dashboard_and_the_report(tmp_path):
    """The layer norm with its counters: the CLI's per-kernel table and the dashboard's
    carry each kernel's DRAM bytes and FLOPs; the kernel's own placement is on the
    Roofline page and in the report beside the call's."""
    import dataclasses

    from rich.console import Console

    from linkroof.dashboard import app as A
    from linkroof.dashboard.report import report_html
    from linkroof.render import kernels_table
    from linkroof.roofline.baseline import kernel_placements

    rep = _counted("layernorm")
    t = _layernorm_timeline()
    call, _ = kernel_placements("layernorm", 437.3e-6, None, Workload(name="layernorm", hbm_bytes=1 << 30), MODEL,
                                bundled_profile(), timeline=t)
    kernels, t2, _ = kernel_group_placements("layernorm", t, rep.per_name(), MODEL)
    call[0] = dataclasses.replace(call[0], timeline=t2)
    con = Console(width=220, record=True)
    con.print(kernels_table(t2))
    text = con.export_text()
    assert "DRAM / call (ncu)" in text and "1,513.3 MB" in text and "fp32 4.12e+09" in text
    prof = dataclasses.replace(bundled_profile(), id="counters-test", placements=tuple(call + kernels))
    page = str(A.page_roofline(A.Data(str(tmp_path / "s.sqlite"), prof), None))
    assert "DRAM MB / call (ncu)" in page and "layernorm / vectorized_layer_norm_kernel" in page
    assert "layernorm / vectorized_layer_norm_kernel" in report_html(prof)
