"""Screens: the profile viewer (filter, search, details, export, compare), the diff and the help dialog."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import DataTable, Input, Label, Static

from ..diff import DiffError, diff_columns, diff_profiles, kernel_diff_cells, total_cells
from ..export import export_text, format_for_path, write_export
from ..hatchet import CaptureError, Profile, load_profile
from ..names import demangle_all, demangler_available
from ..report import device_lines, format_gbps, format_percent, format_value, header_line, node_details
from .footer import Footer
from .profile_table import ProfileTable

if TYPE_CHECKING:
    from ..capture.session import RunResult

LIVE_FILTER_NODES = 200_000  # above this, filters apply on Enter rather than on every keystroke
FILTER_DELAY_S = 0.3

EMPTY_EXPLANATION = (
    "The capture holds only ROOT: no kernel was recorded.\n\n"
    "Common causes: the instrumentation backend on a kernel without proton.language scopes; roctracer pinned with "
    "-b under Proton's CLI on Triton ≤ 3.7 (use env mode); TRITON_PROTON_DISABLE=1; a script that launched no GPU "
    "kernel."
)


def run_banner(run: RunResult) -> str:
    """The verdict and what ran: backend requested → resolved, Triton version, device, folder."""
    record = run.record
    backend = f"backend {record['backend_requested']} → {record['backend_resolved'] or 'unknown'}"
    triton = f"Triton {record['interpreter']['triton_version']}"
    return f"{run.verdict.message}\n{backend}  ·  {triton}  ·  device {record['device']}  ·  {run.run_dir}"


@dataclass
class Opening:
    """A capture being opened: the file, what to say meanwhile, and the call that finishes it (CaptureError)."""

    path: Path
    label: str
    finish: Callable[[], Profile]


class NamesReady(Message):
    """Readable (demangled) names for every raw name of the capture."""

    def __init__(self, readable: dict[str, str]) -> None:
        super().__init__()
        self.readable = readable


class ProfileScreen(Screen):
    """A capture's header, its kernel-time table and the selected row's details; with the run that made it."""

    BINDINGS = [
        Binding("q", "app.quit", "Quit"),
        Binding("f", "filter", "Filter"),
        Binding("slash", "search", "Search"),
        Binding("F", "clear_filter", "Clear filter", show=False),
        Binding("escape", "close_bars", "Close bar", show=False),
        Binding("x", "export", "Export"),
        Binding("m", "compare", "Compare"),
        Binding("l", "log", "Run log"),
        Binding("f4", "app.show_runs", "Runs"),
        Binding("f1,question_mark", "app.help", "Help"),
    ]

    def __init__(self, profile: Profile | None, run: RunResult | None = None, opening: Opening | None = None) -> None:
        """Shows `profile`, or, with `opening`, says so and finishes the load once this screen is up."""
        super().__init__()
        self.profile, self.run, self.opening = profile, run, opening
        self.filter_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        if self.run is not None:
            banner = Static(Text(run_banner(self.run)), id="run-banner")
            banner.set_class(self.run.verdict.passed, "pass")
            banner.set_class(not self.run.verdict.passed, "fail")
            yield banner
        summary = self.opening.label if self.profile is None else self.summary_text(self.profile)
        yield Static(Text(summary), id="summary")
        yield from self.body()
        yield Footer()

    def body(self) -> list[Widget]:
        """What shows the profile under its summary: the table and the details, or why there is nothing to show.
        While the capture is read they are mounted hidden and empty: their mount is then not part of the wait."""
        if self.profile is not None and self.profile.is_empty:
            return [Static(Text(EMPTY_EXPLANATION), id="empty")]
        widgets = [ProfileTable(self.profile, id="table"), Static(id="detail")]
        for widget in widgets:
            widget.display = self.profile is not None
        return widgets

    def on_mount(self) -> None:
        if self.profile is None:  # the app calls finish_opening once this screen is on the terminal
            self.title = f"proton-tui — {self.opening.path.name}"
        else:
            self.title = f"proton-tui — {self.profile.path.name}"
            self.body_mounted()

    async def finish_opening(self) -> None:
        """Load the capture being opened (the loader child has worked meanwhile) and show it."""
        try:
            self.profile = self.opening.finish()
        except CaptureError as error:
            self.app.load_error = str(error)
            self.app.exit(return_code=2)
            return
        self.query_one("#summary", Static).update(Text(self.summary_text(self.profile)))
        table, shown = self.query_one(ProfileTable), self.query("#table, #detail")
        if self.profile.is_empty:
            await shown.remove()
            await self.mount_all(self.body(), before=self.query_one(Footer))
        else:
            table.load(self.profile)
            shown.set(display=True)
            self.body_mounted()  # focus set before the table's first paint: one paint, not two

    def body_mounted(self) -> None:
        if not self.profile.is_empty:
            self.set_focus(self.query_one(ProfileTable), scroll_visible=False)
            self.call_after_refresh(self.load_readable_names)  # after the first paint: it is not needed for it

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "log":
            return (self.run is not None) or None
        if action in ("filter", "search", "clear_filter", "close_bars", "export", "compare"):
            return (self.profile is not None and not self.profile.is_empty) or None
        return True

    def summary_text(self, shown: Profile) -> str:
        lines = [header_line(shown)]
        if shown.reference_total is not None:
            lines[0] += f"  (filtered: {format_percent(shown.percent(shown.total))} of the capture)"
        return "\n".join(lines + device_lines(shown))

    # ---- readable names -----------------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="names", exit_on_error=False)
    def load_readable_names(self) -> None:
        """Demangle every distinct name off the UI thread (one c++filt run); the table switches when it lands."""
        self.post_message(NamesReady(demangle_all(set(self.profile.names))))

    def on_names_ready(self, message: NamesReady) -> None:
        self.query_one(ProfileTable).set_readable_names(message.readable)
        if not demangler_available():
            self.notify("c++filt not found: C++ names stay mangled (install binutils)", severity="warning")

    # ---- details ------------------------------------------------------------------------------------------------
    def on_profile_table_highlighted(self, event: ProfileTable.Highlighted) -> None:
        # The pane's height is fixed: a new row repaints it alone, the table keeps its place.
        self.query_one("#detail", Static).update(Text(self.detail_text(event)), layout=False)

    def detail_text(self, event: ProfileTable.Highlighted) -> str:
        """Everything about the highlighted row, from the core's node_details (or the kernel's totals)."""
        table, profile = event.table, event.table.profile
        if event.kernel is not None:
            kernel = event.kernel
            lines = [kernel.name]
            if table.shown_name(kernel.name) != kernel.name:
                lines.append(table.shown_name(kernel.name))
            numbers = [f"{format_value(kernel.value, profile.unit)} over {kernel.launches:,} launches",
                       f"avg {format_value(kernel.avg, profile.unit)}", ", ".join(kernel.devices) or "no device"]
            if kernel.gbps is not None:
                numbers.append(f"{format_gbps(kernel.gbps)} GB/s")
            return "\n".join(lines + ["  ·  ".join(numbers)])
        readable = table.shown_name(profile.names[event.node]) if table.readable is not None else None
        details = node_details(profile, event.node, readable)
        width = max(len(label) for label, _ in details)
        return "\n".join(f"{label.rjust(width)}  {value}" for label, value in details)

    # ---- filter and search --------------------------------------------------------------------------------------
    async def mount_bars(self) -> None:
        """The filter bar above the table and the search bar below it, hidden, once one is first asked for: their
        five inputs were ~0.04 s of every viewer's start on a 2-core machine."""
        if self.query("#filter-bar"):
            return
        filter_bar = Horizontal(
            Input(placeholder="include regex", id="include"),
            Input(placeholder="exclude regex", id="exclude"),
            Input(placeholder="min % of total", id="threshold", type="number"),
            Input(placeholder="max depth", id="depth", type="integer"),
            id="filter-bar", classes="bar",
        )
        search_bar = Horizontal(
            Input(placeholder="search names (regex, case-insensitive); Enter to find, n/N next/previous", id="search"),
            id="search-bar", classes="bar",
        )
        error = Label("", id="filter-error", classes="error")
        filter_bar.display = search_bar.display = error.display = False
        table = self.query_one(ProfileTable)
        await self.mount(filter_bar, error, before=table)
        await self.mount(search_bar, after=table)

    async def action_filter(self) -> None:
        await self.mount_bars()
        self.query_one("#filter-bar").display = True
        self.query_one("#include", Input).focus()

    async def action_search(self) -> None:
        await self.mount_bars()
        self.query_one("#search-bar").display = True
        self.query_one("#search", Input).focus()

    def action_close_bars(self) -> None:
        for bar in self.query(".bar"):
            bar.display = False
        self.query_one(ProfileTable).focus()

    def action_clear_filter(self) -> None:
        if not self.query("#filter-bar"):  # no bar was opened: nothing is filtered
            return
        for field in ("include", "exclude", "threshold", "depth", "search"):
            self.query_one(f"#{field}", Input).value = ""
        self.apply_filter()
        self.query_one(ProfileTable).matches = []

    @on(Input.Changed, "#filter-bar Input")
    def filter_changed(self) -> None:
        if self.profile.node_count <= LIVE_FILTER_NODES:
            if self.filter_timer is not None:
                self.filter_timer.stop()
            self.filter_timer = self.set_timer(FILTER_DELAY_S, self.apply_filter)

    @on(Input.Submitted, "#filter-bar Input")
    def filter_submitted(self) -> None:
        self.apply_filter()
        self.query_one(ProfileTable).focus()

    def filter_values(self) -> tuple[re.Pattern | None, re.Pattern | None, float, int | None]:
        """The filter bar's values; raises ValueError with a message naming the bad field."""
        patterns = []
        for field in ("include", "exclude"):
            text = self.query_one(f"#{field}", Input).value
            try:
                patterns.append(re.compile(text) if text else None)
            except re.error as error:
                raise ValueError(f"{field} {text!r} is not a valid regular expression: {error}") from None
        threshold_text = self.query_one("#threshold", Input).value.strip()
        depth_text = self.query_one("#depth", Input).value.strip()
        try:
            threshold = float(threshold_text) if threshold_text else 0.0
            depth = int(depth_text) if depth_text else None
        except ValueError:
            raise ValueError("min % and max depth must be numbers") from None
        return patterns[0], patterns[1], threshold, depth

    def apply_filter(self) -> None:
        """Prune the table: include/exclude recompute totals; threshold and depth hide rows."""
        error_label = self.query_one("#filter-error", Label)
        try:
            include, exclude, threshold, depth = self.filter_values()
        except ValueError as error:
            error_label.update(Text(str(error)))
            error_label.display = True
            return
        error_label.display = False
        shown = self.profile.filtered(include, exclude)
        mask = shown.shown(threshold, depth) if threshold or depth is not None else None
        self.query_one(ProfileTable).show_profile(shown, mask)
        self.query_one("#summary", Static).update(Text(self.summary_text(shown)))

    @on(Input.Submitted, "#search")
    def search_submitted(self, event: Input.Submitted) -> None:
        table = self.query_one(ProfileTable)
        if not event.value:
            table.matches = []
            table.refresh()
            return
        try:
            pattern = re.compile(event.value, re.IGNORECASE)
        except re.error:
            pattern = re.compile(re.escape(event.value), re.IGNORECASE)
        found = table.search(pattern)
        self.notify(f"{found} match(es) for {event.value!r}" + ("; n/N next/previous" if found > 1 else ""),
                    timeout=3, markup=False)
        table.focus()

    # ---- export, compare, log ------------------------------------------------------------------------------------
    def action_export(self) -> None:
        table = self.query_one(ProfileTable)
        view = "kernels" if table.show_kernels else "tree"
        suggested = f"{self.profile.path.stem}-{view}.csv"

        def write(path: str | None) -> None:
            if path:
                self.notify(f"Exported the {view} view to {path}", timeout=4, markup=False)

        self.app.push_screen(
            PathDialog(
                f"Export the {view} view (as filtered) to .csv, .json or .md",
                suggested,
                lambda path: write_export(
                    path,
                    export_text(table.profile, view=view, fmt=format_for_path(path), shown=table.shown,
                                sort_key=table.sort_key),
                ),
            ),
            write,
        )

    def action_compare(self) -> None:
        def compare(path: str):
            return diff_profiles(self.profile, load_profile(path))

        def show(diff) -> None:
            if diff is not None:
                self.app.push_screen(DiffScreen(diff))

        self.app.push_screen(PathDialog("Compare with another capture (B); this one is A", "", compare), show)

    def action_log(self) -> None:
        """Back to the run's output: the run screen underneath, or the run's stdout.log."""
        from .run_screen import RunScreen

        below = self.app.screen_stack[-2] if len(self.app.screen_stack) > 1 else None
        if isinstance(below, RunScreen) and below.result is self.run:
            self.app.pop_screen()
        else:
            self.app.push_screen(RunScreen(finished=self.run))


class PathDialog(ModalScreen):
    """Ask for a file path and act on it; a failure stays in the dialog as one line, the path still editable."""

    BINDINGS = [Binding("escape", "dismiss", "Cancel")]

    def __init__(self, prompt: str, value: str, act) -> None:
        super().__init__()
        self.prompt, self.value, self.act = prompt, value, act

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(Text(self.prompt))
            yield Input(self.value, id="path")
            yield Label("", id="path-error", classes="error")
        yield Footer()

    @on(Input.Submitted, "#path")
    def submitted(self, event: Input.Submitted) -> None:
        try:
            result = self.act(event.value.strip())
        except (OSError, ValueError, CaptureError, DiffError) as error:
            self.query_one("#path-error", Label).update(Text(str(error)))
            return
        self.dismiss(result if result is not None else event.value.strip())


class DiffScreen(Screen):
    """Two captures compared per kernel: time A, time B, delta, ratio; new and gone kernels; largest change first."""

    BINDINGS = [Binding("escape,b", "app.pop_screen", "Back"), Binding("f1", "app.help", "Help")]

    def __init__(self, diff) -> None:
        super().__init__()
        self.diff = diff

    def compose(self) -> ComposeResult:
        diff = self.diff
        yield Static(Text(f"A: {diff.a.path}\nB: {diff.b.path}"), id="summary")
        table = DataTable(id="diff", cursor_type="row", zebra_stripes=True)
        for column in diff_columns(diff.unit):
            table.add_column(column.title, width=column.width)
        table.add_column("kernel")
        table.add_row(*[Text(cell, justify="right") for cell in total_cells(diff)], Text("(total)"))
        for kernel in diff.kernels:
            cells = [Text(cell, justify="right") for cell in kernel_diff_cells(kernel, diff.unit)]
            table.add_row(*cells, Text(kernel.name))
        yield table
        yield Footer()


class HelpScreen(ModalScreen[None]):
    """The keys of the screen underneath, generated from its bindings so it cannot drift."""

    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close")]

    def __init__(self, keys: list[tuple[str, str]]) -> None:
        super().__init__()
        self.keys = keys

    def compose(self) -> ComposeResult:
        width = max(len(key) for key, _ in self.keys) if self.keys else 0
        lines = [f"{key.rjust(width)}  {action}" for key, action in self.keys]
        with VerticalScroll(id="help"):
            yield Static(Text("\n".join(lines)))
        yield Footer()

    def on_mount(self) -> None:
        help_box = self.query_one("#help")
        help_box.border_title, help_box.border_subtitle = "proton-tui keys", "Esc to close"
