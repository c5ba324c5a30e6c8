"""Every run and box check of the output folder, newest first, this process's marked; Enter reopens one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Static

from proton_tui.console import printable
from proton_tui.engine.history import StoredRun, stored_runs
from proton_tui.tui.messages import OpenCheck, OpenRun
from proton_tui.tui.widgets.key_bar import KeyBar
from proton_tui.tui.widgets.rows import Rows
from proton_tui.view.formatting import counted

if TYPE_CHECKING:
    from proton_tui.engine.session import RunResult

THIS_PROCESS = "● "  # marks a run made since proton-tui opened
COLUMNS = ("STARTED", "RESULT", "WHAT")  # a row each, its folder under the list


class RunsScreen(Screen):
    """A list of runs and checks, a line and aligned columns each, the highlighted one's folder under it; Enter
    reopens one."""

    BINDINGS = [Binding("escape,q,b", "dismiss", "Back")]

    def __init__(self, runs: list[RunResult], output: Path) -> None:
        super().__init__()
        self.output = output
        ours = {run.run_dir.resolve(): run for run in runs}
        stored = stored_runs(output)
        listed = {entry.path.resolve() for entry in stored}
        # (label, this process's run, stored entry): this process's runs kept elsewhere come first
        listing = [(StoredRun(run.run_dir, "run", run.record), run, None)
                   for path, run in reversed(ours.items()) if path not in listed]
        listing += [(entry, ours.get(entry.path.resolve()), entry) for entry in stored]
        self.entries: list[tuple[str, RunResult | None, StoredRun | None]] = [
            ((THIS_PROCESS if run else "  ") + shown.label(), run, entry) for shown, run, entry in listing]
        self.rows = [((THIS_PROCESS if run else "  ") + shown.started, *shown.cells()[1:], shown.path)
                     for shown, run, _ in listing]

    def compose(self) -> ComposeResult:
        mine = sum(1 for _, run, _ in self.entries if run is not None)
        summary = (f"{counted(len(self.entries), 'run or check', 'runs and checks')} in {self.output} (newest first; "
                   f"{THIS_PROCESS.strip()} {counted(mine, 'run')} made since proton-tui opened)"
                   if self.entries else f"No run or check in {self.output} yet.")
        yield Static(Text(printable(summary)), id="summary")
        runs = Rows(id="runs", cursor_type="row", zebra_stripes=True)
        runs.border_title = "Enter opens one"
        for column in COLUMNS:
            runs.add_column(column, key=column)
        for index, (*cells, _) in enumerate(self.rows):
            runs.add_row(*(Text(printable(cell)) for cell in cells), key=str(index))
        yield runs
        yield Static(id="runs-folder")
        yield KeyBar()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is None or event.row_key.value is None:  # an empty list: no row to highlight
            return
        path = self.rows[int(event.row_key.value)][-1]
        self.query_one("#runs-folder", Static).update(Text(printable(f"folder: {path}")))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key is None or event.row_key.value is None:
            return
        _, run, entry = self.entries[int(event.row_key.value)]
        if run is None and entry is not None:
            if (report := entry.check_report()) is not None:
                self.post_message(OpenCheck(report))
                return
            run = entry.run_result()
            if run is None:
                self.notify(printable(f"{entry.path.name}: {entry.problem or 'its record cannot be read'}"),
                            severity="error", timeout=6, markup=False)
                return
        self.post_message(OpenRun(run))
