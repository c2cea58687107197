"""benchmarks/mutation.py's classes of survivors: 'text' only where a mutant changes the
wording of a message, never where it changes code hidden in a string: an f-string's
field, a dictionary key or a kind, an array's type code (mutmut 3.8.1's survivors of
timeline, 2026-12-04, each of which the earlier rule called wording)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from mutation import classify  # noqa: E402


def diff(old, new):
    return f"--- linkroof/m.py\n+++ linkroof/m.py\n@@ -1 +1 @@\n-{old}\n+{new}\n"


@pytest.mark.parametrize("old, new", [
    ('    out.append((U, gap, "the timed median exceeds the recorded calls\' busy time: "', '    out.append((U, gap, "XXthe timed median exceeds the recorded calls\' busy time: XX"'),
    ('    "clocks) or the host paused; not attributed"))', '    "CLOCKS) OR THE HOST PAUSED; NOT ATTRIBUTED"))'),
    ('    said = ", ".join(parts)', '    said = "XX, XX".join(parts)'),
    ('    msg = f"{n} kernels ran slower than the recorded ones"', '    msg = f"{n} KERNELS RAN SLOWER THAN THE RECORDED ONES"'),
])
def test_a_messages_wording_is_text(old, new):
    assert classify(diff(old, new)) == "text"


@pytest.mark.parametrize("old, new", [
    ('    f"{atomic / busy / 1e9:.1f} G/s, SM {sm:.0f}%"', '    f"{atomic / busy / 1000000001.0:.1f} G/s, SM {sm:.0f}%"'),  # a field's figure
    ('    f"SM {g(\'sm_pct\') or 0:.0f}%"', '    f"SM {g(\'sm_pct\') or 1:.0f}%"'),
    ('    return ", ".join(f"{k.split(\':\', 1)[1]} {v:.3g}" for k in c)', '    return ", ".join(f"{k.rsplit(\':\', 1)[1]} {v:.3g}" for k in c)'),
    ('    on["idle"] = on.get("idle", 0) + t', '    on["idle"] = on.get("XXidleXX", 0) + t'),  # a key
    ('    if h.kind in ("launch", "sync")}', '    if h.kind in ("launch", "SYNC")}'),  # a kind
    ('    ours = array("q")', '    ours = array("Q")'),  # a type code
    ('    source: str = "cupti", rank=None,', '    source: str = "XXcuptiXX", rank=None,'),
    ('    x = a + 1', '    x = a - 1'),
    ('    x = "a b" + y', '    x = "a b" - y'),
    ('    x = f"a {y}"', '    x = "a {y}"'),  # no longer an f-string
])
def test_code_in_a_string_or_outside_one_is_open(old, new):
    assert classify(diff(old, new)) == "open"


def test_a_removed_or_added_line_is_open():
    assert classify("-    x = 1\n-    y = 2\n+    x = 1\n") == "open"
    assert classify("") == "open"
