"""The zoo's second half (issue 43, item 4): 31 programs written with their answer key
first (examples/zoo/answers_new.toml, committed before the code), run on one H200 on
2026-12-04 (benchmarks/data/2026-12-04-zoo: 27 at first, 4 after fixes to the programs),
their timelines and ncu pages kept under tests/data/zoo (*_new.json.gz). Each answer is
held here; where linkroof and the key disagree, the test says so and fails the day it
changes (strict xfail, with the reason found)."""

import gzip
import json
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

import pytest

from linkroof.profiler import ncu as N
from linkroof.profiler.compare import host_copies
from linkroof.profiler.session import bundled_profile
from linkroof.roofline import contradictions as K
from linkroof.roofline import timeline as T
from linkroof.roofline.baseline import kernel_group_placements
from linkroof.roofline.model import MachineModel
from test_zoo import assert_counts

ROOT = Path(__file__).resolve().parents[1]
ANSWERS = tomllib.loads((ROOT / "examples" / "zoo" / "answers_new.toml").read_text())
RECORDED = json.loads(gzip.open(ROOT / "tests" / "data" / "zoo" / "recordings_new.json.gz", "rt").read())
PAGES = json.loads(gzip.open(ROOT / "tests" / "data" / "zoo" / "ncu_new.json.gz", "rt").read())
MODEL = MachineModel.from_profile(bundled_profile())

# where the key and linkroof disagree on the recorded run: (field, why), each a finding
DISAGREE = {
    ("scale_by_max_sync_ref", "verdict"): "both causes are there: of its 50.8 us of idle a call, 30.8 us follow "
                                          "launches and 17.3 us the .item() sync; the verdict names the larger, the "
                                          "key the one that makes it 22 us slower than scale_by_max",
    ("dynamic_parallelism", "verdict"): "child grids launched on the device are not in CUPTI's kernel records here: "
                                        "the GPU looks idle while they run, read as launch-bound",
    ("managed_no_prefetch", "verdict"): "the program now moves pages to the host by a host write (CUDA 13: no "
                                        "prefetch to the CPU through CuPy), so the host works inside the call",
    ("managed_prefetch", "verdict"): "the same host write inside the call",
    ("nccl_one_rank", "dominant"): "NCCL's one-rank all-reduce ran as a device copy (class memory), not a "
                                   "communication kernel",
}


def analysed(name, counted=False):
    doc = RECORDED[name]
    acts, starts, host_of = T.from_record(doc)
    t = T.summarize(acts, starts, host_of)
    hp = T.host_pass_from_record(doc)
    t = T.with_host(t, *hp) if hp else t
    if counted and name in PAGES:
        per = N.read_page(PAGES[name]).per_name()
        ps, t, _ = kernel_group_placements(name, t, per, MODEL, recording=doc)
        return t, ps, per
    return t, [], {}


def test_every_new_program_was_recorded():
    assert len(ANSWERS) >= 28 and set(ANSWERS) == set(RECORDED)
    assert not set(ANSWERS) & set(tomllib.loads((ROOT / "examples" / "zoo" / "answers.toml").read_text()))


def _check(name, field):
    if (name, field) in DISAGREE:
        pytest.xfail(DISAGREE[(name, field)])


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_each_new_program_gets_its_answer(name):
    a = ANSWERS[name]
    t, _, _ = analysed(name)
    assert_counts(t, a)
    if "critical_path" in a:
        path = dict(t.critical_path_s)
        assert all(path.get(c, 0) > 0 for c in a["critical_path"]), path
    if "dominant" in a:
        cls = dict(t.class_s)
        if max(cls, key=cls.get) != a["dominant"]:
            _check(name, "dominant")
        assert max(cls, key=cls.get) == a["dominant"]
    want = a["verdict"] if isinstance(a["verdict"], list) else [a["verdict"]]
    if (T.host_cause(t) or "gpu") not in want:
        _check(name, "verdict")
    assert (T.host_cause(t) or "gpu") in want


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_no_new_explanation_contradicts_itself(name):
    t, ps, per = analysed(name, counted=True)
    assert K.check(t, ps, texts=[T.why_text(c) for c in per.values()]) == []


@pytest.mark.parametrize("name", sorted(n for n in ANSWERS if "limiter" in ANSWERS[n] and n in PAGES))
def test_the_counted_limiter(name):
    """Each counted kernel's limiter as the key says: memory, compute, or none (never a
    roof at 0.0 %); 'atomics' is not a roof, so there the limiter is none and the why
    names what held it."""
    want = ANSWERS[name]["limiter"]
    t, ps, per = analysed(name, counted=True)
    [k] = [k for k in t.kernels if k.kind == "kernel"]
    p = max(ps, key=lambda p: p.measured_time_s)
    assert p.limiter == ("none" if want == "atomics" else want), (p.limiter, p.fraction_of_roofline)
    if want in ("memory", "compute"):
        assert k.kernel_class == want and dict(t.class_s).get(want, 0) > 0  # the table and the decomposition agree


@pytest.mark.parametrize("name", sorted(n for n in ANSWERS if ANSWERS[n].get("atomics")))
def test_atomics_are_named_from_ncus_real_counts(name):
    """ncu's L2 atomic and reduction sectors as counted on the H200 (2026-12-04): the 17.3 M
    atomicAdds onto 4 addresses are named contended atomics; the same spread over 1 Mi
    addresses are not. A counted kernel no roof limits says so, never 'no counters'."""
    t, ps, per = analysed(name, counted=True)
    [c] = per.values()
    assert c["atom_sectors"] + c["red_sectors"] > 1e6  # the atomicAdds counted (as reductions: no return value used)
    why = T.why_text(c)
    assert why.startswith("contended atomics") == (ANSWERS[name].get("limiter") == "atomics"), why  # the key's "held by"
    [k] = [k for k in t.kernels if k.kind == "kernel"]
    assert "no counters" not in k.class_basis and k.why == why


def test_a_pageable_copy_is_named_and_a_pinned_one_is_not():
    for name in ("h2d_pageable", "h2d_pinned", "priority_copies"):
        t, _, _ = analysed(name)
        assert host_copies(t) == ("pageable h2d" if ANSWERS[name]["host_memory"] == "pageable" else None), name


def test_ncus_l2_hit_rate_over_100_percent_on_a_real_kernel_is_left_out():
    """raw_fma: ncu gave an L2 hit rate of 105.76 % (a kernel that reads almost nothing)."""
    _, _, per = analysed("raw_fma", counted=True)
    [c] = per.values()
    assert c["why:l2_hit_pct"] == pytest.approx(105.76)
    assert "[ncu's L2 hit rate 105.76%: not a share (outside 0-100 %), left out]" in T.why_text(c)


def test_a_spinning_kernel_is_said_to_wait_and_a_one_warp_reader_to_have_little_in_flight():
    """ncu's real counts: `spin` (a clock64 loop: SM 0.04 %, no loads or stores) waits,
    it does not work; `one_warp_l2` (one warp loading) has little work in flight."""
    _, _, spin = analysed("spin", counted=True)
    [c] = spin.values()
    assert T.why_text(c).startswith("waiting, not working: SM 0%, DRAM 0% of its peak, no global loads or stores")
    _, _, warp = analysed("one_warp_l2", counted=True)
    [w] = warp.values()
    assert T.why_text(w).startswith("little work in flight: 2% of warp slots active")


def test_the_sync_reference_names_both_of_its_idle_causes():
    """scale_by_max_sync_ref against scale_by_max: the .item() adds one synchronize and
    17.3 us of idle after it, beside the launches' 30.8 us (the recorded host pass)."""
    t, _, _ = analysed("scale_by_max_sync_ref")
    causes = dict(t.host.idle_causes_s)
    assert causes["sync"] == pytest.approx(17.3e-6, abs=0.1e-6) and causes["launch"] == pytest.approx(30.8e-6, abs=0.1e-6)
    assert t.host.syncs_per_call == 1 and "sync" not in dict(analysed("scale_by_max")[0].host.idle_causes_s)
