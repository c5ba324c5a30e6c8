"""Two captures compared per kernel."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Static

from proton_tui.console import cut_field, printable
from proton_tui.output.diff import ProfileDiff, diff_columns, kernel_diff_cells, total_cells
from proton_tui.tui.widgets.key_bar import KeyBar
from proton_tui.view.names import Names


class DiffScreen(Screen):
    """Two captures compared per kernel: time A, time B, delta, ratio; new and gone kernels; largest change first."""

    BINDINGS = [Binding("escape,b", "app.pop_screen", "Back"), Binding("f1", "app.help", "Help")]

    def __init__(self, diff: ProfileDiff, names: Names) -> None:
        super().__init__()
        self.diff, self.names = diff, names

    def compose(self) -> ComposeResult:
        diff = self.diff
        yield Static(Text(printable(f"A: {diff.a.path}") + "\n" + printable(f"B: {diff.b.path}")), id="summary")
        table = DataTable(id="diff", cursor_type="row", zebra_stripes=True)
        for column in diff_columns(diff):
            table.add_column(column.title, width=column.width)
        table.add_column("kernel")
        table.add_row(*[Text(cell, justify="right") for cell in total_cells(diff)], Text("(total)"))
        for kernel in diff.kernels:
            cells = [Text(cell, justify="right") for cell in kernel_diff_cells(kernel, diff.unit)]
            table.add_row(*cells, Text(cut_field(self.names.shown(kernel.name))))
        yield table
        yield KeyBar()
