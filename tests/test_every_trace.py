"""Every profiler trace in tests/data, read by linkroof beside a plain reader that knows
nothing of it (tests/tools/plain_trace_reader.py; issue 42, items 1, 2 and 9): every
communication kernel the plain reader sees is a linkroof row; the steps never sum past
the trace; no pair across ranks has kernels apart by more than the clock tolerance."""

import re
import sys
from pathlib import Path

import pytest

from linkroof.profiler.session import bundled_profile
from linkroof.readers import traces as P
from linkroof.roofline import traces as TR

sys.path.insert(0, str(Path(__file__).parent / "tools"))
import plain_trace_reader as plain  # noqa: E402

DATA = Path(__file__).parent / "data"
REF = bundled_profile()


def traces():
    out = []
    for f in sorted(DATA.rglob("*.json*")):
        head = plain.gzip.decompress(f.read_bytes())[:4096] if f.suffix == ".gz" else f.read_bytes()[:4096]
        if b'"traceEvents"' in head or b"traceEvents" in head:
            out.append(f)
    return out


TRACES = traces()
JOBS = {}
for f in TRACES:
    JOBS.setdefault(re.sub(r"rank-?\d+", "rank*", f.name), []).append(f)


def test_the_data_holds_traces():
    assert len(TRACES) >= 3 and any(len(v) > 1 for v in JOBS.values())


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_every_communication_kernel_the_plain_reader_sees_is_a_row(path):
    seen = plain.read(str(path))
    t = P.read_trace(path)
    kernels = [c for c in t.collectives() if "memcpy" not in c.kernel.lower() and plain.COMM.search(c.kernel)]
    assert len(kernels) == seen["comm_kernels"]
    assert round(sum(c.duration_s for c in kernels) * 1e6) == round(seen["comm_sum_us"])
    rep = P.analyze([t], REF)
    totals = TR.trace_totals(t.activities, t.comm_ids())
    TR.check_steps(rep.steps, totals, str(path))
    assert totals.communication_s * 1e6 >= seen["comm_union_us"] - 1  # linkroof counts copies of a collective too
    assert len(rep.steps) == max(1, seen["steps"])


@pytest.mark.parametrize("job", [k for k, v in JOBS.items() if len(v) > 1])
def test_no_pair_across_ranks_is_apart_by_more_than_the_tolerance(job):
    files = JOBS[job]
    rep = P.analyze([P.read_trace(f) for f in files], REF)
    calls = {TR.member(r.call): r.call for r in rep.rows}
    for m in rep.matched:
        cs = [calls[x] for x in m.members]
        assert TR._apart_ns(cs) <= TR.CLOCK_TOLERANCE_S * 1e9, m
        assert len({c.rank for c in cs}) == len(cs)
    assert rep.match.matched_calls + rep.match.unmatched_calls == len(rep.rows)
