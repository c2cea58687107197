"""The Flight Recorder reader's doors (issue 42, item 8): hostile dumps are one clear
TelemetryError or a stated warning, never a traceback, never gigabytes, never NaN in
--json; and a hypothesis fuzz over the reader (pickle bytes and JSON documents)."""

import json
import pickle
import resource

import pytest
from click.testing import CliRunner
from frdumps import Job, coll
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linkroof.readers import flightrec as F
from linkroof.readers.telemetry import TelemetryError


def _doc(rank=0):
    job = Job({"0": ("default_pg", [0, 1])}).add([0, 1], coll("0"), coll("0"))
    return pickle.loads(job.dump(rank))


def test_a_pickle_of_3m_memo_references_is_refused_without_growing():
    entry = _doc()["entries"][0]
    data = pickle.dumps({"version": "2.10", "pg_config": {}, "entries": [entry] * 3_000_000}, protocol=2)
    assert len(data) < 8 << 20
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(TelemetryError, match="3000000 entries"):
        F.read_dump(data, "trace_0")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 400 << 10  # KiB: under 400 MiB


def test_deep_nesting_and_long_numbers_are_one_error():
    deep = b'{"version": "2.10", "entries": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with pytest.raises(TelemetryError, match="not a Flight Recorder dump"):
        F.read_dump(deep, "trace_0.json")
    long_json = b'{"version": "2.10", "entries": [{"record_id": ' + b"7" * 5000 + b"}]}"
    with pytest.raises(TelemetryError, match="not a Flight Recorder dump"):
        F.read_dump(long_json, "trace_0.json")
    for digits in (400, 5000):
        doc = _doc()
        doc["entries"][0]["record_id"] = 10 ** digits
        with pytest.raises(TelemetryError, match="record_id a number of"):
            F.read_dump(pickle.dumps(doc, protocol=2), "trace_0")
    # a pickle nesting lists 100 000 deep (MARK ... LIST, written by hand: pickle.dumps recurses)
    deep_pickle = (b"\x80\x02}(X\x07\x00\x00\x00versionX\x04\x00\x00\x002.10X\x07\x00\x00\x00entries"
                   + b"(" * 100_000 + b"l" * 100_000 + b"u.")
    with pytest.raises(TelemetryError, match="entries\\[0\\]: not an entry"):
        F.read_dump(deep_pickle, "trace_0")


@pytest.mark.parametrize("key", ["collective_seq_id", "record_id", "p2p_seq_id"])
def test_true_is_never_a_number(key):
    doc = _doc()
    doc["entries"][0][key] = True
    with pytest.raises(TelemetryError, match=f"{key} True is not an integer"):
        F.read_dump(pickle.dumps(doc, protocol=2), "trace_0")
    doc = _doc()
    doc["entries"][0]["time_discovered_started_ns"] = True
    doc["pg_status"]["0"]["last_enqueued_collective"] = True
    d = F.read_dump(pickle.dumps(doc, protocol=2), "trace_0")
    assert d.entries[0].started_ns is None and d.status["0"]["enqueued"] is None


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0, True])
def test_nan_and_infinity_never_reach_json(tmp_path, bad):
    doc = _doc()
    doc["entries"][0]["duration_ms"] = bad
    with pytest.raises(TelemetryError, match="duration_ms"):
        F.read_dump(pickle.dumps(doc, protocol=2), "trace_0")
    doc = _doc()
    doc["entries"][0]["time_discovered_started_ns"] = bad
    doc["pg_status"]["0"]["last_completed_collective"] = bad
    from linkroof.cli import cli

    f = tmp_path / "trace_0"  # a pickle carries NaN and infinity as they are
    f.write_bytes(pickle.dumps(doc, protocol=2))
    res = CliRunner().invoke(cli, ["telemetry", str(f), "--profile", "reference", "--json"])
    assert res.exit_code == 0, res.output
    json.loads(res.stdout, parse_constant=lambda c: pytest.fail(f"{c} in --json"))
    g = tmp_path / "trace_1.json"  # JSON's NaN and 1e400: refused in one line, or read without them
    g.write_text(json.dumps(doc, default=list).replace("Infinity", "1e400"))
    res = CliRunner().invoke(cli, ["telemetry", str(g), "--profile", "reference", "--json"])
    if res.exit_code:
        assert res.exit_code == 1 and "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1
    else:
        json.loads(res.stdout, parse_constant=lambda c: pytest.fail(f"{c} in --json"))


@pytest.mark.parametrize("shape", [[10 ** 15], [1 << 30, 1 << 30], [1] * 100])
def test_absurd_sizes_are_refused(shape):
    doc = _doc()
    doc["entries"][0]["input_sizes"] = [shape]
    with pytest.raises(TelemetryError, match="entries\\[0\\]: missing or bad field"):
        F.read_dump(pickle.dumps(doc, protocol=2), "trace_0")


def test_a_lone_surrogate_is_no_traceback(tmp_path):
    doc = _doc()
    doc["entries"][0]["process_group"] = ["\ud800grp", "desc\udfff"]
    doc["entries"][1]["profiling_name"] = "nccl:\ud800"
    f = tmp_path / "trace_0.json"
    f.write_text(json.dumps(doc, default=list))
    from linkroof.cli import cli

    for extra in ([], ["--json"]):
        res = CliRunner().invoke(cli, ["telemetry", str(f), "--profile", "reference", *extra])
        assert res.exit_code == 0, res.output


# ------------------------------------------------------------------ fuzz


def _ok_or_refused(data: bytes, name: str) -> None:
    try:
        d = F.read_dump(data, name)
    except TelemetryError:
        return
    diag = F.diagnose_hang([d, d])
    json.dumps(diag.to_dict(), allow_nan=False)
    for s in diag.sentences():
        s.encode("utf-8")


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(10 ** 30), 10 ** 30), st.floats(allow_nan=True),
                    st.text(max_size=8), st.lists(st.integers(-3, 1 << 41), max_size=3))


@FUZZ
@given(data=st.data())
def test_fuzz_pickle_bytes(data):
    raw = bytearray(pickle.dumps(_doc(), protocol=2))
    for _ in range(data.draw(st.integers(1, 6))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    _ok_or_refused(bytes(raw[:data.draw(st.integers(1, len(raw)))]), "trace_0")


@FUZZ
@given(data=st.data())
def test_fuzz_json_fields(data):
    doc = _doc()
    for e in doc["entries"]:
        e["process_group"] = list(e["process_group"])
    for _ in range(data.draw(st.integers(1, 5))):
        where = data.draw(st.sampled_from(["top", "entry", "status", "config"]))
        value = data.draw(SCALARS)
        if where == "top":
            doc[data.draw(st.sampled_from(["version", "pg_config", "pg_status", "entries", "nccl_version"]))] = value
        elif where == "entry" and isinstance(doc.get("entries"), list) and doc["entries"] \
                and isinstance(doc["entries"][0], dict):
            doc["entries"][0][data.draw(st.sampled_from(sorted(doc["entries"][0])))] = value
        elif where == "status" and isinstance(doc.get("pg_status"), dict):
            doc["pg_status"]["0"] = {"last_enqueued_collective": value}
        elif where == "config" and isinstance(doc.get("pg_config"), dict):
            doc["pg_config"]["0"] = {"name": "0", "ranks": value}
    _ok_or_refused(json.dumps(doc, allow_nan=True).encode(), "trace_0.json")
    _ok_or_refused(pickle.dumps(doc, protocol=2), "trace_0")
