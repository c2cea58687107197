"""Survivors of mutation testing in linkroof/roofline/traces.py's facts_from_custom_op,
custom_op_collective, ranks_listed and _name_only_note: each test pins what the real
code says for a small hand-built input (a host op of a custom collective, a
`Process Group Ranks` value, a kernel name), so that the mutant mutmut left alive
says something else."""

import pytest

from linkroof.roofline.traces import CommOp, _name_only_note, custom_op_collective, facts_from_custom_op, ranks_listed

# ------------------------------------------------------------------ _name_only_note

GENERIC = "ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>, unsigned long)"  # 72 characters
SENDRECV = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"  # 82
OTHER = "ncclDevKernel_Unknown_Collective_Variant(ncclDevKernelArgsStorage<4096ul>)"  # 74


@pytest.mark.parametrize("name,note", [
    # a generic kernel (NCCL >= 2.19, RCCL): the name cut at 60 characters, then why
    (GENERIC, "the kernel's name (ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>, un) does not name its "
              "collective: a generic kernel (NCCL 2.19 or later, or RCCL) runs any collective, and this one's "
              "launching op was not recorded"),
    # NCCL 2.1x's SendRecv kernel (spelled in mixed case, as NCCL names it): several collectives in one
    (SENDRECV, "the kernel's name (ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, uns) does not name its "
               "collective (NCCL 2.1x runs several collectives in one SendRecv kernel)"),
    # neither: only that the name does not say
    (OTHER, "the kernel's name (ncclDevKernel_Unknown_Collective_Variant(ncclDevKernelArgsSt) does not name its "
            "collective"),
])
def test_name_only_note_says_why_with_the_name_cut_at_60_characters(name, note):
    assert len(name) > 61  # the 61st character would show were the cut 61
    assert _name_only_note(name) == note


def test_name_only_note_short_names_whole():
    assert _name_only_note("ncclKernel_SendRecv") == (
        "the kernel's name (ncclKernel_SendRecv) does not name its collective (NCCL 2.1x runs several "
        "collectives in one SendRecv kernel)")
    assert _name_only_note("ncclDevKernel_Foo") == "the kernel's name (ncclDevKernel_Foo) does not name its collective"


# ------------------------------------------------------------------ custom_op_collective


@pytest.mark.parametrize("name,coll", [
    ("vllm::all_reduce", "all_reduce"),  # underscored: linkroof's spelling as is
    ("symm_mem::two_shot_all_reduce_", "all_reduce"),
    ("_c10d_functional::all_gather_into_tensor", "all_gather"),
    ("c10d_functional::reduce_scatter_tensor", "reduce_scatter"),
    ("trtllm::allreduce", "all_reduce"),  # run together: canonical's alias
    ("sgl_kernel::all_toall", "all_to_all"),  # the pattern allows each underscore alone: all spellings one name
    ("tensorrt_llm::allto_all", "all_to_all"),
    ("_C_custom_ar::All_Reduce", "all_reduce"),  # any case
    ("nvshmem_all_gather", "all_gather"),  # the nvshmem prefix needs no namespace: the whole name is the op
    ("vllm::rms_norm", None),  # a custom op's namespace, but no collective
    ("aten::all_reduce", None),  # not a custom collective's namespace
])
def test_custom_op_collective_names_linkroofs_collective(name, coll):
    assert custom_op_collective(name) == coll


@pytest.mark.parametrize("name,coll", [
    # the op is what follows the first '::': a collective word in the namespace is not the op's
    ("nvshmem_reduce_scatter::all_gather", "all_gather"),
    ("nvshmem_all_to_all::barrier", None),
    # a nested name: the op (the part after the namespace) names it, not its last component
    ("vllm::all_reduce::out", "all_reduce"),
    ("symm_mem::all_gather::impl::v2", "all_gather"),
    # no whitespace splitting: a name with a space is still read after its '::'
    ("vllm::custom all_reduce", "all_reduce"),
])
def test_custom_op_collective_reads_the_op_after_the_first_namespace(name, coll):
    assert custom_op_collective(name) == coll


# ------------------------------------------------------------------ ranks_listed


@pytest.mark.parametrize("text,n", [
    ([0, 1, 2], 3),  # a JSON list: its length
    ([5], 1),
    ([], None),  # lists none: not a group of 0
    ("[0, 1, 2, 3]", 4),
    ("[-1, 0]", None),  # a negative rank is no rank: the count of what ranks_of reads, and it reads none
    ("[0, 0]", None),  # a rank twice: no group's ranks
    ("[², ³]", None),  # superscript digits are no rank numbers
    (None, None),  # the arg absent (args.get): not a list
    (8, None),  # a number is not a list
    ("[0, 1, ..., 29, ...]", None),  # torch cut the list short
    ("[a, b]", None),  # not rank numbers
    ("[1-, 0]", None),  # a trailing sign is no integer
    ("[X0, 1]", None),
    ("[0, 1]X", None),  # text after the list: not a list
    ("X[0, 1]", None),
])
def test_ranks_listed_counts_a_full_list_only(text, n):
    assert ranks_listed(text) == n


# ------------------------------------------------------------------ facts_from_custom_op

BF16 = ("bf16", 2)


def op(name="vllm::all_reduce", dims=((4096, 1024),), types=("c10::BFloat16",), concrete=None, **extra):
    args = {}
    if dims is not None:
        args["Input Dims"] = [list(d) for d in dims] if isinstance(dims, tuple) else dims
    if types is not None:
        args["Input type"] = list(types) if isinstance(types, tuple) else types
    if concrete is not None:
        args["Concrete Inputs"] = concrete
    args.update(extra)
    return CommOp(name, 1, 10, 30, args)


def facts(coll, pg, group, group_from, n_in, n_out, notes, dtype=BF16):
    return {"collective": coll, "dtype": dtype, "in": n_in, "out": n_out, "group": group, "group_from": group_from,
            "pg": pg, "seq": None, "notes": notes}


def test_the_ops_group_from_its_concrete_inputs_quoted():
    """torch records a string argument quoted: the quotes are not the group's name."""
    f = facts_from_custom_op(op(concrete=["", "'tp:0'"]), None, {"tp:0": 4, "0": 8}, 8)
    assert f == facts("all_reduce", "tp:0", 4, "the op's group 'tp:0' (distributedInfo)",
                      4096 * 1024, 4096 * 1024, [])


def test_a_group_name_with_double_quotes():
    f = facts_from_custom_op(op(concrete=["", '"1"']), "all_reduce", {"0": 8, "1": 2}, 8)
    assert (f["pg"], f["group"], f["group_from"]) == ("1", 2, "the op's group '1' (distributedInfo)")


def test_a_group_name_ending_in_x_is_kept_whole():
    """Only quotes are stripped: a name ending in X (or starting with one) keeps it."""
    f = facts_from_custom_op(op(concrete=["", "'GROUP_X'"]), None, {"GROUP_X": 4, "GROUP_": 2}, 8)
    assert (f["pg"], f["group"], f["group_from"]) == ("GROUP_X", 4, "the op's group 'GROUP_X' (distributedInfo)")
    g = facts_from_custom_op(op(concrete=["", "'XpgX'"]), None, {"XpgX": 2}, 8)
    assert (g["pg"], g["group"]) == ("XpgX", 2)


def test_a_name_that_is_not_the_groups_after_stripping_x_does_not_match():
    """'X0X' is not group '0': no group named, so the world, inferred."""
    f = facts_from_custom_op(op(concrete=["", "'X0X'"]), None, {"0": 2}, 8)
    assert (f["pg"], f["group"]) == ("", 8)


@pytest.mark.parametrize("world,group,group_from,notes", [
    (8, 8, "inferred: the world (8 ranks); vllm::all_reduce records no group size", []),
    (2, 2, "inferred: the world (2 ranks); vllm::all_reduce records no group size", []),
    # a world of one rank, or none known: no group to infer
    (1, None, "unknown", ["group size unknown: vllm::all_reduce records none and the trace gives no world size"]),
    (None, None, "unknown", ["group size unknown: vllm::all_reduce records none and the trace gives no world size"]),
    (0, None, "unknown", ["group size unknown: vllm::all_reduce records none and the trace gives no world size"]),
])
def test_no_named_group_the_world_inferred_when_more_than_one_rank(world, group, group_from, notes):
    """No concrete inputs (or none that the trace's groups list): the world, said so."""
    f = facts_from_custom_op(op(), None, {"tp:0": 4}, world)
    assert f == facts("all_reduce", "", group, group_from, 4096 * 1024, 4096 * 1024, notes)


def test_concrete_inputs_not_naming_a_group():
    f = facts_from_custom_op(op(concrete=["", "'dp:0'", "4"]), None, {"tp:0": 4}, 8)
    assert (f["pg"], f["group"]) == ("", 8)


@pytest.mark.parametrize("concrete", ["'tp:0'", {"tp:0": 1}, 7])
def test_concrete_inputs_not_a_list_name_no_group(concrete):
    f = facts_from_custom_op(op(concrete=concrete), None, {"tp:0": 4, "t": 2, "'": 3}, 8)
    assert (f["pg"], f["group"], f["group_from"]) == (
        "", 8, "inferred: the world (8 ranks); vllm::all_reduce records no group size")


@pytest.mark.parametrize("coll,n_in,n_out", [
    ("all_reduce", 4096, 4096),  # input and output alike
    ("all_to_all", 4096, 4096),
    ("all_gather", 4096, 4096 * 4),  # the first tensor is the shard: the output is the group's shards
    ("reduce_scatter", 4096, 4096 // 4),  # the input is the whole: each rank keeps a quarter
])
def test_elements_by_collective_over_a_group_of_4(coll, n_in, n_out):
    f = facts_from_custom_op(op(name="symm_mem::custom_op", dims=((4096,),), concrete=["", "'tp'"]), coll,
                             {"tp": 4}, 8)
    assert f == facts(coll, "tp", 4, "the op's group 'tp' (distributedInfo)", n_in, n_out, [])
    assert type(f["in"]) is int and type(f["out"]) is int  # element counts, never 1024.0


@pytest.mark.parametrize("coll", ["all_gather", "reduce_scatter"])
def test_gather_and_scatter_output_unknown_without_a_group(coll):
    """No group: the input is known, the output (a multiple or a share of it) is not."""
    f = facts_from_custom_op(op(dims=((1024,),)), coll, {}, None)
    assert f == facts(coll, "", None, "unknown", 1024, None,
                      ["group size unknown: vllm::all_reduce records none and the trace gives no world size"])


@pytest.mark.parametrize("coll", ["all_reduce", "all_gather", "reduce_scatter", None])
def test_no_input_shapes_size_unknown(coll):
    """record_shapes off: no Input Dims, no Input type; nothing is sized, and it says so."""
    f = facts_from_custom_op(op(name="vllm::foo", dims=None, types=None, concrete=["", "'tp'"]), coll, {"tp": 2}, 8)
    assert f == facts(coll, "tp", 2, "the op's group 'tp' (distributedInfo)", None, None,
                      ["vllm::foo recorded no input shapes (record_shapes off): size unknown"], dtype=None)


def test_no_shapes_and_no_group_both_notes_in_order():
    f = facts_from_custom_op(op(dims=[], types=[]), None, {}, 1)
    assert f["notes"] == ["group size unknown: vllm::all_reduce records none and the trace gives no world size",
                          "vllm::all_reduce recorded no input shapes (record_shapes off): size unknown"]
    assert (f["in"], f["out"], f["dtype"], f["collective"]) == (None, None, None, "all_reduce")


@pytest.mark.parametrize("dims,types", [(4096, 7), ({"a": [1]}, {"Float": 1}), ("[4096]", "Float")])
def test_hostile_shapes_and_types_not_lists_are_no_shapes(dims, types):
    """`Input Dims` / `Input type` that are not lists (a hostile trace): no size, no type, no crash."""
    f = facts_from_custom_op(op(dims=dims, types=types), None, {}, 4)
    assert (f["in"], f["out"], f["dtype"]) == (None, None, None)
    assert f["notes"] == ["vllm::all_reduce recorded no input shapes (record_shapes off): size unknown"]


def test_the_collective_from_the_ops_name_when_the_kernel_names_none():
    f = facts_from_custom_op(op(name="_c10d_functional::all_gather_into_tensor", dims=((512,),), types=("float",)),
                             None, {}, 4)
    assert (f["collective"], f["dtype"], f["in"], f["out"], f["group"]) == ("all_gather", ("fp32", 4), 512, 2048, 4)


def test_the_kernels_collective_wins_over_the_ops_name():
    """The kernel's family named the collective: the op's name (here none) does not undo it."""
    f = facts_from_custom_op(op(name="c10d::foo", dims=((512,),)), "all_reduce", {}, 4)
    assert (f["collective"], f["in"], f["out"]) == ("all_reduce", 512, 512)


# ------------------------------------------------------------------ a number is not a group's name


def _gather(types, concrete):
    return CommOp("_c10d_functional::all_gather_into_tensor", 1, 0, 10,
                  {"Input Dims": [[1024], [], []], "Input type": types, "Concrete Inputs": concrete})


def test_the_group_name_argument_wins_over_a_group_size_that_matches_another_group():
    """all_gather_into_tensor(input, group_size, group_name): torch names groups "0", "1", ...,
    so group_size 4 matches group "4" (2 ranks). The group is the str argument '1' (4 ranks):
    1024 floats in, 4096 out. Until 2026-12-05 it was group '4': 2048 out."""
    f = facts_from_custom_op(_gather(["float", "Scalar", "str"], ["", "4", "'1'"]), None,
                             {"0": 8, "1": 4, "4": 2}, 8)
    assert (f["pg"], f["group"], f["in"], f["out"]) == ("1", 4, 1024, 4096)
    assert f["group_from"] == "the op's group '1' (distributedInfo)"
    # unquoted, the str-typed argument still wins
    f = facts_from_custom_op(_gather(["float", "Scalar", "str"], ["", "4", "1"]), None, {"1": 4, "4": 2}, 8)
    assert (f["pg"], f["group"], f["out"]) == ("1", 4, 4096)


@pytest.mark.parametrize("scalar", ["Scalar", "int", "SymInt"])
def test_a_number_typed_as_one_never_names_the_group(scalar):
    """Only the group size matches a group's name, and it is typed a number: no group is
    named, so the world is inferred (8 ranks: 8192 out), not group "4"'s 2 ranks."""
    f = facts_from_custom_op(_gather(["float", scalar, "str"], ["", "4", ""]), None, {"0": 8, "4": 2}, 8)
    assert (f["pg"], f["group"], f["out"]) == ("", 8, 8192)
    assert f["group_from"].startswith("inferred: the world (8 ranks)")


def test_without_types_a_bare_match_still_names_the_group():
    """A trace that records no types: a bare value that is a group's name is all there is."""
    f = facts_from_custom_op(_gather([], ["", "tp:0"]), None, {"tp:0": 2}, 8)
    assert (f["pg"], f["group"]) == ("tp:0", 2)


@pytest.mark.parametrize("quoted", ["'1'", '"1"'])
def test_a_quoted_group_name_wins_where_no_type_is_recorded(quoted):
    """Types recorded for the tensor only: the quoted '1' is a string argument, the bare 4
    before it may be a number: group '1' (4 ranks), not group '4' (2 ranks)."""
    f = facts_from_custom_op(_gather(["float"], ["", "4", quoted]), None, {"1": 4, "4": 2}, 8)
    assert (f["pg"], f["group"], f["out"]) == ("1", 4, 4096)


def test_a_str_typed_group_name_wins_over_an_untyped_bare_match_before_it():
    f = facts_from_custom_op(_gather(["float", "", "str"], ["", "4", "1"]), None, {"1": 4, "4": 2}, 8)
    assert (f["pg"], f["group"], f["out"]) == ("1", 4, 4096)
    # with neither typed str nor quoted, the first bare match that is not typed a number
    f = facts_from_custom_op(_gather(["float", "", ""], ["", "4", "1"]), None, {"1": 4, "4": 2}, 8)
    assert (f["pg"], f["group"], f["out"]) == ("4", 2, 2048)


def test_a_bare_match_past_the_recorded_types_still_names_the_group():
    """One type recorded (the tensor's), the group's name next: no type says it is a number."""
    f = facts_from_custom_op(_gather(["float"], ["", "tp:0"]), None, {"tp:0": 2}, 8)
    assert (f["pg"], f["group"], f["out"]) == ("tp:0", 2, 2048)
