"""The viewer's header: lines of parts separated by two spaces ("file  GPU time 39.66 ms  56 launches  …"), wrapped
between parts, never inside one, to the widget's width."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from ...formatting import wrap_parts


class Summary(Widget):
    DEFAULT_CSS = "Summary { height: auto; }"

    def __init__(self, text: str = "", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.text = text

    def update(self, text: Text | str) -> None:
        self.text = text.plain if isinstance(text, Text) else text
        self.refresh(layout=True)

    def get_content_height(self, container, viewport, width: int) -> int:
        return wrap_parts(self.text, width).count("\n") + 1

    def render(self) -> Text:
        return Text(wrap_parts(self.text, self.content_region.width or self.size.width), no_wrap=True,
                    overflow="fold")
