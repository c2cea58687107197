"""Survivors of mutation testing in linkroof/roofline/traces.py's collective_call, _call,
is_collective_kernel, collective_name and c10_dtype: each test builds one collective
kernel (an Activity), its args, its launch (thread, time) and the host ops open around
it by hand, and pins the whole CollectiveCall a user reads (collective, dtype, elements,
bytes, group and where it came from, source, notes, mechanism), so that a mutant that
reads another tier, another op or another default says something else."""

import pytest

from linkroof.roofline.timeline import Activity
from linkroof.roofline.traces import (CollectiveCall, CommOp, CommOps, c10_dtype, collective_call, collective_name,
                                      is_collective_kernel)

TID = 7  # the launching thread
LAUNCH = (TID, 500)  # the runtime launch: thread 7 at t = 500 ns

MULTIMEM = "symmetric memory, NVLS multicast (multimem): not NCCL"
NO_OP_NCCL = "no collective facts on the kernel and no launching op found: size and group unknown"


def kernel(name, device=1, stream=13, start=1000, end=3000, kind="kernel"):
    return Activity(kind, name, device, stream, start, end)


def shapes(name, start, end, dims, types=("float",), **more):
    """A host op with record_shapes' `Input Dims` and `Input type`."""
    return CommOp(name, TID, start, end, {"Input Dims": dims, "Input type": list(types), **more})


# ------------------------------------------------------------------ the kernel's own args


def test_kernel_args_give_elements_both_ways_on_the_kernels_stream():
    """An NCCL all-gather kernel whose args say 1024 elements in, 4096 out, bf16, group 4:
    the call holds exactly those, its bytes the whole output (4096 x 2), on the kernel's
    device and stream."""
    a = kernel("ncclDevKernel_AllGather_RING_LL", device=3, stream=21)
    args = {"Collective name": "_allgather_base", "dtype": "BFloat16", "In msg nelems": 1024,
            "Out msg nelems": 4096, "Group size": 4, "Process Group Name": "0", "Seq": 11}
    c = collective_call(a, args, LAUNCH, [], {}, rank=2)
    assert c == CollectiveCall(2, "ncclDevKernel_AllGather_RING_LL", 3, 21, 1000, 3000, "all_gather", "bf16", 1024,
                               4096, 8192, 4, "kernel args", "0", 11, "kernel args", (), (), "NCCL")


def test_reduce_scatter_bytes_are_its_input_and_its_output_is_kept():
    """A reduce-scatter's args: 4096 elements in, 1024 out, fp32: 16384 bytes (the whole
    input), and the output's 1024 elements are what the call says it wrote."""
    a = kernel("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL")
    args = {"Collective name": "reduce_scatter", "dtype": "Float", "In msg nelems": 4096, "Out msg nelems": 1024,
            "Group size": 4}
    c = collective_call(a, args, None, [], {}, rank=0)
    assert (c.in_nelems, c.out_nelems, c.size_bytes, c.dtype, c.stream) == (4096, 1024, 16384, "fp32", 13)


def test_collective_name_on_a_custom_named_kernel_wins_over_its_name():
    """A kernel whose name looks like a multimem all-reduce but whose args name the
    collective (record_param_comms wrapped it): the args are the facts, and NCCL moved it."""
    a = kernel("multimem_all_reduce_kernel")
    args = {"Collective name": "allreduce", "dtype": "Float", "In msg nelems": 256, "Out msg nelems": 256,
            "Group size": 8}
    c = collective_call(a, args, None, [], {}, rank=0)
    assert (c.collective, c.dtype, c.size_bytes, c.group_size, c.group_from) == ("all_reduce", "fp32", 1024, 8,
                                                                                 "kernel args")
    assert (c.source, c.mechanism, c.notes) == ("kernel args", "NCCL", ())


# ------------------------------------------------------------------ is_collective_kernel


def test_a_kernel_whose_args_name_a_collective_is_one_whatever_its_name():
    """A kernel not named after NCCL (an RCCL or vendor kernel) is a collective when its args
    carry `Collective name`; without them it is not."""
    a = kernel("rcclKernel_Generic_1")
    assert is_collective_kernel(a, {"Collective name": "allreduce"}) is True
    assert is_collective_kernel(a, {}) is False
    assert is_collective_kernel(a, {"Collective name": ""}) is False


def test_nccl_and_custom_kernels_are_collectives_copies_are_not():
    """An NCCL kernel named ncclDevKernel_AllGather_RING_LL and a multimem all-reduce kernel are
    collectives with no args; a copy is never one, even with args that name a collective."""
    assert is_collective_kernel(kernel("ncclDevKernel_AllGather_RING_LL"), {}) is True
    assert is_collective_kernel(kernel("multimem_all_reduce_kernel"), {}) is True
    assert is_collective_kernel(kernel("ncclCopy", kind="memcpy"), {"Collective name": "allreduce"}) is False


# ------------------------------------------------------------------ custom (not NCCL) collectives


def test_a_copy_named_like_a_custom_collective_is_not_one():
    """Only a kernel is read as a custom collective's: a memcpy record whose name matches
    symm_mem is taken down NCCL's tiers (its name names nothing) and keeps mechanism NCCL."""
    a = kernel("symm_mem staging copy", kind="memcpy")
    c = collective_call(a, {}, None, [], {}, rank=0)
    assert c.mechanism == "NCCL"
    assert (c.collective, c.source, c.group_from) == (None, "none", "unknown")
    assert c.notes == (NO_OP_NCCL, "the kernel's name (symm_mem staging copy) does not name its collective")


def test_a_custom_kernel_without_a_launch_is_known_by_its_name_only():
    """A multimem all-reduce kernel whose launch was not recorded: an all-reduce, of unknown
    size, type and group, process group and sequence not known, said so."""
    a = kernel("multimem_all_reduce_kernel")
    c = collective_call(a, {}, None, [], {"0": 4}, rank=1, world=4)
    assert c == CollectiveCall(1, "multimem_all_reduce_kernel", 1, 13, 1000, 3000, "all_reduce", None, None, None,
                               None, None, "unknown", "", None, "kernel name",
                               (f"{MULTIMEM}: no launching op found, so size and group unknown",
                                "data type unknown: bytes unknown"), (), MULTIMEM)


def test_a_custom_kernel_with_a_launch_but_no_op_open_is_known_by_its_name_only():
    """The launch is known but no host op is open on its thread then: the same name-only call,
    its group unknown and no process group."""
    a = kernel("cross_device_reduce_2stage<half, 8>")
    ops = [shapes("vllm::all_reduce", 600, 900, [[1024]], ("c10::Half",))]  # opens after the launch
    c = collective_call(a, {}, LAUNCH, ops, {}, rank=0, world=2)
    assert (c.collective, c.size_bytes, c.group_size, c.group_from, c.process_group, c.source) == (
        "all_reduce", None, None, "unknown", "", "kernel name")
    assert c.mechanism == "custom all-reduce (vLLM / SGLang, peer memory): not NCCL"


def test_a_c10d_op_around_a_custom_kernel_sizes_it():
    """A multimem all-reduce launched inside c10d::allreduce_ (1024 fp32 elements): the kernel's
    name gives the collective (the c10d op is no custom op), the op the size, the world of 4
    the group (inferred, said so)."""
    a = kernel("multimem_all_reduce_kernel")
    ops = [shapes("c10d::allreduce_", 100, 900, [[1024]], ("float",))]
    c = collective_call(a, {}, LAUNCH, ops, {}, rank=0, world=4)
    assert (c.collective, c.dtype, c.in_nelems, c.out_nelems, c.size_bytes) == ("all_reduce", "fp32", 1024, 1024,
                                                                                4096)
    assert (c.group_size, c.group_from) == (4, "inferred: the world (4 ranks); c10d::allreduce_ records no group size")
    assert c.source == "launching op (c10d::allreduce_, recorded shapes)"
    assert (c.mechanism, c.notes) == (MULTIMEM, ())


def test_a_custom_op_around_a_custom_kernel_without_a_world_leaves_the_group_unknown():
    """No world size given: the group of a vllm::all_reduce is unknown and the note says why."""
    a = kernel("cross_device_reduce_2stage<half, 8>")
    ops = [shapes("vllm::all_reduce", 100, 900, [[2048]], ("c10::Half",))]
    c = collective_call(a, {}, LAUNCH, ops, {}, rank=0)
    assert (c.size_bytes, c.group_size, c.group_from) == (4096, None, "unknown")
    assert c.notes == ("group size unknown: vllm::all_reduce records none and the trace gives no world size",)


def test_the_custom_op_nearest_the_launch_is_the_one_that_ran_the_kernel():
    """Two host ops open at the launch: a long c10d::allreduce_ (0-1000 ns, 4096 elements)
    that began first, and a short vllm::all_reduce inside it (400-700 ns, 1024 fp16 elements):
    the shorter one, the innermost, launched the kernel and gives its size."""
    a = kernel("cross_device_reduce_2stage<half, 8>")
    ops = [shapes("c10d::allreduce_", 0, 1000, [[4096]], ("float",)),
           shapes("vllm::all_reduce", 400, 700, [[1024]], ("c10::Half",))]
    for held in (ops, CommOps(ops)):  # a plain list, and the trace's indexed ops
        c = collective_call(a, {}, LAUNCH, held, {}, rank=0, world=2)
        assert c.source == "launching op (vllm::all_reduce, recorded shapes)"
        assert (c.dtype, c.in_nelems, c.size_bytes, c.group_size) == ("fp16", 1024, 2048, 2)


# ------------------------------------------------------------------ the launching op: c10d shapes


def test_a_c10d_op_alone_is_the_source_and_not_merged_with_itself():
    """An NCCL all-reduce kernel with no args, launched inside c10d::allreduce_ alone (512 fp32
    elements): the op's shapes are the facts, named once in the source."""
    a = kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL")
    ops = [shapes("c10d::allreduce_", 100, 900, [[512]], ("float",))]
    c = collective_call(a, {}, LAUNCH, ops, {"0": 2}, rank=0)
    assert c.source == "launching op (c10d::allreduce_, recorded shapes)"
    assert (c.collective, c.dtype, c.in_nelems, c.out_nelems, c.size_bytes) == ("all_reduce", "fp32", 512, 512,
                                                                                2048)
    assert (c.group_size, c.group_from, c.notes) == (2, "distributedInfo (the one process group)", ())


def test_an_nccl_range_is_completed_by_the_innermost_c10d_op_around_it():
    """ProcessGroupNCCL's range nccl:_all_gather_base (the local shard, 1024 elements) inside
    c10d::_allgather_base_ (out 4096, in 1024), itself inside a longer c10d::allgather_ that
    began first (out 8192, in 1024): the innermost c10d op completes the range, so the output
    is 4096 elements and the group 4, derived from that op's ratio."""
    a = kernel("ncclDevKernel_AllGather_RING_LL")
    ops = [shapes("c10d::allgather_", 0, 1000, [[8192], [1024]], ("float", "float")),
           shapes("c10d::_allgather_base_", 400, 700, [[4096], [1024]], ("float", "float")),
           shapes("nccl:_all_gather_base", 450, 650, [[1024]], ("float",))]
    for held in (ops, CommOps(ops)):
        c = collective_call(a, {}, LAUNCH, held, {}, rank=0)
        assert c.source == "launching op (nccl:_all_gather_base, recorded shapes) and c10d::_allgather_base_"
        assert (c.collective, c.in_nelems, c.out_nelems, c.size_bytes) == ("all_gather", 1024, 4096, 16384)
        assert (c.group_size, c.group_from) == (4, "derived (output / input elements) (the enclosing c10d op)")


# ------------------------------------------------------------------ the kernel's name only


def test_a_named_nccl_kernel_without_facts_says_size_and_type_unknown():
    """An NCCL kernel named ncclDevKernel_AllGather_RING_LL with no args and no launching op
    is an all-gather of unknown size, type and group; the notes say exactly that, and not
    that the name names nothing."""
    a = kernel("ncclDevKernel_AllGather_RING_LL")
    c = collective_call(a, {}, None, [], {}, rank=3)
    assert c == CollectiveCall(3, "ncclDevKernel_AllGather_RING_LL", 1, 13, 1000, 3000, "all_gather", None, None,
                               None, None, None, "unknown", "", None, "kernel name",
                               (NO_OP_NCCL, "data type unknown: bytes unknown"), (), "NCCL")


def test_a_generic_nccl_kernel_without_facts_has_no_source():
    """A generic NCCL kernel (ncclDevKernel_Generic_4) with no args and no op names no
    collective: its source is none and the note says why."""
    a = kernel("ncclDevKernel_Generic_4")
    c = collective_call(a, {}, LAUNCH, [], {}, rank=0)
    assert (c.collective, c.source, c.group_from, c.process_group) == (None, "none", "unknown", "")
    assert c.notes == (NO_OP_NCCL, "the kernel's name (ncclDevKernel_Generic_4) does not name its collective: a "
                       "generic kernel (NCCL 2.19 or later, or RCCL) runs any collective, and this one's launching "
                       "op was not recorded")


# ------------------------------------------------------------------ collective_name, c10_dtype


@pytest.mark.parametrize("raw", ["allreduceX", "Xallgather", "XX_broadcast_XX", "c10d::reduce_scatterX"])
def test_a_collective_name_with_extra_letters_is_no_collective(raw):
    """Only underscores around a name are dropped: 'allreduceX' is not an all-reduce."""
    assert collective_name(raw) is None


@pytest.mark.parametrize("raw,coll", [("_allgather_base", "all_gather"), ("c10d::allreduce_coalesced_", "all_reduce"),
                                      ("nccl:_reduce_scatter_base", "reduce_scatter"), ("__broadcast__", "broadcast")])
def test_a_collective_name_drops_its_underscores(raw, coll):
    """'_allgather_base' is an all-gather, 'c10d::allreduce_coalesced_' an all-reduce."""
    assert collective_name(raw) == coll


@pytest.mark.parametrize("name,dt", [("Float", ("fp32", 4)), ("c10::BFloat16", ("bf16", 2)), ("long int", ("int64", 8)),
                                     ("", None), ("Tensor", None), ("TensorList", None), (None, None), (4, None)])
def test_c10_dtype(name, dt):
    """A c10 type name or a record_shapes type gives linkroof's dtype and bytes; others none."""
    assert c10_dtype(name) == dt
