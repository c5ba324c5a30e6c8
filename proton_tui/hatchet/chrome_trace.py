"""Reading Proton's Chrome traces (`-d trace` → `<name>.chrome_trace`) into the model of `trace.py`: the 3.6 shape
(kernel `X` events whose `tid` is the stream, `args.call_stack`), the ≥ 3.8 lanes (metadata `M` events name CPU
threads and GPU streams; `launch->kernel` flow events; `scope` and `metric` events) and 3.9's
`baseTimeNanoseconds`. Times in the file are µs (Chrome's unit); in the model they are ns from the trace's first
event."""

from __future__ import annotations

import re

import msgspec
import numpy as np

from proton_tui.hatchet.columns import NO_ARGS, Columns, arg_tables
from proton_tui.hatchet.trace import CPU, GPU, OTHER, WARP, WARP_PID, Lane, Trace, launch_metrics

NS_PER_US = 1000.0


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


class RawTrace(msgspec.Struct, gc=False):
    traceEvents: list[RawEvent]
    baseTimeNanoseconds: int | None = None


TRACE_DOCUMENT = msgspec.json.Decoder(RawTrace)
FIELD_AT = re.compile(r"\$\.traceEvents\[(\d+)\](?:\.(\w+))?")


def decode_trace(data) -> Trace:
    """A `.chrome_trace` file's bytes as a Trace, decoded straight into compact structures; TraceError, or
    msgspec's DecodeError for bytes that are not JSON (the caller's parser words that)."""
    try:
        raw = TRACE_DOCUMENT.decode(data)  # its events' Raw arguments point into `data` until each is read
    except msgspec.ValidationError as error:
        if "missing required field `traceEvents`" in str(error):
            raise NotATrace(str(error)) from None
        raise TraceError(_validation_text(error)) from None
    return _read(raw)


def read_trace(document: dict) -> Trace:
    """A parsed `.chrome_trace` document as a Trace; TraceError for one that is not Proton's shape."""
    return decode_trace(msgspec.json.encode(document))


def _validation_text(error: msgspec.ValidationError) -> str:
    text = str(error)
    found = FIELD_AT.search(text)
    if found is None:
        return "'traceEvents' is not a list" if "traceEvents" in text else text
    number, field = int(found[1]), found[2]
    if field is None:
        return f"event {number} is not an object"
    if field in ("ts", "dur"):
        return f"event {number}: 'ts'/'dur' are not times"
    return f"event {number}: '{field}' {text.split(' - at ')[0].lower()}"


def _read(raw: RawTrace) -> Trace:
    """Lanes, events as columns (their names, categories, call stacks and argument texts interned) and flows from
    the decoded file; the decoded events are let go once their columns are made."""
    events_in, base = raw.traceEvents, raw.baseTimeNanoseconds
    del raw
    names, orders = _lane_metadata(events_in)
    complete = [event for event in events_in if event.ph == "X"]
    starts = [(event.pid, event.tid, event.ts, event.id) for event in events_in
              if event.ph == "s" and _number(event.ts)]
    finishes = [(event.pid, event.tid, event.ts, event.id) for event in events_in
                if event.ph == "f" and _number(event.ts)]
    metric_events = sum(1 for event in events_in if event.cat == "metric" and event.ph != "X"
                        and not (event.ph in ("s", "f") and _number(event.ts)))
    ts = np.array([event.ts for event in complete], dtype=np.float64)  # null (a missing time) reads as NaN
    dur = np.array([0.0 if event.dur is None else event.dur for event in complete], dtype=np.float64)
    bad = ~np.isfinite(ts) | ~np.isfinite(dur) | (dur < 0)
    if bad.any():
        event = complete[int(np.argmax(bad))]
        number = next(at for at, found in enumerate(events_in) if found is event)
        raise TraceError(f"event {number} ({event.name!r}): 'ts'/'dur' are not times")
    lane_of: dict[tuple, int] = {}
    lane = np.array([lane_of.setdefault((event.pid, event.tid), len(lane_of)) for event in complete], dtype=np.int32)
    interned: tuple[dict, dict, dict] = ({}, {}, {})
    name_ids, category_ids, arg_ids = interned
    name = np.array([name_ids.setdefault(event.name, len(name_ids)) for event in complete], dtype=np.int32)
    category = np.array([category_ids.setdefault(event.cat, len(category_ids)) for event in complete], dtype=np.int32)
    arg = np.array([arg_ids.setdefault(bytes(event.args), len(arg_ids)) for event in complete], dtype=np.int32)
    del complete, events_in
    args = list(arg_ids)
    stack_of_arg, stacks, metrics = arg_tables(args, launch_metrics)
    lanes = [_lane(key, names, orders) for key in lane_of]
    order = sorted(range(len(lanes)), key=lambda i: (lanes[i].order, str(lanes[i].name)))
    renumber = np.empty(len(lanes), dtype=np.int32)
    renumber[order] = np.arange(len(lanes), dtype=np.int32)
    lane = renumber[lane] if len(lanes) else lane
    start = ts * NS_PER_US
    origin = start.min() if len(start) else 0.0
    start -= origin
    duration = dur * NS_PER_US
    by = np.lexsort((start, lane))  # stable: equal starts keep the file's order
    columns = Columns(start[by], duration[by], lane[by], name[by], category[by],
                      stack_of_arg[arg[by]] if len(args) else arg, arg[by], list(name_ids), list(category_ids),
                      stacks, args, metrics)
    lanes = [lanes[i] for i in order]
    lane_number = {key: int(renumber[old]) for old, key in enumerate(lane_of)}
    flow_count, launches = _flows(columns, lane_number, starts, finishes, float(origin))
    return Trace(lanes, columns, flow_count, launches, base, metric_events)


def _lane_metadata(events: list[RawEvent]) -> tuple[dict[tuple, str], dict[tuple, float]]:
    """The lanes' names and sort indices, from the metadata (`M`) events, by (pid, tid)."""
    names: dict[tuple, str] = {}
    orders: dict[tuple, float] = {}
    for event in events:
        if event.ph == "M":
            key, args = (event.pid, event.tid), _args(event)
            if event.name == "thread_name" and isinstance(args.get("name"), str):
                names[key] = args["name"]
            elif event.name == "thread_sort_index" and _number(args.get("sort_index")):
                orders[key] = float(args["sort_index"])
    return names, orders


def _args(event: RawEvent) -> dict:
    """An event's arguments, decoded now (an object, else none)."""
    try:
        args = msgspec.json.decode(event.args) if isinstance(event.args, msgspec.Raw) else event.args
    except msgspec.DecodeError:
        return NO_ARGS
    return args if isinstance(args, dict) else NO_ARGS


def _lane(key: tuple, names: dict, orders: dict) -> Lane:
    name = names.get(key)
    pid, tid = key
    if name is None and isinstance(pid, str) and WARP_PID.fullmatch(pid) and str(tid).startswith("warp"):
        return Lane(pid, tid, f"{pid} {tid}", WARP, 0.0)  # a warp of one CTA of an instrumented kernel
    if name is None:  # 3.6: no metadata, the tid is the stream
        name, kind = f"stream {key[1]}", GPU
    else:
        lowered = name.lower()
        kind = GPU if "gpu" in lowered or "stream" in lowered else CPU if "cpu" in lowered or "thread" in lowered \
            else OTHER
    order = orders.get(key, float(key[1]) if isinstance(key[1], (int, float)) else 0.0)
    return Lane(key[0], key[1], name, kind, order)


def _flows(columns: Columns, lane_of: dict, starts: list, finishes: list, origin: float) -> tuple[int, dict[int, int]]:
    """How many `launch->kernel` flows end at a kernel's start, and, where a flow starts at an event on a CPU lane,
    which event launched which kernel (kernel index → launch index)."""
    if not starts or not finishes or not len(columns):
        return 0, {}
    def at(flows: list) -> np.ndarray:
        """The event each flow point is at: on its lane, starting at its time (-1: none)."""
        lanes = np.array([lane_of.get((pid, tid), -1) for pid, tid, _, _ in flows], dtype=np.int64)
        times = np.array([ts for _, _, ts, _ in flows], dtype=np.float64) * NS_PER_US - origin
        # events are sorted by lane, then start: search (lane, rank of time) pairs, ranks being exact
        distinct, rank = np.unique(np.concatenate([columns.start, times]), return_inverse=True)
        span = np.int64(len(distinct))
        keys = columns.lane.astype(np.int64) * span + rank[:len(columns)]
        wanted = lanes * span + rank[len(columns):]
        where = np.searchsorted(keys, wanted)
        found = np.minimum(where, len(keys) - 1)
        return np.where((lanes >= 0) & (where < len(keys)) & (keys[found] == wanted), found, -1)

    launched_by = {}
    for (_, _, _, flow_id), launch in zip(starts, at(starts).tolist()):
        if launch >= 0:
            launched_by[flow_id] = launch
    start_ids = {flow_id for _, _, _, flow_id in starts}
    kernel = columns.category_mask("kernel")
    count, launches = 0, {}
    for (_, _, _, flow_id), found in zip(finishes, at(finishes).tolist()):
        if found < 0 or flow_id not in start_ids or not kernel[found]:
            continue
        count += 1
        if flow_id in launched_by:
            launches[found] = launched_by[flow_id]
    return count, launches


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value \
        and value not in (float("inf"), float("-inf"))


