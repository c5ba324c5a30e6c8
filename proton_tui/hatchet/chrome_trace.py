"""Reading Proton's Chrome traces (`-d trace` → `<name>.chrome_trace`) into the model of `trace.py`: the 3.6 shape
(kernel `X` events whose `tid` is the stream, `args.call_stack`), the ≥ 3.8 lanes (metadata `M` events name CPU
threads and GPU streams; `launch->kernel` flow events; `scope` and `metric` events) and 3.9's
`baseTimeNanoseconds`. Times in the file are µs (Chrome's unit); in the model they are ns from the trace's first
event."""

from __future__ import annotations

import bisect
import re

import msgspec

from proton_tui.hatchet.trace import CPU, GPU, NO_ARGS, OTHER, WARP, WARP_PID, Event, Lane, Trace

NS_PER_US = 1000.0


class TraceError(ValueError):
    """A trace that cannot be read; the message says why (the reader adds the file)."""


class NotATrace(TraceError):
    """A JSON object without `traceEvents`: not a trace at all (the reader says what it is instead)."""


def _shared(pool: dict, key, value=None):
    """One object for equal values (names, call stacks, argument sets repeat across thousands of events)."""
    found = pool.get(key)
    if found is None:
        found = pool[key] = key if value is None else value
    return found


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
    """Lanes, events (their names, call stacks and arguments shared between the events that repeat them) and flows
    from the decoded file; each raw event is let go once read, so the two never both hold the whole trace."""
    events_in, base = raw.traceEvents, raw.baseTimeNanoseconds
    names, orders = _lane_metadata(events_in)
    lanes: list[Lane] = []
    lane_of: dict[tuple, int] = {}
    keys: dict[tuple, tuple] = {}  # one (pid, tid) tuple per lane
    shared: dict = {}
    complete: list[Event] = []
    finishes: dict[tuple, list[tuple[float, object]]] = {}  # lane key → (flow-finish time, flow id)
    starts: list[tuple[tuple, float, object]] = []  # flow starts on a lane with complete events (CPU launches)
    start_ids: set = set()
    metric_events = 0
    for number in range(len(events_in)):
        event = events_in[number]
        events_in[number] = None  # read: let it go
        phase, key = event.ph, keys.setdefault((event.pid, event.tid), (event.pid, event.tid))
        if phase == "X":
            if key not in lane_of:
                lane_of[key] = len(lanes)
                lanes.append(_lane(key, names, orders))
            complete.append(_complete_event(number, event, lane_of[key], shared))
        elif phase == "s" and _number(event.ts):
            start_ids.add(event.id)
            starts.append((key, event.ts * NS_PER_US, event.id))
        elif phase == "f" and _number(event.ts):
            finishes.setdefault(key, []).append((event.ts * NS_PER_US, event.id))
        elif event.cat == "metric":
            metric_events += 1
    del events_in, raw
    origin = min((event.start for event in complete), default=0.0)
    lanes, renumber = _in_lane_order(complete, lanes, origin)
    lane_of = {key: renumber[value] for key, value in lane_of.items()}
    flow_count, launches = _flows(complete, lane_of, starts, start_ids, finishes, origin)
    return Trace(lanes, complete, flow_count, launches, base, metric_events)


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


def _complete_event(number: int, event: RawEvent, lane: int, shared: dict) -> Event:
    """A complete (`X`) event, its name, category, call stack and other arguments shared (`_shared`); TraceError
    when its times are not times."""
    ts, dur = event.ts, event.dur if event.dur is not None else 0.0
    if ts is None or not _number(ts) or not _number(dur) or dur < 0:
        raise TraceError(f"event {number} ({event.name!r}): 'ts'/'dur' are not times")
    args = _args(event)
    stack = args.get("call_stack")
    stack = _shared(shared, tuple(str(frame) for frame in stack)) if isinstance(stack, list) else ()
    rest = {k: v for k, v in args.items() if k != "call_stack"} if args else NO_ARGS
    if rest:
        rest = _shared(shared, ("args", msgspec.json.encode(rest)), rest)
    return Event(lane, _shared(shared, event.name), _shared(shared, event.cat), ts * NS_PER_US, dur * NS_PER_US,
                 stack, rest or NO_ARGS)


def _in_lane_order(events: list[Event], lanes: list[Lane], origin: float) -> tuple[list[Lane], dict[int, int]]:
    """The lanes in order (by sort index, then name) and each one's new number by its old one; the events counted
    from `origin`, renumbered so and sorted by lane then start."""
    order = sorted(range(len(lanes)), key=lambda i: (lanes[i].order, str(lanes[i].name)))
    renumber = {old: new for new, old in enumerate(order)}
    for event in events:
        event.start -= origin
        event.lane = renumber[event.lane]
    events.sort(key=lambda event: (event.lane, event.start))
    return [lanes[i] for i in order], renumber


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


def _flows(events: list[Event], lane_of: dict, starts: list, start_ids: set, finishes: dict,
           origin: float) -> tuple[int, dict[int, int]]:
    """How many `launch->kernel` flows end at a kernel's start, and, where a flow starts at an event on a CPU lane,
    which event launched which kernel (kernel index → launch index)."""
    by_lane: dict[int, tuple[list[float], int]] = {}  # lane → its events' starts (sorted) and its first index
    first = 0
    while first < len(events):
        lane, end = events[first].lane, first
        while end < len(events) and events[end].lane == lane:
            end += 1
        by_lane[lane] = ([events[i].start for i in range(first, end)], first)
        first = end

    def at(key, time: float) -> int | None:
        lane = lane_of.get(key)
        if lane is None or lane not in by_lane:
            return None
        times, offset = by_lane[lane]
        where = bisect.bisect_left(times, time - origin)
        return offset + where if where < len(times) and times[where] == time - origin else None

    launched_by = {}
    for key, time, flow_id in starts:
        if (launch := at(key, time)) is not None:
            launched_by[flow_id] = launch
    count, launches = 0, {}
    for key, ends in finishes.items():
        for time, flow_id in ends:
            kernel = at(key, time)
            if kernel is None or flow_id not in start_ids or events[kernel].category != "kernel":
                continue
            count += 1
            if flow_id in launched_by:
                launches[kernel] = launched_by[flow_id]
    return count, launches


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value \
        and value not in (float("inf"), float("-inf"))


