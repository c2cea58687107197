"""Issue 45, item 2: the README's trace example shows what its text claims. The bundled
two-rank trace (examples/traces, synthetic, its maker beside it) has every collective
placed at NCCL's speed, one all-reduce overlapped and one exposed a step, and rank 1
late in step 2; a one-rank group's collectives count no communication, exposed or not;
ties name no rank."""

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from linkroof.profiler.session import bundled_profile
from linkroof.readers import traces as P

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples" / "traces"
REF = bundled_profile()
US = 1e-6


@pytest.fixture(scope="module")
def report():
    return P.analyze([P.read_trace(EX / f"train_2xh200_rank{r}.json.gz") for r in (0, 1)], REF)


def test_the_bundled_files_are_what_their_maker_writes(tmp_path):
    made = tmp_path / "traces"
    made.mkdir()
    (made / "make_example.py").write_bytes((EX / "make_example.py").read_bytes())
    subprocess.run([sys.executable, str(made / "make_example.py")], check=True, capture_output=True,
                   env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    for r in (0, 1):
        assert gzip.decompress((made / f"train_2xh200_rank{r}.json.gz").read_bytes()) == \
            gzip.decompress((EX / f"train_2xh200_rank{r}.json.gz").read_bytes())
    assert b"synthetic" in gzip.decompress((EX / "train_2xh200_rank0.json.gz").read_bytes())


def test_every_collective_is_placed_at_nccls_speed(report):
    assert len(report.rows) == 12 and all(r.call.group_size == 2 for r in report.rows)
    late = [r for r in report.rows if r.call.size_bytes == 64 << 20 and r.call.duration_s > 700 * US]
    on_time = [r for r in report.rows if r not in late]
    assert all(r.fraction_of_nccl == pytest.approx(1.0, abs=1e-4) for r in on_time)
    # rank 0's all-reduce of step 2 waited 500 us for rank 1: 230.6 of 730.6 us is NCCL's
    [w] = late
    assert w.fraction_of_nccl == pytest.approx(230.576 / 730.576, rel=1e-4)


def test_one_all_reduce_a_step_overlapped_the_other_exposed_and_rank_1_late_in_step_2(report):
    by = {(s.rank, s.step): s for s in report.steps}
    for (rank, step), s in by.items():
        assert s.overlapped_s == pytest.approx(862.766 * US, abs=1e-9)
        late = rank == 0 and step == "ProfilerStep#2"
        assert s.exposed_s == pytest.approx((730.576 if late else 230.576) * US, abs=1e-9), (rank, step)
    [straggle] = [m for m in report.matched if m.skew_s > 0]
    assert straggle.last_rank == 1 and straggle.skew_s == pytest.approx(500 * US) and straggle.key[-1] == 4
    assert all(m.last_rank is None and m.last_words == "none (a tie)" for m in report.matched if m is not straggle)


def test_a_one_rank_groups_collectives_count_no_communication():
    """The README's former example: six one-rank all-gathers and reduce-scatters counted
    64.1 us of exposed communication a step. A one-rank group crosses no link: its
    copies are memory work, and nothing is exposed."""
    rep = P.analyze([P.read_trace(ROOT / "tests" / "data" / "traces" / "h200x1_torch2.11_rank0.json.gz")], REF)
    assert all(r.call.group_size == 1 and r.exposed_s == 0.0 for r in rep.rows)
    for s in rep.steps:
        assert s.communication_s == 0.0 and s.exposed_s == 0.0 and s.collectives == 2
        assert s.class_s["memory"] > 100 * US  # the copies, now memory (49 us of kernels before + 64 us of copies)


def test_a_chart_with_nothing_to_place_says_why():
    from linkroof.dashboard.figures import trace_collectives_figure

    rep = P.analyze([P.read_trace(ROOT / "tests" / "data" / "traces" / "h200x1_torch2.11_rank0.json.gz")], REF)
    fig = trace_collectives_figure(rep, REF)
    notes = [a.text for a in fig.layout.annotations]
    assert "No collective call of the trace can be placed here (6 calls): 6 of one-rank groups (nothing crosses " \
           "a link) (the table lists each)" in notes
    two = P.analyze([P.read_trace(EX / f"train_2xh200_rank{r}.json.gz") for r in (0, 1)], REF)
    assert not any(str(a.text).startswith("No collective") for a in trace_collectives_figure(two, REF).layout.annotations)


def test_the_trace_pages_matched_calls_show_no_python_tuples(report):
    from linkroof.dashboard.app import _matched_row

    rows = [_matched_row(m) for m in report.matched]
    assert rows[3]["process group"] == "0" and rows[3]["call"] == 4 and rows[3]["ranks"] == "0,1"
    assert rows[3]["last_rank"] == "1" and rows[0]["last_rank"] == "none (a tie)"
    assert not any("(" in str(v) and "," in str(v) and str(v).startswith("(") for r in rows for v in r.values())
