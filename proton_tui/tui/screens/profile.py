"""The capture viewer: the header, then one view of the capture (the kernel-time table, the flame view or the trace's
timeline: `widgets/profile_views.py`), the selected item's details; filter, search, export and compare."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

from proton_tui.console import cut_field, printable, size_text
from proton_tui.engine.rundir import DEFAULT_OUTPUT
from proton_tui.hatchet import Profile
from proton_tui.hatchet.profile import SCOPE_SEPARATOR
from proton_tui.output.details import (
    bandwidth_notes,
    cycle_notes,
    device_lines,
    event_details,
    header_line,
    kernel_details,
    node_details,
)
from proton_tui.output.diff import DiffError, diff_profiles
from proton_tui.tui.dialogs.path import CompareDialog, CompareRequest, ExportDialog
from proton_tui.tui.messages import (
    AllLaunchesRead,
    Loaded,
    LoadFailed,
    NamesReady,
    ReadCrashed,
    ShowDiff,
    ShowRunLog,
    TimelineSelected,
    TraceRead,
)
from proton_tui.tui.opening import Opening
from proton_tui.tui.screens import over_another_screen
from proton_tui.tui.screens.profile_filter import FilterAndSearch
from proton_tui.tui.widgets.details_pane import DetailsPane
from proton_tui.tui.widgets.flame_view import FlameView
from proton_tui.tui.widgets.key_bar import KeyBar
from proton_tui.tui.widgets.profile_table import ProfileTable
from proton_tui.tui.widgets.profile_views import ProfileViews
from proton_tui.tui.widgets.summary import Summary
from proton_tui.tui.widgets.verdict import VerdictPanel
from proton_tui.view.filters import ViewFilter
from proton_tui.view.flame import merged_text
from proton_tui.view.formatting import counted, format_percent
from proton_tui.view.names import Names, demangler_available
from proton_tui.view.names.demangler import UNAVAILABLE as DEMANGLER_UNAVAILABLE

if TYPE_CHECKING:
    from proton_tui.engine.session import RunResult

PROGRESS_EVERY_S = 0.1  # how often the share of a large capture read so far is redrawn
# The screen's actions that need no capture: they work while it is read (the others wait for it).
WHILE_READING = frozenset({"back", "quit", "escape", "log", "runs"})
STILL_READING_EVERY_S = 2.0  # how often a key pressed while the capture is read is answered

EMPTY_EXPLANATION = (
    "The capture holds only ROOT: no kernel was recorded.\n\n"
    "Common causes: the instrumentation backend on a kernel without proton.language scopes; roctracer pinned with "
    "-b under Proton's command line, which starts it before the HIP runtime (Mode env records it); "
    "TRITON_PROTON_DISABLE=1; a script that launched no GPU kernel."
)


class ProfileScreen(FilterAndSearch, Screen):
    """A capture's header, its kernel-time table and the selected row's details; with the run that made it."""

    BINDINGS = [
        Binding("q", "back", "Back"),
        Binding("q", "quit", "Quit", show=False),
        Binding("b", "back", "Back", show=False),
        Binding("f", "filter", "Filter"),
        Binding("slash", "search", "Search"),
        Binding("F", "clear_filter", "Clear filter", show=False),
        Binding("h", "toggle_empty", "Empty frames", show=False),
        Binding("g", "toggle_flame", "Flame/table"),
        Binding("t", "toggle_timeline", "Timeline/table"),
        Binding("escape", "escape", "Close bar / back", show=False),
        Binding("i", "toggle_details", "Details size"),
        Binding("x", "export", "Export"),
        Binding("m", "compare", "Compare"),
        Binding("l", "log", "Run log"),
        Binding("f4", "runs", "Runs"),
    ]

    KEY_BAR_ORDER = ("back", "quit", "toggle_timeline", "later_launch", "next_straggler", "toggle_group",
                     "toggle_flame", "zoom_in", "zoom_out", "zoom", "launch", "fit", "filter", "search",
                     "toggle_summary", "cycle_sort", "export", "compare", "log", "runs", "toggle", "expand_all",
                     "collapse_all", "toggle_details")

    def __init__(self, profile: Profile | None, run: RunResult | None = None, opening: Opening | None = None) -> None:
        """Shows `profile`, or, with `opening`, says so and finishes the load once this screen is up."""
        super().__init__()
        self.profile, self.run, self.opening = profile, run, opening
        self.view_filter = opening.view_filter if opening is not None else ViewFilter()
        self.filter_timer: Timer | None = None
        self.progress_timer: Timer | None = None
        self.still_reading_at = 0.0  # when a key pressed while the capture is read is next answered
        self.comparing: dict[int, Profile] = {}  # compare's A by the id of B's opening, while B is read
        self.all_launches_for = None  # the warps whose launches a worker is working out

    def compose(self) -> ComposeResult:
        if self.run is not None:
            banner = VerdictPanel(id="run-banner")
            banner.show(self.run.banner(), self.run.verdict.passed)
            yield banner
        summary = self.opening.label if self.profile is None else self.summary_text(self.profile)
        yield Summary(summary, id="summary")
        yield from self.body()
        yield KeyBar()

    def body(self) -> list[Widget]:
        """What shows the profile under its summary: its views (the table first) and the details, or why there is
        nothing to show. While the capture is read they are mounted hidden and empty: their mount is then not part
        of the wait."""
        if self.profile is not None and self.profile.is_root_only:
            return [Static(Text(EMPTY_EXPLANATION), id="empty")]
        detail = DetailsPane(id="detail")
        detail.display = self.profile is not None
        return [ProfileViews(self.profile, id="views"), detail]

    def on_mount(self) -> None:
        if self.profile is None:  # the app calls finish_opening once this screen is on the terminal
            self.title = f"proton-tui — {self.opening.path.name}"
        else:
            self.title = f"proton-tui — {self.profile.path.name}"
            if not self.profile.is_root_only:
                self.filter_first()
            self.body_mounted()

    def finish_opening(self) -> None:
        """Read the capture being opened (this screen is on the terminal, saying so) and show it once read
        (`Opening.start`)."""
        self.progress_timer = self.set_interval(PROGRESS_EVERY_S, self.show_progress)
        self.opening.start(self.post_message, trace_first=True)  # as far as the opening allows (`Opening.trace_first`)

    @on(TraceRead)
    async def show_trace_first(self, message: TraceRead) -> None:
        """An instrumentation trace's events are read: its first launch is shown on the warp timeline while its tree
        is built (the table and the other keys wait for it)."""
        opening = message.opening
        if opening is not self.opening or self.profile is not None or not self.is_attached:
            opening.first_shown()  # nothing here draws it: the tree is built now
            return
        self.progress_timer.stop()
        trace, warps = message.trace, message.warps
        self.query_one("#summary", Summary).update(Text(
            f"{printable(opening.path.name)}  {len(trace.events):,} events, "
            f"{counted(len(warps.launches), 'launch', 'launches')}  building the kernel table…"))
        self.query_one("#detail").display = True  # before the launch is laid out: the timeline's height is known
        try:
            await self.views.show_first(trace, warps, drawn=opening.first_shown)
        except BaseException:
            opening.first_shown()
            raise

    def on_key(self, event: events.Key) -> None:
        """A key pressed while the capture is read that nothing takes yet is answered: still reading (once in a
        while, not a notice a key)."""
        if self.profile is not None or self.opening is None:
            return
        active = self.active_bindings.get(event.key)
        if (active is None or not active.enabled) and time.monotonic() >= self.still_reading_at:
            self.still_reading_at = time.monotonic() + STILL_READING_EVERY_S
            name = printable(self.opening.path.name)
            self.notify(f"Still building the kernel table of {name}: its keys work once it is built"
                        if self.views.trace is not None else f"Still reading {name}: its keys work once it is shown",
                        timeout=STILL_READING_EVERY_S, markup=False)

    @on(ReadCrashed)
    def read_crashed(self, message: ReadCrashed) -> None:
        raise message.error

    def show_progress(self) -> None:
        if fraction := self.opening.fraction_read():
            opening, share = self.opening, f"{int(fraction * 100)} % read"
            what = f"Reading {size_text(opening.size)}, {share}" if opening.size else share
            # the path last, cut in its middle if the line is short: the numbers before it stay whole
            self.query_one("#summary", Summary).update(f"{what}  {printable(str(opening.path))}", cut_last=True)

    @on(LoadFailed)
    def load_failed(self, message: LoadFailed) -> None:
        """A capture this screen opened could not be read: a fatal one goes on to the app (which ends), else this
        screen says why (and, when it was this screen's own capture, goes back)."""
        opening = message.opening
        if opening is None or opening.fatal:
            return
        message.stop()
        self.comparing.pop(id(opening), None)
        self.notify(printable(cut_field(message.reason)), severity="error", markup=False)
        if opening is self.opening:
            self.dismiss()

    @on(Loaded)
    async def show_loaded(self, message: Loaded) -> None:
        if message.opening is not None and message.opening is not self.opening:  # compare's B
            self.compared(self.comparing.pop(id(message.opening), self.profile), message.profile)
            return
        self.progress_timer.stop()
        profile = message.profile
        self.query_one("#summary", Summary).update(Text(self.summary_text(profile)))
        if profile.is_root_only:
            self.profile = profile
            await self.query("#views, #detail").remove()
            await self.mount_all(self.body(), before=self.query_one(KeyBar))
        else:
            await self.views.load(profile)  # on its table: the flame view waits for its key
            self.profile = profile  # its keys are taken from here on: every view is mounted
            self.filter_first()
            self.query_one("#detail").display = True
            self.body_mounted()  # focus set before the table's first paint: one paint, not two

    def filter_first(self) -> None:
        """The freshly loaded table through the view's filter (which hides the empty frames unless asked)."""
        if self.view_filter or self.view_filter.hidden_empty(self.profile):
            self.show_filtered(self.view_filter)

    def body_mounted(self) -> None:
        if not self.profile.is_root_only:
            table = self.query_one(ProfileTable)
            self.set_focus(table, scroll_visible=False)
            kernel = self.opening.kernel if self.opening is not None else None
            if kernel is not None:  # opened on a kernel: on its row, a trace too
                table.select_kernel(kernel)
            self.call_after_refresh(self.load_readable_names)  # after the first paint: it is not needed for it
            if kernel is None and self.profile.trace is not None and self.profile.trace.events:
                self.action_toggle_timeline()  # a trace opens on its timeline

    @property
    def reached_from_elsewhere(self) -> bool:
        """Opened from another screen (the form, a run, the runs list), which `back` returns to; else the app is
        this viewer alone (`proton-tui view FILE`)."""
        return over_another_screen(self)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "toggle_timeline":  # a trace of no kernel shows why it is empty, as any empty capture does
            return self.profile is not None and self.profile.trace is not None and not self.profile.is_root_only
        if self.profile is None and action not in WHILE_READING:  # shown in the key bar, refused until read
            # a trace's first launch shown while its tree is built: its details are there to size
            return True if action == "toggle_details" and self.query_one("#detail").display else None
        if action == "back":
            return self.reached_from_elsewhere
        if action == "quit":
            return not self.reached_from_elsewhere
        if action == "log":
            return self.run is not None
        if action == "runs":
            return self.reached_from_elsewhere or self.run is not None
        if action in ("filter", "search", "clear_filter", "close_bars", "export", "compare", "toggle_empty",
                      "toggle_flame", "toggle_details"):
            return not self.profile.is_root_only or None
        return True

    def summary_text(self, profile: Profile) -> str:
        """The header: the file, then, while a filter is on, how much of the capture it shows (first, so the
        header never leaves it out), the capture in numbers, what the view leaves out, and a pointer to the notes
        (ROOT's details hold them: they would not fit the header)."""
        name, _, line = header_line(profile).partition("  ")
        if marker := self.filter_marker(profile):
            name += f"  {marker}"
        line = f"{name}  {line}" if line else name
        if hidden := self.view_filter.hidden_empty(profile):
            line += f"  {counted(hidden, 'empty frame')} hidden (h shows)"
        if notes := len(device_lines(profile) + bandwidth_notes(profile) + cycle_notes(profile)):
            line += f"  {counted(notes, 'note')} in ROOT's details"
        return line

    def filter_marker(self, profile: Profile) -> str | None:
        """What the filter on leaves of the capture, and the key that clears it; None with no filter on."""
        shown = []
        if profile.reference_total is not None:
            shown.append(f"{format_percent(profile.percent(profile.total))} of the capture")
        if (chosen := self.view_filter).hides_rows:  # how many rows the depth and min % hide (none, say so)
            hidden = sum(profile.visible(0.0, None, chosen.show_empty)) - \
                sum(profile.visible(chosen.threshold, chosen.depth, chosen.show_empty))
            shown.append(f"{counted(hidden, 'row')} hidden by min % or depth" if hidden else
                         "min % and depth hide no row")
        return f"filtered: {', '.join(shown)} (F clears)" if shown else None

    # ---- demangled names ---------------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="names", exit_on_error=False)
    def load_readable_names(self) -> None:
        """Demangle every distinct name off the UI thread; the table switches when it lands."""
        self.post_message(NamesReady(Names.demangled(set(self.profile.names))))

    def on_names_ready(self, message: NamesReady) -> None:
        table = self.query_one(ProfileTable)
        table.set_names(message.names.with_form(table.display_spec.names.form))
        self.views.names_changed()
        if self.view_filter.include is not None or self.view_filter.exclude is not None:
            self.show_filtered(self.view_filter)  # a filter matches every form of a name
        if not demangler_available():
            self.notify(DEMANGLER_UNAVAILABLE, severity="warning")

    # ---- the views: table, flame, timeline ----------------------------------------------------------------------
    @property
    def views(self) -> ProfileViews:
        return self.query_one(ProfileViews)

    def action_toggle_timeline(self) -> None:
        """Between the table and the trace's timeline."""
        self.views.toggle_timeline(self.profile)

    def action_toggle_flame(self) -> None:
        """Between the table and the flame view, on the same node."""
        self.views.toggle_flame()

    @on(TimelineSelected)
    def timeline_selected(self, event: TimelineSelected) -> None:
        if not event.view.display:  # its warps landed while the table was shown: the table keeps the details
            return
        warps = event.view.warps if event.view.id == "warps" else None
        self.detail_rows = event_details(event.view.trace, event.event, event.view.names, warps)
        if warps is not None and not warps.across_worked_out and self.profile is not None \
                and warps is not self.all_launches_for:  # the tree comes first; one worker a trace
            self.all_launches_for = warps
            self.work_out_all_launches(warps)

    @work(thread=True, exclusive=True, group="all-launches", exit_on_error=False)
    def work_out_all_launches(self, warps) -> None:
        """Every launch of an instrumentation trace and the statistics across them, off the UI thread; the details
        show them once worked out."""
        warps.across  # noqa: B018 - worked out here, kept on `warps`
        self.post_message(AllLaunchesRead(warps))

    def on_all_launches_read(self, message: AllLaunchesRead) -> None:
        found = self.query("#warps")
        shown = found.first() if found else None
        if shown is not None and shown.display and shown.warps is message.warps and shown.selected is not None:
            self.detail_rows = event_details(shown.trace, shown.selected, shown.names, shown.warps)

    @on(FlameView.Selected)
    def flame_selected(self, event: FlameView.Selected) -> None:
        display = event.view.display_spec
        if event.node is not None:
            self.detail_rows = node_details(display, event.node)
        else:
            self.detail_rows = [("merged", merged_text(display, event.frame))]

    # ---- details ------------------------------------------------------------------------------------------------
    def on_profile_table_highlighted(self, event: ProfileTable.Highlighted) -> None:
        if not event.table.display:  # the flame view or the timeline has the details
            return
        # The pane's height is fixed: a new row repaints it alone, the table keeps its place.
        display = event.table.display_spec
        rows = kernel_details(display, event.kernel) if event.kernel is not None else node_details(display,
                                                                                                     event.node)
        self.detail_rows = rows

    @property
    def detail_rows(self) -> list[tuple[str, str]]:
        """What the details pane shows now."""
        panes = self.query(DetailsPane)
        return panes.first().rows if panes else []

    @detail_rows.setter
    def detail_rows(self, rows: list[tuple[str, str]]) -> None:
        self.query_one(DetailsPane).show(rows)

    def action_toggle_details(self) -> None:
        """The details pane taller (two thirds of the screen at most), then hidden (the views take its rows), then as
        it was."""
        self.query_one(DetailsPane).toggle_size()

    def action_escape(self) -> None:
        """Close an open bar; with none open, back to where the viewer was opened from."""
        if any(bar.display for bar in self.query(".bar")):
            self.action_close_bars()
        elif self.reached_from_elsewhere:
            self.action_back()

    def action_back(self) -> None:
        self.dismiss()

    def action_quit(self) -> None:
        self.app.exit()

    def action_runs(self) -> None:
        self.app.action_show_runs()

    # ---- export, compare, log ------------------------------------------------------------------------------------
    def action_export(self) -> None:
        table = self.query_one(ProfileTable)
        view = "kernels" if table.show_kernels else "tree"

        def written(path: str | None) -> None:
            if path:
                self.notify(f"Exported the {view} view to {Path(path).resolve()}", timeout=6, markup=False)

        self.app.push_screen(ExportDialog(table.display_spec, view, self.profile.path.stem), written)

    def action_compare(self) -> None:
        """Compare this capture, or one scope of it (A), with another capture or scope (B); a capture is read on the
        reading thread. The dialog offers, as A, the scope the cursor is on."""
        def start(request) -> None:
            if not isinstance(request, CompareRequest):
                return
            if isinstance(request.b, Opening):
                self.comparing[id(request.b)] = request.a
                self.notify(request.b.label, timeout=2, markup=False)
                request.b.start(self.post_message)
            else:
                self.compared(request.a, request.b)

        output = getattr(self.app, "output", None) or DEFAULT_OUTPUT
        self.app.push_screen(CompareDialog(self.profile, output, self.cursor_scope()), start)

    def cursor_scope(self) -> str | None:
        """The scope the table's cursor is on, as its path (a frame without its own value: not a kernel)."""
        table = self.query_one(ProfileTable)
        node, shown = table.current_node, table.profile
        if not node or not table.display or shown.has_own[node]:
            return None
        return shown.path_of(node, sep=SCOPE_SEPARATOR)

    def compared(self, a: Profile, b: Profile) -> None:
        """Compare's B is at hand: the comparison is shown, or why there is none."""
        try:
            diff = diff_profiles(a, b)
        except DiffError as error:
            self.notify(printable(cut_field(str(error))), severity="error", markup=False)
            return
        self.post_message(ShowDiff(diff, self.query_one(ProfileTable).display_spec.names))

    def action_log(self) -> None:
        """Back to the run's output."""
        if self.run is not None:
            self.post_message(ShowRunLog(self.run))
