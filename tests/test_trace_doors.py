"""The trace reader's stream (issue 42, items 7 and 8): what enters `linkroof trace`
through a file, each hostile case a clear refusal in one line or a stated warning, never
a traceback: numbers of 400 to 5000 digits, nesting 100 000 deep, a first line of
gigabytes with no structure, `true` where a number goes, NaN and 1e400 in times (never
reaching --json, which stays strict JSON), sizes past any collective's, lone surrogates
in names (shown as U+FFFD and said), bytes that are not UTF-8 (said). And the memory
side's facts: the launches held in arrays answer as the dict they replace, events
decoded a batch at a time are the events decoded one at a time. Hypothesis fuzzes the
fields and the bytes. The memory targets themselves are benchmarks/trace_memory.py's.

LINKROOF_FUZZ_EXAMPLES sets the examples per fuzz test (default 40)."""

import json
import math
import os
import pickle
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tracegen as G
from linkroof.cli import cli
from linkroof.readers import traces as P

EXAMPLES = int(os.environ.get("LINKROOF_FUZZ_EXAMPLES", 40))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _strict(text: str) -> dict:
    """--json's output as strict JSON: NaN or Infinity anywhere is a failure."""
    def refuse(c):
        raise AssertionError(f"{c} in --json")
    return json.loads(text[text.index("{"):], parse_constant=refuse)


def _cli(tmp_path, path) -> tuple[int, str, dict | None]:
    """`linkroof trace FILE --json`: (exit code, the message line or "", the document)."""
    res = CliRunner().invoke(cli, ["--store", str(tmp_path / "s.sqlite"), "trace", str(path), "--json", "--no-save",
                                   "--profile", "reference"])
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        import traceback

        raise AssertionError("traceback\n" + "".join(traceback.format_exception(res.exception))[-3000:])
    assert "Traceback" not in res.output
    if res.exit_code:
        lines = [x for x in res.output.splitlines() if x.startswith(("linkroof:", "Error:"))]
        assert res.exit_code in (1, 2) and len(lines) == 1, res.output[-800:]
        return res.exit_code, lines[0], None
    return 0, "", _strict(res.stdout)


def _base() -> dict:
    return G.tier1_rank(0).doc()


def _kernels(doc: dict) -> list[dict]:
    return [e for e in doc["traceEvents"] if e["cat"] == "kernel"]


def _write(tmp_path, doc_or_text, name="t.json") -> Path:
    p = tmp_path / name
    if isinstance(doc_or_text, dict):
        doc_or_text = json.dumps(doc_or_text)
    p.write_bytes(doc_or_text if isinstance(doc_or_text, bytes) else doc_or_text.encode("utf-8", "surrogatepass"))
    return p


def _warnings(doc: dict) -> str:
    return " ".join(doc["warnings"])


# ------------------------------------------------------------------ a value where a number goes


@pytest.mark.parametrize("field, where, value", [
    ("ts", "event", float("nan")), ("ts", "event", float("inf")), ("dur", "event", float("-inf")),
    ("dur", "event", float("nan")), ("ts", "event", True), ("dur", "event", True), ("ts", "event", 10 ** 400),
    ("dur", "event", 10 ** 20), ("dur", "event", 10 ** 12), ("ts", "event", 1e300), ("ts", "event", 5e15), ("device", "args", True), ("stream", "args", True),
    ("correlation", "args", True), ("device", "args", 10 ** 30), ("stream", "args", float("nan")),
    ("grid", "args", [True, 1, 1]), ("block", "args", [1, 10 ** 12, 1]), ("grid", "args", [-1, 1, 1]),
    ("In msg nelems", "args", 10 ** 30), ("Out msg nelems", "args", str(10 ** 20)), ("Group size", "args", True),
    ("Group size", "args", 10 ** 9),
])
def test_a_value_no_profiler_writes_refuses_its_event_and_is_counted(tmp_path, field, where, value):
    """The GEMM is left alone; the all-reduce kernel carries the hostile value: it is
    skipped (never read as 1 us, device 1, 10^30 elements), counted in the note, and the
    output holds no NaN or infinity."""
    doc = _base()
    ar = _kernels(doc)[1]
    (ar if where == "event" else ar["args"])[field] = value
    code, line, out = _cli(tmp_path, _write(tmp_path, doc))
    assert code == 0, line
    assert "1 event(s) with fields of the wrong type" in _warnings(out)
    assert [r["collective"] for r in out["collectives"]] == ["all_gather"]  # the all-reduce is not taken


@pytest.mark.parametrize("value", [float("nan"), float("inf"), True, 10 ** 400, -5])
def test_when_every_gpu_event_is_refused_the_trace_is_refused_saying_why(tmp_path, value):
    doc = _base()
    for k in _kernels(doc):
        k["dur"] = value
    code, line, _ = _cli(tmp_path, _write(tmp_path, doc))
    assert code == 1 and "no usable GPU event: 3 of" in line and "true for a number" in line


def test_true_is_never_a_launch_a_thread_or_a_copys_bytes(tmp_path):
    t = P.read_trace(_write(tmp_path, _base()))
    doc = _base()
    launches = [e for e in doc["traceEvents"] if e["cat"] == "cuda_runtime"]
    launches[0]["args"]["correlation"] = True  # not the launch of correlation 1
    launches[1]["tid"] = True
    doc["traceEvents"].append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "ts": 950,
                               "dur": 5, "args": {"device": 0, "stream": 7, "bytes": True, "correlation": 0}})
    for nbytes in (10 ** 30, 1 << 55):  # past int64, and past 1 PiB
        doc["traceEvents"].append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "ts": 960,
                                   "dur": 5, "args": {"device": 0, "stream": 7, "bytes": nbytes, "correlation": 0}})
    got = P.read_trace(_write(tmp_path, doc))
    assert 1 not in got.launches and len(got.launches) == len(t.launches) - 2
    assert got.activities == t.activities  # no copy taken
    assert "5 event(s) with fields of the wrong type" in " ".join(got.notes)


def test_a_shape_of_10_to_the_15_elements_or_of_true_refuses_its_op(tmp_path):
    """A comm op's Input Dims size its call (tier 2 and 3): 10^15 elements, or true as a
    dimension (read as 1 before), is no collective's."""
    deep = [[[[[[1 << 40] * 3]]]]]  # 2^120 elements under 6 levels: unchecked (and read) until 2026-12-05
    for dims, refused in (([[10 ** 8, 10 ** 7]], True), ([[True, 4096]], True), ([[[1 << 20], [1 << 20]]], False),
                          (deep, True), ([[[[[1 << 20]]]]], False), ([[[[[[1 << 20]]]]]], True),
                          ([[[[[1 << 25, 1 << 24]]]]], True)):
        t = G.tier2_rank()
        [op for op in t.events if op["name"] == "c10d::allreduce_coalesced_"][0]["args"]["Input Dims"] = dims
        got = P.read_trace(t.write(tmp_path / "t2.json"))
        assert (len(got.ops) == 1) is refused, dims
        assert any("fields of the wrong type" in n for n in got.notes) is refused


@pytest.mark.parametrize("field, value, said", [
    ("rank", True, "distributedInfo.rank"), ("rank", 1 << 40, "distributedInfo.rank"),
    ("world_size", True, "distributedInfo.world_size"), ("pg_size", True, "distributedInfo.pg_config"),
    ("pg_size", 1 << 40, "distributedInfo.pg_config"), ("pg_size", 0, "distributedInfo.pg_config"),
])
def test_true_is_never_a_rank_a_world_or_a_group(tmp_path, field, value, said):
    doc = _base()
    info = doc["distributedInfo"]
    (info["pg_config"][0] if field == "pg_size" else info)[field] = value
    t = P.read_trace(_write(tmp_path, doc))
    assert t.rank in (0, None) and t.world_size in (2, None) and all(type(v) is int for v in t.groups.values())
    assert (t.rank is None) == (field == "rank") and (t.world_size is None) == (field == "world_size")
    assert any(said in n and "wrong type" in n for n in t.notes), t.notes


def test_an_integer_past_int64_before_the_events_is_refused_in_one_line(tmp_path):
    doc = _base()
    doc["distributedInfo"]["rank"] = 10 ** 30
    code, line, _ = _cli(tmp_path, _write(tmp_path, doc))
    assert code == 1 and "not a JSON trace" in line and "overflow" in line


# ------------------------------------------------------------------ numbers and nesting


@pytest.mark.parametrize("where", ["head", "event", "args", "tail"])
@pytest.mark.parametrize("case", ["deep", "digits"])
def test_deep_nesting_and_thousands_of_digits_are_one_line_anywhere(tmp_path, where, case):
    """100 000 levels and 5000-digit integers, before the events, in one, in its args,
    or after them: one TraceError (one line at the CLI), never a RecursionError or
    Python's int-limit ValueError."""
    bad = "[" * 100_000 + "]" * 100_000 if case == "deep" else "9" * 5000
    doc = _base()
    text = json.dumps(doc)
    if where == "head":
        text = '{"x": ' + bad + ", " + text[1:]
    elif where == "event":
        text = text.replace('"traceEvents": [', '"traceEvents": [' + bad + ", ", 1)
    elif where == "args":
        text = text.replace('"args": {', '"args": {"x": ' + bad + ", ", 1)
    else:
        doc.pop("deviceProperties")
        doc.pop("distributedInfo")
        text = json.dumps(doc)[:-1] + ', "x": ' + bad + "}"
    code, line, _ = _cli(tmp_path, _write(tmp_path, text))
    assert code == 1 and (("deep" in line) if case == "deep" else ("decode" in line or "digits" in line
                                                                     or "overflow" in line)), line


def test_400_digit_times_are_refused_per_event(tmp_path):
    doc = _base()
    text = json.dumps(doc).replace('"dur": 100, ', '"dur": ' + "1" * 400 + ", ", 1)  # the all-gather's
    code, _, out = _cli(tmp_path, _write(tmp_path, text))
    assert code == 0 and [r["collective"] for r in out["collectives"]] == ["all_reduce"]
    assert "1 event(s) with fields of the wrong type" in _warnings(out)


def test_keys_after_the_events_are_taken_as_strictly_as_those_before(tmp_path):
    """Another writer puts deviceProperties and distributedInfo after the events: read
    from the text the event pass leaves (no second pass over the file), NaN, 1e400 and a
    40-digit integer there refused; a file cut after its events' ']' refused."""
    doc = _base()
    events = doc.pop("traceEvents")
    good = json.dumps({"traceEvents": events, **doc})
    t = P.read_trace(_write(tmp_path, good))
    assert t.rank == 0 and t.world_size == 2 and t.groups == {"0": 2} and t.devices[0]["name"] == "NVIDIA H200"
    for bad in ("NaN", "1e400", "9" * 40):
        code, line, _ = _cli(tmp_path, _write(tmp_path, good[:-1] + ', "x": ' + bad + "}"))
        assert code == 1 and "after its events" in line, line
    code, line, _ = _cli(tmp_path, _write(tmp_path, json.dumps({"traceEvents": events})[:-1]))
    assert code == 1 and "cut off" in line


# ------------------------------------------------------------------ a first line of gigabytes


@pytest.mark.parametrize("text, said", [
    ('{"' + "k" * (3 << 20), "without one JSON token ending"),  # a key that never ends
    (" " * (3 << 20) + "{}", "without one JSON token ending"),  # blanks before anything
    ('{"traceEvents": [{"name": "' + "k" * (3 << 20), "larger than"),  # an event that never ends
    ('{"traceEvents": [' + " " * (3 << 20), "ends mid-JSON"),  # blanks where events go
    ('{"traceEvents": [' + "1" * (3 << 20), "does not decode"),  # a number of millions of digits
    ("x" * (3 << 20), "not a JSON trace"),  # no structure at all
])
@pytest.mark.parametrize("gz", [False, True])
def test_a_line_of_gigabytes_with_no_structure_is_refused_after_a_bounded_read(tmp_path, monkeypatch, text, said, gz):
    """A 5 GB first line exhausted memory (the tokenizer holds a token whole): refused
    once MAX_TOKEN or MAX_EVENT bytes pass without a token or an event ending. Here the
    bounds are 1 MiB and the line 3 MiB; benchmarks/trace_memory.py reads a 5 GB one."""
    import gzip

    monkeypatch.setattr(P, "MAX_TOKEN", 1 << 20)
    monkeypatch.setattr(P, "MAX_EVENT", 1 << 20)
    p = tmp_path / ("line.json.gz" if gz else "line.json")
    p.write_bytes(gzip.compress(text.encode(), 1) if gz else text.encode())
    with pytest.raises(P.TraceError, match=said):
        P.read_trace(p)


def test_the_bounded_reader_counts_bytes_since_the_last_token(tmp_path, monkeypatch):
    """A head of many small tokens (a deviceProperties of 3 MiB) passes a 1 MiB bound."""
    monkeypatch.setattr(P, "MAX_TOKEN", 1 << 20)
    doc = _base()
    doc["deviceProperties"][0]["extra"] = ["abcdefgh"] * 300_000
    assert P.read_trace(_write(tmp_path, doc)).devices[0]["name"] == "NVIDIA H200"


# ------------------------------------------------------------------ text: surrogates and UTF-8


def test_a_lone_surrogate_in_a_name_is_shown_as_fffd_and_said(tmp_path):
    doc = _base()
    _kernels(doc)[1]["name"] = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL\ud800"
    _kernels(doc)[1]["args"]["Process Group Name"] = "pg\udc80"
    doc["distributedInfo"]["pg_config"][0]["pg_name"] = "0"
    code, line, out = _cli(tmp_path, _write(tmp_path, doc))
    assert code == 0, line
    ar = [r for r in out["collectives"] if r["collective"] == "all_reduce"][0]
    assert ar["kernel"].endswith("\ufffd") and ar["process_group"] == "pg\ufffd"
    assert "2 name(s) or arg(s) with a lone surrogate" in _warnings(out) and "U+FFFD" in _warnings(out)
    json.dumps(out, ensure_ascii=False).encode("utf-8")  # writable as UTF-8


def test_a_lone_surrogate_in_the_head_is_no_traceback(tmp_path):
    doc = _base()
    doc["deviceProperties"][0]["name"] = "NVIDIA \ud800H200"
    code, line, out = _cli(tmp_path, _write(tmp_path, doc))
    assert code == 0 and "\ud800" not in json.dumps(out, ensure_ascii=False)


def test_bytes_that_are_not_utf8_are_said_with_their_place(tmp_path):
    text = json.dumps(_base()).encode()
    at = text.index(b"sm90_xmma") + 4
    bad = text[:at] + b"\xff\xfe" + text[at:]
    code, line, out = _cli(tmp_path, _write(tmp_path, bad))
    assert code == 0, line
    assert f"not UTF-8 in 1 chunk(s) of 1 MiB, the first at byte {at}" in _warnings(out)
    assert any("\ufffd" in r["kernel"] for r in out["collectives"]) is False  # the GEMM is no collective
    t = P.read_trace(_write(tmp_path, bad))
    assert t.activities[0].name.startswith("sm90\ufffd\ufffd_xmma")
    clean = P.read_trace(_write(tmp_path, text, "clean.json"))
    assert not any("UTF-8" in n for n in clean.notes)


def test_bytes_that_are_not_utf8_before_the_events_are_refused(tmp_path):
    text = json.dumps(_base()).encode().replace(b"NVIDIA H200", b"NVIDIA \xff200")
    code, line, _ = _cli(tmp_path, _write(tmp_path, text))
    assert code == 1 and "not UTF-8 before its events" in line


# ------------------------------------------------------------------ the memory side's facts


@pytest.mark.parametrize("ids", [list(range(1, 500)) + [7, 3], [10 ** 12 * k + 5 for k in range(1, 300)] + [5]])
def test_launches_in_arrays_answer_as_the_dict_they_replace(ids):
    """Dense ids (an array indexed by id) and sparse ones (bisection): get, [], in, len,
    iteration, equality with a dict and a pickle round trip; a later launch of an id
    replaces the earlier, as in a dict; a bool or a string is no id."""
    la, want = P.Launches(), {}
    for k, c in enumerate(ids):
        la.add(c, k % 3, 1000 * k)
        want[c] = (k % 3, 1000 * k)
    assert la == want and dict(la) == want and len(la) == len(want)
    assert sorted(la) == sorted(want) and all(la[c] == want[c] and c in la for c in want)
    assert la.get(-1) is None and la.get(max(ids) + 1) is None and (ids[0] + 1 in la) == (ids[0] + 1 in want)
    assert la.get(True) is None and la.get(str(ids[0])) is None and 0 not in la
    other = P.Launches()
    other.add(ids[0], 9, 9)
    la.merge(other)
    assert la[ids[0]] == (9, 9)
    assert pickle.loads(pickle.dumps(la)) == la
    assert P.Launches() == {} and not P.Launches()


def test_a_sparse_launch_id_keeps_the_index_small():
    la = P.Launches()
    for c in (1, 2, 1 << 62):
        la.add(c, 0, 0)
    assert len(la) == 3 and la[1 << 62] == (0, 0) and len(la._pos) == 3


_NAMES = st.sampled_from(["k", "a}, {b", "x\\y", "}", "{", '"}, {"ph": "X"', "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                          "\u00e9\u4e2d", "ProfilerStep#1", "record_param_comms"])


@st.composite
def _events(draw):
    out = []
    for k in range(draw(st.integers(1, 60))):
        cat = draw(st.sampled_from(["kernel", "gpu_memcpy", "cuda_runtime", "cpu_op", "user_annotation", "ac2g",
                                    "gpu_user_annotation"]))
        e = {"ph": draw(st.sampled_from(["X", "X", "X", "s"])), "cat": cat, "name": draw(_NAMES), "pid": 1,
             "tid": draw(st.integers(0, 3)), "ts": draw(st.integers(0, 10 ** 6)), "dur": draw(st.integers(0, 500)),
             "args": {"correlation": draw(st.integers(0, 40)), "device": 0, "stream": draw(st.integers(0, 3)),
                      "grid": [draw(st.integers(0, 4)), 1, 1], "bytes": draw(st.integers(0, 100)),
                      "nested": draw(st.lists(st.dictionaries(st.sampled_from(["a", "}", "{"]), st.integers(0, 3)),
                                              max_size=2))}}
        if draw(st.booleans()):
            e["args"]["Collective name"] = "allreduce"
        out.append(e)
    return out


@FUZZ
@given(events=_events(), indent=st.sampled_from([None, 0, 2]), batch=st.sampled_from([512, 2048, 8192]))
def test_events_decoded_a_batch_at_a_time_are_those_decoded_one_at_a_time(tmp_path_factory, monkeypatch, events,
                                                                         indent, batch):
    """The batch cut after an event's '}' that ', {' follows is checked by the decoding:
    names holding '}, {', nested objects and any layout give the same events, in order,
    as decoding each alone."""
    d = tmp_path_factory.mktemp("batch")
    p = d / "t.json"
    # keys after the array hold objects too: a batch never runs past the array's end
    p.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events, "extra": [{"a": "}, {"}, {"b": 1}]},
                            indent=indent))
    got = []
    for b in (batch, 1 << 40):  # a batch, then none (every event alone)
        monkeypatch.setattr(P, "BATCH", b)
        monkeypatch.setattr(P, "CHUNK", 4096)
        col = P._Collector()
        seen = []
        col.on_event = seen.append
        col.on_events = seen.extend
        n = P._events(p, col)
        got.append((n, seen))
    assert got[0] == got[1] and got[0][1] == events


# ------------------------------------------------------------------ fuzz: fields and bytes


def test_a_batch_never_runs_past_the_events_array(tmp_path):
    """The last cut a batch finds may lie after the array's ']' (a key after it holding
    objects): the decoding then stops at the ']' before the cut, and the batch is not
    taken; the events are those of the array, no more."""
    events = [{"ph": "X", "cat": "kernel", "name": f"k{k}", "ts": k, "dur": 1, "args": {"correlation": k}}
              for k in range(40)]
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"traceEvents": events, "extra": [{"a": 1}, {"b": 2}]}))
    col = P._Collector()
    seen = []
    col.on_event, col.on_events = seen.append, seen.extend
    assert P._events(p, col) == 40 and seen == events and col.tail.startswith(', "extra"')


def test_a_split_reads_names_numbered_in_each_half_as_one_pass(tmp_path, monkeypatch):
    """The worker of a split read numbers the names, kinds and grids it meets in its own
    order (its half starts mid-cycle here: kernel_3 first); the parent renumbers them
    into its own, so every activity keeps its name."""
    events = []
    for i in range(12_000):
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": 10 * i, "dur": 1, "args": {"correlation": i + 1}})
        events.append({"ph": "X", "cat": "kernel" if i % 5 else "gpu_memset", "name": f"kernel_{i % 7}", "pid": 0,
                       "tid": 7, "ts": 10 * i + 2, "dur": 5, "args": {"correlation": i + 1, "device": 0,
                                                                        "stream": 7, "grid": [i % 3 + 1, 1, 1]}})
    p = tmp_path / "split.json"
    p.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    one = P.read_trace(p)
    monkeypatch.setattr(P, "SPLIT_AT", 1 << 20)
    assert p.stat().st_size > 2 << 20 and P._split_point(p) is not None
    two = P.read_trace(p)
    assert two.activities == one.activities and two.launches == one.launches and len(one.activities) == 12_000


HOSTILE = st.sampled_from([float("nan"), float("inf"), float("-inf"), True, False, None, 10 ** 30, -(10 ** 30),
                           10 ** 400, 1e300, -1, "", "7", "x", [], [1, 2], {}, "\ud800", "a\udfff", 2 ** 63, 2 ** 62,
                           0.5, "9" * 30])
FIELDS = st.sampled_from([("event", "ts"), ("event", "dur"), ("event", "tid"), ("event", "name"), ("event", "ph"),
                          ("event", "cat"), ("args", "device"), ("args", "stream"), ("args", "correlation"),
                          ("args", "grid"), ("args", "block"), ("args", "bytes"), ("args", "In msg nelems"),
                          ("args", "Out msg nelems"), ("args", "Group size"), ("args", "Seq"),
                          ("args", "Process Group Name"), ("args", "Input Dims"), ("args", "dtype"),
                          ("meta", "rank"), ("meta", "world_size"), ("meta", "backend"), ("pg", "pg_size"),
                          ("pg", "pg_name")])


def _contract(tmp_path, data: bytes) -> tuple[int, str, dict | None]:
    p = tmp_path / "fuzz.json"
    p.write_bytes(data)
    code, line, out = _cli(tmp_path, p)
    if out is not None:
        for r in out["collectives"]:
            for k in ("start_ns", "duration_s", "size_bytes", "device", "stream"):
                assert type(r[k]) is not bool and (r[k] is None or abs(r[k]) < 2 ** 63), (k, r[k])
            assert r["size_bytes"] is None or r["size_bytes"] <= P.MAX_BYTES * 16
        json.dumps(out, ensure_ascii=False).encode("utf-8")
    return code, line, out


@pytest.mark.long
@FUZZ
@given(edits=st.lists(st.tuples(FIELDS, HOSTILE, st.integers(0, 20)), min_size=1, max_size=5),
       tier=st.sampled_from([1, 2, 3]))
def test_fuzz_hostile_values_in_any_field(tmp_path_factory, edits, tier):
    """Any field of any event, the head or a group given NaN, an infinity, true, 10^30,
    10^400, a lone surrogate, a list: a result whose --json is strict JSON, with no bool
    and no value past int64 among the figures, or one line; never a traceback."""
    doc = (G.tier1_rank(0) if tier == 1 else G.tier2_rank() if tier == 2 else G.tier3_rank(0)).doc()
    for (where, key), value, k in edits:
        if where == "meta":
            doc.setdefault("distributedInfo", {})[key] = value
        elif where == "pg":
            doc.setdefault("distributedInfo", {}).setdefault("pg_config", [{}])[0][key] = value
        else:
            e = doc["traceEvents"][k % len(doc["traceEvents"])]
            (e.setdefault("args", {}) if where == "args" else e)[key] = value
    text = json.dumps(doc).replace("1e+400", "1e400")
    _contract(tmp_path_factory.mktemp("fuzz"), text.encode("utf-8", "surrogatepass"))


@pytest.mark.long
@FUZZ
@given(cuts=st.lists(st.tuples(st.integers(0, 10 ** 6), st.sampled_from(["flip", "delete", "insert", "cut"]),
                               st.binary(min_size=1, max_size=4)), min_size=1, max_size=4),
       gz=st.booleans())
@pytest.mark.long
def test_fuzz_bytes_of_the_file(tmp_path_factory, cuts, gz):
    """Bytes flipped, deleted, inserted (invalid UTF-8 among them) or the file cut, plain
    or gzipped: a result with strict --json or one line."""
    import gzip

    data = bytearray(json.dumps(G.tier1_rank(0).doc()).encode())
    for at, op, b in cuts:
        at %= len(data)
        if op == "flip":
            data[at] ^= b[0] or 0x80
        elif op == "delete":
            del data[at:at + len(b)]
        elif op == "insert":
            data[at:at] = b
        else:
            del data[at:]
        if not data:
            data = bytearray(b"{")
    _contract(tmp_path_factory.mktemp("bytes"), gzip.compress(bytes(data)) if gz else bytes(data))


def test_numbers_stay_finite_in_json_whatever_the_trace(tmp_path):
    """The two ways a non-finite number could reach --json, ts and dur, on every event
    at once (a trace of NaN): refused in one line, no NaN written."""
    doc = _base()
    for e in doc["traceEvents"]:
        e["ts"] = float("nan")
    code, line, _ = _cli(tmp_path, _write(tmp_path, json.dumps(doc)))
    assert code == 1 and "no usable GPU event" in line
    assert not math.isnan(P._ns(1.5)) and P._ns(1.5) == 1500


def test_a_kernel_outside_every_step_still_hides_the_steps_communication(tmp_path):
    """Found by test_fuzz_hostile_values_in_any_field: the GEMM's launch refused (ts NaN),
    the GEMM (0-600 us) belongs to no step (its start lies before the step's GPU window,
    400-900 us). It still ran beside the all-reduce (400-700 us): the step's exposed
    communication is the all-reduce's 600-700 us and the all-gather's 100 us, as in the
    trace's totals (it was 400 us against 200 us, an AssertionError traceback)."""
    doc = _base()
    doc["traceEvents"][1]["ts"] = float("nan")  # the GEMM's runtime launch
    code, line, out = _cli(tmp_path, _write(tmp_path, doc))
    assert code == 0 and "1 event(s) with fields of the wrong type" in _warnings(out)
    [step] = out["steps"]
    assert round(step["exposed_s"] * 1e6) == 200 and round(step["communication_s"] * 1e6) == 400


def test_a_long_event_is_read_in_doubling_refills(tmp_path, monkeypatch):
    """An event larger than CHUNK is decoded again after each refill: the refills double
    what is held, so a 256 KiB event with a 1 KiB chunk takes about log2(256) reads (one
    chunk a refill took 256, each decoding the event from its start: quadratic)."""
    reads = []

    class Counted:
        def __init__(self, f):
            self.f = f

        def read(self, n=-1):
            reads.append(n)
            return self.f.read(n)

        def __getattr__(self, k):
            return getattr(self.f, k)

    real_open = P._open
    monkeypatch.setattr(P, "_open", lambda p: Counted(real_open(p)))
    monkeypatch.setattr(P, "CHUNK", 1024)
    doc = _base()
    _kernels(doc)[0]["args"]["pad"] = "x" * (256 << 10)
    t = P.read_trace(_write(tmp_path, doc))
    assert len(t.activities) == 3 and len(reads) < 24, len(reads)
