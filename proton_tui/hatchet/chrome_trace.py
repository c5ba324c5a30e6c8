"""Reading Proton's Chrome traces (`-d trace` → `<name>.chrome_trace`) into the model of `trace.py`: the 3.6 shape
(kernel `X` events whose `tid` is the stream, `args.call_stack`), the ≥ 3.8 lanes (metadata `M` events name CPU
threads and GPU streams; `launch->kernel` flow events; `scope` and `metric` events) and 3.9's
`baseTimeNanoseconds`. Times in the file are µs (Chrome's unit); in the model they are ns from the trace's first
event."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from operator import attrgetter

import msgspec
import numpy as np

from proton_tui.hatchet.columns import NO_ARGS, Columns, IndexMap, arg_tables, interned_ids, order_by
from proton_tui.hatchet.lanes import CPU, GPU, KINDS, OTHER, WARP, LaneTable, launch_metrics, warp_site
from proton_tui.hatchet.trace import Trace

NS_PER_US = 1000.0
# How near a time's product in ns may be to a whole ns and stand for it, relative to it: twice the most that the µs
# read as a float and the product's rounding move it (2^-52 of it), so 1.001 µs is 1001 ns, not 1000.9999999999999
WHOLE_NS_WITHIN = 2.0 ** -51


class TraceError(ValueError):
    """A trace that cannot be read; the message says why (the reader adds the file)."""


class NotATrace(TraceError):
    """A JSON object without `traceEvents`: not a trace at all (the reader says what it is instead)."""


class RawEvent(msgspec.Struct, gc=False):
    """One event as the file has it (the fields proton-tui reads; others are skipped while decoding)."""

    ph: str = ""
    name: str = ""
    cat: str = ""
    ts: float | None = None
    dur: float | None = None
    pid: int | str | None = None
    tid: int | str | None = None
    id: int | str | None = None
    args: msgspec.Raw = msgspec.Raw(b"{}")  # kept as the file's bytes until read: most events' are never needed


class RawIndex(msgspec.Struct, gc=False):
    """The file's events left as their bytes (each a view into the file), read a piece at a time."""

    traceEvents: list[msgspec.Raw]
    baseTimeNanoseconds: int | None = None


TRACE_INDEX = msgspec.json.Decoder(RawIndex)
EVENTS = msgspec.json.Decoder(list[RawEvent])
FIELD_AT = re.compile(r"\$\.traceEvents\[(\d+)\](?:\.(\w+))?")
PIECE_AT = re.compile(r"\$\[(\d+)\]")
PIECE_EVENTS = 16384  # events decoded at a time: ~13 MB of objects in the 83 MB instrumentation trace, not all of it


def in_ns(us: np.ndarray) -> np.ndarray:
    """Times in µs as ns: the whole ns each stands for where its product is within the float's rounding of one (a
    Proton trace's µs are whole ns written with three decimals), else the product; one past the largest float is
    infinite (refused in `EventColumns.trace`)."""
    with np.errstate(over="ignore", invalid="ignore"):
        ns = us * NS_PER_US
        whole = np.rint(ns)
        return np.where(np.abs(ns - whole) <= WHOLE_NS_WITHIN * np.abs(ns), whole, ns)


def decode_trace(data) -> Trace:
    """A `.chrome_trace` file's bytes as a Trace, its events decoded a piece at a time into columns; TraceError, or
    msgspec's DecodeError for bytes that are not JSON (the caller's parser words that)."""
    try:
        index = TRACE_INDEX.decode(data)
    except msgspec.ValidationError as error:
        if "missing required field `traceEvents`" in str(error):
            raise NotATrace(str(error)) from None
        raise TraceError(_validation_text(str(error))) from None
    pieces, base = index.traceEvents, index.baseTimeNanoseconds
    del index
    columns = EventColumns()
    for first in range(0, len(pieces), PIECE_EVENTS):
        try:
            events = EVENTS.decode(b"[" + b",".join(pieces[first:first + PIECE_EVENTS]) + b"]")
        except msgspec.ValidationError as error:
            text = PIECE_AT.sub(lambda found: f"$.traceEvents[{first + int(found[1])}]", str(error), count=1)
            raise TraceError(_validation_text(text)) from None
        pieces[first:first + PIECE_EVENTS] = [None] * len(events)  # read: let the views into the file go
        columns.add(events, first)
    return columns.trace(base)


def read_trace(document: dict) -> Trace:
    """A parsed `.chrome_trace` document as a Trace; TraceError for one that is not Proton's shape."""
    return decode_trace(msgspec.json.encode(document))


def _validation_text(text: str) -> str:
    found = FIELD_AT.search(text)
    if found is None:
        return "'traceEvents' is not a list" if "traceEvents" in text else text
    number, field = int(found[1]), found[2]
    if field is None:
        return f"event {number} is not an object"
    if field in ("ts", "dur"):
        return f"event {number}: 'ts'/'dur' are not times"
    return f"event {number}: '{field}' {text.split(' - at ')[0].lower()}"


PH, PID, TID, NAME, CATEGORY, ARGS_OF, TS, DUR, ID = (attrgetter(name) for name in ("ph", "pid", "tid", "name", "cat",
                                                                                 "args", "ts", "dur", "id"))


SIDE = 0xFFFFFFFF  # a packed pair's tid side; its pid side is above it (`>> 32`)


class Pairs:
    """(pid, tid) pairs numbered in the order they first come, each side interned on its own and the pairs found by
    array operations: no tuple is made per event, nor per pair until its lane is made. `packed` holds each pair's
    two side ids in one number, by the pair's number."""

    def __init__(self) -> None:
        self.sides: tuple[dict, dict] = ({}, {})
        self.values: tuple[list, list] = ([], [])
        self.packed = np.zeros(0, dtype=np.int64)
        self._sorted = np.zeros(0, dtype=np.int64)  # `packed` in ascending order, and each one's number
        self._numbers = np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.packed)

    def ids(self, pids: list, tids: list) -> np.ndarray:
        """The pairs (pids[i], tids[i]) as numbers, new ones taken in."""
        first, second = (interned_ids(values, side, taken) for values, side, taken in zip((pids, tids), self.sides,
                                                                                   self.values))
        return self._numbered(first.astype(np.int64) << 32 | second)

    def taken_in(self, later: Pairs) -> np.ndarray:
        """`later`'s pairs (by their numbers there) as numbers here, new ones taken in, in their order there."""
        pid_ids, tid_ids = (interned_ids(values, side, taken).astype(np.int64) for values, side, taken
                            in zip(later.values, self.sides, self.values))
        return self._numbered(pid_ids[later.packed >> 32] << 32 | tid_ids[later.packed & SIDE])

    def found_in(self, other: Pairs) -> np.ndarray:
        """The number here of each of `other`'s pairs (-1: not here)."""
        pid_ids, tid_ids = (np.array([side.get(value, -1) for value in values], dtype=np.int64)
                            for values, side in zip(other.values, self.sides))
        pid, tid = pid_ids[other.packed >> 32], tid_ids[other.packed & SIDE]
        return np.where((pid >= 0) & (tid >= 0), self._lookup(pid << 32 | tid), -1)

    def _lookup(self, packed: np.ndarray) -> np.ndarray:
        """Each packed pair's number (-1: not here)."""
        if not len(self._sorted):
            return np.full(len(packed), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self._sorted, packed), len(self._sorted) - 1)
        return np.where(self._sorted[at] == packed, self._numbers[at], -1)

    def _numbered(self, packed: np.ndarray) -> np.ndarray:
        """The packed pairs' numbers, each new one numbered after the others in the order it first comes."""
        distinct, where, inverse = np.unique(packed, return_index=True, return_inverse=True)
        numbers = self._lookup(distinct)
        new = np.flatnonzero(numbers < 0)  # in ascending order, as `distinct` is
        if len(new):
            first_come = new[np.argsort(where[new], kind="stable")]
            numbers[first_come] = np.arange(len(self.packed), len(self.packed) + len(new))
            self.packed = np.concatenate([self.packed, distinct[first_come]])
            at = np.searchsorted(self._sorted, distinct[new])
            self._sorted = np.insert(self._sorted, at, distinct[new])
            self._numbers = np.insert(self._numbers, at, numbers[new])
        return numbers.astype(np.int32)[inverse.reshape(-1)]


def _flow_ids(values: list, table: dict) -> np.ndarray:
    """Flow ids as numbers: a whole number from 0 up as it is; any other id (text, a float, none, a negative number,
    one past 64 bits) numbered in `table` and shifted below zero, apart from the numbers. Each id is read alone, so
    the ids around it (the piece it was decoded in) never change its number."""
    if all(type(value) is int for value in values):
        numbers = None
        try:
            numbers = np.array(values, dtype=np.int64)
        except OverflowError:
            pass
        if numbers is not None and (numbers >= 0).all():
            return numbers
    found = np.empty(len(values), dtype=np.int64)
    for at, value in enumerate(values):
        found[at] = value if type(value) is int and 0 <= value <= INT64_HIGH \
            else -1 - table.setdefault(value, len(table))
    return found


INT64_HIGH = (1 << 63) - 1


class EventColumns:
    """The columns of a trace gathered a piece of its events at a time: the complete (`X`) events' fields (times in
    ns), the flow points, the lanes' metadata; `trace` puts them in lane then start order."""

    def __init__(self) -> None:
        self.lane_keys = Pairs()
        self.names: dict = {}
        self.categories: dict = {}
        self.args: dict = {}
        self.flow_ids: dict = {}
        self.flow_keys = Pairs()  # the (pid, tid) of flow points
        self.parts: list[tuple[np.ndarray, ...]] = []
        self.flows: dict[str, list[tuple[np.ndarray, ...]]] = {"s": [], "f": []}
        self.lane_names: dict[tuple, str] = {}
        self.orders: dict[tuple, float] = {}
        self.process_names: dict[object, str] = {}
        self.metric_events = 0

    def add(self, events: list[RawEvent], first: int) -> None:
        """One piece of the file's events (`first`: the number of its first)."""
        phases = set(map(PH, events))
        if "M" in phases:
            names, orders, processes = _lane_metadata(events)
            self.lane_names.update(names)
            self.orders.update(orders)
            self.process_names.update(processes)
        complete = events if phases == {"X"} else [event for event in events if event.ph == "X"]
        ts = np.array(list(map(TS, complete)), dtype=np.float64)  # null (a missing time) reads as NaN
        dur = np.array(list(map(DUR, complete)), dtype=np.float64)
        dur[np.isnan(dur)] = 0.0  # no duration: an instant
        bad = ~np.isfinite(ts) | ~np.isfinite(dur) | (dur < 0)
        if bad.any():
            event = complete[int(np.argmax(bad))]
            number = first + next(at for at, found in enumerate(events) if found is event)
            raise TraceError(f"event {number} ({event.name!r}): 'ts'/'dur' are not times")
        ts, dur = in_ns(ts), in_ns(dur)
        self.parts.append((ts, dur, self.lane_keys.ids(list(map(PID, complete)), list(map(TID, complete))),
                           interned_ids(list(map(NAME, complete)), self.names),
                           interned_ids(list(map(CATEGORY, complete)), self.categories),
                           interned_ids(list(map(bytes, map(ARGS_OF, complete))), self.args)))
        if phases == {"X"}:
            return  # complete events alone: no lane metadata, no flow point, no metric event that is not complete
        for phase, found in self.flows.items():
            points = [event for event in events if event.ph == phase]
            times = np.array(list(map(TS, points)), dtype=np.float64)
            timed = np.isfinite(times)  # a flow point without a time is left out
            if not timed.all():
                points = [point for point, keep in zip(points, timed.tolist()) if keep]
                times = times[timed]
            if points:
                found.append((self.flow_keys.ids(list(map(PID, points)), list(map(TID, points))), in_ns(times),
                              _flow_ids(list(map(ID, points)), self.flow_ids)))
        self.metric_events += sum(1 for event in [event for event in events if event.cat == "metric"]
                                  if event.ph != "X" and not (event.ph in ("s", "f") and _number(event.ts)))

    def absorb(self, later: EventColumns) -> None:
        """The columns of the events that follow this one's in the file (gathered on their own), taken in: every
        interned value and (pid, tid) pair numbered as if this one had read them, in the order they first come."""
        names, categories, args = (interned_ids(list(table), own) for table, own in ((later.names, self.names),
                                                                           (later.categories, self.categories),
                                                                           (later.args, self.args)))
        lanes = self.lane_keys.taken_in(later.lane_keys)
        for ts, dur, lane, name, category, arg in later.parts:
            self.parts.append((ts, dur, lanes[lane], names[name], categories[category], args[arg]))
        flow_keys = self.flow_keys.taken_in(later.flow_keys)
        flow_ids = interned_ids(list(later.flow_ids), self.flow_ids).astype(np.int64)
        for phase, found in later.flows.items():
            for keys, times, ids in found:
                other = ids < 0
                ids = ids.copy()
                ids[other] = -1 - flow_ids[-1 - ids[other]]
                self.flows[phase].append((flow_keys[keys], times, ids))
        self.lane_names.update(later.lane_names)
        self.orders.update(later.orders)
        self.process_names.update(later.process_names)
        self.metric_events += later.metric_events

    def trace(self, base: int | None) -> Trace:
        ts, dur, lane, name, category, arg = (np.concatenate([part[at] for part in self.parts]) if self.parts
                                              else np.zeros(0, dtype=np.float64 if at < 2 else np.int32)
                                              for at in range(6))
        self.parts = []
        # lanes are the (pid, tid) pairs that hold complete events, in the order they first come, then sorted by
        # order then name (a stable sort by name, then one by order)
        lanes = _told_apart(_lanes(self.lane_keys, self.lane_names, self.orders), self.process_names)
        by_name = np.array(sorted(range(len(lanes)), key=lanes.names.__getitem__), dtype=np.int64)
        order = by_name[np.argsort(lanes.order[by_name], kind="stable")]
        number_of_key = np.zeros(len(lanes), dtype=np.int32)
        number_of_key[order] = np.arange(len(lanes), dtype=np.int32)
        lane = number_of_key[lane] if len(lanes) else lane
        on_lane = self.lane_keys.found_in(self.flow_keys)
        flow_lane = np.where(on_lane >= 0, number_of_key[np.maximum(on_lane, 0)] if len(lanes) else -1, -1)
        with np.errstate(over="ignore", invalid="ignore"):  # a time past the largest float: refused below
            start, duration = ts, dur  # in ns since `add`
            origin = start.min() if len(start) else 0.0
            start -= origin
            past = np.flatnonzero(~np.isfinite(start) | ~np.isfinite(start + duration))
        if len(past):
            named = list(self.names)[name[past[0]]]
            raise TraceError(f"event '{named}': its time in ns ('ts' from the first event, plus 'dur') is past the "
                             f"largest float (1.8e308)")
        by = order_by(lane, start)  # stable: equal starts keep the file's order
        args = list(self.args)
        stack_of_arg, stacks, metrics = arg_tables(args, launch_metrics)
        columns = Columns(start[by], duration[by], lane[by], name[by], category[by],
                          stack_of_arg[arg[by]] if len(args) else arg, arg[by], list(self.names),
                          list(self.categories), stacks, args, metrics)
        flows = {phase: tuple(np.concatenate([part[at] for part in parts]) for at in range(3)) if parts else None
                 for phase, parts in self.flows.items()}
        for phase, found in flows.items():
            if found is not None:
                with np.errstate(over="ignore", invalid="ignore"):
                    times = found[1] - origin
                if not np.isfinite(times).all():
                    raise TraceError("a flow event's time in ns ('ts' from the first event) is past the largest float "
                                     "(1.8e308)")
                flows[phase] = (flow_lane[found[0]], times, found[2])
        flow_count, launches = _flows(columns, flows["s"], flows["f"])
        return Trace(lanes.taken(order), columns, flow_count, launches, base, self.metric_events)


def _lane_metadata(events: list[RawEvent]) -> tuple[dict[tuple, str], dict[tuple, float], dict[object, str]]:
    """The lanes' names and sort indices, from the metadata (`M`) events, by (pid, tid); the processes' names by
    pid."""
    names: dict[tuple, str] = {}
    orders: dict[tuple, float] = {}
    processes: dict[object, str] = {}
    for event in [event for event in events if event.ph == "M"]:
        key, args = (event.pid, event.tid), _args(event)
        if event.name == "thread_name" and isinstance(args.get("name"), str):
            names[key] = args["name"]
        elif event.name == "thread_sort_index" and _number(args.get("sort_index")):
            orders[key] = float(args["sort_index"])
        elif event.name == "process_name" and isinstance(args.get("name"), str):
            processes[event.pid] = args["name"]
    return names, orders, processes


def _told_apart(lanes: LaneTable, processes: dict[object, str]) -> LaneTable:
    """The lanes, each whose name a lane of another process has too named after its process first (the ranks of a
    merged trace each have a `CPU Thread 0`): `rank 1 · CPU Thread 0`; `python (pid 2) · …` where another process
    has that name too, `pid 2 · …` where the process has none."""
    names = lanes.names
    if len(set(names)) == len(names):  # every name its own (a warp per lane, say): none to tell
        return lanes
    pids = [lanes.pids[at] for at in lanes.pid.tolist()]
    pids_of: dict[str, set] = {}
    for name, pid in zip(names, pids):
        pids_of.setdefault(name, set()).add(pid)
    named = Counter(processes.get(pid) for pid in set(pids))

    def process(pid) -> str:
        name = processes.get(pid)
        return f"pid {_key_text(pid)}" if name is None else name if named[name] == 1 else \
            f"{name} (pid {_key_text(pid)})"

    shared = [at for at, name in enumerate(names) if len(pids_of[name]) > 1]
    told = list(names)
    for at in shared:
        told[at] = f"{process(pids[at])} · {names[at]}"
    own = {at: names[at] for at in shared}
    # lanes that still read alike (two threads of a process named alike; a pid or tid 1 beside "1") each say their
    # tid, then their pid too, as the file writes them
    tids = [lanes.tids[at] for at in lanes.tid.tolist()]
    base = list(told)
    for says in (lambda at: f"tid {_json_text(tids[at])}",
                 lambda at: f"pid {_json_text(pids[at])}, tid {_json_text(tids[at])}"):
        counts = Counter(told)
        alike = [at for at, name in enumerate(told) if counts[name] > 1]
        if not alike:
            break
        for at in alike:
            told[at] = f"{base[at]} ({says(at)})"
            own[at] = f"{names[at]} ({says(at)})"
    # a file whose lanes are named those very words: the second and later of a name numbered, never as another is
    counts, seen = Counter(told), Counter()
    for at, name in enumerate(list(told)):
        seen[name] += 1
        if counts[name] == 1 or seen[name] == 1:
            continue
        number = seen[name]
        while f"{name} #{number}" in counts:
            number += 1
        told[at] = f"{name} #{number}"
        counts[told[at]] += 1
        own[at] = f"{own.get(at, names[at])} #{number}"
    return LaneTable(lanes.pids, lanes.tids, lanes.pid, lanes.tid, told, lanes.kind, lanes.order, own)


def _key_text(value) -> str:
    """A pid or tid in a lane's name: as Python writes it, a missing one (null) as JSON does."""
    return "null" if value is None else str(value)


def _json_text(value) -> str:
    """A pid or tid as the file writes it (a text quoted), to tell apart lanes whose names read alike."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _args(event: RawEvent) -> dict:
    """An event's arguments, decoded now (an object, else none)."""
    try:
        args = msgspec.json.decode(event.args) if isinstance(event.args, msgspec.Raw) else event.args
    except msgspec.DecodeError:
        return NO_ARGS
    return args if isinstance(args, dict) else NO_ARGS


def _lanes(pairs: Pairs, names: dict, orders: dict) -> LaneTable:
    """The lanes of the (pid, tid) pairs, by number. A pair with no name in the metadata whose pid names a kernel, SM
    and CTA (`warp_site`) and whose tid begins with "warp" is a warp of one CTA of an instrumented kernel, named
    `<pid> <tid>`; each pid and tid is asked once (a CTA's pid names a lane per warp and line of it)."""
    pids, tids = pairs.values
    pid, tid = pairs.packed >> 32, pairs.packed & SIDE
    count = len(pid)
    warp = np.zeros(count, dtype=bool)
    if count:
        warp = np.array([isinstance(value, str) and warp_site(value) is not None for value in pids], dtype=bool)[pid] \
            & np.array([str(value).startswith("warp") for value in tids], dtype=bool)[tid]
    pid_at, tid_at = pid.tolist(), tid.tolist()
    if names:  # a warp's pair named in the metadata is that lane
        warp[[at for at in np.flatnonzero(warp).tolist() if (pids[pid_at[at]], tids[tid_at[at]]) in names]] = False
    pid_text, tid_text = [str(value) for value in pids], [str(value) for value in tids]
    lane_names = [f"{pid_text[p]} {tid_text[t]}" for p, t in zip(pid_at, tid_at)]
    kind = np.full(count, KINDS.index(WARP), dtype=np.int8)
    order = np.zeros(count, dtype=np.float64)
    for at in np.flatnonzero(~warp).tolist():
        lane_names[at], kind[at], order[at] = _lane((pids[pid_at[at]], tids[tid_at[at]]), names, orders)
    return LaneTable(pids, tids, pid, tid, lane_names, kind, order)


def _lane(key: tuple, names: dict, orders: dict) -> tuple[str, int, float]:
    """Any other lane's name, kind (an index into KINDS) and order: named in the metadata, or a stream of 3.6."""
    name = names.get(key)
    if name is None:  # 3.6: no metadata, the tid is the stream
        name, kind = f"stream {_key_text(key[1])}", GPU
    else:
        lowered = name.lower()
        kind = GPU if "gpu" in lowered or "stream" in lowered else CPU if "cpu" in lowered or "thread" in lowered \
            else OTHER
    return name, KINDS.index(kind), orders.get(key, _order_of(key[1]))


def _order_of(tid) -> float:
    """Where a lane without a sort index goes: by its tid when that is a number (one past the largest float goes
    after every other), else first."""
    if not isinstance(tid, (int, float)):
        return 0.0
    try:
        return float(tid)
    except OverflowError:
        return math.inf if tid > 0 else -math.inf


def _flows(columns: Columns, starts: tuple | None, finishes: tuple | None) -> tuple[int, dict[int, int]]:
    """How many `launch->kernel` flows end at a kernel's start, and, where a flow starts at an event on a CPU lane,
    which event launched which kernel (kernel index → launch index). A flow point is (lane, time, flow id)."""
    if starts is None or finishes is None or not len(columns):
        return 0, IndexMap(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    # events are sorted by lane, then start: search (lane, rank of time) pairs, the ranks being exact
    distinct, rank = np.unique(np.concatenate([columns.start, starts[1], finishes[1]]), return_inverse=True)
    span = np.int64(len(distinct))
    keys = columns.lane.astype(np.int64) * span + rank[:len(columns)]

    def at(lanes: np.ndarray, ranks: np.ndarray) -> np.ndarray:
        """The event each flow point is at: on its lane, starting at its time (-1: none)."""
        wanted = lanes.astype(np.int64) * span + ranks
        where = np.searchsorted(keys, wanted)
        found = np.minimum(where, len(keys) - 1)
        return np.where((lanes >= 0) & (where < len(keys)) & (keys[found] == wanted), found, -1)

    launch = at(starts[0], rank[len(columns):len(columns) + len(starts[1])])
    kernel = at(finishes[0], rank[len(columns) + len(starts[1]):])
    ids, dense = np.unique(np.concatenate([starts[2], finishes[2]]), return_inverse=True)
    start_ids, finish_ids = dense[:len(starts[2])], dense[len(starts[2]):]
    launched_by = np.full(len(ids), -1, dtype=np.int64)
    began = launch >= 0
    launched_by[start_ids[began]] = launch[began]  # the last start of an id wins, as in a dict
    started = np.zeros(len(ids), dtype=bool)
    started[start_ids] = True
    counted = (kernel >= 0) & started[finish_ids]
    counted[counted] &= columns.category_mask("kernel")[kernel[counted]]
    linked = np.flatnonzero(counted & (launched_by[finish_ids] >= 0))
    # a kernel reached by more than one flow: the last one's launch, as a dict would keep it
    kernels, last = np.unique(kernel[linked][::-1], return_index=True)
    return int(counted.sum()), IndexMap(kernels, launched_by[finish_ids[linked[::-1][last]]])


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value \
        and value not in (float("inf"), float("-inf"))


