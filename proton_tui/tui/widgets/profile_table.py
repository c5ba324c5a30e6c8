"""The collapsible kernel-time table: draws only the rows on screen (Textual's line API) from its row model
(`table_rows.TableRows`), and says when the cursor moves."""

from __future__ import annotations

from rich.segment import Segment
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from proton_tui.hatchet import KernelStats, Profile
from proton_tui.tui.widgets.row_table import scroll_row_into_view
from proton_tui.tui.widgets.table_rows import TableRows
from proton_tui.view.display import Display, sort_keys_for
from proton_tui.view.names import Names


class ProfileTable(ScrollView, can_focus=True):
    """Tree of nodes (or the flat kernel summary) with numeric columns aligned at any depth."""

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "cursor_to(0)", "First", show=False),
        Binding("end", "cursor_to(-1)", "Last", show=False),
        Binding("enter,space", "toggle", "Expand/collapse"),
        Binding("right", "expand", "Expand", show=False),
        Binding("left", "collapse", "Collapse", show=False),
        Binding("e", "expand_all", "Expand all"),
        Binding("c", "collapse_all", "Collapse all"),
        Binding("K", "toggle_summary", "Kernels/tree"),
        Binding("s", "cycle_sort", "Sort"),
        Binding("S", "reverse_sort", "Reverse sort", show=False),
        Binding("d", "next_names", "Names: short, full, raw", show=False),
        Binding("n", "next_match(1)", "Next match", show=False),
        Binding("N", "next_match(-1)", "Previous match", show=False),
    ]
    COMPONENT_CLASSES = {"profile-table--cursor", "profile-table--header", "profile-table--match", "profile-table--bar"}
    DEFAULT_CSS = """
    ProfileTable { height: 1fr; overflow-y: scroll; }
    ProfileTable > .profile-table--header { text-style: bold; background: $panel; }
    ProfileTable > .profile-table--cursor { background: $accent 40%; }
    ProfileTable:focus > .profile-table--cursor { background: $accent; color: $text; }
    ProfileTable > .profile-table--match { color: $warning; text-style: bold; }
    ProfileTable > .profile-table--bar { color: $accent; }
    ProfileTable:focus > .profile-table--cursor.profile-table--bar { color: $text; }
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
        self.model: TableRows | None = None
        if profile is not None:
            self.load(profile)

    def load(self, profile: Profile, names: Names | None = None) -> None:
        """Show `profile` from its top."""
        self.model = TableRows(Display(profile, names))
        self._resize()

    @property
    def display_spec(self) -> Display:
        """How the table shows its capture now (names, order, hidden rows): what export and details follow."""
        return self.model.display

    @property
    def profile(self) -> Profile:
        return self.model.profile

    @property
    def current_node(self) -> int | None:
        """The node under the cursor in tree mode."""
        return self.model.node_at(self.cursor)

    @property
    def show_kernels(self) -> bool:
        return self.model.show_kernels

    def _resize(self) -> None:
        # Rows are cut to the width: only the height scrolls, so a new width changes nothing here.
        self.virtual_size = Size(0, len(self.model.rows) + 1)
        self.refresh()

    def _rebuilt(self, node: int | None = None) -> None:
        """The rows changed: the cursor on `node` (or the same row), on the screen line it was on."""
        line = self.cursor - round(self.scroll_y)
        self._resize()
        row = self.model.row_of(node, self.cursor)
        if 0 <= line < self.scrollable_content_region.height - 1:
            self.scroll_to(y=max(0, row - line), animate=False, force=True)
        self.cursor = row

    def redisplay(self, **changes) -> None:
        """Show the capture another way (profile, names, sort, reverse, visible), keeping the cursor's node."""
        before, node = self.model.profile, self.current_node
        self.model.redisplay(self.model.display.replace(**changes))
        self._rebuilt(self.model.moved(node, before))

    def select_node(self, node: int) -> None:
        """Put the cursor on a node of the tree, opening its ancestors (the tree is shown if the summary was)."""
        if self.show_kernels:
            self.model.toggle_summary()
        row = self.model.reveal(node) if 0 <= node < self.profile.node_count else 0
        self._resize()
        self.cursor = row

    def select_kernel(self, name: str) -> bool:
        """Show the kernel summary with the cursor on the kernel called `name` (a raw name); False, the cursor on
        the first row, when the summary has no such kernel."""
        if not self.show_kernels:
            self.model.toggle_summary()
        row = next((row for row in range(len(self.model.rows)) if self.model.kernel_at(row).name == name), None)
        self._resize()
        self.cursor = row or 0
        return row is not None

    # ---- search ---------------------------------------------------------------------------------------------------
    def show_matches(self) -> None:
        """Jump to the first of the matches (`model.search` found them) after the cursor."""
        self.action_next_match(1)
        self.refresh()

    def clear_matches(self) -> None:
        self.model.matches = []
        self.refresh()

    def action_next_match(self, direction: int) -> None:
        """Move to the next (or previous) match, opening its ancestors in the tree."""
        rows_before = len(self.model.rows)
        target = self.model.next_match(self.cursor, direction)
        if target is not None:
            if len(self.model.rows) != rows_before:
                self._resize()
            self.cursor = target

    # ---- actions ----------------------------------------------------------------------------------------------
    def action_cursor(self, delta: int) -> None:
        self.cursor = max(0, min(len(self.model.rows) - 1, self.cursor + delta))

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.size.height - 2))

    def action_cursor_to(self, row: int) -> None:
        self.cursor = row if row >= 0 else len(self.model.rows) - 1

    def action_toggle(self) -> None:
        node = self.current_node
        if node is not None and (self.model.collapse(node) if node in self.model.expanded
                                 else self.model.expand(node, self.cursor)):
            self._resize()

    def action_expand(self) -> None:
        node = self.current_node
        if node is None:
            return
        if node in self.model.expanded and self.model.display.has_children(node):
            self.action_cursor(1)
        elif self.model.expand(node, self.cursor):
            self._resize()

    def action_collapse(self) -> None:
        node = self.current_node
        if node is None:
            return
        if node in self.model.expanded and self.model.display.has_children(node) and node != 0:
            self.model.collapse(node)
            self._resize()
        elif node > 0:
            self.cursor = self.model.row_of(self.profile.parents[node])

    def action_expand_all(self) -> None:
        if not self.show_kernels:
            node = self.current_node
            self.model.expand_all()
            self._rebuilt(node)

    def action_collapse_all(self) -> None:
        if not self.show_kernels:
            self.model.collapse_all()
            self._rebuilt(0)

    def action_toggle_summary(self) -> None:
        self.model.toggle_summary()
        self._resize()
        self.cursor = 0

    def action_cycle_sort(self) -> None:
        keys = sort_keys_for(self.profile)
        current = self.model.display.sort.key
        self.redisplay(sort=keys[(keys.index(current) + 1) % len(keys)] if current in keys else keys[0],
                       reverse=False)
        self._announce_sort()

    def action_reverse_sort(self) -> None:
        self.redisplay(reverse=not self.model.display.reverse)
        self._announce_sort()

    def _announce_sort(self) -> None:
        display = self.model.display
        direction = "descending" if display.descending else "ascending"
        self.notify(f"Sorted by {display.sort.label}, {direction}", timeout=2, markup=False)

    def set_names(self, names: Names) -> None:
        """Demangled names arrived (or the form changed): the rows follow, in the same order rules."""
        self.redisplay(names=names)
        self.cursor = self.cursor  # re-announce the row so the detail pane follows

    def action_next_names(self) -> None:
        """Names in the next form: short, full, raw, then short again."""
        self.set_names(self.model.display.names.next_form())
        self.notify(f"{self.model.display.names.form.capitalize()} names", timeout=2)

    # ---- events -----------------------------------------------------------------------------------------------
    def watch_cursor(self, previous: int, row: int) -> None:
        if self.model is None or not self.model.rows:
            return
        if self.cursor_in_view():
            self.refresh()
        else:  # only two rows changed: repaint their lines (a row's line is one below it, under the header)
            self.refresh_line(previous + 1)
            self.refresh_line(row + 1)
        self.post_message(self.Highlighted(self, self.model.node_at(row), self.model.kernel_at(row)))

    def cursor_in_view(self) -> bool:
        """Scroll the cursor's row into view; whether it had to."""
        return scroll_row_into_view(self, self.cursor)

    def on_resize(self) -> None:
        if self.model is not None and self.model.rows:
            self.call_after_refresh(self.cursor_in_view)  # a shorter table keeps its cursor's row shown

    def on_click(self, event) -> None:
        row = round(self.scroll_y) + event.y - 1
        if 0 <= row < len(self.model.rows):
            if row == self.cursor:
                self.action_toggle()
            self.cursor = row

    # ---- drawing ----------------------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        if self.model is None:
            return Strip.blank(width, base)
        if y == 0:
            style = base + self.get_component_rich_style("profile-table--header")
            return Strip([Segment(self.model.header(width), style)], width)
        row = round(self.scroll_y) + y - 1
        if row >= len(self.model.rows):
            return Strip.blank(width, base)
        style = base
        if row == self.cursor:
            style = base + self.get_component_rich_style("profile-table--cursor")
        elif self.model.rows[row] in self.model.match_set:
            style = base + self.get_component_rich_style("profile-table--match")
        text = self.model.text(row, width)
        span = self.model.bar_span(width)
        if span is None:
            return Strip([Segment(text, style)], width)
        bar = style + self.get_component_rich_style("profile-table--bar", partial=True)
        before, bars, after = Strip([Segment(text, style)], width).divide([*span, width])  # cells, not characters
        return Strip.join([before, Strip([Segment(bars.text, bar)]), after])
