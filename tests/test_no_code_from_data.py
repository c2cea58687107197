"""No code from data, no path from data (issue 41, item 1). Hostile ids, names, labels and
numbers, each put into a profile where a user's or an uploaded profile would carry it,
fed to every format linkroof generates and every file it writes from a profile:

- `export`: brief (plain text), pkb (TOML), kernelbench (a Python module), tracelens
  (JSON), one at a time and `--format all` into a folder;
- the HTML report, `runs export` (JSON and CSV), `check --junit` (XML).

For each: the file parses back (ast / tomllib / json / ElementTree / csv / html.parser)
as data only (the Python module: a docstring and literal assignments and nothing else;
running it in a fresh interpreter touches no file), the hostile string is in it only as
data, and every file lands inside its folder."""

import ast
import csv
import dataclasses
import io
import json
import os
import subprocess
import sys
import tomllib
from html.parser import HTMLParser
from xml.etree import ElementTree

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linkroof.cli import cli
from linkroof.files import FileOutputError, csv_cell, path_inside, plain, slug, write_text
from linkroof.profiler.session import bundled_profile
from linkroof.roofline import export as E
from linkroof.schema import dumps

MARK = "PWNED_BY_DATA"
HOSTILE = [
    f'"""\nimport os; open("{MARK}", "w")\n"""',
    f"'''\nimport os; open('{MARK}', 'w')\n'''",
    f'\\"""; open("{MARK}", "w"); """',
    f"x\"]\n[evil]\n{MARK} = 1\n#",
    f"# a\n[hardware_profiles.{MARK}]\ngpu_name = 'x'",
    "../../" + MARK,
    "/tmp/" + MARK,
    "H200/SXM5",
    "..",
    "",
    "\ud83d lone surrogate",
    "\x00\x01\x1b]0;title\x07\x1b[31mred",
    "\u202etxt.exe\u2066",
    f"</script><script>document.title='{MARK}'</script>",
    f"<img src=x onerror=alert('{MARK}')>",
    f"]]><!--{MARK}-->&amp;&#0;",
    f"=cmd|' /C calc'!A0 {MARK}",
    "@SUM(1+1)",
    "-2+3",
    "\\",
    "A" * 5000,
    "{key}{0}%s%(x)s",
    "\r\n\u2028\u2029\ufeff",
]


def hostile_profile(text, numbers=None):
    p = bundled_profile()
    topo = p.topology
    gpus = tuple(dataclasses.replace(g, name=text, architecture=text, **(numbers or {})) for g in topo.gpus)
    host = dataclasses.replace(topo.host, hostname=text)
    topo = dataclasses.replace(topo, gpus=gpus, host=host)
    return dataclasses.replace(p, id=text, label=text, topologies=(topo,) + p.topologies[1:])


def runs_clean(path, tmp_path):
    """Import the module in a fresh interpreter, in an empty folder: it must create nothing."""
    box = tmp_path / "box"
    box.mkdir(exist_ok=True)
    r = subprocess.run([sys.executable, "-c", "import runpy, sys; runpy.run_path(sys.argv[1])", str(path)],
                       cwd=box, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    assert os.listdir(box) == []


def only_data(text):
    """A module of a docstring and assignments of literals, and nothing else."""
    tree = ast.parse(text)
    assert isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant)
    for node in tree.body[1:]:
        assert isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name), ast.dump(node)[:200]
        ast.literal_eval(node.value)
    for node in ast.walk(tree):
        assert not isinstance(node, (ast.Call, ast.Import, ast.ImportFrom, ast.Attribute, ast.Lambda)), ast.dump(node)


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_every_export_format_is_data_only(text, tmp_path):
    profile = hostile_profile(text)
    fs = E.facts(profile)
    key = text or "k"
    brief = E.render(profile, "brief", key, fs)
    assert all(c == "\n" or c.isprintable() or c == "\ufffd" for c in brief)
    assert len(brief.encode()) < E.BRIEF_LIMIT
    doc = tomllib.loads(E.render(profile, "pkb", key, fs))
    (prof,) = doc["hardware_profiles"].values()
    assert set(prof) == {"profile_display", "gpu_name", "gpu_architecture", "gpu_specs_bullets",
                         "gpu_definitions_bullets", "gpu_best_practices_bullets"}
    assert list(doc) == ["hardware_profiles"]  # no table of the attacker's
    py = E.render(profile, "kernelbench", key, fs)
    only_data(py)
    mod = tmp_path / "gpu_specs.py"
    mod.write_text(py, encoding="utf-8")
    runs_clean(mod, tmp_path)
    arch = json.loads(E.render(profile, "tracelens", key, fs))
    assert arch["name"] == plain(key, newlines=True)
    # --format all: every file inside the folder, under a slug of the key
    out = tmp_path / "out"
    paths = E.write_all(profile, str(out), key)
    assert len(paths) == 4
    for p in paths:
        assert os.path.dirname(os.path.realpath(p)) == os.path.realpath(out), p
    assert sorted(os.listdir(out)) == sorted(os.path.basename(p) for p in paths)
    assert not any(MARK in n for n in os.listdir(tmp_path) if n not in ("out", "box", "gpu_specs.py"))


@pytest.mark.long
@settings(max_examples=int(os.environ.get("LINKROOF_FUZZ_EXAMPLES", 40)), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=st.text(max_size=60), key=st.text(max_size=40),
       mem=st.one_of(st.integers(min_value=-2**70, max_value=2**70)), sms=st.integers(-5, 10**9))
def test_fuzzed_ids_names_and_numbers_stay_data(text, key, mem, sms, tmp_path):
    profile = hostile_profile(text, {"memory_total_bytes": mem, "sm_count": sms})
    fs = E.facts(profile)
    only_data(E.render(profile, "kernelbench", key, fs))
    tomllib.loads(E.render(profile, "pkb", key, fs))
    json.loads(E.render(profile, "tracelens", key, fs))
    E.render(profile, "brief", key, fs).encode("utf-8")
    name = E.file_name("tracelens", key)
    assert "/" not in name and not name.startswith(".") and name not in (".json", "..json")


def test_a_hostile_gpu_name_never_writes_outside_the_folder(tmp_path):
    """The landed bug: a GPU named '../x' replaced a file outside --out; 'H200/SXM5' was a
    traceback. Through the CLI, with the key from the GPU's name."""
    victim = tmp_path / "x-linkroof.json"  # what '../x' + 'x1-linkroof' would have replaced
    victim.write_text("keep")
    for name in ("../x", "H200/SXM5", "../../etc/passwd"):
        profile = hostile_profile(name)
        pf = tmp_path / "p.json"
        pf.write_text(dumps(profile))
        out = tmp_path / "out"
        res = CliRunner().invoke(cli, ["--store", str(tmp_path / "s.sqlite"), "export", "--profile", str(pf),
                                       "--format", "all", "--out", str(out)])
        assert res.exit_code == 0, res.output
        for line in res.output.split():
            if line.endswith((".json", ".toml", ".py", ".txt")):
                assert os.path.dirname(os.path.realpath(line)) == os.path.realpath(out), line
    assert victim.read_text() == "keep"
    assert {slug("../x"), slug("H200/SXM5")} == {"x", "H200-SXM5"}


def test_a_link_in_the_folder_is_replaced_not_followed(tmp_path):
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep")
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(target, out / "brief.txt")
    E.write_all(hostile_profile("gpu"), str(out), "k")
    assert target.read_text() == "keep" and not os.path.islink(out / "brief.txt")
    os.symlink(tmp_path, out / "up")
    with pytest.raises(FileOutputError):
        path_inside(out, "../x")
    with pytest.raises(FileOutputError):
        path_inside(out, "up/x")


def test_write_text_writes_nothing_when_the_check_fails_or_the_folder_is_read_only(tmp_path):
    p = tmp_path / "f.txt"
    p.write_text("old")

    def refuse(text):
        raise FileOutputError("no")

    with pytest.raises(FileOutputError):
        write_text(p, "new", refuse)
    assert p.read_text() == "old" and os.listdir(tmp_path) == ["f.txt"]
    with pytest.raises(FileOutputError, match="cannot write"):
        write_text(p / "x", "y")  # a file where a folder should be: one error, nothing written
    ro = tmp_path / "ro"
    ro.mkdir()
    os.chmod(ro, 0o500)
    try:
        if os.access(ro, os.W_OK):  # root writes anyway: the message path is tested elsewhere
            pytest.skip("running as root: a read-only folder is writable")
        with pytest.raises(FileOutputError, match="cannot write"):
            write_text(ro / "x", "y")
    finally:
        os.chmod(ro, 0o700)


def test_a_changed_serializer_is_caught_before_writing(monkeypatch):
    """The parse-back is what guards: a module that formats data into code is refused."""
    profile = hostile_profile(f'"""\nopen("{MARK}", "w")\n"""')
    fs = E.facts(profile)
    monkeypatch.setattr(E, "repr", lambda s: '"""' + s + '"""', raising=False)
    with pytest.raises(E.ExportError):
        E.kernelbench_py(profile, "k", fs)


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, tuple(k for k, _ in attrs)))


def _tags(html):
    t = _Tags()
    t.feed(html)
    return t.tags


@pytest.mark.parametrize("text", [HOSTILE[13], HOSTILE[14], HOSTILE[15]])
def test_the_report_holds_hostile_names_as_text(text):
    from linkroof.dashboard.report import report_html

    plain_page = _tags(report_html(hostile_profile("gpu")))
    page = report_html(hostile_profile(text))
    assert _tags(page) == plain_page  # the same elements and attributes: no element of the attacker's
    assert "<script>document" not in page and "<img src=x" not in page


@pytest.mark.parametrize("text", [HOSTILE[16], HOSTILE[17], "x\ny,z", HOSTILE[11]])
def test_runs_export_csv_and_json_hold_hostile_text_as_data(text, tmp_path):
    profile = hostile_profile(text)
    pf = tmp_path / "p.json"
    store = str(tmp_path / "s.sqlite")
    if not text.isprintable():  # the store refuses such an id at the door, with one line
        pf.write_text(dumps(profile))
        r = CliRunner().invoke(cli, ["--store", store, "runs", "import", str(pf)])
        assert r.exit_code == 1 and "plain text" in r.output and "Traceback" not in r.output
        profile = dataclasses.replace(profile, id="hostile-id")  # the text stays in names and labels
    pf.write_text(dumps(profile))
    r = CliRunner().invoke(cli, ["--store", store, "runs", "import", str(pf)])
    assert r.exit_code == 0, r.output
    pid = profile.id
    out = tmp_path / "m.csv"
    r = CliRunner().invoke(cli, ["--store", store, "runs", "export", pid, "--format", "csv", "-o", str(out)])
    assert r.exit_code == 0, r.output
    rows = list(csv.reader(io.StringIO(out.read_text())))
    assert len(rows) == len(profile.measurements) + 1
    for row in rows[1:]:
        for cell in row:
            assert not cell.startswith(("=", "+", "@")), cell
    assert any(plain(text, newlines=True) in cell for row in rows for cell in row) or not text.isprintable()
    back = json.loads(CliRunner().invoke(cli, ["--store", store, "runs", "export", pid]).output)
    assert back["id"] == pid and back["label"] == text  # JSON keeps the text exactly, as data


def test_csv_cells_keep_numbers_and_neutralise_formulas():
    assert csv_cell("=1+1") == "'=1+1" and csv_cell("@x") == "'@x" and csv_cell("-cmd") == "'-cmd"
    assert csv_cell("-2.5") == "-2.5" and csv_cell("ce") == "ce" and csv_cell(3.0) == 3.0


def test_junit_xml_parses_back_with_hostile_names():
    from linkroof.roofline.gate import Check, GateReport, junit_xml

    names = [HOSTILE[15], HOSTILE[11], HOSTILE[10], "\x0c"]
    checks = [Check(kind=n, name=n, expected=n, got=n, ratio=None, passed=i % 2 == 0, detail=n) for i, n in enumerate(names)]
    root = ElementTree.fromstring(junit_xml(GateReport(checks=checks)).encode())
    assert len(root.findall("testcase")) == len(names)
    assert root.findall("testcase")[0].get("name") == plain(HOSTILE[15])
