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
    at = RESULTS.rfind("\n", 0, RESULTS.index(marker)) + 1  # the marker's own line: a table's header, or text
    rows, started = [], False
    lines = RESULTS[at:].splitlines()
    for line in lines if lines[0].startswith("|") else lines[1:]:
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


def test_the_bundled_run_column_is_its_log_and_today_is_the_bundled_profile():
    """The "full (bundled)" column of the 2026-11-29 table is that run's log (the profile
    it became was replaced on 2026-11-30); what is said of today's bundled profile is the
    current one's (the audit read the column against today's profile: 813.7 against 814.2)."""
    import gzip

    from linkroof.profiler.session import bundled_profile
    from linkroof.roofline.model import MachineModel

    log = gzip.open(DATA / "2026-11-29-2" / "bundled-full.log.gz", "rt").read()
    logged = {(m.group(1), m.group(2)): float(m.group(3)) for m in
              re.finditer(r"^\s+(\S+)\s+(\S+)\s+\S+\s+([\d.]+)\s+ref", log, re.M)}
    rows = {r[0]: r for r in table_after("| figure | quick | default | full | full (bundled) | reference | verdict |")}
    assert numbers(rows["fp16 GEMM 8192³"][4])[0] == logged[("gemm_throughput:fp16", "compute")]
    assert numbers(rows["local CE copy"][4])[0] == logged[("local_copy_bandwidth", "ce")]
    assert numbers(rows["peer TMA read / write"][4]) == [logged[("p2p_read_bandwidth", "tma")],
                                                         logged[("p2p_write_bandwidth", "tma")]]
    roof = MachineModel.from_profile(bundled_profile()).compute("fp16").value / 1e12
    assert f"its fp16 GEMM roof {round(roof, 1)}, GPU1's" in RESULTS  # today's bundled profile, said as such


def _best(prof, name, mech, pattern=None):
    """The best figure of a benchmark at its dedicated size (no sweep, no block count):
    the headline rule of the summary the runs printed (either direction, either GPU)."""
    got = [m for m in prof.measurements if m.spec.name == name and m.spec.mechanism == mech and m.verified
           and (pattern is None or m.spec.pattern == pattern) and not m.spec.params.get("sweep")
           and ("loops" in m.spec.params or mech not in ("sm", "tma"))  # the block and chunk sweeps have none
           and m.spec.params.get("host_memory", "pinned") == "pinned"
           and m.spec.params.get("dtype", "fp16") == "fp16"]
    assert got, (name, mech)
    return max(m.flop_rate if m.spec.mechanism == "compute" else m.bandwidth_bytes_per_s for m in got)


@pytest.mark.parametrize("column, file", [(1, "quick.json.gz"), (2, "default.json.gz")])
def test_the_2026_11_29_quick_and_default_columns(column, file):
    import gzip

    from linkroof.schema import Profile, loads

    prof = loads(gzip.open(DATA / "2026-11-29-2" / file).read(), Profile)
    rows = {r[0]: r for r in table_after("| figure | quick | default | full | full (bundled) | reference | verdict |")}
    g = 1e9
    want = {"peer CE read / write": [_best(prof, "p2p_read_bandwidth", "ce") / g,
                                     _best(prof, "p2p_write_bandwidth", "ce") / g],
            "peer SM read / write": [_best(prof, "p2p_read_bandwidth", "sm", "p2p_read") / g,
                                     _best(prof, "p2p_write_bandwidth", "sm") / g],
            "peer TMA read / write": [_best(prof, "p2p_read_bandwidth", "tma", "p2p_read") / g,
                                      _best(prof, "p2p_write_bandwidth", "tma") / g],
            "H2D / D2H pinned": [_best(prof, "h2d_bandwidth", "ce") / g, _best(prof, "d2h_bandwidth", "ce") / g],
            "local CE copy": [_best(prof, "local_copy_bandwidth", "ce") / g],
            "fp16 GEMM 8192³": [_best(prof, "gemm_throughput", "compute") / 1e12]}
    for figure, values in want.items():
        quoted = numbers(rows[figure][column])
        digits = 2 if figure.startswith("H2D") else 1
        assert quoted == [round(v, digits) for v in values], (figure, quoted, values)


def test_compare_on_two_h200s_is_its_logged_json():
    import gzip

    log = gzip.open(DATA / "2026-11-29-2" / "validate.log.gz", "rt").read()
    doc = json.loads(log[log.index("{", log.index("== compare targets")):log.index("}", log.index("== compare targets")) + 1])
    rows = {r[0]: r for r in table_after("## compare on 2 × H200")}
    copy = numbers(rows["1 GiB CE peer copy through compare"][1])
    assert copy[:2] == [round(doc["GBps"], 2), round(doc["fraction_of_measured_roofline"] * 100, 2)]
    counted = numbers(rows["NVLink counter bytes per call (NVML, per link, summed)"][1])
    assert counted[0] == int(doc["counter_bytes_per_call"])
    assert numbers(rows["compare's overhead beyond the user's warm-up and repetitions"][1])[0] == \
        round(doc["compare_overhead_s"], 3)
