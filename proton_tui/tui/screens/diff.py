"""Two captures (or scopes of captures) compared per kernel."""

from __future__ import annotations

from rich.cells import cell_len, chop_cells
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Static

from proton_tui.console import cut_field, printable
from proton_tui.output.diff import ProfileDiff, counts_line, diff_columns, kernel_diff_cells, side_name, total_cells
from proton_tui.tui.widgets.key_bar import KeyBar
from proton_tui.tui.widgets.rows import Rows
from proton_tui.view.names import Names

MIN_NAME_WIDTH = 16  # cells the kernel column keeps on a narrow screen: the numbers then scroll, never cut
GAP, SCROLLBAR = 1, 2  # cells between two columns; the vertical scrollbar's width


class DiffScreen(Screen):
    """Two captures compared per kernel: time A, time B, delta, ratio; new and gone kernels; largest change first."""

    BINDINGS = [Binding("escape,q,b", "app.pop_screen", "Back")]

    def __init__(self, diff: ProfileDiff, names: Names) -> None:
        super().__init__()
        self.diff, self.names = diff, names

    def compose(self) -> ComposeResult:
        diff = self.diff
        yield Static(Text(printable(f"A: {side_name(diff.a)}") + "\n" + printable(f"B: {side_name(diff.b)}")),
                     id="summary")
        yield Static(Text(counts_line(diff)), id="diff-counts")
        yield Rows(id="diff", cursor_type="row", zebra_stripes=True)
        yield KeyBar()

    def on_mount(self) -> None:
        self.fill(self.app.size.width)

    def on_resize(self, event: events.Resize) -> None:
        self.fill(event.size.width)

    def fill(self, width: int) -> None:
        """The kernel first, in what the numbers leave of `width` (a longer name wraps onto more lines, never cut),
        then the numbers, never cut (they scroll where the screen is too narrow for them)."""
        diff, table = self.diff, self.query_one("#diff", DataTable)
        numbers = diff_columns(diff)
        shown = [cut_field(self.names.shown(kernel.name)) for kernel in diff.kernels]
        table.cell_padding = 0  # the numbers carry their own gap: the kernel column gets every cell left
        room = width - sum(column.width + GAP for column in numbers) - SCROLLBAR
        widest = max([len("(total)"), *map(cell_len, shown)])
        name_width = max(MIN_NAME_WIDTH, min(widest, room))
        row = table.cursor_row
        table.clear(columns=True)
        table.add_column("kernel", width=name_width)
        for column in numbers:
            table.add_column(Text(column.title, justify="right"), width=column.width + GAP)
        table.add_row(Text("(total)"), *[Text(cell, justify="right") for cell in total_cells(diff)])
        for kernel, name in zip(diff.kernels, shown):
            cells = [Text(cell, justify="right") for cell in kernel_diff_cells(kernel, diff.unit)]
            lines = chop_cells(name, name_width)  # cut every name_width cells, never at a space: no cell is lost
            table.add_row(Text("\n".join(lines), no_wrap=True), *cells, height=len(lines))
        table.move_cursor(row=row)
