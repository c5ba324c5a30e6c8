"""A table of rows (runs, GPUs, doctor cells, kernels compared): Textual's DataTable, `j` and `k` moving its cursor as
the arrows do."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import DataTable


class Rows(DataTable):
    """A DataTable whose cursor also moves with `j` (down) and `k` (up)."""

    BINDINGS = [Binding("j", "cursor_down", "Down", show=False), Binding("k", "cursor_up", "Up", show=False)]
