"""What ties calls of several ranks together, at its odd edges (issue 44's "test on what
you did not write": the bugs last stop's mutation review showed, each a test that fails on
the old code):
- a process group may be named like the matcher's own tags ("?", "!not-a-member"): it is
  a group like any other, matched by its Seq, never crashing the matcher;
- a tie of exactly TIE_NS, or of two late ranks after an early one, reads "none (a tie)",
  never "unknown" (the words come from the matcher's own integer comparison, not from
  the skew in seconds read back);
- a reduce-scatter's group derived from its elements says it divided input by output;
- a custom collective's kernel inside a c10d op that records its output first
  (c10d::_allgather_base_) reads the op's tensors in that order."""

import pytest

from linkroof.roofline.timeline import Activity
from linkroof.roofline.traces import TIE_NS, CollectiveCall, CommOp, collective_call, facts_from_args, match_calls

T0 = 1_000_000  # 1 ms from the trace's start: only the differences decide


def call(rank, t, *, pg="pg", granks=(0, 1), seq=None, dur=100_000):
    return CollectiveCall(rank, "ncclDevKernel_AllReduce", 0, 20, t, t + dur, "all_reduce", "fp32", None, None, 64,
                          len(granks) or 2, "kernel args", pg, seq, group_ranks=granks)


@pytest.mark.parametrize("name", ["?", "!not-a-member", "unrecorded", "not a member", "group"])
def test_a_group_named_like_a_tag_is_matched_by_its_seq(name):
    """Two ranks of group `name`, Seq 7 on both, 5 us apart: one call by Seq 7, rank 1 last."""
    got, unmatched = match_calls([call(0, T0, pg=name, seq=7), call(1, T0 + 5000, pg=name, seq=7)])
    assert unmatched == []
    assert [(m.key, m.ranks, m.last_rank, m.matched_by) for m in got] == \
        [(("seq", name, 7), (0, 1), 1, f"Seq 7 of group {name!r} (ranks [0, 1])")]


def test_a_non_member_of_a_group_named_like_the_tag_is_left_unmatched_with_why():
    """Rank 2 records a call of group "!not-a-member" whose ranks are 0 and 1: never paired
    with rank 0's, and why."""
    got, unmatched = match_calls([call(0, T0, pg="!not-a-member", seq=3), call(2, T0, pg="!not-a-member", seq=3)])
    assert got == []
    assert sorted((u.key, u.ranks, u.why) for u in unmatched) == [
        (("seq", "!not-a-member", 3), (0,), "no other rank has this call (its window may not cover it)"),
        (("unpaired", "!not-a-member", "all_reduce", 64, "fp32"), (2,),
         "rank 2 is not among its group's ranks [0, 1]")]


@pytest.mark.parametrize("starts, last, words", [
    ((0, TIE_NS), None, "none (a tie)"),  # exactly 1 us apart: a tie, in the words too
    ((0, TIE_NS + 1), 1, "1"),
    ((0, 5000, 5000 + TIE_NS), None, "none (a tie)"),  # ranks 1 and 2 tie 5 us after rank 0
    ((0, 5000, 5000 + TIE_NS + 1), 2, "2"),
])
def test_who_arrived_last_in_words(starts, last, words):
    ranks = tuple(range(len(starts)))
    got, _ = match_calls([call(r, T0 + s, granks=ranks, seq=1) for r, s in zip(ranks, starts)])
    assert [(m.last_rank, m.last_words) for m in got] == [(last, words)]


def test_a_reduce_scatters_derived_group_says_input_over_output():
    f = facts_from_args({"Collective name": "reduce_scatter", "In msg nelems": 32, "Out msg nelems": 8,
                         "dtype": "Float"}, {}, "kernel args")
    assert (f["group"], f["group_from"]) == (4, "derived (input / output elements)")
    g = facts_from_args({"Collective name": "allgather", "In msg nelems": 8, "Out msg nelems": 32,
                         "dtype": "Float"}, {}, "kernel args")
    assert (g["group"], g["group_from"]) == (4, "derived (output / input elements)")


# ------------------------------------------------------------------ a custom kernel inside a c10d op

def _custom_in(op_name, dims, groups=None, world=4, name="multimem_all_gather_kernel"):
    a = Activity("kernel", name, 1, 13, 1000, 3000)
    ops = [CommOp(op_name, 7, 100, 900, {"Input Dims": dims, "Input type": ["float", "float"]})]
    return collective_call(a, {}, (7, 500), ops, groups or {}, rank=0, world=world)


def test_a_custom_all_gather_inside_allgather_base_reads_output_then_input():
    """c10d::_allgather_base_ records its output first: [[4096], [1024]] around a multimem
    all-gather of 4 ranks is 1024 fp32 elements in, 4096 out, 16 KiB, its group of 4 from
    the shapes' ratio (not 4096 in and 16384 out, 4x too large, as a custom op's first
    tensor read as the input would say)."""
    c = _custom_in("c10d::_allgather_base_", [[4096], [1024]])
    assert (c.collective, c.in_nelems, c.out_nelems, c.size_bytes) == ("all_gather", 1024, 4096, 16384)
    assert (c.group_size, c.group_from) == (4, "derived (output / input elements)")


def test_a_custom_reduce_scatter_inside_reduce_scatter_base_reads_output_then_input():
    """A symmetric-memory kernel named for no one collective inside c10d::_reduce_scatter_base_
    ([[256], [1024]]: output, input): a reduce-scatter (the op's name) of 1024 elements in,
    256 out, its group of 4 from input over output."""
    c = _custom_in("c10d::_reduce_scatter_base_", [[256], [1024]], name="symm_mem_reduce_scatter_kernel")
    assert (c.collective, c.in_nelems, c.out_nelems) == ("reduce_scatter", 1024, 256)
    assert (c.group_size, c.group_from) == (4, "derived (input / output elements)")


def test_a_custom_all_gather_inside_a_c10d_op_with_its_input_only_takes_the_world():
    """Only the output recorded ([[4096]]: no ratio): the group is the world, inferred and
    said so, and the output is read as what the op's first tensor is."""
    c = _custom_in("c10d::_allgather_base_", [[4096]])
    assert (c.group_size, c.group_from) == (4, "inferred: the world (4 ranks); c10d::_allgather_base_ records no "
                                               "group size")
    assert (c.in_nelems, c.out_nelems) == (None, 4096)
