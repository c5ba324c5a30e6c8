"""A panel that states an outcome: its text, styled as a pass or a failure (the stylesheet's `.pass`/`.fail`)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from proton_tui.engine.rules import tui_words


class VerdictPanel(Static):
    """One outcome in words; `show` sets its text (its advice naming the TUI's controls) and whether it passed."""

    def show(self, text: str, passed: bool) -> None:
        self.update(Text(tui_words(text)))
        self.set_class(passed, "pass")
        self.set_class(not passed, "fail")
        self.display = True
