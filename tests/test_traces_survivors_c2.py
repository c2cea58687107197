"""Survivors (round c2) of mutation testing in linkroof/roofline/traces.py: a custom
(non-NCCL) collective kernel inside a c10d op whose output the shapes leave unknown,
merge_facts' group and notes, ranks_of's bound on a rank written as text, a step that
is busy all its window, a one-rank group's collective in the trace's totals, and work
at negative timestamps (a trace whose clock was shifted before its first event).
Each test states one rule, its expected values worked out by hand."""

import pytest

from linkroof.roofline.timeline import Activity
from linkroof.roofline.traces import (CommOp, collective_call, facts_from_c10d, merge_facts, ranks_of,
                                      step_summaries, trace_totals)

GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32"
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"


def kernel(name, start, end, device=0, stream=7):
    return Activity("kernel", name, device, stream, start, end)


def custom_in(op_name, args, *, groups=None, world=4, name="multimem_all_gather_kernel"):
    """A custom collective kernel (2000-4000 ns on device 0) launched at 1000 ns on
    thread 1, inside one host op open from 0 to 10000 ns."""
    a = kernel(name, 2000, 4000)
    ops = [CommOp(op_name, 1, 0, 10000, args)]
    return collective_call(a, {}, (1, 1000), ops, groups or {}, rank=0, world=world)


BF16 = ["c10::BFloat16", "c10::BFloat16"]


# ------------------------------------------------------------------ a custom kernel inside a c10d op


def test_a_custom_all_gather_whose_c10d_op_recorded_only_its_input_takes_the_output_from_the_world():
    """c10d::_allgather_base_ records (output, input); here the output's dims are empty
    ([[], [1024]]) and the trace has no process group, so only the world (4) gives a
    group: 1024 bf16 elements in, 4 x 1024 = 4096 out, 4096 x 2 = 8192 bytes (an
    all-gather's whole output)."""
    c = custom_in("c10d::_allgather_base_", {"Input Dims": [[], [1024]], "Input type": BF16})
    assert (c.collective, c.dtype, c.in_nelems, c.out_nelems, c.size_bytes) == ("all_gather", "bf16", 1024, 4096,
                                                                                   8192)
    assert c.group_size == 4
    assert c.mechanism == "symmetric memory, NVLS multicast (multimem): not NCCL"


def test_a_custom_reduce_scatter_whose_c10d_op_recorded_only_its_input_is_one_group_th_out():
    """A symmetric-memory kernel naming no collective inside c10d::_reduce_scatter_base_
    ([[], [4096]]: the output's dims empty): a reduce-scatter (the op's name), 4096 in,
    4096 / 4 = 1024 out (the world's 4 ranks), sized by its input: 8192 bytes."""
    c = custom_in("c10d::_reduce_scatter_base_", {"Input Dims": [[], [4096]], "Input type": BF16},
                  name="symm_mem_reduce_scatter_kernel")
    assert (c.collective, c.in_nelems, c.out_nelems, c.size_bytes, c.group_size) == ("reduce_scatter", 4096, 1024,
                                                                                       8192, 4)


def test_a_custom_all_gather_whose_c10d_op_recorded_no_shapes_leaves_the_size_unknown():
    """No `Input Dims` at all (record_shapes off): neither tensor is known, so the output
    is not made up from the group either; elements and bytes stay unknown, the group is
    still the world's 4."""
    c = custom_in("c10d::_allgather_base_", {"Input type": BF16})
    assert (c.in_nelems, c.out_nelems, c.size_bytes, c.group_size) == (None, None, None, 4)
    assert any(n.endswith("size unknown") for n in c.notes)


def test_the_c10d_ops_shapes_give_the_group_where_the_custom_op_reading_has_none():
    """No world size and no process group: the custom op's reading knows no group, but
    c10d::_allgather_base_'s shapes ([[4096], [1024]]: output, input) give 4096 / 1024 =
    4, said derived from output over input; 1024 fp32 in, 4096 out, 16384 bytes."""
    c = custom_in("c10d::_allgather_base_", {"Input Dims": [[4096], [1024]], "Input type": ["float", "float"]},
                  world=None)
    assert (c.group_size, c.group_from) == (4, "derived (output / input elements)")
    assert (c.in_nelems, c.out_nelems, c.size_bytes) == (1024, 4096, 16384)


def test_an_op_outside_c10d_is_read_as_a_custom_op_even_when_named_like_a_c10d_op():
    """symm_mem::reduce_scatter_ shares its base name with c10d's reduce_scatter_ but is
    not a c10d op: its first tensor is its input (4096), its output one group-th of it
    (4096 / 4 = 1024), not c10d's (output, input) order (which would read 4096 as the
    output and leave the input unknown)."""
    c = custom_in("symm_mem::reduce_scatter_", {"Input Dims": [[4096]], "Input type": ["c10::BFloat16"]},
                  name="symm_mem_reduce_scatter_kernel")
    assert (c.collective, c.in_nelems, c.out_nelems, c.size_bytes) == ("reduce_scatter", 4096, 1024, 8192)
    assert c.source == "launching op (symm_mem::reduce_scatter_, recorded shapes)"


def test_a_c10d_op_with_a_second_namespace_is_not_read_in_c10d_tensor_order():
    """c10d::ns::allgather_ is not c10d's allgather_ (only one namespace is stripped, as
    facts_from_c10d does): the custom op's reading holds, its first tensor the input
    (1024), the output the world's 4 times it (4096), 8192 bf16 bytes; not the c10d
    reading of an unknown op (input = output = 1024)."""
    c = custom_in("c10d::ns::allgather_", {"Input Dims": [[1024]], "Input type": ["c10::BFloat16"]})
    assert (c.collective, c.in_nelems, c.out_nelems, c.size_bytes, c.group_size) == ("all_gather", 1024, 4096, 8192,
                                                                                       4)


def test_an_nvshmem_op_named_without_a_namespace_is_read_whole():
    """nvshmem's host ops have no '::' (nvshmem_all_gather): the op is read as a custom
    op (the collective from its whole name), never an error: 512 bf16 in, 4 x 512 out."""
    c = custom_in("nvshmem_all_gather", {"Input Dims": [[512]], "Input type": ["c10::BFloat16"]},
                  name="nvshmemi_collective_kernel")
    assert (c.collective, c.in_nelems, c.out_nelems, c.size_bytes, c.group_size) == ("all_gather", 512, 2048, 4096, 4)
    assert c.mechanism == "NVSHMEM: not NCCL"


def test_no_note_says_the_size_is_unknown_once_the_c10d_op_sized_the_call():
    """The custom op reading saw no first tensor ([[], [1024]]: the output's dims empty)
    and noted 'size unknown'; the c10d op's shapes then gave 1024 in, 4096 out, 8192
    bytes. A note may not contradict the call's facts: none says the size is unknown."""
    c = custom_in("c10d::_allgather_base_", {"Input Dims": [[], [1024]], "Input type": BF16})
    assert c.size_bytes == 8192
    assert not [n for n in c.notes if n.endswith("size unknown")]


def test_no_note_says_the_group_is_unknown_once_the_c10d_op_gave_it():
    """No world size: the custom op reading noted 'group size unknown'; the c10d op's
    shapes then gave the group (4096 / 1024 = 4). No note says the group is unknown."""
    c = custom_in("c10d::_allgather_base_", {"Input Dims": [[4096], [1024]], "Input type": ["float", "float"]},
                  world=None)
    assert c.group_size == 4
    assert not [n for n in c.notes if n.startswith("group size unknown")]


# ------------------------------------------------------------------ merge_facts


def test_merge_derives_a_reduce_scatters_group_from_input_over_output():
    """An nccl: range of a reduce-scatter with 4096 inputs, completed by a c10d op's
    output of 1024 and no group anywhere: the group is 4096 / 1024 = 4, said derived
    from input over output (a reduce-scatter's order), and the 'group size unknown'
    note goes."""
    inner = {"collective": "reduce_scatter", "dtype": ("bf16", 2), "in": 4096, "out": None, "group": None,
             "group_from": "unknown", "pg": "", "seq": None, "notes": ["group size unknown: no pg_config"]}
    outer = {"collective": "reduce_scatter", "dtype": None, "in": None, "out": 1024, "group": None,
             "group_from": "unknown", "pg": "", "seq": None, "notes": []}
    m = merge_facts(inner, outer)
    assert (m["group"], m["group_from"], m["in"], m["out"]) == (4, "derived (input / output elements)", 4096, 1024)
    assert m["notes"] == []


RANGE_NO_SHAPES = "nccl:_reduce_scatter_base recorded no input shapes (record_shapes off, or an empty TensorList): " \
                  "size unknown"


def _range_without_shapes(coll):
    return {"collective": coll, "dtype": None, "in": None, "out": None, "group": 4, "group_from": "distributedInfo",
            "pg": "", "seq": None, "notes": [RANGE_NO_SHAPES]}


def test_merge_drops_the_size_unknown_note_once_the_input_is_known():
    """The range recorded no shapes; the enclosing c10d::_reduce_scatter_base_ recorded
    its input (4096) but not its output ([[], [4096]]): the size is known (a
    reduce-scatter is sized by its input), so the range's 'size unknown' note goes."""
    outer = facts_from_c10d(CommOp("c10d::_reduce_scatter_base_", 1, 0, 100,
                                   {"Input Dims": [[], [4096]], "Input type": BF16}), {})
    assert (outer["in"], outer["out"]) == (4096, None)
    m = merge_facts(_range_without_shapes("reduce_scatter"), outer)
    assert (m["in"], m["out"], m["dtype"]) == (4096, None, ("bf16", 2))
    assert m["notes"] == []


def test_merge_drops_the_size_unknown_note_once_the_output_is_known():
    """The range recorded no shapes; the enclosing c10d::_allgather_base_ recorded its
    output (4096) but not its input ([[4096], []]): an all-gather is sized by its
    output, so the range's 'size unknown' note goes."""
    outer = facts_from_c10d(CommOp("c10d::_allgather_base_", 1, 0, 100,
                                   {"Input Dims": [[4096], []], "Input type": BF16}), {})
    assert (outer["in"], outer["out"]) == (None, 4096)
    m = merge_facts(_range_without_shapes("all_gather"), outer)
    assert (m["in"], m["out"]) == (None, 4096)
    assert m["notes"] == []


def test_merge_keeps_the_size_unknown_note_where_no_shape_was_recorded():
    """Neither the range nor the op recorded a shape: the note stays."""
    outer = facts_from_c10d(CommOp("c10d::_allgather_base_", 1, 0, 100, {"Input type": BF16}), {})
    m = merge_facts(_range_without_shapes("all_gather"), outer)
    assert RANGE_NO_SHAPES in m["notes"]


# ------------------------------------------------------------------ ranks_of


@pytest.mark.parametrize("text,ranks", [
    ("[0, 00000001]", (0, 1)),  # eight characters: read, zero-padded or not
    ("[0, 16777215]", (0, 16777215)),  # the largest rank, 2**24 - 1 (eight digits)
    ("[0, 000000001]", ()),  # nine characters: longer than any rank's text, the list is not read
    ("[0, 016777216]", ()),
])
def test_a_rank_written_as_text_is_at_most_eight_characters(text, ranks):
    """A rank as text is at most 8 characters (2**24 - 1 has 8 digits); a longer one,
    even zero-padded to a small number, makes the whole list unreadable: ()."""
    assert ranks_of(text) == ranks


# ------------------------------------------------------------------ step_summaries


def test_a_step_busy_its_whole_window_has_no_idle_time():
    """One GEMM from 0 to 1000 ns in a step whose window is 0-1000 ns: busy 1 us, idle
    exactly 0 (not a nanosecond)."""
    g = kernel(GEMM, 0, 1000)
    (s,) = step_summaries(0, [("step 0", 0, 1000)], [g], [0], set())
    assert (s.busy_s, s.idle_s) == (pytest.approx(1e-6), 0.0)
    assert s.idle_s == 0.0


def test_a_step_with_a_gap_counts_the_gap_idle():
    """Two GEMMs 0-300 and 700-1000 ns in a 0-1000 ns window: 600 ns busy, 400 ns idle."""
    acts = [kernel(GEMM, 0, 300), kernel(GEMM, 700, 1000)]
    (s,) = step_summaries(0, [("step 0", 0, 1000)], acts, [0, 0], set())
    assert (s.busy_s, s.idle_s) == (pytest.approx(600e-9), pytest.approx(400e-9))


# ------------------------------------------------------------------ trace_totals


def test_a_one_rank_groups_collective_is_no_communication_in_the_trace_totals():
    """A GEMM (0-100 ns) and an all-reduce kernel of a one-rank group (200-500 ns, a
    local copy: memory): the trace is busy 400 ns, has no communication and so none
    exposed, and counts the one-rank group's call among its collectives (1), as
    step_summaries does."""
    gemm, local = kernel(GEMM, 0, 100), kernel(ALLREDUCE, 200, 500, stream=20)
    t = trace_totals([gemm, local], set(), {id(local)})
    assert (t.busy_s, t.communication_s, t.exposed_s, t.collectives) == (pytest.approx(400e-9), 0.0, 0.0, 1)
    (s,) = step_summaries(0, [("step 0", 0, 500)], [gemm, local], [0, 0], set(), {id(local)})
    assert (s.communication_s, s.exposed_s, s.collectives) == (0.0, 0.0, 1)
    assert s.class_s == {"compute": pytest.approx(100e-9), "memory": pytest.approx(300e-9)}


def test_a_real_collective_beside_a_one_rank_groups_is_the_only_communication():
    """An all-reduce of a real group (0-300 ns, nothing beside it: all exposed) and a
    one-rank group's (400-500 ns): 300 ns communication, 300 ns exposed, 2 collectives."""
    ar, local = kernel(ALLREDUCE, 0, 300, stream=20), kernel(ALLREDUCE, 400, 500, stream=20)
    t = trace_totals([ar, local], {id(ar)}, {id(local)})
    assert (t.busy_s, t.communication_s, t.exposed_s, t.collectives) == (
        pytest.approx(400e-9), pytest.approx(300e-9), pytest.approx(300e-9), 2)


# ------------------------------------------------------------------ negative timestamps


def test_exposure_is_measured_at_negative_timestamps_too():
    """A trace whose clock puts work before its zero: a GEMM from -300 to -100 ns and an
    all-reduce from -200 to 100 ns on the same device. The GEMM hides the all-reduce's
    first 100 ns; the other 200 ns (-100 to 100) are exposed. Busy: -300 to 100, 400 ns;
    communication 300 ns."""
    gemm, ar = kernel(GEMM, -300, -100), kernel(ALLREDUCE, -200, 100, stream=20)
    t = trace_totals([gemm, ar], {id(ar)})
    assert (t.busy_s, t.communication_s, t.exposed_s, t.collectives) == (
        pytest.approx(400e-9), pytest.approx(300e-9), pytest.approx(200e-9), 1)
    (s,) = step_summaries(0, [("step 0", -300, 100)], [gemm, ar], [0, 0], {id(ar)})
    assert (s.communication_s, s.overlapped_s, s.exposed_s) == (
        pytest.approx(300e-9), pytest.approx(100e-9), pytest.approx(200e-9))


def test_work_ending_before_zero_hides_no_later_communication():
    """A GEMM from -500 to -400 ns and an all-reduce from -100 to 200 ns: no overlap, the
    whole 300 ns of the all-reduce is exposed."""
    gemm, ar = kernel(GEMM, -500, -400), kernel(ALLREDUCE, -100, 200, stream=20)
    t = trace_totals([gemm, ar], {id(ar)})
    assert t.exposed_s == pytest.approx(300e-9)
