"""A dialog that asks for a file path and acts on it."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from proton_tui.console import near_path, printable
from proton_tui.hatchet import CaptureError
from proton_tui.output.diff import DiffError
from proton_tui.tui.widgets.key_bar import KeyBar


class PathDialog(ModalScreen):
    """Ask for a file path and act on it; a failure stays in the dialog as one line, the path still editable."""

    BINDINGS = [Binding("escape", "dismiss", "Cancel")]

    def __init__(self, prompt: str, value: str, act, choices: list[str] | None = None, *,
                 empty: str = "Enter a path") -> None:
        """`choices`: paths offered under the field, shown relative to the working folder when under it (Enter on
        one acts on it; typing still works). `empty`: what Enter on an empty field says (it acts on nothing)."""
        super().__init__()
        self.prompt, self.value, self.act, self.choices, self.empty = prompt, value, act, choices or [], empty

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(Text(self.prompt))
            yield Input(self.value, id="path")
            yield Label("", id="path-error", classes="error")
            if self.choices:
                yield Label(Text(f"or pick one ({len(self.choices)}, down to reach them):"))
                yield OptionList(*[Option(Text(printable(near_path(choice))), id=str(i))
                                   for i, choice in enumerate(self.choices)], id="choices")
        yield KeyBar()

    def on_key(self, event) -> None:
        if event.key == "down" and self.focused is self.query_one("#path", Input) and self.choices:
            self.query_one("#choices", OptionList).focus()
            event.stop()

    @on(OptionList.OptionSelected, "#choices")
    def picked(self, event: OptionList.OptionSelected) -> None:
        path = self.choices[int(event.option.id)]
        field = self.query_one("#path", Input)
        field.value = path
        self.submitted(Input.Submitted(field, path))

    @on(Input.Submitted, "#path")
    def submitted(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            self.query_one("#path-error", Label).update(Text(self.empty))
            return
        try:
            result = self.act(event.value.strip())
        except (OSError, ValueError, CaptureError, DiffError) as error:
            self.query_one("#path-error", Label).update(Text(str(error)))
            return
        self.dismiss(result if result is not None else event.value.strip())
