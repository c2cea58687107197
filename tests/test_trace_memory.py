"""Issue 42, item 7: a trace's memory is bounded by the stream, not the file. The
activities are held in columns (Activities), and the analysis after the reading walks
those columns in order of start, holding only the intervals open at once: no object,
tuple or list entry per activity. Measured here with tracemalloc in bytes per GPU
activity on two sizes of one dense trace (no timing asserted), and the columns'
behaviour as a sequence of Activity objects checked against a plain list."""

from __future__ import annotations

import gc
import pickle
import random
import tracemalloc

import pytest

from linkroof.profiler.session import bundled_profile
from linkroof.readers import traces as R
from linkroof.roofline import traces as TR
from linkroof.roofline.timeline import Activities, Activity
from tracegen import TraceBuilder, comm_args


def dense(steps: int, gemms: int = 40) -> TraceBuilder:
    """benchmarks/trace_speed.py's shape, small: per step `gemms` GEMMs launched in turn
    on stream 7, then an all-reduce under record_param_comms on stream 20."""
    t = TraceBuilder(0, 2)
    for s in range(steps):
        base = s * 5000.0
        t.step(s, base, 4900)
        for k in range(gemms):
            t.kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", base + 20 + k * 100, 80, launch_ts=base + k * 100 + 5)
        args = comm_args("allreduce", 1 << 22, 1 << 22, seq=s)
        t.op("record_param_comms", base + 4100, 30, args)
        t.kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", base + 4200, 300, args, launch_ts=base + 4105, stream=20)
    return t


def _per_activity(tmp_path, steps: int) -> tuple[float, float, int]:
    """(bytes the read trace holds, bytes the analysis peaks at above it), each per GPU
    activity, and the activities."""
    path = dense(steps).write(tmp_path / f"dense_{steps}.json")
    profile = bundled_profile()
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        t = R.read_trace(path)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        part = R.rank_part(t, profile)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    n = len(t.activities)
    assert len(part.steps) == steps and len(part.rows) == steps
    return held / n, peak / n, n


@pytest.mark.not_under_mutmut
def test_the_trace_and_its_analysis_hold_no_object_per_activity(tmp_path):
    """Each further activity the read trace holds takes under 200 B (about 135; as
    objects, 320), and the analysis (rank_part: collectives placed, steps summed,
    checked against the totals) peaks at under 200 B a further activity above it (about
    90; tuples and lists of every interval took 490): measured between a trace and one
    four times as long. A small trace first fills the caches that do not grow."""
    _per_activity(tmp_path, 10)
    _per_activity(tmp_path, 800)  # caches that fill once up to the largest size (a fresh CI clone read 277 B, 2026-12-05)
    small = _per_activity(tmp_path, 200)
    large = _per_activity(tmp_path, 800)
    assert large[2] == 4 * small[2]
    for held, peak, n in (small, large):
        assert held < 400, f"the trace holds {held:.0f} B an activity ({n} activities)"
        assert peak < 400, f"the analysis peaks {peak:.0f} B an activity above the trace ({n} activities)"
    # what each further activity costs, from the two sizes: a cache filled once (by a test run
    # before this one in the same worker, or by the first trace of a size) cancels out; a
    # per-activity object or list entry does not (2026-12-04: 352 B an activity at 8200
    # activities in one pytest-xdist worker, a one-time cost, where alone it read about 135)
    grow = (large[0] * large[2] - small[0] * small[2]) / (large[2] - small[2])
    grow_peak = (large[1] * large[2] - small[1] * small[2]) / (large[2] - small[2])
    assert grow < 200, f"each further activity holds {grow:.0f} B"
    assert grow_peak < 200, f"each further activity adds {grow_peak:.0f} B to the analysis' peak"


def test_read_activities_are_columns_whose_collectives_keep_their_identity(tmp_path):
    t = R.read_trace(dense(3, gemms=4).write(tmp_path / "d.json"))
    assert isinstance(t.activities, Activities) and len(t.activities) == 15
    ids = t.comm_ids()
    assert len(ids) == 3
    rows = t.found_rows()
    assert [t.activities[r].name for r in rows] == ["ncclDevKernel_AllReduce_Sum_bf16_RING_LL"] * 3
    assert all(id(t.activities[r]) in ids for r in rows)  # the same object every time it is asked
    assert all(t.activities[r] is a for r, (a, _) in zip(rows, t._scan()))
    assert sum(id(a) in ids for a in t.activities) == 3  # an object made for one look-up is never a collective
    back = pickle.loads(pickle.dumps(t))
    assert back.activities == t.activities and list(back.activities) == list(t.activities)
    assert [c.start_ns for c in back.collectives()] == [c.start_ns for c in t.collectives()]


def _random_acts(rng: random.Random, n: int) -> list[Activity]:
    names = ["ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "sm90_xmma_gemm_bf16", "vectorized_elementwise_kernel"]
    out = []
    for i in range(n):
        s = rng.randrange(0, 10_000)
        kind = rng.choice(["kernel", "kernel", "kernel", "memcpy", "memset"])
        out.append(Activity(kind, rng.choice(names) if kind == "kernel" else "Memcpy PtoP (Device -> Device)",
                            rng.randrange(2), rng.choice([7, 20]), s, s + rng.randrange(0, 900), i + 1,
                            copy_kind="PtoP" if kind == "memcpy" and rng.random() < 0.5 else "DtoH"))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_columns_behave_as_the_list_of_activities(seed):
    rng = random.Random(seed)
    acts = _random_acts(rng, rng.randrange(1, 60))
    cols = Activities.of(acts)
    assert cols == acts and list(cols) == acts and len(cols) == len(acts)
    assert cols[-1] is acts[-1] and cols[1:3] == acts[1:3]  # a caller's objects stay its own
    made = Activities()
    for a in acts:
        made.add(a.kind, a.name, a.device, a.stream, a.start_ns, a.end_ns, a.correlation, a.grid, a.block, a.bytes,
                 a.copy_kind)
    assert made == acts and made.pin(0) is made.pin(0) and made[0] is made.pin(0)
    half = Activities.of(acts[: len(acts) // 2])
    rest = Activities()
    for a in acts[len(acts) // 2:]:
        rest.add(a.kind, a.name, a.device, a.stream, a.start_ns, a.end_ns, a.correlation, a.grid, a.block, a.bytes,
                 a.copy_kind)
    half.extend(pickle.loads(pickle.dumps(rest)))
    assert half == acts
    assert made.take([len(acts) - 1, 0]) == [acts[-1], acts[0]]
    order = made.by_start()
    by_start = sorted(range(len(acts)), key=lambda i: acts[i].start_ns)
    assert (list(order) if order is not None else list(range(len(acts)))) == by_start


def _brute_attributed(intervals):
    """Each nanosecond of the intervals given to the lowest owner covering it."""
    out = {}
    for t in range(max((e for _, e, _ in intervals), default=0)):
        owners = [o for s, e, o in intervals if s <= t < e]
        if owners:
            out[min(owners)] = out.get(min(owners), 0) + 1
    return out


@pytest.mark.parametrize("seed", range(40))
def test_the_sweep_in_order_of_start_attributes_as_every_instant_would(seed):
    rng = random.Random(seed)
    iv = []
    for _ in range(rng.randrange(0, 25)):
        s = rng.randrange(0, 300)
        iv.append((s, s + rng.randrange(0, 80), rng.randrange(-1, 5)))
    assert TR._attributed(iv) == _brute_attributed(iv)


@pytest.mark.parametrize("seed", range(12))
def test_steps_and_totals_from_columns_match_a_brute_count(seed):
    """step_summaries and trace_totals, each figure against a count of nanoseconds over
    the plain list: busy, communication, exposed, collectives, per step and in total."""
    rng = random.Random(100 + seed)
    acts = _random_acts(rng, rng.randrange(1, 40))
    comm = [a for a in acts if "nccl" in a.name and rng.random() < 0.8]
    comm_ids = {id(a) for a in comm}
    step_of = [rng.randrange(-1, 3) for _ in acts]
    windows = [(f"s{k}", 0, 20_000) for k in range(3)]
    steps = TR.step_summaries(0, windows, acts, step_of, comm_ids)
    totals = TR.trace_totals(acts, comm_ids)
    TR.check_steps(steps, totals)

    def is_comm(a):
        return id(a) in comm_ids or TR.kernel_class(a)[0] == "communication"

    def covered(t, pick):
        return [o for a, o in zip(acts, step_of) if pick(a, o) and a.start_ns <= t < a.end_ns]

    busy, communication, exposed, tot = {}, {}, {}, [0, 0, 0]
    for t in range(11_000):
        owned = covered(t, lambda a, o: o >= 0)
        if owned:
            busy[min(owned)] = busy.get(min(owned), 0) + 1
        owned_comm = covered(t, lambda a, o: o >= 0 and is_comm(a))
        if owned_comm:
            communication[min(owned_comm)] = communication.get(min(owned_comm), 0) + 1
        tot[0] += any(a.start_ns <= t < a.end_ns for a in acts)
        tot[1] += any(is_comm(a) and a.start_ns <= t < a.end_ns for a in acts)
        # exposed: a communication activity's instant with no other work on its device
        alone = [(a, o) for a, o in zip(acts, step_of) if is_comm(a) and a.start_ns <= t < a.end_ns
                 and not any(not is_comm(b) and b.device == a.device and b.start_ns <= t < b.end_ns for b in acts)]
        tot[2] += bool(alone)
        mine = [o for a, o in alone if o >= 0]
        if mine:
            exposed[min(mine)] = exposed.get(min(mine), 0) + 1
    assert totals.busy_s == pytest.approx(tot[0] * 1e-9, abs=1e-15)
    assert totals.communication_s == pytest.approx(tot[1] * 1e-9, abs=1e-15)
    assert totals.exposed_s == pytest.approx(tot[2] * 1e-9, abs=1e-15)
    assert totals.collectives == len(comm)
    for k, s in enumerate(steps):
        assert s.busy_s == pytest.approx(busy.get(k, 0) * 1e-9, abs=1e-15)
        assert s.communication_s == pytest.approx(communication.get(k, 0) * 1e-9, abs=1e-15)
        assert s.exposed_s == pytest.approx(min(exposed.get(k, 0), communication.get(k, 0)) * 1e-9, abs=1e-15)
        assert s.collectives == sum(1 for a, o in zip(acts, step_of) if o == k and id(a) in comm_ids)


def test_trace_json_is_streamed_and_the_same_text(tmp_path):
    """`trace --json` writes its report piece by piece (a 1 GB trace's report held 300 MiB
    of string pieces until the final join): the text is json.dumps(..., indent=1)'s."""
    import json as _json
    from pathlib import Path as _Path

    from click.testing import CliRunner

    from linkroof.cli import cli
    from linkroof.profiler.session import bundled_profile
    from linkroof.readers import traces as _P

    files = sorted(str(f) for f in (_Path(__file__).parent / "data" / "traces").glob("hta_sampled_rank*.json.gz"))
    res = CliRunner().invoke(cli, ["--store", str(tmp_path / "s.sqlite"), "trace", *files, "--json", "--no-save",
                                   "--profile", "reference"])
    assert res.exit_code == 0, res.output
    report = _P.analyze([_P.read_trace(f) for f in files], bundled_profile())
    assert res.stdout == _json.dumps(report.to_dict(), indent=1) + "\n"
