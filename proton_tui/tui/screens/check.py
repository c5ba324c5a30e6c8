"""The box-check screen: the payload on every visible GPU at once (or N interpreter jobs with ``cpu``), one table
row per GPU as each finishes, the live output of all of them, and the verdict.

The work is ``proton_tui.check`` (``plan_check`` -> ``execute_check``); this screen only renders what it computed.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static

from proton_tui.console import printable
from proton_tui.engine.check import (
    MIN_FRACTION,
    TABLE_COLUMNS,
    CheckError,
    CheckPlan,
    CheckReport,
    CheckRow,
    CheckSlot,
    NoGpuError,
    capture_cell,
    cause_lines,
    execute_check,
    plan_check,
    report_notes,
    table_rows,
)
from proton_tui.engine.gpuhealth import detail_lines
from proton_tui.engine.params import ParamError
from proton_tui.engine.probe import ProbeError
from proton_tui.tui.screens.job import JobScreen
from proton_tui.tui.widgets.batched_log import FLUSH_S, BatchedLog
from proton_tui.tui.widgets.key_bar import KeyBar
from proton_tui.tui.widgets.rows import Rows
from proton_tui.tui.widgets.verdict import VerdictPanel
from proton_tui.view.formatting import counted

NUMERIC_COLUMNS = {"MAX_ABS_ERR", "KERNEL_US", "GB/S", "%PEAK"}
# the table's columns on screen, to fit 80 columns: a row's likely cause and capture are in its detail pane, and the
# interpreter measures no bandwidth (its status line says so)
IN_DETAIL = {"LIKELY_CAUSE", "CAPTURE"}
NO_BANDWIDTH = {"GB/S", "%PEAK"}


def shown_columns(cpu: bool) -> tuple[str, ...]:
    left_out = IN_DETAIL | (NO_BANDWIDTH if cpu else set())
    return tuple(column for column in TABLE_COLUMNS if column not in left_out)


class CheckPlanned(Message):
    """The check was planned: one table row per slot, before anything finishes."""

    def __init__(self, plan: CheckPlan) -> None:
        super().__init__()
        self.plan = plan


class CheckRowDone(Message):
    """One GPU's (or job's) run finished and was judged."""

    def __init__(self, row: CheckRow) -> None:
        super().__init__()
        self.row = row


class CheckFinished(Message):
    """The check ended: a report, or the reason it never started (no GPU, a bad option, a failed probe)."""

    def __init__(self, report: CheckReport | None, problem: str | None = None, no_gpu: bool = False) -> None:
        super().__init__()
        self.report, self.problem, self.no_gpu = report, problem, no_gpu


class CheckScreen(JobScreen):
    """Runs a box check and shows it: a status line, one row per GPU, the live output, and the result."""

    BINDINGS = [
        Binding("escape,x", "cancel", "Cancel check"),
        Binding("escape,q,b", "back", "Back"),
        Binding("c", "cpu_check", "CPU check instead"),
    ]
    CANCEL_NOTICE = "Cancelling: ending every run's process group…"

    def __init__(self, python: str | None = None, output: Path | None = None, cpu: bool = False,
                 profile: bool | None = None, *, size: str | int | None = None, iters: str | int | None = None,
                 jobs: str | int | None = None, gpus: str | None = None, min_fraction: str | float = MIN_FRACTION,
                 timeout: str | float | None = None, finished: CheckReport | None = None) -> None:
        """``profile`` None means the CLI's default: a capture per GPU, none with ``cpu``. ``size``, ``iters``,
        ``jobs`` (``cpu`` only), ``gpus``, ``min_fraction`` and ``timeout`` are ``plan_check``'s options; None
        keeps its defaults. ``finished``: a check read back from its folder, shown as it ended (nothing runs)."""
        super().__init__()
        self.finished = finished
        if finished is not None:
            cpu, profile = finished.cpu, finished.profile
        self.python, self.output, self.cpu = python, output, cpu
        self.profile = (not cpu) if profile is None else profile
        self.options = {"size": size, "iters": iters, "jobs": jobs, "gpus": gpus, "min_fraction": min_fraction}
        if timeout is not None:
            self.options["timeout"] = timeout
        self.plan: CheckPlan | None = None
        self.report: CheckReport | None = None
        self.no_gpu = False
        self.rows: dict[str, CheckRow] = {}  # by slot label, as each run finishes
        self.check_dir: str | None = None
        self.started = time.monotonic()
        self.elapsed: float | None = None  # frozen when the check ends

    def compose(self) -> ComposeResult:
        yield Static(id="check-status")  # wrapped where it is wider than the screen
        table = Rows(id="check-table", cursor_type="row", zebra_stripes=True)
        table.border_title = "One row per interpreter job" if self.cpu else "One row per GPU"
        yield table
        detail = VerticalScroll(Static(id="check-detail-text"), id="check-detail")
        detail.display = False  # GPU checks only, once a row has readings or the check says why it has none
        yield detail
        yield VerdictPanel(id="check-result")
        log = BatchedLog(id="check-log")
        log.border_title = "Output, each line marked with its " + ("job" if self.cpu else "GPU")
        yield log
        yield KeyBar()

    def on_mount(self) -> None:
        self.title = "proton-tui — box check" + (" (CPU, Triton interpreter)" if self.cpu else "")
        table = self.query_one("#check-table", DataTable)
        for column in shown_columns(self.cpu):
            table.add_column(column, key=column)
        self.query_one("#check-result").display = False
        self.flusher = self.set_interval(FLUSH_S, self.flush)
        self.flush()
        if self.finished is None:
            self.run_check()
            return
        for row in self.finished.rows:  # as its runs were planned, then its end
            self.add_row(row.label, row.name, "")
        self.check_dir = self.finished.check_dir
        self.post_message(CheckFinished(self.finished))

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "cpu_check":
            return self.no_gpu  # offered only after "no GPU"; hidden otherwise
        return super().check_action(action, parameters)

    # ---- the check ----------------------------------------------------------------------------------------------
    @work(exclusive=True, group="check", exit_on_error=False)
    async def run_check(self) -> None:
        """Plan (the probe blocks: off the event loop), then run every slot; results come back as messages."""
        options = {key: value for key, value in self.options.items() if value is not None}
        if self.output is not None:
            options["output"] = self.output
        try:
            plan = await asyncio.to_thread(plan_check, self.python, cpu=self.cpu, profile=self.profile, **options)
        except NoGpuError as error:
            self.post_message(CheckFinished(None, str(error), no_gpu=True))
            return
        except CheckError as error:
            reason = ("refused configuration: " + "; ".join(f.form_message for f in error.findings)
                      if error.findings else str(error))  # the rules' advice in the form's words
            self.post_message(CheckFinished(None, f"could not start: {reason}"))
            return
        except (ParamError, ProbeError, FileNotFoundError) as error:
            self.post_message(CheckFinished(None, f"could not start: {error}"))
            return
        if self.stop.is_set():  # cancelled while the interpreter was probed: start nothing
            self.post_message(CheckFinished(None, "cancelled before any run started"))
            return
        self.post_message(CheckPlanned(plan))
        for finding in plan.findings:
            self.query_one(BatchedLog).add([f"proton-tui: warning: {finding.form_message}"])
        try:
            report = await execute_check(plan, on_lines=self.on_lines, on_start=self.on_start,
                                         on_done=lambda row: self.post_message(CheckRowDone(row)), stop=self.stop)
        except Exception as error:  # noqa: BLE001 - shown, not raised: the screen must stay usable
            self.post_message(CheckFinished(None, f"the check failed: {type(error).__name__}: {error}"))
            return
        self.post_message(CheckFinished(report))

    def on_start(self, slot: CheckSlot, run_dir: Path, command) -> None:
        self.check_dir = str(run_dir.parent)
        self.query_one(BatchedLog).add([f"[{slot.label}] $ {command.display()}"])

    def on_lines(self, slot: CheckSlot, lines: list[str]) -> None:
        """Called with each batch of a run's output; the log is written by the flush timer."""
        self.query_one(BatchedLog).add(f"[{slot.label}] {line}" for line in lines)

    def flush(self) -> None:
        self.query_one(BatchedLog).flush()
        self.query_one("#check-status", Static).update(Text(self.status_text()))

    # ---- rendering ----------------------------------------------------------------------------------------------
    def show_rows(self, report: CheckReport) -> None:
        """Rows formatted by the core (``table_rows``) exactly as the CLI prints them; failed rows red, flagged
        rows yellow. Before the whole report exists a finished row is shown alone (its flag needs every row)."""
        table = self.query_one("#check-table", DataTable)
        for row, cells in zip(report.rows, table_rows(report)):
            style = "bold red" if not row.passed else "bold yellow" if row.flagged else ""
            for column, cell in zip(TABLE_COLUMNS, cells):
                if column not in table.columns:
                    continue
                justify = "right" if column in NUMERIC_COLUMNS else "left"
                table.update_cell(row.label, column, Text(cell, style=style, justify=justify), update_width=True)

    def status_text(self) -> str:
        elapsed = self.elapsed if self.elapsed is not None else time.monotonic() - self.started
        what = "run" if self.cpu else "GPU"
        if self.problem is not None:
            return "not run  ·  " + ("no GPU visible to the interpreter" if self.no_gpu else "see below")
        report = self.report
        if report is None:
            if self.plan is None:
                return f"planning  ·  {elapsed:.1f} s  ·  probing the interpreter"
            state = "cancelling" if self.stop.is_set() else "running"
            return f"{state}  ·  {elapsed:.1f} s  ·  {len(self.rows)} of {counted(len(self.plan.slots), what)} done"
        count = len(report.rows)
        if report.cancelled:
            verdict = f"CANCELLED  ·  {sum(row.passed for row in report.rows)} of {count} passed before the cancel"
        elif report.exit_code == 0:
            verdict = f"PASS  ·  {'the' if count == 1 else 'all'} {counted(count, what)} passed, none flagged"
        else:
            verdict = f"FAIL  ·  {len(report.failed)} of {count} failed, {len(report.flagged)} flagged"
        parts = [verdict] if self.finished is not None else [verdict, f"{elapsed:.1f} s"]  # stored: no wall time
        if report.cpu:
            parts.append("bandwidth not measured (Triton interpreter)")
        elif report.median_gbps is not None:
            parts.append(f"median {report.median_gbps:.1f} GB/s, flagged below {report.threshold_gbps:.1f} GB/s "
                         f"({report.min_fraction:.2f} x median)")
        else:
            parts.append("no bandwidth measured")
        return "  ·  ".join(parts)

    def result_lines(self) -> list[str]:
        """The core's notes under its table (sources, failures, flags, result, folder), or the problem."""
        if self.report is None:
            lines = [self.problem or ""]
            if self.no_gpu:
                lines.append("→ press c to run the interpreter check on the CPU instead (no GPU, no profile)")
            return lines
        return report_notes(self.report)  # the table is already on screen

    def detail_text(self, label: str | None) -> tuple[str, str] | None:
        """The detail pane's title and text for the row ``label``: its likely causes, then its readings in words
        (``gpuhealth.detail_lines``), then its capture; None when there is nothing to show (a row not finished, a
        CPU check's row without a capture)."""
        row = self.rows.get(label) if label is not None else None
        if row is None:
            return None
        capture = [f"capture: {printable(capture_cell(row, self.check_dir))}"] if row.capture else []
        if self.cpu:
            return (f"{row.label}: its capture", "\n".join(capture)) if capture else None
        note = self.report.readings_note if self.report is not None else None
        lines = cause_lines(row)
        if row.readings is not None:
            lines += detail_lines(row.readings)
        elif note is not None:
            lines.append(f"GPU readings: not read: {printable(note)}")
        lines += capture
        return (f"GPU {row.label}: what the GPU said around its run", "\n".join(lines)) if lines else None

    def show_detail(self, label: str | None = None) -> None:
        """Fill the detail pane for ``label`` (default: the row under the cursor)."""
        if label is None:
            table = self.query_one("#check-table", DataTable)
            if table.row_count:
                label = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        shown = self.detail_text(label)
        pane = self.query_one("#check-detail", VerticalScroll)
        pane.display = shown is not None
        if shown is not None:
            pane.border_title = shown[0]
            self.query_one("#check-detail-text", Static).update(Text(shown[1]))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_detail(event.row_key.value)

    # ---- message handlers ---------------------------------------------------------------------------------------
    def on_check_planned(self, message: CheckPlanned) -> None:
        self.plan = message.plan
        for slot in message.plan.slots:
            self.add_row(slot.label, slot.name, "running")
        self.flush()

    def add_row(self, label: str, name: str, state: str) -> None:
        """A GPU's (or job's) row before its result: its label, name and state, the rest empty."""
        cells = (label, printable(name), state, *("" for _ in shown_columns(self.cpu)[3:]))
        self.query_one("#check-table", DataTable).add_row(*(Text(cell) for cell in cells), key=label)

    def on_check_row_done(self, message: CheckRowDone) -> None:
        self.rows[message.row.label] = message.row
        plan = self.plan
        if plan is not None:
            self.show_rows(CheckReport([message.row], plan.cpu, plan.info.python, plan.size, plan.iters, plan.profile,
                                     plan.min_fraction, check_dir=self.check_dir))
        self.show_detail()
        self.flush()

    def on_check_finished(self, message: CheckFinished) -> None:
        self.report, self.problem, self.no_gpu = message.report, message.problem, message.no_gpu
        self.elapsed = time.monotonic() - self.started
        self.flusher.stop()
        if message.report is not None:
            if message.report.check_dir:
                self.check_dir = message.report.check_dir
            self.rows = {row.label: row for row in message.report.rows}
            self.show_rows(message.report)  # flags, the median and the likely causes are known now
            flagged = [index for index, row in enumerate(message.report.rows) if row.flagged]
            if flagged:  # the first slow GPU, with its likely cause in the detail pane
                self.query_one("#check-table", DataTable).move_cursor(row=flagged[0])
            self.show_detail()
        passed = message.report is not None and message.report.exit_code == 0
        self.query_one(VerdictPanel).show("\n".join(self.result_lines()), passed)
        self.flush()
        self.refresh_bindings()

    # ---- actions ------------------------------------------------------------------------------------------------
    def cancelling(self) -> None:
        self.flush()

    def action_cpu_check(self) -> None:
        """After 'no GPU': the same check through the Triton interpreter, in place of this screen."""
        if self.no_gpu:
            self.app.switch_screen(CheckScreen(self.python, self.output, cpu=True, profile=False))
