"""The timeline of a trace: a time ruler, then one row per lane (GPU streams, CPU threads) with its kernels and
scopes as bars to scale (`proton_tui.timeline` lays them out). Arrows move between bars and lanes, + and - zoom
about the selected bar, h and l pan, 0 shows it all, Enter zooms onto the selected bar, n and N jump to the next and
previous launch of the same kernel; a click selects, the wheel zooms about the pointer (with shift: pans). The
selected event is announced (`Selected`)."""

from __future__ import annotations

from rich.segment import Segment
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...console import printable
from ...formatting import format_value
from ...hatchet.trace import Trace
from ...names import Names
from ...timeline import ZOOM_STEP, Bar, TimelineLayout, panned, zoomed
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
    ]

    COMPONENT_CLASSES = {"timeline-view--kernel", "timeline-view--scope", "timeline-view--other",
                         "timeline-view--selected", "timeline-view--ruler", "timeline-view--lane"}

    DEFAULT_CSS = """
    TimelineView { background: $surface; }
    TimelineView > .timeline-view--kernel { color: $accent; }
    TimelineView > .timeline-view--scope { color: $primary; }
    TimelineView > .timeline-view--other { color: $secondary; }
    TimelineView > .timeline-view--selected { color: $warning; text-style: bold reverse; }
    TimelineView > .timeline-view--ruler { color: $text-muted; background: $panel; }
    TimelineView > .timeline-view--lane { color: $text; text-style: bold; }
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

    # ---- what it shows ----------------------------------------------------------------------------------------
    @property
    def bounds(self) -> tuple[float, float]:
        return self.trace.start, max(self.trace.end, self.trace.start + 1.0)

    def show(self, trace: Trace, names: Names | None = None) -> None:
        """Show all of `trace`, its first kernel selected."""
        self.trace, self.names = trace, names or self.names
        self.window = self.bounds
        kernels = [i for i, event in enumerate(trace.events) if event.category == "kernel"]
        self._lay_out()
        if trace.events:
            self.select(kernels[0] if kernels else 0)

    @property
    def bars_width(self) -> int:
        return max(1, (self.scrollable_content_region.width or self.size.width or 80) - NAME_WIDTH - 1)

    def _lay_out(self) -> None:
        if self.trace is None:
            return
        self.layout_ = TimelineLayout(self.trace, *self.window, self.bars_width)
        self.virtual_size = Size(self.bars_width + NAME_WIDTH + 1, len(self.trace.lanes) + 1)
        start, end = self.window
        self.border_title = Text(f"Timeline: {format_value(start, 'ns')} – {format_value(end, 'ns')} "
                                 f"({format_value(self.layout_.cell_ns, 'ns')} a cell)")
        self.refresh()

    def select(self, event: int) -> None:
        self.selected = event
        bar = self.layout_.bar_of(event) if self.layout_ is not None else None
        if bar is None:  # outside the window: move the window to it, keeping its width
            item, (start, end) = self.trace.events[event], self.window
            self.window = panned(start, end, (item.start - (start + end) / 2) / (end - start), self.bounds)
            self._lay_out()
        self.refresh()
        self.post_message(self.Selected(self, event))

    def on_resize(self) -> None:
        if self.trace is not None and self.layout_ is not None and self.layout_.width != self.bars_width:
            self._lay_out()

    # ---- keys and mouse ---------------------------------------------------------------------------------------
    def _bar(self) -> Bar | None:
        """The selected event's bar; the window moved to it first when panning left it outside."""
        if self.layout_ is None or self.selected is None:
            return None
        bar = self.layout_.bar_of(self.selected)
        if bar is None:
            self.select(self.selected)  # pans to it
            bar = self.layout_.bar_of(self.selected)
        return bar

    def action_leave(self) -> None:
        self.post_message(self.Left())

    def action_move(self, step: int) -> None:
        bar = self._bar()
        if bar is None:
            return
        row = self.layout_.rows[bar.lane]
        at = row.index(bar) + step
        if 0 <= at < len(row):
            self.select(row[at].events[0])
        else:  # past the window's edge: the lane's next event in time, the window following it
            starts, _, offset = self.trace.lane_index(bar.lane)
            there = (bar.events[0] - 1) if step < 0 else bar.events[-1] + 1
            if offset <= there < offset + len(starts):
                self.select(there)

    def action_lane(self, step: int) -> None:
        bar = self._bar()
        if bar is None:
            return
        lane = bar.lane + step
        while 0 <= lane < len(self.layout_.rows) and not self.layout_.rows[lane]:
            lane += step
        if 0 <= lane < len(self.layout_.rows):
            nearest = min(self.layout_.rows[lane], key=lambda other: abs(other.x - bar.x))
            self.select(nearest.events[0])

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
            self.select(bar.events[0])

    # ---- drawing ----------------------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        if self.layout_ is None:
            return Strip.blank(width, base)
        if y == 0:
            ruler = [" "] * self.layout_.width
            for x, label in self.layout_.ruler():
                text = "┆" + label
                if x + len(text) <= self.layout_.width:
                    ruler[x:x + len(text)] = text
            style = base + self.get_component_rich_style("timeline-view--ruler")
            return Strip([Segment(fit("time →", NAME_WIDTH) + " " + "".join(ruler), style)], width) \
                .adjust_cell_length(width, base)
        lane = round(self.scroll_y) + y - 1
        if lane >= len(self.layout_.rows):
            return Strip.blank(width, base)
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
