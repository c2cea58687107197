"""benchmarks/mutant_diffs.py rebuilds mutmut's mutants from the current source, under
mutmut's own names, so that the survivors of a saved run can be handed out as diffs
(tests/tools/mutants.py --diffs) without mutmut's work copy."""

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("mutmut")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
spec = importlib.util.spec_from_file_location("mutant_diffs_script", ROOT / "benchmarks" / "mutant_diffs.py")
D = importlib.util.module_from_spec(spec)
spec.loader.exec_module(D)

SOURCE = '''
def f(a, b):
    if a > b:
        return a - 1
    return "the same"


class Box:
    def size(self, n):
        return n * 2
'''


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(SOURCE)
    return tmp_path


def test_names_are_mutmuts_own(tree, monkeypatch):
    """The names are those mutmut gives the same file's mutants: function by function,
    numbered from 1, a method's under its class."""
    from mutmut import configuration
    monkeypatch.setattr(configuration, "_config", configuration._config)  # mutmut's own run's, put back
    from mutmut.mutation.file_mutation import mutate_file_contents
    from mutmut.utils.file_utils import change_cwd

    diffs, hashes = D.mutant_diffs("pkg.mod", tree)
    (tree / "pyproject.toml").write_text('[tool.mutmut]\nsource_paths = ["pkg/mod.py"]\n')
    with change_cwd(tree):
        configuration.reset_config()
        theirs = mutate_file_contents("pkg/mod.py", SOURCE)
    configuration.reset_config()
    assert sorted(diffs) == sorted("pkg.mod." + n for n in theirs.mutant_names)
    assert any(".xǁBoxǁsize__mutmut_1" in n for n in diffs) and "pkg.mod.x_f__mutmut_1" in diffs
    assert set(hashes) == {"x_f", "xǁBoxǁsize"}


def test_each_diff_changes_one_line_and_applies(tree):
    """Each diff removes one line of the function and adds its mutant, in the form that
    tests/tools/mutants.py --diffs applies to the file."""
    diffs, _ = D.mutant_diffs("pkg.mod", tree)
    for name, diff in diffs.items():
        minus = [x for x in diff.splitlines() if x.startswith("-") and not x.startswith("---")]
        plus = [x for x in diff.splitlines() if x.startswith("+") and not x.startswith("+++")]
        assert len(minus) == 1 and len(plus) == 1, name
        assert minus[0][1:] in SOURCE
    assert any("a >= b" in d for d in diffs.values())
    assert any("n / 2" in d for d in diffs.values())


def test_open_diffs_picks_by_status_and_leaves_equivalents_and_changed_functions(tree):
    diffs, hashes = D.mutant_diffs("pkg.mod", tree)
    names = sorted(diffs)
    f_names = [n for n in names if ".x_f__" in n]
    box = [n for n in names if "Box" in n]
    meta = {"exit_code_by_key": {f_names[0]: 0, f_names[1]: 0, f_names[2]: 1, f_names[3]: None, box[0]: 0},
            "hash_by_function_name": {"x_f": hashes["x_f"], "xǁBoxǁsize": "not the same"}}
    found, changed = D.open_diffs("pkg.mod", meta, "survived", tree, equiv={f_names[1]: "why"})
    assert [n for n, _, _ in found] == [f_names[0]]  # killed, not run, equivalent and changed left out
    assert changed == 1  # Box.size's result was saved for another version of it
    assert found[0][2] == diffs[f_names[0]] and found[0][1] in ("open", "text")
    found, _ = D.open_diffs("pkg.mod", meta, "not run", tree, equiv={})
    assert [n for n, _, _ in found] == [f_names[3]]


def test_a_mutant_of_a_message_is_classed_text(tree):
    """A message's wording changed is 'text'; a figure or a comparison changed is 'open'."""
    diffs, _ = D.mutant_diffs("pkg.mod", tree)
    text = [n for n, d in diffs.items() if '-    return "the same"' in d]
    assert text and all(D.classify(diffs[n]) == "text" for n in text)
    assert all(D.classify(d) == "open" for n, d in diffs.items() if n not in text)


def test_mutation_py_classes_a_survivor_from_its_rebuilt_diff(tree):
    """benchmarks/mutation.py classes survivors from the diff rebuilt from the work copy's
    source, not from `mutmut show` alone (which printed nothing for some: an empty diff is
    'open')."""
    spec2 = importlib.util.spec_from_file_location("mutation_script2", ROOT / "benchmarks" / "mutation.py")
    M = importlib.util.module_from_spec(spec2)
    spec2.loader.exec_module(M)
    rebuilt = M.rebuilt_diffs("pkg.mod", tree)
    assert rebuilt == D.mutant_diffs("pkg.mod", tree)[0]
    words = [n for n, d in rebuilt.items() if '-    return "the same"' in d]
    assert words and all(M.classify(rebuilt[n]) == "text" for n in words)
    assert M.classify("") == "open"
    assert M.rebuilt_diffs("pkg.nothing_here", tree) == {}


def test_the_callers_mutmut_settings_are_put_back(tree, monkeypatch):
    # under mutmut's own stats run this test calls mutant_diffs in mutmut's process: the temporary
    # settings (no test selection) were left as the run's, saved in its stats, and the next run
    # reset every kept result (2026-12-05)
    from mutmut import configuration
    sentinel = object()
    monkeypatch.setattr(configuration, "_config", sentinel)
    D.mutant_diffs("pkg.mod", root=tree)
    assert configuration._config is sentinel
