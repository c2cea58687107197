"""benchmarks/mutation.py keeps mutmut's results between checkouts: saved gzipped under the
run's folder, put back into a fresh work copy, never over a work copy's own."""

import gzip
import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("mutation_script", ROOT / "benchmarks" / "mutation.py")
M = importlib.util.module_from_spec(spec)
spec.loader.exec_module(M)

META = {"exit_code_by_key": {"linkroof.roofline.cost.x_f__mutmut_1": 1, "linkroof.roofline.cost.x_f__mutmut_2": 0},
        "hash_by_function_name": {"x_f": "abc"}, "type_check_error_by_key": {}, "durations_by_key": {},
        "estimated_durations_by_key": {}}


def _work_with_meta(tmp_path, name, meta):
    work = tmp_path / name
    path = M.meta_path(work, "linkroof.roofline.cost")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(meta))
    return work


def test_the_meta_path_is_mutmuts_own():
    assert M.meta_path(Path("/w"), "linkroof.readers.flightrec") == Path("/w/mutants/linkroof/readers/flightrec.py.meta")


def test_results_saved_then_restored_into_a_fresh_work_copy(tmp_path):
    work = _work_with_meta(tmp_path, "old", META)
    out = tmp_path / "run"
    saved = M.save_results(work, "linkroof.roofline.cost", out)
    assert saved == out / "meta" / "linkroof.roofline.cost.meta.json.gz"
    assert json.loads(gzip.open(saved, "rt").read()) == META
    fresh = tmp_path / "fresh"
    done = M.restore_results(fresh, ["linkroof.roofline.cost", "linkroof.roofline.export"], [out])
    assert done == {"linkroof.roofline.cost": str(out)}  # export had nothing saved: left to mutmut
    assert json.loads(M.meta_path(fresh, "linkroof.roofline.cost").read_text()) == META
    assert not M.meta_path(fresh, "linkroof.roofline.export").exists()


def test_a_work_copys_own_results_are_never_overwritten(tmp_path):
    out = tmp_path / "run"
    M.save_results(_work_with_meta(tmp_path, "old", META), "linkroof.roofline.cost", out)
    mine = dict(META, exit_code_by_key={"linkroof.roofline.cost.x_f__mutmut_1": 0})
    work = _work_with_meta(tmp_path, "mine", mine)
    assert M.restore_results(work, ["linkroof.roofline.cost"], [out]) == {}
    assert json.loads(M.meta_path(work, "linkroof.roofline.cost").read_text()) == mine


def test_the_last_folder_given_wins(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    M.save_results(_work_with_meta(tmp_path, "w1", META), "linkroof.roofline.cost", first)
    later = dict(META, exit_code_by_key={"linkroof.roofline.cost.x_f__mutmut_2": 1})
    M.save_results(_work_with_meta(tmp_path, "w2", later), "linkroof.roofline.cost", second)
    fresh = tmp_path / "fresh"
    assert M.restore_results(fresh, ["linkroof.roofline.cost"], [first, second]) == {"linkroof.roofline.cost": str(second)}
    assert json.loads(M.meta_path(fresh, "linkroof.roofline.cost").read_text()) == later


def test_nothing_to_save_is_none(tmp_path):
    assert M.save_results(tmp_path / "empty", "linkroof.roofline.cost", tmp_path / "out") is None


def test_fresh_stats_drops_mutmuts_test_map_and_keeps_the_results(tmp_path):
    """mutmut 3.8.1 maps old tests to functions only when the map is first taken: --fresh-stats
    removes the map (mutants/mutmut-stats.json) so the next run takes it whole, and leaves
    each module's results (its .meta) in place."""
    work = _work_with_meta(tmp_path, "w", META)
    stats = work / "mutants" / "mutmut-stats.json"
    stats.write_text("{}")
    assert M.drop_stats(work) is True
    assert not stats.exists()
    assert json.loads(M.meta_path(work, "linkroof.roofline.cost").read_text()) == META
    assert M.drop_stats(work) is False  # nothing to drop: said so


def test_files_left_out_are_not_copied_and_leave_an_earlier_copy(tmp_path, monkeypatch):
    """--leave-out: a test file still being written beside a run is not in its work copy, even
    where an earlier copy put it there; the rest of the tree is copied."""
    src = tmp_path / "src"
    (src / "tests").mkdir(parents=True)
    (src / "tests" / "test_a.py").write_text("a")
    (src / "tests" / "test_wip_b.py").write_text("b")
    (src / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    monkeypatch.setattr(M, "ROOT", src)
    work = tmp_path / "work"
    M.work_tree(work, ["linkroof.roofline.cost"])
    assert (work / "tests" / "test_wip_b.py").exists()
    M.work_tree(work, ["linkroof.roofline.cost"], ("test_wip_*.py",))
    assert sorted(p.name for p in (work / "tests").iterdir()) == ["test_a.py"]
