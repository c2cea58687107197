"""benchmarks/mutation_tally.py: one class per mutant from mutmut's saved results and the
logs of tests/tools/mutants.py runs, in a fixed order of precedence, and the share of
killed over killed + open + no tests (not run and text left out, and counted)."""

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("mutmut")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
spec = importlib.util.spec_from_file_location("mutation_tally_script", ROOT / "benchmarks" / "mutation_tally.py")
T = importlib.util.module_from_spec(spec)
spec.loader.exec_module(T)

SOURCE = '''
def f(a, b):
    if a > b:
        return a - 1
    if a == b * 2:
        return b + 3
    raise ValueError("too small a value")
'''


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(SOURCE)
    return tmp_path


def _names(tree):
    diffs, hashes = T.mutant_diffs("pkg.mod", tree)
    return sorted(diffs, key=lambda n: int(n.rsplit("_", 1)[1])), hashes, diffs


def test_each_mutant_gets_one_class_in_order(tree):
    names, hashes, diffs = _names(tree)
    text = [n for n in names if T.classify(diffs[n]) == "text"]
    code = [n for n in names if n not in text]
    assert len(text) >= 1 and len(code) >= 6, names
    a, b, c, d, e, f = code[:6]
    codes = {n: None for n in names}
    codes.update({a: 1, b: 0, c: 0, d: 33, e: None, f: 36})
    log = tree / "x-reapplied.txt"
    log.write_text(f"mutating a copy: /tmp/x\nkilled  {b}\nSURVIVED {e}\nkilled {text[0]}\n1 survived: []\n")
    t = T.tally("pkg.mod", {"exit_code_by_key": codes, "hash_by_function_name": hashes}, [log], root=tree,
                equiv={c: "why", b: "a kill wins over a claim of equivalence"})
    assert t["counts"] == {"killed (mutmut)": 1, "killed (log)": 2, "equivalent": 1, "text": len(text) - 1,
                           "timeout": 1, "open": 1, "no tests": 1, "not run": len(code) - 6}
    # killed 3 of killed 3 + open 1 (the log's survivor) + no tests 1
    assert t["killed_share"] == 0.6
    assert set(t["open"]) == {e, d, *code[6:]}


def test_a_changed_function_is_refused(tree):
    names, hashes, _ = _names(tree)
    with pytest.raises(SystemExit, match="changed since"):
        T.tally("pkg.mod", {"exit_code_by_key": {names[0]: 1}, "hash_by_function_name": {"x_f": "other"}}, [],
                root=tree, equiv={})


def test_read_logs_takes_a_kill_from_any_log(tmp_path):
    one, two = tmp_path / "one.txt", tmp_path / "two.txt"
    one.write_text("SURVIVED m_1\nkilled m_2\n?? m_3: the text occurs 2 times\n")
    two.write_text("killed m_1\n")
    killed, survived = T.read_logs([one, two])
    assert killed == {"m_2": "one.txt", "m_1": "two.txt"} and survived == {"m_1": "one.txt"}


def test_a_changed_function_voided_is_judged_by_the_logs_alone(tree):
    names, hashes, _ = _names(tree)
    stale = {n: 1 for n in names} | {"pkg.mod.x_f__mutmut_999": 1}  # a number the current source has not
    log = tree / "new-reapplied.txt"
    log.write_text(f"killed {names[0]}\nSURVIVED {names[1]}\n")
    t = T.tally("pkg.mod", {"exit_code_by_key": stale, "hash_by_function_name": {"x_f": "other"}}, [],
                root=tree, equiv={}, void_changed=True, fresh=[log])
    assert t["changed_since_saved"] == ["x_f"] and t["mutants"] == len(names)
    assert t["counts"]["killed (mutmut)"] == 0 and t["counts"]["killed (log)"] == 1 and t["counts"]["open"] == 1


def test_a_changed_function_is_judged_by_fresh_logs_only(tree):
    """An older log's name means another change in a changed function: only a fresh log counts there."""
    names, hashes, _ = _names(tree)
    old, new = tree / "old-reapplied.txt", tree / "again-reapplied.txt"
    old.write_text(f"killed {names[0]}\nkilled {names[1]}\n")
    new.write_text(f"SURVIVED {names[0]}\nkilled {names[2]}\n")
    t = T.tally("pkg.mod", {"exit_code_by_key": {n: 1 for n in names}, "hash_by_function_name": {"x_f": "other"}},
                [old], root=tree, equiv={}, void_changed=True, fresh=[new])
    assert t["counts"]["killed (log)"] == 1 and t["counts"]["open"] == 1  # names[1]'s old kill is not counted
    assert t["fresh_logs"] == ["again-reapplied.txt"]
