"""The timeline's geometry, without Textual: a window of a trace's time [start, end) drawn `width` cells wide, one
row per lane, each kernel (or scope) a bar from the cell its start falls in to the cell its end falls in. Events
that share a cell share a bar (it says how many), so a bar is never narrower than one cell and every event is
drawn; an idle gap shows as empty cells once it is wider than a cell. The widgets (`tui/widgets/timeline/`)
only draw and navigate what this computes.

An instrumentation trace's rows are instead one launch's warps grouped SM → CTA → warp (`warp_rows`): a collapsed
group is one row of its warps' outermost scopes, an open warp one row per nesting line."""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from proton_tui.hatchet.columns import time_order
from proton_tui.hatchet.trace import Trace
from proton_tui.view.formatting import format_tick
from proton_tui.view.warps import Launch, Warp, WarpTrace

ZOOM_STEP = 2.0  # each zoom in or out halves or doubles the window
MIN_WINDOW_NS = 10.0  # the narrowest window a zoom reaches


@dataclass(frozen=True)
class Bar:
    """Cells [x, x + width) of a row, standing for `events` (indices into the trace's events, in start order: for a
    lane a range, its events being contiguous)."""

    lane: int
    x: int
    width: int
    events: Sequence[int]

    @property
    def end(self) -> int:
        return self.x + self.width


@dataclass
class RowEvents:
    """A row's events in start order: their starts, the latest end among them so far at each, and which events of
    the trace they are (`members`, a range for a lane)."""

    starts: list[float]
    ends_so_far: list[float]
    members: Sequence[int]
    _positions: dict[int, int] | None = field(default=None, repr=False)

    @classmethod
    def of_lane(cls, trace: Trace, lane: int) -> RowEvents:
        starts, ends_so_far, offset = trace.lane_index(lane)
        return cls(starts, ends_so_far, range(offset, offset + len(starts)))

    @classmethod
    def of_events(cls, trace: Trace, events: list[int]) -> RowEvents:
        columns, chosen = trace.columns, np.asarray(events, dtype=np.int64)
        ordered = chosen[time_order(columns.start[chosen])]
        ends = np.maximum.accumulate(columns.end[ordered]).tolist() if len(ordered) else []
        return cls(columns.start[ordered].tolist(), ends, ordered.tolist())

    def position(self, event: int) -> int | None:
        """Where `event` is among the row's events; None when it is not one of them."""
        if isinstance(self.members, range):
            return event - self.members.start if event in self.members else None
        if self._positions is None:
            self._positions = {member: at for at, member in enumerate(self.members)}
        return self._positions.get(event)


class TimelineLayout:
    """Bars per row for the window [start, end) of `trace` drawn `width` cells wide: one row per lane, or the rows
    given."""

    def __init__(self, trace: Trace, start: float, end: float, width: int,
                 rows: list[RowEvents] | None = None, snap: bool = False) -> None:
        """With `snap`, a bar runs between the cell boundaries nearest its events' start and end (events that follow
        one another then get bars of their own) rather than over every cell they touch."""
        self.trace, self.start, self.width, self.snap = trace, start, max(1, width), snap
        self.end = max(end, start + MIN_WINDOW_NS)
        self.cell_ns = (self.end - self.start) / self.width
        self.sources = rows if rows is not None else [RowEvents.of_lane(trace, lane) for lane in
                                                      range(len(trace.lanes))]
        self.rows: list[list[Bar]] = [self._bars(row) for row in range(len(self.sources))]

    def cell_of(self, time: float) -> int:
        return math.floor((time - self.start) / self.cell_ns)

    def _bars(self, row: int) -> list[Bar]:
        """The row's bars, found by bisection: the work is per bar (at most one per cell), not per event."""
        source = self.sources[row]
        starts, ends_so_far, members = source.starts, source.ends_so_far, source.members
        # from the first event whose lane was still busy at the window's start (the running latest end is sorted)
        first = bisect.bisect_right(ends_so_far, self.start, 0, bisect.bisect_left(starts, self.start))
        last = bisect.bisect_right(starts, self.end) if self.end >= self.trace.end else \
            bisect.bisect_left(starts, self.end)  # the trace's last instant belongs to its last cell
        bars: list[Bar] = []
        i = first
        reach = 0.5 if self.snap else 0.0  # how far into a bar's next cell an event may start and not join it
        while i < last:
            x0 = min(self.width - 1, max(0, self._start_cell(starts[i])))
            j = i + 1
            x1 = self._end_cell(ends_so_far[i], x0)
            while True:  # take in every event that starts before the bar's last cell ends
                boundary = self.start + (x1 - reach) * self.cell_ns
                k = bisect.bisect_left(starts, boundary, j, last)
                if k == j:
                    break
                j = k
                x1 = max(x1, self._end_cell(ends_so_far[j - 1], x0))
            if bars and x0 < bars[-1].end:  # a cell's rounding put it under the bar before: one bar for both
                before = bars.pop()
                x0, x1, i = before.x, max(x1, before.end), source.position(before.events[0])
            bars.append(Bar(row, x0, x1 - x0, members[i:j]))
            i = j
        return bars

    def _start_cell(self, start: float) -> int:
        return round((start - self.start) / self.cell_ns) if self.snap else self.cell_of(start)

    def _end_cell(self, end: float, x0: int) -> int:
        cells = (end - self.start) / self.cell_ns
        return min(self.width, max(x0 + 1, round(cells) if self.snap else math.ceil(cells)))

    def bar_of(self, event: int, row: int | None = None) -> Bar | None:
        """The bar drawing `event` on `row` (by default its lane's); None when it is outside the window."""
        row = int(self.trace.columns.lane[event]) if row is None else row
        if not 0 <= row < len(self.rows):
            return None
        source, bars = self.sources[row], self.rows[row]
        where = source.position(event)
        if where is None:
            return None
        at = bisect.bisect_right([source.position(bar.events[0]) for bar in bars], where) - 1
        return bars[at] if at >= 0 and event in bars[at].events else None

    def at(self, lane: int, x: int) -> Bar | None:
        if not 0 <= lane < len(self.rows):
            return None
        return next((bar for bar in self.rows[lane] if bar.x <= x < bar.end), None)

    def ruler(self, every: int = 16, origin: float = 0.0,
              text: Callable[[float], str] | None = None) -> list[tuple[int, str]]:
        """Tick positions and their labels (time from `origin`, the trace's start unless given, as `text` writes
        it: by default in ns with the decimals that tell ticks apart), about `every` cells apart."""
        step = every * self.cell_ns
        text = text or (lambda ns: format_tick(ns, step))
        return [(x, text(self.start + x * self.cell_ns - origin)) for x in range(0, self.width, every)]


def zoomed(start: float, end: float, factor: float, centre: float, bounds: tuple[float, float],
           narrowest: float = MIN_WINDOW_NS) -> tuple[float, float]:
    """The window [start, end) zoomed by `factor` (> 1 in) about `centre`, kept inside `bounds` and no narrower than
    `narrowest` (unless the bounds are)."""
    width = max((end - start) / factor, narrowest)
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


@dataclass
class WarpRow:
    """One row of the warp timeline: an SM or a CTA (`kind` "sm"/"cta": a group, `key` what opens it) standing for
    its warps' outermost scopes, or one nesting line of a warp ("warp")."""

    kind: str
    label: str
    key: tuple
    source: RowEvents
    warp: Warp | None = None
    line: int = 0


def warp_rows(warps: WarpTrace, launch: Launch, expanded: set) -> list[WarpRow]:
    """The rows of one launch: per SM, then (its key `("sm", sm)` in `expanded`) per CTA, then (`("cta", cta)`
    in `expanded`) a row per warp and nesting line. A group's row holds its warps' line-0 (outermost) scopes."""
    trace, rows = warps.trace, []
    by_sm: dict[int, dict[int, list[Warp]]] = {}
    for warp in launch.warps:
        by_sm.setdefault(warp.sm, {}).setdefault(warp.cta, []).append(warp)
    for sm, ctas in by_sm.items():
        outer = [i for warps_of in ctas.values() for warp in warps_of for i in launch.warps[warp].get(0, [])]
        open_sm = ("sm", sm) in expanded
        what = f"CTA {next(iter(ctas))}" if len(ctas) == 1 else f"({len(ctas)} CTAs)"
        rows.append(WarpRow("sm", f"{'▾' if open_sm else '▸'} SM {sm} {what}", ("sm", sm),
                            RowEvents.of_events(trace, outer)))
        if not open_sm:
            continue
        for cta, members in ctas.items():
            open_cta = ("cta", cta) in expanded
            outer = [i for warp in members for i in launch.warps[warp].get(0, [])]
            rows.append(WarpRow("cta", f"  {'▾' if open_cta else '▸'} CTA {cta}", ("cta", cta),
                                RowEvents.of_events(trace, outer)))
            if open_cta:
                for warp in members:
                    for line, events in launch.warps[warp].items():
                        rows.append(WarpRow("warp", f"    warp {warp.warp} line {line}", ("warp", warp, line),
                                            RowEvents.of_events(trace, events), warp, line))
    return rows
