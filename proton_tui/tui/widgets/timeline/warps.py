"""The warp timeline of an instrumentation trace: one launch at a time ([ and ] go between them), its warps grouped
SM → CTA → warp (space, or Enter on a group, opens or closes it; e and c open or close them all; a closed group is
one row of its warps' outermost scopes), in cycles from the launch's start; n and N jump to the next and previous
straggler of the selected scope (its lane opened)."""

from __future__ import annotations

from collections.abc import Callable

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.strip import Strip

from proton_tui.console import cut_field, printable
from proton_tui.hatchet.trace import Trace
from proton_tui.tui.opening import FRAME_WRITE_S
from proton_tui.tui.widgets.timeline.base import TimelineView, widest
from proton_tui.view.formatting import cycles_number
from proton_tui.view.names import Names
from proton_tui.view.timeline import Bar, WarpRow, warp_rows
from proton_tui.view.warps import Launch, WarpTrace


class WarpTimeline(TimelineView):
    """An instrumentation trace's launch shown, its warps' scopes over a window of it, one scope selected."""

    SNAP = True  # a warp's scopes follow one another: each gets a bar of its own

    BINDINGS = [
        Binding("n", "next_straggler", "Straggler"),
        Binding("escape", "leave", "Table", show=False),
        Binding("N", "previous_straggler", "Previous straggler", show=False),
        Binding("right_square_bracket", "later_launch", "Launch"),
        Binding("left_square_bracket", "earlier_launch", "Previous launch", show=False),
        Binding("space", "toggle_group", "Open/close"),
        Binding("e", "open_all", "Open all", show=False),
        Binding("c", "close_all", "Close all", show=False),
    ]
    WARP_ACTIONS = {"next_straggler", "previous_straggler", "later_launch", "earlier_launch", "toggle_group",
                    "open_all", "close_all"}
    SCOPE_STYLES = ("scope", "kernel", "other")  # the scopes take these in turn

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        # its warps, the launch shown, the groups open, the rows they make
        self.warps: WarpTrace | None = None
        self.launch_at = 0
        self.expanded: set = set()
        self.warp_rows: list[WarpRow] = []
        self._when_drawn: Callable[[], None] | None = None

    # ---- what it shows ----------------------------------------------------------------------------------------
    @property
    def launch(self) -> Launch | None:
        return self.warps.launches[self.launch_at] if self.warps is not None else None

    @property
    def bounds(self) -> tuple[float, float]:
        """The launch shown."""
        columns = self.trace.columns
        start = float(columns.start[self.launch.events[0]])
        return start, max(float(columns.end[self.launch.events].max()), start + 1.0)

    def when_drawn(self, callback: Callable[[], None]) -> None:
        """Call `callback` once a launch has been painted and its frame given FRAME_WRITE_S to reach the terminal
        (Textual's writer thread needs the interpreter for it)."""
        self._when_drawn = callback

    def render_line(self, y: int) -> Strip:
        # a paint laid out for another width (a scroll bar came meanwhile) is followed by the right one: wait for it
        if self._when_drawn is not None and self.warps is not None and self.layout_ is not None \
                and self.layout_.width == self.bars_width:
            callback, self._when_drawn = self._when_drawn, None
            self.set_timer(FRAME_WRITE_S, callback)
        return super().render_line(y)

    def waiting(self, text: str) -> None:
        """Nothing to show yet: `text` says what is being worked out."""
        self.trace, self.warps, self.layout_, self.selected = None, None, None, None
        self.border_title = Text(text)
        self.refresh()

    def show(self, trace: Trace, names: Names | None, warps: WarpTrace) -> None:
        """Show `trace`'s first launch (of `warps`, worked out by `warp_trace`: one at least), the slowest warp of
        its first scope selected."""
        self.trace, self.names, self.warps = trace, names or self.names, warps
        self.launch_at, self.expanded = 0, set()
        self._launch_shown()
        self.select(next(iter(self.launch.scopes.values())).stragglers[0].event)

    def _launch_shown(self) -> None:
        """The launch `launch_at` in full, its rows as the open groups make them."""
        self.window = self.bounds
        self._rows_changed()

    def _rows_changed(self) -> None:
        self.warp_rows = warp_rows(self.warps, self.launch, self.expanded)
        self.widest_name = widest(row.label for row in self.warp_rows)
        self._lay_out()

    def _sources(self) -> list:
        return [row.source for row in self.warp_rows]

    def _title(self) -> tuple[list[str], str]:
        start, end = self.window
        origin, launch = self.bounds[0], self.launch
        # the numbers first: a long kernel name is what the border cuts. Positions are trace units (cycles within a
        # CTA, ns between CTAs), so they are never converted to time
        return [f"Launch {launch.number} of {len(self.warps.launches)}:",
                f"{cycles_number(round(start - origin))} – {cycles_number(round(end - origin))}",
                f"({_units(self.layout_.cell_ns)} a cell, trace units)"], \
            printable(cut_field(launch.kernel))

    def _ticks(self) -> list[tuple[int, str]]:
        return self.layout_.ruler(origin=self.bounds[0], text=lambda units: cycles_number(round(units)))

    def _row_for(self, event: int, row: int | None) -> int:
        """`row` where it holds `event`, else the row it is on where that does, else its warp's row (its launch shown
        and its groups opened for it)."""
        if (at := self.warps.launch_of.get(event)) is not None and at != self.launch_at:
            self.launch_at = at
            self._launch_shown()
        if row is None and self._holds(self.row, event):  # it stays on the row it is on (a group's, say)
            row = self.row
        if not self._holds(row, event):
            row = self._reveal(event)
        return row

    def _holds(self, row: int | None, event: int) -> bool:
        return row is not None and 0 <= row < len(self.warp_rows) and \
            self.warp_rows[row].source.position(event) is not None

    def _reveal(self, event: int) -> int:
        """The row of `event`'s warp and line, its SM and CTA opened for it."""
        lane = self.warps.lane_of[self.trace.events[event].lane]
        wanted = {("sm", lane.sm), ("cta", lane.cta)}
        if not wanted <= self.expanded:
            self.expanded |= wanted
            self._rows_changed()
        return next(number for number, row in enumerate(self.warp_rows) if row.kind == "warp" and
                    row.source.position(event) is not None)

    def _pick(self, bar: Bar) -> int:
        """On a group's row, its longest event (the slowest warp under it); on a warp's, its first."""
        if self.warp_rows[bar.lane].kind != "warp":
            return max(bar.events, key=lambda i: self.trace.events[i].duration)
        return bar.events[0]

    # ---- keys -------------------------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action in self.WARP_ACTIONS:
            return self.warps is not None  # hidden while the warps are worked out
        return True

    def action_focus_event(self) -> None:
        if self.trace is not None and self.selected is not None and self.warp_rows[self.row].kind != "warp":
            self.action_toggle_group()  # a group: Enter opens or closes it
            return
        super().action_focus_event()

    def action_next_straggler(self) -> None:
        self.straggler(1)

    def action_previous_straggler(self) -> None:
        self.straggler(-1)

    def action_later_launch(self) -> None:
        self.launch_step(1)

    def action_earlier_launch(self) -> None:
        self.launch_step(-1)

    def action_open_all(self) -> None:
        self.open_all(True)

    def action_close_all(self) -> None:
        self.open_all(False)

    def straggler(self, step: int) -> None:
        """The next (previous) straggler of the selected scope in its launch, its lane opened."""
        if self.warps is None or self.selected is None:
            return
        scope = self.launch.scopes.get(self.trace.events[self.selected].name)
        stragglers = [sample.event for sample in scope.stragglers] if scope is not None else []
        if stragglers:
            here = stragglers.index(self.selected) if self.selected in stragglers else (-1 if step > 0 else 0)
            self.select(stragglers[(here + step) % len(stragglers)])

    def launch_step(self, step: int) -> None:
        """The next (previous) launch, on the same warp and scope where it has them, else its first scope's slowest
        warp."""
        if self.warps is None or not 0 <= self.launch_at + step < len(self.warps.launches):
            return
        event, lane = self.trace.events[self.selected], self.warps.lane_of[self.trace.events[self.selected].lane]
        self.launch_at += step
        launch = self.launch
        self._launch_shown()
        same = next((events for warp, lines in launch.warps.items() if (warp.cta, warp.warp) == (lane.cta, lane.warp)
                     for line, events in lines.items() if line == lane.line), [])
        target = next((i for i in same if self.trace.events[i].name == event.name), None)
        self.select(target if target is not None else next(iter(launch.scopes.values())).stragglers[0].event)

    def _group_row(self, kind: str) -> int | None:
        """The row of the SM or CTA (`kind`) the selected row belongs to."""
        here = self.warp_rows[self.row]
        if here.kind == kind:
            return self.row
        if kind == "cta" and here.kind != "warp":
            return None
        return next((number for number in range(self.row, -1, -1) if self.warp_rows[number].kind == kind), None)

    def _select_on_group(self, number: int) -> None:
        """Select, on group row `number`, the outermost scope holding the selected event (else the group's first)."""
        event, source = self.trace.events[self.selected], self.warp_rows[number].source
        lane = self.warps.lane_of[event.lane]
        holding = [i for i in source.members if self.warps.lane_of[self.trace.events[i].lane].cta == lane.cta and
                   self.warps.lane_of[self.trace.events[i].lane].warp == lane.warp and
                   self.trace.events[i].start <= event.start < self.trace.events[i].end + 1]
        self.select(holding[0] if holding else source.members[0], number)

    def action_toggle_group(self) -> None:
        """Open or close the selected group; on a warp's row, close its CTA."""
        if self.warps is None or self.row is None:
            return
        number = self.row if self.warp_rows[self.row].kind != "warp" else self._group_row("cta")
        key = self.warp_rows[number].key
        self.expanded ^= {key}
        self._rows_changed()
        self._select_on_group(number)

    def open_all(self, opened: bool) -> None:
        """Open every group of the launch (the selected warp's row kept), or close them all (its SM's row)."""
        if self.warps is None or self.selected is None:
            return
        if opened:
            self.expanded |= {("sm", sm) for sm in self.launch.sms}
            self.expanded |= {("cta", cta) for ctas in self.launch.sms.values() for cta in ctas}
            self._rows_changed()
            self.select(self.selected)
            return
        sm = self.warps.lane_of[self.trace.events[self.selected].lane].sm
        self.expanded = set()
        self._rows_changed()
        self._select_on_group(next(n for n, row in enumerate(self.warp_rows) if row.key == ("sm", sm)))

    # ---- drawing ----------------------------------------------------------------------------------------------
    def _line(self, number: int, width: int, base: Style) -> Strip:
        """A row: its group or warp, then its scopes as bars coloured by scope, each named inside where it is wide
        enough (a bar of several scopes names none)."""
        row, scopes = self.warp_rows[number], list(self.launch.scopes)

        def look(bar: Bar) -> tuple[str, bool, str | None]:
            names = {self.trace.events[i].name for i in bar.events}
            name = next(iter(names))
            which = self.SCOPE_STYLES[scopes.index(name) % len(self.SCOPE_STYLES)] if name in scopes else "other"
            label = printable(cut_field(name))
            named = len(names) == 1 and bar.width >= len(label) + 2
            return which, number == self.row and self.selected in bar.events, label if named else None

        return self._row_strip(number, row.label, "timeline-view--lane" if row.kind != "warp" else
                               "timeline-view--warp", width, base, look)


def _units(cell: float) -> str:
    """A cell's span in trace units: as cycles are written from one unit up, else with two figures (0.04)."""
    return cycles_number(cell) if cell >= 1 else f"{cell:.2g}"
