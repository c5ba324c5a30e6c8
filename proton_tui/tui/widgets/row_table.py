"""A table of text rows drawn a line at a time (Textual's line API): only the rows on screen are laid out, each
from its cells' strings, so a table of a thousand rows is redrawn as fast as one of twenty. A header line stays on
top; the cursor is a row; the look is the DataTable's (zebra stripes, the header, the cursor focused or not)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from proton_tui.console import printable


@dataclass(frozen=True)
class Column:
    """A column: its title, its width in cells (padding aside), whether its cells are right-aligned."""

    title: str
    width: int
    right: bool = False


def fitted(text: str, width: int, right: bool) -> str:
    """`text` as exactly `width` cells: cut with an ellipsis when longer, aligned left or right."""
    length = cell_len(text)
    if length > width:
        return set_cell_size(text, width - 1) + "…" if width > 0 else ""
    return " " * (width - length) + text if right else text + " " * (width - length)


def scroll_row_into_view(table: ScrollView, row: int) -> bool:
    """Scroll a table whose first line is its header so that `row` (0: the line under the header) shows; whether it
    had to."""
    top, height = round(table.scroll_y), table.scrollable_content_region.height - 1
    if row < top:
        table.scroll_to(y=row, animate=False, force=True)
    elif height > 0 and row >= top + height:
        table.scroll_to(y=row - height + 1, animate=False, force=True)
    else:
        return False
    return True


class RowTable(ScrollView, can_focus=True):
    """Rows of cells (strings, shown as they are: never markup, a control character written as its escape) under a
    header; `show` sets them. Posts RowHighlighted when the cursor moves to a row and RowSelected on Enter (or a
    click on the cursor's row)."""

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "cursor_to(0)", "First", show=False),
        Binding("end", "cursor_to(-1)", "Last", show=False),
        Binding("enter", "select", "Select", show=False),
    ]
    COMPONENT_CLASSES = {"row-table--header", "row-table--cursor", "row-table--even-row"}
    DEFAULT_CSS = """
    RowTable {
        background: $surface;
        color: $foreground;
        height: auto;
        max-height: 100%;
        &:focus {
            background-tint: $foreground 5%;
            & > .row-table--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
            & > .row-table--header {
                background-tint: $foreground 5%;
            }
        }
        &:dark > .row-table--even-row {
            background: $surface-darken-1 40%;
        }
        & > .row-table--header {
            text-style: bold;
            background: $panel;
            color: $foreground;
        }
        &:ansi > .row-table--header {
            background: ansi_bright_blue;
            color: ansi_default;
        }
        & > .row-table--even-row {
            background: $surface-lighten-1 50%;
        }
        & > .row-table--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
    }
    """

    class RowMessage(Message):
        """Something about the row at `cursor_row` of `table`."""

        def __init__(self, table: RowTable, cursor_row: int) -> None:
            super().__init__()
            self.table, self.cursor_row = table, cursor_row

        @property
        def control(self) -> RowTable:
            return self.table

    class RowHighlighted(RowMessage):
        """The cursor moved to a row."""

    class RowSelected(RowMessage):
        """Enter on a row (or a click on the cursor's row)."""

    def __init__(self, *, cell_padding: int = 1, zebra_stripes: bool = True, **kwargs) -> None:
        super().__init__(**kwargs)
        self.cell_padding, self.zebra_stripes = cell_padding, zebra_stripes
        self.columns: list[Column] = []
        self.rows: Sequence[Sequence[str]] = []
        self.cursor_row = 0
        self._header = ""
        self._row_texts: dict[int, str] = {}  # row → its text, for the rows drawn since the rows were set

    @property
    def row_count(self) -> int:
        return len(self.rows)

    def get_row_at(self, row: int) -> list[str]:
        """A row's cells as given."""
        return list(self.rows[row])

    @property
    def rows_laid_out(self) -> int:
        """How many rows have been made into lines since the rows were set (those drawn, not every row)."""
        return len(self._row_texts)

    @property
    def column_widths(self) -> list[int]:
        """Each column's width on the screen, its padding included."""
        return [column.width + 2 * self.cell_padding for column in self.columns]

    def show(self, columns: list[Column], rows: Sequence[Sequence[str]], cursor_row: int = 0) -> None:
        """Show these rows (each a cell per column) with the cursor on `cursor_row` (clamped to the rows)."""
        self.columns, self.rows, self._row_texts = columns, rows, {}
        self._header = self._text([column.title for column in columns])
        self.virtual_size = Size(sum(self.column_widths), len(rows) + 1)
        self.refresh()
        self.move_cursor(row=cursor_row)

    def _text(self, cells: Sequence[str]) -> str:
        pad = " " * self.cell_padding
        return "".join(pad + fitted(printable(cell), column.width, column.right) + pad
                       for column, cell in zip(self.columns, cells))

    def move_cursor(self, row: int) -> None:
        """The cursor to a row (clamped), scrolled into view; says so with RowHighlighted."""
        previous, self.cursor_row = self.cursor_row, max(0, min(row, len(self.rows) - 1))
        if not self.rows:
            return
        if not self._scroll_to_cursor():
            self.refresh_line(previous + 1)  # a row's line is one below it, under the header
            self.refresh_line(self.cursor_row + 1)
        self.post_message(self.RowHighlighted(self, self.cursor_row))

    def _scroll_to_cursor(self) -> bool:
        """Scroll the cursor's row into view, redrawn; whether it had to."""
        if not scroll_row_into_view(self, self.cursor_row):
            return False
        self.refresh()
        return True

    def on_resize(self) -> None:
        if self.rows:
            self.call_after_refresh(self._scroll_to_cursor)  # a shorter table keeps its cursor's row shown

    # ---- keys and the mouse -------------------------------------------------------------------------------------
    def action_cursor(self, delta: int) -> None:
        self.move_cursor(self.cursor_row + delta)

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.scrollable_content_region.height - 2))

    def action_cursor_to(self, row: int) -> None:
        self.move_cursor(row if row >= 0 else len(self.rows) - 1)

    def action_select(self) -> None:
        if self.rows:
            self.post_message(self.RowSelected(self, self.cursor_row))

    def on_click(self, event) -> None:
        offset = event.get_content_offset(self)  # inside the border, if any
        if offset is None:
            return
        row = round(self.scroll_y) + offset.y - 1
        if offset.y >= 1 and 0 <= row < len(self.rows):
            if row == self.cursor_row:
                self.action_select()
            else:
                self.move_cursor(row)

    # ---- drawing ------------------------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        x = round(self.scroll_x)
        if y == 0:
            style = base + self.get_component_rich_style("row-table--header")
            return Strip([Segment(self._header, style)]).crop(x, x + width).extend_cell_length(width, style)
        row = round(self.scroll_y) + y - 1
        if row >= len(self.rows):
            return Strip.blank(width, base)
        style = base
        if self.zebra_stripes and row % 2 == 0:
            style += self.get_component_rich_style("row-table--even-row")
        if row == self.cursor_row:
            style += self.get_component_rich_style("row-table--cursor")
        text = self._row_texts.get(row)
        if text is None:
            text = self._row_texts[row] = self._text(self.rows[row])
        return Strip([Segment(text, style)]).crop(x, x + width).extend_cell_length(width, style)
