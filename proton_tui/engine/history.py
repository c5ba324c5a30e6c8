"""The runs and box checks an output folder holds (`proton-runs/` by default), newest first, read back from their
run.json and check.json: what the runs screen lists, whichever process made them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from proton_tui.engine.check import CHECK_JSON, CheckReport
from proton_tui.engine.classify import Outcome, Verdict
from proton_tui.engine.command import Command
from proton_tui.engine.rundir import RUN_JSON
from proton_tui.engine.runner import ProcessResult
from proton_tui.engine.session import RunResult, backend_text
from proton_tui.records import CheckRecord, RecordError, RunRecord, read_check, read_run_record
from proton_tui.view.formatting import counted


@dataclass(frozen=True)
class StoredRun:
    """One folder of the output folder: a run (run.json) or a box check (check.json)."""

    path: Path
    kind: str  # "run" or "check"
    record: RunRecord | CheckRecord | None  # None when it cannot be read
    problem: str | None = None

    @property
    def started(self) -> str:
        """When it started, as its record says (else from the folder's name: YYYYmmdd-HHMMSS-…)."""
        record = self.record
        started = record.started_at if isinstance(record, RunRecord) else None
        if isinstance(started, str):
            return started.replace("T", " ")
        stamp = self.path.name[:15]
        return f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]} {stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]}"

    def cells(self) -> tuple[str, str, str]:
        """Its columns in a list: when it started, its result (or what it is), and what it ran."""
        if self.record is None:
            return self.started, self.kind, f"{self.problem}"
        record = self.record
        if self.kind == "check":
            check = self.check_report()
            if check is None:
                return self.started, "check", f"{CHECK_JSON} is not a check's record"
            what = "interpreter check" if check.cpu else "box check"
            return (self.started, what, f"{sum(row.passed for row in check.rows)} of "
                                        f"{counted(len(check.rows), 'run')} passed, {len(check.flagged)} flagged")
        return (self.started, record.verdict or "?",
                f"size={record.params.size} iters={record.params.iters} {backend_text(record)}")

    def label(self) -> str:
        """One line for a list: its cells, then its folder."""
        started, result, what = self.cells()
        joined = f"{result:<18} {what}" if self.kind == "run" and self.record is not None else f"{result}: {what}"
        return f"{started}  {joined}  {self.path}"

    def run_result(self) -> RunResult | None:
        """The run as the run screen shows it (its verdict, command line, log and the signals its stream gave),
        read back from its record; None for a check or a run whose record holds no verdict or command. Its capture
        is loaded when it is opened."""
        record = self.record
        if self.kind != "run" or not isinstance(record, RunRecord) or not record.argv:
            return None
        try:
            verdict = Verdict(Outcome(record.verdict), record.message, tuple(record.hints))
        except ValueError:
            return None
        command = Command(tuple(record.argv), dict(record.env), dict(record.env_changes),
                          Path(record.capture) if record.capture else None)
        process = ProcessResult(record.exit_code, record.ended_by, record.wall_s)
        return RunResult(self.path, command, verdict, record.signals, process, None, record)

    def check_report(self) -> CheckReport | None:
        """A box check as the check screen shows it, read back from its check.json; None for a run or a check whose
        record cannot be read."""
        record = self.record
        if self.kind != "check" or not isinstance(record, CheckRecord):
            return None
        return CheckReport.from_record(record, self.path)


def stored_runs(output: Path) -> list[StoredRun]:
    """Every run and check folder directly in `output`, newest first (by name: they start with their time)."""
    try:
        folders = sorted((entry for entry in output.iterdir() if entry.is_dir()), key=lambda p: p.name, reverse=True)
    except OSError:
        return []
    found = []
    for folder in folders:
        for kind, name in (("run", RUN_JSON), ("check", CHECK_JSON)):
            path = folder / name
            if not path.is_file():
                continue
            reader = read_run_record if kind == "run" else read_check
            try:
                found.append(StoredRun(folder, kind, reader(path)))
            except RecordError as error:
                found.append(StoredRun(folder, kind, None, f"{name} unreadable ({_reason(error)})"))
            break
    return found


def _reason(error: RecordError) -> str:
    """Why a record could not be read, without the path the list already shows."""
    return str(error).partition(": ")[2] or str(error)
