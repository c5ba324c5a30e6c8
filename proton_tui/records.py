"""The records proton-tui writes beside what it ran (run.json, check.json, doctor.json), typed: each record is one
msgspec Struct with one write and one read. A write goes through a temporary file renamed into place, so a reader
sees the whole document or none, and nothing partial is left; a read gives a one-line RecordError for a file that is
not such a record.

Records of an older layout read as today's: a field they lack takes its default, fields no longer known are skipped,
and what today's writer stores but an older one did not is worked out once here, at read-back.
"""

from __future__ import annotations

import enum
import os
import tempfile
from pathlib import Path

import msgspec

from proton_tui import JSON_SCHEMA


class RecordError(ValueError):
    """A record file that cannot be read as its record: the message is one line naming the file."""


class UnwrittenError(OSError):
    """A file that could not be written whole (a full disk, a file-size limit, no rights): one line naming it."""

    def __init__(self, path: Path, error: OSError):
        super().__init__(error.errno, f"{path}: cannot be written: {error.strerror or error}")

    def __str__(self) -> str:
        return self.strerror


_ENCODER = msgspec.json.Encoder(enc_hook=str)  # a value JSON has no type for is written as its text


def _write(path: Path, record: msgspec.Struct) -> Path:
    """Write a record as indented JSON through a temporary file renamed over `path`; nothing partial is left."""
    document = msgspec.json.format(_ENCODER.encode(record), indent=2) + b"\n"
    try:
        handle, partial = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    except OSError as error:
        raise UnwrittenError(path, error) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(document)
        os.replace(partial, path)
    except BaseException as error:
        Path(partial).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise UnwrittenError(path, error) from None
        raise
    return path


def _read(path: Path, kind: type[msgspec.Struct], name: str = "record"):
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise RecordError(f"{path}: {name} cannot be read: {error.strerror or error}") from None
    try:
        return msgspec.json.decode(data, type=kind)
    except msgspec.DecodeError as error:
        raise RecordError(f"{path}: not a {name}: {error}") from None


try:
    from enum import StrEnum as _StrEnum
except ImportError:  # Python 3.10
    class _StrEnum(str, enum.Enum):
        __str__ = str.__str__
        __format__ = str.__format__


# ---- verdicts ---------------------------------------------------------------------------------------------------
class Outcome(enum.Enum):
    """The distinct ways a run ends; ``value`` is the label shown and recorded."""

    PASS = "PASS"
    FAIL = "FAIL"
    PAYLOAD_ERROR = "payload error"
    NO_CAPTURE = "no capture written"
    EMPTY_CAPTURE = "empty capture"
    BAD_CAPTURE = "unreadable capture"
    REFUSED = "refused configuration"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed out"


# What a row of a check or a doctor proved: every way a run ends (``Outcome``), and what a job adds to it. The
# values are the words check.json and doctor.json record.
RowVerdict = _StrEnum("RowVerdict", {
    **{outcome.name: outcome.value for outcome in Outcome},
    "ERROR": "error",  # the run could not start
    "WRONG_METRIC": "wrong metric",  # a doctor cell's capture holds another metric than its backend's
    "NOT_RUN": "not run",  # a doctor cell the rules refuse
    "PENDING": "",  # a doctor cell still under way
})


def row_verdict(value: str | Outcome) -> RowVerdict:
    """The row verdict of a run's outcome or of its recorded word. Raises ValueError for another word."""
    return RowVerdict(value.value if isinstance(value, Outcome) else value)


# ---- the interpreter ---------------------------------------------------------------------------------------------
class InterpreterRecord(msgspec.Struct, omit_defaults=False):
    """What the workload's interpreter had, as every record keeps it."""

    python: str | None = None  # the interpreter as given
    executable: str = ""
    python_version: str = ""
    triton_version: str | None = None
    has_proton: bool | None = None
    torch_version: str | None = None
    gpu_vendor: str | None = None
    gpu_names: list[str] = msgspec.field(default_factory=list)

    @classmethod
    def of(cls, info) -> InterpreterRecord:
        """From a probe's InterpreterInfo."""
        return cls(info.python, info.executable, info.python_version, info.triton_version, info.has_proton,
                   info.torch_version, info.gpu_vendor, list(info.gpu_names))

    def to_json(self, *leave_out: str) -> dict:
        """As a JSON object, without the keys named in `leave_out` (the records that never wrote them)."""
        return {key: value for key, value in msgspec.to_builtins(self).items() if key not in leave_out}


# ---- run.json ----------------------------------------------------------------------------------------------------
RUN_JSON = "run.json"
RUN_RECORD = "run record"


class RecordedParams(msgspec.Struct):
    """The run's parameters as run.json keeps them (RunParams, its paths as text)."""

    size: int = 2**20
    iters: int = 20
    block_size: int = 1024
    backend: str = "auto"
    context: str = "shadow"
    mode: str = "cli"
    hook: bool = True
    data: str = "tree"
    output_format: str = "hatchet"
    python: str | None = None
    device: str | int = "auto"
    output: str | None = None
    name: str = "vecadd"
    profile: bool = True
    timeout: float | None = None
    inject_bug: bool = False
    payload: str | None = None  # None: the bundled vecadd.py
    warps: list[int] = msgspec.field(default_factory=list)
    buffer_size: int = 0
    granularity: str = "warp"


class RecordedFinding(msgspec.Struct):
    """A rule that fired, worded for the command line."""

    level: str = ""
    message: str = ""


class OutputSignals(msgspec.Struct):
    """What the run's output stream said, as it was read live. Numbers are None when the line never came."""

    device: str | None = None
    max_abs_err: float | None = None
    result: str | None = None  # "PASS" or "FAIL"
    first_launch_ms: float | None = None  # includes Triton's compile
    loop_ms: float | None = None
    per_iter_us: float | None = None
    gbps: float | None = None
    sm_clock_khz: float | None = None  # the GPU's SM clock as Triton's driver reports it (its maximum)
    script_error: str | None = None  # Proton CLI: "An error occurred while executing the script: …"
    missing_library: str | None = None
    usage_error: str | None = None  # an argparse "prog: error: …" line
    exception: str | None = None  # the last line of the last traceback
    dropped_events: int = 0  # instrumentation: warps (of a CTA) whose records did not fit Proton's buffer
    last_line: str | None = None


def payload_launches(params: RecordedParams) -> tuple[int | None, int | None]:
    """The bundled payload's launches of its kernel (once, then `iters` times) and CTAs per launch (size over
    block_size); (None, None) for another script, which launches what it launches."""
    size, block, iters = params.size, params.block_size, params.iters
    if params.payload is not None or not all(isinstance(value, int) and value > 0 for value in (size, block, iters)):
        return None, None
    return iters + 1, -(-size // block)


class RunRecord(msgspec.Struct):
    """Everything run.json holds: enough to reproduce the run, to compare it with another, and to complete its
    capture (the GPU it pinned, the instrumented kernel's launches and CTAs, the SM clock the stream reported)."""

    schema: str = JSON_SCHEMA
    tool: str = ""
    run_dir: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    params: RecordedParams = msgspec.field(default_factory=RecordedParams)
    payload: str | None = None
    argv: list[str] = msgspec.field(default_factory=list)
    command: str = ""
    env: dict[str, str] = msgspec.field(default_factory=dict)
    env_changes: dict[str, str | None] = msgspec.field(default_factory=dict)
    interpreter: InterpreterRecord = msgspec.field(default_factory=InterpreterRecord)
    backend_requested: str | None = None
    backend_resolved: str | None = None
    device: str | None = None
    device_requested: str | int | None = None
    device_pinning: dict[str, str] = msgspec.field(default_factory=dict)
    findings: list[RecordedFinding] = msgspec.field(default_factory=list)
    exit_code: int | None = None
    ended_by: str | None = None
    verdict: str | None = None
    message: str = ""
    hints: list[str] = msgspec.field(default_factory=list)
    error: str | None = None
    wall_s: float = 0.0
    compile_ms: float | None = None  # the first launch, which includes Triton's compile
    loop_ms: float | None = None
    per_iter_us: float | None = None
    gbps: float | None = None
    sm_clock_khz: float | None = None
    max_abs_err: float | None = None
    capture: str | None = None
    stdout_log: str | None = None
    metrics_summary: dict | None = None
    # the payload kernel's launches and CTAs per launch, where the run knows them (`payload_launches`)
    launches: int | None | msgspec.UnsetType = msgspec.UNSET
    ctas: int | None | msgspec.UnsetType = msgspec.UNSET
    signals: OutputSignals | msgspec.UnsetType = msgspec.UNSET  # the stream, as it was read live

    def __post_init__(self) -> None:
        if self.schema != JSON_SCHEMA:
            raise ValueError(f"its schema is {self.schema!r}, and this proton-tui reads {JSON_SCHEMA!r}")
        if self.launches is msgspec.UNSET or self.ctas is msgspec.UNSET:  # an older layout: worked out once here
            self.launches, self.ctas = payload_launches(self.params)
        if self.signals is msgspec.UNSET:  # an older layout kept only these of the stream's signals
            self.signals = OutputSignals(device=self.device, max_abs_err=self.max_abs_err,
                                         first_launch_ms=self.compile_ms, loop_ms=self.loop_ms,
                                         per_iter_us=self.per_iter_us, gbps=self.gbps,
                                         sm_clock_khz=self.sm_clock_khz)

    @property
    def pinned_to(self) -> tuple[int, str, str] | None:
        """For a run pinned to one GPU chosen by index: the GPU chosen, and the *_VISIBLE_DEVICES variable and value
        that pinned it (the run and its capture then number it 0); None for a run not pinned to one GPU."""
        chosen = self.device_requested
        if not isinstance(chosen, int) or isinstance(chosen, bool) or not self.device_pinning:
            return None
        variable, value = next(iter(self.device_pinning.items()))
        return chosen, variable, value


def write_run_record(path: Path, record: RunRecord) -> Path:
    """Write run.json (atomically)."""
    return _write(Path(path), record)


def read_run_record(path: Path) -> RunRecord:
    """Read run.json; RecordError naming the file when it is not a run record."""
    return _read(Path(path), RunRecord, RUN_RECORD)


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


def write_doctor(path: Path, record: DoctorRecord) -> Path:
    return _write(path, record)


def read_doctor(path: Path) -> DoctorRecord:
    return _read(path, DoctorRecord, "doctor record")
