"""The keys of the screen underneath."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..widgets.key_bar import KeyBar


class HelpScreen(ModalScreen[None]):
    """The keys of the screen underneath, generated from its bindings so it cannot drift."""

    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close")]

    def __init__(self, keys: list[tuple[str, str]]) -> None:
        super().__init__()
        self.keys = keys

    def compose(self) -> ComposeResult:
        width = max(len(key) for key, _ in self.keys) if self.keys else 0
        lines = [f"{key.rjust(width)}  {action}" for key, action in self.keys]
        with VerticalScroll(id="help"):
            yield Static(Text("\n".join(lines)))
        yield KeyBar()

    def on_mount(self) -> None:
        help_box = self.query_one("#help")
        help_box.border_title, help_box.border_subtitle = "proton-tui keys", "Esc to close"
