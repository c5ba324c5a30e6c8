"""A rank set's traces on one timeline (`output.rank_timeline`): each rank's heading, then its lanes, the clocks
aligned as the merged trace aligns them; n and N step through one kernel's launches on every rank in turn."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from proton_tui.console import cut_field, printable
from proton_tui.output.rank_timeline import RankTimeline
from proton_tui.tui.widgets.timeline.base import widest
from proton_tui.tui.widgets.timeline.lanes import LaneTimeline
from proton_tui.view.formatting import format_window
from proton_tui.view.names import Names
from proton_tui.view.timeline import RowEvents


class RanksTimeline(LaneTimeline):
    """The lane timeline of a merged trace, its lanes grouped under their rank."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.model: RankTimeline | None = None
        self.row_of_lane: dict[int, int] = {}

    def show_ranks(self, model: RankTimeline, names: Names | None = None) -> None:
        """Show every rank's lanes, the first kernel selected."""
        self.model, self.row_of_lane = model, model.row_of_lane
        self.show(model.trace, names)

    def _sources(self) -> list[RowEvents]:
        return [RowEvents([], [], range(0)) if row.lane is None else RowEvents.of_lane(self.trace, row.lane)
                for row in self.model.rows]

    def _row_for(self, event: int, row: int | None) -> int:
        lane_row = self.row_of_lane[self.trace.events[event].lane]
        return row if row is not None and row == lane_row else lane_row

    def _title(self) -> tuple[list[str], str]:
        window, cell = format_window(*self.window, self.layout_.cell_ns)
        return [f"Ranks by {self.model.aligned_by}: {window}", f"({cell} a cell)"], ""

    def action_launch(self, step: int) -> None:
        if self.trace is not None and self.selected is not None and \
                self.trace.events[self.selected].category == "kernel":
            there = self.model.step(self.selected, step)
            if there is not None:
                self.select(there)

    def _row_name(self, number: int) -> str:  # a lane, indented under its rank
        return " " + printable(cut_field(self.model.rows[number].label))

    def _widest(self) -> int:  # a rank's lanes; its heading runs across the row
        return widest(self._row_name(number) for number, row in enumerate(self.model.rows) if row.lane is not None)

    def _line(self, number: int, width: int, base: Style) -> Strip:
        """A rank's heading across the row, or one of its lanes (as the lane timeline draws it)."""
        row = self.model.rows[number]
        if row.lane is None:
            style = base + self.get_component_rich_style("timeline-view--lane")
            return Strip([Segment(printable(row.label), style)]).adjust_cell_length(width, base)
        return super()._line(number, width, base)

