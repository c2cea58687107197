"""Reading PyTorch profiler (Kineto) traces for `linkroof trace`: one file per rank,
`.json` or `.json.gz`, read as a stream (ijson) so traces of several GB fit. What is
kept: the GPU's activities (kernels, copies, memsets) with the args torch copied onto
them, the runtime launches by correlation id, the host's comm ops (record_param_comms,
c10d::*), the steps (ProfilerStep#N), the GPUs (deviceProperties) and the process groups
(distributedInfo). The arithmetic on them is roofline/traces.py's.

A file that is not such a trace gets one line saying what it is instead: cut off
mid-file, a Chrome trace from another tool, a trace with no GPU events, ranks of
different jobs given together.
"""

from __future__ import annotations

import bisect
import dataclasses
import gzip
import os
import re
import sys
import zlib
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import LinkroofError
from ..files import regular_file
from ..roofline.timeline import Activities, Activity
from ..roofline.traces import (CUSTOM_OP_PREFIXES, CollectiveCall, CommOp, CommOps, collective_call, collective_name,
                               innermost, is_collective_kernel, open_ops)

MAX_TRACE = 16 << 30  # bytes on disk; a trace is streamed, never held whole


class TraceError(LinkroofError):
    """A file that is not a PyTorch profiler trace linkroof can read; the message says why."""


@dataclass
class Trace:
    """One rank's trace, as read."""

    path: str
    rank: int | None
    world_size: int | None
    backend: str
    devices: list[dict]
    activities: Sequence[Activity]  # Activities (columns) as read; any sequence of them where made by hand
    kernel_args: list[dict]  # beside each activity, the args torch copied onto it
    launches: dict[int, tuple[int, int]]  # correlation id -> (thread, start ns) of the runtime launch
    ops: list[CommOp]
    steps: list[tuple[str, int, int]]  # (name, start ns, end ns) on the GPU where the trace has them
    groups: dict[str, int]  # process group name -> size
    notes: list[str] = field(default_factory=list)
    step_of: list[int] = field(default_factory=list)  # beside each activity, its step's index in `steps` (-1: none)
    span_ns: tuple[int, int] = (0, 0)  # the first GPU activity's start and the last one's end
    _found: list | None = field(default=None, init=False, repr=False)  # (activity, call), found once
    _found_rows: list | None = field(default=None, init=False, repr=False)  # beside each, its activity's index

    def __getstate__(self) -> dict:  # a rank read in another process comes back in columns (see Activities)
        return {k: v for k, v in self.__dict__.items() if k not in ("_found", "_found_rows")}

    def __setstate__(self, d: dict) -> None:
        d["_found"] = d["_found_rows"] = None
        self.__dict__.update(d)

    def collectives(self) -> list[CollectiveCall]:
        """Each collective's GPU activity, with its facts from the best tier the trace
        has: an NCCL kernel or one carrying collective args, or any kernel or copy
        launched inside a record_param_comms op (a one-rank group's collective is a copy)."""
        return [c for _, c in self._scan()]

    def comm_ids(self) -> set[int]:
        """The activities that are collectives (by id), for the interval arithmetic."""
        return {id(a) for a, _ in self._scan()}

    def local_ids(self) -> set[int]:
        """The collectives of one-rank groups (by id): a local copy or nothing, no link
        crossed; counted as memory work, never as communication, exposed or not."""
        return {id(a) for a, c in self._scan() if c.group_size == 1}

    def silent_ops(self) -> list[CommOp]:
        """The collective ops (record_param_comms naming a collective other than a barrier
        or a wait) that launched no GPU work in the trace: a one-rank group's all-reduce or
        broadcast (NCCL does nothing on the GPU), or work the profiler did not record."""
        used = set()
        for a, _ in self._scan():
            launch = self.launches.get(a.correlation)
            for o in open_ops(self.ops, *launch) if launch else []:
                used.add(id(o))
        return [o for o in self.ops if id(o) not in used and o.args.get("Collective name")
                and collective_name(o.args.get("Collective name")) not in (None, "barrier")]

    def _scan(self) -> list[tuple[Activity, CollectiveCall]]:
        if self._found is None:
            found, rows = [], []
            acts = Activities.of(self.activities)
            # whether a kernel is a collective by its kind and name alone: once per distinct one
            probes = [Activity(kind, name, device, stream, 0, 0, 0, grid, block, 0, copy_kind)
                      for kind, name, device, stream, grid, block, copy_kind in acts.table]
            by_name = [is_collective_kernel(a, NO_ARGS) for a in probes]
            for i, (k, corr, args) in enumerate(zip(acts.key, acts.corr, self.kernel_args)):
                launch = self.launches.get(corr)
                if not (by_name[k] or (args and is_collective_kernel(probes[k], args))):
                    op = innermost(self.ops, *launch) if launch else None
                    named = op.args.get("Collective name") if op is not None else None
                    if not named or collective_name(named) in (None, "barrier"):
                        continue
                a = acts.pin(i)  # the same object whenever asked: comm_ids holds its id
                c = collective_call(a, args, launch, self.ops, self.groups, self.rank, self.world_size)
                if c.group_size is None and self.world_size == 2 and c.mechanism == "NCCL" and \
                        "nccl" in a.name.lower() and "onerank" not in a.name.lower():
                    c = dataclasses.replace(c, group_size=2, group_from="the world of 2 ranks (an NCCL kernel runs "
                                            "on a group of 2 or more)", notes=tuple(
                                                n for n in c.notes if not n.startswith("group size unknown")))
                found.append((a, c))
                rows.append(i)
            self._found, self._found_rows = found, rows
        return self._found

    def found_rows(self) -> list[int]:
        """Beside each of collectives(), the index of its activity in `activities`."""
        self._scan()
        return self._found_rows


MAX_NS = 1 << 62  # a time past 146 years from the clock's zero in ns (4.6e18) is no profiler's
MAX_DUR_NS = 86_400 * 10**9  # an activity or a step of over a day did not complete while profiled
MAX_ID = 1 << 63  # a device, stream, thread or correlation id past int64 is no profiler's
MAX_BYTES = 1 << 50  # a copy, memset or collective message over 1 PiB is not one
MAX_ELEMENTS = 1 << 48  # a collective's elements (args, shapes) past 2^48 are not one


def _ns(us: Any) -> int:
    """Microseconds (a JSON number, as the profiler writes them) to integer ns; a string,
    a bool or a missing value raises TypeError, NaN, an infinity or a time past MAX_NS
    ValueError or OverflowError (the event is skipped and counted)."""
    if type(us) is not float and type(us) is not int:
        raise TypeError("a time that is not a number")
    ns = int(round(us * 1000))
    if not -MAX_NS < ns < MAX_NS:
        raise ValueError("a time past MAX_NS")
    return ns


def _dur_ns(e: dict) -> int:
    """An event's duration in ns: never negative (a negative one raises ValueError), nor
    over MAX_DUR_NS."""
    d = _ns(e.get("dur", 0))
    if d < 0:
        raise ValueError("a negative duration")
    if d > MAX_DUR_NS:
        raise ValueError("a duration of over a day")
    return d


def _id(v: Any) -> int:
    """An integer field of an event (device, stream, correlation, thread): an int, or a
    float or a string holding one; missing, null or empty is 0. A bool (true is not 1),
    NaN, a list or a value past MAX_ID raises (the event is skipped and counted)."""
    t = type(v)
    if t is int:
        x = v
    elif v is None or v == "":
        return 0
    elif t is float or t is str:
        x = int(v)  # NaN, "x": ValueError; an infinity: OverflowError
    else:
        raise TypeError("an id that is not an integer")
    if not -MAX_ID <= x < MAX_ID:
        raise ValueError("an id past int64")
    return x


def _size(v: Any, most: int) -> int:
    """A count (bytes, elements) of an event: as _id, and from 0 to `most`."""
    x = _id(v)
    if not 0 <= x <= most:
        raise ValueError("a size out of range")
    return x


def _open(p: Path) -> Any:
    with open(p, "rb") as f:
        magic = f.read(2)
    return gzip.open(p, "rb") if magic == b"\x1f\x8b" else open(p, "rb")


COMM_OP_PREFIXES = ("record_param_comms", "c10d::", "nccl:") + CUSTOM_OP_PREFIXES  # the ops a collective runs under
KINDS = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
RUNTIME = ("cuda_runtime", "cuda_driver")
HOST_CATS = ("cpu_op", "user_annotation", "gpu_user_annotation")
NO_ARGS: dict = {}


def _dims(v: Any) -> tuple[int, int, int]:
    """A kernel's grid or block as three ints ((0, 0, 0) where the trace has none); a
    non-list, a bool or a dimension past 2^32 raises (the event is skipped and counted)."""
    if type(v) is list and len(v) == 3:
        a, b, c = v
        if type(a) is int and type(b) is int and type(c) is int and 0 <= a <= 1 << 32 and 0 <= b <= 1 << 32 \
                and 0 <= c <= 1 << 32:
            return a, b, c
    if v is None or v == [] or v == "" or v == 0:
        return 0, 0, 0
    if type(v) is not list:
        raise TypeError("a grid that is not a list")
    x = [_size(a, 1 << 32) for a in v[:3]]
    return tuple(x + [0] * (3 - len(x)))  # type: ignore[return-value]


def _tid(e: dict) -> int:
    """An event's thread: an integer (as _id), 0 where it is named by a string
    ("stream 7") or missing; a bool raises."""
    tid = e.get("tid", 0)
    if type(tid) is int or type(tid) is float or type(tid) is bool or (type(tid) is str and tid.isdigit()):
        return _id(tid)
    return 0


CHUNK = 1 << 20  # bytes read (decompressed) at a time (8 MiB held 34 MB more at once, no faster)
MAX_EVENT = 64 << 20  # one event larger than this is not a profiler's: refused, never buffered whole
# events in one rank's file: a 1 GB production trace holds 3.7 M (benchmarks/RESULTS.md, `linkroof
# trace` at production size); past this the memory held grows without bound (a bomb of tiny events)
MAX_EVENTS = 15_000_000  # 4 times the 1 GB trace's 3.7 M: about a minute's reading, a few GB held
BOMB_AFTER, BOMB_RATIO = 64 << 20, 100  # past 64 MiB expanded, at over 100 times the compressed bytes: a bomb


SPLIT_AT = 256 << 20  # a plain file this large is read in two processes (two halves at an event boundary)


def _stream(p: Path, col: _Collector, progress: Any = None) -> tuple[dict, int]:
    """One pass over the events, each given to `col` as it is decoded (never the whole
    list in memory): the top-level keys from the head of the file, where Kineto writes
    them (else from the text after the events, where the reading leaves it); then the
    traceEvents array decoded by the standard library's C decoder, a batch of events
    at a time, over a text buffer refilled in chunks (81 MB/s on the development
    machine one event at a time, where building items token by token in Python read
    1.5 MB/s), with the cyclic garbage collector off. A plain file over SPLIT_AT
    on a machine of several cores is decoded in two processes, split at an event
    boundary that the first half's own decoding must end on (else one pass). Returns
    (meta, events)."""
    import gc

    meta, has_events = _top_keys(p, stop_at_events=True)
    collecting = gc.isenabled()
    gc.disable()  # the events make no cycles; the collector walking millions of kept objects cost 20 % of the read
    try:
        if has_events:
            _stream_events(p, col, meta, progress)
        col.done()
    finally:
        if collecting:
            gc.enable()
    return meta, col.n


def _stream_events(p: Path, col: _Collector, meta: dict, progress: Any) -> None:
    """The events of a file whose head names traceEvents, into `col`; the keys after them
    into `meta`."""
    split = _split_point(p) if (os.cpu_count() or 1) > 1 and p.stat().st_size > SPLIT_AT else None
    if split is not None:
        done = _read_split(p, col, split, progress)
        if not done:
            col.__init__()  # the boundary was not one: read it all here
            col.n = _events(p, col, progress=progress)
    else:
        col.n = _events(p, col, progress=progress)
    if not any(k in meta for k in ("deviceProperties", "distributedInfo")):
        meta.update(_tail_keys(p, col.tail))  # written after the events by another writer
    meta.setdefault("traceEvents", None)


def _tail_keys(p: Path, tail: str) -> dict:
    """The top-level keys written after the traceEvents array (`tail`: the text after its
    ']'), taken as strictly as the head's: no NaN or infinity, no integer past 20 digits."""
    import json

    text = tail.lstrip()
    if not text:
        raise TraceError(f"{p}: the file ends after its events, before the trace's closing brace: a trace cut off "
                         "before the profiler finished writing it")
    if not text.startswith(","):
        return {}
    try:
        got = json.loads("{" + text[1:], parse_constant=_no_constant, parse_int=_short_int,
                         parse_float=_finite_float)
    except RecursionError:
        raise TraceError(f"{p}: the keys after its events are nested too deep to be a profiler's") from None
    except ValueError as e:
        raise TraceError(f"{p}: not a JSON trace after its events ({str(e).splitlines()[0][:80]})") from None
    return got if type(got) is dict else {}


def _no_constant(s: str) -> Any:
    raise ValueError(f"{s} is not a number (JSON has no NaN or Infinity)")


def _finite_float(s: str) -> float:
    v = float(s)
    if v in (float("inf"), float("-inf")):
        raise ValueError(f"{s[:40]} is beyond a double")
    return v


def _short_int(s: str) -> int:
    if len(s) > 20:
        raise ValueError(f"an integer of {len(s)} digits")
    return int(s)


def _split_point(p: Path) -> int | None:
    """The byte offset of an event's '{' near the middle of a plain file: a ', {"' whose
    object decodes to an event (a dict with "ph"); None for a compressed file, or where
    none is found in the 4 MiB after the middle."""
    import json

    with open(p, "rb") as f:
        if f.read(2) == b"\x1f\x8b":
            return None
        mid = p.stat().st_size // 2
        f.seek(mid)
        window = f.read(4 << 20)
    for m in re.finditer(rb",\s*\{\"", window):
        at = m.end() - 2
        try:
            obj, _ = json.JSONDecoder().raw_decode(window[at:].decode("utf-8", errors="strict"))
        except (ValueError, UnicodeDecodeError, RecursionError):
            continue
        if isinstance(obj, dict) and "ph" in obj:
            return mid + at
    return None


def _read_part(path: str, start: int) -> _Collector:
    """A worker's half: the events from byte `start` (an event's '{') to the array's end."""
    col = _Collector()
    col.n = _events(Path(path), col, start=start)
    return col


def _read_split(p: Path, col: _Collector, split: int, progress: Any = None) -> bool:
    """The first half here, the second in a forked worker; False where the first half's
    events do not end exactly at `split` (it was inside an event: read it all again)."""
    import concurrent.futures as cf
    import multiprocessing as mp

    try:
        ctx = mp.get_context("fork")
    except ValueError:
        return False
    with cf.ProcessPoolExecutor(1, mp_context=ctx) as pool:
        other = pool.submit(_read_part, str(p), split)
        try:
            col.n = _events(p, col, limit=split,
                            progress=(lambda done, total: progress(done, split)) if progress else None)
        except _NotAtBoundary:
            other.cancel()
            return False
        try:
            second = other.result()  # its activities still in columns (see _Collector.__setstate__)
        except (cf.process.BrokenProcessPool, TraceError):  # the second half did not decode: one pass decides
            return False
    col.merge(second)  # once the worker has exited: the two never hold its columns at once
    return True


class _NotAtBoundary(Exception):
    """The first half of a split read ended inside an event."""


_WS = re.compile(r"[\s,]*")
_HEAD = re.compile(r'"traceEvents"\s*:\s*\[')


def _events(p: Path, col: _Collector, start: int | None = None, limit: int | None = None,
            progress: Any = None) -> int:
    """Decode the traceEvents array's events, each to `col`; from byte `start` (an
    event's '{', a split read's second half) instead of the array's opening, and up to
    byte `limit` (its first half, which must end there on an event's end). Events are
    decoded a batch at a time where the text allows (a run of them cut after an event's
    '}' that a ', {' follows, decoded as one JSON array by the C decoder: the cut is an
    event's end exactly when that parses), else one at a time. Bytes that are not UTF-8
    are read as U+FFFD and their place kept in `col.not_utf8`; the text after the array
    is left in `col.tail`."""
    import codecs
    import json

    dec = json.JSONDecoder()
    text_of = codecs.getincrementaldecoder("utf-8")(errors="strict")
    n = 0
    f = _open(p)
    left = limit
    size = p.stat().st_size
    raw_file = getattr(f, "fileobj", None) or f  # a gzip file's progress is its compressed bytes read
    got = start or 0  # bytes decompressed (from the file's start)
    try:
        if start is not None:
            f.seek(start)
        buf, eof = "", False

        def more(at_least: int = 0) -> bool:
            nonlocal buf, eof, left, got
            if eof:
                return False
            want = max(CHUNK, at_least) if left is None else min(max(CHUNK, at_least), left)
            raw = f.read(want) if want > 0 else b""
            if left is not None:
                left -= len(raw)
            eof = not raw
            got += len(raw)
            if raw_file is not f and got > BOMB_AFTER and got > BOMB_RATIO * max(1, raw_file.tell()):
                raise TraceError(f"{p}: its first {raw_file.tell():,} compressed bytes expand to {got >> 20:,} MiB, "
                                 f"over {BOMB_RATIO} times their size (a profiler's trace compresses 10 to 20 times): "
                                 "a gzip bomb, not read further")
            try:
                buf += text_of.decode(raw, final=eof)
            except UnicodeDecodeError as e:  # said, not passed silently: this chunk read with U+FFFD
                held = len(text_of.getstate()[0])
                col.not_utf8.append(got - len(raw) - held + e.start)
                text_of.errors = "replace"
                buf += text_of.decode(raw, final=eof)
                text_of.errors = "strict"
            if progress is not None:
                progress(raw_file.tell(), size)
            return not eof or bool(buf)

        if start is None:
            m = None
            while m is None:  # the array's opening, in the head (its key found by the token pass)
                m = _HEAD.search(buf)
                if m is None and (eof or len(buf) > MAX_EVENT or not more()):
                    raise TraceError(f"{p}: its traceEvents is not a list of events")
            i = m.end()
        else:
            i = 0
        one_by_one = 0  # up to this offset in buf, events are decoded one at a time (a batch failed there)
        while True:
            i = _WS.match(buf, i).end()
            if i >= len(buf):
                buf, i, one_by_one = "", 0, 0
                if not more():
                    if limit is not None:
                        return n  # the first half ended on an event's end: the split held
                    raise TraceError(f"{p}: the file ends mid-JSON after {n} events: a trace cut off before the "
                                     "profiler finished writing it")
                continue
            if buf[i] == "]":
                tail = buf[i + 1:]  # what follows the array: the last keys, never a second array of events
                while _HEAD.search(tail) is None and len(tail) < MAX_EVENT:
                    before = len(buf)
                    if not more():
                        break
                    tail += buf[before:]
                if _HEAD.search(tail):
                    raise TraceError(f"{p}: a second traceEvents array follows the first: two traces joined in one "
                                     "file (give each rank's trace as its own file)")
                col.tail = tail
                return n
            if i >= one_by_one and len(buf) - i > BATCH // 4:
                hi = min(len(buf), i + BATCH)
                k = _batch_end(buf, i, hi)
                if k < 0:
                    one_by_one = hi  # no event's end found: one at a time up to there
                else:
                    try:
                        batch, end = dec.raw_decode("[" + buf[i:k] + "]")
                        if end != k - i + 2:
                            raise ValueError("not one array")
                    except (ValueError, RecursionError):
                        one_by_one = k  # not an event's end, or an event that does not decode: one at a time
                    else:
                        n += len(batch)
                        if n > MAX_EVENTS:
                            raise TraceError(f"{p}: more than {MAX_EVENTS:,} events in one rank's trace (a few "
                                             "profiler steps hold far fewer; a gzip file expanding to this many is "
                                             "not a profiler's): profile fewer steps, or read it in parts")
                        col.on_events(batch)
                        del batch
                        i = k
                        if i > CHUNK:  # drop what was read
                            buf, i, one_by_one = buf[i:], 0, 0
                        continue
            try:
                event, j = dec.raw_decode(buf, i)
            except json.JSONDecodeError:
                if eof:
                    if limit is not None:
                        raise _NotAtBoundary() from None
                    raise TraceError(f"{p}: the file ends mid-JSON after {n} events: a trace cut off before the "
                                     "profiler finished writing it" if buf.rstrip()[-1:] != "}" else
                                     f"{p}: not a JSON trace (event {n + 1} does not parse)") from None
                if len(buf) - i > MAX_EVENT:
                    raise TraceError(f"{p}: event {n + 1} is larger than {MAX_EVENT >> 20} MiB or does not parse: "
                                     "not a profiler's trace") from None
                buf, i, one_by_one = buf[i:], 0, max(0, one_by_one - i)
                more(len(buf))  # doubling what is held: an event of n bytes is decoded log(n) times, not n / CHUNK
                continue
            except RecursionError:
                raise TraceError(f"{p}: event {n + 1} is nested too deep to be a profiler's event") from None
            except ValueError as e:  # a number of thousands of digits (Python's int limit), not a JSON error
                raise TraceError(f"{p}: event {n + 1} does not decode ({str(e)[:80]}): not a profiler's event") \
                    from None
            n += 1
            if n > MAX_EVENTS:
                raise TraceError(f"{p}: more than {MAX_EVENTS:,} events in one rank's trace (a few profiler steps hold "
                                 "far fewer; a gzip file expanding to this many is not a profiler's): profile fewer "
                                 "steps, or read it in parts")
            col.on_event(event)
            i = j
            if i > CHUNK:  # drop what was read
                buf, i, one_by_one = buf[i:], 0, max(0, one_by_one - i)
    except EOFError:
        raise TraceError(f"{p}: the compressed file ends early after {n} events: a trace cut off before the "
                         "profiler finished writing it") from None
    except (OSError, zlib.error) as e:
        raise TraceError(f"{p}: cannot be read as a trace ({type(e).__name__}: {str(e)[:100]})") from None
    finally:
        f.close()


BATCH = 1 << 16  # characters of events decoded in one call (about 200 events; 1 MiB took 20 % longer: caches)
_NEXT = re.compile(r"\s*,\s*\{")


def _batch_end(buf: str, lo: int, hi: int) -> int:
    """The offset just after the last '}' in buf[lo:hi] that ', {' follows (the end of an
    event, unless it lies inside one: the decoding decides), or -1."""
    k = buf.rfind("}", lo, hi)
    for _ in range(64):  # an event's end is among the last few braces; text of braces alone is no trace's
        if k <= lo:
            break
        if _NEXT.match(buf, k + 1):
            return k + 1
        k = buf.rfind("}", lo, k)
    return -1


MAX_DEPTH = 64  # a Kineto trace nests about 6 deep; far deeper is not a profiler's
# bytes of one token before the events (a string, a number, blanks): a profiler's head holds none near this, and
# the tokenizer lexes a token that spans its reads again from its start at each read (a 64 MiB one took 90 s)
MAX_TOKEN = 1 << 20


def _top_keys(p: Path, stop_at_events: bool) -> tuple[dict, bool]:
    """The file's top-level keys but traceEvents, built from the token stream; with
    `stop_at_events`, only those before it (Kineto writes deviceProperties and
    distributedInfo first). And whether there is a traceEvents key at all. Tokens come
    from ijson's basic_parse with the depth counted here (its `parse` builds a prefix
    string per level: a file nested 100 000 deep took 24 s for 200 KB)."""
    import ijson

    meta: dict = {}
    key, builder, has_events, depth = None, None, False, 0
    f = _Bounded(_open(p), p)
    try:
        for event, value in ijson.basic_parse(f, use_float=True, buf_size=16 << 10):
            f.since = 0
            if event in ("start_map", "start_array"):
                depth += 1
                if depth > MAX_DEPTH:
                    raise TraceError(f"{p}: nested more than {MAX_DEPTH} levels deep: not a profiler's trace")
                if depth == 1 and event == "start_array":
                    raise TraceError(f"{p}: a JSON list, not a trace object with traceEvents (a Chrome trace in "
                                     "the array form, from another tool)")
            if depth == 1 and event == "map_key":
                if key is not None and builder is not None:
                    meta[key] = builder.value
                key, builder = value, (None if value == "traceEvents" else ijson.ObjectBuilder())
                if value == "traceEvents":
                    has_events = True
                    if stop_at_events:
                        break
            elif depth >= 1 and builder is not None and not (depth == 1 and event == "end_map"):
                builder.event(event, value)
            if event in ("end_map", "end_array"):
                depth -= 1
                if depth == 0 and key is not None and builder is not None:
                    meta[key] = builder.value
                    key, builder = None, None
            elif depth == 1 and builder is not None and event not in ("map_key", "start_map", "start_array"):
                meta[key] = builder.value  # a scalar value at the top level
                key, builder = None, None
    except TraceError:
        raise
    except (ijson.common.JSONError, ValueError) as e:
        if "invalid bytes in UTF8" in str(e):
            raise TraceError(f"{p}: not UTF-8 before its events (a trace is written as UTF-8)") from None
        if not has_events:
            first, last = _ends(p)
            if first == b"{" and last != b"}":
                raise TraceError(f"{p}: the file ends mid-JSON: a trace cut off before the profiler finished "
                                 "writing it") from None
            raise TraceError(f"{p}: not a JSON trace ({str(e).splitlines()[0][:80]})") from None
    except EOFError:
        raise TraceError(f"{p}: the compressed file ends early: a trace cut off before the profiler finished "
                         "writing it") from None
    except (OSError, UnicodeDecodeError, zlib.error) as e:
        raise TraceError(f"{p}: cannot be read as a trace ({type(e).__name__}: {str(e)[:100]})") from None
    finally:
        f.close()
    return meta, has_events


class _Bounded:
    """A file read by the token pass, refused (TraceError) once MAX_TOKEN bytes pass with
    no token decoded: one string, number or run of blanks that long (a 5 GB first line)
    is not a profiler's, and the tokenizer would hold it whole."""

    def __init__(self, f: Any, p: Path) -> None:
        self.f, self.p, self.since = f, p, 0

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(n)
        self.since += len(data)
        if self.since > MAX_TOKEN:
            raise TraceError(f"{self.p}: {self.since >> 20} MiB without one JSON token ending (a string, a number or "
                             "blank space that long): not a profiler's trace")
        return data

    def close(self) -> None:
        self.f.close()


def _ends(p: Path) -> tuple[bytes, bytes]:
    """The first and last non-blank byte of the (decompressed) file: a trace cut off
    mid-write starts with '{' and does not end with '}'."""
    first, last = b"", b""
    size = p.stat().st_size
    try:
        with _open(p) as f:
            if not hasattr(f, "fileobj"):  # a plain file: its first and last MiB (a 5 GB line is not read whole)
                first = f.read(1 << 20).lstrip()[:1]
                f.seek(max(0, size - (1 << 20)))
                return first, f.read().rstrip()[-1:]
            done = 0
            while (chunk := f.read(1 << 20)) and done < BOMB_RATIO * size:  # past that, a bomb: the last unknown
                done += len(chunk)
                stripped = chunk.strip()
                if stripped:
                    first = first or stripped[:1]
                    last = stripped[-1:]
            if chunk:
                last = b""
    except (OSError, EOFError, zlib.error):
        pass  # a gzip stream cut off: what was read decides
    return first, last


class Launches(Mapping):
    """Correlation id -> (thread, start ns) of each runtime launch, read-only, held in
    arrays: the dict of tuples it replaces took about 100 B a launch (120 MB for the 1.2 M
    of a 1 GB trace), these about 30 B. Filled by `add` as the trace is read (a later
    launch of the same id replaces an earlier one, as a dict's would), looked up after."""

    def __init__(self) -> None:
        self._corr, self._tid, self._ts = array("q"), array("q"), array("q")
        self._pos: Any = None  # built at the first look-up (see _index)
        self._lo, self._n, self._keys = 0, 0, None

    def add(self, corr: int, tid: int, ts: int) -> None:
        self._corr.append(corr)
        self._tid.append(tid)
        self._ts.append(ts)
        self._pos = None

    def merge(self, other: "Launches") -> None:
        """The launches of the part read after this one's."""
        self._corr += other._corr
        self._tid += other._tid
        self._ts += other._ts
        self._pos = None

    def _index(self) -> Any:
        """Dense ids (CUPTI counts them up from 1): an array from id - lowest to the
        launch's row; sparse ones: the ids sorted, for a bisection."""
        corr = self._corr
        if not corr:
            self._pos, self._keys, self._n = array("q"), None, 0
            return self._pos
        lo, hi = min(corr), max(corr)
        if hi - lo < 4 * len(corr) + 4096:
            pos = array("i" if len(corr) < 1 << 31 else "q", [-1]) * (hi - lo + 1)
            for i, c in enumerate(corr):
                pos[c - lo] = i
            self._lo, self._keys, self._n = lo, None, (hi - lo + 1) - pos.count(-1)
        else:
            last = {c: i for i, c in enumerate(corr)}  # the latest row of each id
            self._keys = array("q", sorted(last))
            pos = array("q", (last[c] for c in self._keys))
            self._n = len(self._keys)
        self._pos = pos
        return pos

    def get(self, corr: Any, default: Any = None) -> Any:
        pos = self._pos if self._pos is not None else self._index()
        if type(corr) is not int:
            return default
        keys = self._keys
        if keys is None:
            k = corr - self._lo
            if k < 0 or k >= len(pos):
                return default
            i = pos[k]
            if i < 0:
                return default
        else:
            j = bisect.bisect_left(keys, corr)
            if j == len(keys) or keys[j] != corr:
                return default
            i = pos[j]
        return self._tid[i], self._ts[i]

    def __getitem__(self, corr: Any) -> tuple[int, int]:
        got = self.get(corr)
        if got is None:
            raise KeyError(corr)
        return got

    def __iter__(self) -> Any:
        pos = self._pos if self._pos is not None else self._index()
        if self._keys is not None:
            return iter(self._keys.tolist())
        return (self._lo + k for k, i in enumerate(pos) if i >= 0)

    def __len__(self) -> int:
        if self._pos is None:
            self._index()
        return self._n

    def __repr__(self) -> str:
        return f"Launches({len(self)} launches)"

    def __getstate__(self) -> dict:
        return {"corr": self._corr, "tid": self._tid, "ts": self._ts}

    def __setstate__(self, d: dict) -> None:
        self.__init__()
        self._corr, self._tid, self._ts = d["corr"], d["tid"], d["ts"]


_SURROGATE = re.compile("[\ud800-\udfff]")
_SIZE_ARGS = (("In msg nelems", MAX_ELEMENTS), ("Out msg nelems", MAX_ELEMENTS), ("Group size", 1 << 24))


def _clean(x: Any, fixed: list, depth: int = 0) -> Any:
    """Kept args with each lone surrogate (half a UTF-16 character, a JSON escape that
    cannot be printed or written as UTF-8) made U+FFFD, counted in `fixed`; only as deep
    as args that hold a collective's facts go. Each string is kept once (interned): the
    args of 30 k collectives repeat a few keys and values (their group's name and ranks,
    the dtype), about 24 MB held again on a 1 GB trace."""
    if type(x) is str:
        if not x.isascii() and _SURROGATE.search(x):
            fixed.append(ascii(x)[:60])
            return _SURROGATE.sub("\ufffd", x)
        return sys.intern(x)
    if depth > 8:
        return x
    if type(x) is dict:
        return {_clean(k, fixed, depth + 1): _clean(v, fixed, depth + 1) for k, v in x.items()}
    if type(x) is list:
        return [_clean(v, fixed, depth + 1) for v in x]
    return x


def _check_sizes(args: dict) -> None:
    """A collective's counts in its args: not a bool, not past their bounds (10^30 bytes,
    10^15-element shapes are no collective's); raises ValueError (the event is skipped)."""
    for key, most in _SIZE_ARGS:
        v = args.get(key)
        if v is not None and v != "" and (type(v) is not str or v.strip().isdigit()):
            _size(v.strip() if type(v) is str else v, most)
    dims = args.get("Input Dims")
    if type(dims) is list and _elements_past(dims, 0):
        raise ValueError("shapes past MAX_ELEMENTS")


def _elements_past(dims: list, depth: int) -> bool:
    """Whether a shape (or a list of shapes) holds a bool, more than MAX_ELEMENTS elements
    in one tensor, or lists nested deeper than checked here (5 levels; a TensorList's shapes
    are 3: [[[n], [m]]]): those went unchecked, and read as 2^120 elements (2026-12-05)."""
    n = 1
    for d in dims:
        if type(d) is bool:
            return True
        if type(d) is int:
            n *= d if d > 0 else 1
            if n > MAX_ELEMENTS:
                return True
        elif type(d) is list and (depth >= 4 or _elements_past(d, depth + 1)):
            return True
    return False


class _Index(dict):
    """Each distinct value its number, in the order first seen."""

    def __missing__(self, key: Any) -> int:
        n = self[key] = len(self)
        return n


class _Collector:
    """What read_trace keeps of the events, filled one event at a time (in this process,
    or in a worker reading the second half of a large file)."""

    def __init__(self) -> None:
        self.acts = Activities()  # in columns (about 40 B an activity; objects took 210)
        self.activities: Activities | list = []  # the same, once the reading ends (done)
        self.kargs: list[dict] = []
        self.launches = Launches()
        self.ops: list[CommOp] = []
        self.gpu_steps: list[tuple[str, int, int]] = []
        self.cpu_steps: list[tuple[str, int, int]] = []
        self.bad = 0
        self.shared: dict = {}  # one object per distinct name and grid: 1.2 M kernels of a few hundred names share them
        self.n = 0
        # GPU events by (correlation, start), every one of the first 65536 correlation ids and
        # one in 64 after: a second one with the same pair is an event given twice (a trace
        # merged twice), then looked for in full
        self.sampled: set = set()
        self.twice = 0
        self.surrogates: list[str] = []  # names and args with a lone surrogate, made U+FFFD (a few kept)
        self.n_surrogates = 0
        self.not_utf8: list[int] = []  # offsets (in the decompressed file) of bytes that are not UTF-8
        self.tail = ""  # the text after the traceEvents array (its last keys), where the reading reached it

    def merge(self, other: "_Collector") -> None:
        """The events of the part after this one's."""
        self.acts.extend(other.acts)
        self.kargs += other.kargs
        self.launches.merge(other.launches)
        self.ops += other.ops
        self.gpu_steps += other.gpu_steps
        self.cpu_steps += other.cpu_steps
        self.bad += other.bad
        self.n += other.n
        self.twice += other.twice + len(self.sampled & other.sampled)
        self.sampled |= other.sampled
        self.surrogates += other.surrogates[:max(0, 3 - len(self.surrogates))]
        self.n_surrogates += other.n_surrogates
        self.not_utf8 += other.not_utf8
        self.tail = other.tail

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "shared"}  # a worker's half: its columns

    def __setstate__(self, d: dict) -> None:
        self.__dict__.update(d)
        self.shared = {}

    def done(self) -> None:
        """The reading has ended: the activities stay in their columns (objects made when asked)."""
        self.activities = self.acts

    def _said(self, x: Any) -> Any:
        """`x` with its lone surrogates made U+FFFD and counted."""
        fixed: list = []
        x = _clean(x, fixed)
        if fixed:
            self.n_surrogates += len(fixed)
            self.surrogates += fixed[:max(0, 3 - len(self.surrogates))]
        return x

    def _name(self, name: Any) -> str:
        """One shared object per distinct name, a lone surrogate in it made U+FFFD."""
        if type(name) is not str:
            name = str(name)
        got = self.shared.get(name)
        if got is None:
            got = self.shared[name] = self._said(name)
        return got

    def on_events(self, events: list) -> None:
        on_event = self.on_event
        for e in events:
            on_event(e)

    def on_event(self, e: Any) -> None:  # the hot loop: one call per event, categories tested cheapest first
        if type(e) is not dict:
            return
        cat = e.get("cat")
        if type(cat) is not str:
            return
        kind = KINDS.get(cat)
        try:
            if kind is not None:
                if e.get("ph") != "X":
                    return
                args = e.get("args")
                if type(args) is not dict:
                    args = {}
                name = self._name(e.get("name", ""))
                start = _ns(e["ts"])
                end = start + _dur_ns(e)
                copy_kind = ""
                grid = block = (0, 0, 0)
                nbytes = 0
                if kind == "kernel":
                    grid, block = _dims(args.get("grid")), _dims(args.get("block"))
                    grid, block = self.shared.setdefault(grid, grid), self.shared.setdefault(block, block)
                else:
                    nbytes = _size(args.get("bytes"), MAX_BYTES)
                    if kind == "memcpy":
                        words = name.split()
                        copy_kind = words[1] if len(words) > 1 else ""
                corr = _id(args.get("correlation"))
                # a kernel's args are kept only where they can hold a collective's facts: the rest is memory
                if "Collective name" in args or "nccl" in name.lower():
                    _check_sizes(args)
                    kept = self._said(args)
                else:
                    kept = NO_ARGS
                self.acts.add(kind, name, _id(args.get("device")), _id(args.get("stream")), start, end, corr, grid,
                              block, nbytes, copy_kind)
                self.kargs.append(kept)
                if corr and (corr < 65536 or not corr & 63):
                    key = (corr, start)
                    if key in self.sampled:
                        self.twice += 1
                    else:
                        self.sampled.add(key)
            elif cat in RUNTIME:
                args = e.get("args")
                c = args.get("correlation") if type(args) is dict else None
                if (type(c) is int or type(c) is float or type(c) is bool) and e.get("ph") == "X":
                    self.launches.add(_id(c), _tid(e), _ns(e["ts"]))
            elif cat in HOST_CATS:
                name = e.get("name")
                if type(name) is not str or e.get("ph") != "X":
                    return
                step = name.startswith("ProfilerStep#")
                if cat == "gpu_user_annotation":
                    if step:
                        start = _ns(e["ts"])
                        self.gpu_steps.append((self._name(name), start, start + _dur_ns(e)))
                    return
                if not step and not name.startswith(COMM_OP_PREFIXES):
                    return
                start = _ns(e["ts"])
                end = start + _dur_ns(e)
                if step:
                    self.cpu_steps.append((self._name(name), start, end))
                else:
                    args = e.get("args")
                    args = args if type(args) is dict else {}
                    _check_sizes(args)
                    self.ops.append(CommOp(self._name(name), _tid(e), start, end, self._said(args)))
        except (KeyError, TypeError, ValueError, OverflowError):
            self.bad += 1  # an event whose fields have the wrong type: skipped, counted, said



def read_trace(path: str | Path, progress: Any = None) -> Trace:
    """One rank's trace file, or TraceError saying why it is not one. `progress(done,
    total)`, in bytes of the file, is called as it is read (the part read here)."""
    p = regular_file(path, "trace")
    if p.stat().st_size > MAX_TRACE:
        raise TraceError(f"{p}: {p.stat().st_size} bytes is over the {MAX_TRACE}-byte limit for a trace")
    col = _Collector()
    meta, seen_events = _stream(p, col, progress)
    acts, kargs, launches, ops = col.activities, col.kargs, col.launches, col.ops
    gpu_steps, cpu_steps = col.gpu_steps, col.cpu_steps
    dropped = 0
    if col.twice:
        table, key, start, end, corr = acts.table, acts.key, acts.start, acts.end, acts.corr
        rows, dropped = _once(range(len(acts)), lambda i: (*table[key[i]][:4], start[i], end[i], corr[i]))
        acts, kargs = acts.take(rows), [kargs[i] for i in rows]
    ops, dropped_ops = _once(ops, lambda o: (o.name, o.tid, o.start_ns, o.end_ns))
    (gpu_steps, _), (cpu_steps, _) = _once(gpu_steps), _once(cpu_steps)  # a step given twice: once
    if not seen_events and "traceEvents" not in meta:
        raise TraceError(f"{p}: no traceEvents: not a Chrome / PyTorch profiler trace")
    if not acts and col.bad:
        raise TraceError(f"{p}: no usable GPU event: {col.bad} of {seen_events} events have fields of the wrong type "
                         "(ts or dur not a number, a negative dur or one over a day, device, stream or grid not an "
                         "integer, a size past its bound, true for a number)")
    if not acts:
        kineto = "deviceProperties" in meta or "schemaVersion" in meta or launches
        raise TraceError(f"{p}: no GPU events (kernels, copies or memsets) in {seen_events} events: " +
                         ("a PyTorch profiler trace taken without ProfilerActivity.CUDA" if kineto else
                          "a Chrome trace from another tool, not a PyTorch profiler trace"))
    for k in ("distributedInfo", "deviceProperties"):
        if k in meta:
            meta[k] = col._said(meta[k])
    dist = meta.get("distributedInfo") if isinstance(meta.get("distributedInfo"), dict) else {}
    malformed = [k for k, want in (("distributedInfo", dict), ("deviceProperties", list))
                 if meta.get(k) is not None and not isinstance(meta.get(k), want)]
    if not isinstance(dist.get("pg_config", []), list):
        malformed.append("distributedInfo.pg_config")
    for k in ("rank", "world_size"):  # true is not rank 1; a rank past 2^24 is no job's
        if k in dist and dist[k] is not None and not (type(dist[k]) is int and 0 <= dist[k] < 1 << 24):
            dist = {**dist, k: None}
            malformed.append(f"distributedInfo.{k}")
    groups = {}
    for g in dist.get("pg_config") if isinstance(dist.get("pg_config"), list) else []:
        if isinstance(g, dict) and type(g.get("pg_size")) is int and 0 < g["pg_size"] < 1 << 24:
            groups[str(g.get("pg_name", ""))] = g["pg_size"]
        elif "distributedInfo.pg_config" not in malformed:
            malformed.append("distributedInfo.pg_config")  # a group of true, 0 or 10^30 ranks
    said = []  # what the reading found and read anyway
    if col.n_surrogates:
        said.append(f"{col.n_surrogates} name(s) or arg(s) with a lone surrogate (half a UTF-16 character), e.g. "
                    f"{col.surrogates[0]}: shown with U+FFFD")
    if col.not_utf8:
        said.append(f"bytes that are not UTF-8 in {len(col.not_utf8)} chunk(s) of {CHUNK >> 20} MiB, the first at "
                    f"byte {col.not_utf8[0]:,}: read as U+FFFD (a trace written as UTF-8 has none)")
    # a step on the GPU: from the first to the last activity its host step launched (the
    # GPU's own ProfilerStep annotation leaves out copies, seen on torch 2.11), else that annotation
    steps, step_of = _gpu_windows(sorted(cpu_steps, key=lambda s: s[1]), acts, launches)
    if not steps:
        steps = sorted(gpu_steps, key=lambda s: s[1])
        step_of = _by_window(steps, acts, array("i", [-1]) * len(acts))
    rank = dist.get("rank") if isinstance(dist.get("rank"), int) else None
    world = dist.get("world_size") if isinstance(dist.get("world_size"), int) else None
    notes = said
    if not steps:
        notes.append("no ProfilerStep in the trace: the whole trace is one step")
    if col.bad:
        notes.append(f"{col.bad} event(s) with fields of the wrong type (ts, dur, grid, ...) were skipped")
    if dropped or dropped_ops:
        notes.append(f"{dropped} GPU event(s) and {dropped_ops} collective op(s) appear twice, the same in every "
                     "field (a trace merged twice?): each counted once")
    if malformed:
        notes.append(f"{', '.join(malformed)} of the wrong type: ignored")
    if world and not groups:
        notes.append(f"distributedInfo gives world_size {world} and no pg_config: a call's group is the world only "
                     "if it ran on the default group, which this trace does not record (its group stays unknown "
                     "where its ops name none)")
    props = [d for d in meta.get("deviceProperties") or [] if isinstance(d, dict)] \
        if isinstance(meta.get("deviceProperties"), list) else []
    return Trace(str(p), rank, world, str(dist.get("backend", "")), props,
                 acts, kargs, launches, CommOps(ops), steps, groups, notes=notes, step_of=step_of,
                 span_ns=(min(acts.start), max(acts.end)))


def _once(items: Any, key: Any = None) -> tuple[list, int]:
    """The items with those given twice (the same `key`, else equal) kept once, in order;
    and how many were dropped."""
    seen: set = set()
    out = []
    n = 0
    for x in items:
        n += 1
        k = key(x) if key is not None else x
        if k not in seen:
            seen.add(k)
            out.append(x)
    return out, n - len(out)


def _gpu_windows(cpu_steps: list[tuple[str, int, int]], acts: Sequence[Activity],
                 launches: Mapping) -> tuple[list[tuple[str, int, int]], Any]:
    """Steps on the GPU where the trace has the host's ProfilerStep ops: each activity
    belongs to the step whose host range launched it (its correlation id's launch); a
    step's window runs from the first to the last of its own activities. When the GPU
    runs behind the host the windows overlap, but no activity is in two steps. An
    activity launched outside every step (another thread, no correlation) goes to the
    step whose window holds its start. (windows, each activity's step index or -1, in
    an array)."""
    acts = Activities.of(acts)
    los = [s[1] for s in cpu_steps]
    owner = array("i", [-1]) * len(acts)
    spans: dict[int, list[int]] = {}
    get = launches.get
    for i, (corr, start, end) in enumerate(zip(acts.corr, acts.start, acts.end)):
        launch = get(corr)
        if launch is None:
            continue
        j = bisect.bisect_right(los, launch[1]) - 1
        while j >= 0 and launch[1] > cpu_steps[j][2]:
            j = -1  # after this step's end and before the next one's start: no step launched it
        if j < 0:
            continue
        owner[i] = j
        span = spans.get(j)
        if span is None:
            spans[j] = [start, end]
        else:
            if start < span[0]:
                span[0] = start
            if end > span[1]:
                span[1] = end
    keep = sorted(spans)
    index = {j: k for k, j in enumerate(keep)}
    windows = [(cpu_steps[j][0], spans[j][0], spans[j][1]) for j in keep]
    step_of = array("i", (index.get(o, -1) for o in owner))
    return windows, _by_window(windows, acts, step_of)


def _by_window(windows: list[tuple[str, int, int]], acts: Sequence[Activity], step_of: Sequence[int]) -> Any:
    """`step_of` (as an array) with each activity that has no step yet given to the
    latest-starting window that holds its start (none: -1)."""
    out = array("i", step_of)
    if not windows or all(o >= 0 for o in out):
        return out
    order = sorted(range(len(windows)), key=lambda k: windows[k][1])
    los = [windows[k][1] for k in order]
    for i, start in enumerate(Activities.of(acts).start):
        if out[i] >= 0:
            continue
        top = bisect.bisect_right(los, start) - 1
        for j in range(top, max(-1, top - 8), -1):  # the latest windows first (few overlap one instant)
            k = order[j]
            if windows[k][1] <= start < windows[k][2]:
                out[i] = k
                break
    return out


def read_job(paths: list[str], workers: int | None = None, progress: Any = None) -> list[Trace]:
    """Several ranks' traces of one job, read in parallel by local processes (one per
    core, `workers` to choose; 1 reads them here): refused when they cannot be (two
    files of one rank, world sizes or process groups that differ). `progress(done,
    total, what)`: files read of the job, or bytes of one file."""
    check_files(paths)
    workers = min(len(paths), workers or os.cpu_count() or 1, os.cpu_count() or 1)
    if workers > 1:
        import concurrent.futures as cf
        import multiprocessing as mp

        with cf.ProcessPoolExecutor(workers, mp_context=mp.get_context("fork")) as pool:
            futures = [pool.submit(read_trace, p) for p in paths]
            done = 0
            for _ in cf.as_completed(futures):
                done += 1
                if progress is not None:
                    progress(done, len(paths), f"read {done} of {len(paths)} ranks' traces")
            traces = [f.result() for f in futures]
    elif len(paths) == 1 and progress is not None:
        traces = [read_trace(paths[0], lambda d, t: progress(d, t, f"reading {Path(paths[0]).name}"))]
    else:
        traces = [read_trace(p) for p in paths]
    check_job(traces)
    return traces


def check_files(paths: Sequence[str]) -> None:
    """Refuses a job's file given twice: by its path, or by its content (the same size and
    the same first and last MiB: a copy under another name), which would count every call
    twice."""
    import hashlib

    seen: dict[Any, str] = {}
    for p in paths:
        real = os.path.realpath(p)
        try:
            size = os.path.getsize(real)
            with open(real, "rb") as f:
                head = f.read(1 << 20)
                f.seek(max(0, size - (1 << 20)))
                tail = f.read(1 << 20)
        except OSError:
            continue  # read_trace says why, in one line
        for key in (("path", real), ("content", size, hashlib.sha256(head + tail).hexdigest())):
            if key in seen:
                how = "twice" if key[0] == "path" else f"twice: {seen[key]} and {p} hold the same bytes"
                raise TraceError(f"{p}: given {how} (each call would be counted twice)")
            seen[key] = p


TIME_APART_S = 600.0  # ranks of one job whose traces start further apart than this are said to be


def job_warnings(traces: list[Trace]) -> list[str]:
    """What makes a job's ranks doubtful without refusing them: traces that start far
    apart (a rank recorded on another day or in another job: nothing can be matched)."""
    spans = [(t.span_ns[0], t) for t in traces if t.span_ns != (0, 0)]
    if len(spans) < 2:
        return []
    (lo, first), (hi, last) = min(spans, key=lambda x: x[0]), max(spans, key=lambda x: x[0])
    apart = (hi - lo) * 1e-9
    if apart <= TIME_APART_S:
        return []
    def who(t: Trace) -> str:
        return f"rank {t.rank}" if t.rank is not None else Path(t.path).name

    return [f"{who(last)}'s trace starts {apart / 3600:.1f} h after {who(first)}'s: not one window of one job (the "
            "ranks' clocks or recordings differ by hours); no call can be matched across them"]


def check_job(traces: list[Trace]) -> None:
    """Refuses ranks that cannot be one job's: one rank twice, world sizes or process
    groups that differ."""
    if len(traces) > 1:
        ranks = [t.rank for t in traces]
        known = [r for r in ranks if r is not None]
        if len(set(known)) != len(known):
            dup = sorted({r for r in known if known.count(r) > 1})
            raise TraceError(f"ranks {dup} appear in more than one file: traces of different jobs (or one rank's "
                             "twice) given together")
        worlds = {t.world_size for t in traces if t.world_size is not None}
        if len(worlds) > 1:
            raise TraceError(f"the traces' world sizes differ ({sorted(worlds)}): ranks of different jobs given "
                             "together")
        pgs = {tuple(sorted(t.groups.items())) for t in traces if t.groups}
        if len(pgs) > 1:
            raise TraceError("the traces' process groups differ: ranks of different jobs given together")


# ------------------------------------------------------------------ against this machine


@dataclass
class CollectiveRow:
    """A collective call of the trace, and what this machine does at its size."""

    call: CollectiveCall
    nccl_s: float | None = None  # the profile's NCCL time at the call's collective, dtype, group and size
    nccl_how: str = ""
    bound_s: float | None = None  # the cost model's latency-aware bound
    exposed_s: float = 0.0  # the call's time with no other work beside it on its GPU (measured)
    placement: Any = None
    wait_s: float = 0.0  # matched across ranks: how long it waited for the last rank to arrive (measured)
    transfer_busbw: float | None = None  # matched: bus bandwidth of the transfer alone, the wait left out
    extrapolated: str = ""  # why the bound lies past what the profile measured (a larger group): no saving from it

    @property
    def fraction_of_nccl(self) -> float | None:
        return self.nccl_s / self.call.duration_s if self.nccl_s and self.call.duration_s > 0 else None

    @property
    def fraction_of_bound(self) -> float | None:
        return self.bound_s / self.call.duration_s if self.bound_s and self.call.duration_s > 0 else None

    def saving(self, target_s: float | None) -> float:
        """Inferred: what the step would lose if this call took `target_s`: the part of
        its transfer (its time less its wait for a late rank: no faster collective
        shortens that) above the target, no more than its exposed (measured) part."""
        if target_s is None:
            return 0.0
        return max(0.0, min(self.exposed_s, self.call.duration_s - self.wait_s - target_s))

    def to_dict(self) -> dict:
        c = self.call
        return {"rank": c.rank, "collective": c.collective, "dtype": c.dtype, "in_nelems": c.in_nelems,
                "out_nelems": c.out_nelems, "size_bytes": c.size_bytes, "group_size": c.group_size,
                "group_from": c.group_from, "process_group": c.process_group, "seq": c.seq, "source": c.source,
                "mechanism": c.mechanism,
                "kernel": c.kernel, "device": c.device, "stream": c.stream, "start_ns": c.start_ns,
                "duration_s": c.duration_s, "algbw": c.algbw, "busbw": c.busbw, "exposed_s": self.exposed_s,
                "wait_s": self.wait_s, "transfer_busbw": self.transfer_busbw,
                "nccl_s": self.nccl_s, "nccl_how": self.nccl_how, "fraction_of_nccl": self.fraction_of_nccl,
                "bound_s": self.bound_s, "fraction_of_bound": self.fraction_of_bound,
                "bound_extrapolated": self.extrapolated or None, "notes": list(c.notes)}


@dataclass
class TraceReport:
    traces: list[Trace]
    rows: list[CollectiveRow]
    steps: list[Any]  # roofline.traces.StepSummary, with savings beside
    savings: list[tuple[float, float]]  # per step: (at NCCL's speed, at the bound), inferred
    matched: list[Any]
    warnings: list[str]
    unmatched: list[Any] = field(default_factory=list)
    match: Any = None  # roofline.traces.MatchSummary where several ranks were given

    def to_dict(self) -> dict:
        import dataclasses as dc

        return {"files": [t.path for t in self.traces], "ranks": [t.rank for t in self.traces],
                "collectives": [r.to_dict() for r in self.rows],
                "steps": [{**{k: v for k, v in dc.asdict(s).items()}, "span_s": s.span_s,
                           "saving_at_nccl_s": a, "saving_at_bound_s": b} for s, (a, b) in zip(self.steps,
                                                                                             self.savings)],
                "across_ranks": [{**dc.asdict(m), "busbw": m.busbw} for m in self.matched],
                "unmatched": [dc.asdict(u) for u in self.unmatched],
                "matching": None if self.match is None else {**dc.asdict(self.match), "said": self.match.line()},
                "warnings": self.warnings}

    def to_dataframe(self) -> Any:
        import pandas as pd

        return pd.DataFrame([r.to_dict() for r in self.rows])


def machine_warnings(traces: list[Trace], topology: Any) -> list[str]:
    """Where the trace's GPUs are not this profile's: the trace names them
    (deviceProperties), the profile's topology names its own."""
    out = []
    if topology is None:
        return out
    mine = {g.name for g in topology.gpus}
    by_gpus: dict[tuple[str, ...], list[str]] = {}  # one warning per set of GPUs, naming its files, not one per rank
    for t in traces:
        names = {str(d.get("name")) for d in t.devices if isinstance(d, dict) and d.get("name")}
        if names and mine and not names & mine:
            by_gpus.setdefault(tuple(sorted(names)), []).append(Path(t.path).name)
    for names, files in by_gpus.items():
        which = files[0] if len(files) == 1 else (f"{len(files)} ranks' traces ({', '.join(files[:3])}"
                                                   + (" ..." if len(files) > 3 else "") + ")")
        out.append(f"{which} {'was' if len(files) == 1 else 'were'} recorded on {', '.join(names)}; the profile "
                   f"placed against describes {', '.join(sorted(mine))}: the figures compare another machine's run "
                   "with this one's")
    return out


@dataclass
class RankPart:
    """The per-rank step (the map): one rank's collectives placed and its steps summed,
    compact (no intervals), with the rows each step holds; `trace` is the rank's
    reading, or a light copy of it without its intervals where it crossed processes."""

    trace: Trace
    rows: list[CollectiveRow]
    steps: list[Any]  # roofline.traces.StepSummary
    step_rows: list[list[int]]  # per step, the indices of its rows


def rank_part(t: Trace, profile: Any, model: Any = None, placed: dict | None = None) -> RankPart:
    """One rank's collectives against the profile, and its steps: everything that needs
    its intervals, so that matching across ranks needs only the result."""
    from ..roofline.model import MachineModel
    from ..roofline.traces import ActivityIndex, check_steps, exposed_s, step_summaries, trace_totals

    model = model or MachineModel.from_profile(profile)
    placed = {} if placed is None else placed
    calls = t.collectives()
    local = t.local_ids()  # one-rank groups: no communication (issue 45: 64 us a step counted exposed)
    comm_ids = t.comm_ids() - local
    acts = Activities.of(t.activities)
    index = ActivityIndex(acts)
    rows = []
    for c in calls:
        row = CollectiveRow(c, exposed_s=0.0 if c.group_size == 1 else
                            exposed_s(c, index.overlapping(c.start_ns, c.end_ns), comm_ids))
        if c.collective and c.size_bytes and c.group_size and c.group_size > 1:
            place_row(row, c, c.duration_s, profile, model, placed,
                      (c.collective, c.size_bytes, c.group_size, c.dtype, c.rank))
        elif c.group_size == 1:
            row.nccl_how = "a one-rank group: nothing crosses a link"
        else:
            row.nccl_how = "not placed: " + ("size unknown" if not c.size_bytes else "group size unknown")
        rows.append(row)
    windows = t.steps or ([("whole trace", min(acts.start), max(acts.end))] if len(acts) else [])
    step_of = t.step_of if t.steps and len(t.step_of) == len(t.activities) else \
        (array("i", [0]) * len(acts) if not t.steps else _by_window(t.steps, acts, array("i", [-1]) * len(acts)))
    # each kernel in one step only: the one whose host range launched it
    steps = step_summaries(t.rank, windows, acts, step_of, comm_ids, local)
    check_steps(steps, trace_totals(acts, comm_ids, local), t.path)
    step_rows: list[list[int]] = [[] for _ in windows]
    for i, row in enumerate(t.found_rows()):
        if step_of[row] >= 0:
            step_rows[step_of[row]].append(i)
    note = silent_note(t.silent_ops(), t.groups)
    if note and note not in t.notes:
        t.notes.append(note)
    return RankPart(t, rows, steps, step_rows)


def silent_note(ops: Sequence[CommOp], groups: dict[str, int]) -> str | None:
    """One line for the collective ops that launched no GPU work: how many, of which
    collectives and groups, and why where the group says (one rank: NCCL does nothing)."""
    if not ops:
        return None
    from collections import Counter

    def size(o: CommOp) -> int | None:
        g = o.args.get("Group size")
        g = g if type(g) is int else groups.get(str(o.args.get("Process Group Name", "")))
        return g

    kinds = Counter((collective_name(o.args.get("Collective name")),
                     str(o.args.get("Process Group Description") or o.args.get("Process Group Name") or "?"), size(o))
                    for o in ops)
    parts = [f"{n} {c} on group {g!r}" + (f" of {s} rank{'s' if s != 1 else ''}" if s else "")
             for (c, g, s), n in sorted(kinds.items(), key=lambda kv: (-kv[1], str(kv[0])))[:4]]
    one = all(s == 1 for _, _, s in kinds)
    why = ("a one-rank group's collective does nothing on the GPU (NCCL returns at once), so nothing is placed" if one
           else "the profiler recorded no GPU activity inside them (a window cut at the call, or GPU events dropped): "
                "they are not rows, and the steps' communication leaves them out")
    return (f"{len(ops)} collective op(s) launched no GPU work: {', '.join(parts)}"
            + (f" and {len(kinds) - 4} more kinds" if len(kinds) > 4 else "") + f"; {why}")


def light(t: Trace) -> Trace:
    """The trace without its intervals and host records: what a report of hundreds of
    ranks keeps of each (the Trace page draws timelines from full traces only)."""
    return dataclasses.replace(t, activities=[], kernel_args=[], launches={}, ops=[], step_of=[])


def combine(parts: list[RankPart], profile: Any, tolerance_s: float | None = None) -> TraceReport:
    """The reduce: calls matched across ranks (never different calls), each row's wait
    for the last rank and the transfer's busbw, each step's savings bounded by the
    step's exposed communication and its span. `tolerance_s`: how far apart one call's
    kernels on two ranks may seem (default CLOCK_TOLERANCE_S, 1 ms)."""
    from ..roofline.traces import CLOCK_TOLERANCE_S, match_calls, match_summary

    tolerance_s = CLOCK_TOLERANCE_S if tolerance_s is None else tolerance_s

    traces = [p.trace for p in parts]
    rows = [r for p in parts for r in p.rows]
    matched, unmatched = match_calls([r.call for r in rows], tolerance_s) if len(parts) > 1 else ([], [])
    summary = match_summary(len(rows), matched, unmatched, tolerance_s) if len(parts) > 1 else None
    members = _member_index(rows)
    matched, inferred = infer_world_groups(matched, traces, profile, members)
    for m in matched:
        for rank, w in m.waits_s:
            for r in members(m, rank):
                r.wait_s, r.transfer_busbw = w, m.busbw
    steps, savings = [], []
    for p in parts:
        for st, idx in zip(p.steps, p.step_rows):
            inside = [p.rows[i] for i in idx]
            steps.append(st)
            # calls that ran at once share their exposed time: the step saves at most its exposed
            # communication (the union), and never more than the step itself
            cap = min(st.exposed_s, st.span_s)
            # a bound extrapolated past the profile (a larger group than it measured) saves nothing
            savings.append((min(cap, sum(r.saving(r.nccl_s) for r in inside)),
                            min(cap, sum(r.saving(None if r.extrapolated else r.bound_s) for r in inside))))
    warnings = machine_warnings(traces, profile.topologies[0] if getattr(profile, "topologies", None) else None)
    for t in traces:
        warnings += [f"{Path(t.path).name}: {n}" for n in t.notes]
    warnings += job_warnings(traces)
    past = [r for r in rows if r.extrapolated]
    if past:
        warnings.append(f"{len(past)} call(s) on groups larger than the profile measured ({past[0].extrapolated}): "
                        "their bounds are extrapolated, labelled so, and left out of the savings at the bound")
    if summary is not None and summary.unmatched_calls:
        warnings.append(summary.line() + "; --json lists the unmatched with why")
    if inferred:
        warnings.append(f"{inferred} call(s) whose trace names no group were matched on every rank of the world: "
                        "their group taken as the world (inferred), and placed")
    return TraceReport(traces, rows, steps, savings, matched, warnings, unmatched, summary)


def infer_world_groups(matched: list, traces: list[Trace], profile: Any, members: Any) -> tuple[list, int]:
    """Matched calls whose trace names no group (a 2023-era trace with no pg_config, its
    ops no group size) but whose kernels were matched on every rank of the world: their
    group holds every rank, so its size is the world's (inferred, and said on each row),
    and each member row is placed at it. Only where the traces say one world size and the
    call's ranks are all of it. Returns the matched calls and how many rows were inferred."""
    from ..roofline.model import MachineModel

    worlds = {t.world_size for t in traces}
    world = next(iter(worlds)) if len(worlds) == 1 else None
    if not world or world < 2:
        return matched, 0
    model, placed, n, out = None, {}, 0, []
    why = f"inferred: matched on all {world} ranks of the world (the trace names no group)"
    for m in matched:
        if m.group_size is None and set(m.ranks) == set(range(world)):
            m = dataclasses.replace(m, group_size=world)
            for rank in sorted(set(m.ranks)):
                for r in members(m, rank):
                    c = dataclasses.replace(r.call, group_size=world, group_from=why)
                    r.call = c
                    n += 1
                    if c.collective and c.size_bytes:
                        model = model or MachineModel.from_profile(profile)
                        place_row(r, c, c.duration_s, profile, model, placed,
                                  (c.collective, c.size_bytes, c.group_size, c.dtype, c.rank))
        out.append(m)
    return out, n


def analyze(traces: list[Trace], profile: Any, tolerance_s: float | None = None) -> TraceReport:
    """Every collective of the traces against the profile's NCCL figures and cost model;
    each step's time by class, overlapped and exposed communication; the ranks matched."""
    from ..roofline.model import MachineModel

    model, placed = MachineModel.from_profile(profile), {}
    return combine([rank_part(t, profile, model, placed) for t in traces], profile, tolerance_s)


def _part_of_file(path: str, profile: Any) -> RankPart:
    """The map of a job read elsewhere (another process, a Dask worker): the rank's part
    with a light trace, so that only compact results travel back."""
    part = rank_part(read_trace(path), profile)
    part.trace = light(part.trace)
    return part


def analyze_job(paths: list[str], profile: Any, engine: str = "local", workers: int | None = None,
                scheduler: str | None = None, progress: Any = None, tolerance_s: float | None = None) -> TraceReport:
    """Many ranks' traces read and placed where they are cheapest to read, then matched:
    `engine` "local" maps the ranks over local processes (one per core, or `workers`);
    "dask" over a Dask cluster (`scheduler`: a scheduler's address, or None for a local
    cluster of `workers` processes). The report keeps light traces (no intervals)."""
    if engine not in ("local", "dask"):
        raise TraceError(f"engine {engine!r}: local or dask")
    check_files(paths)
    if engine == "dask":
        parts = _map_dask(paths, profile, workers, scheduler, progress)
    else:
        n = min(len(paths), workers or os.cpu_count() or 1, os.cpu_count() or 1)  # never more processes than cores
        if n <= 1:
            parts = [_part_of_file(p, profile) for p in paths]
        else:
            import concurrent.futures as cf
            import multiprocessing as mp

            with cf.ProcessPoolExecutor(n, mp_context=mp.get_context("fork")) as pool:
                futures = [pool.submit(_part_of_file, p, profile) for p in paths]
                for done, _ in enumerate(cf.as_completed(futures), 1):
                    if progress is not None:
                        progress(done, len(paths), f"read and placed {done} of {len(paths)} ranks")
                parts = [f.result() for f in futures]
    check_job([p.trace for p in parts])
    return combine(parts, profile, tolerance_s)


def _map_dask(paths: list[str], profile: Any, workers: int | None, scheduler: str | None, progress: Any) -> list:
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise TraceError("the Dask engine needs dask.distributed: pip install 'linkroof[dask]'") from None
    cluster = None
    if scheduler is not None:
        check_scheduler(scheduler)
    else:  # a local cluster: never more worker processes than files or cores
        cluster = LocalCluster(n_workers=min(len(paths), workers or os.cpu_count() or 1, os.cpu_count() or 1),
                               threads_per_worker=1, processes=True, dashboard_address=None)
    try:
        with Client(cluster or scheduler) as client:
            futures = client.map(_part_of_file, paths, profile=profile, pure=False)
            for done, _ in enumerate(as_completed(futures), 1):
                if progress is not None:
                    progress(done, len(paths), f"read and placed {done} of {len(paths)} ranks (Dask)")
            return client.gather(futures)
    except TraceError:
        raise
    except OSError as e:
        raise TraceError(f"cannot reach the Dask scheduler {scheduler}: {e}") from None
    finally:
        if cluster is not None:
            cluster.close()


def check_scheduler(address: str) -> str:
    """A Dask scheduler's address as Dask parses it (tcp://host:8786, tls://..., or
    host:port), else TraceError naming what is wrong, before any connection."""
    try:
        from distributed.comm import parse_address
        from distributed.comm.addressing import parse_host_port
    except ImportError:
        raise TraceError("the Dask engine needs dask.distributed: pip install 'linkroof[dask]'") from None
    if not isinstance(address, str) or not address.strip() or any(c.isspace() for c in address):
        raise TraceError(f"--scheduler {address!r}: not a Dask scheduler's address (give tcp://host:8786)")
    try:
        scheme, where = parse_address(address)
        from distributed.comm.registry import backends

        if scheme not in backends:
            raise ValueError(f"no Dask transport {scheme!r}: one of {', '.join(sorted(backends))}")
        if scheme in ("tcp", "tls", "ws", "wss"):
            parse_host_port(where)
            port = int(where.rsplit(":", 1)[1])
            if not 0 < port < 65536:
                raise ValueError(f"port {port} is not 1 to 65535")
    except (ValueError, TypeError, IndexError) as e:
        raise TraceError(f"--scheduler {address!r}: not a Dask scheduler's address ({e}; give tcp://host:8786)") \
            from None
    return address


def place_row(row: Any, c: Any, time_s: float | None, profile: Any, model: Any, placed: dict, key: tuple) -> None:
    """Sets a row's NCCL time, how it was found, placement and bound for a call of
    `time_s` (None: not timed, no placement): one baseline, bound and roofline terms per
    `key` (collective, size, type, group), kept in `placed`."""
    from ..roofline.cost import with_bound

    if key not in placed:
        placed[key] = _placed_kind(c, profile, model)
    got = placed[key]
    if isinstance(got, str):
        row.nccl_how = got
        return
    p0, bound, row.nccl_s, row.nccl_how, past = got
    if past:
        row.extrapolated = past  # a TelemetryRow too: the label travels with the row
        row.nccl_how += f"; the bound is extrapolated: {past}"
    if time_s:
        p = dataclasses.replace(p0, measured_time_s=time_s)
        row.placement = with_bound(p, bound, row.nccl_s) if bound is not None else p
        row.bound_s = row.placement.cost_bound_s or None


def _placed_kind(c: Any, profile: Any, model: Any) -> Any:
    """(placement at 1 s, cost bound or None, NCCL's time or None, how) for a call's
    collective, size, type and group, or why it is not placed."""
    from ..roofline.baseline import nccl_baseline
    from ..roofline.cost import CostError, cost_bound
    from ..roofline.place import PlacementError, place
    from ..roofline.workload import WorkloadError, collective

    try:
        wl = collective(c.collective, c.size_bytes, c.group_size)
        wl = dataclasses.replace(wl, params={"dtype": c.dtype or "fp32"},
                                 name=f"trace {c.collective} {c.size_bytes} B {c.dtype} x{c.group_size}"
                                      + (f" rank {c.rank}" if c.rank is not None else ""))
        base = nccl_baseline(profile, wl)
        nccl_s = None
        if base is not None and base.ranks == c.group_size:
            nccl_s, how = base.median_s, f"{base.dtype}, {base.how}"
        elif base is not None:
            how = f"the profile has NCCL on {base.ranks} ranks only, not {c.group_size}"
        else:
            how = "the profile has no NCCL figure for this collective"
        p0 = place(wl, 1.0, model, "measured")
        try:
            bound = cost_bound(wl, profile, model)
        except CostError as e:
            bound = None
            p0 = dataclasses.replace(p0, cost_notes=(f"cost model not computed: {e}",))
        return p0, bound, nccl_s, how, past_the_profile(profile, c.group_size)
    except (WorkloadError, PlacementError) as e:
        return f"not placed: {e}"


def past_the_profile(profile: Any, ranks: int | None) -> str:
    """Why a group of `ranks` lies past what `profile` measured (more GPUs than it had,
    or so more nodes than it spans), or "" where it does not."""
    topos = list(getattr(profile, "topologies", None) or [])
    gpus = sum(len(getattr(t, "gpus", []) or []) for t in topos)
    if not ranks or not gpus or ranks <= gpus:
        return ""
    per_node = max(len(getattr(t, "gpus", []) or []) for t in topos)
    nodes = -(-ranks // per_node)
    return (f"the profile measured {gpus} GPU(s) on {len(topos)} node(s); a group of {ranks} ranks needs more "
            f"(on nodes like these, {nodes})")


def _member_index(rows: list[CollectiveRow]) -> Any:
    """rows -> a function (matched call, rank) -> the rows of that rank it holds (each
    member by its rank, device, stream and kernel start)."""
    from ..roofline.traces import member

    by: dict[tuple, list[CollectiveRow]] = {}
    for r in rows:
        by.setdefault(member(r.call), []).append(r)

    def members(m: Any, rank: int) -> list[CollectiveRow]:
        return [r for x in m.members if x[0] == rank for r in by.get(x, [])]

    return members
