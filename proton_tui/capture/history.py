"""The runs and box checks an output folder holds (`proton-runs/` by default), newest first, read back from their
run.json and check.json: what the runs screen lists, whichever process made them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson

from ..formatting import counted
from ..records import RecordError, read_check
from .check import CHECK_JSON, CheckReport
from .classify import Outcome, OutputClassifier, Verdict
from .command import Command
from .rundir import RUN_JSON, STDOUT_LOG
from .runner import ProcessResult
from .session import RunResult, backend_text


@dataclass(frozen=True)
class StoredRun:
    """One folder of the output folder: a run (run.json) or a box check (check.json)."""

    path: Path
    kind: str  # "run" or "check"
    record: dict | None  # None when its JSON cannot be read
    problem: str | None = None

    @property
    def started(self) -> str:
        """When it started, as its record says (else from the folder's name: YYYYmmdd-HHMMSS-…)."""
        if self.record and isinstance(self.record.get("started_at"), str):
            return self.record["started_at"].replace("T", " ")
        stamp = self.path.name[:15]
        return f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]} {stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]}"

    def label(self) -> str:
        """One line for a list."""
        if self.record is None:
            return f"{self.started}  {self.kind}: {self.problem}  {self.path}"
        record = self.record
        if self.kind == "check":
            check = self.check_report()
            if check is None:
                return f"{self.started}  check: {CHECK_JSON} is not a check's record  {self.path}"
            what = "interpreter check" if check.cpu else "box check"
            return (f"{self.started}  {what}: {sum(row.passed for row in check.rows)} of "
                    f"{counted(len(check.rows), 'run')} passed, {len(check.flagged)} flagged  {self.path}")
        params = record.get("params") or {}
        return (f"{self.started}  {record.get('verdict', '?'):<18} size={params.get('size')} "
                f"iters={params.get('iters')} {backend_text(record)}  {self.path}")

    def run_result(self) -> RunResult | None:
        """The run as the run screen shows it (its verdict, command line and log), read back from its folder; None
        for a check or a run whose record cannot be read. Its capture is loaded when it is opened."""
        record = self.record
        if self.kind != "run" or record is None:
            return None
        try:
            capture = Path(record["capture"]) if record.get("capture") else None
            command = Command(tuple(record["argv"]), dict(record.get("env") or {}),
                              dict(record.get("env_changes") or {}), capture)
            verdict = Verdict(Outcome(record["verdict"]), record["message"], tuple(record.get("hints") or ()))
            process = ProcessResult(record.get("exit_code"), record.get("ended_by"), float(record.get("wall_s", 0)))
        except (KeyError, TypeError, ValueError):
            return None
        classifier = OutputClassifier()
        log = self.path / STDOUT_LOG
        if log.is_file():
            classifier.feed(log.read_text(errors="replace").splitlines())
        return RunResult(self.path, command, verdict, classifier, process, None, record)

    def check_report(self) -> CheckReport | None:
        """A box check as the check screen shows it, read back from its check.json; None for a run or a check whose
        record cannot be read."""
        record = self.record
        if self.kind != "check" or record is None:
            return None
        try:
            return CheckReport.from_record(read_check(self.path / CHECK_JSON), self.path)
        except (OSError, RecordError):
            return None


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
            try:
                record = orjson.loads(path.read_bytes())
                found.append(StoredRun(folder, kind, record if isinstance(record, dict) else None,
                                       None if isinstance(record, dict) else f"{name} is not an object"))
            except (OSError, orjson.JSONDecodeError) as error:
                found.append(StoredRun(folder, kind, None, f"{name} unreadable ({type(error).__name__})"))
            break
    return found
