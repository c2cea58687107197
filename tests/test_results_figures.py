"""Figures in benchmarks/RESULTS.md recomputed from their raw files, at the precision they
are quoted (issue 33's audit recomputed 590 and found 12 that did not match: a median
that was the upper-middle sample, a mean rounded the wrong way, a roof read from the
wrong GPU). Each section here reads its raw files and the table as written, and fails on
any figure that differs. tests/test_results_citations.py checks that every file cited
exists."""

import io
import json
import re
import statistics
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = (ROOT / "benchmarks" / "RESULTS.md").read_text()
DATA = ROOT / "benchmarks" / "data"


def table_after(marker: str) -> list[list[str]]:
    """The rows (cells stripped, '**' dropped) of the first table after `marker`."""
    at = RESULTS.index(marker)
    rows, started = [], False
    for line in RESULTS[at:].splitlines()[1:]:
        if line.startswith("|"):
            started = True
            cells = [c.strip().replace("**", "") for c in line.strip("|").split("|")]
            if not set("".join(cells)) <= set("- "):
                rows.append(cells)
        elif started:
            break
    return rows[1:]  # without the header


def numbers(cell: str) -> list[float]:
    return [float(x.replace(",", "")) for x in re.findall(r"[−-]?\d[\d,]*\.?\d*", cell.replace("−", "-"))]


PAGES = {"Overview": "/", "Topology": "/topology", "Bandwidth": "/bandwidth", "Collectives": "/collectives",
         "Roofline": "/roofline", "Trace": "/trace", "Runs": "/runs"}


@pytest.mark.parametrize("marker, files", [
    ("2026-12-03 (issue 32), this CPU machine", [f"2026-12-03-12/dashboard_perf_run{i}.json" for i in (1, 2, 3)]),
    ("2026-12-02, later (session 7), this CPU machine", [f"2026-12-02-7/dashboard_perf_run{i}.json" for i in (1, 2)]),
])
def test_dashboard_speed_tables(marker, files):
    runs = [json.loads((DATA / f).read_text()) for f in files]
    rows = table_after(marker)
    assert rows
    for cells in rows:
        name = cells[0]
        if name == "`linkroof report`":
            assert numbers(cells[1])[:len(runs)] == [round(r["report_s"], 2) for r in runs]
            continue
        path = PAGES[name]
        assert numbers(cells[1]) == [r["first_render_s"][path] for r in runs], name
        assert numbers(cells[2]) == [r["switch_s"][path] for r in runs], name


def test_gated_time_against_ncu_is_the_median_of_the_gated_calls():
    with tarfile.open(DATA / "2026-12-02-5" / "counters.tgz") as tar:
        docs = {Path(m.name).stem: json.load(io.TextIOWrapper(tar.extractfile(m))) for m in tar.getmembers()
                if m.name.endswith(".json")}
    rows = {r[0]: r for r in table_after("**Gated time against ncu's `gpu__time_duration`**")}
    for name, key in (("y = 2x, 1 GiB fp32", "scale"), ("bf16 GEMM 1024³", "gemm1024"), ("bf16 GEMM 8192³", "gemm8192"),
                      ("layer norm", "layernorm")):
        cells = rows[name]
        median_us = statistics.median(docs[key]["gated_times_s"]) * 1e6
        assert numbers(cells[1])[0] == round(median_us, 2), name
        ncu = numbers(cells[2])[0]
        assert numbers(cells[3])[0] == round((median_us / ncu - 1) * 100, 1), name


def test_pkb_comparison_means_and_differences():
    rows = [r for r in table_after("PKB's speedups\nare its printed reference") if r[0].startswith(("fp32", "one-rank"))]
    assert len(rows) == 2
    for cells in rows:
        pkb, ours = numbers(cells[1].split("(")[0]), numbers(cells[2].split("(")[0])
        pkb_trials, pkb_mean = pkb[:5], pkb[5]
        our_trials, our_mean = ours[:5], ours[5]
        assert pkb_mean == round(statistics.fmean(pkb_trials), 4)
        assert our_mean == round(statistics.fmean(our_trials), 4)
        diff = (statistics.fmean(our_trials) / statistics.fmean(pkb_trials) - 1) * 100
        quoted = numbers(cells[3])[0]
        assert quoted == round(diff, len(cells[3].split(".")[1].split()[0]) if "." in cells[3] else 0)


def test_the_bundled_profiles_fp16_gemm_roof():
    from linkroof.profiler.session import bundled_profile
    from linkroof.roofline.model import MachineModel

    roof = MachineModel.from_profile(bundled_profile()).compute("fp16").value / 1e12
    row = next(r for r in table_after("| figure | quick | default | full | full (bundled) | reference | verdict |")
               if r[0] == "fp16 GEMM 8192³")
    assert numbers(row[4])[0] == round(roof, 1)
    assert f"fp16 GEMM {round(roof, 1)} TFLOP/s" in RESULTS
