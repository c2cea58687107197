"""Survivors of mutation testing in linkroof/roofline/traces.py's facts_from_args, size_of
and ranks_of: each test pins what the real code says for a small hand-built input (a
collective kernel's args as the PyTorch profiler writes them, a collective's element
counts, a `Process Group Ranks` value), so that the mutant mutmut left alive says
something else (or raises)."""

import pytest

from linkroof.roofline.traces import facts_from_args, ranks_of, size_of

FP32 = ("fp32", 4)


def facts(**kw):
    """The whole dict facts_from_args returns, spelled out: what a kernel with no facts
    at all says, with `kw` in its place."""
    base = {"collective": None, "dtype": None, "in": None, "out": None, "group": None, "group_from": "unknown",
            "pg": "", "seq": None, "notes": [], "ranks": ()}
    base.update(kw)
    return base


# ------------------------------------------------------------------ facts_from_args: the collective


def test_an_unknown_collective_keeps_its_own_name_in_lower_case_with_a_note():
    """A `Collective name` linkroof does not know ('FrobNicate') is kept, lower-cased
    ('frobnicate'), not dropped, and a note says linkroof does not know it."""
    got = facts_from_args({"Collective name": "FrobNicate", "In msg nelems": 16, "Out msg nelems": 16,
                           "dtype": "Float", "Group size": 4, "Process Group Name": "0", "Seq": 3}, {}, "kernel args")
    assert got == facts(collective="frobnicate", dtype=FP32, **{"in": 16, "out": 16}, group=4,
                        group_from="kernel args", pg="0", seq=3,
                        notes=["collective 'FrobNicate' is not one linkroof knows"])


def test_an_unknown_collective_spelled_as_an_alias_is_canonical():
    """An unknown `Collective name` 'ReduceScatter' (no underscore: not torch's spelling)
    is read as linkroof's alias 'reducescatter', i.e. reduce_scatter, still with the note;
    its group is then derived from its 32 input over 8 output elements: 4."""
    got = facts_from_args({"Collective name": "ReduceScatter", "In msg nelems": 32, "Out msg nelems": 8,
                           "dtype": "Float"}, {}, "kernel args")
    assert got == facts(collective="reduce_scatter", dtype=FP32, **{"in": 32, "out": 8}, group=4,
                        group_from="derived (input / output elements)",
                        notes=["collective 'ReduceScatter' is not one linkroof knows"])


def test_a_collective_name_in_mixed_case_is_known_and_derives_its_group():
    """'AllGather' is torch's 'allgather' in another case: known, with no note; 8
    elements in, 32 out is a group of 4, derived output over input."""
    got = facts_from_args({"Collective name": "AllGather", "In msg nelems": 8, "Out msg nelems": 32,
                           "dtype": "Float"}, {}, "kernel args")
    assert got == facts(collective="all_gather", dtype=FP32, **{"in": 8, "out": 32}, group=4,
                        group_from="derived (output / input elements)")


# ------------------------------------------------------------------ facts_from_args: the process group name


def test_no_process_group_name_is_an_empty_name():
    """A kernel whose args carry no `Process Group Name` has the name '' (none), not a
    made-up one; its `Group size` of 8 comes from where the args were read."""
    got = facts_from_args({"Collective name": "allreduce", "In msg nelems": 1024, "Out msg nelems": 1024,
                           "dtype": "Float", "Group size": 8}, {}, "record_param_comms")
    assert got == facts(collective="all_reduce", dtype=FP32, **{"in": 1024, "out": 1024}, group=8,
                        group_from="record_param_comms")


@pytest.mark.parametrize("name", ["", None])
def test_an_empty_process_group_name_is_an_empty_name(name):
    """A `Process Group Name` of '' or null is '' (none), not a made-up name."""
    got = facts_from_args({"Collective name": "allreduce", "In msg nelems": 4, "Out msg nelems": 4,
                           "dtype": "Float", "Group size": 2, "Process Group Name": name}, {}, "kernel args")
    assert got == facts(collective="all_reduce", dtype=FP32, **{"in": 4, "out": 4}, group=2,
                        group_from="kernel args")


def test_a_process_group_name_not_given_is_not_looked_up_as_some_group():
    """With no `Process Group Name`, distributedInfo's groups (even one named 'XXXX')
    are not consulted: the all-reduce's group stays unknown."""
    got = facts_from_args({"Collective name": "allreduce", "In msg nelems": 4, "Out msg nelems": 4,
                           "dtype": "Float"}, {"XXXX": 4}, "kernel args")
    assert got == facts(collective="all_reduce", dtype=FP32, **{"in": 4, "out": 4})


def test_the_group_size_from_distributed_info_by_the_process_group_name():
    """No `Group size` nor `Process Group Ranks`: the group of process group '3' is the
    size distributedInfo gives that group (4)."""
    got = facts_from_args({"Collective name": "allreduce", "In msg nelems": 4, "Out msg nelems": 4,
                           "dtype": "Float", "Process Group Name": "3"}, {"3": 4, "0": 8}, "kernel args")
    assert got == facts(collective="all_reduce", dtype=FP32, **{"in": 4, "out": 4}, group=4,
                        group_from="distributedInfo", pg="3")


# ------------------------------------------------------------------ facts_from_args: a derived group


def test_an_all_gathers_group_derived_from_its_elements():
    """An all-gather of 8 elements in and 32 out, with no group in its args: a group of
    4, derived output over input."""
    got = facts_from_args({"Collective name": "allgather", "In msg nelems": 8, "Out msg nelems": 32,
                           "dtype": "BFloat16", "Process Group Name": "1", "Seq": 0}, {}, "kernel args")
    assert got == facts(collective="all_gather", dtype=("bf16", 2), **{"in": 8, "out": 32}, group=4,
                        group_from="derived (output / input elements)", pg="1", seq=0)


def test_a_reduce_scatters_group_derived_from_its_elements():
    """A reduce-scatter of 64 elements in and 16 out: a group of 4, derived input over
    output."""
    got = facts_from_args({"Collective name": "reduce_scatter", "In msg nelems": "64", "Out msg nelems": "16",
                           "dtype": "Half"}, {}, "kernel args")
    assert got == facts(collective="reduce_scatter", dtype=("fp16", 2), **{"in": 64, "out": 16}, group=4,
                        group_from="derived (input / output elements)")


@pytest.mark.parametrize("in_n,out_n", [(8, 8), (None, 32), (8, None), (3, 4)])
def test_an_all_gather_whose_elements_give_no_group_has_an_unknown_group(in_n, out_n):
    """An all-gather whose elements give no whole ratio above 1 (equal, one side
    missing, 3 into 4) has its group unknown, and says so."""
    args = {"Collective name": "allgather", "dtype": "Float"}
    if in_n is not None:
        args["In msg nelems"] = in_n
    if out_n is not None:
        args["Out msg nelems"] = out_n
    got = facts_from_args(args, {}, "kernel args")
    assert got == facts(collective="all_gather", dtype=FP32, **{"in": in_n, "out": out_n})


def test_no_collective_and_no_group_is_unknown():
    """Args with no collective and no group at all: the group is unknown, and says so."""
    assert facts_from_args({}, {}, "kernel args") == facts()


# ------------------------------------------------------------------ facts_from_args: process group ranks


def test_process_group_ranks_give_the_group_and_the_ranks():
    """`Process Group Ranks` of '[0, 2, 4]' is a group of 3: ranks 0, 2 and 4."""
    got = facts_from_args({"Collective name": "allreduce", "In msg nelems": 4, "Out msg nelems": 4,
                           "dtype": "Float", "Process Group Ranks": "[0, 2, 4]", "Process Group Name": "5"},
                          {"5": 8}, "kernel args")
    assert got == facts(collective="all_reduce", dtype=FP32, **{"in": 4, "out": 4}, group=3,
                        group_from="process group ranks", pg="5", ranks=(0, 2, 4))


# ------------------------------------------------------------------ size_of


@pytest.mark.parametrize("coll,in_n,out_n,elem,size", [
    ("all_gather", 8, 32, 4, 128),  # an all-gather's size is its whole output
    ("gather", 8, 32, 4, 128),  # a gather's, too: the root's whole output
    ("gather", None, 32, 2, 64),
    ("reduce_scatter", 32, 8, 4, 128),  # a reduce-scatter's is its whole input
    ("all_to_all", 16, 16, 2, 32),
    ("all_reduce", 16, 16, 4, 64),
])
def test_nccl_tests_size(coll, in_n, out_n, elem, size):
    """nccl-tests' size in bytes: an all-gather's or gather's whole output, others' input."""
    assert size_of(coll, in_n, out_n, elem) == size


@pytest.mark.parametrize("coll", ["all_reduce", "broadcast"])
def test_an_in_place_collectives_size_from_its_output_where_its_input_is_unknown(coll):
    """An in-place all-reduce or broadcast with its input unknown: its size is its output
    (16 fp32 elements: 64 bytes)."""
    assert size_of(coll, None, 16, 4) == 64


@pytest.mark.parametrize("coll", ["reduce_scatter", "all_to_all", "reduce", "sendrecv"])
def test_other_collectives_size_unknown_without_their_input(coll):
    """A reduce-scatter, all-to-all, reduce or send/recv with its input unknown: its size
    is unknown (its output is not its size)."""
    assert size_of(coll, None, 8, 4) is None


@pytest.mark.parametrize("coll", ["all_gather", "gather", "all_reduce", "reduce_scatter"])
def test_no_elements_no_size(coll):
    """No element counts at all: the size is unknown, not an error."""
    assert size_of(coll, None, None, 4) is None


# ------------------------------------------------------------------ ranks_of


@pytest.mark.parametrize("text,ranks", [
    ("[0, 2, 4]", (0, 2, 4)),  # torch's string: the global ranks listed
    ("[0]", (0,)),
    ([0, 1, 2, 3], (0, 1, 2, 3)),  # a JSON list of ints
    ([3, 0], (3, 0)),  # in the order listed
    ([0], (0,)),  # rank 0 is a rank
    ([16777215], (16777215,)),  # the largest rank taken: 2**24 - 1
    ([1 << 24], ()),  # 2**24 ranks and past: not a rank
    ([(1 << 25) - 1], ()),
    ([-1, 0], ()),  # a negative rank: not a list of ranks
    ([True, 1], ()),  # a bool is not a rank
    (["0", "1"], (0, 1)),  # a list of digit strings
    ("[1234567]", (1234567,)),  # a rank of 7 digits is read
    ("[12345678]", (12345678,)),  # as text within the same bound as a number: below 2^24
    (["12345678"], (12345678,)),
    ("[16777215]", (16777215,)),  # 2^24 - 1
    ("[16777216]", ()),  # 2^24: past the bound, as [16777216] as a number is
    ("[123456789]", ()),  # 9 digits
    ("[0, 0]", ()),  # a rank listed twice: not a group's ranks
    ([2, 2], ()),
    ("[a, b]", ()),  # not digits
    (["a"], ()),
    ("X[0, 1]X", ()),  # stray letters around the brackets: not a list
    ("[0, 1, ..., 29, ...]", ()),  # torch cut the list short
    ("[]", ()),  # lists none
    ("", ()),
    ([], ()),
    (None, ()),  # no `Process Group Ranks`
    (5, ()),  # a bare number is not a list
    ({"0": 1}, ()),
    ("[0, ²]", ()),  # a superscript digit is not a rank
])
def test_ranks_of(text, ranks):
    """The global ranks `Process Group Ranks` lists, or () where it lists none or is not
    a list of distinct ranks."""
    assert ranks_of(text) == ranks


def test_a_kernel_without_process_group_ranks_lists_no_ranks():
    """A kernel whose args carry `Group size` 2 but no `Process Group Ranks`: its ranks
    are () (unknown), its group 2 from the args."""
    got = facts_from_args({"Collective name": "broadcast", "In msg nelems": 10, "Out msg nelems": 10,
                           "dtype": "Long", "Group size": "2"}, {}, "kernel args")
    assert got == facts(collective="broadcast", dtype=("int64", 8), **{"in": 10, "out": 10}, group=2,
                        group_from="kernel args")
