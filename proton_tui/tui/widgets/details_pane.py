"""The details pane under a capture's views: the selected row, frame or event as label and value lines, wrapped to
the pane's width; long fields cut with their length said (`console.cut_field`). Lines the pane has no room for are
counted in its bottom border, with the key that gives it more room."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from proton_tui.console import cut_field
from proton_tui.output.details import details_text
from proton_tui.view.formatting import counted


class DetailsPane(Static):
    """Shows `rows` ((label, value) pairs); its height is fixed, so a new row repaints the pane alone."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rows: list[tuple[str, str]] = []
        self.border_title = "Details"
        self.more_key = "i"  # the key that gives the pane more room, named where lines are left out

    def show(self, rows: list[tuple[str, str]]) -> None:
        self.rows = rows
        self.redraw()

    def redraw(self) -> None:
        rows = [(label, cut_field(value)) for label, value in self.rows]
        text = details_text(rows, self.content_region.width or None)
        self.update(Text(text), layout=self.has_class("-tall"))  # a tall pane is as high as its lines
        room, lines = self.content_region.height, text.count("\n") + 1
        self.border_subtitle = f"{counted(lines - room, 'more line')}: {self.more_key}" if 0 < room < lines else ""

    def toggle_size(self) -> None:
        """Taller (as high as its lines, within the screen's CSS limit), then hidden (the views take its rows), then
        as it was."""
        if not self.display:
            self.display = True
        elif self.has_class("-tall"):
            self.remove_class("-tall")
            self.display = False
        else:
            self.add_class("-tall")
        self.call_after_refresh(self.redraw)

    def on_resize(self) -> None:
        if self.rows:
            self.call_after_refresh(self.redraw)  # wrapped again to the new width
