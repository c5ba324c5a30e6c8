"""Proton's Chrome traces as a model: lanes (GPU streams, CPU threads, an instrumented kernel's warps), their events
in time, and the launch → kernel flows between them; `chrome_trace.py` reads the file into it. Times are ns from
the trace's first event.

A trace also gives the same tree a `.hatchet` holds (`Trace.tree`), its kernels summed by call stack, so every
view of a tree (table, flame view, kernel summary, JSON, CSV) reads a trace too."""

from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass, field

GPU, CPU, WARP, OTHER = "gpu", "cpu", "warp", "other"
# instrumentation traces: pid "<kernel> Core<SM> CTA<id>", tid "warp <w> (line <l>)"


@dataclass(frozen=True)
class Lane:
    """One row of the timeline: a GPU stream, a CPU thread (≥ 3.8 names them), or a stream id alone (3.6)."""

    pid: object
    tid: object
    name: str
    kind: str
    order: float


NO_ARGS: dict = {}  # the arguments of every event that has none (shared: never changed)


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
        """A lane's events (of `category`; None: all) in time order: its run of `events`, which are in lane order
        (`lane_index`), not a scan of every event."""
        starts, _, first = self.lane_index(lane)
        return [event for event in self.events[first:first + len(starts)]
                if category is None or event.category == category]

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
