"""Bad input, every class a user has met: each case gets one clear line on stderr, a
non-zero exit and no traceback (the runner re-raises anything unhandled), and nothing
half-written. A fuzz test mutates profile JSON through `runs import` and the
dashboard's upload."""

import errno
import os
import copy
import json
import sqlite3
from pathlib import Path

import factories
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linkroof.cli import cli
from linkroof.schema import dumps
from linkroof.store import Store

BUNDLED = Path(__file__).parent.parent / "linkroof" / "data" / "h200x2.profile.json"
BUNDLED_ID = json.loads(BUNDLED.read_text())["id"]


def _profile_doc() -> dict:
    return json.loads(dumps(factories.profile([factories.measurement()], label="small")))


def _file(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    return str(path)


def _doc_with(tmp_path, change):
    doc = _profile_doc()
    change(doc)
    return _file(tmp_path, "p.json", json.dumps(doc))


def _read_only_fs(monkeypatch, name):
    """Writing `name` fails as on a read-only file system."""
    real = Path.write_text

    def write_text(self, *a, **k):
        if self.name == name:
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        return real(self, *a, **k)

    monkeypatch.setattr(Path, "write_text", write_text)
    real_replace = os.replace

    def replace(src, dst, *a, **k):  # linkroof.files.write_text: a temporary file renamed over it
        if Path(dst).name == name:
            raise OSError(errno.EROFS, "Read-only file system", str(dst))
        return real_replace(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", replace)


def _damaged_store(tmp_path):
    path = tmp_path / "d.sqlite"
    with Store(path) as s:
        for i in range(3):
            s.put(factories.profile([factories.measurement()] * 50, label=f"p{i}"))
        s.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    data[4096:4096 * 3] = b"\xff" * (4096 * 2)  # pages 2 and 3: the tables' b-trees
    path.write_bytes(bytes(data))
    return str(path)


TOML = '[workload]\ntemplate = "allgather_gemm"\nm = {m}\nn = {m}\nk = {m}\ndtype = "bf16"\nranks = {r}\n'

# (case, build(tmp_path, monkeypatch) -> argv, fragment of the message)
CASES = [
    ("report into a missing folder", lambda t, mp: ["report", "--profile", "reference", "--out",
                                                     str(t / "no" / "r.html")], "cannot write"),
    ("roofline --plot into a missing folder", lambda t, mp: ["roofline", "--profile", "reference", "--plot",
                                                             str(t / "no" / "r.html")], "cannot write"),
    ("report on a read-only file system", lambda t, mp: (_read_only_fs(mp, "r.html"),
                                                         ["report", "--profile", "reference", "--out",
                                                          str(t / "r.html")])[1], "Read-only file system"),
    ("runs export on a read-only file system", lambda t, mp: (
        CliRunner().invoke(cli, ["--store", str(t / "s.sqlite"), "runs", "import", str(BUNDLED)]),
        _read_only_fs(mp, "e.json"),
        ["runs", "export", BUNDLED_ID, "-o", str(t / "e.json")])[2], "Read-only file system"),
    ("run in a read-only working folder", lambda t, mp: (_read_only_fs(mp, "linkroof-report.html"),
                                                         ["run", "--no-dashboard"])[1], "linkroof report --out"),
    ("workload with ranks = 0", lambda t, mp: ["roofline", "--profile", "reference", "--workload",
                                               _file(t, "w.toml", TOML.format(m=1024, r=0)), "--time", "1ms"],
     "workload.ranks: must be at least 1"),
    ("workload with m = n = k = 0", lambda t, mp: ["roofline", "--profile", "reference", "--workload",
                                                   _file(t, "w.toml", TOML.format(m=0, r=2)), "--time", "1ms"],
     "workload.m: must be at least 1"),
    ("empty [workload]", lambda t, mp: ["roofline", "--profile", "reference", "--workload",
                                        _file(t, "w.toml", "[workload]\n"), "--time", "1ms"], "nothing to bound"),
    ("no [workload] table", lambda t, mp: ["roofline", "--profile", "reference", "--workload",
                                           _file(t, "w.toml", 'name = "x"\n'), "--time", "1ms"],
     "no [workload] table"),
    ("a binary workload file", lambda t, mp: ["roofline", "--profile", "reference", "--workload",
                                              _file(t, "w.toml", bytes(range(256)) * 4), "--time", "1ms"],
     "not a text file"),
    ("--time 0", lambda t, mp: ["roofline", "--profile", "reference", "--workload",
                                _file(t, "w.toml", TOML.format(m=1024, r=2)), "--time", "0"], "more than zero"),
    ("a store with damaged pages", lambda t, mp: ["--store", _damaged_store(t), "runs", "list"],
     "damaged or not a linkroof store"),
    ("deeply nested JSON", lambda t, mp: ["runs", "import", _file(t, "p.json", "[" * 100000 + "]" * 100000)],
     "nested"),
    ("a nested document below the JSON limit", lambda t, mp: ["runs", "import", _doc_with(
        t, lambda d: d.__setitem__("notes", [json.loads("[" * 200 + "]" * 200)]))], "nested"),
    ("schema_version 0", lambda t, mp: ["runs", "import", _doc_with(t, lambda d: d.__setitem__("schema_version", 0))],
     "schema_version: 0 is not a version"),
    ("schema_version -1", lambda t, mp: ["runs", "import",
                                         _doc_with(t, lambda d: d.__setitem__("schema_version", -1))],
     "schema_version: -1 is not a version"),
    ("a negative time", lambda t, mp: ["runs", "import", _doc_with(
        t, lambda d: d["measurements"][0].__setitem__("times_s", [-1.0, 1e-3]))], "times_s: every time"),
    ("a negative byte count", lambda t, mp: ["runs", "import", _doc_with(
        t, lambda d: d["measurements"][0].__setitem__("bytes_per_rep", -5))], "bytes_per_rep: must not be negative"),
    ("a negative message size", lambda t, mp: ["runs", "import", _doc_with(
        t, lambda d: d["measurements"][0]["spec"].__setitem__("message_bytes", -1))], "message_bytes"),
    ("an empty id", lambda t, mp: ["runs", "import", _doc_with(t, lambda d: d.__setitem__("id", " "))],
     "id: must not be empty"),
    ("created_at that is not a date", lambda t, mp: ["runs", "import", _doc_with(
        t, lambda d: d.__setitem__("created_at", "not a date"))], "created_at: expected an ISO 8601"),
    ("advise --size 0", lambda t, mp: ["advise", "--size", "0", "--profile", "reference"], "at least 1 byte"),
]


@pytest.mark.parametrize("case, build, fragment", CASES, ids=[c[0] for c in CASES])
def test_bad_input_gets_one_clear_line(tmp_path, monkeypatch, no_gpu, case, build, fragment):
    monkeypatch.chdir(tmp_path)
    argv = build(tmp_path, monkeypatch)
    if argv[0] != "--store":
        argv = ["--store", str(tmp_path / "s.sqlite"), *argv]
    res = CliRunner().invoke(cli, argv, catch_exceptions=False)
    assert res.exit_code != 0, res.output
    assert fragment in res.output, res.output
    assert "Traceback" not in res.output


def test_a_read_only_store_can_still_be_read(tmp_path, monkeypatch):
    path = tmp_path / "s.sqlite"
    with Store(path) as s:
        pid = s.put(factories.profile(label="kept"))
    import os

    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if mode == os.W_OK else real(p, mode))
    runner = CliRunner()
    listed = runner.invoke(cli, ["--store", str(path), "runs", "list", "--json"], catch_exceptions=False)
    assert listed.exit_code == 0 and json.loads(listed.stdout)["profiles"][0]["id"] == pid
    res = runner.invoke(cli, ["--store", str(path), "runs", "import", str(BUNDLED)], catch_exceptions=False)
    assert res.exit_code == 1 and "read-only" in res.output


def _mutations():
    leaf = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False),
                     st.text(max_size=8), st.just({"unknown": "x"}), st.lists(st.integers(), max_size=3))
    return st.lists(st.tuples(st.sampled_from(["set", "delete"]), st.integers(0, 10**6), leaf), min_size=1,
                    max_size=4)


def _paths(doc, prefix=()):
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:3]):
            out += _paths(v, prefix + (i,))
    return out


def _mutate(doc, mutations):
    for op, pick, value in mutations:
        paths = [p for p in _paths(doc) if p]
        path = paths[pick % len(paths)]
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        if op == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        else:  # a copy: the same leaf set twice must not end up inside itself (a cycle, not a document)
            parent[path[-1]] = copy.deepcopy(value)
    return doc


@pytest.mark.long
@settings(max_examples=int(__import__("os").environ.get("LINKROOF_FUZZ_EXAMPLES", 60)), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutations=_mutations())
def test_fuzzed_profiles_never_crash_and_never_half_write(tmp_path, mutations):
    import base64

    from linkroof.dashboard import app as A

    doc = _mutate(_profile_doc(), mutations)
    text = json.dumps(doc)
    store = tmp_path / "fuzz.sqlite"
    with Store(store) as s:
        before = s.count()
    f = tmp_path / "p.json"
    f.write_text(text)
    res = CliRunner().invoke(cli, ["--store", str(store), "runs", "import", "--replace", str(f)],
                             catch_exceptions=False)
    assert res.exit_code in (0, 1) and "Traceback" not in res.output
    with Store(store) as s:
        after = s.count()
        assert after == before + (res.exit_code == 0) or (res.exit_code == 0 and after == before)
        if res.exit_code == 0:  # what was stored reads back and renders, in the terminal and on every page
            shown = CliRunner().invoke(cli, ["--store", str(store), "runs", "show", doc["id"]],
                                       catch_exceptions=False)
            assert shown.exit_code == 0, shown.output
            pages = A.Data(str(store))
            for path, _ in A.PAGES:
                A.render_page(path, doc["id"], pages)
    data = A.Data(str(store))
    msg = A.upload("data:application/json;base64," + base64.b64encode(text.encode()).decode(), "p.json", data)
    assert msg is not None
    with sqlite3.connect(store) as c:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_text_from_a_profile_reaches_the_terminal_as_text(tmp_path):
    """A label, hostname or note holding ANSI / OSC escapes or rich markup is printed as
    text: no escape byte reaches the terminal, '[red]' is shown, not applied."""
    import dataclasses

    hostile = "\x1b[31mRED\x1b]0;pwned\x07 [red]markup[/red] [bold]b"
    p = factories.profile([factories.measurement()], label=hostile, notes=(f"suite x: {hostile}",))
    topo = dataclasses.replace(p.topology, host=dataclasses.replace(p.topology.host, hostname=hostile))
    p = dataclasses.replace(p, topologies=(topo,))
    f = tmp_path / "p.json"
    f.write_text(dumps(p))
    store = str(tmp_path / "s.sqlite")
    r = CliRunner()
    assert r.invoke(cli, ["--store", store, "runs", "import", str(f)]).exit_code == 0
    for args in (["runs", "list"], ["runs", "show", p.id], ["roofline", "--profile", p.id],
                 ["advise", "--size", "1G", "--profile", p.id]):
        res = r.invoke(cli, ["--store", store, *args])
        assert res.exit_code in (0, 1), res.output
        assert "\x1b" not in res.output and "\x07" not in res.output, args
        if args[0] == "runs":
            assert "[red]markup[/red]" in res.output, args


def _doc(change):
    doc = _profile_doc()
    change(doc)
    return doc


def _topo(doc):
    return doc["topologies"][0]


@pytest.mark.parametrize("case, change, message", [
    ("Infinity in a reported bandwidth", lambda d: d["measurements"][0].update(reported={"bandwidth_bytes_per_s": float("inf")}), "finite"),
    ("NaN in a reported figure", lambda d: d["measurements"][0].update(reported={"flop_rate": float("nan")}), "finite"),
    ("a placement time of Infinity", lambda d: d.update(placements=[{"workload": {"name": "w"}, "measured_time_s": float("inf"),
                                                                     "bound_time_s": 1.0, "limiter": "memory",
                                                                     "ceilings_kind": "measured"}]), "finite"),
    ("duplicate GPU indices", lambda d: _topo(d)["gpus"].append(copy.deepcopy(_topo(d)["gpus"][0])), "listed more than once"),
    ("a GPU index of 2^64", lambda d: _topo(d)["gpus"][0].update(index=2 ** 64), "a GPU index is 0 to"),
    ("negative memory", lambda d: _topo(d)["gpus"][0].update(memory_total_bytes=-1), "memory_total_bytes"),
    ("a pair on a GPU the topology lacks", lambda d: _topo(d)["pairs"][0].update(b=7), "names a GPU the topology lacks"),
    ("a measurement on a GPU the topology lacks", lambda d: d["measurements"][0]["spec"].update(devices=[0, 9]),
     "names a GPU the profile's topologies lack"),
    ("a negative spec ceiling", lambda d: _topo(d)["ceilings"][0].update(bytes_per_s=-1.0), "a ceiling must not be negative"),
    ("an infinite spec ceiling", lambda d: _topo(d)["ceilings"][0].update(bytes_per_s=float("inf")), "finite"),
    ("a negative busbw factor", lambda d: d["measurements"][0].update(busbw_factor=-2.0), "bus-bandwidth factor"),
    ("a 5000-digit message size", lambda d: d["measurements"][0]["spec"].update(message_bytes=10 ** 5000), "."),
    ("a message size of 2^70", lambda d: d["measurements"][0]["spec"].update(message_bytes=2 ** 70), "message_bytes"),
    ("a label with a lone surrogate", lambda d: d.update(label="\ud800"), "lone surrogate"),
    ("an id with a newline", lambda d: d.update(id="a\nb"), "id"),
])
def test_what_cannot_be_read_back_is_never_stored(tmp_path, case, change, message):
    """Each door refuses a profile the store could not read back, before writing:
    `runs import` (one line, exit 1) and the dashboard's upload (a message), and the
    store holds what it held."""
    import base64
    import sys

    from linkroof.dashboard import app as A

    doc = _doc(change)
    sys.set_int_max_str_digits(0) if hasattr(sys, "set_int_max_str_digits") else None
    try:
        text = json.dumps(doc, allow_nan=True)
    finally:
        sys.set_int_max_str_digits(4300) if hasattr(sys, "set_int_max_str_digits") else None
    f = tmp_path / "p.json"
    f.write_text(text)
    store = tmp_path / "s.sqlite"
    res = CliRunner().invoke(cli, ["--store", str(store), "runs", "import", str(f)], catch_exceptions=False)
    assert res.exit_code == 1 and message.lower() in res.output.lower() and "Traceback" not in res.output, res.output
    data = A.Data(str(store))
    msg = str(A.upload("data:application/json;base64," + base64.b64encode(text.encode("utf-8", "surrogatepass"))
                       .decode(), "p.json", data))
    assert "refused" in msg or "not" in msg
    with Store(store) as s:
        assert s.count() == 0


def test_no_door_hangs_on_a_fifo_or_a_huge_recording(tmp_path):
    """A FIFO is refused at once (it would block a read forever); a recording that says
    1000 or 100000 GPUs is refused, not probed. (How fast: benchmarks/door_times.py; a
    hang here still fails at pytest's timeout.)"""
    import os

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    store = str(tmp_path / "s.sqlite")
    for args in (["runs", "import", str(fifo)], ["import", "nccl-tests", str(fifo)],
                 ["roofline", "--profile", "reference", "--workload", str(fifo), "--time", "1ms"],
                 ["probe", "--replay", str(fifo)]):
        res = CliRunner().invoke(cli, ["--store", store, *args], catch_exceptions=False)
        assert res.exit_code != 0 and "not a regular file" in res.output, (args, res.output)
    rec = json.loads((Path(__file__).parent.parent / "linkroof" / "data" / "h200x1.probe.json").read_text())
    for count in (1000, 100_000):
        rec["nvml"]["device_count"] = {"value": count}
        f = tmp_path / "rec.json"
        f.write_text(json.dumps(rec))
        res = CliRunner().invoke(cli, ["probe", "--replay", str(f)], catch_exceptions=False)
        assert res.exit_code != 0 and "GPUs" in res.output, res.output


@pytest.mark.parametrize("args, message", [
    (["bench", "--plan", "--replay", "h200x2", "--gpus", "0,0"], "listed twice"),
    (["bench", "--plan", "--replay", "h200x2", "--only", ",,,"], "names no family"),
    (["bench", "--plan", "--replay", "h200x2", "--rank-timeout", "nan"], "not a number"),
    (["bench", "--plan", "--replay", "h200x2", "--rank-timeout", "inf"], "not in the range"),
    (["roofline", "--profile", "reference", "--workload", "examples/allreduce.toml", "--time", "1e400"], "finite"),
])
def test_option_values_that_mean_nothing_are_refused(args, message):
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert res.exit_code == 2 and message in res.output, res.output


def test_import_into_the_same_file_twice_adds_nothing(tmp_path):
    store = str(tmp_path / "s.sqlite")
    anchor = Path(__file__).parent / "data" / "anchor" / "nt_allreduce.txt"
    r = CliRunner()
    first = r.invoke(cli, ["--store", store, "import", "nccl-tests", str(anchor), "--json"])
    pid = json.loads(first.stdout)["id"]
    again = r.invoke(cli, ["--store", store, "import", "nccl-tests", str(anchor), "--into", pid])
    assert again.exit_code == 1 and "already in profile" in again.output
    with Store(store) as s:
        assert len(s.get(pid).measurements) == 28


def test_deep_toml_is_refused_in_a_line(tmp_path):
    f = tmp_path / "w.toml"
    f.write_text("[workload]\nx = " + "[" * 5000 + "]" * 5000 + "\n")
    res = CliRunner().invoke(cli, ["roofline", "--profile", "reference", "--workload", str(f), "--time", "1ms"],
                             catch_exceptions=False)
    assert res.exit_code == 1 and res.output.startswith("linkroof:") and "Traceback" not in res.output


def test_a_busy_port_or_an_unresolvable_host_is_a_message(tmp_path, no_gpu):
    """Issue 45, item 7: `dashboard` on a port in use, or on a host that does not resolve,
    was a traceback from waitress (OSError, socket.gaierror). Now one line that names the
    port and --port (or the host), exit status 1, before any URL is printed."""
    import socket

    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    port = busy.getsockname()[1]
    try:
        res = CliRunner().invoke(cli, ["--store", str(tmp_path / "s.sqlite"), "dashboard", "--port", str(port)])
    finally:
        busy.close()
    assert res.exit_code == 1, res.output
    assert f"port {port} on 127.0.0.1 is in use" in res.output and "--port" in res.output
    assert "Traceback" not in res.output and "http://" not in res.output
    res = CliRunner().invoke(cli, ["--store", str(tmp_path / "s.sqlite"), "dashboard", "--host", "no-such-host.invalid",
                                   "--public"])
    assert res.exit_code == 1 and "cannot serve on host 'no-such-host.invalid': it does not resolve" in res.output
    assert "Traceback" not in res.output
