"""The timeline of a trace: a time ruler, then one row per lane (GPU streams, CPU threads) with its kernels and
scopes as bars to scale (`proton_tui.timeline` lays them out). Arrows move between bars and lanes, + and - zoom
about the selected bar, h and l pan, 0 shows it all, Enter zooms onto the selected bar, n and N jump to the next and
previous launch of the same kernel; a click selects, the wheel zooms about the pointer (with shift: pans). The
selected event is announced (`Selected`).

An instrumentation trace shows one launch at a time ([ and ] go between them), its warps grouped SM → CTA → warp
(space, or Enter on a group, opens or closes it; e and c open or close them all; a closed group is one row of its
warps' outermost scopes), in cycles from the launch's start; n and N jump to the next and previous straggler of the
selected scope (its lane opened)."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...console import printable
from ...formatting import cycles_number, format_value
from ...hatchet.trace import Trace
from ...names import Names
from ...timeline import ZOOM_STEP, Bar, TimelineLayout, WarpRow, panned, warp_rows, zoomed
from ...warps import Launch, WarpTrace, warp_trace
from .table_rows import fit

NAME_WIDTH = 18  # cells of the lane names' column
PAN_SHARE = 0.25  # h and l move the window by this share of its width
FOCUS_MARGIN = 4.0  # Enter shows the selected event as a quarter of the window


class TimelineView(ScrollView, can_focus=True):
    """A trace's lanes over a window of its time, one event selected."""

    BINDINGS = [
        Binding("left", "move(-1)", "Previous", show=False),
        Binding("right", "move(1)", "Next", show=False),
        Binding("up", "lane(-1)", "Lane up", show=False),
        Binding("down", "lane(1)", "Lane down", show=False),
        Binding("plus,equals_sign", f"zoom({ZOOM_STEP})", "Zoom in"),
        Binding("minus", f"zoom({1 / ZOOM_STEP})", "Zoom out"),
        Binding("h", "pan(-1)", "Earlier", show=False),
        Binding("l", "pan(1)", "Later", show=False),
        Binding("0", "fit", "All"),
        Binding("enter", "focus_event", "Zoom to it"),
        Binding("n", "launch(1)", "Next launch"),
        Binding("escape", "leave", "Table", show=False),
        Binding("N", "launch(-1)", "Previous launch", show=False),
        Binding("n", "next_straggler", "Straggler"),
        Binding("N", "previous_straggler", "Previous straggler", show=False),
        Binding("right_square_bracket", "later_launch", "Launch"),
        Binding("left_square_bracket", "earlier_launch", "Previous launch", show=False),
        Binding("space", "toggle_group", "Open/close"),
        Binding("e", "open_all", "Open all", show=False),
        Binding("c", "close_all", "Close all", show=False),
    ]
    # instrumentation traces only
    WARP_ACTIONS = {"next_straggler", "previous_straggler", "later_launch", "earlier_launch", "toggle_group",
                    "open_all", "close_all"}

    COMPONENT_CLASSES = {"timeline-view--kernel", "timeline-view--scope", "timeline-view--other",
                         "timeline-view--selected", "timeline-view--ruler", "timeline-view--lane",
                         "timeline-view--warp"}
    SCOPE_STYLES = ("scope", "kernel", "other")  # an instrumentation trace's scopes take these in turn

    DEFAULT_CSS = """
    TimelineView { background: $surface; }
    TimelineView > .timeline-view--kernel { color: $accent; }
    TimelineView > .timeline-view--scope { color: $primary; }
    TimelineView > .timeline-view--other { color: $secondary; }
    TimelineView > .timeline-view--selected { color: $warning; text-style: bold reverse; }
    TimelineView > .timeline-view--ruler { color: $text-muted; background: $panel; }
    TimelineView > .timeline-view--lane { color: $text; text-style: bold; }
    TimelineView > .timeline-view--warp { color: $text-muted; }
    """

    class Left(Message):
        """Escape: the screen goes back to the table."""

    class Selected(Message):
        """The selected event changed (an index into the trace's events)."""

        def __init__(self, view: TimelineView, event: int) -> None:
            super().__init__()
            self.view, self.event = view, event

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.trace: Trace | None = None
        self.names = Names()
        self.window = (0.0, 1.0)
        self.layout_: TimelineLayout | None = None
        self.selected: int | None = None
        self.row: int | None = None  # the selected row: a lane, or a row of `warp_rows`
        # an instrumentation trace: its warps, the launch shown, the groups open, the rows they make
        self.warps: WarpTrace | None = None
        self.launch_at = 0
        self.expanded: set = set()
        self.warp_rows: list[WarpRow] = []

    # ---- what it shows ----------------------------------------------------------------------------------------
    @property
    def launch(self) -> Launch | None:
        return self.warps.launches[self.launch_at] if self.warps is not None else None

    @property
    def bounds(self) -> tuple[float, float]:
        if self.warps is not None:  # the launch shown
            events = self.trace.events
            start = events[self.launch.events[0]].start
            return start, max(max(events[i].end for i in self.launch.events), start + 1.0)
        return self.trace.start, max(self.trace.end, self.trace.start + 1.0)

    def waiting(self, text: str) -> None:
        """Nothing to show yet: `text` says what is being worked out."""
        self.trace, self.warps, self.layout_, self.selected = None, None, None, None
        self.border_title = Text(text)
        self.refresh()

    def show(self, trace: Trace, names: Names | None = None, clock_khz: float | None = None,
             warps: WarpTrace | None = None) -> None:
        """Show all of `trace`, its first kernel selected. An instrumentation trace shows its first launch, the
        slowest warp of its first scope selected; `clock_khz` (the SM clock) adds times to its cycles; `warps`:
        its warps already worked out (`warp_trace`), else they are here."""
        self.trace, self.names = trace, names or self.names
        self.warps = warps if warps is not None else warp_trace(trace, clock_khz)
        if self.warps is not None and self.warps.launches:
            self.launch_at, self.expanded = 0, set()
            self._launch_shown()
            self.select(next(iter(self.launch.scopes.values())).stragglers[0].event)
            return
        self.warps = None
        self.window = self.bounds
        kernels = [i for i, event in enumerate(trace.events) if event.category == "kernel"]
        self._lay_out()
        if trace.events:
            self.select(kernels[0] if kernels else 0)

    def _launch_shown(self) -> None:
        """The launch `launch_at` in full, its rows as the open groups make them."""
        self.window = self.bounds
        self._rows_changed()

    def _rows_changed(self) -> None:
        self.warp_rows = warp_rows(self.warps, self.launch, self.expanded)
        self._lay_out()

    @property
    def bars_width(self) -> int:
        return max(1, (self.scrollable_content_region.width or self.size.width or 80) - NAME_WIDTH - 1)

    def _lay_out(self) -> None:
        if self.trace is None:
            return
        rows = [row.source for row in self.warp_rows] if self.warps is not None else None
        self.layout_ = TimelineLayout(self.trace, *self.window, self.bars_width, rows, snap=rows is not None)
        self.virtual_size = Size(self.bars_width + NAME_WIDTH + 1, len(self.layout_.rows) + 1)
        start, end = self.window
        if self.warps is not None:
            origin, launch = self.bounds[0], self.launch
            # the numbers first: a long kernel name is what the border cuts. Positions are trace units (cycles
            # within a CTA, ns between CTAs), so they are never converted to time
            self.border_title = Text(
                f"Launch {launch.number} of {len(self.warps.launches)}: {cycles_number(round(start - origin))} – "
                f"{cycles_number(round(end - origin))} ({cycles_number(round(self.layout_.cell_ns))} a cell, trace "
                f"units) {printable(launch.kernel)}")
        else:
            self.border_title = Text(f"Timeline: {format_value(start, 'ns')} – {format_value(end, 'ns')} "
                                     f"({format_value(self.layout_.cell_ns, 'ns')} a cell)")
        self.refresh()

    def select(self, event: int, row: int | None = None) -> None:
        """Select `event` on `row` (by default its lane, or its warp's row, its groups opened for it)."""
        self.selected = event
        if self.warps is not None:
            if (at := self.warps.launch_of.get(event)) is not None and at != self.launch_at:
                self.launch_at = at
                self._launch_shown()
            if row is None and self._holds(self.row, event):  # it stays on the row it is on (a group's, say)
                row = self.row
            if not self._holds(row, event):
                row = self._reveal(event)
        self.row = self.trace.events[event].lane if row is None else row
        bar = self.layout_.bar_of(event, self.row) if self.layout_ is not None else None
        if bar is None:  # outside the window: move the window to it, keeping its width
            item, (start, end) = self.trace.events[event], self.window
            self.window = panned(start, end, (item.start - (start + end) / 2) / (end - start), self.bounds)
            self._lay_out()
        self._row_in_view()
        self.refresh()
        self.post_message(self.Selected(self, event))

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

    def _row_in_view(self) -> None:
        """Scroll so the selected row shows under the ruler."""
        rows_shown = max(1, (self.scrollable_content_region.height or self.size.height or 2) - 1)
        if self.row is None:
            return
        if self.row < round(self.scroll_y):
            self.scroll_to(y=self.row, animate=False, immediate=True)
        elif self.row >= round(self.scroll_y) + rows_shown:
            self.scroll_to(y=self.row - rows_shown + 1, animate=False, immediate=True)

    def on_resize(self) -> None:
        if self.trace is not None and self.layout_ is not None and self.layout_.width != self.bars_width:
            self._lay_out()

    # ---- keys and mouse ---------------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action in self.WARP_ACTIONS:
            return self.warps is not None
        if action == "launch":
            return self.warps is None
        return True

    def _bar(self) -> Bar | None:
        """The selected event's bar; the window moved to it first when panning left it outside."""
        if self.layout_ is None or self.selected is None:
            return None
        bar = self.layout_.bar_of(self.selected, self.row)
        if bar is None:
            self.select(self.selected, self.row)  # pans to it
            bar = self.layout_.bar_of(self.selected, self.row)
        return bar

    def _pick(self, bar: Bar) -> int:
        """The event a bar selects: its first; on a group's row, its longest (the slowest warp under it)."""
        if self.warps is not None and self.warp_rows[bar.lane].kind != "warp":
            return max(bar.events, key=lambda i: self.trace.events[i].duration)
        return bar.events[0]

    def action_leave(self) -> None:
        self.post_message(self.Left())

    def action_move(self, step: int) -> None:
        bar = self._bar()
        if bar is None:
            return
        row = self.layout_.rows[bar.lane]
        at = row.index(bar) + step
        if 0 <= at < len(row):
            self.select(self._pick(row[at]), bar.lane)
        else:  # past the window's edge: the row's next event in time, the window following it
            source = self.layout_.sources[bar.lane]
            there = source.position(bar.events[0]) - 1 if step < 0 else source.position(bar.events[-1]) + 1
            if 0 <= there < len(source.members):
                self.select(source.members[there], bar.lane)

    def action_lane(self, step: int) -> None:
        bar = self._bar()
        if bar is None:
            return
        lane = bar.lane + step
        while 0 <= lane < len(self.layout_.rows) and not self.layout_.rows[lane]:
            lane += step
        if 0 <= lane < len(self.layout_.rows):
            nearest = min(self.layout_.rows[lane], key=lambda other: abs(other.x - bar.x))
            self.select(self._pick(nearest), lane)

    def action_zoom(self, factor: float) -> None:
        if self.trace is None:
            return
        centre = self.trace.events[self.selected].start if self.selected is not None else sum(self.window) / 2
        self.window = zoomed(*self.window, factor, centre, self.bounds)
        self._lay_out()

    def action_pan(self, direction: int) -> None:
        if self.trace is not None:
            self.window = panned(*self.window, direction * PAN_SHARE, self.bounds)
            self._lay_out()

    def action_fit(self) -> None:
        if self.trace is not None:
            self.window = self.bounds
            self._lay_out()

    def action_focus_event(self) -> None:
        if self.trace is None or self.selected is None:
            return
        if self.warps is not None and self.warp_rows[self.row].kind != "warp":  # a group: Enter opens or closes it
            self.action_toggle_group()
            return
        event = self.trace.events[self.selected]
        width = max(event.duration * FOCUS_MARGIN, 10.0)
        middle = event.start + event.duration / 2
        self.window = zoomed(middle - width / 2, middle + width / 2, 1.0, middle, self.bounds)
        self._lay_out()

    def action_launch(self, step: int) -> None:
        if self.trace is not None and self.selected is not None:
            there = self.trace.next_launch(self.selected, step) if self.trace.events[self.selected].category == \
                "kernel" else None
            if there is not None:
                self.select(there)

    # ---- an instrumentation trace's warps ---------------------------------------------------------------------
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

    def _wheel(self, event, factor: float) -> None:
        """The mouse wheel zooms about the time under the pointer (shift: pans instead)."""
        event.prevent_default()
        event.stop()
        if self.layout_ is None:
            return
        if event.shift:
            self.action_pan(1 if factor < 1 else -1)
            return
        inside = event.get_content_offset(self)
        x = min(max((inside.x if inside is not None else 0) - NAME_WIDTH - 1, 0), self.layout_.width - 1)
        self.window = zoomed(*self.window, factor, self.layout_.start + (x + 0.5) * self.layout_.cell_ns,
                             self.bounds)
        self._lay_out()

    def on_mouse_scroll_up(self, event) -> None:
        self._wheel(event, ZOOM_STEP)

    def on_mouse_scroll_down(self, event) -> None:
        self._wheel(event, 1 / ZOOM_STEP)

    def on_click(self, event) -> None:
        inside = event.get_content_offset(self)
        if self.layout_ is None or inside is None:
            return
        lane, x = round(self.scroll_y) + inside.y - 1, inside.x - NAME_WIDTH - 1
        if (bar := self.layout_.at(lane, x)) is not None:
            self.select(self._pick(bar), lane)

    # ---- drawing ----------------------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        if self.layout_ is None:
            return Strip.blank(width, base)
        if y == 0:
            ruler = [" "] * self.layout_.width
            ticks = self.layout_.ruler() if self.warps is None else \
                self.layout_.ruler(origin=self.bounds[0], text=lambda units: cycles_number(round(units)))
            for x, label in ticks:
                text = "┆" + label
                if x + len(text) <= self.layout_.width:
                    ruler[x:x + len(text)] = text
            style = base + self.get_component_rich_style("timeline-view--ruler")
            return Strip([Segment(fit("time →", NAME_WIDTH) + " " + "".join(ruler), style)], width) \
                .adjust_cell_length(width, base)
        lane = round(self.scroll_y) + y - 1
        if lane >= len(self.layout_.rows):
            return Strip.blank(width, base)
        if self.warps is not None:
            return self._warp_line(lane, width, base)
        name_style = base + self.get_component_rich_style("timeline-view--lane")
        segments = [Segment(fit(printable(self.trace.lanes[lane].name), NAME_WIDTH) + " ", name_style)]
        at = 0
        for bar in self.layout_.rows[lane]:
            if bar.x > at:
                segments.append(Segment(" " * (bar.x - at), base))
            category = self.trace.events[bar.events[0]].category
            which = "kernel" if category == "kernel" else "scope" if category == "scope" else "other"
            style = base + self.get_component_rich_style(f"timeline-view--{which}")
            if self.selected in bar.events:
                style += self.get_component_rich_style("timeline-view--selected")
            segments.append(Segment(("█" if len(bar.events) == 1 else "▓") * bar.width, style))
            at = bar.end
        return Strip(segments).adjust_cell_length(width, base)

    def _warp_line(self, number: int, width: int, base) -> Strip:
        """A row of the warp timeline: its group or warp, then its scopes as bars coloured by scope, each named
        inside where it is wide enough (a bar of several scopes names none)."""
        row = self.warp_rows[number]
        name_style = base + self.get_component_rich_style("timeline-view--lane" if row.kind != "warp" else
                                                          "timeline-view--warp")
        segments = [Segment(fit(row.label, NAME_WIDTH) + " ", name_style)]
        scopes = list(self.launch.scopes)
        at = 0
        for bar in self.layout_.rows[number]:
            if bar.x > at:
                segments.append(Segment(" " * (bar.x - at), base))
            names = {self.trace.events[i].name for i in bar.events}
            name = next(iter(names))
            which = self.SCOPE_STYLES[scopes.index(name) % len(self.SCOPE_STYLES)] if name in scopes else "other"
            style = base + self.get_component_rich_style(f"timeline-view--{which}")
            if number == self.row and self.selected in bar.events:
                style += self.get_component_rich_style("timeline-view--selected")
            label = printable(name)
            if len(names) == 1 and bar.width >= len(label) + 2:
                segments.append(Segment(fit(" " + label, bar.width), style + Style(reverse=True)))
            else:
                segments.append(Segment(("█" if len(bar.events) == 1 else "▓") * bar.width, style))
            at = bar.end
        return Strip(segments).adjust_cell_length(width, base)
