"""A box check's result: one row per GPU (check.json's rows), the whole report with its exit code and record, and
the judging of rows against each other (the median, the flags, the likely causes)."""

from __future__ import annotations

import socket
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from proton_tui import JSON_SCHEMA, __version__
from proton_tui.engine import gpuhealth
from proton_tui.engine.gpuhealth.causes import threshold_of
from proton_tui.engine.job import RowVerdict
from proton_tui.records import CheckRecord, CheckRow

CHECK_JSON = "check.json"


@dataclass
class CheckReport:
    """The whole check: one row per GPU (or job), the median bandwidth and what it flagged."""

    rows: list[CheckRow]
    cpu: bool
    python: str
    size: int
    iters: int
    profile: bool
    min_fraction: float
    median_gbps: float | None = None
    check_dir: str | None = None
    warnings: tuple[str, ...] = ()
    interpreter: dict = field(default_factory=dict)
    readings_note: str | None = None  # why no GPU was read (no binding, NVML did not start, …), in one line
    unwritten: list[str] = field(default_factory=list)  # a line for each file that could not be written whole
    host: str = field(default_factory=socket.gethostname)

    @property
    def threshold_gbps(self) -> float | None:
        return None if self.median_gbps is None else threshold_of(self.median_gbps, self.min_fraction)

    @property
    def cancelled(self) -> list[CheckRow]:
        """The runs a cancel ended before they proved anything."""
        return [row for row in self.rows if row.verdict == RowVerdict.CANCELLED]

    @property
    def failed(self) -> list[CheckRow]:
        return [row for row in self.rows if not row.passed and row.verdict != RowVerdict.CANCELLED]

    @property
    def flagged(self) -> list[CheckRow]:
        return [row for row in self.rows if row.flagged]

    @property
    def exit_code(self) -> int:
        """0 when every GPU passed and none is flagged, else 1 (a cancelled check too)."""
        return 0 if self.rows and not self.failed and not self.flagged and not self.cancelled else 1

    def to_record(self) -> CheckRecord:
        return CheckRecord(JSON_SCHEMA, f"proton-tui {__version__}", "cpu" if self.cpu else "gpu", self.python,
                           self.size, self.iters, self.profile, self.min_fraction, self.interpreter,
                           self.median_gbps, self.threshold_gbps, self.check_dir, list(self.warnings),
                           self.readings_note, list(self.rows), sum(row.passed for row in self.rows),
                           len(self.failed), len(self.cancelled), len(self.flagged), self.exit_code, self.host)

    def to_json(self) -> dict:
        """check.json as a JSON object (what ``--json`` prints)."""
        return msgspec.to_builtins(self.to_record())

    @classmethod
    def from_record(cls, record: CheckRecord, folder: Path | None = None) -> CheckReport:
        """A check read back from its check.json (``records.read_check``), its causes explained by today's rules;
        ``folder`` is where it was found (its check folder when the record names none)."""
        rows = list(record.rows)
        explain_rows(rows, record.median_gbps, record.min_fraction)
        return cls(rows, record.mode == "cpu", record.python, record.size, record.iters, record.profile,
                   record.min_fraction, record.median_gbps, record.check_dir or (str(folder) if folder else None),
                   tuple(record.warnings), dict(record.interpreter), record.readings_note, host=record.host)


def explain_rows(rows: list[CheckRow], median: float | None, min_fraction: float) -> None:
    """Each row's likely causes (in place), from its readings and its GB/s against the median."""
    for row in rows:
        explanation = gpuhealth.explain(row.readings, row.gbps if row.passed else None, median, min_fraction)
        row.causes, row.likely_cause = explanation.texts, explanation.text


def flag_rows(rows: list[CheckRow], min_fraction: float) -> float | None:
    """Median GB/s over the passing rows that have one; flag (in place) those below ``min_fraction`` × median.
    Returns the median, or None when no passing row has a bandwidth. Fewer than two: nothing is flagged."""
    measured = [row for row in rows if row.passed and row.gbps is not None]
    for row in rows:
        row.flagged, row.flag_reason = False, None
    if not measured:
        return None
    median = statistics.median(row.gbps for row in measured)
    if len(measured) < 2:
        return median
    threshold = threshold_of(median, min_fraction)
    for row in measured:
        if row.gbps < threshold:
            row.flagged = True
            row.flag_reason = (f"{row.gbps:.1f} GB/s is {100 * row.gbps / median:.0f}% of the median "
                               f"{median:.1f} GB/s (below {100 * min_fraction:.0f}%)")
    return median

