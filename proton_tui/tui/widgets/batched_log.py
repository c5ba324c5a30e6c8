"""A Log fed from run output in batches: lines are queued as they arrive and written once per screen tick, so a
flood of output (100k lines) never freezes the UI."""

from __future__ import annotations

from collections.abc import Iterable

from textual.widgets import Log

LOG_LINES = 20_000  # the log keeps the newest lines; each run folder's stdout.log keeps them all
FLUSH_S = 0.1  # how often a screen writes the queued lines and refreshes its status line


class BatchedLog(Log):
    """A Log whose lines are queued by ``add`` and written together by ``flush``."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(max_lines=LOG_LINES, id=id)
        self.pending: list[str] = []

    def add(self, lines: Iterable[str]) -> None:
        self.pending.extend(lines)

    def flush(self) -> None:
        if self.pending:
            lines, self.pending = self.pending, []
            self.write_lines(lines)
