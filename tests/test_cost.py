"""The cost model (roofline/cost.py) on the bundled 2xH200 reference: its terms come
from the profile's own measurements, its bound is the sum it claims, the decomposition
of a measured time adds up to it, and a profile without the terms is said to lack them."""

import json

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import factories
from linkroof.cli import cli
from linkroof.profiler.session import bundled_profile
from linkroof.roofline import cost
from linkroof.roofline import workload as W
from linkroof.roofline.model import MachineModel
from linkroof.roofline.place import place

REF = bundled_profile()
MODEL = MachineModel.from_profile(REF)


def _median(name, mech, pattern, **params):
    ms = [m for m in REF.measurements if (m.spec.name, m.spec.mechanism, m.spec.pattern) == (name, mech, pattern)
          and all(m.spec.params.get(k) == v for k, v in params.items())]
    assert ms, (name, mech, pattern, params)
    return min(m.median_s for m in ms)


def test_terms_are_the_profiles_own_figures():
    assert cost.launch_cost(REF, "graph")[0] == _median("launch_latency", "launch", "graph")
    assert cost.launch_cost(REF, "nccl")[0] == _median("nccl_issue_cost", "launch", "nccl_host")
    graph, stream, host = (cost.launch_cost(REF, p)[0] for p in ("graph", "cuda", "cupy"))
    assert graph < stream < host  # a graph replay launches cheaper than a stream; the host's issue costs most
    assert cost.sync_cost(REF, "cta")[0] < cost.sync_cost(REF, "grid")[0]
    one_way = cost.sync_cost(REF, "gpu")[0]
    assert one_way == pytest.approx(_median("signal_latency", "sm", "pingpong", signal="st.relaxed.sys") / 2)
    with pytest.raises(cost.CostError, match="unknown launch path"):
        cost.launch_cost(REF, "carrier pigeon")


def test_latency_aware_link_time_grows_with_the_number_of_messages():
    big = cost.comm_time(REF, "nvlink", 64 << 20, 64 << 20)[0]
    small = cost.comm_time(REF, "nvlink", 64 << 20, 4096)[0]
    assert small > big  # the same bytes in 4 KiB messages pay a latency each
    one = cost.comm_time(REF, "nvlink", 8, 8)[0]
    assert one > 8 / 450e9 * 10  # a tiny message costs its latency, not its bytes over the peak
    assert cost.comm_time(REF, "network", 1 << 20, 1 << 20) is None  # no sweep over that link class


@settings(max_examples=60, deadline=None)
@given(size=st.integers(min_value=8, max_value=1 << 30), measured=st.floats(min_value=1e-6, max_value=1.0),
       launches=st.integers(0, 4), syncs=st.integers(0, 4), kind=st.sampled_from(["cta", "grid", "gpu"]),
       coll=st.sampled_from(["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"]))
def test_bound_is_its_terms_and_the_decomposition_adds_up(size, measured, launches, syncs, kind, coll):
    w = W.collective(coll, size, 2)
    b = cost.cost_bound(w, REF, MODEL, "graph", launches, syncs, kind)
    resources = {k: v for k, v in b.terms_s.items() if k not in ("launch", "sync")}
    assert b.limiter == max(resources, key=resources.get)
    assert b.bound_s == pytest.approx(b.terms_s.get("launch", 0) + b.terms_s.get("sync", 0) + resources[b.limiter])
    assert (launches == 0) == ("launch" not in b.terms_s) and (syncs == 0) == ("sync" not in b.terms_s)
    assert b.bound_s >= place(w, 1.0, MODEL).bound_time_s * (1 - 1e-12)  # never below the bandwidth-only bound
    parts = cost.decompose(measured, b, collective_s=measured / 3)
    assert sum(v for _, v, _ in parts) == pytest.approx(measured, rel=1e-9, abs=1e-15)
    assert all(v >= 0 for _, v, _ in parts)  # never a negative part, whatever the time
    names = [name for name, _, _ in parts]
    # the terms the decomposition counts: NCCL's own time stands in for a limiting link term
    # it exceeds (so a time above the bound can still be below them: test_verdicts says so)
    main = resources[b.limiter]
    if b.limiter.startswith("link:"):
        main = max(main, measured / 3)
    terms = b.terms_s.get("launch", 0) + b.terms_s.get("sync", 0) + main
    if measured < terms * (1 - 1e-9):  # faster than the terms: the excess is named, as no part of the time
        assert names[-1] == cost.BELOW_MODEL and parts[-1][1] == 0 and any("(capped)" in n for n in names)
    else:
        assert cost.BELOW_MODEL not in names
    assert "unexplained" in names


def test_templates_at_1024_and_8192():
    """The issue's cases: all-gather + GEMM at 1024^2 is launch- and latency-bound, at
    8192^2 compute-bound; the cost model's bound is never below the launch it counts."""
    small = cost.cost_bound(W.allgather_gemm(1024, 1024, 1024, "bf16", 2), REF, MODEL)
    large = cost.cost_bound(W.allgather_gemm(8192, 8192, 8192, "bf16", 2), REF, MODEL)
    assert small.limiter == "link:nvlink" and large.limiter == "compute"
    assert small.bound_s > place(W.allgather_gemm(1024, 1024, 1024, "bf16", 2), 1.0, MODEL).bound_time_s
    assert small.terms_s["launch"] > 0.1 * small.bound_s  # the launch is a fifth of the small one's bound
    assert large.terms_s["launch"] < 0.01 * large.bound_s  # and nothing at 8192


def test_placement_decomposes_a_torch_like_all_reduce():
    w = W.collective("all_reduce", 2 << 20, 2)
    p = cost.with_cost(place(w, 92e-6, MODEL), REF, MODEL, "nccl", collective_s=28e-6, launch_s=45e-6)
    d = p.decomposition_s
    assert list(d)[:2] == ["host launch (measured)", "measured NCCL"] and d["host launch (measured)"] == 45e-6
    assert d["measured NCCL"] == 28e-6
    assert sum(d.values()) == pytest.approx(92e-6) and d["unexplained"] == pytest.approx(19e-6)
    assert p.cost_bound_s > p.bound_time_s  # launch and latency on top of bytes over bandwidth
    assert 0 < p.fraction_of_cost_bound < 1
    # the bound's launch term is the profile's (NCCL's host cost), never the call's own measured share
    assert p.cost_terms_s["launch"] == cost.launch_cost(REF, "nccl")[0] != 45e-6
    fast = cost.with_cost(place(w, 1e-6, MODEL), REF, MODEL, "nccl")
    assert min(fast.decomposition_s.values()) >= 0 and fast.decomposition_s["unexplained"] == 0
    assert sum(fast.decomposition_s.values()) == pytest.approx(1e-6)
    assert fast.below_cost_bound and any("faster than its cost-model bound" in n for n in fast.verdicts)


def test_profile_without_the_terms_says_so():
    """A profile without the launch term (an import, a partial bench) still bounds with
    the terms it has, and says which it left out; with no term at all, nothing."""
    bare = factories.profile([factories.measurement()])
    p = cost.with_cost(place(W.collective("all_reduce", 1 << 20, 2), 1e-3, MODEL), bare, MODEL)
    assert p.cost_bound_s == p.cost_terms_s["link:nvlink"] and "launch" not in p.cost_terms_s
    left_out = [n for n in p.cost_notes if "no graph launch figure" in n]
    assert left_out and "--only launch" in left_out[0] and "left out" in left_out[0]
    empty = factories.profile([])
    nothing = cost.with_cost(place(W.collective("all_reduce", 1 << 20, 2), 1e-3, MODEL), empty,
                             MachineModel.from_profile(empty))
    assert nothing.cost_bound_s == 0 and nothing.cost_notes[0].startswith("cost model not computed")


def test_roofline_cli_prints_both_bounds_and_the_decomposition(tmp_path):
    wl = tmp_path / "w.toml"
    wl.write_text('[workload]\ncollective = "all_reduce"\nsize_bytes = 2097152\nranks = 2\n')
    run = CliRunner()
    res = run.invoke(cli, ["--store", str(tmp_path / "s.sqlite"), "roofline", "--profile", "reference", "--workload",
                           str(wl), "--time", "92us", "--launch-path", "nccl", "--syncs", "1", "--force"])
    assert res.exit_code == 0, res.output
    assert "Bandwidth-only" in res.output and "Cost-model bound" in res.output
    assert "of 92.0 us: launch" in res.output and "measured NCCL" in res.output and "unexplained" in res.output
    doc = json.loads(run.invoke(cli, ["--store", str(tmp_path / "s.sqlite"), "roofline", "--profile", "reference",
                                      "--workload", str(wl), "--time", "92us", "--force", "--json"]).stdout)
    measured = doc["placements"][0]
    assert measured["cost_bound_s"] > measured["bound_time_s"] and "unexplained" in measured["decomposition_s"]
    assert doc["placements"][1]["cost_bound_s"] == 0  # the spec placement: bandwidth-only
    bad = run.invoke(cli, ["roofline", "--profile", "reference", "--workload", str(wl), "--time", "1ms",
                           "--launch-path", "pigeon"])
    assert bad.exit_code == 2 and "pigeon" in bad.output


def test_serial_work_is_named_not_overlapped():
    """A naive all-gather then GEMM runs its link time after its compute: the measured
    time minus launch and compute goes to the link term as not overlapped, up to its
    size, and only the rest is unexplained."""
    w = W.allgather_gemm(8192, 8192, 8192, "bf16", 2)
    b = cost.cost_bound(w, REF, MODEL)
    serial = b.terms_s["launch"] + b.terms_s["compute"] + b.terms_s["link:nvlink"]
    parts = {name: v for name, v, _ in cost.decompose(serial * 1.05, b)}
    assert parts["compute"] == b.terms_s["compute"]
    assert parts["link:nvlink (not overlapped, inferred)"] == pytest.approx(b.terms_s["link:nvlink"])
    assert parts["memory (not overlapped, inferred)"] == pytest.approx(min(b.terms_s["memory"], serial * 0.05))
    # issue 44, item 2: `unexplained >= 0` and the parts' sum against the measured time are what
    # decompose makes (it takes each part from what is left, and the rest is unexplained).
    # The unexplained part by hand: 5 % of the serial time, less the memory term it went to
    m = b.terms_s["memory"]
    assert parts["unexplained"] == pytest.approx(serial * 0.05 - min(m, serial * 0.05), abs=1e-15)
    assert sum(parts.values()) == pytest.approx(serial * 1.05)
    tight = {name: v for name, v, _ in cost.decompose(b.bound_s, b)}  # all overlapped: nothing serial
    assert "link:nvlink (not overlapped, inferred)" not in tight and tight["unexplained"] == pytest.approx(0, abs=1e-12)
    # and a bound written by hand, in microseconds: launch 5, compute 100 (the limiter), link 50,
    # memory 20. Timed 160 us: 5 + 100, then the 55 us left to the terms beside, largest
    # first: the link's 50 us, 5 of memory's 20 (its other 15 beside the compute), none
    # unexplained; timed 200 us: all of both serial, 25 us unexplained
    hand = cost.CostBound({"launch": 5e-6, "compute": 100e-6, "link:nvlink": 50e-6, "memory": 20e-6}, 105e-6,
                          "compute")
    us = {name: round(v * 1e6, 6) for name, v, _ in cost.decompose(160e-6, hand)}
    assert us == {"launch": 5, "compute": 100, "link:nvlink (not overlapped, inferred)": 50,
                  "memory (not overlapped, inferred)": 5, "memory": 0, "unexplained": 0}
    us = {name: round(v * 1e6, 6) for name, v, _ in cost.decompose(200e-6, hand)}
    assert us == {"launch": 5, "compute": 100, "link:nvlink (not overlapped, inferred)": 50,
                  "memory (not overlapped, inferred)": 20, "unexplained": 25}


def test_nccl_never_beats_the_latency_aware_bound_on_the_reference():
    """Every NCCL figure of the bundled sweep (device time) places at or under 100 % of
    the cost model (a graph launch, a signal per dependent hop, latency-aware link
    time), and above a fifth of it: the bound is a bound, and not absurdly loose."""
    from linkroof.roofline.collectives import dependent_steps

    fractions = []
    for m in REF.measurements:
        p = m.spec.params
        if m.spec.mechanism == "nccl" and p["timing"] == "device" and not p["in_place"] and p["dtype"] == "fp32":
            w = W.collective(m.spec.pattern, m.spec.message_bytes, 2)
            b = cost.cost_bound(w, REF, MODEL, "graph", 1, dependent_steps(m.spec.pattern, 2), "gpu")
            fractions.append(b.bound_s / m.median_s)
    assert len(fractions) == 7 * 28  # seven collectives, nccl-tests' grid
    assert max(fractions) <= 1.0 and min(fractions) > 0.2
    slow = cost.with_cost(place(W.collective("all_reduce", 1 << 30, 2), 1e-4, MODEL), REF, MODEL)
    assert any("faster than its cost-model bound" in n for n in slow.verdicts)


def test_the_bound_holds_against_a_kernel_that_achieves_it():
    """linkroof's one-shot kernels (measured on 2xH200, tests/data) never beat the cost
    model's bound for their collective and size, and come within 1.65x of it at <= 4 KiB,
    where NCCL's device time is 1.8x or more theirs: the bound is tight where NCCL is
    far from it."""
    from pathlib import Path

    from linkroof.roofline.collectives import dependent_steps

    rows = json.loads((Path(__file__).parent / "data" / "oneshot-h200x2.json").read_text())["rows"]
    nccl = {(m.spec.pattern, m.spec.message_bytes): m.median_s for m in REF.measurements
            if m.spec.mechanism == "nccl" and m.spec.params["timing"] == "device" and not m.spec.params["in_place"]
            and m.spec.params["dtype"] == "fp32"}
    assert len(rows) == 42 and all(r["verified"] for r in rows)
    for r in rows:
        w = W.collective(r["collective"], r["bytes"], 2)
        b = cost.cost_bound(w, REF, MODEL, "graph", 1, dependent_steps(r["collective"], 2), "gpu")
        assert b.bound_s <= r["median_s"], r
        if r["bytes"] <= 4096:
            assert r["median_s"] < 1.65 * b.bound_s, r
            assert nccl[(r["collective"], r["bytes"])] >= 1.8 * r["median_s"], r


def _recorded_profiles():
    """The bundled reference and every profile recorded under benchmarks/data."""
    import glob
    import gzip
    from pathlib import Path

    from linkroof.schema import Profile, from_document

    yield "reference", REF
    root = Path(__file__).parent.parent / "benchmarks" / "data"
    for f in sorted(glob.glob(str(root / "*" / "*.json.gz"))):
        doc = json.loads(gzip.open(f).read())
        if isinstance(doc, dict) and doc.get("schema") == "linkroof.Profile":
            yield Path(f).relative_to(root).as_posix(), from_document(doc, Profile)


def _faster_than_bound(profile, slack):
    """Every copy sweep point over NVLink (one message at its size, launched back to back
    within its repetition: no launch term) and every NCCL device-time figure (a graph
    launch and a signal per dependent hop) against its cost bound: those faster than it
    by more than `slack`, and how many were checked."""
    from linkroof.roofline.collectives import dependent_steps
    from linkroof.roofline.model import link_class
    from linkroof.schema import Workload

    model = MachineModel.from_profile(profile)
    checked, faster = 0, []
    for m in profile.measurements:
        s = m.spec
        if not m.verified or any(w.startswith("above spec") for w in m.warnings):
            continue
        if s.params.get("sweep") and s.mechanism in ("ce", "sm", "tma") and s.params.get("peer_access", True) is True \
                and link_class(profile.topology, m) == "nvlink":
            t = s.message_bytes / m.bandwidth_bytes_per_s
            b = cost.cost_bound(Workload("point", link_bytes={"nvlink": s.message_bytes}, message_bytes=s.message_bytes),
                                profile, model, launches=0)
        elif s.mechanism == "nccl" and s.params.get("timing") != "host_launch" and s.params.get("rank_time") != \
                "this rank":
            t = m.median_s
            w = W.collective(s.pattern, s.message_bytes, len(s.devices))
            try:
                b = cost.cost_bound(w, profile, model, "graph", 1, dependent_steps(s.pattern, len(s.devices)), "gpu")
            except cost.CostError:  # a profile without the launch and sync terms: the link term alone
                b = cost.cost_bound(w, profile, model, launches=0)
        else:
            continue
        checked += 1
        if b.bound_s > t * (1 + slack):
            faster.append((s.mechanism, s.pattern, s.message_bytes, s.params.get("dtype"), b.bound_s / t))
    return checked, faster


def test_no_recorded_point_is_faster_than_its_cost_bound():
    """The cost bound bounds: no copy sweep point and no NCCL figure of the bundled
    reference (166 sweep points, 322 NCCL figures) or of any profile recorded under
    benchmarks/data is faster than its own bound beyond 2 %. (Least-squares fits as the
    link term put 82 of the reference's 166 sweep points below their bound.)"""
    total = 0
    for name, profile in _recorded_profiles():
        checked, faster = _faster_than_bound(profile, 0.02)
        assert not faster, (name, faster[:5])
        total += checked
    ref_checked, _ = _faster_than_bound(REF, 0.0)
    assert ref_checked == 166 + 322 and total > 2500


def test_a_fit_as_the_link_term_would_not_bound():
    """Why the link term is the lower envelope: the least-squares fits of the same sweeps
    overshoot some of their own points, so a bound built on them would not bound."""
    from linkroof.roofline.fits import profile_fits

    over = [e for f in profile_fits(REF) if f.name.split()[0] in ("ce", "sm", "tma") for e in f.errors() if e > 0.02]
    assert over  # the fits are central: some points sit below them
    env = [c for c in MODEL.curves if c.mechanism in ("ce", "sm", "tma") and c.link == "nvlink" and not c.variant]
    assert env and all(c.time_at(s) <= s / b * (1 + 1e-12) for c in env for s, b in c.points)
