"""A collapsible tree-table of a profile that draws only the rows on screen (Textual's line API).

Rows are node ids in display order; expanding splices a node's visible descendants in, so a million-node capture
costs a list of ints, not a widget per node.
"""

from __future__ import annotations

import re

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..hatchet import KernelStats, Profile
from ..names import display_name
from ..report import Column, columns, kernel_cells, node_cells

SORT_KEYS = ("time", "launches", "avg", "gbps", "name")
SORT_COLUMN = {"time": 0, "launches": 2, "avg": 3, "gbps": 4}  # the column each sort key marks
MIN_NAME_WIDTH = 24
AUTO_EXPAND_ROWS = 200  # at start, open the top level when it shows no more rows than this


def fit(text: str, width: int) -> str:
    """Cut text to a cell width with an ellipsis, then pad it to exactly that width (linear in the text's length:
    every visible row goes through here on every repaint)."""
    if width <= 0:
        return ""
    if cell_len(text) > width:
        return set_cell_size(text, width - 1) + "…"
    return set_cell_size(text, width)


def node_key(profile: Profile, node: int) -> tuple[str, ...]:
    """A node's names from ROOT down: survives filtering, which renumbers nodes."""
    names = []
    while node >= 0:
        names.append(profile.names[node])
        node = profile.parents[node]
    return tuple(reversed(names))


def find_node(profile: Profile, key: tuple[str, ...]) -> int | None:
    """The node a key names in another (filtered) profile, walking down from ROOT; None when it is gone."""
    node = 0
    for name in key[1:]:
        node = next((kid for kid in profile.children[node] if profile.names[kid] == name), None)
        if node is None:
            return None
    return node


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
        Binding("S", "reverse_sort", "Reverse sort", show=False),
        Binding("d", "toggle_names", "Raw/readable names", show=False),
        Binding("n", "next_match(1)", "Next match", show=False),
        Binding("N", "next_match(-1)", "Previous match", show=False),
    ]
    COMPONENT_CLASSES = {"profile-table--cursor", "profile-table--header", "profile-table--match"}
    DEFAULT_CSS = """
    ProfileTable { height: 1fr; overflow-y: scroll; }
    ProfileTable > .profile-table--header { text-style: bold; background: $panel; }
    ProfileTable > .profile-table--cursor { background: $accent 40%; }
    ProfileTable:focus > .profile-table--cursor { background: $accent; color: $text; }
    ProfileTable > .profile-table--match { color: $warning; text-style: bold; }
    """

    cursor: reactive[int] = reactive(0, always_update=True, repaint=False)  # watch_cursor repaints what changed

    class Highlighted(Message):
        """The cursor moved to a node (tree) or kernel (summary)."""

        def __init__(self, table: ProfileTable, node: int | None, kernel: KernelStats | None) -> None:
            super().__init__()
            self.table, self.node, self.kernel = table, node, kernel

    def __init__(self, profile: Profile | None, *, id: str | None = None) -> None:
        """The table of `profile`; without one, an empty table for `load` to fill (mounted, hidden, while a capture
        is being read: its mount is then not part of the wait once the capture has loaded)."""
        super().__init__(id=id)
        self.shown: list[bool] | None = None  # rows hidden by depth or threshold, with their subtrees
        self.columns: list[Column] = []
        self.sort_key = "time"
        self.reverse_order = False  # True flips the sort's natural direction (largest first; names A to Z)
        self.show_kernels = False
        self.readable: dict[str, str] | None = None  # raw name -> demangled, once known
        self.use_readable = True
        self.matches = []
        self.expanded: set[int] = {0}
        self.rows: list[int] = []  # node ids (tree) or positions in self.kernels (summary)
        self.kernels: list[KernelStats] = []
        self.profile = profile
        if profile is not None:
            self.load(profile)

    def load(self, profile: Profile) -> None:
        """Show `profile` from its top, the top level open when that shows no more than AUTO_EXPAND_ROWS rows."""
        self.profile, self.columns, self.expanded = profile, columns(profile), {0}
        self._rebuild_rows()
        if len(self.rows) + sum(len(profile.children[n]) for n in self.rows[1:]) <= AUTO_EXPAND_ROWS:
            self.expanded.update(self.rows[1:])
            self._rebuild_rows()

    # ---- rows -------------------------------------------------------------------------------------------------
    def _children(self, node: int) -> list[int]:
        kids = self.profile.sorted_children(node, self.sort_key)
        if self.reverse_order:
            kids.reverse()
        return kids if self.shown is None else [kid for kid in kids if self.shown[kid]]

    def _flatten(self, top: int) -> list[int]:
        """Visible descendants of an expanded node, in display order (top itself excluded)."""
        expanded, out = self.expanded, []
        stack = list(reversed(self._children(top)))
        while stack:
            node = stack.pop()
            out.append(node)
            if node in expanded:
                stack.extend(reversed(self._children(node)))
        return out

    def _rebuild_rows(self, keep: int | None = None) -> None:
        if self.show_kernels:
            self.kernels = self.profile.kernels_sorted(self.sort_key)
            if self.reverse_order:
                self.kernels.reverse()
            self.rows = list(range(len(self.kernels)))
        else:
            self.rows = [0] + (self._flatten(0) if 0 in self.expanded else [])
        self._resize()
        self.cursor = self.rows.index(keep) if keep is not None and keep in self.rows else min(
            self.cursor, len(self.rows) - 1
        )

    def _resize(self) -> None:
        # Rows are cut to the width: only the height scrolls, so a new width changes nothing here.
        self.virtual_size = Size(0, len(self.rows) + 1)
        self.refresh()

    @property
    def current_node(self) -> int | None:
        """The node under the cursor in tree mode."""
        return None if self.show_kernels or not self.rows else self.rows[self.cursor]

    def has_children(self, node: int) -> bool:
        kids = self.profile.children[node]
        return bool(kids) if self.shown is None else any(self.shown[kid] for kid in kids)

    def expand(self, node: int) -> None:
        """Open one node, splicing its visible descendants in after it."""
        if self.show_kernels or node in self.expanded or not self.has_children(node):
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

    def show_profile(self, profile: Profile, shown: list[bool] | None) -> None:
        """Swap in a filtered profile (and depth/threshold mask), keeping what was open and where the cursor was."""
        open_keys = {node_key(self.profile, node) for node in self.expanded}
        current = self.current_node
        cursor_key = node_key(self.profile, current) if current is not None else None
        self.profile, self.shown, self.columns, self.matches = profile, shown, columns(profile), []
        self.expanded = {node for key in open_keys if (node := find_node(profile, key)) is not None} | {0}
        self._rebuild_rows(find_node(profile, cursor_key) if cursor_key else None)

    @property
    def matches(self) -> list[int]:
        """Search hits: node ids (tree) or kernel positions (summary)."""
        return self._matches

    @matches.setter
    def matches(self, hits: list[int]) -> None:
        self._matches, self.match_set = hits, set(hits)

    # ---- names and search -------------------------------------------------------------------------------------
    def set_readable_names(self, readable: dict[str, str]) -> None:
        self.readable = readable
        self.refresh()

    def shown_name(self, raw: str) -> str:
        """The name as displayed: readable (demangled C++, `func  file:line` frames) unless raw is asked for."""
        return display_name(raw, self.readable) if self.use_readable else raw

    def search(self, pattern: re.Pattern) -> int:
        """Find nodes (or kernels) whose raw or shown name matches; jump to the first one after the cursor."""
        if self.show_kernels:
            self.matches = [i for i, k in enumerate(self.kernels) if self._name_matches(pattern, k.name)]
        else:
            names = self.profile.names
            self.matches = [n for n in range(1, self.profile.node_count) if self._name_matches(pattern, names[n])]
            if self.shown is not None:
                self.matches = [n for n in self.matches if self._visible_ancestry(n)]
        self.action_next_match(1)
        self.refresh()
        return len(self.matches)

    def _name_matches(self, pattern: re.Pattern, raw: str) -> bool:
        return bool(pattern.search(raw) or pattern.search(self.shown_name(raw)))

    def _visible_ancestry(self, node: int) -> bool:
        while node > 0:
            if not self.shown[node]:
                return False
            node = self.profile.parents[node]
        return True

    def action_next_match(self, direction: int) -> None:
        """Move to the next (or previous) match, opening its ancestors in the tree."""
        if not self.matches:
            return
        if self.show_kernels:
            here = self.cursor
            ahead = [m for m in self.matches if (m - here) * direction > 0]
            wrap = self.matches[0 if direction > 0 else -1]
            self.cursor = (ahead[0] if direction > 0 else ahead[-1]) if ahead else wrap
            return
        order = {node: index for index, node in enumerate(self._display_order())}
        ranked = sorted(self.matches, key=order.__getitem__)
        here = order.get(self.current_node, -1)
        ahead = [m for m in ranked if (order[m] - here) * direction > 0]
        target = (ahead[0] if direction > 0 else ahead[-1]) if ahead else ranked[0 if direction > 0 else -1]
        self.reveal(target)

    def _display_order(self) -> list[int]:
        """Every node in the order the fully expanded tree would show it."""
        out, stack = [], [0]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(reversed(self._children(node)))
        return out

    def reveal(self, node: int) -> None:
        """Open every ancestor of a node and put the cursor on it."""
        ancestors, parent = [], self.profile.parents[node]
        while parent >= 0:
            ancestors.append(parent)
            parent = self.profile.parents[parent]
        if any(a not in self.expanded for a in ancestors):
            self.expanded.update(ancestors)
            self._rebuild_rows(node)
        else:
            self.cursor = self.rows.index(node)

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
        if node in self.expanded and self.has_children(node):
            self.action_cursor(1)
        else:
            self.expand(node)

    def action_collapse(self) -> None:
        node = self.current_node
        if node is None:
            return
        if node in self.expanded and self.has_children(node) and node != 0:
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
        self.matches = []
        self._rebuild_rows()
        self.cursor = 0

    def action_cycle_sort(self) -> None:
        self.sort_key = SORT_KEYS[(SORT_KEYS.index(self.sort_key) + 1) % len(SORT_KEYS)]
        if self.sort_key == "gbps" and not self.profile.has_bytes:
            self.sort_key = "name"
        self.reverse_order = False
        self._resort()

    def action_reverse_sort(self) -> None:
        self.reverse_order = not self.reverse_order
        self._resort()

    @property
    def descending(self) -> bool:
        return (self.sort_key != "name") != self.reverse_order

    def _resort(self) -> None:
        self._rebuild_rows(self.current_node)
        direction = "descending" if self.descending else "ascending"
        self.notify(f"Sorted by {self.sort_key}, {direction}", timeout=2)

    def action_toggle_names(self) -> None:
        self.use_readable = not self.use_readable
        self.refresh()
        self.cursor = self.cursor  # re-announce the row so the detail pane follows
        self.notify("Readable names" if self.use_readable else "Raw names", timeout=2)

    # ---- events -----------------------------------------------------------------------------------------------
    def watch_cursor(self, previous: int, row: int) -> None:
        if not self.rows:
            return
        top, height = round(self.scroll_y), self.scrollable_content_region.height - 1
        if row < top:
            self.scroll_to(y=row, animate=False)
            self.refresh()
        elif height > 0 and row >= top + height:
            self.scroll_to(y=row - height + 1, animate=False)
            self.refresh()
        else:  # only two rows changed: repaint their lines (a row's line is one below it, under the header)
            self.refresh_line(previous + 1)
            self.refresh_line(row + 1)
        kernel = self.kernels[self.rows[row]] if self.show_kernels else None
        self.post_message(self.Highlighted(self, self.current_node, kernel))

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
        """The column titles, aligned with the rows; the sort column carries ▼ (descending) or ▲ (ascending)."""
        arrow = "▼" if self.descending else "▲"
        titles = [col.title for col in self.columns]
        column = SORT_COLUMN.get(self.sort_key)
        if column is not None and column < len(titles):
            titles[column] = arrow + titles[column]
        name = ("kernel" if self.show_kernels else "name") + (f" {arrow}" if self.sort_key == "name" else "")
        return self._line(name, titles, width)

    def _line(self, name: str, cells: list[str], width: int) -> str:
        numbers = "".join("  " + cell.rjust(col.width)[-col.width :] for cell, col in zip(cells, self.columns))
        return fit(fit(name, self._name_width(width)) + numbers, width)

    def row_text(self, row: int, width: int) -> str:
        """One row as plain text (the name is data: never parsed as markup)."""
        profile = self.profile
        if self.show_kernels:
            kernel = self.kernels[self.rows[row]]
            return self._line(self.shown_name(kernel.name), kernel_cells(profile, kernel), width)
        node = self.rows[row]
        if self.has_children(node):
            marker = "▾ " if node in self.expanded else "▸ "
        else:
            marker = "  "
        label = "  " * profile.depths[node] + marker + self.shown_name(profile.names[node])
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
        elif self.rows[row] in self.match_set:
            style = base + self.get_component_rich_style("profile-table--match")
        return Strip([Segment(self.row_text(row, width), style)], width)
