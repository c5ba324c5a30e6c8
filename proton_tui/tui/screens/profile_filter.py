"""The profile screen's filter and search: the bars mounted when first asked for, the filter applied as it is typed
(on Enter for large captures), the empty frames shown or hidden, and search with n/N. A part of ``ProfileScreen``."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Label

from proton_tui.tui.widgets.filter_bar import FilterBar, SearchBar
from proton_tui.tui.widgets.profile_table import ProfileTable
from proton_tui.tui.widgets.summary import Summary
from proton_tui.view.filters import FilterError, ViewFilter
from proton_tui.view.formatting import counted

LIVE_FILTER_NODES = 200_000  # above this, filters apply on Enter rather than on every keystroke
FILTER_DELAY_S = 0.3


class FilterAndSearch:
    """What the profile screen (a Screen with `profile`, `view_filter`, `filter_timer`, `views` and
    `summary_text`) does with its filter and search bars: the filter applies to the table and the flame view, and the
    focus goes back to the view shown; a search shows the table, whose rows it finds."""

    async def mount_bars(self) -> None:
        """The filter bar above the views and the search bar below them, hidden, once one is first asked for: their
        five inputs were part of every viewer's start (docs/measurements.md)."""
        if self.query("#filter-bar"):
            return
        filter_bar, search_bar = FilterBar(id="filter-bar", classes="bar"), SearchBar(id="search-bar", classes="bar")
        error = Label("", id="filter-error", classes="error")
        filter_bar.display = search_bar.display = error.display = False
        await self.mount(filter_bar, error, before=self.views)
        await self.mount(search_bar, after=self.views)

    async def action_filter(self) -> None:
        await self.mount_bars()
        self.query_one("#filter-bar").display = True
        self.query_one("#include").focus()

    async def action_search(self) -> None:
        await self.mount_bars()
        self.query_one("#search-bar").display = True
        self.query_one("#search").focus()

    def action_close_bars(self) -> None:
        for bar in self.query(".bar"):
            bar.display = False
        self.views.focus_shown()

    def action_clear_filter(self) -> None:
        """Every row of the capture again: the bars emptied, the filter (typed, or given on the command line) off."""
        if self.query("#filter-bar"):
            if self.filter_timer is not None:
                self.filter_timer.stop()
            self.query_one(FilterBar).clear()
            self.query_one(SearchBar).clear()
            self.query_one("#filter-error").display = False
            self.query_one(ProfileTable).clear_matches()
        self.show_filtered(ViewFilter(show_empty=self.view_filter.show_empty))

    def on_filter_bar_edited(self) -> None:
        if self.profile.node_count <= LIVE_FILTER_NODES:
            if self.filter_timer is not None:
                self.filter_timer.stop()
            self.filter_timer = self.set_timer(FILTER_DELAY_S, self.apply_filter)

    def on_filter_bar_submitted(self) -> None:
        self.apply_filter()
        self.views.focus_shown()

    def apply_filter(self) -> None:
        """Prune the table from the filter bar: include/exclude recompute totals; threshold and depth hide rows."""
        error_label = self.query_one("#filter-error", Label)
        try:
            chosen = self.query_one(FilterBar).chosen(show_empty=self.view_filter.show_empty)
        except FilterError as error:
            error_label.update(Text(str(error)))
            error_label.display = True
            return
        error_label.display = False
        self.show_filtered(chosen)

    def show_filtered(self, chosen: ViewFilter) -> None:
        """Show the capture through a filter, matched against the names as the table shows them."""
        self.view_filter = chosen
        table = self.query_one(ProfileTable)
        shown = chosen.shown(self.profile, table.display_spec.names)
        table.redisplay(profile=shown.profile, visible=shown.visible, hidden_empty=shown.hidden_empty)
        self.query_one("#summary", Summary).update(Text(self.summary_text(shown.profile)))
        self.views.refresh_flame()

    def action_toggle_empty(self) -> None:
        """Show or hide the frames with no time in their whole subtree."""
        chosen = self.view_filter.replace(show_empty=not self.view_filter.show_empty)
        self.show_filtered(chosen)
        count = self.query_one(ProfileTable).profile.empty_count()
        if not count:
            self.notify("This view has no empty frame.", timeout=3)
        else:
            self.notify(f"{counted(count, 'empty frame')} {'shown' if chosen.show_empty else 'hidden'}", timeout=3)

    def on_search_bar_submitted(self, event: SearchBar.Submitted) -> None:
        """The table's rows searched: the table is shown (from the flame view or a timeline) on the first match; with
        none, the view shown stays."""
        table = self.query_one(ProfileTable)
        if event.pattern is None:
            table.clear_matches()
            return
        found = table.model.search(event.pattern)
        if found or self.views.current == "table":
            self.views.to_table().show_matches()
        self.notify(f"{found} match(es) for {event.text!r}" + ("; n/N next/previous" if found > 1 else ""),
                    timeout=3, markup=False)
        self.views.focus_shown()
