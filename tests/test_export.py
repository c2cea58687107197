"""`linkroof export` on the bundled 2 x H200 profile: each format in the shape its
tool's loader reads (the loaders' own code runs on them in benchmarks/export_loaders.py,
on the fetched sources), every figure with its provenance, the brief under 2 KB."""

import json
import runpy
import tomllib

import pytest
from click.testing import CliRunner

from linkroof.cli import cli
from linkroof.profiler.session import bundled_profile
from linkroof.roofline import export as E


@pytest.fixture(scope="module")
def profile():
    return bundled_profile()


@pytest.fixture(scope="module")
def fs(profile):
    return E.facts(profile)


def test_every_figure_has_its_provenance_and_measured_ones_their_clock(fs):
    """Issue 44, item 2: `assert f.clock` held for any text (clock_text never returns
    ""). The bundled profile predates sampling: every measured roof, launch and sync
    figure says "clock not sampled", a spec figure no clock at all; a sampled state reads
    "<state> clock at <MHz> MHz"."""
    from linkroof.schema import ClockState

    assert {f.provenance for f in fs} == {"measured", "spec", "nvml"}
    clocked = 0
    for f in fs:
        assert f.value == f.value or f.topic == "gpu", f
        if f.provenance == "measured" and f.topic in ("hbm", "compute", "link", "launch", "sync"):
            assert f.clock == "clock not sampled", f
            clocked += 1
        if f.provenance == "spec":
            assert f.clock == "", f
    assert clocked >= 5  # HBM, compute, link, launch and sync figures at least
    assert E.clock_text(ClockState(state="burst", samples=10, sm_mhz_median=1980.0)) == "burst clock at 1980 MHz"
    assert E.clock_text(ClockState(state="sustained", samples=10, sm_mhz_median=1469.6)) == \
        "sustained clock at 1470 MHz"
    assert E.clock_text(ClockState(state="unknown", samples=0)) == "clock not sampled"
    hbm = [f for f in fs if f.topic == "hbm"]
    assert max(f.value for f in hbm if f.provenance == "measured") == pytest.approx(4510.3e9, rel=1e-4)
    assert [f.value for f in hbm if f.provenance == "spec"] == [4.8e12]
    assert any(f.topic == "nccl" and f.name.startswith("all_reduce") and f.size == 256 << 20 for f in fs)


def test_the_brief_fits_a_prompt(profile, fs):
    text = E.brief(profile, fs)
    assert len(text.encode()) < 2048
    for want in ("2 x NVIDIA H200", "HBM: 4510.3 GB/s", "spec 4800.0 GB/s", "NVLink per GPU, one direction: spec 450.0",
                 "NCCL busbw, 2 ranks", "all_reduce nccl bf16: 0.648/9.11/74.8/247/323", "Launch: graph 717 ns"):
        assert want in text, want


def test_pkb_hardware_profile_fills_pkbs_templates(profile, fs):
    """ParallelKernelBench's generate_kernel._hardware_context_body: the profile table's
    values, as str, into templates.hardware's four format strings."""
    doc = tomllib.loads(E.pkb_toml(profile, "h200_2_linkroof", fs))
    prof = doc["hardware_profiles"]["h200_2_linkroof"]
    assert set(prof) == {"profile_display", "gpu_name", "gpu_architecture", "gpu_specs_bullets",
                         "gpu_definitions_bullets", "gpu_best_practices_bullets"}
    ctx = {k: str(v) for k, v in prof.items()}
    specs = "The GPU that will run the kernel is NVIDIA {gpu_name}, {gpu_architecture} architecture.\n\n" \
            "{gpu_specs_bullets}".format(**ctx)
    assert "NVIDIA H200, Hopper architecture" in specs and "NVIDIA NVIDIA" not in specs and "- HBM: 4510.3 GB/s" in specs
    assert all(x.startswith("- ") for x in prof["gpu_best_practices_bullets"].strip().splitlines())


def test_kernelbench_specs_load_as_its_prompt_constructor_reads_them(profile, fs, tmp_path):
    """KernelBench's _gpu_context_from_gpu_specs: runpy the module, GPU_SPEC_INFO[name]
    (with 'GPU Architecture'), GPU_DEFINITIONS, GPU_BEST_PRACTICES; bullets of strings."""
    path = tmp_path / "gpu_specs.py"
    path.write_text(E.kernelbench_py(profile, "H200-linkroof", fs))
    mod = runpy.run_path(str(path))
    info, defs, best = mod["GPU_SPEC_INFO"], mod["GPU_DEFINITIONS"], mod["GPU_BEST_PRACTICES"]
    cur = info["H200-linkroof"]
    assert cur["GPU Architecture"] == "Hopper" and defs and best
    assert all(isinstance(v, str) for v in cur.values())
    bullets = "\n".join(f"- We have {v} of {k}." for k, v in cur.items() if k != "GPU Architecture")
    assert "- We have 851 dense (measured, clock not sampled); spec 990 dense of BFLOAT16 Tensor Core TFLOPS." in bullets
    assert "with sparsity" not in bullets  # dense, as the figures a kernel can reach
    assert any("NVLink" in k for k in cur) and any(k.startswith("NCCL all_reduce") for k in cur)


def test_tracelens_arch_has_the_keys_its_roofline_reads(profile, fs):
    arch = json.loads(E.render(profile, "tracelens", "H200x2-linkroof", fs))
    assert arch["name"] == "H200x2-linkroof" and arch["mem_bw_gbps"] == pytest.approx(4510.3)
    maf = arch["max_achievable_tflops"]
    assert maf["matrix_bf16"] == pytest.approx(851.3) and maf["vector_fp32"] == pytest.approx(64.8)
    assert all(isinstance(v, float) for v in maf.values())
    assert set(arch["_provenance"]) >= {"mem_bw_gbps", "max_achievable_tflops.matrix_bf16"}
    assert arch["link_bw_gbps"]["NVLink one direction (ce)"][0]["provenance"].startswith("measured")


def test_the_cli_writes_all_four_and_json(tmp_path):
    run = CliRunner().invoke
    res = run(cli, ["export", "--profile", "reference", "--format", "all", "--out", str(tmp_path / "x")])
    assert res.exit_code == 0, res.output
    names = sorted(p.name for p in (tmp_path / "x").iterdir())
    assert names == ["H200x2-linkroof.json", "brief.txt", "gpu_specs.py", "pkb_hardware_profile.toml"]
    res = run(cli, ["export", "--profile", "reference", "--json"])
    rows = json.loads(res.stdout)
    assert res.exit_code == 0 and {"topic", "name", "value", "unit", "provenance", "clock", "basis"} <= set(rows[0])
    res = run(cli, ["export", "--profile", "reference", "--format", "all"])
    assert res.exit_code != 0 and "give --out FOLDER" in res.output
