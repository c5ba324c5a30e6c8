"""A Log fed from run output in batches: lines are queued as they arrive and written once per screen tick, so a
flood of output (100k lines) never freezes the UI. A line wider than the log is folded onto the next rows (marked
with CONTINUED), again whenever the log's width changes, so a traceback is read whole without scrolling sideways."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator

from rich.cells import cell_len, chop_cells
from textual.binding import Binding
from textual.widgets import Log

LOG_LINES = 20_000  # the log keeps the newest lines; each run folder's stdout.log keeps them all
FLUSH_S = 0.1  # how often a screen writes the queued lines and refreshes its status line
CONTINUED = "↪ "  # starts each row that carries on a folded line
MIN_FOLD_WIDTH = 20  # narrower than this (not laid out yet), lines are written as they are


class BatchedLog(Log):
    """A Log whose lines are queued by ``add`` and written together by ``flush``, folded to its width."""

    BINDINGS = [Binding("j", "scroll_down", "Down", show=False), Binding("k", "scroll_up", "Up", show=False)]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(max_lines=LOG_LINES, id=id)
        self.pending: list[str] = []
        self.received: deque[str] = deque(maxlen=LOG_LINES)  # the lines as they came, to fold again on a resize
        self.folded_to = 0

    def add(self, lines: Iterable[str]) -> None:
        self.pending.extend(lines)

    def flush(self) -> None:
        if self.pending:
            lines, self.pending = self.pending, []
            self.received.extend(lines)
            self.write_lines(self.fold(lines))

    def fold(self, lines: Iterable[str]) -> Iterator[str]:
        """The rows that show `lines` at the log's width: a wider line as its first part, then the rest marked."""
        width = self.folded_to = self.scrollable_content_region.width
        if width < MIN_FOLD_WIDTH:
            yield from lines
            return
        rest_width = width - cell_len(CONTINUED)
        for line in lines:
            if cell_len(line) <= width:
                yield line
                continue
            first, *rest = chop_cells(line, width)
            yield first
            for part in chop_cells("".join(rest), rest_width):
                yield CONTINUED + part

    def on_resize(self) -> None:
        if self.received and self.scrollable_content_region.width != self.folded_to:
            self.clear()
            self.write_lines(self.fold(self.received))
