"""Each row of docs/reference.md's exit-code table, run: the code a user's script sees is
the one the table gives (score's 4 and 5 are run in tests/test_score_hostile.py::
test_exit_codes_say_what_was_scored, through the real channel)."""

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from linkroof.cli import cli
from linkroof.scoring import score as S

REFERENCE = (Path(__file__).parent.parent / "docs" / "reference.md").read_text()


def run(tmp_path, *args, env=None):
    return CliRunner().invoke(cli, ["--store", str(tmp_path / "s.sqlite"), *args], env=env)


def test_the_table_lists_every_code_linkroof_uses():
    codes = {int(c) for c in re.findall(r"^\| (\d) \|", REFERENCE, re.M)}
    assert codes == {0, 1, 2, 3, 4, 5}
    assert (S.EXIT_NOTHING_SCORED, S.EXIT_REFERENCE_FAILED) == (4, 5)


@pytest.mark.parametrize("args, code", [
    (["roofline", "--profile", "reference"], 0),
    (["roofline", "--profile", "no-such-profile"], 1),
    (["advise", "--size", "a lot"], 2),
    (["check", "--baseline", "reference", "--profile", "reference"], 3),
    (["bench", "--only", "multicast", "--replay", "h200x2", "--plan"], 4),
])
def test_each_code_is_what_the_table_says(tmp_path, args, code):
    res = run(tmp_path, *args, env={"NCCL_NVLS_ENABLE": "0"})
    assert res.exit_code == code, res.output
    assert "Traceback" not in res.output
    if code:
        assert res.output.strip(), "a non-zero exit says why"


def test_no_gpu_is_three(tmp_path):
    res = run(tmp_path, "probe")
    if res.exit_code == 0:
        pytest.skip("a GPU is here: probe works")
    assert res.exit_code == 3 and ("GPU" in res.output or "NVML" in res.output), res.output
