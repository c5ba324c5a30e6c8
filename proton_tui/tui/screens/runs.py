"""Every run and box check of the output folder, newest first, this process's marked; Enter reopens one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from proton_tui.console import printable
from proton_tui.engine.history import StoredRun, stored_runs
from proton_tui.tui.messages import OpenCheck, OpenRun
from proton_tui.tui.widgets.key_bar import KeyBar
from proton_tui.view.formatting import counted

if TYPE_CHECKING:
    from proton_tui.engine.session import RunResult

THIS_PROCESS = "● "  # marks a run made since proton-tui opened


class RunsScreen(Screen):
    """A list of runs and checks; Enter reopens one."""

    BINDINGS = [Binding("escape,b", "dismiss", "Back"), Binding("f1", "app.help", "Help")]

    def __init__(self, runs: list[RunResult], output: Path) -> None:
        super().__init__()
        self.output = output
        ours = {run.run_dir.resolve(): run for run in runs}
        stored = stored_runs(output)
        listed = {entry.path.resolve() for entry in stored}
        # (label, this process's run, stored entry): this process's runs kept elsewhere come first
        self.entries: list[tuple[str, RunResult | None, StoredRun | None]] = [
            (THIS_PROCESS + StoredRun(run.run_dir, "run", run.record).label(), run, None)
            for path, run in reversed(ours.items()) if path not in listed
        ]
        for entry in stored:
            mine = ours.get(entry.path.resolve())
            self.entries.append(((THIS_PROCESS if mine else "  ") + entry.label(), mine, entry))

    def compose(self) -> ComposeResult:
        mine = sum(1 for _, run, _ in self.entries if run is not None)
        summary = (f"{counted(len(self.entries), 'run or check', 'runs and checks')} in {self.output} (newest first; "
                   f"{THIS_PROCESS.strip()} {counted(mine, 'run')} made since proton-tui opened)"
                   if self.entries else f"No run or check in {self.output} yet.")
        yield Static(Text(printable(summary)), id="summary")
        runs = OptionList(*[Option(Text(printable(label)), id=str(i)) for i, (label, _, _) in enumerate(self.entries)])
        runs.border_title = "Enter opens one"
        yield runs
        yield KeyBar()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        _, run, entry = self.entries[int(event.option.id)]
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
