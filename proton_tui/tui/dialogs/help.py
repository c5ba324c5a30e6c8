"""The keys of the screen underneath."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from proton_tui.tui.widgets.key_bar import KeyBar


class HelpScreen(ModalScreen[None]):
    """The keys of the screen underneath, generated from its bindings so it cannot drift."""

    BINDINGS = [Binding("escape,q,f1,question_mark", "dismiss", "Close"),
                Binding("j", "scroll(1)", "Down", show=False), Binding("k", "scroll(-1)", "Up", show=False)]

    def __init__(self, keys: list[tuple[str, str]], about: tuple[tuple[str, str], ...] = ()) -> None:
        """`keys`: (keys, what they do); `about`: (control, what it is), a line each, shown first."""
        super().__init__()
        self.keys, self.about = keys, about

    def compose(self) -> ComposeResult:
        text = Text()
        if self.about:
            width = max(len(name) for name, _ in self.about)
            text.append("What each control means\n", style="bold")
            for name, meaning in self.about:
                text.append(f"{name.rjust(width)}  ", style="bold")
                text.append(f"{meaning}\n")
            text.append("\nKeys\n", style="bold")
        width = max(len(key) for key, _ in self.keys) if self.keys else 0
        text.append("\n".join(f"{key.rjust(width)}  {action}" for key, action in self.keys))
        with VerticalScroll(id="help"):
            yield Static(text)
        yield KeyBar()

    def action_scroll(self, lines: int) -> None:
        self.query_one("#help").scroll_relative(y=lines, animate=False)

    def on_mount(self) -> None:
        help_box = self.query_one("#help")
        help_box.border_title, help_box.border_subtitle = "proton-tui keys", "Esc to close"
