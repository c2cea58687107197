"""A fuzz harness per door (Hypothesis): every way data enters linkroof gets mutated
input, and the contract holds for each: the command either works or exits non-zero with
one line of message, never a traceback; the store stays readable and holds exactly what
it held plus what a successful command added. The doors: nccl-tests and nvbandwidth
outputs (`import`, text and JSON), probe recordings (`probe --replay FILE`), workload
files (`roofline --workload`), minimum-figure files (`check --baseline`), option values
(`advise --size`, `roofline --time`, `bench --sizes --plan`). Profile JSON (`runs import`,
the upload) is fuzzed in test_bad_input.py, dashboard callbacks in test_dashboard_http.py.

LINKROOF_FUZZ_EXAMPLES sets the examples per door (default 40)."""

import copy
import json
import os
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linkroof.cli import cli

ROOT = Path(__file__).parent.parent
ANCHOR = Path(__file__).parent / "data" / "anchor"
EXAMPLES = int(os.environ.get("LINKROOF_FUZZ_EXAMPLES", 40))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def holds_the_contract(tmp_path, args, store_grows_by=(0, 1)):
    """Run `linkroof ARGS` against a store; assert the contract; return the result."""
    store = tmp_path / "fuzz.sqlite"
    before = _count(store)
    res = CliRunner().invoke(cli, ["--store", str(store), *args])
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        import traceback

        raise AssertionError(f"{args}: traceback\n" + "".join(traceback.format_exception(res.exception))[-3000:])
    assert "Traceback" not in res.output
    if res.exit_code != 0:
        lines = [line for line in res.output.splitlines() if line.startswith(("linkroof:", "Error:"))]
        assert lines, (args, res.output[-800:])
    after = _count(store)
    grew = after - before
    assert grew in store_grows_by and (res.exit_code == 0 or grew == 0), (args, grew, res.output[-500:])
    if store.exists():
        with sqlite3.connect(store) as c:
            assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    return res


def _count(store):
    if not store.exists():
        return 0
    with sqlite3.connect(store) as c:
        try:
            return c.execute("SELECT COUNT(*) FROM profiles").fetchone()[0]
        except sqlite3.OperationalError:
            return 0


# ------------------------------------------------------------------ text mutations

TOKENS = st.sampled_from(["", "-1", "nan", "inf", "1e400", "N/A", "0", "0.00", "x", "#", "   ", "18446744073709551616",
                          "\x00", "-393.91", "float", "sum", "-4", "9" * 40, "\t", "SUM", "Running x."])


@st.composite
def text_mutations(draw, lines):
    """A few edits of a tool's output, line by line: delete, duplicate, truncate, swap
    two cells, or replace a cell by a hostile token."""
    out = list(lines)
    for _ in range(draw(st.integers(1, 4))):
        if not out:
            break
        i = draw(st.integers(0, len(out) - 1))
        op = draw(st.sampled_from(["delete", "duplicate", "truncate", "swap", "token", "cut_line"]))
        cells = out[i].split()
        if op == "delete":
            del out[i]
        elif op == "duplicate":
            out.insert(i, out[i])
        elif op == "truncate":
            out = out[:i]
        elif op == "cut_line":
            out[i] = out[i][:draw(st.integers(0, max(0, len(out[i]) - 1)))]
        elif op == "swap" and len(cells) > 2:
            a, b = draw(st.integers(0, len(cells) - 1)), draw(st.integers(0, len(cells) - 1))
            cells[a], cells[b] = cells[b], cells[a]
            out[i] = "  ".join(cells)
        elif cells:
            cells[draw(st.integers(0, len(cells) - 1))] = draw(TOKENS)
            out[i] = "  ".join(cells)
    return "\n".join(out) + "\n"


@pytest.mark.long
@FUZZ
@given(data=st.data(), name=st.sampled_from(["nt_allreduce.txt", "nt-all.txt", "nt_alltoall.txt"]))
def test_nccl_tests_text_door(tmp_path, data, name):
    text = data.draw(text_mutations((ANCHOR / name).read_text().splitlines()))
    f = tmp_path / "nt.txt"
    f.write_text(text)
    holds_the_contract(tmp_path, ["import", "nccl-tests", str(f)])


@pytest.mark.long
@FUZZ
@given(data=st.data(), name=st.sampled_from(["nvb.txt", "nvb-0.8.txt"]))
def test_nvbandwidth_text_door(tmp_path, data, name):
    text = data.draw(text_mutations((ANCHOR / name).read_text().splitlines()))
    f = tmp_path / "nvb.txt"
    f.write_text(text)
    holds_the_contract(tmp_path, ["import", "nvbandwidth", str(f)])


# ------------------------------------------------------------------ JSON mutations

LEAF = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70), st.floats(allow_nan=True),
                 st.text(max_size=8), st.lists(st.integers(-5, 5), max_size=3), st.just({}), st.just("N/A"),
                 st.just(-4), st.just(10 ** 6))


@st.composite
def json_mutations(draw, doc):
    """A few edits anywhere in a JSON document: walk down from the top, one random child
    at each level (so every key of a large recording can be reached), then delete that
    node or set it to a hostile leaf."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 4))):
        parent, key = None, None
        node = doc
        while isinstance(node, (dict, list)) and node and (parent is None or draw(st.integers(0, 3)) > 0):
            keys = list(node) if isinstance(node, dict) else list(range(len(node)))
            parent, key = node, keys[draw(st.integers(0, len(keys) - 1))]
            node = node[key]
        if parent is None:
            break
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[key]
        else:
            parent[key] = copy.deepcopy(draw(LEAF))
    return doc


@pytest.mark.long
@FUZZ
@given(data=st.data(), tool_name=st.sampled_from([("nccl-tests", "nt_allreduce.json"), ("nvbandwidth", "nvb.json")]))
def test_tool_json_door(tmp_path, data, tool_name):
    tool, name = tool_name
    doc = data.draw(json_mutations(json.loads((ANCHOR / name).read_text())))
    f = tmp_path / "out.json"
    f.write_text(json.dumps(doc, allow_nan=True))
    holds_the_contract(tmp_path, ["import", tool, str(f)])


@pytest.mark.long
@FUZZ
@given(data=st.data(), name=st.sampled_from(["h200x2", "h200x1"]))
def test_recording_door(tmp_path, data, name):
    rec = json.loads((ROOT / "linkroof" / "data" / f"{name}.probe.json").read_text())
    small = {"format": rec["format"], "version": rec["version"],
             "nvml": dict(list(rec["nvml"].items())[:60]), "fs": dict(list(rec["fs"].items())[:30])}
    small["nvml"]["device_count"] = rec["nvml"]["device_count"]
    doc = data.draw(json_mutations(small if data.draw(st.booleans()) else rec))
    f = tmp_path / "rec.json"
    f.write_text(json.dumps(doc, allow_nan=True))
    holds_the_contract(tmp_path, ["probe", "--replay", str(f)], store_grows_by=(0,))
    holds_the_contract(tmp_path, ["probe", "--replay", str(f), "--json"], store_grows_by=(0,))


# ------------------------------------------------------------------ TOML and options

TOML_VALUE = st.one_of(st.integers(-2 ** 70, 2 ** 70), st.floats(allow_nan=True), st.booleans(),
                       st.text(max_size=10), st.sampled_from(["bf16", "fp16", "all_reduce", "nvlink", "bogus", "ring"]))


def _toml(table):
    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float):
            return "nan" if v != v else ("inf" if v == float("inf") else "-inf" if v == float("-inf") else repr(v))
        if isinstance(v, int):
            return str(v)
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        return json.dumps(v)
    return "[workload]\n" + "".join(f"{k} = {value(v)}\n" for k, v in table.items())


KEYS = st.sampled_from(["template", "collective", "size_bytes", "ranks", "flops", "hbm_bytes", "link_bytes",
                        "message_bytes", "pattern", "link", "m", "n", "k", "dtype", "seq", "hidden", "causal",
                        "tokens", "experts", "top_k", "name", "bogus"])


@pytest.mark.long
@FUZZ
@given(table=st.dictionaries(KEYS, st.one_of(TOML_VALUE, st.dictionaries(st.sampled_from(["fp16", "nvlink", "x"]),
                                                                            TOML_VALUE, max_size=2)), max_size=7),
       time=st.sampled_from(["1ms", "0", "-1us", "1e400s", "nan", "abc", "5 weeks", "1.5ms"]))
def test_workload_and_time_door(tmp_path, table, time):
    f = tmp_path / "w.toml"
    f.write_text(_toml(table))
    holds_the_contract(tmp_path, ["roofline", "--profile", "reference", "--workload", str(f), "--time", time,
                                  "--force"], store_grows_by=(0,))


@pytest.mark.long
@FUZZ
@given(entries=st.lists(st.dictionaries(st.sampled_from(["name", "mechanism", "pattern", "devices", "message_bytes",
                                                          "dtype", "min", "max_s", "x"]),
                                        st.one_of(TOML_VALUE, st.lists(st.integers(-2, 3), max_size=3)), max_size=5),
                        max_size=4),
       as_json=st.booleans())
def test_minimums_door(tmp_path, entries, as_json):
    f = tmp_path / ("m.json" if as_json else "m.toml")
    if as_json:
        f.write_text(json.dumps({"minimum": entries}, allow_nan=True))
    else:
        def v(x):
            return _toml({"x": x}).split(" = ", 1)[1].strip() if not isinstance(x, list) else json.dumps(x)
        f.write_text("".join("[[minimum]]\n" + "".join(f"{k} = {v(x)}\n" for k, x in e.items()) for e in entries))
    holds_the_contract(tmp_path, ["check", "--profile", "reference", "--baseline", str(f)], store_grows_by=(0,))


OPTION = st.one_of(st.text(max_size=12), st.sampled_from(["0", "-1", "1e400", "nan", "inf", "4K:1G", "8:1G:0",
                                                          "1G:4K", "64K,1M", ",,", "9" * 40, "1K:1K:1"]))


@pytest.mark.long
@FUZZ
@given(size=OPTION, sizes=OPTION, pattern=st.sampled_from(["p2p_write", "all_reduce", "zigzag", ""]))
def test_option_door(tmp_path, size, sizes, pattern):
    holds_the_contract(tmp_path, ["advise", "--size", size, "--pattern", pattern, "--profile", "reference"],
                       store_grows_by=(0,))
    holds_the_contract(tmp_path, ["bench", "--plan", "--replay", "h200x2", "--sizes", sizes], store_grows_by=(0,))


@pytest.mark.parametrize("args", [["runs", "show", "x" * 300], ["runs", "rm", "%", "--yes"], ["runs", "show", ""],
                                  ["runs", "show", "a\nb"], ["runs", "show", "\x00"], ["roofline", "--profile", "y" * 300],
                                  ["runs", "import", "/dev/null"], ["import", "nccl-tests", "/dev/zero"]])
def test_odd_ids_and_files(tmp_path, args):
    holds_the_contract(tmp_path, args, store_grows_by=(0,))


def test_a_recording_with_a_malformed_bus_id_replays(tmp_path):
    """Found by the recording door's fuzz: a bus id without a ':' made the replay raise
    ValueError; now the probe goes on and shows the id as NVML gave it."""
    rec = json.loads((ROOT / "linkroof" / "data" / "h200x1.probe.json").read_text())
    rec["nvml"]["pci_bus_id|0"] = {"value": "0"}
    f = tmp_path / "rec.json"
    f.write_text(json.dumps(rec))
    res = holds_the_contract(tmp_path, ["probe", "--replay", str(f), "--json"], store_grows_by=(0,))
    assert res.exit_code == 0 and '"pci_bus_id": "0"' in res.stdout


# ------------------------------------------------------------------ NCCL's telemetry (`telemetry`)

def _telemetry_samples():
    from test_telemetry import _fr_entries, _prom, fr_dump, inspector_record, nccl_tests_per_iter

    return {"inspector": [inspector_record(r, 2, s, c, 1 << 20, 50, start_ts=1000 * s)
                          for r in range(2) for s, c in enumerate(["AllReduce", "AllGather", "ReduceScatter"], 1)],
            "flight": fr_dump(0, _fr_entries()), "nccl-tests": nccl_tests_per_iter(), "prom": _prom()}


@pytest.mark.long
@FUZZ
@given(data=st.data(), kind=st.sampled_from(["inspector", "flight", "nccl-tests", "prom", "pickle"]))
def test_telemetry_door(tmp_path, data, kind):
    import pickle

    sample = _telemetry_samples()
    if kind == "inspector":
        recs = data.draw(json_mutations(sample["inspector"]))
        body = "\n".join(json.dumps(r, allow_nan=True) for r in recs) if isinstance(recs, list) else json.dumps(recs)
        f = tmp_path / "node-pid1.log"
        f.write_text(data.draw(text_mutations(body.splitlines())) if data.draw(st.booleans()) else body)
    elif kind == "prom":
        f = tmp_path / "m.prom"
        f.write_text(data.draw(text_mutations(sample["prom"].splitlines())))
    elif kind == "pickle":
        raw = bytearray(pickle.dumps(sample["flight"], protocol=2))
        for _ in range(data.draw(st.integers(1, 6))):
            raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
        f = tmp_path / "trace_0"
        f.write_bytes(bytes(raw[:data.draw(st.integers(1, len(raw)))]))
    else:
        doc = data.draw(json_mutations(sample["flight" if kind == "flight" else "nccl-tests"]))
        f = tmp_path / "trace_0.json"
        f.write_text(json.dumps(doc, allow_nan=True))
    holds_the_contract(tmp_path, ["telemetry", str(f), "--profile", "reference"], store_grows_by=(0,))
    holds_the_contract(tmp_path, ["telemetry", str(f), "--profile", "reference", "--json"], store_grows_by=(0,))


@pytest.mark.long
@FUZZ
@given(data=st.data())
def test_trace_door(tmp_path, data):
    """PyTorch profiler traces (`trace`): the recorded one-H200 trace with its events'
    fields and top-level keys mutated, written plain or compressed."""
    import gzip

    src = json.loads(gzip.open(ROOT / "tests" / "data" / "traces" / "h200x1_torch2.11_rank0.json.gz", "rt").read())
    events = src["traceEvents"]
    picked = data.draw(st.lists(st.integers(0, len(events) - 1), min_size=1, max_size=6, unique=True))
    doc = dict(src, traceEvents=list(events))
    for i in picked:
        doc["traceEvents"][i] = data.draw(json_mutations(events[i]))
    if data.draw(st.booleans()):
        doc = {k: v for k, v in doc.items() if k == "traceEvents"} | data.draw(
            json_mutations({k: v for k, v in src.items() if k != "traceEvents"}))
    body = json.dumps(doc, allow_nan=True).encode()
    f = tmp_path / ("t.json.gz" if data.draw(st.booleans()) else "t.json")
    f.write_bytes(gzip.compress(body) if f.suffix == ".gz" else body)
    holds_the_contract(tmp_path, ["trace", str(f), "--profile", "reference", "--json"], store_grows_by=(0, 1))
