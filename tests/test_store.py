"""The SQLite store: round trips, listing, and writes that are all-or-nothing."""

import dataclasses
import subprocess
from pathlib import Path
import sys
import textwrap

import factories
import pytest

from linkroof import store as store_mod
from linkroof.store import Store, StoreError


def profile(n_measurements: int = 3, label: str = ""):
    ms = [factories.measurement("p2p_read_bandwidth", pattern="p2p_read", times=(2.7e-3 + i * 1e-6, 2.71e-3, 2.72e-3))
          for i in range(n_measurements)]
    return factories.profile(ms, label=label)


def test_round_trip(tmp_path):
    p = profile()
    with Store(tmp_path / "s.sqlite") as s:
        s.put(p)
        back = s.get(p.id)
        assert back == p
        assert s.latest() == p
        rows = s.measurements(mechanism="ce")
        assert len(rows) == 3 and rows[0]["bandwidth_gbps"] == pytest.approx((1 << 30) / 2.71e-3 / 1e9)


def test_wal_and_default_location(tmp_path, monkeypatch):
    monkeypatch.delenv("LINKROOF_STORE", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    if sys.platform != "darwin":
        assert store_mod.default_path() == tmp_path / "xdg" / "linkroof" / "store.sqlite"
    with Store() as s:
        assert s.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    monkeypatch.setenv("LINKROOF_STORE", str(tmp_path / "env.sqlite"))
    assert store_mod.default_path() == tmp_path / "env.sqlite"


def test_interrupted_write_leaves_store_unchanged(tmp_path, monkeypatch):
    path = tmp_path / "s.sqlite"
    first = profile(label="kept")
    with Store(path) as s:
        s.put(first)

    real_rows = store_mod._measurement_rows

    def rows_then_fail(p):
        yield from list(real_rows(p))[:2]
        raise RuntimeError("power cut halfway through the measurements")

    monkeypatch.setattr(store_mod, "_measurement_rows", rows_then_fail)
    second = profile(label="lost")
    with Store(path) as s, pytest.raises(RuntimeError):
        s.put(second)
    with Store(path) as s:
        assert [r["label"] for r in s.list()] == ["kept"]
        assert len(s.measurements()) == 3  # none of the half-written profile's rows


def test_killed_writer_leaves_store_unchanged(tmp_path):
    """A process killed inside its transaction: the store keeps only what was committed."""
    path = tmp_path / "s.sqlite"
    with Store(path) as s:
        s.put(profile(label="kept"))
    code = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(__file__.rsplit('/', 1)[0])!r})
        from test_store import profile
        from linkroof import store as m
        def die(p):
            yield from list(real(p))[:1]
            os._exit(9)  # no rollback, no close: like kill -9
        real = m._measurement_rows
        m._measurement_rows = die
        m.Store({str(path)!r}).put(profile(label="killed"))
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 9, res.stderr
    with Store(path) as s:
        assert [r["label"] for r in s.list()] == ["kept"]
        assert s.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_duplicate_and_missing(tmp_path):
    p = profile()
    with Store(tmp_path / "s.sqlite") as s:
        s.put(p)
        s.put(p)  # the same document again: nothing to do, nothing lost
        assert s.unchanged and s.count() == 1
        other = dataclasses.replace(p, label="changed")
        with pytest.raises(StoreError, match="already in the store, with other contents: nothing was written"):
            s.put(other)
        assert s.get(p.id).label == p.label
        s.put(other, replace=True)
        assert s.count() == 1 and s.get(p.id).label == "changed" and not s.unchanged
        with pytest.raises(StoreError, match="no profile"):
            s.get("missing")
        with pytest.raises(StoreError, match="no profile"):
            s.remove("missing")


def test_ambiguous_prefix(tmp_path):
    with Store(tmp_path / "s.sqlite") as s:
        a, b = profile(), profile()
        s.put(a)
        s.put(b)
        with pytest.raises(StoreError, match="ambiguous"):
            s.get("2")


def test_list_pages_newest_first(tmp_path):
    with Store(tmp_path / "s.sqlite") as s:
        ids = [s.put(profile(n_measurements=0, label=str(i))) for i in range(5)]
        assert s.count() == 5
        first = s.list(limit=2)
        assert [r["label"] for r in first] == ["4", "3"]
        assert [r["label"] for r in s.list(limit=2, offset=4)] == ["0"]
        assert first[0]["gpus"] == "2 x NVIDIA H200"
        s.remove(ids[0])
        assert s.count() == 4


def test_not_a_database(tmp_path):
    bad = tmp_path / "x.sqlite"
    bad.write_bytes(b"\x00garbage" * 200)
    with pytest.raises(StoreError, match="damaged or not a linkroof store"):
        Store(bad)
    assert bad.read_bytes().startswith(b"\x00garbage")


def test_readonly_store_write_fails_cleanly(tmp_path):
    path = tmp_path / "s.sqlite"
    with Store(path) as s:
        s.put(profile(label="kept"))
    s = Store(path)
    s.conn.execute("PRAGMA query_only=ON")
    with pytest.raises(StoreError, match="cannot write"):
        s.put(profile())
    s.close()


def test_no_command_overwrites_a_stored_profile_that_differs(tmp_path, monkeypatch):
    """Nothing lost: `run` with no GPU stores the bundled reference once and never over a
    stored copy that was extended (import --into); `runs import` of a changed file with
    the same id is refused unless --replace, and of the same file changes nothing;
    `import` makes a new profile each time."""
    import json

    from click.testing import CliRunner

    from linkroof.cli import cli
    from linkroof.schema import dumps

    monkeypatch.chdir(tmp_path)
    store = str(tmp_path / "s.sqlite")
    r = CliRunner()

    def go(*args):
        return r.invoke(cli, ["--store", store, *args])

    first = go("run", "--no-dashboard")
    assert first.exit_code == 0, first.output
    with Store(store) as s:
        (row,) = s.list()
        ref_id, n = row["id"], row["measurements"]
    anchor = Path(__file__).parent / "data" / "anchor" / "nt_allgather.txt"
    assert go("import", "nccl-tests", str(anchor), "--into", ref_id).exit_code == 0
    with Store(store) as s:
        extended = s.get(ref_id)
    assert len(extended.measurements) > n
    again = go("run", "--no-dashboard")
    assert again.exit_code == 0, again.output
    assert "nothing overwritten" in again.output
    with Store(store) as s:
        assert len(s.get(ref_id).measurements) == len(extended.measurements)  # the imported figures are still there
    # runs import: the same file is a no-op, a changed one with the same id is refused
    f = tmp_path / "p.json"
    f.write_text(dumps(extended))
    same = go("runs", "import", str(f))
    assert same.exit_code == 0 and "identical: nothing to do" in same.output
    changed = json.loads(f.read_text())
    changed["label"] = "edited"
    f.write_text(json.dumps(changed))
    refused = go("runs", "import", str(f))
    assert refused.exit_code == 1 and "nothing was written" in refused.output
    with Store(store) as s:
        assert s.get(ref_id).label == extended.label
    assert go("runs", "import", str(f), "--replace").exit_code == 0
    with Store(store) as s:
        assert s.get(ref_id).label == "edited"
    # import: a new profile every time, nothing replaced
    before = Store(store).count()
    assert go("import", "nccl-tests", str(anchor)).exit_code == 0 and go("import", "nccl-tests", str(anchor)).exit_code == 0
    assert Store(store).count() == before + 2


def test_a_read_only_store_shows_what_its_log_still_holds(tmp_path):
    """A store another process still writes keeps its last commits in the WAL; opened
    read-only here it lists every committed profile, not only those checkpointed."""
    import os
    import stat

    path = tmp_path / "ro" / "s.sqlite"
    path.parent.mkdir()
    writer = Store(path)
    writer.conn.execute("PRAGMA wal_autocheckpoint=0")  # keep the commits in the log
    for i in range(4):
        writer.put(profile(label=f"p{i}"))
    assert (path.parent / "s.sqlite-wal").stat().st_size > 0
    os.chmod(path, stat.S_IRUSR)
    os.chmod(path.parent, stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.access(path.parent, os.W_OK):  # running as root: no permission holds the folder; say so
            import unittest.mock as mock

            real = os.access
            with mock.patch("os.access", lambda p, mode: False if mode == os.W_OK else real(p, mode)):
                reader = Store(path)
        else:
            reader = Store(path)
        with reader:
            assert reader.read_only and reader.count() == 4 and len(reader.list()) == 4
    finally:
        os.chmod(path.parent, stat.S_IRWXU)
        os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
        writer.close()


def test_a_poisoned_profile_never_breaks_other_commands(tmp_path):
    """A document already stored that no longer validates (written by an older version,
    or by hand): listed as damaged, skipped by 'newest', refused by show with one line,
    and removable without reading it."""
    import json

    from click.testing import CliRunner

    from linkroof.cli import cli
    from linkroof.schema import dumps

    path = tmp_path / "s.sqlite"
    good = profile(label="good")
    with Store(path) as s:
        s.put(dataclasses.replace(good, created_at="2026-12-01T00:00:00+00:00"))
        bad = json.loads(dumps(profile(label="poisoned")))
        bad["id"], bad["created_at"] = "20261202-000000-bad000", "2026-12-02T00:00:00+00:00"
        bad["measurements"][0]["times_s"] = [-1.0]
        s.conn.execute("INSERT INTO profiles (id, created_at, hostname, label, gpus, n_measurements, document) "
                       "VALUES (?, ?, 'h', 'poisoned', '', 1, ?)", (bad["id"], bad["created_at"], json.dumps(bad)))
        assert s.latest().label == "good"  # newest that reads back
        rows = {r["id"]: r for r in s.list()}
        assert "times_s" in rows[bad["id"]]["damaged"] and rows[good.id]["damaged"] is None
    r = CliRunner()
    listed = r.invoke(cli, ["--store", str(path), "runs", "list"])
    assert listed.exit_code == 0 and "DAMAGED" in listed.output
    shown = r.invoke(cli, ["--store", str(path), "runs", "show", bad["id"]])
    assert shown.exit_code == 1 and "is damaged" in shown.output and "runs rm" in shown.output
    assert r.invoke(cli, ["--store", str(path), "roofline"]).exit_code == 0  # newest: the good one
    gone = r.invoke(cli, ["--store", str(path), "runs", "rm", bad["id"], "--yes"])
    assert gone.exit_code == 0, gone.output
    with Store(path) as s:
        assert [x["id"] for x in s.list()] == [good.id]


def test_ids_are_text_not_patterns(tmp_path):
    """'_' and '%' are characters of an id, never SQL LIKE wildcards: `runs rm
    '_eed-small%'` removes nothing (it removed seed-small-0001); a unique prefix works
    and is said; empty, over-long, NUL and newline ids are refused in one line."""
    from click.testing import CliRunner

    from linkroof.cli import cli

    path = tmp_path / "s.sqlite"
    with Store(path) as s:
        s.put(dataclasses.replace(profile(), id="seed-small-0001"))
        for bad_id in ("", "x" * 200, "a\x00b", "a\nb", "\x1b[31m"):
            with pytest.raises(StoreError):
                s.put(dataclasses.replace(profile(), id=bad_id))
    r = CliRunner()
    for pattern in ("_eed-small%", "%", "seed_small-0001", "%0001"):
        res = r.invoke(cli, ["--store", str(path), "runs", "rm", pattern, "--yes"])
        assert res.exit_code == 1 and "no profile" in res.output, pattern
    for odd in ("", "x" * 300, "a\x00b", "a\nb"):
        res = r.invoke(cli, ["--store", str(path), "runs", "show", odd])
        assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1, (odd, res.output)
    prefix = r.invoke(cli, ["--store", str(path), "runs", "rm", "seed-small", "--yes"])
    assert prefix.exit_code == 0 and "is a prefix of profile seed-small-0001" in prefix.output
    with Store(path) as s:
        assert s.count() == 0
