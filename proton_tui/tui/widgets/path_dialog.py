"""A dialog that asks for a file path and acts on it."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from ...diff import DiffError
from ...hatchet import CaptureError
from .key_bar import KeyBar


class PathDialog(ModalScreen):
    """Ask for a file path and act on it; a failure stays in the dialog as one line, the path still editable."""

    BINDINGS = [Binding("escape", "dismiss", "Cancel")]

    def __init__(self, prompt: str, value: str, act) -> None:
        super().__init__()
        self.prompt, self.value, self.act = prompt, value, act

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(Text(self.prompt))
            yield Input(self.value, id="path")
            yield Label("", id="path-error", classes="error")
        yield KeyBar()

    @on(Input.Submitted, "#path")
    def submitted(self, event: Input.Submitted) -> None:
        try:
            result = self.act(event.value.strip())
        except (OSError, ValueError, CaptureError, DiffError) as error:
            self.query_one("#path-error", Label).update(Text(str(error)))
            return
        self.dismiss(result if result is not None else event.value.strip())
