"""Data out for notebooks and other tools: linkroof.load(), Profile.to_dataframe(), the
csv / parquet export, and the example notebook, whose cells run here as they are."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import linkroof
from linkroof.cli import cli

ROOT = Path(__file__).parent.parent
BUNDLED = ROOT / "linkroof" / "data" / "h200x2.profile.json"
BUNDLED_ID = json.loads(BUNDLED.read_text())["id"]
N_BUNDLED = len(json.loads(BUNDLED.read_text())["measurements"])


def test_load_and_dataframe():
    p = linkroof.load("reference")
    df = p.to_dataframe()
    assert len(df) == len(p.measurements) == len(json.loads(BUNDLED.read_text())["measurements"])
    row = df[(df["name"] == "p2p_write_bandwidth") & (df["mechanism"] == "ce") & (df["message_bytes"] == 1 << 30)]
    assert row["bandwidth_bytes_per_s"].max() == pytest.approx(396.3e9, rel=0.01)
    assert {"param.blocks", "param.dtype", "figure", "figure_unit", "warnings"} <= set(df.columns)
    assert linkroof.load(str(BUNDLED)).id == p.id


def test_csv_and_parquet_export(tmp_path):
    runner = CliRunner()
    store = str(tmp_path / "s.sqlite")
    assert runner.invoke(cli, ["--store", store, "runs", "import", str(BUNDLED)]).exit_code == 0
    res = runner.invoke(cli, ["--store", store, "runs", "export", BUNDLED_ID, "--format", "csv", "-o",
                              str(tmp_path / "p.csv")], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    import pandas as pd

    back = pd.read_csv(tmp_path / "p.csv")
    assert len(back) == N_BUNDLED and "busbw_bytes_per_s" in back.columns
    res = runner.invoke(cli, ["--store", store, "runs", "export", BUNDLED_ID, "--format", "parquet"])
    assert res.exit_code == 2 and "-o FILE" in res.output
    res = runner.invoke(cli, ["--store", store, "runs", "export", BUNDLED_ID, "--format", "parquet", "-o",
                              str(tmp_path / "p.parquet")], catch_exceptions=False)
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        assert res.exit_code == 1 and "linkroof[parquet]" in res.output
    else:
        assert res.exit_code == 0 and len(pd.read_parquet(tmp_path / "p.parquet")) == N_BUNDLED


def test_the_notebook_runs_and_matches_its_script(tmp_path):
    nb = json.loads((ROOT / "examples" / "notebook.ipynb").read_text())
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    script = (ROOT / "examples" / "notebook.py").read_text()
    assert all(cell in script for cell in code), "notebook.ipynb is stale: python3 examples/make_notebook.py"
    ns: dict = {}
    for cell in code:
        exec(compile(cell, "notebook", "exec"), ns)  # the cells, in order, as Jupyter runs them
    assert len(ns["df"]) == N_BUNDLED
    assert len(ns["fig_sweep"].data) >= 3 and len(ns["fig_nccl"].data) == 7  # three mechanisms; seven collectives
    for trace in ns["fig_nccl"].data:  # one timing per curve: one point per size, no zig-zag of two timings
        assert len(set(trace.x)) == len(trace.x)
    assert set(ns["table"].columns) == {"ce", "sm", "tma", "red", "tma_red"}  # copies and reductions into peer memory
