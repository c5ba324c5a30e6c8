"""Proton's Chrome traces (`-d trace` → `<name>.chrome_trace`): the 3.6 shape (kernel `X` events whose `tid` is the
stream, `args.call_stack`), the ≥ 3.8 lanes (metadata `M` events name CPU threads and GPU streams; `launch->kernel`
flow events; `scope` and `metric` events) and 3.9's `baseTimeNanoseconds`. Times in the file are µs (Chrome's
unit); here they are ns from the trace's first event.

A trace is read into `Trace` (lanes, events, flows) and into the same tree a `.hatchet` holds, its kernels summed
by call stack, so every view of a tree (table, flame view, kernel summary, JSON, CSV) reads a trace too."""

from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass, field

import msgspec

NS_PER_US = 1000.0
GPU, CPU, WARP, OTHER = "gpu", "cpu", "warp", "other"
# instrumentation traces: pid "<kernel> Core<SM> CTA<id>", tid "warp <w> (line <l>)"


class TraceError(ValueError):
    """A trace that cannot be read; the message says why (the reader adds the file)."""


class NotATrace(TraceError):
    """A JSON object without `traceEvents`: not a trace at all (the reader says what it is instead)."""


@dataclass(frozen=True)
class Lane:
    """One row of the timeline: a GPU stream, a CPU thread (≥ 3.8 names them), or a stream id alone (3.6)."""

    pid: object
    tid: object
    name: str
    kind: str
    order: float


NO_ARGS: dict = {}  # the arguments of every event that has none (shared: never changed)


def _shared(pool: dict, key, value=None):
    """One object for equal values (names, call stacks, argument sets repeat across thousands of events)."""
    found = pool.get(key)
    if found is None:
        found = pool[key] = key if value is None else value
    return found


@dataclass(slots=True)
class Event:
    """One complete (`X`) event: a kernel, a scope, or another category; start and duration in ns."""

    lane: int
    name: str
    category: str
    start: float
    duration: float
    call_stack: tuple[str, ...] = ()
    args: dict = field(default_factory=lambda: NO_ARGS)

    @property
    def end(self) -> float:
        return self.start + self.duration


@dataclass
class Trace:
    """Lanes, their events in lane then time order, how many launch → kernel flows the trace holds, and which
    event launched which kernel where the flow starts at an event (kernel index → launch index)."""

    lanes: list[Lane]
    events: list[Event]
    flow_count: int
    launches: dict[int, int]
    base_ns: int | None  # 3.9: the clock value the trace's times start from
    metric_events: int = 0
    _lanes_index: dict = field(default_factory=dict, repr=False)
    _end: float | None = field(default=None, repr=False)
    _by_name: dict | None = field(default=None, repr=False)
    _starts_by_name: dict = field(default_factory=dict, repr=False)
    _warp_launches: tuple | None = field(default=None, repr=False)

    @property
    def has_warps(self) -> bool:
        """Whether any lane is a warp of an instrumented kernel (an instrumentation trace)."""
        return any(lane.kind == WARP for lane in self.lanes)

    def warp_launches(self) -> tuple[dict[int, WarpLane], dict[str, list[list[int]]]]:
        """An instrumentation trace's warp lanes (lane → where it ran), and each kernel's events split into launches
        (`split_launches`), worked out once; both empty for another trace."""
        if self._warp_launches is None:
            lanes = {number: found for number, lane in enumerate(self.lanes) if (found := warp_lane(lane))}
            by_kernel: dict[str, list[int]] = {}
            if lanes:
                for index, event in enumerate(self.events):
                    if (lane := lanes.get(event.lane)) is not None:
                        by_kernel.setdefault(lane.kernel, []).append(index)
            self._warp_launches = lanes, {kernel: split_launches(self, indices, lanes)
                                          for kernel, indices in by_kernel.items()}
        return self._warp_launches

    def lane_index(self, lane: int) -> tuple[list[float], list[float], int]:
        """A lane's event starts (in time order), the latest end among its events so far at each, and the index of
        its first event in `events` (computed once): what the timeline bisects."""
        if not self._lanes_index:  # every lane in one pass: the events are in lane order
            current, latest = None, float("-inf")
            for position, event in enumerate(self.events):
                if event.lane != current:
                    current, latest = event.lane, float("-inf")
                    self._lanes_index[current] = ([], [], position)
                starts, ends, _ = self._lanes_index[current]
                starts.append(event.start)
                latest = max(latest, event.start + event.duration)
                ends.append(latest)
        return self._lanes_index.get(lane, ([], [], 0))

    @property
    def start(self) -> float:
        """The first event's start: 0, times being counted from it."""
        return 0.0

    @property
    def end(self) -> float:
        """The latest end of any event (computed once)."""
        if self._end is None:
            self._end = max((event.end for event in self.events), default=0.0)
        return self._end

    def lane_events(self, lane: int, category: str | None = "kernel") -> list[Event]:
        return [event for event in self.events if event.lane == lane and (category is None or
                                                                          event.category == category)]

    def busy(self, lane: int) -> tuple[float, list[tuple[float, float]]]:
        """A lane's busy time (the union of its kernels' intervals, overlaps counted once) and its idle gaps between
        its first kernel's start and its last one's end."""
        intervals = sorted((event.start, event.end) for event in self.lane_events(lane))
        busy, gaps, current = 0.0, [], None
        for start, end in intervals:
            if current is None:
                current = [start, end]
            elif start > current[1]:
                busy += current[1] - current[0]
                gaps.append((current[1], start))
                current = [start, end]
            else:
                current[1] = max(current[1], end)
        if current is not None:
            busy += current[1] - current[0]
        return busy, gaps

    def launches_of(self, name: str) -> list[int]:
        """The kernel events of one name in time order, on any lane (computed once for all names)."""
        if self._by_name is None:
            by_name: dict[str, list[tuple[float, int]]] = {}
            for position, event in enumerate(self.events):
                if event.category == "kernel":
                    by_name.setdefault(event.name, []).append((event.start, position))
            self._by_name = {key: [position for _, position in sorted(items)] for key, items in by_name.items()}
            self._starts_by_name = {}
        return self._by_name.get(name, [])

    def next_launch(self, index: int, step: int = 1) -> int | None:
        """The next (step 1) or previous (-1) kernel event of the same name, in time order, on any lane."""
        order = self.launches_of(self.events[index].name)
        here = order.index(index) if len(order) < 4096 else self._where_in(order, index)
        there = here + step
        return order[there] if 0 <= there < len(order) else None

    def _where_in(self, order: list[int], index: int) -> int:
        """An event's place among the launches of its name (bisected by start time)."""
        name = self.events[index].name
        starts = self._starts_by_name.get(name)
        if starts is None:
            starts = self._starts_by_name[name] = [self.events[i].start for i in order]  # sorted, as `order` is
        at = bisect.bisect_left(starts, self.events[index].start)
        while order[at] != index:
            at += 1
        return at

    def idle_before(self, index: int) -> float | None:
        """How long the event's lane was idle before it started (since the latest end among its earlier events);
        None for the lane's first event or one that starts while another still runs."""
        event = self.events[index]
        starts, ends_so_far, offset = self.lane_index(event.lane)
        at = index - offset
        if at == 0 or ends_so_far[at - 1] > event.start:
            return None
        return event.start - ends_so_far[at - 1]

    def tree(self) -> dict:
        """The kernels summed by call stack as a `.hatchet` tree (nodes `frame`, `metrics`, `children`): what the
        same run would have written with `-d tree`, less what a trace does not hold (device ids, launch metadata)."""
        root: dict = {"frame": {"name": "ROOT", "type": "function"}, "metrics": {}, "children": []}
        index: dict[tuple[str, ...], dict] = {(): root}

        def node_at(stack: tuple[str, ...]) -> dict:
            parent = root
            for depth in range(1, len(stack) + 1):
                key = stack[:depth]
                node = index.get(key)
                if node is None:
                    node = {"frame": {"name": stack[depth - 1], "type": "function"}, "metrics": {}, "children": []}
                    index[key] = node
                    parent["children"].append(node)
                parent = node
            return parent

        warps: dict[tuple, list[Event]] = {}
        for event in self.events:
            stack = event.call_stack[1:] if event.call_stack[:1] == ("ROOT",) else event.call_stack
            if self.lanes[event.lane].kind == WARP:  # nested by time below, per warp
                lane = self.lanes[event.lane]
                warps.setdefault((lane.pid, str(lane.tid).split(" (")[0]), []).append(event)
                continue
            if event.category != "kernel":
                continue
            stack = stack if stack and stack[-1] == event.name else (*stack, event.name)
            metrics = node_at(stack)["metrics"]
            metrics["time (ns)"] = metrics.get("time (ns)", 0.0) + event.duration
            metrics["count"] = metrics.get("count", 0) + 1
            for key, value in launch_metrics(event).items():  # >= 3.9: the launch hook's bytes and flops
                metrics[key] = metrics.get(key, 0.0) + value
        recorded_by: dict[int, tuple[dict, set]] = {}  # per scope node: the warps that recorded it
        for (pid, warp), events in warps.items():
            where = WARP_PID.fullmatch(pid)  # a CTA may run on another SM at each launch: the warp is its CTA's
            cta_warp = (where["kernel"], where["cta"], warp) if where else (pid, warp)
            # A warp's scopes, each on a "line" of its own: a scope inside another's time is its child. Proton
            # writes cycles / 1000 as µs (its assumed 1 GHz), so the duration in ns is the cycle count again.
            open_scopes: list[Event] = []
            for event in sorted(events, key=lambda e: (e.start, -e.duration)):
                while open_scopes and event.start >= open_scopes[-1].end:
                    open_scopes.pop()
                base = event.call_stack[1:] if event.call_stack[:1] == ("ROOT",) else event.call_stack
                metrics = node_at((*base, *(scope.name for scope in open_scopes), event.name))["metrics"]
                metrics["cycles"] = metrics.get("cycles", 0.0) + event.duration
                recorded_by.setdefault(id(metrics), (metrics, set()))[1].add(cta_warp)
                open_scopes.append(event)
        for metrics, recorded in recorded_by.values():  # as Proton's tree divides: by the warps (of every CTA)
            metrics["normalized_cycles"] = metrics["cycles"] / len(recorded)
        return root


def launch_metrics(event: Event) -> dict[str, float]:
    """A kernel event's launch metadata (`args.metrics`, Triton >= 3.9 writes the numbers as text): `bytes` and the
    `flops*` widths that parse as finite numbers."""
    found = event.args.get("metrics")
    if not isinstance(found, dict):
        return {}
    numbers = {}
    for key, value in found.items():
        if key == "bytes" or str(key).startswith("flops"):
            try:
                number = float(value)
            except (TypeError, ValueError):
                continue
            if number == number and number not in (float("inf"), float("-inf")) and number >= 0:
                numbers[str(key)] = number
    return numbers


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
    names: dict[tuple, str] = {}
    orders: dict[tuple, float] = {}
    for event in events_in:
        if event.ph == "M":
            key, args = (event.pid, event.tid), _args(event)
            if event.name == "thread_name" and isinstance(args.get("name"), str):
                names[key] = args["name"]
            elif event.name == "thread_sort_index" and _number(args.get("sort_index")):
                orders[key] = float(args["sort_index"])
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
            ts, dur = event.ts, event.dur if event.dur is not None else 0.0
            if ts is None or not _number(ts) or not _number(dur) or dur < 0:
                raise TraceError(f"event {number} ({event.name!r}): 'ts'/'dur' are not times")
            if key not in lane_of:
                lane_of[key] = len(lanes)
                lanes.append(_lane(key, names, orders))
            args = _args(event)
            stack = args.get("call_stack")
            stack = _shared(shared, tuple(str(frame) for frame in stack)) if isinstance(stack, list) else ()
            rest = {k: v for k, v in args.items() if k != "call_stack"} if args else NO_ARGS
            if rest:
                rest = _shared(shared, ("args", msgspec.json.encode(rest)), rest)
            complete.append(Event(lane_of[key], _shared(shared, event.name), _shared(shared, event.cat),
                                  ts * NS_PER_US, dur * NS_PER_US, stack, rest or NO_ARGS))
        elif phase == "s" and _number(event.ts):
            start_ids.add(event.id)
            starts.append((key, event.ts * NS_PER_US, event.id))
        elif phase == "f" and _number(event.ts):
            finishes.setdefault(key, []).append((event.ts * NS_PER_US, event.id))
        elif event.cat == "metric":
            metric_events += 1
    del events_in, raw
    origin = min((event.start for event in complete), default=0.0)
    for event in complete:
        event.start -= origin
    order = sorted(range(len(lanes)), key=lambda i: (lanes[i].order, str(lanes[i].name)))
    renumber = {old: new for new, old in enumerate(order)}
    for event in complete:
        event.lane = renumber[event.lane]
    complete.sort(key=lambda event: (event.lane, event.start))
    lane_of = {key: renumber[value] for key, value in lane_of.items()}
    flow_count, launches = _flows(complete, lane_of, starts, start_ids, finishes, origin)
    return Trace([lanes[i] for i in order], complete, flow_count, launches, base, metric_events)


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


WARP_PID = re.compile(r"(?P<kernel>.*) Core(?P<sm>\d+) CTA(?P<cta>\d+)")
WARP_TID = re.compile(r"warp (?P<warp>\d+)(?: \(line (?P<line>\d+)\))?")


@dataclass(frozen=True)
class WarpLane:
    """Where a lane's events ran: kernel, SM, CTA, warp, and the nesting depth its scopes sit at (Proton's line)."""

    kernel: str
    sm: int
    cta: int
    warp: int
    line: int


def warp_lane(lane: Lane) -> WarpLane | None:
    """The SM, CTA, warp and line of an instrumentation lane; None for any other lane."""
    if lane.kind != WARP:
        return None
    where, who = WARP_PID.fullmatch(str(lane.pid)), WARP_TID.fullmatch(str(lane.tid))
    if where is None or who is None:
        return None
    return WarpLane(where["kernel"], int(where["sm"]), int(where["cta"]), int(who["warp"]), int(who["line"] or 0))


def split_launches(trace: Trace, indices: list[int], lanes: dict[int, WarpLane]) -> list[list[int]]:
    """One kernel's events as launches (the rule is described in `proton_tui.view.warps`)."""
    indices = sorted(indices, key=lambda i: trace.events[i].start)
    launches: list[list[int]] = []
    seen: set[tuple[int, int]] = set()  # (CTA, warp) of the launch being gathered
    piece: list[int] = []
    latest = -math.inf

    def close() -> None:
        nonlocal seen
        warps = {(lanes[trace.events[i].lane].cta, lanes[trace.events[i].lane].warp) for i in piece}
        if launches and not warps & seen:
            launches[-1].extend(piece)
            seen |= warps
        else:
            launches.append(list(piece))
            seen = warps

    for index in indices:
        event = trace.events[index]
        if piece and event.start > latest:
            close()
            piece = []
        piece.append(index)
        latest = max(latest, event.end)
    if piece:
        close()
    return launches
