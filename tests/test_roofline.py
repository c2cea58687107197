"""The machine model, workloads, placement, advice and their CLI, on the bundled 2xH200
profile and synthetic measurements. Pure arithmetic: no GPU."""

import json
import math

import factories
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import fakes
from linkroof.cli import cli
from linkroof.profiler.probe import probe_source
from linkroof.profiler.recording import replay_source
from linkroof.profiler.session import bundled_profile
from linkroof.roofline import spec as specs
from linkroof.roofline import workload as W
from linkroof.roofline.advise import advise
from linkroof.roofline.model import MachineModel
from linkroof.roofline.place import NO_LIMITER, place
from linkroof.schema import Workload

GB, T = 1e9, 1e12


@pytest.fixture(scope="module")
def ref():
    return bundled_profile()


@pytest.fixture(scope="module")
def model(ref):
    return MachineModel.from_profile(ref)


def test_spec_table_is_consistent():
    for key, s in specs.GPU_SPECS.items():
        assert s.source and s.hbm_bytes_per_s > 0 and s.hbm_bytes > 0, key
        assert all(v > 0 for v in s.flops.values()), key
        for low, high in (("fp32", "tf32"), ("tf32", "fp16"), ("fp16", "fp8"), ("fp8", "fp4")):
            if low in s.flops and high in s.flops:
                assert s.flops[low] < s.flops[high], (key, low, high)
        if s.nvlink_links:
            assert s.nvlink_bytes_per_s == s.nvlink_links * s.nvlink_bytes_per_s_per_link
    names = {"NVIDIA H200": "H200", "NVIDIA H100 80GB HBM3": "H100 SXM", "NVIDIA H100 PCIe": "H100 PCIe",
             "NVIDIA A100-SXM4-80GB": "A100 SXM 80GB", "NVIDIA A100-SXM4-40GB": "A100 SXM 40GB",
             "NVIDIA GH200 480GB": "GH200 (GPU)", "NVIDIA B200": "B200", "NVIDIA GB200": "GB200 (per GPU)",
             "NVIDIA L40S": "L40S", "NVIDIA B300 SXM6 AC": "B300"}
    for nvml, expected in names.items():
        assert specs.match_gpu(nvml).name.startswith(expected), nvml
    assert specs.match_gpu("NVIDIA GeForce RTX 4090") is None
    assert "fp16" not in specs.GPU_SPECS["B300"].flops  # unknown, never guessed


def test_unknown_gpu_falls_back_to_derived_or_unknown():
    t = probe_source(replay_source(fakes.pcie_box_4().recording(), "x"))
    import dataclasses

    gpus = tuple(dataclasses.replace(g, name="NVIDIA Mystery GPU") for g in t.gpus)
    t = dataclasses.replace(t, gpus=gpus)
    m = MachineModel.from_profile(factories.profile(topologies=[t]))
    fp32 = m.compute("fp32", "spec")
    assert fp32.kind == "derived" and "SMs" in fp32.basis
    assert fp32.value == pytest.approx(142 * 2520e6 * 256)  # L40S-like: 142 SMs x 2.52 GHz x 256
    assert m.compute("fp16", "spec") is None and m.hbm("spec").kind == "derived"


def test_model_from_reference(model, ref):
    assert model.compute("fp16", "spec").value == pytest.approx(989.5 * T)
    assert 790 * T <= model.compute("fp16").value <= model.compute("fp16", "spec").value
    assert model.hbm("spec").value == pytest.approx(4.8e12)
    assert model.hbm().value <= 4.8e12
    nv = model.find("link:nvlink", "spec")  # the data rate, with the line rate beside it
    assert nv.value == pytest.approx(450 * GB) and "line rate 478.1 GB/s" in nv.basis
    ce = model.find("link:nvlink", "measured", "ce")
    assert 393.8 * GB <= ce.value <= 450 * GB
    assert {r.mechanism for r in model.roofs if r.resource == "link:nvlink" and r.kind == "measured"} >= {"ce", "sm", "tma"}
    flagged = [r for r in model.roofs if any("identical GPUs" in f for f in r.flags)]  # read-only HBM: 3.93 / 4.51
    assert [(r.resource, r.mechanism) for r in flagged] == [("hbm", "read-only kernel")]
    hot = {(r.resource, r.mechanism) for r in model.roofs if any("measured while GPU" in f for f in r.flags)}
    assert ("compute:bf16", "gemm") in hot  # the reference's GEMMs ran at the power cap: the roofs say so
    assert all(not any("throttled" in w for w in m.warnings) for m in ref.measurements
               if m.spec.name == "local_read_bandwidth") and ("hbm", "read-only kernel") not in hot
    assert "identical GPUs differ by 15%" in flagged[0].flags[0]
    gpu0_read = max(m.bandwidth_bytes_per_s for m in ref.measurements
                    if m.spec.pattern == "local_read" and m.spec.devices == (0,))
    assert dict(flagged[0].per_device)[0] == pytest.approx(gpu0_read, rel=1e-9)
    assert model.hbm(gpu=0).value < model.hbm(gpu=1).value == model.hbm().value
    curve = next(c for c in model.curves if c.mechanism == "ce" and c.pattern == "p2p_write")
    assert curve.at(1 << 30) == pytest.approx(curve.peak(), rel=0.01)
    assert curve.at(1 << 16) < curve.at(1 << 24) < curve.at(1 << 30)
    ridges = {(d, r): v for d, r, v in model.ridge_points()}
    assert ridges[("fp16", "link:nvlink")] == pytest.approx(model.compute("fp16").value / ce.value)


def test_measured_above_spec_is_flagged():
    fake = factories.measurement("gemm_throughput", "compute", "gemm", (0,), 0, flops=2e12, dtype="fp16")  # 2000 TFLOP/s
    m = MachineModel.from_profile(factories.profile([fake]))
    assert any("above spec" in f for f in m.compute("fp16").flags)


def test_collective_formulas():
    from linkroof.roofline.collectives import link_bytes

    assert link_bytes("all_reduce", 1000, 4) == 1500
    assert link_bytes("all_gather", 1000, 4) == 750
    assert link_bytes("all_to_all", 1000, 8) == 875 and link_bytes("alltoall", 1000, 8) == 875
    assert link_bytes("broadcast", 1000, 8) == 1000
    with pytest.raises(W.WorkloadError, match="unknown collective"):
        W.collective("allsum", 1, 2)


def test_templates_and_overlap(model):
    w = W.allgather_gemm(8192, 8192, 8192, "fp16", 2)
    assert w.flops["fp16"] == pytest.approx(2 * 8192 ** 3 / 2)
    assert w.link_bytes["nvlink"] == pytest.approx(2 * 8192 * 8192 / 2)
    assert W.gemm_all_reduce(8, 8, 8, "bf16", 4).link_bytes["nvlink"] == pytest.approx(2 * 2 * 64 * 3 / 4)
    assert W.ring_attention(4096, 1024, "bf16", 4, causal=True).flops["bf16"] == pytest.approx(
        4 * 1024 * 4096 * 1024 * 0.5)
    moe = W.moe_dispatch_combine(4096, 4096, 64, 2, "bf16", 8)
    assert moe.link_bytes["nvlink"] == pytest.approx(2 * 2 * 4096 * 2 * 4096 * 7 / 8)



_REF = bundled_profile()
_REF_MODEL = MachineModel.from_profile(_REF)
# every verified single peer transfer over NVLink in the reference (sweeps included)
_PEER = [m for m in _REF.measurements if m.spec.mechanism in ("ce", "sm", "tma") and m.verified
         and m.spec.pattern in ("p2p_write", "p2p_read") and "parts" not in m.spec.params
         and m.spec.params.get("peer_access", True)]


def test_the_bound_test_sees_the_sweeps():
    assert len({m.spec.message_bytes for m in _PEER}) >= 20  # a sweep, not a couple of headline sizes


@settings(max_examples=60, deadline=None)
@given(m=st.sampled_from(_PEER), slower=st.floats(min_value=1.0, max_value=10.0))
def test_no_measured_transfer_beats_its_bound(m, slower):
    """A ceiling is the best a path was measured to do at that size: placing any measured
    transfer of that path and size at its own time gives a bound no longer than that time
    (fraction <= 1, no flag); placing it `slower` times slower gives 1/slower of the roofline."""
    wl = Workload("copy", link_bytes={"nvlink": float(m.spec.message_bytes)}, message_bytes=m.spec.message_bytes)
    p = place(wl, m.median_s, _REF_MODEL)
    assert p.bound_time_s <= m.median_s * 1.0001
    if p.fraction_of_roofline >= NO_LIMITER:
        assert p.limiter == "link:nvlink" and not p.flags
    else:  # a small message whose time is its latency: no roof limits it, and it says so
        assert p.limiter == "none" and [f[:24] for f in p.flags] == ["no throughput limiter: i"]
    slow = place(wl, m.median_s * slower, _REF_MODEL)
    assert slow.fraction_of_roofline == pytest.approx(p.fraction_of_roofline / slower, rel=1e-9)


@settings(max_examples=80, deadline=None)
@given(template=st.sampled_from([W.allgather_gemm, W.gemm_reduce_scatter, W.gemm_all_reduce]),
       m=st.sampled_from([512, 1024, 4096, 8192]), n=st.sampled_from([256, 1024, 8192, 65536]),
       k=st.sampled_from([256, 512, 4096, 65536]), dtype=st.sampled_from(["fp16", "bf16"]),
       ranks=st.sampled_from([2, 4, 8]))
def test_overlap_verdict_never_contradicts_the_placement(template, m, n, k, dtype, ranks):
    """The overlap verdict is the placement's own terms, and its threshold is where the
    verdict flips: at the threshold it can hide, just below it cannot."""
    from linkroof.roofline.place import OVERLAP_DIMENSION, overlap_note

    w = template(m, n, k, dtype, ranks)
    terms = place(w, 1.0, _REF_MODEL).terms_s
    note = overlap_note(w, _REF_MODEL)
    hides = terms["compute"] >= terms["link:nvlink"]
    assert ("communication can hide" in note) == hides
    dim = OVERLAP_DIMENSION[w.source]
    threshold = int(note.split(f"when {dim} >= ")[1].split(" ")[0].replace(",", ""))
    at = template(**{**dict(m=m, n=n, k=k, dtype=dtype, ranks=ranks), dim: threshold})
    t_at = place(at, 1.0, _REF_MODEL).terms_s
    assert t_at["compute"] >= t_at["link:nvlink"]
    if threshold > 1:
        below = template(**{**dict(m=m, n=n, k=k, dtype=dtype, ranks=ranks), dim: threshold - 1})
        t_below = place(below, 1.0, _REF_MODEL).terms_s
        assert t_below["compute"] < t_below["link:nvlink"]


def test_faster_than_roofline_is_flagged(model):
    p = place(W.collective("all_reduce", 1 << 30, 2), 1e-4, model)
    assert p.fraction_of_roofline > 1 and "faster than its measured roofline" in p.flags[0]
    p = place(Workload("fp8 only", flops={"fp8": 1e12}, hbm_bytes=1e9), 1e-3, model)
    assert p.limiter == "memory" and any("no measured compute ceiling for fp8" in f for f in p.flags)
    with pytest.raises(ValueError, match="nothing to bound"):
        place(Workload("empty"), 1.0, model)


@pytest.mark.parametrize("doc, message", [
    ({"workload": {"template": "gemm_magic"}}, "workload.template: unknown template 'gemm_magic'"),
    ({"workload": {"template": "allgather_gemm", "m": 1, "n": 1, "k": 1, "dtype": "fp16"}}, "workload.ranks: missing"),
    ({"workload": {"template": "allgather_gemm", "m": "big", "n": 1, "k": 1, "dtype": "fp16", "ranks": 2}},
     "workload.m: expected an integer, got 'big'"),
    ({"workload": {"flops": {"fp17": 1}}}, "workload.flops.fp17: unknown data type"),
    ({"workload": {"flops": {"fp16": "lots"}}}, "workload.flops.fp16: expected a number"),
    ({"workload": {"link_bytes": {"ethernet": 1}}}, "workload.link_bytes.ethernet: unknown link class"),
    ({"workload": {"hbm_bytes": -1}}, "workload.hbm_bytes: must not be negative"),
    ({"workload": {"colective": "all_reduce"}}, "workload.colective: not a key of an explicit"),
])
def test_workload_errors_name_the_key(doc, message):
    with pytest.raises(W.WorkloadError, match=message.replace("(", r"\(").replace(")", r"\)")):
        W.from_dict(doc)


def test_toml_file(tmp_path):
    path = tmp_path / "w.toml"
    path.write_text('[workload]\nname = "my all-reduce"\ncollective = "all_reduce"\nsize_bytes = 1073741824\nranks = 2\n')
    w = W.load_toml(path)
    assert w.name == "my all-reduce" and w.pattern == "all_reduce" and w.link_bytes["nvlink"] == 1 << 30
    path.write_text('[workload]\nname = "x"\nflops = { fp16 = 1e12 }\nhbm_bytes = 1e9\n')
    assert W.load_toml(path).flops == {"fp16": 1e12}
    path.write_text("[workload\n")
    with pytest.raises(W.WorkloadError, match="not valid TOML"):
        W.load_toml(path)


def test_advise(ref):
    a = advise(ref, 64 << 10, "p2p_write")
    # SM and TMA with the same parallelism for the message (64 KiB: 8 SM blocks of 512 threads, 16 TMA
    # blocks of 4 KiB chunks): within 10 % of each other on the 2xH200 reference, the shapes said
    assert a.fastest.mechanism in ("sm", "tma") and a.margin < 1.1
    assert any("sm at 64 KiB: blocks 8, threads 512, active threads 4096" in n for n in a.notes)
    ce = next(m for m in a.mechanisms if m.mechanism == "ce")
    assert ce.size_90 is not None and ce.size_50 < ce.size_90
    big = advise(ref, 1 << 30, "p2p_write")
    assert big.fastest.mechanism == "ce"
    coll = advise(ref, 1 << 20, "all_reduce")  # the reference has NCCL's sweep
    assert sorted(m.mechanism for m in coll.mechanisms) == ["nccl bf16", "nccl fp16", "nccl fp32"]
    assert coll.fastest.size_50 < coll.fastest.size_90
    # one data type asked for: its row alone, its time the profile's own at this size
    fp32 = advise(ref, 1 << 20, "all_reduce", dtype="float")
    assert [m.mechanism for m in fp32.mechanisms] == ["nccl fp32"] and fp32.mechanisms[0].dtype == "fp32"
    none = advise(ref, 1 << 20, "one_to_all")
    assert not none.mechanisms and "no message-size sweep" in none.notes[0]


def test_cli_roofline_and_advise(tmp_path, store_path):
    r = CliRunner()
    res = r.invoke(cli, ["roofline", "--profile", "reference"])
    assert res.exit_code == 0 and "link:nvlink" in res.output and "450.0 GB/s" in res.output
    doc = json.loads(r.invoke(cli, ["roofline", "--json"]).stdout)
    assert {x["resource"] for x in doc["roofs"]} >= {"compute:fp16", "hbm", "link:nvlink", "link:host"}
    toml = tmp_path / "w.toml"
    toml.write_text('[workload]\ntemplate = "allgather_gemm"\nm = 8192\nn = 8192\nk = 8192\ndtype = "fp16"\nranks = 2\n')
    html = tmp_path / "roof.html"
    res = r.invoke(cli, ["roofline", "--workload", str(toml), "--time", "1.5ms", "--plot", str(html)])
    assert res.exit_code == 0, res.output
    assert "compute" in res.output and "Overlap" in res.output and html.stat().st_size > 100_000
    assert r.invoke(cli, ["roofline", "--workload", str(toml)]).exit_code == 2
    assert r.invoke(cli, ["roofline", "--workload", str(toml), "--time", "soon"]).exit_code == 2
    assert r.invoke(cli, ["roofline", "--plot", str(tmp_path / "x.jpeg")]).exit_code == 1
    res = r.invoke(cli, ["advise", "--size", "64K"])
    assert res.exit_code == 0 and "Fastest: sm" in res.output
    adv = json.loads(r.invoke(cli, ["advise", "--size", "1G", "--json"]).stdout)
    assert adv["fastest"] == "ce"
    assert r.invoke(cli, ["advise", "--size", "64Q"]).exit_code == 2
    res = r.invoke(cli, ["advise", "--size", "1M", "--pattern", "one_to_all"])
    assert res.exit_code == 1 and "no message-size sweep" in res.output


def test_roofline_figure(model):
    from linkroof.dashboard.figures import bandwidth_sweep_figure, roofline_figure

    w = W.allgather_gemm(8192, 8192, 8192, "fp16", 2)
    fig = roofline_figure(model, [place(w, 1.5e-3, model)])
    by_name = {t.name: t for t in fig.data}
    fp16 = [t for t in fig.data if t.legendgroup == "fp16"]
    spec, meas = sorted(fp16, key=lambda t: t.line.dash != "dash")
    assert spec.name.startswith("fp16 spec: 989.5 TFLOP/s | NVLink 450.0") and spec.line.dash == "dash"
    assert meas.name.startswith("fp16 measured: 814.2 TFLOP/s | NVLink 396.3") and meas.line.dash == "solid"
    assert spec.line.color == meas.line.color  # one colour per data type
    # the measured roof bends at its ridge: R / B FLOP per byte, where the slope meets the flat part
    ridge = 813.7e12 / 396.3e9
    assert meas.x[1] == pytest.approx(ridge, rel=1e-3) and meas.y[1] == pytest.approx(813.7e12, rel=1e-3)
    assert meas.y[0] == pytest.approx(meas.x[0] * 396.3e9, rel=1e-3)
    assert any(x == pytest.approx(ridge, rel=1e-3) for x in by_name["ridge points"].x)
    placed = by_name["placed workloads"]
    assert placed.mode == "markers+text" and placed.text[0].startswith("all-gather + GEMM")
    assert fig.layout.xaxis.type == "log" and "FLOP per NVLink byte" in fig.layout.xaxis.title.text
    assert all(t.endswith("FLOP/s") for t in fig.layout.yaxis.ticktext)  # one style of tick label
    sweep = bandwidth_sweep_figure(model, "p2p_write")
    assert {t.name.split()[0] for t in sweep.data if t.name} >= {"ce", "sm", "tma"}
    assert not math.isnan(sweep.data[0].y[-1])


def test_collectives_over_several_hosts_are_network_figures():
    import dataclasses

    import fakes
    from linkroof.profiler.probe import probe_source
    from linkroof.profiler.recording import replay_source

    hgx = probe_source(replay_source(fakes.hgx_h100_8().recording(), "hgx"))
    other = dataclasses.replace(hgx, host=dataclasses.replace(hgx.host, hostname="hgx2"))
    m = factories.measurement("nccl_all_reduce", "nccl", "all_reduce", tuple(range(16)), times=(0.05,) * 5,
                              busbw=2 * 15 / 16, host="hgx")
    model = MachineModel.from_profile(factories.profile([m], [hgx, other]))
    net = model.find("link:network", "measured", "nccl")
    assert net is not None and net.value == pytest.approx((1 << 30) / 0.05 * 30 / 16)
    assert model.find("link:network", "spec").value == pytest.approx(50e9)  # 400 Gb/s NICs
    single = MachineModel.from_profile(factories.profile([m], [hgx]))
    assert single.find("link:nvlink", "measured", "nccl") is not None


def test_a_profile_of_another_machine_is_refused(tmp_path, monkeypatch, no_gpu):
    import factories

    toml = tmp_path / "w.toml"
    toml.write_text('[workload]\ntemplate = "allgather_gemm"\nm = 8192\nn = 8192\nk = 8192\ndtype = "fp16"\nranks = 2\n')
    args = ["--store", str(tmp_path / "s.sqlite"), "roofline", "--profile", "reference", "--workload", str(toml),
            "--time", "1.5ms"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0 and "Using profile 2026" in res.stderr and "No GPU here" in res.stderr
    monkeypatch.setattr("linkroof.profiler.probe.probe", lambda replay=None, record=None: factories.topology("hgx_h100_8"))
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 1 and "describes another machine" in res.stderr and "2 GPUs in the profile, 8 here" in res.stderr
    res = CliRunner().invoke(cli, args + ["--force"])
    assert res.exit_code == 0 and "--force" in res.stderr
    monkeypatch.setattr("linkroof.profiler.probe.probe", lambda replay=None, record=None: factories.topology("h200x2"))
    assert CliRunner().invoke(cli, args).exit_code == 0


def test_machine_differences_name_what_differs():
    import dataclasses

    import factories
    from linkroof.roofline.summaries import machine_differences

    a = factories.topology("h200x2")
    assert machine_differences(a, a) == []
    g0 = a.gpus[0]
    down = dataclasses.replace(g0, nvlinks=tuple(dataclasses.replace(n, active=False) if n.index < 2 else n
                                                 for n in g0.nvlinks))
    b = dataclasses.replace(a, gpus=(down,) + a.gpus[1:])
    assert machine_differences(a, b) == ["GPU0: 18 active NVLinks in the profile, 16 here"]


def test_advise_never_joins_host_memory_kinds_and_answers_in_time():
    import factories

    ms = [factories.measurement("h2d_bandwidth", "ce", "h2d", (0,), size, (size / bw,) * 3, host_memory=kind)
          for kind, bw in (("pinned", 55e9), ("pageable", 8e9)) for size in (128 << 20, 512 << 20)]
    a = advise(factories.profile(ms), 256 << 20, "h2d")
    got = {m.mechanism: m.bandwidth_bytes_per_s for m in a.mechanisms}
    assert got == {"ce (host_memory=pageable)": pytest.approx(8e9), "ce (host_memory=pinned)": pytest.approx(55e9)}
    tiny = advise(_REF, 4, "p2p_write")
    assert all(m.time_s > 1e-7 for m in tiny.mechanisms)  # a time where the rate rounds to 0.0 GB/s
    assert any("kernels this profile measured" in n and "sm at " in n and "ce at" not in n for n in tiny.notes)
    with pytest.raises(ValueError, match="at least 1 byte"):
        advise(_REF, 0, "p2p_write")


@pytest.mark.parametrize("doc, message", [
    ({"workload": {"hbm_bytes": 1e9, "link_bytes": {"bogus": 1}}}, "link_bytes.bogus: unknown link class"),
    ({"workload": {"collective": "all_reduce", "size_bytes": 1024, "ranks": 2, "link": "bogus"}}, "link: 'bogus' is not one of"),
    ({"workload": {"collective": "all_reduce", "size_bytes": 1024, "ranks": 2, "link": 5}}, "link: expected a line of text"),
    ({"workload": {"template": "ring_attention", "seq": 1024, "hidden": 64, "dtype": "bf16", "ranks": 2,
                   "causal": "no"}}, "causal: expected true or false"),
    ({"workload": {"template": "moe_dispatch_combine", "tokens": 1024, "hidden": 64, "experts": 8, "top_k": 16,
                   "dtype": "bf16", "ranks": 2}}, "top_k: 16 is more than the 8 experts"),
    ({"workload": {"flops": {"fp16": float("inf")}}}, "more than the 1e\\+18"),
    ({"workload": {"hbm_bytes": float("inf")}}, "more than the 1e\\+18"),
    ({"workload": {"hbm_bytes": 10 ** 5000}}, "more than the 1e\\+18"),
    ({"workload": {"collective": "all_reduce", "size_bytes": 1024, "ranks": 2, "m": 3}}, "m: not a key of a collective"),
    ({"workload": {"template": "allgather_gemm", "m": 8, "n": 8, "k": 8, "dtype": "bf16", "ranks": 2,
                   "hbm_bytes": 5}}, "hbm_bytes: not a key of a allgather_gemm template"),
    ({"workload": {"collective": "all_reduce", "size_bytes": 1024, "ranks": 100000}}, "ranks: 100000 is more than"),
    ({"workload": {"collective": "all_teleport", "size_bytes": 1024, "ranks": 2}}, "unknown collective"),
    ({"workload": {"hbm_bytes": 1e9, "pattern": "zigzag"}}, "unknown pattern"),
    ({"workload": {"hbm_bytes": 1e9, "name": "a\x1b[31mred"}}, "expected a line of text"),
])
def test_workload_values_must_mean_something(doc, message):
    """Every key checked against what its form of workload accepts, every value against
    its meaning (links by name, booleans as booleans, top_k at most the experts, numbers
    finite and bounded)."""
    with pytest.raises(W.WorkloadError, match=message):
        W.from_dict(doc)
