"""Data model: JSON round trips, validation naming the bad field, derived statistics."""

import json
import math

import factories
import pytest
from hypothesis import given
from hypothesis import strategies as st

from linkroof import probe
from linkroof.schema import (BenchSpec, Measurement, Placement, Profile, SchemaError, Skipped, Topology, Unknown,
                             Workload, dumps, known, loads)


def measurement(times, nbytes=1 << 30, verified=True, busbw=None):
    return factories.measurement(times=times, nbytes=nbytes, verified=verified, busbw=busbw, blocks=132)


def test_profile_round_trip_with_everything():
    w = Workload("allreduce 1 GiB", flops={}, link_bytes={"nvlink": 2 ** 30}, message_bytes=2 ** 30, ranks=2,
                 pattern="all_reduce", source="formula:all_reduce")
    p = factories.profile([measurement([1.0, 2.0, 3.0]), measurement([5e-6], busbw=1.0, verified=False)],
                          skipped=[Skipped("tma_copy", "no sm_90 here", (0,))])
    p = Profile(**{**p.__dict__, "placements": (Placement(w, 3e-3, 2.4e-3, "link:nvlink", "measured",
                                                           {"link:nvlink": 2.4e-3}),)})
    back = loads(dumps(p), Profile)
    assert back == p
    doc = json.loads(dumps(p))
    assert doc["measurements"][0]["derived"]["median_s"] == 2.0  # derived stats are written for readers
    assert doc["placements"][0]["derived"]["fraction_of_roofline"] == pytest.approx(0.8)


def test_statistics():
    m = measurement([1.0, 2.0, 3.0, 4.0, 100.0])
    assert m.median_s == 3.0 and m.min_s == 1.0
    assert m.iqr_s == pytest.approx(2.0)
    assert m.bandwidth_bytes_per_s == pytest.approx((1 << 30) / 3.0)
    assert m.cv > 0.05 and any("high variation" in w for w in m.all_warnings)
    steady = measurement([1.0, 1.001, 0.999])
    assert steady.all_warnings == ()
    unverified = measurement([1.0], verified=False)
    assert unverified.all_warnings[0].startswith("unverified")
    assert math.isnan(measurement([1.0]).busbw_bytes_per_s)
    assert measurement([2.0], busbw=0.5).busbw_bytes_per_s == pytest.approx((1 << 30) / 2.0 * 0.5)


@given(st.lists(st.floats(min_value=1e-9, max_value=10.0), min_size=1, max_size=50))
def test_statistics_properties(times):
    m = measurement(times)
    assert m.min_s <= m.median_s <= max(times)
    assert m.iqr_s >= 0
    assert m.bandwidth_bytes_per_s == pytest.approx(m.bytes_per_rep / m.median_s)
    assert loads(dumps(m), Measurement) == m


def test_validation_names_the_field():
    doc = json.loads(dumps(probe(replay="h200x2")))
    doc["gpus"][1]["memory_total_bytes"] = "a lot"
    with pytest.raises(SchemaError, match=r"topology\.gpus\[1\]\.memory_total_bytes: expected int, got 'a lot'"):
        loads(json.dumps(doc), Topology)
    doc = json.loads(dumps(probe(replay="h200x2")))
    del doc["pairs"][0]["nvlink_via"]
    with pytest.raises(SchemaError, match=r"topology\.pairs\[0\]\.nvlink_via: missing"):
        loads(json.dumps(doc), Topology)
    doc = json.loads(dumps(probe(replay="h200x2")))
    doc["gpus"][0]["nvlinks"] = {"not": "a list"}
    with pytest.raises(SchemaError, match=r"gpus\[0\]\.nvlinks: expected a list"):
        loads(json.dumps(doc), Topology)


def test_unknown_is_explicit():
    t = probe(replay="h200x2")
    doc = json.loads(dumps(t))
    assert doc["gpus"][0]["gpu_numa_id"] == {"unknown": "NVML numa_node_id(0): NotSupported (Not Supported)"}
    u = Unknown("why")
    assert not u and str(u) == "unknown" and not known(u) and known(0) and not known(None)


def test_bools_are_not_ints():
    doc = json.loads(dumps(measurement([1.0])))
    doc["bytes_per_rep"] = True
    with pytest.raises(SchemaError, match="bytes_per_rep: expected int"):
        loads(json.dumps(doc), Measurement)


def test_document_type_checks():
    with pytest.raises(SchemaError, match="not a linkroof document"):
        loads("[]")
    with pytest.raises(SchemaError, match="unknown document type"):
        loads('{"schema": "linkroof.Nope", "schema_version": 1}')
    with pytest.raises(SchemaError, match="schema_version: missing"):
        loads('{"schema": "linkroof.Workload"}')
    w = Workload("x")
    assert loads(dumps(w)) == w
    with pytest.raises(TypeError):
        dumps(BenchSpec("a", "b", "c", (0,), 1, 1))


def test_pairs_and_ceilings_are_found_by_index_the_first_of_each_kept():
    import dataclasses

    import pytest

    from linkroof.profiler.probe import probe

    t = probe(replay="h200x2")
    assert all(t.pair(p.a, p.b) is p for p in t.pairs) and all(t.ceiling(c.name) is t.ceilings[
        [x.name for x in t.ceilings].index(c.name)] for c in t.ceilings)
    twice = dataclasses.replace(t, pairs=t.pairs + (dataclasses.replace(t.pairs[0], pcie_level="SYS"),))
    assert twice.pair(t.pairs[0].a, t.pairs[0].b) is t.pairs[0]
    with pytest.raises(KeyError, match="no pair GPU0 -> GPU7"):
        t.pair(0, 7)
    with pytest.raises(KeyError, match="no ceiling named 'nope'"):
        t.ceiling("nope")
