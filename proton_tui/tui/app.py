"""The Textual application: it owns the screens and routes the messages they post (a screen never pushes
another)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on
from textual.app import App, SystemCommand
from textual.containers import ScrollableContainer
from textual.screen import Screen

from proton_tui.console import printable
from proton_tui.hatchet import CaptureError, Profile, pending_capture
from proton_tui.tui.dialogs.help import HelpScreen
from proton_tui.tui.messages import LoadFailed, OpenCheck, OpenRun, RunFinished, ShowDiff, ShowRunLog, ViewCapture
from proton_tui.tui.opening import FRAME_WRITE_S, Opening
from proton_tui.tui.screens.profile import ProfileScreen
from proton_tui.tui.widgets.key_bar import HELP, QUIT

SCROLL_ACTIONS = {binding.action for binding in ScrollableContainer.BINDINGS}  # Textual's scrolling keys
ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
# How long a SIGTERM or SIGHUP waits for the app's event loop to take up its quit (an idle loop does at once); past
# it the thread is busy: the terminal is given back from another thread (`LinuxDriverQuickExit.give_back_now`).
SIGNAL_ANSWER_S = 0.5
# How long the app's own quit may take once its loop took it up, before the process ends without it (a terminal that
# stopped reading holds every write); a quit takes well under a second on the 2-core machine.
ENDING_S = 3.0
# How long giving the terminal back may wait for the terminal to take its writes, before the process ends all the same.
GIVE_BACK_S = 1.0

if TYPE_CHECKING:  # the capture side is imported when first used: `view` starts without it
    from proton_tui.engine.session import RunResult
    from proton_tui.tui.screens.form import FormScreen


def sample_capture() -> Path:
    """The capture shipped in the package: vecadd with Proton's triton hook on an H200 (Triton 3.6.0)."""
    from importlib.resources import files

    return Path(str(files("proton_tui") / "data" / "sample.hatchet"))


class ProtonApp(App):
    """proton-tui: with a profile, the viewer; without, the form of a new capture."""

    CSS_PATH = Path(__file__).with_name("proton_tui.tcss")
    TITLE = "proton-tui"
    BINDINGS = [QUIT, HELP]

    def __init__(self, profile: Profile | None = None, python: str | None = None, output: Path | None = None,
                 opening: Opening | None = None) -> None:
        """With `profile` (or `opening`, a capture it finishes loading once its first screen is up) the viewer;
        without, the form."""
        super().__init__()
        self.profile, self.opening = profile, opening
        self.python = python
        self.output = output
        self.runs: list[RunResult] = []
        self.load_error: str | None = None  # why `opening` failed; the app has then exited with code 2
        self.ended_by_signal: int | None = None
        self._ended = threading.Event()  # the app's run is over: an ending signal has nothing left to force
        self._abandoning = False

    def run_to_the_end(self) -> None:
        """Run until the user quits. A SIGTERM or SIGHUP ends the app as a quit does, so the terminal is given back
        as it was (main screen, cursor, no mouse reporting), then ends the process by that signal; whatever the app
        is computing (`on_ending_signal`)."""
        before = {signum: signal.signal(signum, self.on_ending_signal) for signum in ENDING_SIGNALS}
        try:
            self.run()
        finally:
            self._ended.set()
            for signum, handler in before.items():
                signal.signal(signum, handler)
        if self.ended_by_signal is not None:
            signal.signal(self.ended_by_signal, signal.SIG_DFL)
            os.kill(os.getpid(), self.ended_by_signal)
        if self.opening is not None and self.opening.loading():  # quit while the capture was read: end now
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(self.return_code or 0)
        if self.return_code and self.load_error is None:  # a defect ended it (its traceback printed): say it failed
            raise SystemExit(self.return_code)

    def get_driver_class(self):
        driver = super().get_driver_class()
        from textual.drivers.linux_driver import LinuxDriver

        if driver is LinuxDriver:
            from proton_tui.tui.driver import LinuxDriverQuickExit

            return LinuxDriverQuickExit
        return driver

    @property
    def abandoning_read(self) -> bool:
        """The app is ending while its capture is still read: the process ends as soon as the terminal is back."""
        return self._abandoning

    def exit(self, *args, **kwargs) -> None:
        if self.opening is not None:  # a capture still being read stops where it is: the process ends next
            self._abandoning = self.opening.loading()
            self.opening.cancel(abandon=True)
        super().exit(*args, **kwargs)

    def on_ending_signal(self, signum: int, frame=None) -> None:
        """SIGTERM or SIGHUP (Python runs this on the app's thread between two steps of whatever it computes): the
        app quits from its event loop. The process ends without that quit, with the status a death by the signal
        gives, when the loop does not take it up in SIGNAL_ANSWER_S (the thread is busy), when the quit does not end
        in ENDING_S (a terminal that stopped reading holds its writes), or on a second such signal."""
        if self.ended_by_signal is not None:  # the first one's end is under way: this one ends the process now
            self.end_now(self.ended_by_signal)
            return
        self.ended_by_signal = signum
        answered = threading.Event()

        def quit_from_the_loop() -> None:
            answered.set()
            self.exit(return_code=128 + signum)

        def end_if_unfinished() -> None:
            if not (answered.wait(SIGNAL_ANSWER_S) and self._ended.wait(ENDING_S)):
                self.end_now(signum)

        if self._loop is not None:
            self._loop.call_soon_threadsafe(quit_from_the_loop)
        threading.Thread(target=end_if_unfinished, name="signal-end", daemon=True).start()

    def end_now(self, signum: int) -> None:
        """Give the terminal back from another thread, waiting at most GIVE_BACK_S for the terminal to take the
        writes (its modes are restored either way), and end the process with the status of a death by `signum`."""
        driver = self._driver
        give_back = getattr(driver, "give_back_now", None)
        if give_back is not None:
            helper = threading.Thread(target=give_back, name="give-back", daemon=True)
            helper.start()
            helper.join(GIVE_BACK_S)
            driver.restore_terminal_modes()
        os._exit(128 + signum)

    def on_mount(self) -> None:
        if self.opening is not None and self.opening.rank_set:
            from proton_tui.tui.screens.ranks import RankSetScreen

            self.push_screen(RankSetScreen(self.opening))
        elif self.profile is not None or self.opening is not None:
            self.push_screen(ProfileScreen(self.profile, opening=self.opening))
        else:
            self.action_new_capture()

    async def on_ready(self) -> None:
        """The first frame is out: a capture being opened says so there while its load finishes."""
        if self.opening is not None and getattr(self.screen, "opening", None) is self.opening \
                and not self.opening.started:
            if self.opening.reading is None:  # a read under way already holds the interpreter by turns
                await asyncio.sleep(FRAME_WRITE_S)
            self.screen.finish_opening()

    def get_system_commands(self, screen: Screen):
        for command in super().get_system_commands(screen):
            if command.title != "Keys":  # Textual's own; the one below lists this screen's keys (and explains them)
                yield command
        yield SystemCommand("New capture", "Open the launch form", self.action_new_capture)
        yield SystemCommand(
            "Open sample capture", "vecadd on an H200, shipped with proton-tui", self.action_open_sample
        )
        yield SystemCommand("Runs", "Every run and box check of the output folder; reopen one", self.action_show_runs)
        yield SystemCommand("Box check", "vecadd on every visible GPU at once, one row per GPU", self.action_box_check)
        yield SystemCommand("Box check on CPU", "Two Triton-interpreter runs, no GPU needed", self.action_box_check_cpu)
        yield SystemCommand("Doctor", "Does Proton work here: the facts, and every configuration proved",
                            self.action_doctor)
        yield SystemCommand("Keys", "Every key of this screen, and what its controls mean", self.action_help)

    # ---- routing ------------------------------------------------------------------------------------------------
    def on_form_screen_run_requested(self, message: FormScreen.RunRequested) -> None:
        from proton_tui.engine.params import runs_interpreted
        from proton_tui.tui.screens.run import RunScreen

        vendor = message.info.gpu_vendor if message.info is not None else ""
        self.push_screen(RunScreen(message.params, interpreted=runs_interpreted(message.params, vendor)))

    @on(RunFinished)
    def record_run(self, message: RunFinished) -> None:
        if message.result is not None:
            self.runs.append(message.result)

    @on(ViewCapture)
    def view_capture(self, message: ViewCapture) -> None:
        if message.profile is not None:
            self.push_screen(ProfileScreen(message.profile, run=message.run))
        elif message.opening is not None:
            self.show_opening(message.opening, message.run)
        else:  # a run read back from its folder: its capture is opened now, with its record
            run = message.run
            self.open_in_viewer(run.command.capture_path, run.record, run)

    def open_in_viewer(self, path: Path, record=None, run: RunResult | None = None) -> None:
        """Open a capture in a new viewer, read on the reading thread (`Opening`) and completed by `record` (else
        the run.json beside it); a file that cannot be opened is said in one line, and nothing is pushed."""
        try:
            opening = Opening.of(pending_capture(path, record), fatal=False, owned=True)
        except CaptureError as error:
            self.notify(printable(str(error)), severity="error", markup=False)
            return
        self.show_opening(opening, run)

    def show_opening(self, opening: Opening, run: RunResult | None = None) -> None:
        """A new viewer that says the capture is being read, and reads it once it is on the terminal."""
        screen = ProfileScreen(None, run=run, opening=opening)
        self.push_screen(screen)
        self.call_after_refresh(screen.finish_opening)

    @on(ShowRunLog)
    def show_run_log(self, message: ShowRunLog) -> None:
        from proton_tui.tui.screens.run import RunScreen

        below = self.screen_stack[-2] if len(self.screen_stack) > 1 else None
        if isinstance(below, RunScreen) and below.result is message.run:
            self.pop_screen()
        else:
            self.push_screen(RunScreen(finished=message.run))

    @on(OpenRun)
    def open_run(self, message: OpenRun) -> None:
        from proton_tui.tui.screens.run import RunScreen

        run = message.run
        if run.profile is not None and not run.profile.is_empty:
            self.push_screen(ProfileScreen(run.profile, run=run))
        else:
            self.push_screen(RunScreen(finished=run))

    @on(OpenCheck)
    def open_check(self, message: OpenCheck) -> None:
        from proton_tui.tui.screens.check import CheckScreen

        self.push_screen(CheckScreen(finished=message.report))

    @on(LoadFailed)
    def load_failed(self, message: LoadFailed) -> None:
        self.load_error = message.reason
        self.exit(return_code=2)

    @on(ShowDiff)
    def show_diff(self, message: ShowDiff) -> None:
        from proton_tui.tui.screens.diff import DiffScreen

        self.push_screen(DiffScreen(message.diff, message.names))

    # ---- actions ------------------------------------------------------------------------------------------------
    def action_new_capture(self) -> None:
        from proton_tui.tui.screens.form import FormScreen

        if not any(isinstance(screen, FormScreen) for screen in self.screen_stack):
            self.push_screen(FormScreen(self.python, self.output))
            return
        from proton_tui.tui.screens.job import JobScreen

        busy = next((screen for screen in self.screen_stack if isinstance(screen, JobScreen) and screen.running), None)
        if busy is not None:  # its runs would end without a report: it is cancelled with its own key first
            self.notify(f"{busy.title or 'a screen'} is still running: cancel it there (Escape or x) or let it "
                        "finish first", severity="warning")
            return
        while not isinstance(self.screen, FormScreen):
            self.pop_screen()

    def action_open_sample(self) -> None:
        self.open_in_viewer(sample_capture())

    def action_box_check(self, cpu: bool = False) -> None:
        from proton_tui.tui.screens.check import CheckScreen

        self.push_screen(CheckScreen(self.workload_python(), self.output, cpu=cpu, jobs=2 if cpu else None))

    def action_box_check_cpu(self) -> None:
        self.action_box_check(cpu=True)

    def action_doctor(self) -> None:
        from proton_tui.tui.screens.doctor import DoctorScreen

        self.push_screen(DoctorScreen(self.workload_python(), self.output))

    def workload_python(self) -> str | None:
        """The interpreter the doctor and the box check examine: the one the nearest form shows, else the app's."""
        from proton_tui.tui.screens.form import FormScreen

        forms = [screen for screen in self.screen_stack if isinstance(screen, FormScreen)]
        return forms[-1].python if forms else self.python

    def action_show_runs(self) -> None:
        from proton_tui.engine.rundir import DEFAULT_OUTPUT
        from proton_tui.tui.screens.runs import RunsScreen

        self.push_screen(RunsScreen(self.runs, self.output or DEFAULT_OUTPUT))

    def action_help(self) -> None:
        """Show every key of the current screen and its focused widget."""
        keys_by_action: dict[str, list[str]] = {}
        for active in self.screen.active_bindings.values():
            if active.binding.action in SCROLL_ACTIONS and not isinstance(active.node, Screen):
                continue  # a scroll container's own keys (Textual's): not this screen's
            binding = active.binding
            keys = keys_by_action.setdefault(binding.description or binding.action, [])
            if (shown := self.get_key_display(binding)) not in keys:
                keys.append(shown)
        self.push_screen(HelpScreen([(" / ".join(keys), action) for action, keys in keys_by_action.items()],
                                    getattr(self.screen, "HELP_ABOUT", ())))
