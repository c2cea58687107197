"""advise says what it shows: a figure measured at the size, interpolated between two
swept sizes, or held flat beyond a curve's largest swept size (which it called
'interpolated' before: a 512 MiB figure held to 1 GiB); and the --size it reads is the
size it prints (GB is 10^9, GiB 2^30)."""

import json

from click.testing import CliRunner

from linkroof.cli import cli
from linkroof.profiler.session import bundled_profile
from linkroof.roofline.advise import advise
from linkroof.roofline.model import MachineModel

REF = bundled_profile()


def _row(out, mech):
    return next(m for m in out.mechanisms if m.mechanism == mech)


def test_each_figure_says_how_it_was_found():
    red = next(c for c in MachineModel.from_profile(REF).curves if c.mechanism == "red")
    top = max(s for s, _ in red.points)
    beyond = advise(REF, 2 * top, "p2p_write")
    assert "held flat from its largest swept size" in _row(beyond, "red").how
    assert any("outside what was swept for red" in n for n in beyond.notes)
    assert not any("red" in n and "interpolated" in n for n in beyond.notes)
    at = advise(REF, top, "p2p_write")
    assert _row(at, "red").how.endswith("(measured at this size)")
    swept = sorted(s for s, _ in red.points)
    mid = (swept[-2] + swept[-1]) // 2
    between = advise(REF, mid, "p2p_write")
    assert "interpolated" in _row(between, "red").how
    assert any("red" in n and "interpolated" in n for n in between.notes)


def test_size_is_read_as_printed():
    run = CliRunner().invoke
    gb = run(cli, ["advise", "--profile", "reference", "--size", "1GB", "--json"])
    gib = run(cli, ["advise", "--profile", "reference", "--size", "1GiB", "--json"])
    assert gb.exit_code == gib.exit_code == 0

    assert json.loads(gb.stdout[gb.stdout.index("{"):])["size"] == 10 ** 9
    assert json.loads(gib.stdout[gib.stdout.index("{"):])["size"] == 1 << 30
