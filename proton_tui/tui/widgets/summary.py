"""The viewer's header: one line of parts separated by two spaces ("file  GPU time 39.66 ms  56 launches  …"),
never wrapped: the parts that do not fit the width are left out, in order from the last, and "…" says so."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from proton_tui.view.formatting import one_line


class Summary(Widget):
    DEFAULT_CSS = "Summary { height: 1; }"

    def __init__(self, text: str = "", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.text, self.cut_last = text, False

    def update(self, text: Text | str, cut_last: bool = False) -> None:
        """Show `text`; with `cut_last` its last part (a path) is cut in its middle to fit, not left out."""
        self.text, self.cut_last = (text.plain if isinstance(text, Text) else text), cut_last
        self.refresh()

    def render(self) -> Text:
        width = self.content_region.width or self.size.width
        parts = self.text.replace("\n", "  ").split("  ")
        return Text(one_line(parts, width, self.cut_last), no_wrap=True, overflow="ellipsis")
