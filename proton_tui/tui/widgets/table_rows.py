"""The rows of the kernel-time table, without Textual: which nodes (or kernels) are rows, in what order, what is
open, where the search hits are, and each row's text. The widget (`profile_table`) only draws what this computes,
so everything here is tested without a pilot.

Rows are node ids in display order; expanding splices a node's visible descendants in, so a million-node capture
costs a list of ints, not a widget per node.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rich.cells import cell_len, set_cell_size

from proton_tui.console import cut_field
from proton_tui.hatchet import KernelStats, Profile
from proton_tui.view.display import Display
from proton_tui.view.formatting import columns, kernel_cells, node_cells, share_bar
from proton_tui.view.names.cut import TOLD_APART_MOST, cut_name, told_apart

MIN_NAME_WIDTH = 30  # cells the name column keeps in a narrow terminal: numeric columns give way first
NARROW_NAME_WIDTH = 16  # ...down to this many for the first column kept (the sorted one, or time): a number stays
MIN_BAR_WIDTH = 4  # the narrowest share bar drawn (an eighth of a cell is then 3.125 %)
# Which numeric columns stay longest when the terminal is narrow (the rest are left out first).
COLUMN_PRIORITY = ("time", "percent", "per_warp", "launches", "gbps", "avg", "warp_time", "bar", "peak", "device")
AUTO_EXPAND_ROWS = 200  # at start, open the top level when it shows no more rows than this
OPEN, CLOSED, LEAF = "▾ ", "▸ ", "  "


def fit(text: str, width: int) -> str:
    """Cut text to a cell width with an ellipsis, then pad it to exactly that width (linear in the length of the text
    as `cut_field` leaves it: every visible row goes through here on every repaint)."""
    if width <= 0:
        return ""
    text = cut_field(text)
    if cell_len(text) > width:
        return set_cell_size(text, width - 1) + "…"
    return set_cell_size(text, width)


def name_cell(name: str, width: int, guide: str = "", compact_guide: str = "",
              cut: Callable[[str, int], str] = cut_name) -> str:
    """The name column of a row, exactly `width` cells: the guide lines, then the name; the guide lines give way to
    `compact_guide` before the name is cut, and a name too long even then is cut by `cut` (name, cells): by default
    losing the middle of its template arguments (`cut_name`)."""
    if cell_len(compact_guide) < cell_len(guide) and cell_len(guide) + cell_len(name) > width:
        guide = compact_guide
    return fit(guide + cut(name, width - cell_len(guide)), width)


def node_key(profile: Profile, node: int) -> tuple[str, ...]:
    """A node's names from ROOT down: survives filtering, which renumbers nodes."""
    return tuple(profile.names[step] for step in [0, *profile.lineage(node)])


def find_node(profile: Profile, key: tuple[str, ...]) -> int | None:
    """The node a key names in another (filtered) profile, walking down from ROOT; None when it is gone."""
    node = 0
    for name in key[1:]:
        node = next((kid for kid in profile.children[node] if profile.names[kid] == name), None)
        if node is None:
            return None
    return node


class TableRows:
    """The table's rows for a Display: the tree (open nodes' children spliced in) or the flat kernel summary."""

    def __init__(self, display: Display) -> None:
        self.show_kernels = False
        self.kernels: list[KernelStats] = []
        self.rows: list[int] = []  # node ids (tree) or positions in self.kernels (summary)
        self.matches = []
        self.load(display)

    @property
    def profile(self) -> Profile:
        return self.display.profile

    def load(self, display: Display) -> None:
        """Show `display` from its top, the top level open when that shows no more than AUTO_EXPAND_ROWS rows."""
        self.display, self.columns, self.expanded = display, columns(display.profile, bars=True), {0}
        self._layouts: dict[tuple[int, str | None], list[tuple[int, int]]] = {}
        self._cuts: dict[tuple[int | None, int], dict[str, str]] = {}  # (parent, cells) → each name's cut there
        self._cuts_width = 0  # the table's width they were cut for
        self.rebuild()
        if len(self.rows) + sum(len(display.children(n)) for n in self.rows[1:]) <= AUTO_EXPAND_ROWS:
            self.expanded.update(self.rows[1:])
            self.rebuild()

    def rebuild(self) -> None:
        self._cuts = {}
        if self.show_kernels:
            self.kernels = self.display.kernels()
            self.rows = list(range(len(self.kernels)))
        else:
            self.rows = list(self.display.walk(0, self.expanded))

    def node_at(self, row: int) -> int | None:
        """The node a row shows in the tree (None in the kernel summary)."""
        return None if self.show_kernels or not 0 <= row < len(self.rows) else self.rows[row]

    def kernel_at(self, row: int) -> KernelStats | None:
        return self.kernels[self.rows[row]] if self.show_kernels and 0 <= row < len(self.rows) else None

    def row_of(self, node: int | None, fallback: int = 0) -> int:
        """The row showing a node, or `fallback` (clamped to the rows) when it is not shown."""
        if node is not None and not self.show_kernels:
            try:
                return self.rows.index(node)
            except ValueError:
                pass
        return max(0, min(fallback, len(self.rows) - 1))

    # ---- opening and closing ------------------------------------------------------------------------------------
    def expand(self, node: int, at: int | None = None) -> bool:
        """Open one node (shown at row `at` when known), splicing its visible descendants in after it."""
        if self.show_kernels or node in self.expanded or not self.display.has_children(node):
            return False
        self.expanded.add(node)
        at = self.rows.index(node) if at is None else at
        below = self.display.walk(node, self.expanded)
        next(below)
        self.rows[at + 1 : at + 1] = list(below)
        return True

    def collapse(self, node: int) -> bool:
        """Close one node, removing the rows below it."""
        if self.show_kernels or node not in self.expanded:
            return False
        self.expanded.discard(node)
        at = self.rows.index(node)
        depth, depths, end = self.profile.depths[node], self.profile.depths, at + 1
        while end < len(self.rows) and depths[self.rows[end]] > depth:
            end += 1
        del self.rows[at + 1 : end]
        return True

    def expand_all(self) -> None:
        self.expanded = {n for n in range(self.profile.node_count) if self.profile.children[n]}
        self.rebuild()

    def collapse_all(self) -> None:
        self.expanded = {0}
        self.rebuild()

    def toggle_summary(self) -> None:
        self.show_kernels = not self.show_kernels
        self.matches = []
        self.rebuild()

    def redisplay(self, display: Display) -> None:
        """Swap in another display of the capture (a filter, a sort, names), keeping what was open."""
        if display.profile is not self.profile:
            open_keys = {node_key(self.profile, node) for node in self.expanded}
            self.expanded = {node for key in open_keys if (node := find_node(display.profile, key)) is not None}
            self.expanded.add(0)
            self.matches = []
            self.columns = columns(display.profile, bars=True)
            self._layouts = {}
        self.display = display
        self.rebuild()

    def moved(self, node: int | None, profile: Profile) -> int | None:
        """The node of an earlier profile (before a filter) in the current one."""
        if node is None:
            return None
        return node if profile is self.profile else find_node(self.profile, node_key(profile, node))

    # ---- search -------------------------------------------------------------------------------------------------
    @property
    def matches(self) -> list[int]:
        """Search hits: node ids (tree) or kernel positions (summary)."""
        return self._matches

    @matches.setter
    def matches(self, hits: list[int]) -> None:
        self._matches, self.match_set = hits, set(hits)

    def search(self, pattern: re.Pattern) -> int:
        """Find the nodes (or kernels) whose shown or raw name matches; their number."""
        names = self.display.names
        if self.show_kernels:
            self.matches = [i for i, k in enumerate(self.kernels) if names.matches(pattern, k.name)]
        else:
            raw, visible = self.profile.names, self.display.visible
            self.matches = [n for n in range(1, self.profile.node_count) if names.matches(pattern, raw[n])
                            and (visible is None or all(visible[a] for a in [n, *self.profile.ancestors(n)]))]
        return len(self.matches)

    def next_match(self, row: int, direction: int) -> int | None:
        """The row of the next (or previous) match after `row`, opening its ancestors; None without matches."""
        if not self.matches:
            return None
        if self.show_kernels:
            ahead = [m for m in self.matches if (m - row) * direction > 0]
            return (ahead[0] if direction > 0 else ahead[-1]) if ahead else self.matches[0 if direction > 0 else -1]
        order = {node: index for index, node in enumerate(self.display.walk())}
        ranked = sorted(self.matches, key=order.__getitem__)
        here = order.get(self.node_at(row), -1)
        ahead = [m for m in ranked if (order[m] - here) * direction > 0]
        return self.reveal((ahead[0] if direction > 0 else ahead[-1]) if ahead else ranked[0 if direction > 0 else -1])

    def reveal(self, node: int) -> int:
        """Open every ancestor of a node; its row."""
        ancestors = self.profile.ancestors(node)
        if any(a not in self.expanded for a in ancestors):
            self.expanded.update(ancestors)
            self.rebuild()
        return self.rows.index(node)

    # ---- text ---------------------------------------------------------------------------------------------------
    def visible_columns(self, width: int) -> list[tuple[int, int]]:
        """The columns that fit beside a name of MIN_NAME_WIDTH cells, in table order, as (position, width): whole
        columns are left out, the least needed first (COLUMN_PRIORITY, after the column the rows are sorted by); a
        number is never cut. The first column kept (the one the rows are sorted by; time when they are sorted by
        name) stays beside a name of NARROW_NAME_WIDTH cells where MIN_NAME_WIDTH leaves it no room. The share bar,
        short of room for its full width, takes what is left down to MIN_BAR_WIDTH cells."""
        sorted_by = self.display.sort.column
        found = self._layouts.get((width, sorted_by))
        if found is not None:
            return found

        def rank(i: int) -> int:
            key = self.columns[i].key
            if key == sorted_by:  # the column the rows are sorted by is shown first: the order is seen
                return -1
            return COLUMN_PRIORITY.index(key) if key in COLUMN_PRIORITY else len(COLUMN_PRIORITY)

        ranked = sorted(range(len(self.columns)), key=rank)
        fitting, used = [], MIN_NAME_WIDTH
        for position in ranked:
            column = self.columns[position]
            cells = self.column_width(position)
            if column.key == "bar" and used + cells + 2 > width:
                cells = max(MIN_BAR_WIDTH, width - used - 2)
            room = width if fitting else width + MIN_NAME_WIDTH - NARROW_NAME_WIDTH
            if used + cells + 2 > room:
                break
            fitting.append((position, cells))
            used += cells + 2
        self._layouts[width, sorted_by] = found = sorted(fitting)
        return found

    def column_width(self, position: int) -> int:
        """A column's cells: the sorted one a cell wider where its title needs one for the arrow (▼launches), so
        that its title stays whole and over its numbers."""
        column = self.columns[position]
        if column.key != self.display.sort.column:
            return column.width
        return max(column.width, cell_len(column.title) + 1)

    def line(self, name: str, cells: list[str], width: int, share: float | None = None, guide: str = "",
             compact_guide: str = "", cut: Callable[[str, int], str] = cut_name) -> str:
        """A row: the guide lines and the name in what the columns leave (`name_cell`), then the cells; a narrowed
        share bar drawn again from `share` at its width."""
        def cell(i: int, cells_wide: int) -> str:
            if cells_wide == self.column_width(i):
                return self.columns[i].align(cells[i], cells_wide)
            # the narrowed share bar: drawn again at its width (its title, wider, left out)
            return share_bar(share, cells_wide) if share is not None else " " * cells_wide

        numbers = "".join("  " + cell(i, cells_wide) for i, cells_wide in self.visible_columns(width))
        return name_cell(name, width - len(numbers), guide, compact_guide, cut) + numbers

    def bar_span(self, width: int) -> tuple[int, int] | None:
        """Where the share bars are in a line `width` cells wide (start, end), or None where they are left out."""
        shown = self.visible_columns(width)
        start = width - sum(2 + cells for _, cells in shown)
        for i, cells in shown:
            if self.columns[i].key == "bar":
                return start + 2, start + 2 + cells
            start += 2 + cells
        return None

    def header(self, width: int) -> str:
        """The column titles, aligned with the rows; the sort column carries ▼ (descending) or ▲ (ascending)."""
        arrow = "▼" if self.display.descending else "▲"
        sort_column = self.display.sort.column
        titles = [arrow + col.title if col.key == sort_column else col.title for col in self.columns]
        name = ("kernel" if self.show_kernels else "name") + (f" {arrow}" if sort_column is None else "")
        return self.line(name, titles, width)

    def text(self, row: int, width: int) -> str:
        """One row as plain text (the name is data: never parsed as markup)."""
        display, profile = self.display, self.profile
        if self.show_kernels:
            kernel = self.kernels[self.rows[row]]
            return self.line(cut_field(display.names.shown(kernel.name)), kernel_cells(profile, kernel, bars=True),
                             width, profile.percent(kernel.value), cut=self._cutter(None, width))
        node = self.rows[row]
        marker = (OPEN if node in self.expanded else CLOSED) if display.has_children(node) else LEAF
        return self.line(cut_field(display.name(node)), node_cells(profile, node, bars=True), width,
                         profile.percent(profile.inclusive[node]), display.guide(node) + marker,
                         display.compact_guide(node) + marker,
                         self._cutter(profile.parents[node], width) if node else cut_name)  # ROOT: alone

    def _cutter(self, parent: int | None, width: int) -> Callable[[str, int], str]:
        """How a name is cut in a table `width` cells wide among the names it is read beside: every kernel of the
        summary (`parent` None), or the children of `parent` in the tree. Where two would read alike, each shows
        where it differs (`told_apart`), worked out once per group and cells, for the table's width alone (`rebuild`
        forgets them: the names, their order or the filter changed)."""
        if width != self._cuts_width:
            self._cuts, self._cuts_width = {}, width

        def cut(name: str, cells: int) -> str:
            key = (parent, cells)
            found = self._cuts.get(key)
            if found is None:
                display = self.display
                beside = self.kernels if parent is None else display.children(parent)
                if len(beside) > TOLD_APART_MOST:
                    found = self._cuts[key] = {}
                else:
                    names = [display.names.shown(kernel.name) for kernel in beside] if parent is None else \
                        [display.name(child) for child in beside]
                    found = self._cuts[key] = told_apart((cut_field(name) for name in names), cells)
            return found.get(name) or cut_name(name, cells)
        return cut
