"""The doctor screen: the facts that decide whether Proton works here, then one table row per cell of the matrix
(expected from the version's rules, proved by a short capture), filled in as each cell finishes; a failed cell's
remedy under the table and its log one key away.

The work is ``proton_tui.engine.doctor`` (``plan_doctor`` -> ``execute_doctor``); this screen renders what it
computed.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static

from proton_tui.console import printable
from proton_tui.engine.doctor import (
    TABLE_COLUMNS,
    CellResult,
    DoctorPlan,
    DoctorReport,
    Fact,
    at_once,
    cell_cells,
    execute_doctor,
    not_run,
    plan_doctor,
    read_cell_run,
)
from proton_tui.engine.params import ParamError
from proton_tui.engine.probe import ProbeError
from proton_tui.engine.rules import tui_words
from proton_tui.tui.messages import ShowRunLog
from proton_tui.tui.screens.job import JobScreen
from proton_tui.tui.widgets.key_bar import KeyBar
from proton_tui.tui.widgets.rows import Rows
from proton_tui.tui.widgets.summary import Summary
from proton_tui.tui.widgets.verdict import VerdictPanel
from proton_tui.view.formatting import counted

STATE_STYLES = {"ok": ("ok", "green"), "warn": ("WARN", "bold yellow"), "fail": ("FAIL", "bold red"),
                "info": ("info", "dim")}
TICK_S = 0.25  # how often the elapsed time in the status line is redrawn while cells run


class DoctorPlanned(Message):
    """The facts are gathered and the cells planned: a row per cell before any finishes."""

    def __init__(self, plan: DoctorPlan) -> None:
        super().__init__()
        self.plan = plan


class DoctorCellDone(Message):
    """One cell was proved (or, refused by the rules, not run)."""

    def __init__(self, result: CellResult) -> None:
        super().__init__()
        self.result = result


class DoctorFinished(Message):
    """The doctor ended: a report, or the reason it never started (a bad option, a failed probe)."""

    def __init__(self, report: DoctorReport | None, problem: str | None = None) -> None:
        super().__init__()
        self.report, self.problem = report, problem


class DoctorScreen(JobScreen):
    """Runs ``proton-tui doctor`` and shows it: status, facts, the matrix, the selected cell, the verdict."""

    AUTO_FOCUS = "#doctor-table"  # the facts above it are one Tab back

    BINDINGS = [
        Binding("escape,x", "cancel", "Cancel"),
        Binding("escape,q,b", "back", "Back"),
        Binding("enter,l", "open_log", "Cell's log"),
    ]

    CANCEL_NOTICE = "Cancelling: ending every cell's process group…"
    HELP_ABOUT = (
        ("facts", "what decides whether Proton works here; WARN and FAIL come with their remedy (→)"),
        ("a cell", "one backend × context × data/format × mode that the interpreter's Triton offers"),
        ("EXPECTED", "from the version's rules: the metric the capture must hold (time (ns), or cycles for "
                     "instrumentation), or refused (not run: the reason is under the table)"),
        ("PROVED", "a short capture through the run engine: PASS with the metric found, or how it failed"),
        ("Enter", "the highlighted cell's output and verdict, as the run screen shows a run"),
    )

    def __init__(self, python: str | None = None, output: Path | None = None, *, jobs: str | int | None = None,
                 gpu: str | int = 0, backend: str | None = None, context: str | None = None,
                 mode: str | None = None, finished: DoctorReport | None = None) -> None:
        """``jobs``, ``gpu``, ``backend``, ``context`` and ``mode`` are ``plan_doctor``'s options. ``finished``: a
        report read back from its doctor.json, shown as it ended (nothing runs)."""
        super().__init__()
        self.python, self.output, self.finished = python, output, finished
        self.options = {"jobs": jobs, "gpu": gpu, "backend": backend, "context": context, "mode": mode}
        self.plan: DoctorPlan | None = None
        self.report: DoctorReport | None = None
        self.results: dict[str, CellResult] = {}
        self.started = time.monotonic()
        self.elapsed: float | None = None

    def compose(self) -> ComposeResult:
        yield Summary(id="doctor-status")
        facts = VerticalScroll(Static(Text("Probing the interpreter, reading the host…"), id="doctor-facts"),
                               id="doctor-facts-pane")  # focusable: every fact reachable by its keys
        facts.border_title = "Environment"
        yield facts
        table = Rows(id="doctor-table", cursor_type="row", zebra_stripes=True)
        table.border_title = "Expected (the version's rules) against proved (a capture each)"
        yield table
        yield VerticalScroll(Static(id="doctor-detail"), id="doctor-detail-pane")
        yield VerdictPanel(id="doctor-result")
        yield KeyBar()

    def on_mount(self) -> None:
        self.title = "proton-tui — doctor"
        table = self.query_one("#doctor-table", DataTable)
        for column in TABLE_COLUMNS:
            table.add_column(column, key=column)
        self.query_one("#doctor-result").display = False
        self.ticker = self.set_interval(TICK_S, self.show_status)
        self.show_status()
        if self.finished is None:
            self.run_doctor()
            return
        self.show_facts(self.finished.facts)
        for result in sorted(self.finished.results, key=lambda result: result.cell.expected == "refused"):
            self.add_row(result)
        self.post_message(DoctorFinished(self.finished))

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "open_log":
            result = self.highlighted()
            return result is not None and result.run_dir is not None
        return super().check_action(action, parameters)

    # ---- the doctor ---------------------------------------------------------------------------------------------
    @work(exclusive=True, group="doctor", exit_on_error=False)
    async def run_doctor(self) -> None:
        """Plan (the probes block: off the event loop), then prove every cell; results come back as messages."""
        options = {key: value for key, value in self.options.items() if value is not None}
        if self.output is not None:
            options["output"] = self.output
        python = self.python
        if python is None:
            import sys

            python = sys.executable
        try:
            plan = await asyncio.to_thread(plan_doctor, python, **options)
        except (ParamError, ProbeError, OSError) as error:
            self.post_message(DoctorFinished(None, f"could not start: {error}"))
            return
        except Exception as error:  # noqa: BLE001 - shown, not raised: the screen must stay usable
            self.post_message(DoctorFinished(None, f"could not start: {type(error).__name__}: {error}"))
            return
        if self.stop.is_set():
            self.post_message(DoctorFinished(None, "cancelled before any cell ran"))
            return
        self.post_message(DoctorPlanned(plan))
        try:
            report = await execute_doctor(plan, on_done=lambda result: self.post_message(DoctorCellDone(result)),
                                          stop=self.stop)
        except Exception as error:  # noqa: BLE001 - shown, not raised: the screen must stay usable
            self.post_message(DoctorFinished(None, f"the doctor failed: {type(error).__name__}: {error}"))
            return
        self.post_message(DoctorFinished(report))

    # ---- rendering ----------------------------------------------------------------------------------------------
    def show_facts(self, facts: list[Fact]) -> None:
        """A fact a line, its value (and remedy) wrapped in its own column."""
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column(no_wrap=True, style="bold")
        grid.add_column(overflow="fold")
        for fact in facts:
            word, style = STATE_STYLES.get(fact.state, (fact.state, ""))
            grid.add_row(Text(word, style=style), Text(printable(fact.name)), Text(printable(fact.value)))
            if fact.remedy:
                grid.add_row("", "", Text("→ " + printable(tui_words(fact.remedy)), style="italic"))
        self.query_one("#doctor-facts", Static).update(grid)

    def add_row(self, result: CellResult) -> None:
        cells = cell_cells(result)
        if result.proved == "" and result.cell.expected == "works":
            cells = (*cells[:-1], "queued")
        self.query_one("#doctor-table", DataTable).add_row(*self.styled(result, cells), key=result.cell.key)

    @staticmethod
    def styled(result: CellResult, cells: tuple[str, ...]) -> list[Text]:
        refused = result.cell.expected == "refused"
        style = "dim" if refused else "bold red" if result.failed else ""
        texts = [Text(printable(cell), style=style) for cell in cells]
        if result.proved.startswith("PASS"):
            texts[-1].stylize("green")
        return texts

    def show_result(self, result: CellResult) -> None:
        table = self.query_one("#doctor-table", DataTable)
        for column, text in zip(TABLE_COLUMNS, self.styled(result, cell_cells(result))):
            table.update_cell(result.cell.key, column, text, update_width=True)

    def highlighted(self) -> CellResult | None:
        table = self.query_one("#doctor-table", DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self.results.get(key)

    def show_detail(self) -> None:
        """The highlighted cell: why it is refused, or what it proved and the remedy when it failed."""
        result = self.highlighted()
        detail = self.query_one("#doctor-detail", Static)
        if result is None:
            detail.update("")
            return
        text = Text(printable(result.cell.key), style="bold")
        if result.cell.expected == "refused":
            text.append(" refused by the rules, not run: " + printable(tui_words("; ".join(result.cell.reasons))))
        elif result.proved:
            text.append(f" {printable(result.said)}")
            if result.remedy:
                text.append(f"\n→ {printable(tui_words(result.remedy))}", style="italic")
            if result.run_dir:
                text.append("  (Enter: its log)", style="dim")
        detail.update(text)

    def show_status(self) -> None:
        self.query_one("#doctor-status", Summary).update(self.status_text())

    def status_text(self) -> str:
        elapsed = self.elapsed if self.elapsed is not None else time.monotonic() - self.started
        if self.problem is not None:
            return "not run  ·  see below"
        if self.report is not None:
            parts = [self.report.verdict()]
            if self.finished is None:
                parts.append(f"{elapsed:.1f} s")
            return "  ·  ".join(parts)
        if self.plan is None:
            return f"planning  ·  {elapsed:.1f} s  ·  probing the interpreter and its libraries"
        running = [cell for cell in self.plan.cells if cell.expected == "works"]
        done = sum(1 for key, result in self.results.items() if result.proved and result.cell.expected == "works")
        failed = sum(1 for result in self.results.values() if result.failed)
        state = "cancelling" if self.stop.is_set() else "running"
        where = f"GPU {self.plan.gpu}" if self.plan.has_gpu else "the Triton interpreter (no GPU)"
        together = at_once(self.plan.jobs, len(running))
        return (f"{state}  ·  {elapsed:.1f} s  ·  {done} of {counted(len(running), 'cell')} proved on {where}"
                + (f", {together}" if together else "") + f"  ·  {failed} failed")

    # ---- message handlers ---------------------------------------------------------------------------------------
    def on_doctor_planned(self, message: DoctorPlanned) -> None:
        plan = self.plan = message.plan
        self.show_facts(list(plan.facts))
        ordered = sorted(plan.cells, key=lambda cell: cell.expected == "refused")  # the cells that run first
        for cell in ordered:
            result = CellResult(cell, "", True) if cell.expected == "works" else not_run(cell)
            self.results[cell.key] = result
            self.add_row(result)
        self.show_status()
        self.show_detail()

    def on_doctor_cell_done(self, message: DoctorCellDone) -> None:
        result = message.result
        self.results[result.cell.key] = result
        if result.cell.expected == "works":
            self.show_result(result)
        self.show_status()
        self.show_detail()
        self.refresh_bindings()

    def on_doctor_finished(self, message: DoctorFinished) -> None:
        self.report, self.problem = message.report, message.problem
        self.elapsed = time.monotonic() - self.started
        self.ticker.stop()
        report = message.report
        if report is not None:
            self.results = {result.cell.key: result for result in report.results}
            for result in report.results:
                self.show_result(result)
            lines = []  # the verdict itself is the status line's
            if not report.has_gpu:
                lines.append("Proton profiles only on a GPU: the GPU fact above says why none is seen, and what to do")
            failed = report.failed
            if failed:
                lines.append(f"{counted(len(failed), 'cell')} failed: highlight one for its remedy, Enter for its log")
            lines += [f"{fact.name}: {fact.value}" + (f" → {fact.remedy}" if fact.remedy else "")
                      for fact in report.failed_facts]
            if report.doctor_dir:
                lines.append(f"doctor folder: {report.doctor_dir}")
            passed = not failed and not report.failed_facts and not report.cancelled
        else:
            lines, passed = [message.problem or ""], False
        self.query_one(VerdictPanel).show("\n".join(printable(line) for line in lines), passed)
        self.show_status()
        self.show_detail()
        self.refresh_bindings()

    @on(DataTable.RowHighlighted, "#doctor-table")
    def row_highlighted(self) -> None:
        self.show_detail()
        self.refresh_bindings()

    @on(DataTable.RowSelected, "#doctor-table")
    def row_selected(self) -> None:
        self.action_open_log()

    # ---- actions ------------------------------------------------------------------------------------------------
    def cancelling(self) -> None:
        self.show_status()

    def action_open_log(self) -> None:
        result = self.highlighted()
        if result is None or result.run_dir is None:
            return
        run = read_cell_run(result)
        if run is None:
            self.notify(printable(f"{result.run_dir}: its run.json cannot be read"), severity="error", markup=False)
            return
        self.post_message(ShowRunLog(run))
