"""The records proton-tui writes beside what it ran (run.json, check.json, doctor.json), typed: each record is one
msgspec Struct with one write and one read. A write goes through a temporary file renamed into place, so a reader
sees the whole document or none, and nothing partial is left; a read gives a one-line RecordError for a file that is
not such a record.

Records of an older layout read as today's: a field they lack takes its default, fields no longer known are skipped,
and what today's writer stores but an older one did not is worked out once here, at read-back.
"""

from __future__ import annotations

import enum
from pathlib import Path

import msgspec

from proton_tui import JSON_SCHEMA
from proton_tui.records.files import RecordError, UnwrittenError, _read, _write  # noqa: F401
from proton_tui.records.ranks import RankRecord

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
    COMMAND_FAILED = "command failed"  # a user's command (no PASS line): its exit status or a rank's end
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
    command: list[str] = msgspec.field(default_factory=list)  # a user's command (empty: the payload)
    cwd: str | None = None


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
    if params.payload is not None or params.command or not all(
            isinstance(value, int) and value > 0 for value in (size, block, iters)):
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
    # a user's command: its kind (engine.workload), and each profiled process's sidecar (records.ranks)
    workload: str | None = None
    ranks: list[RankRecord] = msgspec.field(default_factory=list)

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
