"""The form's controls whose state is readable without colour: a radio button marked ● or ○, a switch's label that
says on or off, and an input that shows "…" where its value is wider than the field."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.strip import Strip
from textual.widgets import Input, Label, RadioButton

from proton_tui.view.formatting import middle_cut


class MarkedRadioButton(RadioButton):
    """A radio button whose mark is its state: ● pressed, ○ not (the same in a monochrome terminal)."""

    @property
    def BUTTON_INNER(self) -> str:  # noqa: N802 - Textual's name for the mark
        return "●" if self.value else "○"


class SwitchLabel(Label):
    """A switch's label, its state in words after it: "profile with Proton: on"."""

    def __init__(self, text: str, value: bool, **kwargs) -> None:
        super().__init__(**kwargs)
        self.text = text
        self.show(value)

    def show(self, value: bool) -> None:
        self.update(Text(f"{self.text}: {'on' if value else 'off'}"))


class CutInput(Input):
    """An input that, while it is not being edited, shows a value wider than itself cut in its middle with "…"
    (a path keeps its start and its file); focused, it scrolls as any input does."""

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if y != 0 or self.has_focus or not self.value or cell_len(self.value) <= width:
            return super().render_line(y)
        text = Text(middle_cut(self.value, width), no_wrap=True, end="")
        strip = Strip(self.app.console.render(text, self.app.console_options.update_width(width + 1)))
        return strip.extend_cell_length(width + 1).apply_style(self.rich_style)
