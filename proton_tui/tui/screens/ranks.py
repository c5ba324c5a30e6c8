"""A rank set (one capture per rank): the ranks, each kernel across them, one kernel on every rank as share bars; a
rank's own capture opened in the viewer, two ranks compared; a set of traces on one merged timeline, which `x`
writes for Perfetto. Every number is `output.ranks`' (the same as `view DIR --plain`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import ContentSwitcher

from proton_tui.console import cut_field, printable
from proton_tui.hatchet import CaptureError, Profile
from proton_tui.output.details import event_details, name_rows
from proton_tui.output.diff import DiffError, diff_profiles
from proton_tui.output.document import json_text
from proton_tui.output.export import check_trace_path, fresh_path, write_export
from proton_tui.output.ranks import (
    KERNEL_SORTS,
    RankCapture,
    RankSet,
    RankSetError,
    merged_rank_trace,
    sorted_kernels,
    typical_rank,
)
from proton_tui.records import MIN_FRACTION
from proton_tui.tui.dialogs.path import PathDialog
from proton_tui.tui.messages import (
    Loaded,
    LoadFailed,
    NamesReady,
    RanksLaidOut,
    ReadCrashed,
    ShowDiff,
    TimelineLeft,
    TimelineSelected,
    ViewCapture,
)
from proton_tui.tui.opening import Opening
from proton_tui.tui.widgets.details_pane import DetailsPane
from proton_tui.tui.widgets.key_bar import KeyBar
from proton_tui.tui.widgets.rank_tables import KernelAcrossTable, KernelRankTable, RankTable
from proton_tui.tui.widgets.row_table import RowTable
from proton_tui.tui.widgets.summary import Summary
from proton_tui.view.formatting import counted, format_count, format_percent, format_ratio, format_value
from proton_tui.view.names import Names

if TYPE_CHECKING:
    from proton_tui.output.rank_timeline import RankTimeline
    from proton_tui.tui.widgets.timeline import RanksTimeline

PROGRESS_EVERY_S = 0.1  # how often the count of rank captures read so far is redrawn


class RankSetScreen(Screen):
    """The ranks' table over the kernel × rank table (Enter: the kernel on every rank), the selected row's details;
    a set of traces opens on its merged timeline (t: the tables)."""

    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("o", "open_rank", "Open rank"),
        Binding("m", "compare", "Compare"),
        Binding("space", "mark", "Mark A", show=False),
        Binding("s", "sort", "Sort"),
        Binding("t", "toggle_timeline", "Timeline/tables"),
        Binding("x", "export", "Merged trace"),
        Binding("i", "toggle_details", "Details size"),
        Binding("escape", "escape", "Kernels", show=False),
        Binding("f1,question_mark", "app.help", "Help"),
    ]
    KEY_BAR_ORDER = ("quit", "toggle_timeline", "launch(1)", "export", "open_rank", "compare", "sort", "toggle_details")
    HELP_ABOUT = (
        ("ranks", "per rank: GPU time, its ratio to the set's median, SLOW where the median is under "
                  f"{format_percent(MIN_FRACTION * 100)} of its time (as check flags a GPU), kernels, launches, host "
                  "and GPU (from the sidecars)"),
        ("kernels", "per kernel: its time on each rank (as many rank columns as fit; — where a rank never ran it), "
                    "min, median, max, max/med (max ÷ median) and the slowest rank; s changes the order"),
        ("Enter", "on a kernel: that kernel on every rank, its share of each rank's GPU time as a bar; on a rank: "
                  "its capture"),
        ("o, m, space", "o opens the selected rank's capture in the viewer; m compares rank A (space marks it; "
                        "else the rank nearest the median) with the selected rank"),
        ("timeline", "a set of traces: every rank's lanes under the rank, clocks aligned as the merged trace's; "
                     "n/N go through one kernel's launches on every rank; x writes the merged trace"),
    )

    def __init__(self, opening: Opening) -> None:
        super().__init__()
        self.opening = opening
        self.rank_set: RankSet | None = None
        self.timeline: RankTimeline | None = None
        self.names = Names()
        self.sort_key = KERNEL_SORTS[0]
        self.progress_timer = None
        # compare's two ranks, read one after the other: the one being read, those still to read, those read
        self.comparing: Opening | None = None
        self.compare_next: list[RankCapture] = []
        self.compare_read: list[Profile] = []
        self.handing_over = False  # a rank's viewer asked for and not yet shown: the set takes no key meanwhile

    def compose(self) -> ComposeResult:
        yield Summary(self.opening.label, id="summary")
        with ContentSwitcher(id="rank-views", initial=None):
            with Vertical(id="rank-tables"):
                yield RankTable(id="ranks")
                with ContentSwitcher(id="kernel-views", initial="kernels"):
                    yield KernelRankTable(id="kernels")
                    yield KernelAcrossTable(id="across")
        detail = DetailsPane(id="detail")
        detail.display = False
        yield detail
        yield KeyBar()

    def on_mount(self) -> None:
        self.title = f"proton-tui — {printable(self.opening.path.name or str(self.opening.path))}"

    def finish_opening(self) -> None:
        """Read the rank set (this screen is on the terminal, saying so) and show it once read."""
        self.progress_timer = self.set_interval(PROGRESS_EVERY_S, self.show_progress)
        self.opening.start(self.post_message)

    def show_progress(self) -> None:
        if fraction := self.opening.fraction_read():
            self.query_one(Summary).update(f"{self.opening.label}  {format_percent(fraction * 100)} read")

    @on(ReadCrashed)
    def read_crashed(self, message: ReadCrashed) -> None:
        raise message.error

    @on(LoadFailed)
    def load_failed(self, message: LoadFailed) -> None:
        """A capture this screen opened could not be read: the set itself, for ``view DIR``, goes on to the app
        (which ends); a rank to compare is said in one line (one of an earlier compare, since replaced, is not)."""
        opening = message.opening
        if opening is None or opening.fatal:
            return
        message.stop()
        if opening is self.comparing:
            self.end_compare()
            self.notify(printable(cut_field(message.reason)), severity="error", markup=False)
        elif opening is self.opening:
            self.notify(printable(cut_field(message.reason)), severity="error", markup=False)
            self.dismiss()

    @on(Loaded)
    async def show_loaded(self, message: Loaded) -> None:
        if message.opening is self.comparing and message.opening is not None:
            message.stop()
            self.rank_read(message.profile)
            return
        if message.opening is not self.opening:
            return
        message.stop()
        if self.progress_timer is not None:
            self.progress_timer.stop()
        self.rank_set = message.profile
        self.query_one(Summary).update(self.summary_text())
        self.query_one(RankTable).show(self.rank_set)
        self.fill_kernels()
        self.query_one("#detail").display = True
        if self.rank_set.of_traces:  # it opens on its timeline
            from proton_tui.tui.widgets.timeline import RanksTimeline  # numpy: for traces alone

            await self.query_one("#rank-views", ContentSwitcher).add_content(RanksTimeline(id="rank-timeline",
                                                                                           classes="timeline"))
            self.query_one(Summary).update(f"{self.summary_text()}  laying out the ranks' timeline…")
            self.lay_out_timeline()
        else:
            self.show_tables()
        self.load_readable_names()

    @work(thread=True, exclusive=True, group="timeline", exit_on_error=False)
    def lay_out_timeline(self) -> None:
        """The ranks' traces merged onto one timeline, off the UI thread."""
        from proton_tui.output.rank_timeline import rank_timeline

        try:
            self.post_message(RanksLaidOut(rank_timeline(self.rank_set)))
        except (RankSetError, CaptureError, ValueError) as error:
            self.post_message(RanksLaidOut(None, str(error)))

    @on(RanksLaidOut)
    def ranks_laid_out(self, message: RanksLaidOut) -> None:
        self.timeline = message.timeline
        self.query_one(Summary).update(self.summary_text())
        if self.timeline is None:
            self.notify(printable(cut_field(message.problem or "")), severity="error", markup=False)
            self.show_tables()
        else:
            self.action_toggle_timeline()

    def summary_text(self) -> str:
        rank_set = self.rank_set
        ranks, unit = rank_set.ranks, rank_set.unit
        slow = [rank for rank in ranks if rank_set.flagged(rank)]
        line = f"{counted(len(ranks), 'rank')} (ranks from the {ranks[0].source})"
        if slow:
            worst = max(slow, key=lambda rank: rank.capture.total)
            line += (f"  SLOW: {', '.join(rank.label for rank in slow)} ({'the slowest ' if len(slow) > 1 else ''}"
                     f"{format_ratio(worst.capture.total / rank_set.median_total)} the median)")
        line += f"  median GPU time {format_value(rank_set.median_total, unit)}"
        if self.timeline is not None:
            line += f"  clocks aligned by {self.timeline.alignment}"  # the timeline's title says it shorter
        return line

    @work(thread=True, exclusive=True, group="names", exit_on_error=False)
    def load_readable_names(self) -> None:
        """Demangle every kernel name off the UI thread; the tables switch when they land."""
        self.post_message(NamesReady(Names.demangled(self.rank_set.names)))

    def on_names_ready(self, message: NamesReady) -> None:
        self.names = message.names
        self.fill_kernels()
        if (view := self.timeline_view()) is not None:
            view.names = self.names

    # ---- the tables ---------------------------------------------------------------------------------------------
    def fill_kernels(self) -> None:
        if self.rank_set is None:
            return
        kernels = sorted_kernels(self.rank_set.kernels(), self.sort_key, self.names)
        table = self.query_one(KernelRankTable)
        table.show(self.rank_set, kernels, self.names, self.size.width or self.app.size.width)
        table.border_title = f"Kernels by {self.sort_key}"

    def on_resize(self, event: events.Resize) -> None:
        self.fill_kernels()

    def show_tables(self) -> None:
        self.query_one("#rank-views", ContentSwitcher).current = "rank-tables"
        self.refresh_bindings()
        kernels = self.query_one(KernelRankTable)
        kernels.focus()
        self.follow(kernels)  # the details follow the table again

    @on(RowTable.RowHighlighted)
    def row_highlighted(self, event: RowTable.RowHighlighted) -> None:
        if self.rank_set is not None and self.query_one("#rank-views", ContentSwitcher).current == "rank-tables":
            self.follow(event.table)  # (on the timeline, the timeline has the details)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """Tab to a table: the details are its selected row's."""
        self.follow(event.widget)

    def follow(self, table) -> None:
        """The details of `table`'s selected row: a rank, a kernel, or a rank of the kernel shown on every rank."""
        if isinstance(table, RankTable) and (rank := table.selected) is not None:
            self.detail_rows = self.rank_rows(rank)
        elif isinstance(table, KernelRankTable) and (kernel := table.selected) is not None:
            self.detail_rows = self.kernel_rows(kernel)
        elif isinstance(table, KernelAcrossTable) and table.kernel is not None:
            self.detail_rows = self.rank_rows(self.rank_set.ranks[table.cursor_row])

    def kernel_rows(self, kernel) -> list[tuple[str, str]]:
        """A kernel across the ranks: on how many, its spread and the slowest rank, then its name's forms."""
        unit = self.rank_set.unit
        return [("on ranks", f"{format_count(len(kernel.present))} of {format_count(len(kernel.values))} "
                             "(Enter: each rank)"),
                ("spread", f"{format_value(kernel.minimum, unit)} – {format_value(kernel.maximum, unit)}, median "
                           f"{format_value(kernel.median, unit)}; slowest "
                           f"{self.rank_set.ranks[kernel.slowest].label}"),
                *name_rows(self.names, kernel.name, "kernel")]

    def rank_rows(self, rank) -> list[tuple[str, str]]:
        rows = [("rank", rank.heading), ("capture", printable(str(rank.capture.path))),
                ("rank from", f"the {rank.source}")]
        if self.rank_set.flagged(rank):
            rows.append(("SLOW", f"the set's median GPU time is under {format_percent(MIN_FRACTION * 100)} of "
                                 "this rank's"))
        return rows

    @on(RowTable.RowSelected)
    def row_selected(self, event: RowTable.RowSelected) -> None:
        table = event.table
        if isinstance(table, KernelRankTable) and (kernel := table.selected) is not None:
            across = self.query_one(KernelAcrossTable)
            across.show(self.rank_set, kernel)
            across.border_title = printable(cut_field(self.names.shown(kernel.name)))
            self.query_one("#kernel-views", ContentSwitcher).current = "across"
            self.refresh_bindings()
            across.focus()
        elif isinstance(table, (RankTable, KernelAcrossTable)):
            self.action_open_rank()

    def selected_rank(self):
        """The rank the cursor is on: the selected event's on the timeline, the kernel-on-every-rank table's when it
        has the focus, else the ranks'."""
        timeline = self.timeline_view()
        if timeline is not None and timeline.display and timeline.selected is not None:
            return self.rank_set.ranks[self.timeline.rank_of_lane[timeline.trace.events[timeline.selected].lane]]
        across = self.query_one(KernelAcrossTable)
        if self.focused is across and across.kernel is not None:
            return self.rank_set.ranks[across.cursor_row]
        return self.query_one(RankTable).selected

    def action_escape(self) -> None:
        switcher = self.query_one("#kernel-views", ContentSwitcher)
        if switcher.current == "across":
            switcher.current = "kernels"
            self.refresh_bindings()
            self.query_one(KernelRankTable).focus()

    def action_sort(self) -> None:
        self.sort_key = KERNEL_SORTS[(KERNEL_SORTS.index(self.sort_key) + 1) % len(KERNEL_SORTS)]
        self.fill_kernels()

    def action_mark(self) -> None:
        marked = self.query_one(RankTable).mark()
        self.notify(f"{marked.label} is compare's A" if marked else "compare's A: the rank nearest the median",
                    timeout=3, markup=False)

    def action_open_rank(self) -> None:
        """The selected rank's own capture in the viewer (every view of a capture works there), read again on the
        reading thread; refused if the file changed after the set was read. From a kernel on every rank, the viewer
        opens on that kernel in its kernel summary."""
        if (rank := self.selected_rank()) is not None:
            across = self.query_one(KernelAcrossTable)
            kernel = across.kernel.name if self.focused is across and across.kernel is not None else None
            try:
                opening = Opening.of_rank(rank, kernel)
            except CaptureError as error:
                self.notify(printable(cut_field(str(error))), severity="error", markup=False)
                return
            self.handing_over = True  # `o q` typed at once closes the rank's viewer, never the app
            self.refresh_bindings()
            self.post_message(ViewCapture(None, opening=opening))

    def on_screen_suspend(self) -> None:
        """The rank's viewer is shown: the keys are its own now, and the set's again once it is closed."""
        if self.handing_over:
            self.handing_over = False
            self.refresh_bindings()

    def action_compare(self) -> None:
        """Rank A (marked, else the rank nearest the median) against the selected rank, in compare: both captures
        read again, one after the other, on the reading thread (refused if either file changed after the set was
        read). A compare still being read gives way to this one."""
        table, b = self.query_one(RankTable), self.selected_rank()
        a = self.rank_set.ranks[table.marked] if table.marked is not None else typical_rank(self.rank_set)
        if b is None or a is b:
            why = "" if table.marked is not None else " (the rank nearest the median; space marks another)"
            self.notify(f"{a.label} is A{why}: move to another rank to compare it with", timeout=4, markup=False)
            return
        if self.comparing is not None:
            self.comparing.cancel()
        self.end_compare()
        self.compare_next = [a, b]
        self.read_next_rank()
        if self.comparing is not None:  # else why not is said
            self.notify(f"Reading {a.label} and {b.label} to compare them…", timeout=2, markup=False)

    def read_next_rank(self) -> None:
        rank = self.compare_next.pop(0)
        try:
            self.comparing = Opening.of_rank(rank)
        except CaptureError as error:
            self.end_compare()
            self.notify(printable(cut_field(str(error))), severity="error", markup=False)
            return
        self.comparing.start(self.post_message)

    def end_compare(self) -> None:
        """Forget compare's ranks (what they read is let go with them)."""
        self.comparing, self.compare_next, self.compare_read = None, [], []

    def rank_read(self, profile: Profile) -> None:
        """A rank to compare has been read: the next is read, or, both read, the comparison is shown."""
        self.compare_read.append(profile)
        if self.compare_next:
            self.read_next_rank()
            return
        a, b = self.compare_read
        self.end_compare()
        try:
            diff = diff_profiles(a, b)
        except DiffError as error:
            self.notify(printable(cut_field(str(error))), severity="error", markup=False)
            return
        self.post_message(ShowDiff(diff, self.names))

    # ---- the timeline -------------------------------------------------------------------------------------------
    def action_toggle_timeline(self) -> None:
        switcher = self.query_one("#rank-views", ContentSwitcher)
        if switcher.current == "rank-timeline":
            self.show_tables()
            return
        view = self.timeline_view()
        switcher.current = "rank-timeline"
        self.refresh_bindings()
        if view.model is None:
            view.show_ranks(self.timeline, self.names)
        elif view.selected is not None:
            view.select(view.selected)
        view.focus()

    def timeline_view(self) -> RanksTimeline | None:
        """The merged timeline's view: a set of traces has one (mounted once read), a set of trees none."""
        found = self.query("#rank-timeline")
        return found.first() if found else None

    @on(TimelineLeft)
    def timeline_left(self, event: TimelineLeft) -> None:
        event.stop()
        self.show_tables()

    @on(TimelineSelected)
    def timeline_selected(self, event: TimelineSelected) -> None:
        if self.timeline is not None and event.view.display:
            self.detail_rows = self.timeline.details(event.event) + event_details(self.timeline.trace, event.event,
                                                                                  event.view.names)

    def action_export(self) -> None:
        """Write the merged trace (for Perfetto's UI) to a new file; a trace that cannot be read again as the set read
        it is said in one line."""
        try:
            document, alignment = merged_rank_trace(self.rank_set)
        except RankSetError as error:
            self.notify(printable(cut_field(str(error))), severity="error", markup=False)
            return
        suggested = fresh_path(Path("."), "ranks-merged", ".json").name

        def written(path: str | None) -> None:
            if path:
                where = printable(str(Path(path).resolve()))
                self.notify(f"Wrote the merged trace of {counted(len(self.rank_set.ranks), 'rank')} to {where} "
                            f"(clocks aligned by {alignment})", timeout=6, markup=False)

        def write(path: str) -> None:
            check_trace_path(path)
            write_export(path, json_text(document))

        self.app.push_screen(PathDialog("Write the ranks' merged trace (for Perfetto's UI) to a new .json file",
                                        suggested, write, empty="Enter the path of a file to write"), written)

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if self.handing_over and not action.startswith("app."):
            return None
        if action in ("quit", "escape") or action.startswith("app."):
            return True
        if self.rank_set is None:
            return None
        if action in ("toggle_timeline", "export"):
            return self.timeline is not None
        tables = self.query_one("#rank-views", ContentSwitcher).current == "rank-tables"
        if action == "sort":  # the kernel table's order: where that table is shown
            return tables and self.query_one("#kernel-views", ContentSwitcher).current == "kernels"
        if action == "mark":
            return tables
        return True

    @property
    def detail_rows(self) -> list[tuple[str, str]]:
        return self.query_one(DetailsPane).rows

    @detail_rows.setter
    def detail_rows(self, rows: list[tuple[str, str]]) -> None:
        self.query_one(DetailsPane).show(rows)

    def action_toggle_details(self) -> None:
        """The details pane taller (two thirds of the screen at most), then hidden, then as it was."""
        self.query_one(DetailsPane).toggle_size()

    def action_quit(self) -> None:
        self.app.exit()
