"""`linkroof export`'s file-facing parts, pinned exactly: the header line every format
opens with, the default key made from a profile, the file name each format is written
to, what `write_all` writes (names, that each parses, what each holds), `render`'s
formats and its refusal of an unknown one, and `check_python_data`, the parse-back that
refuses a generated Python module holding anything but exactly the data it was made from."""

import ast
import dataclasses
import json
import os
import runpy
import tomllib

import pytest

from linkroof.files import FileOutputError
from linkroof.profiler.session import bundled_profile
from linkroof.roofline import export as E
from linkroof.roofline.export import ExportError, Fact

NAN = float("nan")
WORDS = "linkroof's bundled reference, measured 2026-11-30 on another machine"
PID = "20261130-193947-a5e8a4"
REF_HEADER = (f"2 x NVIDIA H200, Hopper, compute capability 9.0, 1 host(s) (132 SMs, 150.8 GB); "
              f"linkroof profile {PID}, {WORDS}")


@pytest.fixture(scope="module")
def profile():
    return bundled_profile()


@pytest.fixture(scope="module")
def fs(profile):
    return E.facts(profile)


def with_gpus(profile, *names):
    """The profile with its first host's GPUs renamed (and counted) as `names`, the
    other hosts without GPUs."""
    topo = profile.topology
    g0 = topo.gpus[0]
    gpus = tuple(dataclasses.replace(g0, name=n, index=i) if hasattr(g0, "index") else dataclasses.replace(g0, name=n)
                 for i, n in enumerate(names))
    rest = tuple(dataclasses.replace(t, gpus=()) for t in profile.topologies[1:])
    return dataclasses.replace(profile, topologies=(dataclasses.replace(topo, gpus=gpus),) + rest)


# ---------------------------------------------------------------------- default_key

def test_default_key_is_the_first_gpus_name_without_vendor_and_spaces_times_the_count(profile):
    assert E.default_key(profile) == "H200x2-linkroof"
    # the first GPU names the key, spaces become '-', "NVIDIA " goes
    assert E.default_key(with_gpus(profile, "NVIDIA H200 SXM5", "NVIDIA B200")) == "H200-SXM5x2-linkroof"
    assert E.default_key(with_gpus(profile, "NVIDIA GH200 480GB")) == "GH200-480GBx1-linkroof"


def test_default_key_of_a_profile_without_gpus_says_GPU(profile):
    assert E.default_key(with_gpus(profile)) == "GPUx0-linkroof"


# ---------------------------------------------------------------------- header

def test_header_of_the_reference_profile_exactly(profile, fs):
    assert E.header(profile, fs) == REF_HEADER


def test_header_finds_each_figure_by_its_name_wherever_it_is(profile, fs):
    gpu, sms, mem = (next(f for f in fs if f.name == n) for n in ("GPU", "SMs", "memory"))
    others = [f for f in fs if f.topic != "gpu"]
    # another gpu-topic figure first, and figures of other names before SMs and memory
    assert E.header(profile, [mem, sms] + others + [gpu]) == REF_HEADER
    assert E.header(profile, others + [sms, gpu, mem]) == REF_HEADER


def test_header_without_figures_says_unknown_gpus_and_nothing_in_brackets(profile):
    assert E.header(profile, []) == f"unknown GPUs; linkroof profile {PID}, {WORDS}"


def test_header_leaves_out_each_missing_or_unknown_figure(profile, fs):
    gpu = next(f for f in fs if f.name == "GPU")
    base = "2 x NVIDIA H200, Hopper, compute capability 9.0, 1 host(s)"
    tail = f"; linkroof profile {PID}, {WORDS}"
    sms = Fact("gpu", "SMs", 132.0, "count", "nvml")
    mem = Fact("gpu", "memory", 150754820096.0, "B", "nvml")
    nan_sms = Fact("gpu", "SMs", NAN, "count", "nvml")
    nan_mem = Fact("gpu", "memory", NAN, "B", "nvml")
    assert E.header(profile, [gpu]) == base + tail
    assert E.header(profile, [gpu, sms]) == base + " (132 SMs)" + tail
    assert E.header(profile, [gpu, mem]) == base + " (150.8 GB)" + tail
    assert E.header(profile, [gpu, nan_sms, nan_mem]) == base + tail
    assert E.header(profile, [gpu, nan_sms, mem]) == base + " (150.8 GB)" + tail
    assert E.header(profile, [gpu, sms, nan_mem]) == base + " (132 SMs)" + tail
    assert E.header(profile, [sms, mem]) == f"unknown GPUs (132 SMs, 150.8 GB){tail}"


# ---------------------------------------------------------------------- render

def test_render_without_figures_makes_them_from_the_profile(profile):
    text = E.render(profile, "brief", "k")
    assert text.startswith(f"Machine: {REF_HEADER}.\n")
    assert "HBM: 4510.3 GB/s" in text and "Launch: graph 717 ns" in text
    arch = json.loads(E.render(profile, "tracelens", "k"))
    assert arch["mem_bw_gbps"] == pytest.approx(4510.3)


def test_render_uses_the_figures_it_is_given(profile, fs):
    text = E.render(profile, "brief", "k", [])
    assert text.startswith(f"Machine: unknown GPUs; linkroof profile {PID}, {WORDS}.\n")
    assert "HBM" not in text and "Launch" not in text
    only_hbm = [f for f in fs if f.topic == "hbm"]
    text = E.render(profile, "brief", "k", only_hbm)
    assert "HBM: 4510.3 GB/s" in text and "132 SMs" not in text and "Launch" not in text
    arch = json.loads(E.render(profile, "tracelens", "k", only_hbm))
    assert arch["max_achievable_tflops"] == {} and arch["mem_bw_gbps"] == pytest.approx(4510.3)


def test_render_pkb_and_kernelbench_are_under_the_key_given(profile, fs, tmp_path):
    doc = tomllib.loads(E.render(profile, "pkb", "h200_2_linkroof", fs))
    assert list(doc["hardware_profiles"]) == ["h200_2_linkroof"]
    assert doc["hardware_profiles"]["h200_2_linkroof"]["gpu_name"] == "H200"
    path = tmp_path / "gpu_specs.py"
    path.write_text(E.render(profile, "kernelbench", "H200-linkroof", fs))
    info = runpy.run_path(str(path))["GPU_SPEC_INFO"]
    assert list(info) == ["H200-linkroof"] and info["H200-linkroof"]["GPU Architecture"] == "Hopper"


def test_render_tracelens_is_json_indented_by_two(profile, fs):
    text = E.render(profile, "tracelens", "H200x2-linkroof", fs)
    assert text.startswith('{\n  "name": "H200x2-linkroof",\n  "mem_bw_gbps": 4510.3,\n')
    assert text.endswith("\n}\n")
    assert text == json.dumps(json.loads(text), indent=2) + "\n"


def test_render_refuses_an_unknown_format(profile, fs):
    with pytest.raises(ValueError, match=r"^unknown format 'xml'$"):
        E.render(profile, "xml", "k", fs)
    with pytest.raises(ValueError, match=r"^unknown format 'all'$"):
        E.render(profile, "all", "k", fs)


# ---------------------------------------------------------------------- file_name

def test_file_name_per_format(profile):
    assert E.file_name("brief", "H200x2-linkroof") == "brief.txt"
    assert E.file_name("pkb", "H200x2-linkroof") == "pkb_hardware_profile.toml"
    assert E.file_name("kernelbench", "H200x2-linkroof") == "gpu_specs.py"
    assert E.file_name("tracelens", "H200x2-linkroof") == "H200x2-linkroof.json"
    assert E.file_name("tracelens", "../x") == "x.json"
    assert E.file_name("tracelens", "H200/SXM5") == "H200-SXM5.json"


@pytest.mark.parametrize("key", ["", "..", "../", "///", "\u00e9\u00e9"])
def test_file_name_of_a_key_with_nothing_safe_in_it_is_linkroof(key):
    assert E.file_name("tracelens", key) == "linkroof.json"


# ---------------------------------------------------------------------- write_all

def test_write_all_writes_the_four_files_each_parsing_with_the_key_inside(profile, tmp_path):
    out = tmp_path / "out"
    key = "H200x2-linkroof"
    paths = E.write_all(profile, str(out), key)
    real = os.path.realpath(out)
    assert [os.path.basename(p) for p in paths] == ["brief.txt", "pkb_hardware_profile.toml", "gpu_specs.py",
                                                     "H200x2-linkroof.json"]
    assert all(os.path.dirname(os.path.realpath(p)) == real for p in paths)
    brief, pkb, py, arch = (open(p, encoding="utf-8").read() for p in paths)
    assert brief.startswith(f"Machine: {REF_HEADER}.\n") and "HBM: 4510.3 GB/s" in brief
    table = tomllib.loads(pkb)["hardware_profiles"]
    assert list(table) == [key] and table[key]["profile_display"] == f"{REF_HEADER} (linkroof export)"
    assert "- HBM: 4510.3 GB/s" in table[key]["gpu_specs_bullets"]
    tree = ast.parse(py)
    assert all(isinstance(n, ast.Assign) for n in tree.body[1:])
    info = runpy.run_path(paths[2])["GPU_SPEC_INFO"]
    assert list(info) == [key] and info[key]["Number of SMs"] == "132 (NVML)"
    data = json.loads(arch)
    assert data["name"] == key and data["mem_bw_gbps"] == pytest.approx(4510.3)
    assert data["max_achievable_tflops"]["matrix_bf16"] == pytest.approx(851.3)


def test_write_all_says_which_folder_it_cannot_make_and_why(profile, tmp_path):
    f = tmp_path / "f.txt"
    f.write_text("keep")
    folder = str(f / "sub")
    with pytest.raises(FileOutputError) as e:
        E.write_all(profile, folder, "k")
    assert str(e.value) == f"cannot make {folder}: Not a directory"
    assert f.read_text() == "keep"


# ---------------------------------------------------------------------- check_python_data

DOC = "GPU specs: a test."
VALUES = {"A": {"x": "1"}, "B": ["y"]}
GOOD = repr(DOC) + "\n\nA = {'x': '1'}\nB = ['y']\n"


def test_check_python_data_accepts_exactly_the_data_it_was_made_from():
    assert E.check_python_data(GOOD, DOC, VALUES) is None
    assert E.check_python_data(repr(DOC) + "\n", DOC, {}) is None


def test_check_python_data_refuses_a_text_that_does_not_parse():
    with pytest.raises(ExportError, match=r"^the module does not parse back \(.+\): not written$"):
        E.check_python_data(repr(DOC) + "\nA = {'x': \n", DOC, VALUES)


@pytest.mark.parametrize("text", [
    "",  # nothing at all
    "'Another docstring.'\nA = {'x': '1'}\nB = ['y']\n",  # a docstring, not the one meant
    f"A = {DOC!r}\n",  # no docstring: an assignment first, of the docstring's text
    f"import os\nA = {DOC!r}\n",  # code first
    f"print({DOC!r})\n",  # a call, not a constant
])
def test_check_python_data_refuses_a_module_without_the_docstring_meant(text):
    with pytest.raises(ExportError, match=r"^the module's docstring is not the one meant: not written$"):
        E.check_python_data(text, DOC, {} if text.startswith("A =") else VALUES)


@pytest.mark.parametrize("stmt, values, kind", [
    ("print('x')", VALUES, "Expr"),
    ("import os", VALUES, "Import"),
    ("A = B = {'x': '1'}", {"A": {"x": "1"}, "B": {"x": "1"}}, "Assign"),  # two targets
    ("A = {'x': '1'}\nB = B2 = ['y']", {"A": {"x": "1"}, "B": ["y"]}, "Assign"),
    ("A, B = {'x': '1'}, ['y']", VALUES, "Assign"),  # a tuple target
    ("A.x = '1'", VALUES, "Assign"),  # an attribute target: code that runs
    ("A: dict = {'x': '1'}", VALUES, "AnnAssign"),
])
def test_check_python_data_refuses_statements_that_are_not_plain_assignments(stmt, values, kind):
    with pytest.raises(ExportError, match=rf"^the module holds a {kind} statement, not data: not written$"):
        E.check_python_data(repr(DOC) + "\n" + stmt + "\n", DOC, values)


@pytest.mark.parametrize("value", ["open('PWNED', 'w')", "__import__('os').getcwd()", "[x for x in 'ab']", "B"])
def test_check_python_data_refuses_code_in_place_of_a_literal(value):
    with pytest.raises(ExportError, match=r"^A is not a literal: not written$"):
        E.check_python_data(repr(DOC) + f"\nA = {value}\nB = ['y']\n", DOC, VALUES)


@pytest.mark.parametrize("text", [
    GOOD.replace("'1'", "'2'"),  # a value changed
    GOOD.replace("B = ", "C = "),  # a name changed
    GOOD + "C = 1\n",  # one more name
    repr(DOC) + "\nA = {'x': '1'}\n",  # one name missing
])
def test_check_python_data_refuses_other_data_than_was_meant(text):
    with pytest.raises(ExportError, match=r"^the module parses back as other data than was meant: not written$"):
        E.check_python_data(text, DOC, VALUES)
