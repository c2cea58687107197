"""nccl-tests' per-iteration JSON (`-I 1 -J`, writePerIterReport in util.cu), read by
parse_nccl_tests_iterations: which per-iteration objects become calls (one per size and
placement, in place said), what each call carries (source, host, communicator, result
index, data type, timing, percentiles, every iteration, each process's row, skipped
iterations), the defaults for fields a writer may leave out, the boundaries on times
and sizes, and the one-line refusals, each naming the file and the place in it."""

import json
import re

import pytest

from linkroof.readers import telemetry as T

PATH = "run7/all_reduce.json"
PIB = 1 << 50
DAY_US = 86_400e6


def side(size, t_us):
    """One placement's row as nccl-tests -J prints it for a 2-rank all-reduce: algbw =
    size / time, busbw = algbw x 2(n-1)/n = algbw; six decimals."""
    bw = round(size / t_us / 1e3, 6)
    return {"time": t_us, "alg_bw": bw, "bus_bw": bw, "nwrong": 0}


def per_iter(times, rows=None, skipped=0, **drop):
    """The per-iteration object: percentiles of `times` (the slowest process per
    iteration), the times, each process's row. `drop=True` on a key leaves it out."""
    s = sorted(times)
    n = len(s)
    obj = {"skipped_iterations": skipped, "min_us": s[0], "max_us": s[-1], "avg_us": sum(s) / n,
           "p50_us": s[n // 2], "p95_us": s[min(n - 1, (95 * n) // 100)], "p99_us": s[min(n - 1, (99 * n) // 100)],
           "stdev_us": 0.0, "cv_pct": 0.0, "times_us": list(times),
           "per_process_max_times_us": rows if rows is not None else [list(times), [t * 0.9 for t in times]]}
    for k, gone in drop.items():
        if gone:
            obj.pop(k)
    return obj


OUT_TIMES = [20.0, 21.0, 22.0, 23.0, 30.0]
IN_TIMES = [40.0, 41.0, 42.0, 43.0, 50.0]


def result(size, out_t=20.0, in_t=40.0, out_iter=True, in_iter=True):
    r = {"size": size, "count": size // 4, "type": "float", "redop": "sum", "root": -1,
         "out_of_place": side(size, out_t), "in_place": side(size, in_t)}
    if out_iter:
        r["out_of_place_per_iter"] = per_iter(OUT_TIMES) if out_iter is True else out_iter
    if in_iter:
        r["in_place_per_iter"] = per_iter(IN_TIMES) if in_iter is True else in_iter
    return r


def doc(results=None, devices=None):
    """A 2-rank all_reduce_perf -J file with per-iteration timing (two processes, one
    GPU each, on nodeA and nodeB)."""
    if devices is None:
        devices = [{"rank": 0, "group": 0, "pid": 11, "hostname": "nodeA", "device": 0, "device_info": "NVIDIA H200"},
                   {"rank": 1, "group": 0, "pid": 12, "hostname": "nodeB", "device": 1, "device_info": "NVIDIA H200"}]
    return {"version": 3, "args": ["./all_reduce_perf", "-b", "1M", "-e", "4M", "-I", "1", "-J", "x.json"],
            "env": ["NCCL_VERSION=2.28.3-1"], "nccl_version": 22809,
            "config": {"nthreads": 1, "ngpus": 1 if devices else 2, "iterations": 5, "graph": 0,
                       "per_iter_timing": "true", "devices": devices},
            "results": results if results is not None else [result(1 << 20), result(4 << 20)]}


def read(d, path=PATH):
    return T.parse_nccl_tests_iterations(json.dumps(d), path)


def refusal(d_or_text, path=PATH):
    text = d_or_text if isinstance(d_or_text, str) else json.dumps(d_or_text)
    with pytest.raises(T.TelemetryError) as e:
        T.parse_nccl_tests_iterations(text, path)
    return str(e.value)


def calls_by(t):
    return {(c.size_bytes, "in place" in c.notes): c for c in t.calls}


# ------------------------------------------------------------------ what each call carries


def test_each_size_gives_one_out_of_place_and_one_in_place_call():
    """Two sizes x two placements: four calls; the in-place one says "in place", the
    out-of-place one says nothing, and each carries its own placement's iterations."""
    t = read(doc())
    assert len(t.calls) == 4
    by = calls_by(t)
    assert set(by) == {(1 << 20, False), (1 << 20, True), (4 << 20, False), (4 << 20, True)}
    for size in (1 << 20, 4 << 20):
        out, inp = by[(size, False)], by[(size, True)]
        assert out.notes == () and inp.notes == ("in place",)
        assert out.stats["times_us"] == OUT_TIMES and inp.stats["times_us"] == IN_TIMES
        # the call's time is the median iteration (p50)
        assert out.time_s == pytest.approx(22e-6) and inp.time_s == pytest.approx(42e-6)


def test_a_call_names_its_source_communicator_result_and_timing():
    """Source "nccl-tests -I 1", communicator "nccl-tests", sequence = the index of its
    result in the file, nccl-tests' data type (float is fp32), the collective and its
    ranks, no recorded busbw, and how it was timed (CUDA events, slowest process)."""
    t = read(doc())
    assert t.source == "nccl-tests -I 1" and t.path == PATH
    for c in t.calls:
        assert c.source == "nccl-tests -I 1"
        assert c.comm == "nccl-tests"
        assert c.seq == (0 if c.size_bytes == 1 << 20 else 1)
        assert c.dtype == "fp32"
        assert (c.collective, c.group_size, c.rank) == ("all_reduce", 2, None)
        assert c.recorded_busbw is None
        assert "CUDA events" in c.timing and "slowest process" in c.timing


def test_sequence_counts_every_result_including_size_zero_rows():
    """A size-0 row (nothing moved, not imported) still has its index: the next result's
    calls are numbered by their place in `results`, not by the calls made."""
    t = read(doc([result(0), result(1 << 20)]))
    assert {c.seq for c in t.calls} == {1} and len(t.calls) == 2


def test_the_host_is_the_first_process_hostname():
    """The calls are the slowest process per iteration: the host shown is the first
    process's (nodeA), never the second's."""
    t = read(doc())
    assert {c.host for c in t.calls} == {"nodeA"}


def test_processes_keep_row_host_and_rank_in_file_order():
    t = read(doc())
    assert t.processes == [{"row": 0, "host": "nodeA", "rank": 0}, {"row": 1, "host": "nodeB", "rank": 1}]


def test_a_process_without_hostname_has_an_empty_host():
    d = doc(devices=[{"rank": 0, "device": 0, "device_info": "NVIDIA H200"},
                     {"rank": 1, "hostname": "nodeB", "device": 1, "device_info": "NVIDIA H200"}])
    t = read(d)
    assert t.processes[0]["host"] == "" and t.processes[1]["host"] == "nodeB"
    assert {c.host for c in t.calls} == {""}


def test_a_file_listing_no_devices_is_read_with_no_host():
    """`devices` empty (a writer that lists none): no processes, calls on host "" (not
    a refusal, not a made-up name), and process rows not checked against a count."""
    t = read(doc(devices=[]))
    assert t.processes == [] and len(t.calls) == 4
    assert {c.host for c in t.calls} == {""}


def test_stats_carry_iterations_rows_and_skipped():
    rows = [[20.0, 21.0, 22.0, 23.0, 30.0], [19.0, 20.0, 21.0, 22.0, 29.0]]
    d = doc([result(1 << 20, out_iter=per_iter(OUT_TIMES, rows=rows, skipped=3))])
    c = calls_by(read(d))[(1 << 20, False)]
    assert c.stats["times_us"] == OUT_TIMES
    assert c.stats["per_process_us"] == rows
    assert c.stats["skipped"] == 3
    assert (c.stats["min_us"], c.stats["p50_us"], c.stats["max_us"]) == (20.0, 22.0, 30.0)


# ------------------------------------------------------------------ fields a writer may leave out


def test_missing_times_rows_and_skipped_default_to_none_recorded():
    """A per-iteration object with only the percentiles: no iterations, no process rows,
    0 skipped iterations (not 1, not a refusal)."""
    bare = per_iter(OUT_TIMES, times_us=True, per_process_max_times_us=True, skipped_iterations=True)
    c = calls_by(read(doc([result(1 << 20, out_iter=bare, in_iter=False)])))[(1 << 20, False)]
    assert c.stats["times_us"] == [] and c.stats["per_process_us"] == [] and c.stats["skipped"] == 0
    assert c.time_s == pytest.approx(22e-6)


def test_a_size_with_only_the_in_place_object_still_gives_its_call():
    """No out_of_place_per_iter for a size: that placement is skipped, the in-place one
    (and the later sizes) still read."""
    t = read(doc([result(1 << 20, out_iter=False), result(4 << 20)]))
    assert sorted(calls_by(t)) == [(1 << 20, True), (4 << 20, False), (4 << 20, True)]


# ------------------------------------------------------------------ boundaries


@pytest.mark.parametrize("edge", [0.0, 0.5, DAY_US])
def test_times_from_zero_to_exactly_a_day_are_taken(edge):
    """0 us (under the timer's resolution), a sub-microsecond iteration and exactly one
    day are all times; only negative ones and those over a day are refused."""
    times = [edge, 20.0, 21.0, 22.0, 23.0]
    c = calls_by(read(doc([result(1 << 20, out_iter=per_iter(times))])))[(1 << 20, False)]
    assert edge in c.stats["times_us"] and edge in c.stats["per_process_us"][0]


@pytest.mark.parametrize("bad", [-0.5, DAY_US + 1])
def test_a_negative_time_or_one_over_a_day_is_refused_naming_the_place(bad):
    times = [20.0, 21.0, 22.0, 23.0, 24.0]
    obj = per_iter(times)
    obj["per_process_max_times_us"][1][2] = bad
    msg = refusal(doc([result(1 << 20), result(4 << 20, in_iter=obj)]))
    assert msg.startswith(f"{PATH} results[1].in_place_per_iter: ")
    assert "negative or over a day" in msg


def test_a_message_of_exactly_one_pib_is_taken():
    size = PIB
    c = calls_by(read(doc([result(size, out_t=1e7, in_t=1.1e7)])))[(size, False)]
    assert c.size_bytes == PIB


def test_a_message_over_one_pib_is_refused_naming_the_place_and_size():
    size = PIB + 4
    msg = refusal(doc([result(1 << 20), result(size, out_t=1e7, in_t=1.1e7)]))
    assert msg.startswith(f"{PATH} results[1].out_of_place_per_iter: ")
    assert str(size) in msg and "over 1 PiB" in msg


# ------------------------------------------------------------------ bad fields: one line, naming the place


@pytest.mark.parametrize("where, field, value, name", [
    ("out_of_place_per_iter", "times_us", [20.0, True, 22.0], r"\btimes_us\[\]"),
    ("in_place_per_iter", "per_process_max_times_us", [[1.0, 2.0], [1.0, "2"]], r"\bper_process_max_times_us\[\]\[\]"),
    ("in_place_per_iter", "skipped_iterations", True, r"\bskipped_iterations\b"),
    ("out_of_place_per_iter", "skipped_iterations", 2.5, r"\bskipped_iterations\b"),
])
def test_a_bad_value_is_refused_naming_its_field(where, field, value, name):
    """true is not 1 us, nor one skipped iteration; "2" is not a number: the refusal
    names the file, the object and the field the bad value is in."""
    d = doc()
    d["results"][1][where][field] = value
    msg = refusal(d)
    assert msg.startswith(f"{PATH} results[1].{where}: missing or bad field")
    assert re.search(name, msg), msg


def test_a_missing_percentile_is_refused_naming_the_place():
    d = doc()
    del d["results"][0]["out_of_place_per_iter"]["p95_us"]
    msg = refusal(d)
    assert msg.startswith(f"{PATH} results[0].out_of_place_per_iter: ")
    assert "p95_us" in msg


def test_percentiles_out_of_order_are_refused_naming_the_file():
    d = doc()
    d["results"][1]["in_place_per_iter"]["p99_us"] = 1.0
    msg = refusal(d)
    assert msg.startswith(f"{PATH} results[1].in_place_per_iter: ")
    assert "min <= p50" in msg


def test_process_rows_not_matching_the_processes_are_refused_with_both_counts():
    rows = [list(OUT_TIMES), list(OUT_TIMES), list(OUT_TIMES)]
    d = doc([result(1 << 20, out_iter=per_iter(OUT_TIMES, rows=rows))])
    msg = refusal(d)
    assert msg.startswith(f"{PATH} results[0].out_of_place_per_iter: ")
    assert "3 process rows for 2 processes" in msg


def test_a_size_that_is_not_an_integer_is_refused_naming_it():
    """A size written as a string: a one-line refusal that names the file, results[1].size
    and what was wrong (a ValueError), not a traceback."""
    d = doc()
    d["results"][1]["size"] = str(4 << 20)
    msg = refusal(d)
    assert msg.startswith(f"{PATH}: not nccl-tests -I 1 -J output")
    assert "results[1].size" in msg and "ValueError" in msg and "NoneType" not in msg


def test_nccl_tests_own_checks_name_the_file():
    """What the nccl-tests -J reader refuses (here a collective it cannot tell from
    args[0]) is a TelemetryError naming this file."""
    d = doc()
    d["args"] = ["./mystery", "-b", "8"]
    msg = refusal(d)
    assert msg.startswith(f"{PATH}: ") and "args[0]" in msg


def test_a_file_without_per_iteration_objects_is_told_how_to_get_them():
    d = doc([result(1 << 20, out_iter=False, in_iter=False)])
    msg = refusal(d)
    assert msg.startswith(f"{PATH}: ") and "no per-iteration results" in msg
    assert "-I 1" in msg and "-J" in msg


# ------------------------------------------------------------------ not JSON, or JSON refused


def test_invalid_json_is_refused_with_its_file_and_line():
    text = json.dumps(doc(), indent=1)
    lines = text.splitlines()
    cut = "\n".join(lines[:5])  # cut off after line 5
    msg = refusal(cut)
    assert msg.startswith(f"{PATH} line "), msg
    line = int(re.match(rf"{re.escape(PATH)} line (\d+): ", msg).group(1))
    assert line >= 5 and "not valid JSON" in msg


def test_invalid_json_on_a_given_line_names_that_line():
    text = '{\n "version": 3,\n "config": {,\n}'
    msg = refusal(text)
    assert msg.startswith(f"{PATH} line 3: ") and "not valid JSON" in msg


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_nan_or_infinity_is_refused_saying_so_and_naming_the_file(token):
    text = json.dumps(doc()).replace('"avg_us": 23.2', f'"avg_us": {token}', 1)
    assert token in text
    msg = refusal(text)
    assert msg.startswith(f"{PATH}: ") and token in msg and "not nccl-tests output" in msg


def test_without_a_path_the_placeholder_names_the_input():
    """Text given without a path is called <nccl-tests> in what is read and in refusals."""
    d = doc()
    assert T.parse_nccl_tests_iterations(json.dumps(d)).path == "<nccl-tests>"
    with pytest.raises(T.TelemetryError) as e:
        T.parse_nccl_tests_iterations("{\n,")
    assert str(e.value).startswith("<nccl-tests> line 2: ")

