"""check.json and doctor.json: a box check and a doctor run, typed."""

from __future__ import annotations

import re
import time
from pathlib import Path

import msgspec

from proton_tui.records.base import RowVerdict, row_verdict
from proton_tui.records.files import _read, _write, _write_new

MIN_FRACTION = 0.9  # a GPU (or a rank) is flagged when the median does under this fraction of its work


# ---- check.json --------------------------------------------------------------------------------------------------
class CheckRow(msgspec.Struct):
    """One GPU's (or ``--cpu`` job's) result of a box check. Numbers are None where unknown (engine.check says
    where each comes from)."""

    index: int
    label: str
    name: str
    verdict: RowVerdict  # a run's outcome ("PASS", "FAIL", "payload error", …) or "error"
    passed: bool
    message: str = ""
    max_abs_err: float | None = None
    kernel_us: float | None = None  # per launch
    kernel_time_source: str | None = None  # "capture" or "payload loop"
    gbps: float | None = None  # the number the table shows and flagging uses
    gbps_source: str | None = None  # "capture" or "payload loop"
    payload_gbps: float | None = None  # the payload's timed-loop number, always kept for reference
    capture_gbps: float | None = None
    peak_gbps: float | None = None  # from the capture's device_info
    peak_percent: float | None = None
    peak_note: str | None = None  # why the peak is unknown
    capture: str | None = None
    run_dir: str | None = None
    pinning: dict[str, str | None] = msgspec.field(default_factory=dict)
    wall_s: float | None = None
    started_at: float | None = None  # epoch seconds: when the process was started, and when it was judged
    finished_at: float | None = None
    flagged: bool = False
    flag_reason: str | None = None
    readings: dict | None = None  # the GPU's NVML readings around its run (gpuhealth), None when not read
    causes: list[str] = msgspec.field(default_factory=list)  # every likely cause the readings show, likeliest first
    likely_cause: str = ""  # what the table shows: the likeliest cause, or that a slow GPU shows none

    def __post_init__(self) -> None:
        self.verdict = row_verdict(self.verdict)


class CheckRecord(msgspec.Struct):
    """check.json: the whole box check."""

    schema: str
    tool: str
    mode: str  # "gpu" or "cpu"
    python: str
    size: int
    iters: int
    profile: bool
    min_fraction: float
    interpreter: dict = msgspec.field(default_factory=dict)
    median_gbps: float | None = None
    threshold_gbps: float | None = None
    check_dir: str | None = None
    warnings: list[str] = msgspec.field(default_factory=list)
    readings_note: str | None = None
    rows: list[CheckRow] = msgspec.field(default_factory=list)
    passed: int = 0
    failed: int = 0
    cancelled: int = 0
    flagged: int = 0
    exit_code: int = 1
    host: str = ""  # the machine it ran on (a fleet's reports are told apart by it); "" in older records


def write_check(path: Path, record: CheckRecord) -> Path:
    return _write(path, record)


def read_check(path: Path) -> CheckRecord:
    return _read(path, CheckRecord, "check record")


# ---- doctor.json -------------------------------------------------------------------------------------------------
class Fact(msgspec.Struct, frozen=True):
    """One thing that decides whether Proton works here: ``state`` ok, warn, fail or info; a remedy when wrong."""

    name: str
    state: str
    value: str
    remedy: str | None = None


class CellRecord(msgspec.Struct):
    """One cell of the doctor's matrix: what the rules expect of it and what proved it."""

    backend: str
    context: str
    data: str
    format: str
    mode: str
    expected: str  # "works" or "refused"
    proved: RowVerdict
    ok: bool
    cell: str = ""  # the cell in one word
    kind: str = "capture"  # or "cpu"
    backend_resolved: str | None = None
    expected_metric: str | None = None
    reasons: list[str] = msgspec.field(default_factory=list)
    metric: str | None = None
    message: str = ""
    remedy: str | None = None
    run_dir: str | None = None
    stdout_log: str | None = None
    wall_s: float | None = None


class DoctorRecord(msgspec.Struct):
    """doctor.json: the facts, every cell, and the verdict."""

    python: str
    facts: list[Fact]
    cells: list[CellRecord]
    schema: str = ""
    tool: str = ""
    interpreter: dict = msgspec.field(default_factory=dict)
    gpu: int | None = None
    doctor_dir: str | None = None
    passed: int = 0
    failed: int = 0
    refused: int = 0
    cancelled_cells: int = 0
    cancelled: bool = False
    verdict: str = ""
    exit_code: int = 1
    host: str = ""  # the machine it ran on; "" in older records


def write_doctor(path: Path, record: DoctorRecord) -> Path:
    return _write(path, record)


def read_doctor(path: Path) -> DoctorRecord:
    return _read(path, DoctorRecord, "doctor record")



# ---- a fleet's reports -------------------------------------------------------------------------------------------
_NOT_IN_A_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def fleet_stem(kind: str, host: str, when: float | None = None) -> str:
    """`check-<host>-<UTC time>` (or doctor-…): the host as a file name can hold it."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(time.time() if when is None else when))
    return f"{kind}-{_NOT_IN_A_NAME.sub('_', host).strip('._') or 'unknown-host'}-{stamp}"


def write_fleet_report(folder: Path, record: CheckRecord | DoctorRecord) -> Path:
    """A check's or doctor's record into a folder shared by a fleet, named for its host, never over another."""
    kind = "check" if isinstance(record, CheckRecord) else "doctor"
    return _write_new(folder, fleet_stem(kind, record.host), record)
