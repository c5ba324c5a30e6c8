"""The profile's input bars: the filter bar (include, exclude, min %, max depth) and the search bar. Each says what
was typed as a message; the screen decides what it does to the view."""

from __future__ import annotations

import re

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input

from proton_tui.view.filters import ViewFilter

FILTER_LABELS = {"include": "include", "exclude": "exclude", "threshold": "min %", "depth": "max depth"}


class FilterBar(Horizontal):
    """The filter's four fields, one line; `chosen` reads them as a filter (FilterError names a bad one)."""

    class Edited(Message):
        """A field changed."""

    class Submitted(Message):
        """Enter in a field."""

    def compose(self) -> ComposeResult:
        yield Input(placeholder="include regex", id="include")
        yield Input(placeholder="exclude regex", id="exclude")
        yield Input(placeholder="min % of total", id="threshold", type="number")
        yield Input(placeholder="max depth", id="depth", type="integer")

    def chosen(self, show_empty: bool) -> ViewFilter:
        """The filter the fields say, with `show_empty` kept."""
        values = {field: self.query_one(f"#{field}", Input).value for field in FILTER_LABELS}
        return ViewFilter.parse(**values, labels=FILTER_LABELS, show_empty=show_empty)

    def clear(self) -> None:
        for field in FILTER_LABELS:
            self.query_one(f"#{field}", Input).value = ""

    @on(Input.Changed)
    def edited(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Edited())

    @on(Input.Submitted)
    def submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Submitted())


class SearchBar(Horizontal):
    """One field: a regular expression (case-insensitive; one that does not compile is searched as text)."""

    class Submitted(Message):
        """Enter: `text` as typed, `pattern` what to find (None when the field is empty)."""

        def __init__(self, text: str, pattern: re.Pattern | None) -> None:
            super().__init__()
            self.text, self.pattern = text, pattern

    def compose(self) -> ComposeResult:
        yield Input(placeholder="search names (regex, case-insensitive); Enter to find, n/N next/previous", id="search")

    def clear(self) -> None:
        self.query_one("#search", Input).value = ""

    @on(Input.Submitted)
    def submitted(self, event: Input.Submitted) -> None:
        event.stop()
        pattern = None
        if event.value:
            try:
                pattern = re.compile(event.value, re.IGNORECASE)
            except re.error:
                pattern = re.compile(re.escape(event.value), re.IGNORECASE)
        self.post_message(self.Submitted(event.value, pattern))
