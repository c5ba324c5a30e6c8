"""The run screen: the payload's output streamed live, a status line, then the verdict; its lifecycle (stop,
running, Cancel and Back) is the job screens' (`job.py`)."""

from __future__ import annotations

import asyncio
import time

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static

from proton_tui.console import printable
from proton_tui.engine.classify import Outcome
from proton_tui.engine.params import RunParams
from proton_tui.engine.probe import ProbeError
from proton_tui.engine.rundir import STDOUT_LOG
from proton_tui.engine.session import RunResult, execute_run, plan_run, refusal_text
from proton_tui.engine.sizes import interpreter_seconds
from proton_tui.records import OutputSignals
from proton_tui.tui.messages import RunFinished, StreamRead, ViewCapture
from proton_tui.tui.screens.job import JobScreen
from proton_tui.tui.widgets.batched_log import FLUSH_S, BatchedLog
from proton_tui.tui.widgets.key_bar import KeyBar
from proton_tui.tui.widgets.verdict import VerdictPanel


class RunScreen(JobScreen):
    """Runs one capture (or shows a finished one) with its output, status and verdict."""

    BINDINGS = [
        Binding("escape,x", "cancel", "Cancel run"),
        Binding("enter,v", "view", "View capture"),
        Binding("escape,q,b", "back", "Back"),
        Binding("f4", "app.show_runs", "Runs"),
    ]
    CANCEL_NOTICE = "Cancelling: ending the run's process group…"

    def __init__(self, params: RunParams | None = None, finished: RunResult | None = None, *,
                 interpreted: bool = False) -> None:
        super().__init__()
        self.params = params
        self.interpreted = interpreted  # through the Triton interpreter: the status shows the time it should take
        self.result = finished
        self.signals = finished.signals if finished is not None else OutputSignals()  # as the run engine read them
        self.started = time.monotonic()
        self.run_dir: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="run-head") as head:
            head.border_title = "Run"
            yield Static(id="run-status")  # wrapped where it is wider than the screen
            yield Static(id="run-command")
        yield VerdictPanel(id="verdict-panel")
        log = BatchedLog(id="run-log")
        log.border_title = "Output"
        yield log
        yield KeyBar()

    def on_mount(self) -> None:
        self.title = "proton-tui — run"
        self.query_one("#verdict-panel").display = False
        if self.result is None:
            self.flusher = self.set_interval(FLUSH_S, self.flush)
            self.capture()
        else:
            self.on_start(self.result.run_dir, self.result.command)  # what ran, as when it started
            log_path = self.result.run_dir / STDOUT_LOG
            lines = log_path.read_text(errors="replace").splitlines() if log_path.exists() else []
            self.on_lines(lines)
            self.flush()
            self.show_result()

    @property
    def result(self) -> RunResult | None:
        """The run's result: the job's report, once it ended."""
        return self.report

    @result.setter
    def result(self, result: RunResult | None) -> None:
        self.report = result

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "view":
            return self.result is not None and self.has_capture(self.result)
        return super().check_action(action, parameters)

    # ---- the run ------------------------------------------------------------------------------------------------
    @work(exclusive=True, group="capture", exit_on_error=False)
    async def capture(self) -> None:
        """Plan (probe off the UI thread) and execute; the outcome comes back as RunFinished."""
        try:
            plan = await asyncio.to_thread(plan_run, self.params)
        except (ProbeError, FileNotFoundError) as error:
            self.post_message(RunFinished(None, f"could not start: {error}"))
            return
        if refusal := refusal_text(plan.findings, for_form=True):  # worded for the form, as the findings are there
            self.post_message(RunFinished(None, refusal))
            return
        for finding in plan.findings:
            self.on_lines([f"proton-tui: warning: {finding.form_message}"])
        result = await execute_run(plan, self.on_lines, stop=self.stop, on_start=self.on_start,
                                   on_signals=lambda signals: self.post_message(StreamRead(signals)))
        self.post_message(RunFinished(result))

    def on_start(self, run_dir, command) -> None:
        self.run_dir = str(run_dir)
        self.query_one("#run-command", Static).update(Text(f"$ {command.display()}\n→ {run_dir}"))
        self.query_one(BatchedLog).border_subtitle = Text(printable(f"all of it in {run_dir / STDOUT_LOG}"))

    def on_lines(self, lines: list[str]) -> None:
        """Called with each batch of output; the log is written by the flush timer."""
        self.query_one(BatchedLog).add(lines)

    def on_stream_read(self, message: StreamRead) -> None:
        self.signals = message.signals

    def flush(self) -> None:
        self.query_one(BatchedLog).flush()
        self.query_one("#run-status", Static).update(Text(self.status_text()))

    def status_text(self) -> str:
        signals = self.result.signals if self.result is not None else self.signals
        if self.result is not None:
            state = self.result.verdict.outcome.value
            elapsed = self.result.process.wall_s
        elif self.problem is not None:
            state, elapsed = "not run", 0.0
        else:
            state, elapsed = "running", time.monotonic() - self.started
        parts = [f"{state}", f"{elapsed:.1f} s"]
        if state == "running" and self.params is not None and self.interpreted and not self.params.command:
            parts[1] += f" of about {interpreter_seconds(self.params.size, self.params.iters):,.0f} s"
        if signals.device:
            parts.append(f"device {signals.device}")
        if signals.max_abs_err is not None:
            parts.append(f"max_abs_err={signals.max_abs_err:.3e}")
        if signals.result and self.result is None:  # once finished, the state is the verdict
            parts.append(signals.result)
        return "  ·  ".join(parts)

    def on_run_finished(self, message: RunFinished) -> None:
        self.result, self.problem = message.result, message.problem
        if hasattr(self, "flusher"):
            self.flusher.stop()
        self.flush()
        self.refresh_bindings()
        self.show_result()
        if message.result is not None and message.result.profile is not None and not message.result.profile.is_empty:
            self.action_view()

    def show_result(self) -> None:
        """The verdict panel: its message and remedies; green on PASS."""
        if self.result is not None:
            verdict = self.result.verdict
            lines = [verdict.message] + [f"→ {hint}" for hint in verdict.hints]
            passed = verdict.outcome is Outcome.PASS
        else:
            lines, passed = [self.problem or ""], False
        self.query_one(VerdictPanel).show("\n".join(lines), passed)
        self.query_one("#run-status", Static).update(Text(self.status_text()))

    # ---- actions ------------------------------------------------------------------------------------------------
    @staticmethod
    def has_capture(result: RunResult) -> bool:
        """A capture to show: loaded and not empty, or (a run read back from its folder) still on disk."""
        if result.profile is not None:
            return not result.profile.is_empty
        path = result.command.capture_path
        return path is not None and path.is_file() and result.verdict.outcome is not Outcome.EMPTY_CAPTURE

    def action_view(self) -> None:
        result = self.result
        if result is None or not self.has_capture(result):
            return
        self.post_message(ViewCapture(result.profile, result))  # a run read back from its folder: opened by the app
