"""Proton's Chrome traces (`-d trace` → `<name>.chrome_trace`): the 3.6 shape (kernel `X` events whose `tid` is the
stream, `args.call_stack`), the ≥ 3.8 lanes (metadata `M` events name CPU threads and GPU streams; `launch->kernel`
flow events; `scope` and `metric` events) and 3.9's `baseTimeNanoseconds`. Times in the file are µs (Chrome's
unit); here they are ns from the trace's first event.

A trace is read into `Trace` (lanes, events, flows) and into the same tree a `.hatchet` holds, its kernels summed
by call stack, so every view of a tree (table, flame view, kernel summary, JSON, CSV) reads a trace too."""

from __future__ import annotations

from dataclasses import dataclass, field

NS_PER_US = 1000.0
GPU, CPU, OTHER = "gpu", "cpu", "other"


class TraceError(ValueError):
    """A trace that cannot be read; the message says why (the reader adds the file)."""


@dataclass(frozen=True)
class Lane:
    """One row of the timeline: a GPU stream, a CPU thread (≥ 3.8 names them), or a stream id alone (3.6)."""

    pid: object
    tid: object
    name: str
    kind: str
    order: float


@dataclass
class Event:
    """One complete (`X`) event: a kernel, a scope, or another category; start and duration in ns."""

    lane: int
    name: str
    category: str
    start: float
    duration: float
    call_stack: tuple[str, ...] = ()
    args: dict = field(default_factory=dict)

    @property
    def end(self) -> float:
        return self.start + self.duration


@dataclass
class Trace:
    """Lanes, their events in time order, and the launch → kernel flows (CPU event index → kernel event index)."""

    lanes: list[Lane]
    events: list[Event]
    flows: list[tuple[int | None, int]]
    base_ns: int | None  # 3.9: the clock value the trace's times start from
    metric_events: int = 0

    @property
    def start(self) -> float:
        return min((event.start for event in self.events), default=0.0)

    @property
    def end(self) -> float:
        return max((event.end for event in self.events), default=0.0)

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

    def next_launch(self, index: int, step: int = 1) -> int | None:
        """The next (step 1) or previous (-1) kernel event of the same name, in time order, on any lane."""
        name = self.events[index].name
        same = sorted((event.start, position) for position, event in enumerate(self.events)
                      if event.category == "kernel" and event.name == name)
        order = [position for _, position in same]
        here = order.index(index)
        there = here + step
        return order[there] if 0 <= there < len(order) else None

    def tree(self) -> dict:
        """The kernels summed by call stack as a `.hatchet` tree (nodes `frame`, `metrics`, `children`): what the
        same run would have written with `-d tree`, less what a trace does not hold (device ids, launch metadata)."""
        root: dict = {"frame": {"name": "ROOT", "type": "function"}, "metrics": {}, "children": []}
        index: dict[tuple[str, ...], dict] = {(): root}
        for event in self.events:
            if event.category != "kernel":
                continue
            stack = event.call_stack[1:] if event.call_stack[:1] == ("ROOT",) else event.call_stack
            stack = stack if stack and stack[-1] == event.name else (*stack, event.name)
            parent = root
            for depth in range(1, len(stack) + 1):
                key = stack[:depth]
                node = index.get(key)
                if node is None:
                    node = {"frame": {"name": stack[depth - 1], "type": "function"}, "metrics": {}, "children": []}
                    index[key] = node
                    parent["children"].append(node)
                parent = node
            metrics = parent["metrics"]
            metrics["time (ns)"] = metrics.get("time (ns)", 0.0) + event.duration
            metrics["count"] = metrics.get("count", 0) + 1
            for key, value in launch_metrics(event).items():  # >= 3.9: the launch hook's bytes and flops
                metrics[key] = metrics.get(key, 0.0) + value
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


def read_trace(document: dict) -> Trace:
    """A parsed `.chrome_trace` document as a Trace; TraceError for one that is not Proton's shape."""
    events = document.get("traceEvents")
    if not isinstance(events, list):
        raise TraceError("'traceEvents' is not a list")
    base = document.get("baseTimeNanoseconds")
    names: dict[tuple, str] = {}
    orders: dict[tuple, float] = {}
    for event in events:
        if isinstance(event, dict) and event.get("ph") == "M":
            key, args = (event.get("pid"), event.get("tid")), event.get("args") or {}
            if event.get("name") == "thread_name" and isinstance(args.get("name"), str):
                names[key] = args["name"]
            elif event.get("name") == "thread_sort_index" and isinstance(args.get("sort_index"), (int, float)):
                orders[key] = float(args["sort_index"])
    lanes: list[Lane] = []
    lane_of: dict[tuple, int] = {}
    complete: list[Event] = []
    starts: list[tuple[tuple, float, int]] = []  # flow starts: (lane key, ts, id)
    finishes: dict[object, tuple[tuple, float]] = {}
    metric_events = 0
    for number, event in enumerate(events):
        if not isinstance(event, dict):
            raise TraceError(f"event {number} is not an object")
        phase = event.get("ph")
        key = (event.get("pid"), event.get("tid"))
        if phase == "X":
            ts, dur = event.get("ts"), event.get("dur", 0)
            if not _number(ts) or not _number(dur) or dur < 0:
                raise TraceError(f"event {number} ({event.get('name')!r}): 'ts'/'dur' are not times")
            if key not in lane_of:
                lane_of[key] = len(lanes)
                lanes.append(_lane(key, names, orders))
            args = event.get("args") if isinstance(event.get("args"), dict) else {}
            stack = args.get("call_stack")
            complete.append(Event(lane_of[key], str(event.get("name", "")), str(event.get("cat", "")),
                                  float(ts) * NS_PER_US, float(dur) * NS_PER_US,
                                  tuple(str(frame) for frame in stack) if isinstance(stack, list) else (),
                                  {k: v for k, v in args.items() if k != "call_stack"}))
        elif phase == "s" and _number(event.get("ts")):
            starts.append((key, float(event["ts"]) * NS_PER_US, event.get("id")))
        elif phase == "f" and _number(event.get("ts")):
            finishes[event.get("id")] = (key, float(event["ts"]) * NS_PER_US)
        elif event.get("cat") == "metric":
            metric_events += 1
    origin = min((event.start for event in complete), default=0.0)
    for event in complete:
        event.start -= origin
    order = sorted(range(len(complete)), key=lambda i: (lanes[complete[i].lane].order, complete[i].start))
    complete = [complete[i] for i in order]
    lanes_sorted = sorted(range(len(lanes)), key=lambda i: (lanes[i].order, str(lanes[i].name)))
    renumber = {old: new for new, old in enumerate(lanes_sorted)}
    for event in complete:
        event.lane = renumber[event.lane]
    complete.sort(key=lambda event: (event.lane, event.start))
    flows = _flows(complete, [lanes[i] for i in lanes_sorted], {k: renumber[v] for k, v in lane_of.items()},
                   starts, finishes, origin)
    return Trace([lanes[i] for i in lanes_sorted], complete, flows, base if isinstance(base, int) else None,
                 metric_events)


def _lane(key: tuple, names: dict, orders: dict) -> Lane:
    name = names.get(key)
    if name is None:  # 3.6: no metadata, the tid is the stream
        name, kind = f"stream {key[1]}", GPU
    else:
        lowered = name.lower()
        kind = GPU if "gpu" in lowered or "stream" in lowered else CPU if "cpu" in lowered or "thread" in lowered \
            else OTHER
    order = orders.get(key, float(key[1]) if isinstance(key[1], (int, float)) else 0.0)
    return Lane(key[0], key[1], name, kind, order)


def _flows(events: list[Event], lanes: list[Lane], lane_of: dict, starts: list, finishes: dict,
           origin: float) -> list[tuple[int | None, int]]:
    """Each `launch->kernel` flow as (the CPU event it starts in, the kernel it ends at), by lane and time."""
    at: dict[tuple[int, float], int] = {}
    for position, event in enumerate(events):
        at.setdefault((event.lane, round(event.start, 3)), position)
    flows = []
    for key, ts, flow_id in starts:
        finish = finishes.get(flow_id)
        if finish is None or finish[0] not in lane_of:
            continue
        kernel = at.get((lane_of[finish[0]], round(finish[1] - origin, 3)))
        if kernel is None:
            continue
        launch = at.get((lane_of[key], round(ts - origin, 3))) if key in lane_of else None
        flows.append((launch, kernel))
    return flows


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value \
        and value not in (float("inf"), float("-inf"))
