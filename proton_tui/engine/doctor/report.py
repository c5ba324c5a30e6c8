"""What a doctor proved: each cell's result, the whole report with its verdict and exit code, and doctor.json's
record of it.

Exit codes (``DoctorReport.exit_code``): 0 every cell works as the version promises and no fact failed; 1 a cell
or a fact failed; 3 no GPU (profiling not checked) and nothing failed; 2, a usage error, is raised before anything
runs (ParamError, ProbeError)."""

from __future__ import annotations

import socket
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from proton_tui import JSON_SCHEMA, __version__
from proton_tui.engine.doctor.matrix import Cell
from proton_tui.engine.job import RowVerdict, row_verdict
from proton_tui.engine.probe import InterpreterInfo
from proton_tui.engine.rundir import STDOUT_LOG
from proton_tui.engine.session import RunResult
from proton_tui.records import CellRecord, DoctorRecord, Fact, InterpreterRecord
from proton_tui.view.formatting import counted

DOCTOR_JSON = "doctor.json"
NO_GPU_EXIT = 3


@dataclass
class CellResult:
    """A cell and what proved it (or "not run" for a refused one)."""

    cell: Cell
    proved: RowVerdict  # PASS, a run's outcome, wrong metric, not run, error, cancelled (or PENDING)
    ok: bool
    message: str = ""
    metric: str | None = None
    remedy: str | None = None
    run_dir: str | None = None
    wall_s: float | None = None
    run: RunResult | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.proved = row_verdict(self.proved)

    @property
    def cancelled(self) -> bool:
        return self.proved == RowVerdict.CANCELLED

    @property
    def failed(self) -> bool:
        """Proved not to work (a cell cancelled before it proved anything has not failed)."""
        return not self.ok and not self.cancelled

    @property
    def said(self) -> str:
        """What it proved and the message, without saying the outcome twice."""
        if not self.message or self.message.startswith(self.proved):
            return self.message or self.proved
        return f"{self.proved}: {self.message}"

    @property
    def log(self) -> str | None:
        return str(Path(self.run_dir) / STDOUT_LOG) if self.run_dir else None

    def to_record(self) -> CellRecord:
        cell = self.cell
        return CellRecord(cell.backend, cell.context, cell.data, cell.format, cell.mode, cell.expected, self.proved,
                          self.ok, cell.key, cell.kind, cell.resolved, cell.metric, list(cell.reasons), self.metric,
                          self.message, self.remedy, self.run_dir, self.log, self.wall_s)

    @classmethod
    def from_record(cls, record: CellRecord) -> CellResult:
        cell = Cell(record.backend, record.context, record.data, record.format, record.mode, record.expected,
                    record.expected_metric, tuple(record.reasons), record.backend_resolved, None, record.kind)
        return cls(cell, record.proved, record.ok, record.message or "", record.metric, record.remedy,
                   record.run_dir, record.wall_s)


def not_run(cell: Cell) -> CellResult:
    """A refused cell: as expected, the rules stop it before anything runs."""
    return CellResult(cell, RowVerdict.NOT_RUN, True, "refused: " + "; ".join(cell.reasons))


@dataclass
class DoctorReport:
    python: str
    interpreter: dict
    facts: list[Fact]
    results: list[CellResult]
    gpu: int | None
    doctor_dir: str | None = None
    cancelled: bool = False
    unwritten: list[str] = field(default_factory=list)  # a line for each file that could not be written whole
    host: str = field(default_factory=socket.gethostname)

    @property
    def has_gpu(self) -> bool:
        return self.gpu is not None

    @property
    def failed_facts(self) -> list[Fact]:
        return [fact for fact in self.facts if fact.state == "fail"]

    @property
    def failed(self) -> list[CellResult]:
        return [result for result in self.results if result.failed]

    @property
    def ran(self) -> list[CellResult]:
        return [result for result in self.results if result.cell.expected == "works"]

    @property
    def exit_code(self) -> int:
        """0 all works, 1 something failed or the doctor was cancelled before the end, 3 no GPU (profiling not
        checked) with nothing failed."""
        if self.failed or self.failed_facts or self.cancelled:
            return 1
        return 0 if self.has_gpu else NO_GPU_EXIT

    def verdict(self) -> str:
        """The report in one line."""
        triton = self.interpreter.get("triton_version")
        ran, failed = self.ran, self.failed
        refused = len(self.results) - len(ran)
        if self.cancelled:
            proved = sum(result.ok for result in ran)
            fails = f", {len(failed)} failed" if failed else ""
            return f"CANCELLED: {proved} of {counted(len(ran), 'cell')} proved before the cancel{fails}"
        if not self.has_gpu:
            cpu = next(iter(ran), None)
            check = ("the interpreter check passed" if cpu is not None and cpu.ok else
                     "the interpreter check FAILED" if cpu is not None else "the interpreter check was refused")
            facts = f"; {counted(len(self.failed_facts), 'fact')} failed" if self.failed_facts else ""
            return f"no GPU: profiling not checked; {check}{facts}"
        parts = []
        if failed:
            parts.append(f"{len(failed)} of {counted(len(ran), 'cell')} failed")
        if self.failed_facts:
            parts.append(f"{counted(len(self.failed_facts), 'fact')} failed")
        if parts:
            return "FAIL: " + ", ".join(parts)
        return (f"PASS: {len(ran)} of {counted(len(ran), 'cell')} work as Triton {triton} promises; "
                f"{refused} refused by its rules")

    def to_record(self) -> DoctorRecord:
        counts = Counter("refused" if r.cell.expected == "refused" else "passed" if r.ok else
                         "cancelled" if r.cancelled else "failed" for r in self.results)
        return DoctorRecord(self.python, list(self.facts), [result.to_record() for result in self.results],
                            JSON_SCHEMA, f"proton-tui {__version__}", self.interpreter, self.gpu, self.doctor_dir,
                            counts["passed"], counts["failed"], counts["refused"], counts["cancelled"],
                            self.cancelled, self.verdict(), self.exit_code, self.host)

    def to_json(self) -> dict:
        """doctor.json as a JSON object (what ``--json`` prints)."""
        return msgspec.to_builtins(self.to_record())

    @classmethod
    def from_record(cls, record: DoctorRecord) -> DoctorReport:
        """A report read back from its doctor.json (``records.read_doctor``): the TUI shows it as it ended."""
        return cls(record.python, dict(record.interpreter), list(record.facts),
                   [CellResult.from_record(cell) for cell in record.cells], record.gpu, record.doctor_dir,
                   record.cancelled, host=record.host)


def interpreter_record(info: InterpreterInfo) -> dict:
    return InterpreterRecord.of(info).to_json("python")
