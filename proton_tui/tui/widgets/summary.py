"""The viewer's header: parts separated by two spaces ("file  GPU time 39.66 ms  56 launches  …") on one line, or more
when one cannot hold them, whole parts in order: what `LINES` lines cannot hold is left out from the last, and "…" says
so."""

from __future__ import annotations

from rich.text import Text
from textual.geometry import Size
from textual.widget import Widget

from proton_tui.view.formatting import one_line, wrapped_parts

LINES = 3  # the most lines the header takes (a trace's at 80 columns takes three)


class Summary(Widget):
    DEFAULT_CSS = "Summary { height: auto; }"

    def __init__(self, text: str = "", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.text, self.cut_last = text, False

    def update(self, text: Text | str, cut_last: bool = False) -> None:
        """Show `text`; with `cut_last`, one line whose last part (a path) is cut in its middle to fit, not left
        out."""
        self.text, self.cut_last = (text.plain if isinstance(text, Text) else text), cut_last
        self.refresh(layout=True)

    def lines(self, width: int) -> list[str]:
        parts = self.text.replace("\n", "  ").split("  ")
        return [one_line(parts, width, True)] if self.cut_last else wrapped_parts(parts, width, LINES)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return max(1, len(self.lines(width)))

    def render(self) -> Text:
        return Text("\n".join(self.lines(self.content_region.width or self.size.width)), no_wrap=True,
                    overflow="ellipsis")
