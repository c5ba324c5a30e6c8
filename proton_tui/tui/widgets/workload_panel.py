"""The form's Workload panel: the bundled vecadd, or a command line of the user's (with the folder it runs in),
checked as it is typed by the same rule as `proton-tui run -- COMMAND` (`engine.workload.parse_workload`)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Input, Label, RadioSet

from proton_tui.console import printable
from proton_tui.engine.workload import Workload, WorkloadError, parse_workload
from proton_tui.tui.widgets.form_controls import MarkedRadioButton

VECADD, COMMAND = "vecadd", "command"


class WorkloadPanel(Vertical):
    """What the run runs: vecadd (its fields are the payload panel's) or a command line and its folder."""

    class Changed(Message):
        """The choice, the command or its folder changed."""

    def __init__(self, **kwargs) -> None:
        super().__init__(id="workload-panel", classes="panel", **kwargs)
        self.border_title = "Workload"

    def compose(self) -> ComposeResult:
        yield RadioSet(MarkedRadioButton("bundled vecadd", value=True, name=VECADD),
                       MarkedRadioButton("my command", name=COMMAND), id="workload")
        with Horizontal(classes="field-row"):
            yield Label("Command", classes="field-label")
            yield Input(placeholder="python train.py --steps 3   or   torchrun --nproc-per-node 2 train.py",
                        id="command")
        with Horizontal(classes="field-row"):
            yield Label("Folder", classes="field-label")
            yield Input(placeholder="the folder proton-tui started in", id="cwd")
        yield Label("", id="command-error", classes="error")

    def on_mount(self) -> None:
        self._show()

    @property
    def chosen(self) -> str:
        pressed = self.query_one("#workload", RadioSet).pressed_button
        return pressed.name if pressed is not None and pressed.name else VECADD

    def workload(self) -> Workload | None:
        """The command as the run will take it; None for vecadd. Raises WorkloadError with one line."""
        if self.chosen != COMMAND:
            return None
        text = self.query_one("#command", Input).value
        try:
            argv = shlex.split(text)
        except ValueError as error:
            raise WorkloadError(f"the command does not read as a shell would: {error}") from None
        folder = Path(os.path.expanduser(self.query_one("#cwd", Input).value.strip() or os.getcwd()))
        if not folder.is_dir():
            raise WorkloadError(f"{folder}: no such folder")
        if not argv:
            raise WorkloadError("no command typed (for example: python train.py)")
        return parse_workload(argv, folder.resolve())

    def _show(self) -> None:
        command = self.chosen == COMMAND
        for field in ("#command", "#cwd"):
            self.query_one(field, Input).disabled = not command
        error = self.query_one("#command-error", Label)
        try:
            self.workload()
        except WorkloadError as problem:
            error.update(Text(printable(str(problem))))
            error.display = True
        else:
            error.display = False

    @on(RadioSet.Changed, "#workload")
    @on(Input.Changed, "#command")
    @on(Input.Changed, "#cwd")
    def _changed(self, event: Message) -> None:
        event.stop()
        self._show()
        self.post_message(self.Changed())
