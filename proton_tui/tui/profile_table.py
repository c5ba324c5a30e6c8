"""A collapsible tree-table of a profile that draws only the rows on screen (Textual's line API).

Rows are node ids in display order; expanding splices a node's visible descendants in, so a million-node capture
costs a list of ints, not a widget per node.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..hatchet import KernelStats, Profile
from ..report import Column, columns, kernel_cells, node_cells

SORT_KEYS = ("time", "launches", "avg", "name")
MIN_NAME_WIDTH = 24
AUTO_EXPAND_ROWS = 200  # at start, open the top level when it shows no more rows than this


def fit(text: str, width: int) -> str:
    """Cut text to a cell width with an ellipsis, then pad it to exactly that width."""
    if cell_len(text) > width:
        while text and cell_len(text) > width - 1:
            text = text[:-1]
        text += "…"
    return text + " " * (width - cell_len(text))


class ProfileTable(ScrollView, can_focus=True):
    """Tree of nodes (or the flat kernel summary) with numeric columns aligned at any depth."""

    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "cursor_to(0)", "First", show=False),
        Binding("end", "cursor_to(-1)", "Last", show=False),
        Binding("enter,space", "toggle", "Expand/collapse"),
        Binding("right", "expand", "Expand", show=False),
        Binding("left", "collapse", "Collapse", show=False),
        Binding("e", "expand_all", "Expand all"),
        Binding("c", "collapse_all", "Collapse all"),
        Binding("k", "toggle_summary", "Kernels/tree"),
        Binding("s", "cycle_sort", "Sort"),
    ]
    COMPONENT_CLASSES = {"profile-table--cursor", "profile-table--header", "profile-table--kernel"}
    DEFAULT_CSS = """
    ProfileTable { height: 1fr; }
    ProfileTable > .profile-table--header { text-style: bold; background: $panel; }
    ProfileTable > .profile-table--cursor { background: $accent 40%; }
    ProfileTable:focus > .profile-table--cursor { background: $accent; color: $text; }
    ProfileTable > .profile-table--kernel { color: $text; }
    """

    cursor: reactive[int] = reactive(0, always_update=True)

    class Highlighted(Message):
        """The cursor moved to a node (tree) or kernel (summary)."""

        def __init__(self, table: ProfileTable, node: int | None, kernel: KernelStats | None) -> None:
            super().__init__()
            self.table, self.node, self.kernel = table, node, kernel

    def __init__(self, profile: Profile, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.profile = profile
        self.columns: list[Column] = columns(profile)
        self.sort_key = "time"
        self.show_kernels = False
        self.expanded: set[int] = {0}
        self.rows: list[int] = []  # node ids (tree) or positions in self.kernels (summary)
        self.kernels = []
        self._rebuild_rows()
        if len(self.rows) + sum(len(profile.children[n]) for n in self.rows[1:]) <= AUTO_EXPAND_ROWS:
            for node in list(self.rows[1:]):
                self.expanded.add(node)
            self._rebuild_rows()

    # ---- rows -------------------------------------------------------------------------------------------------
    def _flatten(self, top: int) -> list[int]:
        """Visible descendants of an expanded node, in display order (top itself excluded)."""
        profile, expanded, sort_key = self.profile, self.expanded, self.sort_key
        out: list[int] = []
        stack = list(reversed(profile.sorted_children(top, sort_key)))
        while stack:
            node = stack.pop()
            out.append(node)
            if node in expanded and profile.children[node]:
                stack.extend(reversed(profile.sorted_children(node, sort_key)))
        return out

    def _rebuild_rows(self, keep: int | None = None) -> None:
        if self.show_kernels:
            self.kernels = self.profile.kernels_sorted(self.sort_key)
            self.rows = list(range(len(self.kernels)))
        else:
            self.rows = [0] + (self._flatten(0) if 0 in self.expanded else [])
        self._resize()
        if keep is not None and keep in self.rows:
            self.cursor = self.rows.index(keep)
        else:
            self.cursor = min(self.cursor, len(self.rows) - 1)

    def _resize(self) -> None:
        self.virtual_size = Size(self.size.width, len(self.rows) + 1)
        self.refresh()

    @property
    def current_node(self) -> int | None:
        """The node under the cursor in tree mode."""
        return None if self.show_kernels or not self.rows else self.rows[self.cursor]

    def expand(self, node: int) -> None:
        """Open one node, splicing its visible descendants in after it."""
        if self.show_kernels or node in self.expanded or not self.profile.children[node]:
            return
        self.expanded.add(node)
        at = self.cursor if self.rows[self.cursor] == node else self.rows.index(node)
        self.rows[at + 1 : at + 1] = self._flatten(node)
        self._resize()

    def collapse(self, node: int) -> None:
        """Close one node, removing the rows below it."""
        if self.show_kernels or node not in self.expanded:
            return
        self.expanded.discard(node)
        at = self.rows.index(node)
        depth, depths, end = self.profile.depths[node], self.profile.depths, at + 1
        while end < len(self.rows) and depths[self.rows[end]] > depth:
            end += 1
        del self.rows[at + 1 : end]
        self._resize()

    # ---- actions ----------------------------------------------------------------------------------------------
    def action_cursor(self, delta: int) -> None:
        self.cursor = max(0, min(len(self.rows) - 1, self.cursor + delta))

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.size.height - 2))

    def action_cursor_to(self, row: int) -> None:
        self.cursor = row if row >= 0 else len(self.rows) - 1

    def action_toggle(self) -> None:
        node = self.current_node
        if node is not None:
            self.collapse(node) if node in self.expanded else self.expand(node)

    def action_expand(self) -> None:
        node = self.current_node
        if node is None:
            return
        if node in self.expanded and self.profile.children[node]:
            self.action_cursor(1)
        else:
            self.expand(node)

    def action_collapse(self) -> None:
        node = self.current_node
        if node is None:
            return
        if node in self.expanded and self.profile.children[node] and node != 0:
            self.collapse(node)
        elif node > 0:
            self.cursor = self.rows.index(self.profile.parents[node])

    def action_expand_all(self) -> None:
        if self.show_kernels:
            return
        keep = self.current_node
        self.expanded = {n for n in range(self.profile.node_count) if self.profile.children[n]}
        self._rebuild_rows(keep)

    def action_collapse_all(self) -> None:
        if self.show_kernels:
            return
        self.expanded = {0}
        self._rebuild_rows(0)

    def action_toggle_summary(self) -> None:
        self.show_kernels = not self.show_kernels
        self._rebuild_rows()
        self.cursor = 0

    def action_cycle_sort(self) -> None:
        self.sort_key = SORT_KEYS[(SORT_KEYS.index(self.sort_key) + 1) % len(SORT_KEYS)]
        self._rebuild_rows(self.current_node)
        self.notify(f"Sorted by {self.sort_key}", timeout=2)

    # ---- events -----------------------------------------------------------------------------------------------
    def watch_cursor(self, row: int) -> None:
        if not self.rows:
            return
        top, height = round(self.scroll_y), self.scrollable_content_region.height - 1
        if row < top:
            self.scroll_to(y=row, animate=False)
        elif height > 0 and row >= top + height:
            self.scroll_to(y=row - height + 1, animate=False)
        self.refresh()
        kernel = self.kernels[self.rows[row]] if self.show_kernels else None
        self.post_message(self.Highlighted(self, self.current_node, kernel))

    def on_resize(self) -> None:
        self._resize()

    def on_click(self, event) -> None:
        row = round(self.scroll_y) + event.y - 1
        if 0 <= row < len(self.rows):
            if row == self.cursor:
                self.action_toggle()
            self.cursor = row

    # ---- drawing ----------------------------------------------------------------------------------------------
    def _name_width(self, width: int) -> int:
        return max(MIN_NAME_WIDTH, width - sum(col.width + 2 for col in self.columns))

    def header_text(self, width: int) -> str:
        """The column titles, aligned with the rows; the active sort column is marked."""
        marks = {"time": 0, "launches": 2, "avg": 3}
        titles = [col.title for col in self.columns]
        if self.sort_key in marks:
            titles[marks[self.sort_key]] = "▼" + titles[marks[self.sort_key]]
        name = ("kernel" if self.show_kernels else "name") + (" ▲" if self.sort_key == "name" else "")
        return self._line(name, titles, width)

    def _line(self, name: str, cells: list[str], width: int) -> str:
        numbers = "".join("  " + cell.rjust(col.width)[-col.width :] for cell, col in zip(cells, self.columns))
        return fit(fit(name, self._name_width(width)) + numbers, width)

    def row_text(self, row: int, width: int) -> str:
        """One row as plain text (the name is data: never parsed as markup)."""
        profile = self.profile
        if self.show_kernels:
            kernel = self.kernels[self.rows[row]]
            return self._line(kernel.name, kernel_cells(profile, kernel), width)
        node = self.rows[row]
        if profile.children[node]:
            marker = "▾ " if node in self.expanded else "▸ "
        else:
            marker = "  "
        label = "  " * profile.depths[node] + marker + profile.names[node]
        return self._line(label, node_cells(profile, node), width)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        if y == 0:
            style = base + self.get_component_rich_style("profile-table--header")
            return Strip([Segment(self.header_text(width), style)], width)
        row = round(self.scroll_y) + y - 1
        if row >= len(self.rows):
            return Strip.blank(width, base)
        style = base
        if row == self.cursor:
            style = base + self.get_component_rich_style("profile-table--cursor")
        elif not self.show_kernels and self.profile.is_kernel[self.rows[row]]:
            style = base + self.get_component_rich_style("profile-table--kernel")
        return Strip([Segment(self.row_text(row, width), style)], width)
