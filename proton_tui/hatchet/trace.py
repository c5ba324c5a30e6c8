"""Proton's Chrome traces as a model: lanes (GPU streams, CPU threads, an instrumented kernel's warps), their events
in time, and the launch → kernel flows between them; `chrome_trace.py` reads the file into it. Times are ns from
the trace's first event.

A trace also gives the same tree a `.hatchet` holds (`Trace.tree`), its kernels summed by call stack, so every
view of a tree (table, flame view, kernel summary, JSON, CSV) reads a trace too."""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from proton_tui.hatchet.columns import Columns, Event, EventList, segment_bounds, time_order
from proton_tui.hatchet.lanes import LaneSummary, LaneTable, WarpLane
from proton_tui.hatchet.lanes import warp_lane as warp_lane  # where the views have read it
from proton_tui.hatchet.launches import lane_summaries, warp_launches
from proton_tui.hatchet.trace_tree import trace_tree


@dataclass
class Trace:
    """Lanes, their events as columns in lane then time order (`events` hands them out one at a time), how many
    launch → kernel flows the trace holds, and which event launched which kernel where the flow starts at an event
    (kernel index → launch index)."""

    lanes: LaneTable
    columns: Columns
    flow_count: int
    launches: dict[int, int]
    base_ns: int | None  # 3.9: the clock value the trace's times start from
    metric_events: int = 0
    events: Sequence[Event] = field(init=False, repr=False)
    _lanes_index: dict = field(default_factory=dict, repr=False)
    _summaries: list | None = field(default=None, repr=False)
    _by_name: dict = field(default_factory=dict, repr=False)
    _warp_launches: tuple | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.events = EventList(self.columns)

    @property
    def has_warps(self) -> bool:
        """Whether any lane is a warp of an instrumented kernel (an instrumentation trace)."""
        return bool(self.lanes.is_warp.any())

    @property
    def lane_bounds(self) -> np.ndarray:
        """Where each lane's run of events starts, and where the last one ends (len(lanes) + 1 offsets)."""
        found = self._lanes_index.get("bounds")
        if found is None:
            found = self._lanes_index["bounds"] = segment_bounds(self.columns.lane, len(self.lanes))
        return found

    def warp_launches(self) -> tuple[Mapping[int, WarpLane], dict[str, list[np.ndarray]]]:
        """An instrumentation trace's warp lanes (lane → where it ran), and each kernel's events split into launches
        (`launches.split_launches`: arrays of event indices in start order), worked out once; both empty for another
        trace."""
        if self._warp_launches is None:
            self._warp_launches = warp_launches(self)
        return self._warp_launches

    def lane_index(self, lane: int) -> tuple[list[float], list[float], int]:
        """A lane's event starts (in time order), the latest end among its events so far at each, and the index of
        its first event in `events` (computed once per lane): what the timeline bisects."""
        found = self._lanes_index.get(lane)
        if found is None:
            if not 0 <= lane < len(self.lanes):
                return [], [], 0
            first, last = (int(at) for at in self.lane_bounds[lane:lane + 2])
            columns = self.columns
            found = self._lanes_index[lane] = (columns.start[first:last].tolist(),
                                               np.maximum.accumulate(columns.end[first:last]).tolist(), first)
        return found

    @property
    def start(self) -> float:
        """The first event's start: 0, times being counted from it."""
        return 0.0

    @property
    def end(self) -> float:
        """The latest end of any event."""
        return float(self.columns.end.max()) if len(self.columns) else 0.0

    def lane_events(self, lane: int, category: str | None = "kernel") -> list[Event]:
        """A lane's events (of `category`; None: all) in time order: its run of the columns."""
        first, last = (int(at) for at in self.lane_bounds[lane:lane + 2])
        columns = self.columns
        wanted = None if category is None else columns.categories.index(category) \
            if category in columns.categories else -1
        return [columns.event(i) for i in range(first, last) if wanted is None or columns.category[i] == wanted]

    def summaries(self) -> list[LaneSummary]:
        """Every lane's `LaneSummary`, worked out once for all lanes with sorted-array operations."""
        if self._summaries is None:
            self._summaries = lane_summaries(self)
        return self._summaries

    def busy(self, lane: int) -> tuple[float, list[tuple[float, float]]]:
        """A lane's busy time (the union of its kernels' intervals, overlaps counted once) and its idle gaps between
        its first kernel's start and its last one's end."""
        summary = self.summaries()[lane]
        return summary.busy, summary.gaps

    def launches_of(self, name: str) -> list[int]:
        """The kernel events of one name in time order, on any lane (computed once per name)."""
        found = self._by_name.get(name)
        if found is None:
            columns = self.columns
            wanted = columns.names.index(name) if name in columns.names else -1
            picked = np.flatnonzero((columns.name == wanted) & columns.category_mask("kernel"))
            order = picked[time_order(columns.start[picked])]  # equal starts: in column order
            found = self._by_name[name] = (order.tolist(), columns.start[order].tolist())
        return found[0]

    def next_launch(self, index: int, step: int = 1) -> int | None:
        """The next (step 1) or previous (-1) kernel event of the same name, in time order, on any lane."""
        name = self.columns.name_of(index)
        order = self.launches_of(name)
        starts = self._by_name[name][1]
        at = bisect.bisect_left(starts, float(self.columns.start[index]))  # its place among them by start time
        while at < len(order) and order[at] != index:
            at += 1
        if at == len(order):
            return None
        there = at + step
        return order[there] if 0 <= there < len(order) else None

    def idle_before(self, index: int) -> float | None:
        """How long the event's lane was idle before it started (since the latest end among its earlier events);
        None for the lane's first event or one that starts while another still runs."""
        start = float(self.columns.start[index])
        starts, ends_so_far, offset = self.lane_index(int(self.columns.lane[index]))
        at = index - offset
        if at == 0 or ends_so_far[at - 1] > start:
            return None
        return start - ends_so_far[at - 1]

    def tree(self) -> dict:
        """The kernels summed by call stack as a `.hatchet` tree (nodes `frame`, `metrics`, `children`): what the
        same run would have written with `-d tree`, less what a trace does not hold (device ids, launch metadata)."""
        return trace_tree(self)
