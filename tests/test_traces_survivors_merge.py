"""Survivors of mutation testing in traces' merge_facts: an `nccl:` range's facts (the
collective, its input) completed by the enclosing c10d op's. Each fact is taken from the
first that holds it; the group, if neither gives one, from the merged sizes' ratio; the
"group size unknown" note dropped once a group is known, a note that still holds kept.
Each expected dict is written out whole, by hand."""

import pytest

from linkroof.roofline.traces import merge_facts

UNKNOWN = "group size unknown: nccl:all_gather records none"
TENSORLIST = "a TensorList's element type is not recorded"
DERIVED = "derived (output / input elements)"


def facts(coll=None, dtype=None, n_in=None, n_out=None, group=None, group_from="unknown", notes=()):
    return {"collective": coll, "dtype": dtype, "in": n_in, "out": n_out, "group": group, "group_from": group_from,
            "pg": "", "seq": None, "notes": list(notes)}


FP32 = ("fp32", 4)


def test_the_outer_op_completes_type_output_and_group():
    """The range knows its all-gather's input (8 elements) only; the c10d op around it
    recorded both tensors (8 in, 32 out: a group of 4) and the type. The group is the
    op's, said so; the range's unknown-group note goes."""
    inner = facts("all_gather", None, 8, None, notes=[UNKNOWN])
    outer = facts("all_gather", FP32, 8, 32, 4, DERIVED)
    assert merge_facts(inner, outer) == facts("all_gather", FP32, 8, 32, 4, DERIVED + " (the enclosing c10d op)")
    assert inner == facts("all_gather", None, 8, None, notes=[UNKNOWN])  # the range's own dict untouched


def test_a_note_that_still_holds_is_kept_when_the_group_comes():
    """Neither records the TensorList's element type, so that note stays true and stays;
    only the unknown-group note goes once the op gives the group."""
    inner = facts("all_gather", None, 8, None, notes=[TENSORLIST, UNKNOWN])
    outer = facts("all_gather", None, 8, 32, 4, DERIVED, [TENSORLIST])
    assert merge_facts(inner, outer) == facts("all_gather", None, 8, 32, 4, DERIVED + " (the enclosing c10d op)",
                                              [TENSORLIST])


def test_the_inner_sizes_are_taken_from_the_outer_where_the_range_has_none():
    inner = facts("all_reduce", FP32, None, None, 2, "distributedInfo (the one process group)")
    outer = facts("all_reduce", ("bf16", 2), 1024, 1024, 8, DERIVED)
    # the range's type and group kept; its sizes, unknown, from the op
    assert merge_facts(inner, outer) == facts("all_reduce", FP32, 1024, 1024, 2,
                                              "distributedInfo (the one process group)")


def test_each_fact_from_the_first_that_holds_it():
    inner = facts("all_gather", ("bf16", 2), 16, 64, 4, "the range's Group size", [UNKNOWN])
    outer = facts("all_gather", FP32, 8, 32, 2, "distributedInfo (the one process group)")
    # nothing taken from the op; the group known, so the unknown-group note goes
    assert merge_facts(inner, outer) == facts("all_gather", ("bf16", 2), 16, 64, 4, "the range's Group size")


@pytest.mark.parametrize("coll, n_in, n_out, group", [
    ("all_gather", 8, 32, 4),  # output / input
    ("all_gather", 8, 8, None),  # 1: no group
    ("all_reduce", 8, 32, None),  # an all-reduce's sizes say nothing of its group
])
def test_the_group_from_the_merged_sizes_where_neither_gives_one(coll, n_in, n_out, group):
    """Neither names a group: the range's input and the op's output give the ratio."""
    inner = facts(coll, None, n_in, None, notes=[UNKNOWN])
    outer = facts(coll, FP32, None, n_out, None, "unknown")
    want = facts(coll, FP32, n_in, n_out, group, DERIVED if group else "unknown", [] if group else [UNKNOWN])
    assert merge_facts(inner, outer) == want


def test_a_reduce_scatters_group_from_input_over_output():
    """32 elements in, 8 out: a group of 4. (The label's wording, shared with
    facts_from_c10d, is its own matter: only that the group was derived is asserted.)"""
    inner = facts("reduce_scatter", None, 32, None, notes=[UNKNOWN])
    outer = facts("reduce_scatter", FP32, None, 8, None, "unknown")
    got = merge_facts(inner, outer)
    assert got["group_from"].startswith("derived (")
    assert got == facts("reduce_scatter", FP32, 32, 8, 4, got["group_from"])


def test_no_collective_no_group_derived():
    inner = facts(None, None, 8, None, notes=[UNKNOWN])
    outer = facts(None, FP32, None, 32)
    assert merge_facts(inner, outer) == facts(None, FP32, 8, 32, None, "unknown", [UNKNOWN])


def test_an_outer_group_of_none_leaves_the_inner_group_to_be_derived():
    inner = facts("all_gather", FP32, 8, 16, None, "unknown", [UNKNOWN])
    outer = facts("all_gather", FP32, 8, 16, None, "unknown")
    assert merge_facts(inner, outer) == facts("all_gather", FP32, 8, 16, 2, DERIVED)


def test_the_ranges_size_unknown_note_goes_once_the_op_sized_it():
    """The range recorded an empty TensorList (no size); the op around it recorded 8 in and
    32 out. Until 2026-12-05 the merged call carried 128 bytes and "size unknown" at once."""
    size_note = "nccl:all_gather recorded no input shapes (record_shapes off, or an empty TensorList): size unknown"
    inner = facts("all_gather", None, None, None, notes=[UNKNOWN, size_note])
    outer = facts("all_gather", FP32, 8, 32, None)
    assert merge_facts(inner, outer) == facts("all_gather", FP32, 8, 32, 4, "derived (output / input elements)")
    # neither sized it: the note stays
    assert merge_facts(inner, facts("all_gather"))["notes"] == [UNKNOWN, size_note]
