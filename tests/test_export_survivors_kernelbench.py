"""`linkroof export` for KernelBench (gpu_specs.py) and ParallelKernelBench (prompts.toml
table), on small hand-built machines whose every figure is worked out by hand: which
GPU's name and architecture are written, the HBM and dense-compute entries with and
without their spec, the link, curve, NCCL and launch lines as GPU_SPEC_INFO keys, the
module's layout (key order as KernelBench iterates it, 110 columns), the TOML table's
multi-line strings, and the guards that refuse a file which would not read back."""

import dataclasses
import runpy
import tomllib

import pytest

from linkroof.profiler.session import bundled_profile
from linkroof.roofline import export as E
from linkroof.roofline.export import Fact
from linkroof.schema import Unknown

CLOCK = "burst clock at 1980 MHz"
SIZES_KEY = " bandwidth at 4K/64K/1M/16M/256M B"


@pytest.fixture(scope="module")
def bundled():
    return bundled_profile()


def machine(bundled, gpus, pid="20261204-120000-abc123"):
    """The bundled profile's host with `gpus` in place of its two H200s and no
    measurements (the figures come from the hand-built facts)."""
    topo = dataclasses.replace(bundled.topology, gpus=tuple(gpus))
    return dataclasses.replace(bundled, id=pid, topologies=(topo,), measurements=(), label="")


def h100(bundled, **kw):
    g = bundled.topology.gpus[0]
    return dataclasses.replace(g, **{"name": "NVIDIA H100 80GB HBM3", "architecture": "Hopper", "sm_count": 132,
                                     **kw})


def small_facts():
    """One H100: HBM measured 3000 GB/s against a 3350 GB/s spec, bf16 measured
    851.5 TFLOP/s (spec 989.4), fp8 spec only, fp32 measured only, NVLink spec 450 and
    measured by the copy engines, one copy curve with its half-peak size, one NCCL curve
    at all five sizes, launch and sync terms, one saturation figure."""
    m = "measured"
    return [
        Fact("gpu", "GPU", 1.0, "count", "nvml", basis="NVIDIA H100 80GB HBM3, Hopper, compute capability 9.0, "
             "1 host(s)"),
        Fact("gpu", "SMs", 132.0, "count", "nvml"),
        Fact("gpu", "memory", 85899345920.0, "B", "nvml"),
        Fact("hbm", "HBM bandwidth (read-only kernel)", 3.0e12, "B/s", m, CLOCK),
        Fact("hbm", "HBM bandwidth", 3.35e12, "B/s", "spec"),
        Fact("compute", "bf16 dense (gemm)", 851.5e12, "FLOP/s", m, CLOCK),
        Fact("compute", "bf16 dense", 989.4e12, "FLOP/s", "spec"),
        Fact("compute", "fp8 dense", 1978.9e12, "FLOP/s", "spec"),
        Fact("compute", "fp32 dense (fma)", 51.2e12, "FLOP/s", m, CLOCK),
        Fact("link", "NVLink one direction", 450e9, "B/s", "spec"),
        Fact("link", "NVLink one direction (ce)", 396.3e9, "B/s", m, CLOCK),
        Fact("curve", "NVLink p2p_read ce", 63.1e9, "B/s", m, basis="bandwidth", size=1 << 20),
        Fact("curve", "NVLink p2p_read ce", 292e9, "B/s", m, basis="bandwidth", size=16 << 20),
        Fact("curve", "NVLink p2p_read ce", 387e9, "B/s", m, basis="bandwidth", size=256 << 20),
        Fact("curve", "NVLink p2p_read ce: half of its peak from", float(8 << 20), "B", m),
        Fact("nccl", "all_reduce nccl bf16", 0.648e9, "B/s", m, basis="busbw", size=4096),
        Fact("nccl", "all_reduce nccl bf16", 9.11e9, "B/s", m, basis="busbw", size=65536),
        Fact("nccl", "all_reduce nccl bf16", 74.8e9, "B/s", m, basis="busbw", size=1 << 20),
        Fact("nccl", "all_reduce nccl bf16", 247e9, "B/s", m, basis="busbw", size=16 << 20),
        Fact("nccl", "all_reduce nccl bf16", 323e9, "B/s", m, basis="busbw", size=256 << 20),
        Fact("launch", "graph", 717e-9, "s", m, CLOCK),
        Fact("launch", "cuda", 1.59e-6, "s", m, CLOCK),
        Fact("sync", "grid", 998e-9, "s", m, CLOCK),
        Fact("saturation", "sm p2p_read: blocks for 90% of its peak", 8.0, "blocks", m, basis="peak 376.2 GB/s"),
    ]


# every entry worked out by hand from small_facts(), in the order KernelBench's bullets list them
SMALL_INFO = {
    "GPU Architecture": "Hopper",
    "GPU Memory": "85.9 GB (NVML)",  # 85899345920 B in decimal GB
    "Memory Bandwidth": f"3000.0 GB/s (measured, {CLOCK}); spec 3350.0 GB/s",
    "FP8 Tensor Core TFLOPS": "not measured; spec 1979 dense",  # 1978.9 rounds up
    "BFLOAT16 Tensor Core TFLOPS": f"852 dense (measured, {CLOCK}); spec 989 dense",  # 851.5 -> 852 (half to even)
    "FP32 TFLOPS": f"51 dense (measured, {CLOCK})",  # no spec: nothing after it
    "NVLink bandwidth per GPU, one direction": f"spec 450.0 GB/s; measured ce 396.3 GB/s [{CLOCK}]",
    "SM blocks to reach 90 % of a mechanism's peak": "sm p2p_read 8",
    "NCCL all_reduce nccl bf16" + SIZES_KEY: "0.648/9.11/74.8/247/323 GB/s",
    "Launch": "graph 717 ns, cuda 1590 ns; sync: grid 998 ns",
    "NVLink p2p_read ce" + SIZES_KEY: "-/-/63.1/292/387 GB/s; half peak from 8 MiB",
    "Number of SMs": "132 (NVML)",
}

SMALL_PRACTICES = [
    "NVLink p2p_read ce reaches half its peak at 8 MiB messages (measured): batch smaller transfers.",
    "sm p2p_read needs 8 blocks for 90 % of its peak (measured): leave the other SMs to compute when overlapping.",
    "Plan on 3000.0 GB/s of HBM bandwidth, not the spec's 3350.0 GB/s: 90% of it is what a kernel here "
    "reached (measured).",  # 3000 / 3350 = 0.896
]


def load(tmp_path, text):
    path = tmp_path / "gpu_specs.py"
    path.write_text(text)
    return runpy.run_path(str(path))


# ------------------------------------------------------------------ kernelbench_specs


def test_small_machine_every_entry_and_its_order(bundled):
    p = machine(bundled, [h100(bundled)])
    d = E.kernelbench_specs(p, "H100-linkroof", small_facts())
    assert d == SMALL_INFO
    assert list(d) == list(SMALL_INFO)


def test_the_first_gpu_is_the_one_described(bundled):
    """GPU 0's architecture and SM count, not GPU 1's (a mixed host)."""
    b200 = dataclasses.replace(h100(bundled), index=1, name="NVIDIA B200", architecture="Blackwell", sm_count=148)
    d = E.kernelbench_specs(machine(bundled, [h100(bundled), b200]), "k", small_facts())
    assert d["GPU Architecture"] == "Hopper" and d["Number of SMs"] == "132 (NVML)"
    one = E.kernelbench_specs(machine(bundled, [h100(bundled)]), "k", small_facts())
    assert one["GPU Architecture"] == "Hopper" and one["Number of SMs"] == "132 (NVML)"


def test_no_gpu_and_no_figures_is_unknown_architecture_only(bundled):
    """A topology with no GPU (e.g. an import) and no facts: just the architecture,
    'unknown'; no memory, bandwidth, compute or SM entries."""
    p = machine(bundled, [])
    assert E.kernelbench_specs(p, "k", []) == {"GPU Architecture": "unknown"}


def test_unknown_architecture_and_sm_count_from_nvml(bundled):
    g = h100(bundled, architecture=Unknown("NVML: Not Supported"), sm_count=Unknown("NVML: Not Supported"))
    d = E.kernelbench_specs(machine(bundled, [g]), "k", small_facts())
    assert d["GPU Architecture"] == "unknown"
    assert "Number of SMs" not in d


def test_memory_entry_only_for_a_known_size(bundled):
    p = machine(bundled, [h100(bundled)])
    fs = [f for f in small_facts() if f.name != "memory"]
    assert "GPU Memory" not in E.kernelbench_specs(p, "k", fs)
    nan = fs[:2] + [Fact("gpu", "memory", float("nan"), "B", "nvml")] + fs[2:]
    assert "GPU Memory" not in E.kernelbench_specs(p, "k", nan)
    tb = [Fact("gpu", "memory", 141e9 + 4e8, "B", "nvml")]
    assert E.kernelbench_specs(p, "k", tb)["GPU Memory"] == "141.4 GB (NVML)"


def test_hbm_measured_only_has_no_spec_part(bundled):
    p = machine(bundled, [h100(bundled)])
    fs = [f for f in small_facts() if not (f.topic == "hbm" and f.provenance == "spec")]
    assert E.kernelbench_specs(p, "k", fs)["Memory Bandwidth"] == f"3000.0 GB/s (measured, {CLOCK})"


def test_hbm_spec_only_says_not_measured(bundled):
    p = machine(bundled, [h100(bundled)])
    fs = [f for f in small_facts() if not (f.topic == "hbm" and f.provenance == "measured")]
    assert E.kernelbench_specs(p, "k", fs)["Memory Bandwidth"] == "not measured; spec 3350.0 GB/s"
    none = [f for f in small_facts() if f.topic != "hbm"]
    assert "Memory Bandwidth" not in E.kernelbench_specs(p, "k", none)


def test_best_hbm_of_each_provenance(bundled):
    """Two measured mechanisms and two spec figures: the highest of each, each with its
    own tag."""
    p = machine(bundled, [h100(bundled)])
    fs = [Fact("hbm", "HBM bandwidth (copy)", 2.9e12, "B/s", "measured", "sustained clock at 1470 MHz"),
          Fact("hbm", "HBM bandwidth (read-only kernel)", 3.1e12, "B/s", "measured", CLOCK),
          Fact("hbm", "HBM bandwidth", 3.35e12, "B/s", "spec"),
          Fact("hbm", "HBM bandwidth (PCIe card)", 2.0e12, "B/s", "spec")]
    assert E.kernelbench_specs(p, "k", fs)["Memory Bandwidth"] == f"3100.0 GB/s (measured, {CLOCK}); spec 3350.0 GB/s"


def test_compute_rounds_tflops_by_1e12(bundled):
    """851.5e12 FLOP/s is 851.5 TFLOP/s exactly: written 852 (a divisor a shade above
    1e12 would give 851.49... and 851)."""
    p = machine(bundled, [h100(bundled)])
    fs = [Fact("compute", "tf32 dense (gemm)", 433.5e12, "FLOP/s", "measured", CLOCK)]
    assert E.kernelbench_specs(p, "k", fs)["TF32 Tensor Core TFLOPS"] == f"434 dense (measured, {CLOCK})"


def test_a_colon_in_a_mechanism_stays_in_the_link_value(bundled):
    """The link line is cut at its first colon only: a mechanism named with a colon
    stays whole in the value."""
    p = machine(bundled, [h100(bundled)])
    fs = [Fact("link", "NVLink one direction", 450e9, "B/s", "spec"),
          Fact("link", "NVLink one direction (nccl:ring)", 370.7e9, "B/s", "measured", CLOCK)]
    d = E.kernelbench_specs(p, "k", fs)
    assert d["NVLink bandwidth per GPU, one direction"] == f"spec 450.0 GB/s; measured nccl:ring 370.7 GB/s [{CLOCK}]"


def test_a_colon_in_a_curve_name_does_not_stop_the_export(bundled):
    """A variant value with a colon in a curve's name (host_memory=numa:1): the entry is
    still written, its figures in it."""
    p = machine(bundled, [h100(bundled)])
    fs = [Fact("curve", "host link h2d ce (host_memory=numa:1)", 1.5e9, "B/s", "measured", basis="bandwidth",
               size=4096)]
    d = E.kernelbench_specs(p, "k", fs)
    assert d["host link h2d ce (host_memory=numa:1)" + SIZES_KEY] == "1.5/-/-/-/- GB/s"


def test_a_colon_in_a_curve_name_with_its_half_peak(bundled):
    """The name is cut from its row at the last ': ', so a colon inside the name stays in
    the key, and the half-peak part keeps its unit after the row."""
    p = machine(bundled, [h100(bundled)])
    fs = [Fact("curve", "host link h2d ce (host_memory=numa:1)", 1.5e9, "B/s", "measured", basis="bandwidth",
               size=4096),
          Fact("curve", "host link h2d ce (host_memory=numa:1): half of its peak from", 65536, "B", "measured")]
    d = E.kernelbench_specs(p, "k", fs)
    key = "host link h2d ce (host_memory=numa:1)" + SIZES_KEY
    assert d[key] == "1.5/-/-/-/- GB/s; half peak from 64 KiB"


def test_curve_row_without_half_peak_gets_its_unit(bundled):
    p = machine(bundled, [h100(bundled)])
    fs = [f for f in small_facts() if f.topic == "curve" and f.size is not None]
    d = E.kernelbench_specs(p, "k", fs)
    assert d["NVLink p2p_read ce" + SIZES_KEY] == "-/-/63.1/292/387 GB/s"


def test_bundled_h200_entries(bundled):
    """The bundled 2 x H200: the entries test_export's figures give."""
    d = E.kernelbench_specs(bundled, "H200-linkroof", E.facts(bundled))
    assert d["GPU Architecture"] == "Hopper" and d["GPU Memory"] == "150.8 GB (NVML)"
    assert d["Memory Bandwidth"] == "4510.3 GB/s (measured, clock not sampled); spec 4800.0 GB/s"
    assert d["FP8 Tensor Core TFLOPS"] == "not measured; spec 1979 dense"
    assert d["NCCL all_reduce nccl bf16" + SIZES_KEY] == "0.648/9.11/74.8/247/323 GB/s"
    assert d["Launch"].startswith("graph 717 ns, ") and "; sync: " in d["Launch"]
    assert d["NVLink p2p_read ce" + SIZES_KEY] == "-/-/63.1/292/387 GB/s; half peak from 8 MiB"
    assert d["Number of SMs"] == "132 (NVML)"


# ------------------------------------------------------------------ kernelbench_py


def test_module_as_kernelbench_reads_it(bundled, tmp_path):
    mod = load(tmp_path, E.kernelbench_py(machine(bundled, [h100(bundled)]), "H100-linkroof", small_facts()))
    assert list(mod["GPU_SPEC_INFO"]) == ["H100-linkroof"]
    cur = mod["GPU_SPEC_INFO"]["H100-linkroof"]
    assert cur == SMALL_INFO and list(cur) == list(SMALL_INFO)  # its bullets in this order
    assert mod["GPU_DEFINITIONS"] == E.DEFINITIONS and list(mod["GPU_DEFINITIONS"]) == list(E.DEFINITIONS)
    assert list(mod["GPU_DEFINITIONS"])[0] == "measured"
    assert mod["GPU_BEST_PRACTICES"] == SMALL_PRACTICES
    assert mod["__doc__"] == ("GPU specs for KernelBench's prompts: linkroof export --format kernelbench, profile "
                              "20261204-120000-abc123.\nMeasured figures say so and name their clock state; spec "
                              "figures are the data sheet's, dense.")


def test_module_with_no_practices_says_measure_first(bundled, tmp_path):
    mod = load(tmp_path, E.kernelbench_py(machine(bundled, []), "k", []))
    assert mod["GPU_SPEC_INFO"] == {"k": {"GPU Architecture": "unknown"}}
    assert mod["GPU_BEST_PRACTICES"] == ["Measure before optimising."]


# the small machine's module as written: pprint at width 110, dicts in insertion order
SMALL_MODULE = (
    '"GPU specs for KernelBench\'s prompts: linkroof export --format kernelbench, profile 20261204-120000-abc123.\\nMeasured figures say so and name their clock state; spec figures are the data sheet\'s, dense."' "\n"
    '' "\n"
    "GPU_SPEC_INFO = {'H100-linkroof': {'GPU Architecture': 'Hopper'," "\n"
    "                   'GPU Memory': '85.9 GB (NVML)'," "\n"
    "                   'Memory Bandwidth': '3000.0 GB/s (measured, burst clock at 1980 MHz); spec 3350.0 GB/s'," "\n"
    "                   'FP8 Tensor Core TFLOPS': 'not measured; spec 1979 dense'," "\n"
    "                   'BFLOAT16 Tensor Core TFLOPS': '852 dense (measured, burst clock at 1980 MHz); spec 989 '" "\n"
    "                                                  'dense'," "\n"
    "                   'FP32 TFLOPS': '51 dense (measured, burst clock at 1980 MHz)'," "\n"
    "                   'NVLink bandwidth per GPU, one direction': 'spec 450.0 GB/s; measured ce 396.3 GB/s '" "\n"
    "                                                              '[burst clock at 1980 MHz]'," "\n"
    '                   "SM blocks to reach 90 % of a mechanism\'s peak": \'sm p2p_read 8\',' "\n"
    "                   'NCCL all_reduce nccl bf16 bandwidth at 4K/64K/1M/16M/256M B': '0.648/9.11/74.8/247/323 '" "\n"
    "                                                                                  'GB/s'," "\n"
    "                   'Launch': 'graph 717 ns, cuda 1590 ns; sync: grid 998 ns'," "\n"
    "                   'NVLink p2p_read ce bandwidth at 4K/64K/1M/16M/256M B': '-/-/63.1/292/387 GB/s; half peak '" "\n"
    "                                                                           'from 8 MiB'," "\n"
    "                   'Number of SMs': '132 (NVML)'}}" "\n"
    '' "\n"
    "GPU_DEFINITIONS = {'measured': 'timed on this machine by linkroof with CUDA events after warm-up, over repetitions, the data '" "\n"
    "             'verified; the clock state it was taken in is given (burst: at the boost clock; sustained: held '" "\n"
    '             "below it, as under a long run\'s power cap)",' "\n"
    ' \'spec\': "the vendor\'s data sheet (dense figures; never reached in practice)",' "\n"
    ' \'busbw\': "NCCL\'s bus bandwidth (nccl-tests\' convention): comparable across collectives and rank counts",' "\n"
    " 'half peak from': 'the smallest message size at which a mechanism gives half its best bandwidth: below it, '" "\n"
    "                   'per-message latency dominates'," "\n"
    ' \'copy engine / SM / TMA\': "three ways to move data between GPUs: cudaMemcpy\'s DMA engines (no SMs used), "' "\n"
    '                           "loads and stores from SMs, and the Tensor Memory Accelerator\'s bulk copies"}' "\n"
    '' "\n"
    "GPU_BEST_PRACTICES = ['NVLink p2p_read ce reaches half its peak at 8 MiB messages (measured): batch smaller transfers.'," "\n"
    " 'sm p2p_read needs 8 blocks for 90 % of its peak (measured): leave the other SMs to compute when '" "\n"
    " 'overlapping.'," "\n"
    ' "Plan on 3000.0 GB/s of HBM bandwidth, not the spec\'s 3350.0 GB/s: 90% of it is what a kernel here reached "' "\n"
    " '(measured).']" "\n"
)


def test_module_text_as_written(bundled):
    """The whole module for the small machine: docstring, then the three assignments,
    each pprint'ed 110 wide with its dicts in insertion order (sorted keys or another
    width would wrap or order these lines otherwise)."""
    assert E.kernelbench_py(machine(bundled, [h100(bundled)]), "H100-linkroof", small_facts()) == SMALL_MODULE


# ------------------------------------------------------------------ pkb_toml


SMALL_SPECS_BULLETS = (
    f"- HBM: 3000.0 GB/s read-only kernel (measured, {CLOCK}); spec 3350.0 GB/s\n"
    f"- Dense compute: fp8 1979 TFLOP/s spec; bf16 852 TFLOP/s measured (spec 989 TFLOP/s); fp32 51 TFLOP/s measured "
    f"[{CLOCK}]\n"
    f"- NVLink per GPU, one direction: spec 450.0 GB/s; measured ce 396.3 GB/s [{CLOCK}]\n"
    "- SM blocks to reach 90 % of a mechanism's peak: sm p2p_read 8\n"
    "- NCCL busbw, ? ranks, GB/s at 4 KiB/64 KiB/1 MiB/16 MiB/256 MiB:\n"
    "- all_reduce nccl bf16: 0.648/9.11/74.8/247/323\n"
    "- Launch: graph 717 ns, cuda 1590 ns; sync: grid 998 ns\n"
    "- Copy bandwidth, GB/s at 4 KiB/64 KiB/1 MiB/16 MiB/256 MiB messages:\n"
    "- NVLink p2p_read ce: -/-/63.1/292/387; half peak from 8 MiB\n")


def test_pkb_table_small_machine(bundled):
    p = machine(bundled, [h100(bundled)])
    text = E.pkb_toml(p, "h100_linkroof", small_facts())
    prof = tomllib.loads(text)["hardware_profiles"]["h100_linkroof"]
    assert prof["gpu_name"] == "H100 80GB HBM3"
    assert prof["gpu_architecture"] == "Hopper"
    assert prof["gpu_specs_bullets"] == SMALL_SPECS_BULLETS
    assert prof["gpu_definitions_bullets"] == "".join(f"- **{k}**: {v}\n" for k, v in E.DEFINITIONS.items())
    assert prof["gpu_definitions_bullets"].startswith("- **measured**: timed on this machine by linkroof")
    assert prof["gpu_definitions_bullets"].count("\n") == 5
    assert prof["gpu_best_practices_bullets"] == "".join(f"- {x}\n" for x in SMALL_PRACTICES)
    assert prof["profile_display"] == ("1 x NVIDIA H100 80GB HBM3, Hopper, compute capability 9.0, 1 host(s) "
                                       "(132 SMs, 85.9 GB); linkroof profile 20261204-120000-abc123, "
                                       "placements saved 2026-11-30 (no measurements) (linkroof export)")


def test_pkb_text_comment_and_multiline_strings(bundled):
    p = machine(bundled, [h100(bundled)])
    text = E.pkb_toml(p, "h100_linkroof", small_facts())
    lines = text.splitlines()
    assert lines[0] == ("# linkroof export --format pkb: profile 20261204-120000-abc123; merge into "
                        "kernelgen/prompts.toml")
    assert lines[1] == "[hardware_profiles.h100_linkroof]"
    assert 'gpu_specs_bullets = """' in lines
    i = lines.index('gpu_specs_bullets = """')
    assert lines[i + 1] == f"- HBM: 3000.0 GB/s read-only kernel (measured, {CLOCK}); spec 3350.0 GB/s"
    assert "\\n" not in text  # newlines as newlines, not escapes


def test_pkb_first_gpu_and_unknowns(bundled):
    b200 = dataclasses.replace(h100(bundled), index=1, name="NVIDIA B200", architecture="Blackwell")
    prof = tomllib.loads(E.pkb_toml(machine(bundled, [h100(bundled), b200]), "k", small_facts()))
    assert prof["hardware_profiles"]["k"]["gpu_name"] == "H100 80GB HBM3"
    assert prof["hardware_profiles"]["k"]["gpu_architecture"] == "Hopper"
    one = tomllib.loads(E.pkb_toml(machine(bundled, [h100(bundled)]), "k", small_facts()))["hardware_profiles"]["k"]
    assert one["gpu_name"] == "H100 80GB HBM3"
    none = tomllib.loads(E.pkb_toml(machine(bundled, []), "k", []))["hardware_profiles"]["k"]
    assert none["gpu_name"] == "unknown" and none["gpu_architecture"] == "unknown"
    assert none["profile_display"].startswith("unknown GPUs; linkroof profile ")
    g = h100(bundled, architecture=Unknown("NVML: Not Supported"))
    arch = tomllib.loads(E.pkb_toml(machine(bundled, [g]), "k", []))["hardware_profiles"]["k"]
    assert arch["gpu_architecture"] == "unknown"


def test_pkb_refuses_a_table_that_does_not_parse(bundled, monkeypatch):
    import tomli_w

    monkeypatch.setattr(tomli_w, "dumps", lambda doc, **kw: "[hardware_profiles.k\n")
    with pytest.raises(E.ExportError, match=r"the pkb table does not parse back as TOML \(.+\): not written"):
        E.pkb_toml(machine(bundled, [h100(bundled)]), "k", small_facts())


def test_pkb_refuses_a_table_that_parses_as_other_data(bundled, monkeypatch):
    import tomli_w

    monkeypatch.setattr(tomli_w, "dumps", lambda doc, **kw: "[hardware_profiles.k]\ngpu_name = \"H100\"\n")
    with pytest.raises(E.ExportError, match="the pkb table parses back as other data than was meant: not written"):
        E.pkb_toml(machine(bundled, [h100(bundled)]), "k", small_facts())
