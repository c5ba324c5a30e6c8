"""Screens: the profile viewer and the help dialog."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Static

from ..capture.session import RunResult
from ..hatchet import Profile
from ..report import format_gbps, format_percent, format_value, header_line
from .profile_table import ProfileTable

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


class ProfileScreen(Screen):
    """A capture's header, its kernel-time table and the selected row's full name; with the run that made it."""

    BINDINGS = [
        Binding("q", "app.quit", "Quit"),
        Binding("l", "log", "Run log"),
        Binding("f4", "app.show_runs", "Runs"),
        Binding("f1,question_mark", "app.help", "Help"),
    ]

    def __init__(self, profile: Profile, run: RunResult | None = None) -> None:
        super().__init__()
        self.profile, self.run = profile, run

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        return (self.run is not None) or None if action == "log" else True

    def action_log(self) -> None:
        """Back to the run's output: the run screen underneath, or the run's stdout.log."""
        from .run_screen import RunScreen

        below = self.app.screen_stack[-2] if len(self.app.screen_stack) > 1 else None
        if isinstance(below, RunScreen) and below.result is self.run:
            self.app.pop_screen()
        else:
            self.app.push_screen(RunScreen(finished=self.run))

    def compose(self) -> ComposeResult:
        if self.run is not None:
            banner = Static(Text(run_banner(self.run)), id="run-banner")
            banner.set_class(self.run.verdict.passed, "pass")
            banner.set_class(not self.run.verdict.passed, "fail")
            yield banner
        yield Static(Text(header_line(self.profile)), id="summary")
        if self.profile.is_empty:
            yield Static(Text(EMPTY_EXPLANATION), id="empty")
        else:
            yield ProfileTable(self.profile, id="table")
            yield Static(id="detail")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"proton-tui — {self.profile.path.name}"

    def on_profile_table_highlighted(self, event: ProfileTable.Highlighted) -> None:
        self.query_one("#detail", Static).update(Text(self.detail_text(event)))

    def detail_text(self, event: ProfileTable.Highlighted) -> str:
        """The full name of the highlighted row and the numbers the table may have cut."""
        profile = self.profile
        if event.kernel is not None:
            kernel = event.kernel
            where = ", ".join(kernel.devices) or "no device"
            return f"{kernel.name}\n{format_value(kernel.value, profile.unit)} over {kernel.launches:,} launches on {where}"
        node = event.node
        parts = [format_value(profile.inclusive[node], profile.unit), f"{profile.launches[node]:,} launches"]
        if profile.devices[node]:
            parts.append(profile.devices[node])
        if profile.gbps(node) is not None:
            parts.append(f"{format_gbps(profile.gbps(node))} GB/s {format_percent(profile.peak_percent(node))} of peak")
        return f"{profile.path_of(node)}\n" + "  ·  ".join(parts)


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

    def on_mount(self) -> None:
        help_box = self.query_one("#help")
        help_box.border_title, help_box.border_subtitle = "proton-tui keys", "Esc to close"
