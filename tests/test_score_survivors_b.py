"""Guards the judge's KernelBench view, PKB's input groups and the physical floor
(linkroof/scoring/score.py: kernelbench_row's failure/trials/suspect/metadata part,
num_input_groups, physical_floor), each rule pinned at its boundary with facts worked
out by hand:

- kernelbench_row: a failure of kind import_error is a compilation error (compiled
  False), any other kind a runtime error, its message ("" when it has none) and kind
  under KernelBench's names; the first trial that did not match says the correctness
  issue (its reason, else its result); a suspect row is not correct and says why; the
  placement facts are copied when present (0.0 included), never when None;
- num_input_groups: integer arithmetic, exact beyond float precision;
- physical_floor: the workload's bound on the spec ceilings, else the measured ones
  (with its own wording), the NVLink bytes over the spec link bandwidth, else the
  measured one, only where it is higher (a tie keeps the workload's basis); None when
  nothing bounds it.
"""

import pytest

from linkroof.profiler.session import bundled_profile
from linkroof.roofline.model import MachineModel, Roof
from linkroof.schema import Workload
from linkroof.scoring import score as S

# ------------------------------------------------------------------ kernelbench_row

STATS = {"mean": 1.5, "std": 0.1, "min": 1.4, "max": 1.6, "num_trials": 3, "median": 1.5}
REF_STATS = {"mean": 3.0, "std": 0.2, "min": 2.8, "max": 3.2, "num_trials": 3, "median": 3.0}


def _meta(trials_text, **extra):
    return {"correctness_trials": trials_text, "linkroof_protocol": "pkb", "linkroof_feedback": "fb", **extra}


def test_a_runtime_failure_is_a_runtime_error_with_its_message_and_kind():
    row = {"protocol": "pkb", "feedback": "fb", "failure": {"kind": "timeout", "message": "ran past 300 s"},
           "trials": [], "trials_requested": 3, "correct": False, "time_s": 0.0015, "stats": dict(STATS),
           "reference_stats": dict(REF_STATS)}
    assert S.kernelbench_row(row) == {
        "compiled": True, "correctness": False,
        "metadata": _meta("(0 / 3)", runtime_error="ran past 300 s", runtime_error_name="timeout"),
        "runtime": -1.0, "runtime_stats": {},  # timed, but failed: not timed for KernelBench
        "ref_runtime": 3.0, "ref_runtime_stats": REF_STATS}


def test_an_import_error_is_a_compilation_error_not_compiled():
    row = {"protocol": "pkb", "feedback": "fb", "failure": {"kind": "import_error", "message": "No module named x"},
           "trials": [], "trials_requested": 1, "correct": False, "time_s": None}
    assert S.kernelbench_row(row) == {
        "compiled": False, "correctness": False,
        "metadata": _meta("(0 / 1)", compilation_error="No module named x", compilation_error_name="import_error"),
        "runtime": -1.0, "runtime_stats": {}, "ref_runtime": -1.0, "ref_runtime_stats": {}}


def test_a_failure_without_a_message_gives_an_empty_message():
    row = {"protocol": "pkb", "feedback": "fb", "failure": {"kind": "crash"}, "trials_requested": 2}
    got = S.kernelbench_row(row)
    assert got["metadata"] == _meta("(0 / 2)", runtime_error="", runtime_error_name="crash")
    assert got["metadata"]["runtime_error"] == "" and got["compiled"] is True
    row = {"protocol": "pkb", "feedback": "fb", "failure": {"kind": "import_error"}, "trials_requested": 2}
    assert S.kernelbench_row(row)["metadata"] == _meta("(0 / 2)", compilation_error="",
                                                       compilation_error_name="import_error")


def test_no_failure_timed_and_correct_is_kernelbenchs_success():
    row = {"protocol": "pkb", "feedback": "fb", "trials": [{"trial": 0, "result": "match"}], "trials_requested": 1,
           "correct": True, "time_s": 0.0015, "stats": dict(STATS), "reference_stats": dict(REF_STATS)}
    assert S.kernelbench_row(row) == {"compiled": True, "correctness": True, "metadata": _meta("(1 / 1)"),
                                      "runtime": 1.5, "runtime_stats": STATS, "ref_runtime": 3.0,
                                      "ref_runtime_stats": REF_STATS}


def test_the_first_trial_that_did_not_match_says_the_issue_by_its_reason():
    trials = [{"trial": 0, "result": "match"}, {"trial": 1, "result": "mismatch", "reason": "max abs diff 3.0"},
              {"trial": 2, "result": "crash", "reason": "segfault"}]
    row = {"protocol": "pkb", "feedback": "fb", "trials": trials, "trials_requested": 3, "correct": False,
           "time_s": None}
    assert S.kernelbench_row(row) == {
        "compiled": True, "correctness": False,
        "metadata": _meta("(1 / 3)", correctness_issue="max abs diff 3.0"),
        "runtime": -1.0, "runtime_stats": {}, "ref_runtime": -1.0, "ref_runtime_stats": {}}


@pytest.mark.parametrize("bad, issue", [({"trial": 0, "result": "mismatch"}, "mismatch"),
                                        ({"trial": 0, "result": "crash", "reason": None}, "crash"),
                                        ({"trial": 0, "result": "crash", "reason": ""}, "crash")])
def test_a_trial_without_a_reason_says_its_result(bad, issue):
    row = {"protocol": "pkb", "feedback": "fb", "trials": [{"trial": 1, "result": "match"}, bad],
           "trials_requested": 2, "correct": False}
    assert S.kernelbench_row(row)["metadata"] == _meta("(1 / 2)", correctness_issue=issue)


def test_all_trials_matching_say_no_issue_and_count_every_trial():
    trials = [{"trial": t, "result": "match", "reason": "unused"} for t in range(3)]
    row = {"protocol": "pkb", "feedback": "fb", "trials": trials, "trials_requested": 5, "correct": False}
    meta = S.kernelbench_row(row)["metadata"]
    assert meta == _meta("(3 / 5)") and "correctness_issue" not in meta
    # without trials_requested: the number of trials given
    row = {"protocol": "pkb", "feedback": "fb", "trials": trials, "correct": True}
    assert S.kernelbench_row(row)["metadata"] == _meta("(3 / 3)")


def test_a_suspect_row_is_not_correct_and_says_why():
    suspect = {"reasons": ["20.00 us, under the physical floor of 55.92 us"], "measured_speedup": 20.0}
    row = {"protocol": "pkb", "feedback": "fb", "trials": [{"trial": 0, "result": "match"}], "trials_requested": 1,
           "correct": True, "suspect": suspect, "time_s": 0.0015, "stats": dict(STATS)}
    assert S.kernelbench_row(row) == {
        "compiled": True, "correctness": False,
        "metadata": _meta("(1 / 1)", excessive_speedup=True, linkroof_suspect=suspect),
        "runtime": 1.5, "runtime_stats": STATS, "ref_runtime": -1.0, "ref_runtime_stats": {}}


def test_placement_facts_are_copied_when_present_zero_included():
    row = {"protocol": "pkb", "feedback": "fb", "trials_requested": 0, "peak_fraction": 0.5,
           "peak_fraction_of_cost_bound": 0.25, "limiter": "memory", "floor_s": 5.6e-05}
    assert S.kernelbench_row(row)["metadata"] == _meta(
        "(0 / 0)", linkroof_peak_fraction=0.5, linkroof_peak_fraction_of_cost_bound=0.25,
        linkroof_limiter="memory", linkroof_floor_s=5.6e-05)
    row = {"protocol": "pkb", "feedback": "fb", "trials_requested": 0, "peak_fraction": 0.0,
           "peak_fraction_of_cost_bound": None, "limiter": "", "floor_s": None}
    assert S.kernelbench_row(row)["metadata"] == _meta("(0 / 0)", linkroof_peak_fraction=0.0, linkroof_limiter="")


@pytest.mark.parametrize("key, value", [("peak_fraction", 0.5), ("peak_fraction_of_cost_bound", 0.25),
                                        ("limiter", "compute"), ("floor_s", 1e-3)])
def test_each_placement_fact_alone(key, value):
    row = {"protocol": "linkroof", "feedback": None, key: value}
    assert S.kernelbench_row(row)["metadata"] == {"correctness_trials": "(0 / 0)", "linkroof_protocol": "linkroof",
                                                  "linkroof_feedback": None, f"linkroof_{key}": value}


# ------------------------------------------------------------------ num_input_groups


def test_input_groups_are_integer_arithmetic_beyond_float_precision():
    """3 x 2**60 = 67 x b - 1: floor(3 L2 / b) is 66, so 67 groups; a float division
    rounds 3 L2 / b up to 67.0 and would say 68."""
    l2, b = 2 ** 60, 51623350952545387
    assert 3 * l2 == 67 * b - 1
    assert S.num_input_groups(b, l2) == 67


# ------------------------------------------------------------------ physical_floor

WL = Workload(name="copy 256 MiB", hbm_bytes=1 << 28)
NV_SPEC_BASIS = ("spec  pair0-1: data rate 450.0 GB/s (line rate 478.1 GB/s); NVLink through NVSwitch: the lesser "
                 "of both GPUs' NVLink bandwidth (NV18)")
SPEC_WORDS = "the workload's FLOPs and bytes (stated) on the spec ceilings"
MEASURED_WORDS = "the workload's FLOPs and bytes (stated) on the measured ceilings (the spec sheet has none for them)"


@pytest.fixture(scope="module")
def profile():
    return bundled_profile()


def test_nvlink_bytes_over_the_spec_link_bandwidth(profile):
    """The bundled profile: NVLink spec data rate 450 GB/s (measured 396 GB/s)."""
    assert S.physical_floor(None, 1e-3, profile, 1e9) == {
        "floor_s": 1e9 / 450e9, "basis": "1,000,000,000 NVLink bytes a call (NVML, measured) at " + NV_SPEC_BASIS}


def test_the_workloads_floor_on_the_spec_sheet(profile):
    assert S.physical_floor(WL, 1e-3, profile, None) == {"floor_s": (1 << 28) / 4.8e12, "basis": SPEC_WORDS}
    assert S.physical_floor(WL, 1e-3, profile, 0) == {"floor_s": (1 << 28) / 4.8e12, "basis": SPEC_WORDS}


def test_nvlink_bytes_under_the_workloads_floor_leave_it(profile):
    """1000 B over 450 GB/s is 2.2 ns, under the workload's 55.9 us."""
    assert S.physical_floor(WL, 1e-3, profile, 1000) == {"floor_s": (1 << 28) / 4.8e12, "basis": SPEC_WORDS}


def test_nvlink_bytes_above_the_workloads_floor_replace_it(profile):
    assert S.physical_floor(WL, 1e-3, profile, 1e9) == {
        "floor_s": 1e9 / 450e9, "basis": "1,000,000,000 NVLink bytes a call (NVML, measured) at " + NV_SPEC_BASIS}


def test_nothing_bounds_it_is_none(profile):
    assert S.physical_floor(None, 1e-3, profile, None) is None
    assert S.physical_floor(None, 1e-3, profile, 0) is None


# hand-built machines: the real place() and MachineModel.link on chosen ceilings


@pytest.fixture
def as_model(monkeypatch):
    monkeypatch.setattr(MachineModel, "from_profile", staticmethod(lambda p: p))
    return lambda *roofs: MachineModel("test gpu", None, roofs=list(roofs))


def test_no_spec_ceiling_falls_back_to_the_measured_one_with_its_own_words(as_model):
    m = as_model(Roof("hbm", "measured", 1e9, "read-only kernel", "probe"))
    wl = Workload(name="2 GB", hbm_bytes=2_000_000_000)
    assert S.physical_floor(wl, 1.0, m, None) == {"floor_s": 2.0, "basis": MEASURED_WORDS}


def test_a_spec_bound_of_zero_falls_back_to_the_measured_one(as_model):
    """An infinite spec HBM ceiling bounds nothing (0 s): the measured one (1 GB/s) does."""
    m = as_model(Roof("hbm", "spec", float("inf"), "", "sheet"), Roof("hbm", "measured", 1e9, "", "probe"))
    wl = Workload(name="2 GB", hbm_bytes=2_000_000_000)
    assert S.physical_floor(wl, 1.0, m, None) == {"floor_s": 2.0, "basis": MEASURED_WORDS}


def test_the_spec_ceiling_first_when_both_are_known(as_model):
    m = as_model(Roof("hbm", "spec", 2e9, "", "sheet"), Roof("hbm", "measured", 1e9, "", "probe"))
    wl = Workload(name="2 GB", hbm_bytes=2_000_000_000)
    assert S.physical_floor(wl, 1.0, m, None) == {"floor_s": 1.0, "basis": SPEC_WORDS}


def test_no_spec_link_falls_back_to_the_measured_link(as_model):
    m = as_model(Roof("link:nvlink", "measured", 2e9, "ce", "probe"))
    assert S.physical_floor(None, 1.0, m, 4e9) == {
        "floor_s": 2.0, "basis": "4,000,000,000 NVLink bytes a call (NVML, measured) at measured ce probe"}


def test_the_spec_link_first_when_both_are_known(as_model):
    m = as_model(Roof("link:nvlink", "spec", 4e9, "", "sheet"), Roof("link:nvlink", "measured", 2e9, "ce", "probe"))
    assert S.physical_floor(None, 1.0, m, 4e9) == {
        "floor_s": 1.0, "basis": "4,000,000,000 NVLink bytes a call (NVML, measured) at spec  sheet"}


def test_a_spec_link_without_a_measured_one_still_bounds(as_model):
    m = as_model(Roof("link:nvlink", "spec", 4e9, "", "sheet"))
    assert S.physical_floor(None, 1.0, m, 4e9) == {
        "floor_s": 1.0, "basis": "4,000,000,000 NVLink bytes a call (NVML, measured) at spec  sheet"}


def test_no_link_ceiling_at_all_bounds_nothing(as_model):
    m = as_model(Roof("hbm", "spec", 1e9, "", "sheet"))
    assert S.physical_floor(None, 1.0, m, 4e9) is None
    wl = Workload(name="1 GB", hbm_bytes=1_000_000_000)
    assert S.physical_floor(wl, 1.0, m, 4e9) == {"floor_s": 1.0, "basis": SPEC_WORDS}


def test_a_zero_link_bandwidth_bounds_nothing(as_model):
    m = as_model(Roof("link:nvlink", "spec", 0.0, "", "sheet"))
    assert S.physical_floor(None, 1.0, m, 4e9) is None


def test_a_link_under_one_byte_a_second_still_bounds(as_model):
    """0.5 B/s: 1 byte takes 2 s."""
    m = as_model(Roof("link:nvlink", "spec", 0.5, "", "sheet"))
    assert S.physical_floor(None, 1.0, m, 1) == {
        "floor_s": 2.0, "basis": "1 NVLink bytes a call (NVML, measured) at spec  sheet"}


def test_a_slow_link_above_the_workloads_floor_replaces_it(as_model):
    """1 byte over 1 mB/s is 1000 s, above the workload's 1 s (bytes x bandwidth would be 0.001)."""
    m = as_model(Roof("hbm", "spec", 1e9, "", "sheet"), Roof("link:nvlink", "spec", 1e-3, "", "wire"))
    wl = Workload(name="1 GB", hbm_bytes=1_000_000_000)
    assert S.physical_floor(wl, 1.0, m, 1) == {
        "floor_s": 1000.0, "basis": "1 NVLink bytes a call (NVML, measured) at spec  wire"}


def test_a_link_floor_equal_to_the_workloads_keeps_the_workloads_basis(as_model):
    """2 GB over 1 GB/s HBM and 2 GB over 1 GB/s NVLink: both 2 s exactly."""
    m = as_model(Roof("hbm", "spec", 1e9, "", "sheet"), Roof("link:nvlink", "spec", 1e9, "", "wire"))
    wl = Workload(name="2 GB", hbm_bytes=2_000_000_000)
    assert S.physical_floor(wl, 1.0, m, 2e9) == {"floor_s": 2.0, "basis": SPEC_WORDS}


def test_a_floor_under_one_second_is_kept(as_model):
    m = as_model(Roof("link:nvlink", "spec", 1e9, "", "wire"))
    assert S.physical_floor(None, 1.0, m, 5e8) == {
        "floor_s": 0.5, "basis": "500,000,000 NVLink bytes a call (NVML, measured) at spec  wire"}
