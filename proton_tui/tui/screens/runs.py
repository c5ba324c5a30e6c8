"""The runs of this process, newest last; Enter reopens one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...formatting import counted
from ..messages import OpenRun
from ..widgets.key_bar import KeyBar

if TYPE_CHECKING:
    from ...capture.session import RunResult


class RunsScreen(Screen):
    """A list of runs; Enter reopens one."""

    BINDINGS = [Binding("escape,b", "dismiss", "Back"), Binding("f1", "app.help", "Help")]

    def __init__(self, runs: list[RunResult]) -> None:
        super().__init__()
        self.runs = list(runs)

    def compose(self) -> ComposeResult:
        runs = self.runs
        yield Static(Text(f"{counted(len(runs), 'run')} this session" if runs else "No run yet this session."),
                     id="summary")
        yield OptionList(*[Option(Text(run.list_label(i + 1)), id=str(i)) for i, run in enumerate(runs)])
        yield KeyBar()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.post_message(OpenRun(self.runs[int(event.option.id)]))
