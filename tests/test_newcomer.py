"""Issue 45's "done when": a newcomer's first hour, scripted. The README's tour run in
order on a fresh store, with an import beside it, on a machine with no GPU: no command
fails, no heading stands empty, and no figure is labelled with another's provenance."""

import json
import re
import shlex
from pathlib import Path

from click.testing import CliRunner

from linkroof.cli import cli
from linkroof.render import first_screen_lines

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"(<!-- needs a GPU -->\n)?```sh\n(.*?)```", re.S)


def tour() -> list[list[str]]:
    """The README's command blocks that run without a GPU, in order."""
    out = []
    for m in BLOCK.finditer((ROOT / "README.md").read_text()):
        if not m.group(1):
            out += [shlex.split(line)[1:] for line in m.group(2).strip().splitlines()]
    return out


def empty_headings(text: str) -> list[str]:
    """Lines that announce figures (end with ':') followed by nothing indented."""
    lines = [x.rstrip() for x in text.splitlines()]
    return [x for i, x in enumerate(lines) if x.endswith(":") and not x.startswith(" ")
            and (i + 1 >= len(lines) or not lines[i + 1].startswith("  "))]


def test_the_first_screen_never_shows_a_heading_alone():
    lines = ["NCCL busbw, 2 ranks:", "  a", "  b", "  c", "Launch: 1 ns", "Copy bandwidth:", "  x", "Empty:"]
    shown = first_screen_lines(lines)
    assert shown == ["NCCL busbw, 2 ranks:", "  a", "  b", "  ... 1 more (linkroof export)", "Launch: 1 ns",
                     "Copy bandwidth:", "  x"]
    assert empty_headings("\n".join(shown)) == []


def test_a_newcomers_walk(tmp_path, monkeypatch, no_gpu):
    monkeypatch.chdir(ROOT)
    store = str(tmp_path / "fresh.sqlite")
    runner = CliRunner()

    def run(*args):
        res = runner.invoke(cli, ["--store", store, *[a.replace("linkroof-report.html", str(tmp_path / "r.html"))
                                                      for a in args]])
        assert res.exit_code == 0, f"{args}: {res.output[-1500:]}"
        assert "Traceback" not in res.output
        return res

    first = run("run", "--no-dashboard")  # the main job, no GPU: the bundled reference, said so
    assert "bundled reference profile" in first.output and empty_headings(first.stdout) == []
    imp = json.loads(run("import", "nccl-tests", "tests/data/anchor/nt_allreduce.txt", "--json").stdout)["id"]
    for args in tour():
        res = run(*args)
        assert empty_headings(res.stdout) == [], (args, empty_headings(res.stdout))
    # the import is used only when named, and says whose figures it holds
    adv = run("advise", "--size", "64K")
    assert "an imported one is used only when named" in adv.stderr
    mine = run("export", "--profile", imp).stdout
    assert "Figures are nccl-tests's, imported by linkroof (not measured by it)" in mine
    assert "Figures are measured by linkroof" not in mine and empty_headings(mine) == []
    kinds = {r["id"]: r["kind"] for r in json.loads(run("runs", "list", "--json").stdout)["profiles"]}
    assert kinds[imp] == "imported" and set(kinds.values()) <= {"imported", "reference", "measured", "placements"}
    assert empty_headings(run("export").stdout) == []


def test_the_roofline_page_shows_the_bundled_examples_on_the_reference_and_says_whose(tmp_path):
    """Issue 45, item 5: without a GPU the Roofline page had no dots; the bundled examples
    (measured on H200s by linkroof's developers) are drawn there, each named 'example:',
    and the page says they are not this machine's. A profile with placements of its own
    shows only those."""
    import dataclasses

    from linkroof.dashboard import app as A
    from linkroof.profiler.session import bundled_profile, example_placements

    ref = bundled_profile()
    assert not ref.placements
    page = str(A.page_roofline(A.Data(str(tmp_path / "s.sqlite"), ref), None))
    ex = example_placements()
    assert len(ex) == 13 and all(p.workload.name.startswith("example: ") for p in ex)
    assert "examples measured on H200s by linkroof's developers" in page and "not on this machine" in page
    assert ex[1].workload.name in page
    mine = dataclasses.replace(ref, id="mine", label="bench", placements=ex[:1])
    own = str(A.page_roofline(A.Data(str(tmp_path / "s.sqlite"), mine), None))
    assert "linkroof's developers" not in own and ex[1].workload.name not in own


def test_the_bundled_examples_are_what_their_maker_writes(tmp_path):
    import subprocess
    import sys

    from linkroof.schema import Profile, loads

    data = ROOT / "linkroof" / "data" / "examples.placements.json"
    before = data.read_text()
    subprocess.run([sys.executable, str(ROOT / "examples" / "roofline" / "make_placements.py"), str(tmp_path / "x.json")],
                   check=True, capture_output=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    again = (tmp_path / "x.json").read_text()
    a, b = loads(before, Profile), loads(again, Profile)
    assert [(p.workload.name, p.measured_time_s, p.limiter) for p in a.placements] == \
        [(p.workload.name, p.measured_time_s, p.limiter) for p in b.placements]
