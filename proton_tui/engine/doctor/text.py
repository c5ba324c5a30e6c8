"""The doctor's report in words: the facts, the matrix (or the CPU check), refusals, failures, the verdict; and
the table's cells the TUI shows."""

from __future__ import annotations

from collections import Counter

from proton_tui.console import printable
from proton_tui.engine.doctor.report import CellResult, DoctorReport
from proton_tui.engine.job import RowVerdict
from proton_tui.engine.sizes import DOCTOR_ITERS, DOCTOR_SIZE
from proton_tui.records import Fact
from proton_tui.view.formatting import aligned_table, counted

TABLE_COLUMNS = ("BACKEND", "CONTEXT", "FORMAT", "MODE", "EXPECTED", "PROVED")  # the format says the data
STATE_WORDS = {"ok": "ok", "warn": "WARN", "fail": "FAIL", "info": "info"}


def table_rows(results: list[CellResult]) -> list[tuple[str, ...]]:
    """The cells that run, as plain strings: the table the CLI prints and the TUI shows."""
    return [cell_cells(result) for result in results]


def cell_cells(result: CellResult) -> tuple[str, ...]:
    cell = result.cell
    proved = "-" if result.proved == RowVerdict.NOT_RUN else str(result.proved)
    if result.proved == RowVerdict.PASS and result.metric:
        proved = f"PASS {result.metric}"
    return (cell.backend_text, cell.context, cell.format, cell.mode, cell.expected_text, proved)


def at_once(jobs: int, running: int) -> str:
    """How many cells run together, said only where more than one can: never more than there are."""
    return f"{min(jobs, running)} at once" if running > 1 else ""


def plan_line(running: int, total: int, jobs: int, where: str) -> str:
    """The doctor's first line: how many cells run, where, and how many together."""
    if running == 0:
        return f"doctor: no cell to run on {where}: the rules refuse {'it' if total == 1 else f'all {total}'}"
    cells = counted(running, "cell") if running == total else f"{running} of {counted(total, 'cell')}"
    together = at_once(jobs, running)
    return f"doctor: {cells} to run on {where}" + (f", {together}" if together else "")


def fact_lines(facts: list[Fact]) -> list[str]:
    width = max((len(fact.name) for fact in facts), default=0)
    lines = []
    for fact in facts:
        lines.append(f"  {STATE_WORDS.get(fact.state, fact.state):<4}  {fact.name:<{width}}  {fact.value}")
        if fact.remedy:
            lines.append(f"  {'':<4}  {'':<{width}}  → {fact.remedy}")
    return lines


def refusal_lines(results: list[CellResult]) -> list[str]:
    """Each reason the rules gave, once, with how many cells it refused."""
    reasons = Counter(reason for result in results if result.cell.expected == "refused"
                      for reason in result.cell.reasons)
    return [f"  {counted(count, 'cell')}: {reason}" for reason, count in reasons.items()]


def failure_lines(results: list[CellResult]) -> list[str]:
    lines = []
    for result in results:
        if result.failed:
            lines.append(f"  {result.cell.key}: {result.said}")
            if result.remedy:
                lines.append(f"    → {result.remedy}")
            if result.log:
                lines.append(f"    log: {result.log}")
    return lines


def format_report(report: DoctorReport) -> str:
    """The plain-text report: the facts, the matrix (or the CPU check), refusals, failures, the verdict."""
    info = report.interpreter
    lines = [f"doctor: {report.python}", "", "environment", *fact_lines(report.facts), ""]
    running = [result for result in report.results if result.cell.expected == "works"]
    if report.has_gpu:
        lines.append(f"captures on GPU {report.gpu} ({DOCTOR_SIZE} elements × {DOCTOR_ITERS + 1} launches each), "
                     f"expected from Triton {info.get('triton_version')}'s rules")
        lines += aligned_table([TABLE_COLUMNS, *table_rows(running)])
        if refused := refusal_lines(report.results):
            lines += ["", f"refused by the rules for Triton {info.get('triton_version')} (not run):", *refused]
    else:
        lines.append("no GPU: profiling not checked")
        for result in report.results:
            lines.append("CPU check (the payload through the Triton interpreter, no profile): "
                         + (result.proved if result.ok else result.said))
    if failures := failure_lines(report.results):
        lines += ["", "failures:", *failures]
    lines += ["", f"doctor: {report.verdict()}"]
    if report.doctor_dir:
        lines.append(f"doctor folder: {report.doctor_dir}")
    return "\n".join(printable(line) for line in lines) + "\n"  # paths and library errors are data
