"""What both timelines share: a time ruler, then one row of bars to scale per row of `view.timeline`'s layout.
Arrows move between bars and rows, + and - zoom about the selected bar, h and l pan, 0 shows it all, Enter zooms onto
the selected bar; a click selects, the wheel zooms about the pointer (with shift: pans). The selected event is
announced (`Selected`); Escape asks for the table (`Left`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from proton_tui.hatchet.trace import Trace
from proton_tui.tui.messages import TimelineLeft, TimelineSelected
from proton_tui.tui.widgets.table_rows import fit
from proton_tui.view.names import Names
from proton_tui.view.timeline import MIN_WINDOW_NS, ZOOM_STEP, Bar, TimelineLayout, panned, zoomed

NAME_WIDTH = 18  # cells of the row names' column, at least: it widens to the widest name up to NAME_SHARE
NAME_SHARE = 0.4  # of the timeline's width, the most the row names' column takes
TITLE_MARGIN = 6  # cells of the border around its title: "╭─ " and " ─╮"
PAN_SHARE = 0.25  # h and l move the window by this share of its width
FOCUS_MARGIN = 4.0  # Enter shows the selected event as a quarter of the window


def widest(names: Iterable[str]) -> int:
    """Cells of the widest of `names` (0 for none)."""
    return max(map(cell_len, names), default=0)


class TimelineView(ScrollView, can_focus=True):
    """A trace's rows over a window of its time, one event selected. Each kind of timeline says what its rows are
    (`_sources`), how its title reads (`_title`) and how a row is drawn (`_line`)."""

    # the keys both timelines share; each adds its own (n, Escape, N first: the order the key bar and help list)
    BINDINGS = [
        Binding("left", "move(-1)", "Previous", show=False),
        Binding("right", "move(1)", "Next", show=False),
        Binding("up,k", "lane(-1)", "Lane up", show=False),
        Binding("down,j", "lane(1)", "Lane down", show=False),
        Binding("plus,equals_sign", f"zoom({ZOOM_STEP})", "Zoom in"),
        Binding("minus", f"zoom({1 / ZOOM_STEP})", "Zoom out"),
        Binding("h", "pan(-1)", "Earlier", show=False),
        Binding("l", "pan(1)", "Later", show=False),
        Binding("0", "fit", "All"),
        Binding("enter", "focus_event", "Zoom to it"),
    ]

    SNAP = False  # bars between the nearest cell boundaries (`TimelineLayout`): a warp's back-to-back scopes

    COMPONENT_CLASSES = {"timeline-view--kernel", "timeline-view--scope", "timeline-view--other",
                         "timeline-view--selected", "timeline-view--ruler", "timeline-view--lane",
                         "timeline-view--warp"}

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

    Left = TimelineLeft  # Escape: the screen goes back to the table
    Selected = TimelineSelected  # the selected event changed

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.trace: Trace | None = None
        self.names = Names()
        self.window = (0.0, 1.0)
        self.layout_: TimelineLayout | None = None
        self.selected: int | None = None
        self.row: int | None = None  # the selected row: a lane, or a row of the warp timeline
        self.widest_name = NAME_WIDTH  # cells of the widest row name, set by each timeline when its rows come

    # ---- what each kind of timeline says ----------------------------------------------------------------------
    @property
    def bounds(self) -> tuple[float, float]:
        """The span the window may show: the whole trace."""
        return self.trace.start, max(self.trace.end, self.trace.start + 1.0)

    def _sources(self) -> list | None:
        """The layout's rows: None for one per lane."""
        return None

    def _title(self) -> tuple[list[str], str]:
        """The title's numbers, in parts each shown whole or not at all, and a name after them (cut if need be)."""
        raise NotImplementedError

    def _fitted_title(self) -> Text:
        """The title's parts that fit the border whole, in order (never a number cut short), then its name."""
        parts, name = self._title()
        room = (self.size.width or 80) - TITLE_MARGIN
        shown: list[str] = []
        for part in parts:
            if cell_len(" ".join([*shown, part])) > room:
                break
            shown.append(part)
        return Text(" ".join([*shown, name] if name else shown))

    def _line(self, number: int, width: int, base: Style) -> Strip:
        raise NotImplementedError

    def _ticks(self) -> list[tuple[int, str]]:
        """The ruler's labels: (cell, text)."""
        return self.layout_.ruler()

    def _row_for(self, event: int, row: int | None) -> int | None:
        """The row `event` is selected on: `row` as asked (None: its lane)."""
        return row

    def _pick(self, bar: Bar) -> int:
        """The event a bar selects: its first."""
        return bar.events[0]

    # ---- the window and the selection -------------------------------------------------------------------------
    @property
    def name_width(self) -> int:
        """Cells of the row names' column: as wide as the widest name, within NAME_WIDTH and NAME_SHARE of the
        timeline (a longer name is cut with an ellipsis)."""
        total = self.scrollable_content_region.width or self.size.width or 80
        return max(NAME_WIDTH, min(self.widest_name, int(total * NAME_SHARE)))

    @property
    def bars_width(self) -> int:
        return max(1, (self.scrollable_content_region.width or self.size.width or 80) - self.name_width - 1)

    @property
    def narrowest(self) -> float:
        """The narrowest window: a trace unit (a ns, or a cycle) a cell, as finely as a trace records time."""
        return max(MIN_WINDOW_NS, float(self.bars_width))

    def _lay_out(self) -> None:
        if self.trace is None:
            return
        start, end = self.window
        if end - start < self.narrowest:  # zoomed in on a narrower timeline, since widened
            self.window = zoomed(start, end, 1.0, (start + end) / 2, self.bounds, self.narrowest)
        rows = self._sources()
        self.layout_ = TimelineLayout(self.trace, *self.window, self.bars_width, rows, snap=self.SNAP)
        self.virtual_size = Size(self.bars_width + self.name_width + 1, len(self.layout_.rows) + 1)
        self.border_title = self._fitted_title()
        self.refresh()
        self.call_after_refresh(self._width_kept)

    def _width_kept(self) -> None:
        """Laid out again where the rows just laid out brought a scroll bar (or took one away): the widget's size is
        the same, so no resize says that the bars' width changed."""
        if self.trace is not None and self.layout_ is not None and self.layout_.width != self.bars_width:
            self._lay_out()

    def select(self, event: int, row: int | None = None) -> None:
        """Select `event` on `row` (by default the row that holds it)."""
        self.selected = event
        row = self._row_for(event, row)
        self.row = self.trace.events[event].lane if row is None else row
        bar = self.layout_.bar_of(event, self.row) if self.layout_ is not None else None
        if bar is None:  # outside the window: move the window to it, keeping its width
            item, (start, end) = self.trace.events[event], self.window
            self.window = panned(start, end, (item.start - (start + end) / 2) / (end - start), self.bounds)
            self._lay_out()
        self._row_in_view()
        self.call_after_refresh(self._row_in_view)  # again once laid out: a scroll bar may have taken a row
        self.refresh()
        self.post_message(self.Selected(self, event))

    def _row_in_view(self) -> None:
        """Scroll so the selected row shows under the ruler."""
        height = self.scrollable_content_region.height
        if self.row is None or not height:  # not laid out yet: done once it is
            return
        rows_shown = max(1, height - 1)
        if self.row < round(self.scroll_y):
            self.scroll_to(y=self.row, animate=False, immediate=True, force=True)
        elif self.row >= round(self.scroll_y) + rows_shown:
            self.scroll_to(y=self.row - rows_shown + 1, animate=False, immediate=True, force=True)

    def on_resize(self) -> None:
        if self.trace is not None and self.layout_ is not None and self.layout_.width != self.bars_width:
            self._lay_out()
        self._row_in_view()  # the selected row kept in view at the new size (and at the first one, once known)

    def _bar(self) -> Bar | None:
        """The selected event's bar; the window moved to it first when panning left it outside."""
        if self.layout_ is None or self.selected is None:
            return None
        bar = self.layout_.bar_of(self.selected, self.row)
        if bar is None:
            self.select(self.selected, self.row)  # pans to it
            bar = self.layout_.bar_of(self.selected, self.row)
        return bar

    # ---- keys and mouse ---------------------------------------------------------------------------------------
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
        self.window = zoomed(*self.window, factor, centre, self.bounds, self.narrowest)
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
        width = event.duration * FOCUS_MARGIN
        middle = event.start + event.duration / 2
        self.window = zoomed(middle - width / 2, middle + width / 2, 1.0, middle, self.bounds, self.narrowest)
        self._lay_out()

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
        x = min(max((inside.x if inside is not None else 0) - self.name_width - 1, 0), self.layout_.width - 1)
        self.window = zoomed(*self.window, factor, self.layout_.start + (x + 0.5) * self.layout_.cell_ns,
                             self.bounds, self.narrowest)
        self._lay_out()

    def on_mouse_scroll_up(self, event) -> None:
        self._wheel(event, ZOOM_STEP)

    def on_mouse_scroll_down(self, event) -> None:
        self._wheel(event, 1 / ZOOM_STEP)

    def on_click(self, event) -> None:
        inside = event.get_content_offset(self)
        if self.layout_ is None or inside is None:
            return
        lane, x = round(self.scroll_y) + inside.y - 1, inside.x - self.name_width - 1
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
            free = 0  # where the next label may start: a label that would run into the last one is left out whole
            for x, label in self._ticks():
                text = "┆" + label
                if free <= x and x + len(text) <= self.layout_.width:
                    ruler[x:x + len(text)] = text
                    free = x + len(text) + 1
            style = base + self.get_component_rich_style("timeline-view--ruler")
            return Strip([Segment(fit("time →", self.name_width) + " " + "".join(ruler), style)]) \
                .adjust_cell_length(width, base)
        lane = round(self.scroll_y) + y - 1
        if lane >= len(self.layout_.rows):
            return Strip.blank(width, base)
        return self._line(lane, width, base)

    def _row_strip(self, number: int, name: str, name_class: str, width: int, base: Style,
                   look: Callable[[Bar], tuple[str, bool, str | None]]) -> Strip:
        """Row `number`: its name, then its bars. `look(bar)`: the component class its colour comes from
        ("kernel", "scope", "other"), whether it is selected, and the name written inside it (None: a solid bar,
        "▓" where it stands for several events)."""
        segments = [Segment(fit(name, self.name_width) + " ", base + self.get_component_rich_style(name_class))]
        at = 0
        for bar in self.layout_.rows[number]:
            if bar.x > at:
                segments.append(Segment(" " * (bar.x - at), base))
            which, selected, label = look(bar)
            style = base + self.get_component_rich_style(f"timeline-view--{which}")
            if selected:
                style += self.get_component_rich_style("timeline-view--selected")
            if label is not None:
                segments.append(Segment(fit(" " + label, bar.width), style + Style(reverse=True)))
            else:
                segments.append(Segment(("█" if len(bar.events) == 1 else "▓") * bar.width, style))
            at = bar.end
        return Strip(segments).adjust_cell_length(width, base)
