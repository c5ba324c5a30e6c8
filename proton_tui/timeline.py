"""The timeline's geometry, without Textual: a window of a trace's time [start, end) drawn `width` cells wide, one
row per lane, each kernel (or scope) a bar from the cell its start falls in to the cell its end falls in. Events
that share a cell share a bar (it says how many), so a bar is never narrower than one cell and every event is
drawn; an idle gap shows as empty cells once it is wider than a cell. The widget (`tui/widgets/timeline_view.py`)
only draws and navigates what this computes."""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

from .formatting import format_value
from .hatchet.trace import Trace

ZOOM_STEP = 2.0  # each zoom in or out halves or doubles the window
MIN_WINDOW_NS = 10.0  # the narrowest window a zoom reaches


@dataclass(frozen=True)
class Bar:
    """Cells [x, x + width) of a lane's row, standing for `events` (a range of indices into the trace's events: a
    lane's events are contiguous, in time order)."""

    lane: int
    x: int
    width: int
    events: range

    @property
    def end(self) -> int:
        return self.x + self.width


class TimelineLayout:
    """Bars per lane for the window [start, end) of `trace` drawn `width` cells wide."""

    def __init__(self, trace: Trace, start: float, end: float, width: int) -> None:
        self.trace, self.start, self.width = trace, start, max(1, width)
        self.end = max(end, start + MIN_WINDOW_NS)
        self.cell_ns = (self.end - self.start) / self.width
        self.rows: list[list[Bar]] = [self._bars(lane) for lane in range(len(trace.lanes))]

    def cell_of(self, time: float) -> int:
        return math.floor((time - self.start) / self.cell_ns)

    def _bars(self, lane: int) -> list[Bar]:
        """The lane's bars, found by bisection: the work is per bar (at most one per cell), not per event."""
        starts, ends_so_far, offset = self.trace.lane_index(lane)
        # from the first event whose lane was still busy at the window's start (the running latest end is sorted)
        first = bisect.bisect_right(ends_so_far, self.start, 0, bisect.bisect_left(starts, self.start))
        last = bisect.bisect_right(starts, self.end) if self.end >= self.trace.end else \
            bisect.bisect_left(starts, self.end)  # the trace's last instant belongs to its last cell
        bars: list[Bar] = []
        i = first
        while i < last:
            x0 = min(self.width - 1, max(0, self.cell_of(starts[i])))
            j = i + 1
            x1 = self._end_cell(ends_so_far[i], x0)
            while True:  # take in every event that starts before the bar's last cell ends
                boundary = self.start + x1 * self.cell_ns
                k = bisect.bisect_left(starts, boundary, j, last)
                if k == j:
                    break
                j = k
                x1 = max(x1, self._end_cell(ends_so_far[j - 1], x0))
            if bars and x0 < bars[-1].end:  # a cell's rounding put it under the bar before: one bar for both
                before = bars.pop()
                x0, x1, i = before.x, max(x1, before.end), before.events.start - offset
            bars.append(Bar(lane, x0, x1 - x0, range(offset + i, offset + j)))
            i = j
        return bars

    def _end_cell(self, end: float, x0: int) -> int:
        return min(self.width, max(x0 + 1, math.ceil((end - self.start) / self.cell_ns)))

    def bar_of(self, event: int) -> Bar | None:
        row = self.rows[self.trace.events[event].lane]
        at = bisect.bisect_right([bar.events.start for bar in row], event) - 1
        return row[at] if at >= 0 and event in row[at].events else None

    def at(self, lane: int, x: int) -> Bar | None:
        if not 0 <= lane < len(self.rows):
            return None
        return next((bar for bar in self.rows[lane] if bar.x <= x < bar.end), None)

    def ruler(self, every: int = 16) -> list[tuple[int, str]]:
        """Tick positions and their labels (time from the trace's start), about `every` cells apart."""
        return [(x, format_value(self.start + x * self.cell_ns, "ns")) for x in range(0, self.width, every)]


def zoomed(start: float, end: float, factor: float, centre: float, bounds: tuple[float, float]) -> tuple[float, float]:
    """The window [start, end) zoomed by `factor` (> 1 in) about `centre`, kept inside `bounds`."""
    width = max((end - start) / factor, MIN_WINDOW_NS)
    low, high = bounds
    width = min(width, high - low) if high > low else width
    new_start = centre - (centre - start) / (end - start) * width if end > start else centre - width / 2
    new_start = min(max(new_start, low), max(low, high - width))
    return new_start, new_start + width


def panned(start: float, end: float, share: float, bounds: tuple[float, float]) -> tuple[float, float]:
    """The window moved by `share` of its width (negative: earlier), kept inside `bounds`."""
    width = end - start
    low, high = bounds
    new_start = min(max(start + share * width, low), max(low, high - width))
    return new_start, new_start + width
