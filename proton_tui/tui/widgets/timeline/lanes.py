"""The timeline of a trace: one row per lane (GPU streams, CPU threads) with its kernels and scopes as bars to scale
(`proton_tui.view.timeline` lays them out); n and N jump to the next and previous launch of the same kernel."""

from __future__ import annotations

from rich.style import Style
from textual.binding import Binding
from textual.strip import Strip

from proton_tui.console import cut_field, printable
from proton_tui.hatchet.trace import Trace
from proton_tui.tui.widgets.timeline.base import TimelineView, widest
from proton_tui.view.formatting import format_window
from proton_tui.view.names import Names
from proton_tui.view.timeline import Bar


class LaneTimeline(TimelineView):
    """A trace's lanes over a window of its time, one event selected."""

    BINDINGS = [
        Binding("n", "launch(1)", "Next launch"),
        Binding("escape", "leave", "Table", show=False),
        Binding("N", "launch(-1)", "Previous launch", show=False),
    ]

    def show(self, trace: Trace, names: Names | None = None) -> None:
        """Show all of `trace`, its first kernel selected."""
        self.trace, self.names = trace, names or self.names
        self.widest_name = self._widest()
        self.window = self.bounds
        kernels = trace.columns.category_mask("kernel")
        self._lay_out()
        if len(trace.events):
            self.select(int(kernels.argmax()) if kernels.any() else 0)

    def _title(self) -> tuple[list[str], str]:
        window, cell = format_window(*self.window, self.layout_.cell_ns)
        return [f"Timeline: {window}", f"({cell} a cell)"], ""

    def action_launch(self, step: int) -> None:
        if self.trace is not None and self.selected is not None:
            there = self.trace.next_launch(self.selected, step) if self.trace.events[self.selected].category == \
                "kernel" else None
            if there is not None:
                self.select(there)

    def _look(self, bar: Bar) -> tuple[str, bool, None]:
        """A bar coloured by its event's kind, and whether it is selected."""
        category = self.trace.events[bar.events[0]].category
        which = "kernel" if category == "kernel" else "scope" if category == "scope" else "other"
        return which, self.selected in bar.events, None

    def _row_name(self, number: int) -> str:
        return printable(cut_field(self.trace.lanes[number].name))

    def _widest(self) -> int:
        return widest(self._row_name(lane) for lane in range(len(self.trace.lanes)))

    def _line(self, number: int, width: int, base: Style) -> Strip:
        """A lane: its name, then its events as bars coloured by kind."""
        return self._row_strip(number, self._row_name(number), "timeline-view--lane", width, base, self._look)
