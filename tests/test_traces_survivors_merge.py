"""Survivors of mutation testing in traces' merge_facts: an `nccl:` range's facts (the
collective, its input) completed by the enclosing c10d op's. Each fact is taken from the
first that holds it; the group, if neither gives one, from the merged sizes' ratio; the
"group size unknown" note dropped once a group is known, every other note kept. Each
expected dict is written out whole, by hand."""

import pytest

from linkroof.roofline.traces import merge_facts

UNKNOWN = "group size unknown: nccl:all_gather records none"
OTHER = "a TensorList's element type is not recorded"


def facts(coll=None, dtype=None, n_in=None, n_out=None, group=None, group_from="unknown", notes=()):
    return {"collective": coll, "dtype": dtype, "in": n_in, "out": n_out, "group": group, "group_from": group_from,
            "pg": "", "seq": None, "notes": list(notes)}


FP32 = ("fp32", 4)


def test_the_outer_op_completes_type_output_and_group():
    """The range knows its all-gather's input (8 elements) only; the c10d op around it
    recorded both tensors (8 in, 32 out: a group of 4) and the type."""
    inner = facts("all_gather", None, 8, None, notes=[UNKNOWN, OTHER])
    outer = facts("all_gather", FP32, 8, 32, 4, "derived (output / input elements)", [OTHER])
    assert merge_facts(inner, outer) == facts("all_gather", FP32, 8, 32, 4,
                                              "derived (output / input elements) (the enclosing c10d op)", [OTHER])
    assert inner == facts("all_gather", None, 8, None, notes=[UNKNOWN, OTHER])  # the range's own dict untouched


def test_the_inner_input_is_taken_from_the_outer_where_the_range_has_none():
    inner = facts("all_reduce", FP32, None, None, 2, "distributedInfo (the one process group)")
    outer = facts("all_reduce", ("bf16", 2), 1024, 1024, 8, "derived (output / input elements)")
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
    ("reduce_scatter", 32, 8, 4),  # input / output
    ("all_gather", 8, 8, None),  # 1: no group
    ("all_reduce", 8, 32, None),  # an all-reduce's sizes say nothing of its group
])
def test_the_group_from_the_merged_sizes_where_neither_gives_one(coll, n_in, n_out, group):
    """Neither names a group: the range's input and the op's output give the ratio."""
    inner = facts(coll, None, n_in, None, notes=[UNKNOWN])
    outer = facts(coll, FP32, None, n_out, None, "unknown", [OTHER])
    want = facts(coll, FP32, n_in, n_out, group, "derived (output / input elements)" if group else "unknown",
                 [] if group else [UNKNOWN])
    assert merge_facts(inner, outer) == want


def test_no_collective_no_group_derived():
    inner = facts(None, None, 8, None, notes=[UNKNOWN])
    outer = facts(None, FP32, None, 32)
    assert merge_facts(inner, outer) == facts(None, FP32, 8, 32, None, "unknown", [UNKNOWN])


def test_an_outer_group_of_none_leaves_the_inner_group_to_be_derived():
    inner = facts("all_gather", FP32, 8, 16, None, "unknown", [UNKNOWN])
    outer = facts("all_gather", FP32, 8, 16, None, "unknown")
    assert merge_facts(inner, outer) == facts("all_gather", FP32, 8, 16, 2, "derived (output / input elements)")
