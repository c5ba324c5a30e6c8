"""The Textual application: launcher, runs, and the capture viewer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ..hatchet import Profile, load_profile
from .footer import Footer
from .screens import HelpScreen, Opening, ProfileScreen

FRAME_WRITE_S = 0.02

if TYPE_CHECKING:  # the capture side is imported when first used: `view` starts without it
    from ..capture.session import RunResult
    from .launch_screen import LaunchScreen


def sample_capture() -> Path:
    """The capture shipped in the package: vecadd with Proton's triton hook on an H200 (Triton 3.6.0)."""
    from importlib.resources import files

    return Path(str(files("proton_tui") / "data" / "sample.hatchet"))


def run_label(number: int, run: RunResult) -> str:
    record = run.record
    params = record["params"]
    return (
        f"{number:>2}. {record['started_at'][11:]}  {run.verdict.outcome.value:<18} size={params['size']} "
        f"iters={params['iters']} backend={record['backend_requested']}→{record['backend_resolved']}  {run.run_dir}"
    )


class RunsScreen(Screen):
    """This session's runs, newest last; Enter reopens one."""

    BINDINGS = [Binding("escape,b", "dismiss", "Back"), Binding("f1", "app.help", "Help")]

    def compose(self) -> ComposeResult:
        runs = self.app.runs
        yield Static(Text(f"{len(runs)} run(s) this session" if runs else "No run yet this session."), id="summary")
        yield OptionList(*[Option(Text(run_label(i + 1, run)), id=str(i)) for i, run in enumerate(runs)])
        yield Footer()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        from .run_screen import RunScreen

        run = self.app.runs[int(event.option.id)]
        if run.profile is not None and not run.profile.is_empty:
            self.app.push_screen(ProfileScreen(run.profile, run=run))
        else:
            self.app.push_screen(RunScreen(finished=run))


class ProtonApp(App):
    """proton-tui: with a profile, the viewer; without, the capture launcher."""

    CSS_PATH = Path(__file__).with_name("proton_tui.tcss")
    TITLE = "proton-tui"
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", show=False, priority=True)]

    def __init__(self, profile: Profile | None = None, python: str | None = None, output: Path | None = None,
                 opening: Opening | None = None) -> None:
        """With `profile` (or `opening`, a capture it finishes loading once its first screen is up) the viewer;
        without, the launcher."""
        super().__init__()
        self.profile, self.opening = profile, opening
        self.python = python
        self.output = output
        self.runs: list[RunResult] = []
        self.load_error: str | None = None  # why `opening` failed; the app has then exited with code 2

    def on_mount(self) -> None:
        if self.profile is not None or self.opening is not None:
            self.push_screen(ProfileScreen(self.profile, opening=self.opening))
        else:
            self.action_new_capture()

    async def on_ready(self) -> None:
        """The first frame is out: a capture being opened says so there while its load finishes."""
        if self.opening is not None and isinstance(self.screen, ProfileScreen) and self.screen.profile is None:
            # Textual's writer thread puts the frame on the terminal, and the load holds the GIL for seconds on a
            # large capture: let the writer run first.
            await asyncio.sleep(FRAME_WRITE_S)
            await self.screen.finish_opening()

    def get_system_commands(self, screen: Screen):
        yield from super().get_system_commands(screen)
        yield SystemCommand("New capture", "Open the launch form", self.action_new_capture)
        yield SystemCommand(
            "Open sample capture", "vecadd on an H200, shipped with proton-tui", self.action_open_sample
        )
        yield SystemCommand("Runs of this session", "List and reopen this session's runs", self.action_show_runs)
        yield SystemCommand("Box check", "vecadd on every visible GPU at once, one row per GPU", self.action_box_check)
        yield SystemCommand("Box check on CPU", "Two Triton-interpreter runs, no GPU needed", self.action_box_check_cpu)
        yield SystemCommand("Keys", "Every key of this screen", self.action_help)

    def record_run(self, run: RunResult) -> None:
        self.runs.append(run)

    def on_launch_screen_run_requested(self, message: LaunchScreen.RunRequested) -> None:
        from .run_screen import RunScreen

        self.push_screen(RunScreen(message.params))

    def action_new_capture(self) -> None:
        from .launch_screen import LaunchScreen

        if not any(isinstance(screen, LaunchScreen) for screen in self.screen_stack):
            self.push_screen(LaunchScreen(self.python, self.output))
        else:
            while not isinstance(self.screen, LaunchScreen):
                self.pop_screen()

    def action_open_sample(self) -> None:
        self.push_screen(ProfileScreen(load_profile(sample_capture())))

    def action_box_check(self, cpu: bool = False) -> None:
        from .check_screen import CheckScreen

        self.push_screen(CheckScreen(self.python, self.output, cpu=cpu, jobs=2 if cpu else None))

    def action_box_check_cpu(self) -> None:
        self.action_box_check(cpu=True)

    def action_show_runs(self) -> None:
        self.push_screen(RunsScreen())

    def action_help(self) -> None:
        """Show every key of the current screen and its focused widget."""
        keys_by_action: dict[str, list[str]] = {}
        for active in self.screen.active_bindings.values():
            binding = active.binding
            keys = keys_by_action.setdefault(binding.description or binding.action, [])
            if (shown := self.get_key_display(binding)) not in keys:
                keys.append(shown)
        self.push_screen(HelpScreen([(" / ".join(keys), action) for action, keys in keys_by_action.items()]))
