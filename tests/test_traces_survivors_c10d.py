"""Survivors of mutation testing in linkroof/roofline/traces.py's facts_from_c10d,
_elements, _group_from_ratio and _fit: each test pins what the real code says for a
small hand-built input (a c10d op or ProcessGroupNCCL range with its recorded shapes
and types, a shape, two ranks' collective kernels), so that the mutant mutmut left
alive says something else (or raises)."""

import pytest

from linkroof.roofline.traces import CollectiveCall, CommOp, _elements, _fit, _group_from_ratio, facts_from_c10d

# ------------------------------------------------------------------ _elements


@pytest.mark.parametrize("dims,n", [
    ([4096, 1024], 4096 * 1024),  # one tensor: the product of its dims
    ([[2, 3], [4]], 2 * 3 + 4),  # a TensorList: the sum of its tensors' elements
    ([[[2], [3]], [4]], 2 + 3 + 4),  # nested lists: summed all the way down
    ([], None),  # no dims at all: unknown, not the empty product 1
    ([[4], []], None),  # one tensor of the list recorded empty: the list's size unknown, not 4
    ([[]], None),  # a TensorList recorded empty
    (5, None),  # not a list (a hostile trace): no shape
    ("[8]", None),
    ([[4], 5], None),  # a tensor and a bare int mixed: no shape
])
def test_elements_of_a_shape_or_a_tensor_list(dims, n):
    assert _elements(dims) == n


# ------------------------------------------------------------------ _group_from_ratio

BIG = 10 ** 400  # past any float: a ratio taken through `/` overflows
ODD = 2 ** 53 + 1  # the first integer a float cannot hold: `/` rounds it to 2**53


@pytest.mark.parametrize("coll,in_n,out_n,group", [
    ("all_gather", 8, 32, 4),  # an all-gather's output is the group's inputs
    ("reduce_scatter", 32, 8, 4),  # a reduce-scatter's input is the group's outputs
    ("all_gather", 8, 8, None),  # ratio 1: no group of one is derived
    ("reduce_scatter", 8, 8, None),
    ("all_gather", 3, 4, None),  # not a whole multiple
    ("all_gather", 32, 8, None),  # an all-gather whose output is smaller: no group
    ("reduce_scatter", 8, 32, None),  # a reduce-scatter whose output is larger: no group
    ("all_reduce", 8, 32, None),  # only all-gather and reduce-scatter carry the group in their sizes
    ("all_reduce", 32, 8, None),
    ("all_to_all", 32, 8, None),
    ("all_gather", 0, 8, None),  # an empty side: nothing to divide
    ("all_gather", 1, BIG, BIG),  # integer arithmetic: exact at any size, no float overflow
    ("reduce_scatter", BIG, 1, BIG),
    ("all_gather", 1, ODD, ODD),  # and exact past float's 53 bits
    ("reduce_scatter", ODD, 1, ODD),
])
def test_group_from_ratio(coll, in_n, out_n, group):
    got = _group_from_ratio(coll, in_n, out_n)
    assert got == group
    if group is not None:
        assert type(got) is int  # a group is a count of ranks, never a float like 4.0


# ------------------------------------------------------------------ _fit


def call(rank, start, end):
    return CollectiveCall(rank, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0, 7, start, end, "all_reduce", "fp32",
                          1024, 1024, 4096, 2, "kernel args")


@pytest.mark.parametrize("a,b,fit", [
    ((100, 200), (130, 250), (0, 30)),  # overlapping: no gap; they start 30 ns apart
    ((130, 250), (100, 200), (0, 30)),  # the same, either order
    ((100, 200), (200, 300), (0, 100)),  # touching: no gap
    ((100, 200), (260, 300), (60, 160)),  # 60 ns between the first's end and the second's start
    ((260, 300), (100, 200), (60, 160)),
])
def test_fit_is_gap_then_start_distance(a, b, fit):
    assert _fit(call(0, *a), call(1, *b)) == fit


# ------------------------------------------------------------------ facts_from_c10d

NO_PG = ("group size unknown: no `Group size` or `Process Group Ranks` on this era's ops, "
         "no pg_config in distributedInfo to tell which one ran it")
TWO_PGS = ("group size unknown: no `Group size` or `Process Group Ranks` on this era's ops, "
           "and the trace has 2 process groups to tell which one ran it")
ONE_PG = "distributedInfo (the one process group)"
DERIVED = "derived (output / input elements)"
DERIVED_RS = "derived (input / output elements)"  # a reduce-scatter's group: its input over its output


def facts(name, args, groups):
    return facts_from_c10d(CommOp(name, 1, 0, 10, args), groups)


def expect(coll, dtype, in_n, out_n, group, group_from, notes):
    return {"collective": coll, "dtype": dtype, "in": in_n, "out": out_n, "group": group, "group_from": group_from,
            "pg": "", "seq": None, "notes": notes}


def test_allgather_reads_output_then_input_and_derives_the_group():
    # c10d::allgather_'s tensors: output first, input second; 32 / 8 elements: a group of 4
    f = facts("c10d::allgather_", {"Input Dims": [[32], [8]], "Input type": ["float", "float"]}, {})
    assert f == expect("all_gather", ("fp32", 4), 8, 32, 4, DERIVED, [])
    assert type(f["group"]) is int


def test_reduce_scatter_derives_the_group_from_input_over_output():
    f = facts("c10d::_reduce_scatter_base_", {"Input Dims": [[8], [32]], "Input type": ["c10::BFloat16"]}, {})
    assert f == expect("reduce_scatter", ("bf16", 2), 32, 8, 4, DERIVED_RS, [])
    assert type(f["group"]) is int


def test_allgather_with_only_its_output_recorded():
    # one tensor where the op has two: the output's elements, the input unknown (not read past the list)
    f = facts("c10d::allgather_", {"Input Dims": [[32]], "Input type": ["float"]}, {})
    assert f == expect("all_gather", ("fp32", 4), None, 32, None, "unknown", [NO_PG])


def test_tensor_lists_sum_and_their_type_is_not_recorded():
    # allgather_ over TensorLists: four 8-element outputs, one 8-element input; record_shapes
    # gives a list's type as `TensorList`, so the element type is unknown and said so
    f = facts("c10d::allgather_", {"Input Dims": [[[8], [8], [8], [8]], [[8]]],
                                   "Input type": ["TensorList", "TensorList"]}, {})
    assert f == expect("all_gather", None, 8, 32, 4, DERIVED, ["a TensorList's element type is not recorded"])


def test_a_known_type_after_a_tensor_list_needs_no_note():
    f = facts("c10d::allgather_", {"Input Dims": [[[8], [8]], [8]], "Input type": ["TensorList", "float"]}, {})
    assert f == expect("all_gather", ("fp32", 4), 8, 16, 2, DERIVED, [])


def test_a_scalar_type_first_is_no_tensor_list():
    # a first type that is not `TensorList` and names no dtype: dtype unknown, but no TensorList note
    f = facts("c10d::allgather_", {"Input Dims": [[32], [8]], "Input type": ["ScalarType", "Scalar"]}, {})
    assert f == expect("all_gather", None, 8, 32, 4, DERIVED, [])


def test_an_op_without_a_layout_reads_its_first_tensor_as_input_and_output():
    # allreduce_ is not in C10D_ARGS: in place, its first tensor is both; two process
    # groups and sizes that say nothing of the group: unknown, and why
    f = facts("c10d::allreduce_", {"Input Dims": [[4096, 2], [7]], "Input type": ["c10::BFloat16", "int"]},
              {"0": 8, "1": 2})
    assert f == expect("all_reduce", ("bf16", 2), 8192, 8192, None, "unknown", [TWO_PGS])


def test_the_one_process_group_gives_the_group():
    f = facts("c10d::allreduce_", {"Input Dims": [[1024]], "Input type": ["float"]}, {"default_pg": 4})
    assert f == expect("all_reduce", ("fp32", 4), 1024, 1024, 4, ONE_PG, [])


def test_the_one_process_group_wins_over_the_sizes():
    # an all-gather whose sizes alone would say 2: the trace's only process group is the word
    f = facts("c10d::allgather_", {"Input Dims": [[16], [8]], "Input type": ["float"]}, {"0": 4})
    assert f == expect("all_gather", ("fp32", 4), 8, 16, 4, ONE_PG, [])


def test_an_op_no_collective_names_keeps_group_unknown():
    f = facts("c10d::frobnicate_", {"Input Dims": [[8]], "Input type": ["float"]}, {})
    assert f == expect(None, ("fp32", 4), 8, 8, None, "unknown", [NO_PG])


@pytest.mark.parametrize("name", ["c10d::allreduce_", "c10d::allgather_"])
def test_no_shapes_recorded_says_size_unknown(name):
    coll = "all_reduce" if "allreduce" in name else "all_gather"
    f = facts(name, {}, {})
    assert f == expect(coll, None, None, None, None, "unknown", [
        f"{name} recorded no input shapes (record_shapes off, or an empty TensorList): size unknown", NO_PG])


def test_shapes_and_types_not_lists_are_none_recorded():
    # a hostile trace: `Input Dims` and `Input type` as strings: read as absent, no error
    f = facts("c10d::allreduce_", {"Input Dims": "[[8]]", "Input type": "float"}, {"0": 2})
    assert f == expect("all_reduce", None, None, None, 2, ONE_PG, [
        "c10d::allreduce_ recorded no input shapes (record_shapes off, or an empty TensorList): size unknown"])


def test_nccl_range_of_an_all_gather_holds_the_local_shard():
    # ProcessGroupNCCL's range records the input (the local shard) only: the output is
    # the group's shards, 8 x 4; no "no input shapes" note, the input being known
    f = facts("nccl:all_gather", {"Input Dims": [[8]], "Input type": ["float"]}, {"0": 4})
    assert f == expect("all_gather", ("fp32", 4), 8, 32, 4, ONE_PG, [])


def test_nccl_range_of_an_all_gather_without_a_group_leaves_the_output_unknown():
    f = facts("nccl:all_gather", {"Input Dims": [[8]], "Input type": ["float"]}, {})
    assert f == expect("all_gather", ("fp32", 4), 8, None, None, "unknown", [NO_PG])


def test_nccl_range_of_an_all_reduce_keeps_output_unknown():
    # only an all-gather's output is its input times the group
    f = facts("nccl:all_reduce", {"Input Dims": [[8]], "Input type": ["float"]}, {"0": 4})
    assert f == expect("all_reduce", ("fp32", 4), 8, None, 4, ONE_PG, [])


def test_nccl_range_with_no_shapes():
    f = facts("nccl:all_reduce", {}, {})
    assert f == expect("all_reduce", None, None, None, None, "unknown", [
        "nccl:all_reduce recorded no input shapes (record_shapes off, or an empty TensorList): size unknown", NO_PG])


def test_nccl_range_of_an_all_gather_with_no_shapes_has_no_output():
    f = facts("nccl:all_gather", {"Input Dims": []}, {"0": 4})
    assert f == expect("all_gather", None, None, None, 4, ONE_PG, [
        "nccl:all_gather recorded no input shapes (record_shapes off, or an empty TensorList): size unknown"])


@pytest.mark.parametrize("name", ["c10d::x::allgather_", "c10d::a::b::allgather_"])
def test_a_name_of_two_namespaces_is_no_collective_not_a_collective_sized_as_another(name):
    """One namespace is stripped for both the collective and the tensors' layout: before
    2026-12-05 'c10d::x::allgather_' was named an all-gather (two namespaces stripped) but
    sized as an unknown op (its base 'x::allgather_' has no layout): in 32 = out 32."""
    f = facts(name, {"Input Dims": [[32], [8]], "Input type": ["float", "float"]}, {})
    assert f == expect(None, ("fp32", 4), 32, 32, None, "unknown", [NO_PG])
