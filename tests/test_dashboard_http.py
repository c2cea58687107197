"""The dashboard trusts no callback input: hostile values posted over HTTP to every
callback the app has (Flask's test client, the same requests a browser sends) get a
message in the page or a 400, never a 500 with a traceback; the profile picker reads
nothing outside the store; the store stays readable and unchanged by refused input."""

import base64
import json
import logging

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import factories
from linkroof.dashboard import app as A
from linkroof.schema import dumps
from linkroof.store import Store

HOSTILE = [None, "", "abc", "1e300", "NaN", "-1", 0, -1, 2 ** 70, 10 ** 30, 1.5, float("inf"), True, [], {},
           [1, 2], {"points": "x"}, {"points": [{"customdata": "gpu:abc"}]}, {"points": [{"customdata": 7}]},
           {"points": [7]}, "gpu:99", "../../etc/passwd", "/etc/passwd", "%", "_", "\x00", "a\nb",
           "\x1b[31mred", "\ud800", "x" * 5000, "data:application/json;base64,!!!", "reference"]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    store = tmp_path_factory.mktemp("store") / "s.sqlite"
    with Store(store) as s:
        s.put(factories.profile([factories.measurement()], label="kept"))
    app = A.create_app(str(store))
    client = app.server.test_client()
    assert client.get("/").status_code == 200  # Dash sets itself up on the first request
    logging.getLogger("linkroof").setLevel(logging.CRITICAL)
    return app, client, store


def _post(client, output, inputs, state, values):
    oid, oprop = output.split(".", 1)
    body = {"output": output, "outputs": {"id": oid, "property": oprop},
            "inputs": [{"id": i["id"], "property": i["property"], "value": values.get(f"{i['id']}.{i['property']}")}
                       for i in inputs],
            "changedPropIds": [f"{inputs[0]['id']}.{inputs[0]['property']}"],
            "state": [{"id": i["id"], "property": i["property"], "value": values.get(f"{i['id']}.{i['property']}")}
                      for i in state]}
    return client.post("/_dash-update-component", data=json.dumps(body, allow_nan=True),
                       content_type="application/json")


def _every_callback(app):
    for output, cb in app.callback_map.items():
        yield output, cb["inputs"], cb.get("state", [])


def test_every_callback_answers_hostile_values_without_a_500(served):
    """Each input of each callback gets every hostile value, the others a sane default."""
    app, client, store = served
    before = Store(store).count()
    for output, inputs, state in _every_callback(app):
        for slot in inputs + state:
            key = f"{slot['id']}.{slot['property']}"
            for value in HOSTILE:
                res = _post(client, output, inputs, state, {key: value})
                assert res.status_code < 500, (output, key, value, res.data[:300])
                assert b"Traceback" not in res.data
    assert Store(store).count() == before


def test_the_profile_picker_reads_no_file(served, tmp_path):
    """A profile file anywhere on the server's disk is not a choice: only ids the store
    lists and the bundled reference are."""
    app, client, _ = served
    secret = tmp_path / "secret.json"
    secret.write_text(dumps(factories.profile([factories.measurement()], label="SECRET-LABEL")))
    for value in (str(secret), f"../../../../../../{secret}", secret.name):
        res = _post(client, "page-content.children", app.callback_map["page-content.children"]["inputs"], [],
                    {"url.pathname": "/", "profile-select.value": value})
        assert res.status_code == 200 and b"SECRET-LABEL" not in res.data
        assert b"Not shown" in res.data


def test_uploads_of_the_wrong_shape_are_refused_in_the_page(served):
    app, client, store = served
    cb = app.callback_map["upload-message.children"]
    for contents in (5, [1], {"a": 1}, "no comma", "data:x;base64," + base64.b64encode(b"[1, 2]").decode(),
                     "data:x;base64," + base64.b64encode(json.dumps({"schema": "linkroof.Profile", "id": "\ud800"})
                                                         .encode()).decode()):
        res = _post(client, "upload-message.children", cb["inputs"], cb["state"],
                    {"upload.contents": contents, "upload.filename": "x.json"})
        assert res.status_code == 200 and (b"refused" in res.data or b"not a readable upload" in res.data
                                           or b"Not shown" in res.data), res.data[:300]


def test_a_request_for_a_callback_the_app_does_not_have_is_a_400(served):
    _, client, _ = served
    res = _post(client, "no-such-output.children", [{"id": "url", "property": "pathname"}], [], {})
    assert res.status_code == 400 and b"Traceback" not in res.data
    res = client.post("/_dash-update-component", data="{not json", content_type="application/json")
    assert res.status_code < 500


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(value=st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-2 ** 80, 2 ** 80),
                                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=40)),
                          lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                  st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                          max_leaves=12),
       pick=st.integers(0, 1000))
def test_fuzzed_callback_inputs_never_break_the_server(served, value, pick):
    """Hypothesis: any JSON value in any input of any callback: no 500."""
    app, client, _ = served
    callbacks = list(_every_callback(app))
    output, inputs, state = callbacks[pick % len(callbacks)]
    slots = inputs + state
    slot = slots[pick % len(slots)]
    res = _post(client, output, inputs, state, {f"{slot['id']}.{slot['property']}": value})
    assert res.status_code < 500, (output, slot, value, res.data[:300])


def _url(raw: bytes) -> str:
    return "data:application/octet-stream;base64," + base64.b64encode(raw).decode()


def _snapshot(*folders):
    out = {}
    for f in folders:
        for root, dirs, files in __import__("os").walk(f):
            for n in files + dirs:
                out[__import__("os").path.join(root, n)] = True
    return out


def test_hostile_uploads_change_nothing_but_the_page(tmp_path, monkeypatch):
    """Issue 41 item 2: uploads are parsed as data only. Code, pickles, a gzip bomb, deep
    and huge JSON, a profile whose id or names are code, one that reuses a stored id with
    other content, hostile trace files: each is answered in the page; no file appears in
    the working folder, the temporary folder or the home folder; the store changes only by
    the one valid profile (held as data: its export is data too); refused trace uploads
    leave the traces shown as they were."""
    import gzip
    import os
    import pickle
    import tempfile

    from linkroof.roofline import export as E

    store = tmp_path / "s.sqlite"
    kept = factories.profile([factories.measurement()], label="kept")
    with Store(store) as s:
        s.put(kept)
    work, tmp, home = tmp_path / "work", tmp_path / "tmp", tmp_path / "home"
    for d in (work, tmp, home):
        d.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    app = A.create_app(str(store))
    client = app.server.test_client()
    assert client.get("/").status_code == 200
    before_files = _snapshot(work, tmp, home)
    with Store(store) as s:
        before = {r["id"] for r in s.list(limit=100)}

    class Boom:
        def __reduce__(self):
            return (os.system, (f"touch {work}/PWNED",))

    code_id = '"""; import os; open("PWNED", "w"); """'
    hostile_profile = json.loads(dumps(factories.profile([factories.measurement()], label="<script>alert(1)</script>")))
    hostile_profile["id"] = code_id
    same_id = json.loads(dumps(factories.profile([factories.measurement()], label="other")))
    same_id["id"] = kept.id
    payloads = {
        "code.py": b"import os; open('PWNED', 'w')\n",
        "evil.pkl": pickle.dumps(Boom()),
        "bomb.json.gz": gzip.compress(b"[" + b"0," * (20 << 20) + b"0]"),
        "deep.json": b"[" * 100_000 + b"]" * 100_000,
        "huge-number.json": b'{"schema": "linkroof.Profile", "version": 1e99999}',
        "nan.json": b'{"schema": "linkroof.Profile", "id": NaN}',
        "proto.json": b'{"__class__": "os.system", "__reduce__": ["touch PWNED"]}',
        "yaml.json": b"!!python/object/apply:os.system ['touch PWNED']",
        "same-id.json": json.dumps(same_id).encode(),
        "hostile-id.json": json.dumps(hostile_profile).encode(),
    }
    cb = app.callback_map["upload-message.children"]
    answers = {}
    for name, raw in payloads.items():
        res = _post(client, "upload-message.children", cb["inputs"], cb["state"],
                    {"upload.contents": _url(raw), "upload.filename": name})
        assert res.status_code == 200 and b"Traceback" not in res.data, (name, res.data[:300])
        answers[name] = res.data.decode()
    for name in payloads:
        if name != "hostile-id.json":
            assert "added profile" not in answers[name], (name, answers[name][:300])
    assert "added profile" in answers["hostile-id.json"]
    with Store(store) as s:
        after = {r["id"] for r in s.list(limit=100)}
        assert after - before == {code_id} and before <= after
        assert s.get(kept.id).label == "kept"  # a reused id does not replace what is stored
        stored = s.get(code_id)
    # the trace page: hostile trace files are refused and the traces shown stay as they were
    key = next(k for k in app.callback_map if "trace-message" in k)
    tcb = app.callback_map[key]
    for name in ("evil.pkl", "bomb.json.gz", "deep.json", "code.py"):
        body = {"output": key, "outputs": [{"id": "trace-message", "property": "children"},
                                           {"id": "trace-view", "property": "children"}],
                "inputs": [{"id": "trace-upload", "property": "contents", "value": [_url(payloads[name])]}],
                "changedPropIds": ["trace-upload.contents"],
                "state": [{"id": i["id"], "property": i["property"],
                           "value": [name] if i["property"] == "filename" else None} for i in tcb["state"]]}
        res = client.post("/_dash-update-component", data=json.dumps(body), content_type="application/json")
        assert res.status_code == 200 and b"Traceback" not in res.data, (name, res.data[:300])
        assert b"refused" in res.data or b"not a" in res.data, (name, res.data[:400])
        assert b"read 1 trace" not in res.data
    assert not (work / "PWNED").exists()
    assert _snapshot(work, tmp, home) == before_files  # nothing written, nothing left behind
    only_data = E.kernelbench_py(stored, code_id, E.facts(stored))
    import ast

    assert not any(isinstance(n, (ast.Call, ast.Import)) for n in ast.walk(ast.parse(only_data)))
