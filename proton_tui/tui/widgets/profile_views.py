"""A capture's views, one shown at a time: the kernel-time table, the flame view on the table's node, and a trace's
timeline (its lanes, or an instrumentation trace's warps, worked out off the UI thread when the trace is large). The
views announce what is selected; the screen shows its details."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import on, work
from textual.widget import Widget
from textual.widgets import ContentSwitcher

from proton_tui.hatchet import Profile
from proton_tui.tui.messages import TimelineLeft, WarpsRead
from proton_tui.tui.widgets.flame_view import FlameView
from proton_tui.tui.widgets.profile_table import ProfileTable
from proton_tui.tui.widgets.table_rows import find_node, node_key
from proton_tui.view.names import Names

if TYPE_CHECKING:
    from proton_tui.hatchet.trace import Trace
    from proton_tui.tui.widgets.timeline import TimelineView
    from proton_tui.view.warps import WarpTrace

# Trace events above which an instrumentation trace's warps are worked out off the UI thread; calibrated on the
# 2-core CPU machine with the payload-shaped trace (docs/measurements.md, row 71).
WARPS_IN_BACKGROUND = 20_000


def timelines(trace: Trace | None) -> list[Widget]:
    """The two timelines, for a trace; none for a tree (their modules, and numpy, are loaded for traces alone)."""
    if trace is None:
        return []
    from proton_tui.tui.widgets.timeline import LaneTimeline, WarpTimeline

    return [LaneTimeline(id="timeline", classes="timeline"), WarpTimeline(id="warps", classes="timeline")]


class ProfileViews(ContentSwitcher):
    """The table, the flame view and, for a trace, the two timelines; while the capture is read none is shown and
    all are disabled: none takes the focus or a key before `load` gives them the capture."""

    def __init__(self, profile: Profile | None, *, id: str | None = None) -> None:
        super().__init__(ProfileTable(profile, id="table"), FlameView(id="flame"),
                         *timelines(profile.trace if profile is not None else None),
                         id=id, initial="table" if profile is not None else None, disabled=profile is None)
        self.trace: Trace | None = None  # the trace a timeline was asked for

    async def load(self, profile: Profile) -> None:
        """The capture has been read: its table is shown (with the timelines added for a trace), and the views take
        keys."""
        self.table.load(profile)
        await self._add_timelines(profile.trace)
        self.disabled = False
        self.current = "table"

    async def _add_timelines(self, trace: Trace | None) -> None:
        if not self.query(".timeline"):
            for timeline in timelines(trace):
                await self.add_content(timeline)

    async def show_first(self, trace: Trace, warps: WarpTrace, drawn: Callable[[], None]) -> None:
        """An instrumentation trace's first launch on the warp timeline while its tree is still built: the timeline
        alone takes keys (the table, flame view and details wait for `load`). `drawn` is called once the launch is
        on the terminal."""
        await self._add_timelines(trace)
        self.trace = trace
        self.current = "warps"
        self.disabled = False
        timeline = self.query_one("#warps")
        timeline.show(trace, Names(), warps)
        timeline.when_drawn(drawn)
        # focused now, not after the next paint (`focus` waits for it): a key pressed as soon as the launch shows is
        # the timeline's
        self.screen.set_focus(timeline, scroll_visible=False)

    @property
    def table(self) -> ProfileTable:
        return self.query_one(ProfileTable)

    def show_table(self) -> ProfileTable:
        self.current = "table"
        self.table.focus()
        return self.table

    def focus_shown(self) -> None:
        """The focus back on the view shown (a bar over it closed or submitted)."""
        if self.current is not None:
            self.query_one(f"#{self.current}").focus()

    def to_table(self) -> ProfileTable:
        """The table shown and focused, from whichever view was (the flame view leaves it on its frame)."""
        if self.current == "flame":
            self.leave_flame()
        elif self.current != "table":
            self.leave_timeline()
        return self.table

    # ---- the flame view -----------------------------------------------------------------------------------------
    def toggle_flame(self) -> None:
        """Between the table and the flame view, on the same node."""
        if self.current == "flame":
            self.leave_flame()
            return
        table, flame = self.table, self.query_one(FlameView)
        node = table.current_node
        flame.show(table.display_spec, 0 if node is None else node)
        self.current = "flame"
        flame.focus()

    @on(FlameView.Left)
    def leave_flame(self, event: FlameView.Left | None = None) -> None:
        if event is not None:
            event.stop()
        frame = self.query_one(FlameView).selected
        table = self.show_table()
        if frame is not None:
            table.select_node(frame.node if frame.node is not None else frame.merged[0])

    def refresh_flame(self) -> None:
        """The table's display changed (filter, sort, names): the flame view follows, on the same frame where the
        filter kept it (a filter renumbers the nodes), else on ROOT."""
        if self.current == "flame":
            flame, display = self.query_one(FlameView), self.table.display_spec
            node = flame.selected.node if flame.selected is not None else None
            before = flame.display_spec.profile if flame.display_spec is not None else None
            if node is not None and before is not None and before is not display.profile:
                node = find_node(display.profile, node_key(before, node))
            flame.show(display, 0 if node is None else node)

    # ---- the timeline -------------------------------------------------------------------------------------------
    def timeline_for(self, warps: WarpTrace | None) -> TimelineView:
        """The warp timeline when `warps` has a launch, else the lane timeline."""
        return self.query_one("#warps" if warps is not None and warps.launches else "#timeline")

    def show_timeline(self, trace: Trace, names: Names, warps: WarpTrace | None) -> TimelineView:
        """`trace` on the timeline for `warps`, which is returned."""
        timeline = self.timeline_for(warps)
        if timeline.id == "warps":
            timeline.show(trace, names, warps)
        else:
            timeline.show(trace, names)
        return timeline

    def toggle_timeline(self, profile: Profile) -> None:
        """Between the table and the trace of `profile` on its timeline."""
        from proton_tui.view.warps import warp_trace

        if self.current in ("timeline", "warps"):
            self.leave_timeline()
            return
        names, trace = self.table.display_spec.names, profile.trace
        self.trace = trace
        # the timeline already on this trace, if any
        timeline = next((view for view in self.query(".timeline") if view.trace is trace), None)
        if timeline is None:
            clock = profile.run_clock_khz  # the SM clock given, or the one the trace's run reported
            if len(trace.events) > WARPS_IN_BACKGROUND and trace.has_warps:
                timeline = self.query_one("#warps")
                self.current = timeline.id
                timeline.waiting(f"Timeline: reading the warps of {len(trace.events):,} events…")
                self.read_warps(trace, clock)
            else:
                warps = warp_trace(trace, clock)
                self.current = self.timeline_for(warps).id
                timeline = self.show_timeline(trace, names, warps)
        else:
            self.current = timeline.id
            timeline.names = names  # the names as the table shows them (readable or raw)
            if timeline.selected is not None:
                timeline.select(timeline.selected)
        timeline.focus()

    @on(TimelineLeft)
    def leave_timeline(self, event: TimelineLeft | None = None) -> None:
        if event is not None:
            event.stop()
        if self.table.model is None:  # its tree is still being built: the timeline stays
            return
        table = self.show_table()
        table.cursor = table.cursor  # the details follow the table again

    @work(thread=True, exclusive=True, group="warps", exit_on_error=False)
    def read_warps(self, trace: Trace, clock_khz: float | None) -> None:
        """An instrumentation trace's launches and per-scope statistics, off the UI thread."""
        from proton_tui.view.warps import warp_trace

        self.post_message(WarpsRead(trace, clock_khz, warp_trace(trace, clock_khz)))

    def on_warps_read(self, message: WarpsRead) -> None:
        message.stop()
        if message.trace is not self.trace:
            return
        shown = self.show_timeline(message.trace, self.table.display_spec.names, message.warps)
        if self.current == "warps" and shown.id != "warps":  # no launch after all: the lanes instead
            self.current = shown.id
            shown.focus()

    def names_changed(self) -> None:
        """The table's names changed (readable ones landed): the other views show them too."""
        self.refresh_flame()
        for timeline in self.query(".timeline"):
            if timeline.trace is not None:
                timeline.names = self.table.display_spec.names
                if timeline.display and timeline.selected is not None:
                    timeline.select(timeline.selected)  # its details with the readable names
