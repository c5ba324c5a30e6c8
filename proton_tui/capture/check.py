"""Box check: run the payload on every visible GPU at once, one pinned process per GPU, and compare them.

``plan_check`` (parse the options, probe the interpreter, one RunPlan per GPU; nothing runs) ->
``execute_check`` (every run in parallel, each in its own process group and run folder, then one row per GPU,
the median bandwidth, flags, and ``check.json``). Never imports Textual.

Where each number comes from:

* verdict, max_abs_err: the payload's own stream (``vecadd: PASS|FAIL``, ``vecadd: max_abs_err=…``), judged by
  the capture engine's ``decide_verdict`` (with a capture, PASS also needs a capture with kernels).
* kernel time (µs per launch): the capture's ``add_kernel`` node (its time ÷ its launches, timed by the GPU
  profiler) when a capture has one; otherwise the payload's timed loop (``per_iter_us``: host wall time of
  ``iters`` launches ÷ ``iters``, which includes launch overhead).
* GB/s: the capture's ``add_kernel`` bytes ÷ its time (Proton's triton hook records the payload's declared
  ``bytes`` = 3·n·4 per launch; without them, 3·n·4 from the payload's definition) when a capture has the
  kernel; otherwise the payload's own timed-loop ``gbps`` line. ``gbps_source`` says which. With ``--cpu``
  (the Triton interpreter) bandwidth means nothing: it is None and nothing is flagged.
* % of peak: GB/s ÷ the device's peak from the capture's ``device_info`` (``Profile.peak_bytes_per_s``). Without
  a capture the peak is unknown and stays None: nothing is invented.
* flagged: a passing GPU whose GB/s is below ``min_fraction`` × the median GB/s of the passing GPUs. With fewer
  than two measured GPUs nothing is flagged.
* likely cause: NVML's readings of each GPU around its run (``gpuhealth``: clocks, throttle reasons, power and
  its limit, temperature, ECC, PCIe link, MIG, other processes; read only when the optional ``nvidia-ml-py`` is
  installed and NVML starts), turned into causes by ``gpuhealth.explain``; a slow GPU with readings and no cause
  says so. What could not be read is said once, in ``readings_note``.
* exit code: 0 when every GPU passed and none is flagged, 1 otherwise. (2, for no GPU or a bad option, is
  raised before anything runs: NoGpuError, CheckError, ParamError, ProbeError.)
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from .. import JSON_SCHEMA, __version__
from ..console import printable
from ..formatting import counted
from ..hatchet import Profile
from ..records import InterpreterRecord
from . import gpuhealth
from .classify import Outcome
from .command import Command, device_env
from .params import ParamError, RunParams, parse_count, parse_size, parse_timeout, whole_number
from .payload import payload_path
from .probe import InterpreterInfo, probe_interpreter
from .rules import Finding, check_rules, resolve_backend, version_between
from .rundir import DEFAULT_OUTPUT, create_run_dir, write_json
from .session import RunPlan, RunResult, execute_run

GPU_SIZE = 2**28  # 3 GiB moved per launch: bandwidth-bound on any current GPU
GPU_ITERS = 20
CPU_SIZE = 4096  # the interpreter runs a block in Python: keep it tiny
CPU_ITERS = 2
# The Triton interpreter's cost of a vecadd run: start-up, per element, per element and launch (seconds), fitted to
# `payload/vecadd.py --device cpu` at 4096 to 1M elements and 2 to 8 launches on the 2-core CI machine.
INTERPRETER_COST_S = (2.6, 2.5e-6, 0.7e-6)


def interpreter_seconds(size: int, iters: int) -> float:
    """About how long the payload takes through the Triton interpreter (the first launch compiles: iters + 1)."""
    start, per_element, per_launch = INTERPRETER_COST_S
    return start + size * (per_element + per_launch * (iters + 1))
MIN_FRACTION = 0.9
TIMEOUT_S = 600.0  # per GPU: a hung GPU is one of the things a box check is for
MAX_JOBS = 64
KERNEL_PREFIX = "add_kernel"  # the payload's kernel; the triton hook names it add_kernel<n=…>
BYTES_PER_ELEMENT = 3 * 4  # the payload reads x and y and writes out, float32
CHECK_JSON = "check.json"
INTERPRETER_NAME = "Triton interpreter (CPU)"
NO_CAPTURE_NOTE = "no capture, so no device_info to take the peak from (--profile captures one)"

LinesCallback = Callable[["CheckSlot", list[str]], None]
StartCallback = Callable[["CheckSlot", Path, Command], None]
DoneCallback = Callable[["CheckRow"], None]


class CheckError(Exception):
    """The check cannot start (exit 2); the message is one line. `findings`: the rules that refused it, when rules
    did (for a front end that words their advice its own way)."""

    def __init__(self, message: str, findings: tuple[Finding, ...] = ()) -> None:
        super().__init__(message)
        self.findings = findings


class NoGpuError(CheckError):
    """The interpreter sees no GPU; the message names it and says that ``--cpu`` runs the interpreter check."""


def parse_gpus(text: str | Collection[int] | None, flag: str = "--gpus") -> list[int] | None:
    """``0,1`` (or a list) -> [0, 1]; None or ``all`` -> None (every visible GPU). Raises ParamError."""
    if text is None:
        return None
    if isinstance(text, str):
        if text.strip().lower() == "all":
            return None
        items = [item.strip() for item in text.split(",")]
    else:
        items = [str(item) for item in text]
    if not items or any(whole_number(item) is None for item in items):
        raise ParamError(flag, f"{text!r} is not a comma-separated list of GPU indices (e.g. 0,1)")
    indices = [int(item) for item in items]
    if len(set(indices)) != len(indices):
        raise ParamError(flag, f"{text!r} names a GPU twice")
    return indices


def parse_fraction(text: str | float) -> float:
    """``--min-fraction``: a number in (0, 1]."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ParamError("--min-fraction", f"{text!r} is not a number") from None
    if not 0.0 < value <= 1.0:
        raise ParamError("--min-fraction", f"{text!r} must be in (0, 1] (a fraction of the median bandwidth)")
    return value


@dataclass(frozen=True)
class CheckSlot:
    """One process of the check: a GPU (``index`` as the interpreter sees it) or, with ``--cpu``, a job."""

    index: int
    label: str  # "0", "1", … or "cpu0", "cpu1", …
    name: str  # the GPU's name from the probe, or the interpreter
    plan: RunPlan

    def pinning(self, environ: Mapping[str, str] | None = None) -> dict[str, str | None]:
        """The ``*_VISIBLE_DEVICES`` variables the run sets (or removes, as None) for its process."""
        changes = device_env(self.plan.params, self.plan.info, os.environ if environ is None else environ)
        return {key: value for key, value in changes.items() if key.endswith("VISIBLE_DEVICES")}


@dataclass(frozen=True)
class CheckPlan:
    """Every run of a check, planned against the rules; execute it with ``execute_check``."""

    info: InterpreterInfo
    slots: tuple[CheckSlot, ...]
    cpu: bool
    size: int
    iters: int
    profile: bool
    output: Path
    min_fraction: float
    warnings: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()  # the rules behind `warnings`, one per distinct message


@dataclass
class CheckRow:
    """One GPU's result. Numbers are None where unknown; see the module docstring for their sources."""

    index: int
    label: str
    name: str
    verdict: str  # an Outcome value ("PASS", "FAIL", "payload error", …) or "error"
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
    pinning: dict = field(default_factory=dict)
    wall_s: float | None = None
    started_at: float | None = None  # epoch seconds: when the process was started, and when it was judged
    finished_at: float | None = None
    flagged: bool = False
    flag_reason: str | None = None
    readings: dict | None = None  # the GPU's NVML readings around its run (gpuhealth), None when not read
    causes: list = field(default_factory=list)  # every likely cause the readings show, likeliest first
    likely_cause: str = ""  # what the table shows: the likeliest cause, or that a slow GPU shows none


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

    @property
    def threshold_gbps(self) -> float | None:
        return None if self.median_gbps is None else self.min_fraction * self.median_gbps

    @property
    def cancelled(self) -> list[CheckRow]:
        """The runs a cancel ended before they proved anything."""
        return [row for row in self.rows if row.verdict == Outcome.CANCELLED.value]

    @property
    def failed(self) -> list[CheckRow]:
        return [row for row in self.rows if not row.passed and row.verdict != Outcome.CANCELLED.value]

    @property
    def flagged(self) -> list[CheckRow]:
        return [row for row in self.rows if row.flagged]

    @property
    def exit_code(self) -> int:
        """0 when every GPU passed and none is flagged, else 1 (a cancelled check too)."""
        return 0 if self.rows and not self.failed and not self.flagged and not self.cancelled else 1

    def to_json(self) -> dict:
        return {
            "schema": JSON_SCHEMA,
            "tool": f"proton-tui {__version__}",
            "mode": "cpu" if self.cpu else "gpu",
            "python": self.python,
            "interpreter": self.interpreter,
            "size": self.size,
            "iters": self.iters,
            "profile": self.profile,
            "min_fraction": self.min_fraction,
            "median_gbps": self.median_gbps,
            "threshold_gbps": self.threshold_gbps,
            "check_dir": self.check_dir,
            "warnings": list(self.warnings),
            "readings_note": self.readings_note,
            "rows": [asdict(row) for row in self.rows],
            "passed": sum(row.passed for row in self.rows),
            "failed": len(self.failed),
            "cancelled": len(self.cancelled),
            "flagged": len(self.flagged),
            "exit_code": self.exit_code,
        }


def plan_check(python: str | None = None, *, gpus: str | Collection[int] | None = None,
               size: str | int | None = None, iters: str | int | None = None, profile: bool = True,
               output: str | Path = DEFAULT_OUTPUT, cpu: bool = False, jobs: str | int | None = None,
               min_fraction: str | float = MIN_FRACTION, timeout: str | float | None = TIMEOUT_S,
               mode: str | None = None, info: InterpreterInfo | None = None,
               environ: Mapping[str, str] | None = None, payload: Path | None = None,
               inject_bug: str | Collection[int] | None = None) -> CheckPlan:
    """Check the options, probe the interpreter (or take ``info``), and plan one run per GPU (or per ``--cpu``
    job). Nothing runs. Raises ParamError (a bad option, named), ProbeError, NoGpuError or CheckError."""
    import sys

    python = python or (info.python if info else sys.executable)
    wanted = parse_gpus(gpus)
    size = parse_size(size if size is not None else CPU_SIZE if cpu else GPU_SIZE)
    iters = parse_count("--iters", iters if iters is not None else CPU_ITERS if cpu else GPU_ITERS)
    fraction = parse_fraction(min_fraction)
    timeout = parse_timeout(timeout)
    bugged = set(parse_gpus(inject_bug, "--inject-bug") or ())
    if cpu:
        if wanted is not None:
            raise ParamError("--gpus", "--cpu runs the interpreter, not GPUs: use --jobs N for N parallel runs")
        if profile:
            raise ParamError("--profile", "Proton cannot profile the Triton interpreter: --cpu runs without a "
                                          "capture")
        count = parse_count("--jobs", jobs if jobs is not None else 1)
        if count > MAX_JOBS:
            raise ParamError("--jobs", f"{count} is more than {MAX_JOBS}")
    elif jobs is not None:
        raise ParamError("--jobs", "only with --cpu: on GPUs the check runs one process per GPU")
    info = info or probe_interpreter(python)
    if info.triton_version is None or info.torch_version is None:
        missing = "triton" if info.triton_version is None else "torch"
        error = info.triton_error if info.triton_version is None else info.torch_error
        raise CheckError(f"{missing} does not import in {python}: {error}; the payload needs torch and triton "
                         "(--python names another interpreter)")
    if cpu:
        indices = list(range(count))
    elif not info.gpu_count:
        raise NoGpuError(f"{python} sees no GPU (torch.cuda.is_available() is False there): nothing to check; "
                         "--cpu runs the interpreter check instead")
    else:
        indices = wanted if wanted is not None else list(range(info.gpu_count))
        for index in indices:
            if index >= info.gpu_count:
                seen = counted(info.gpu_count, "GPU")
                raise ParamError("--gpus", f"GPU {index} is not visible: {python} sees {seen}, 0..{info.gpu_count - 1}")
    for index in bugged:
        if index not in indices:
            raise ParamError("--inject-bug", f"{index} is not one of the check's runs")
    if mode is None:  # Proton's CLI in Triton 3.5.x cannot enable the triton hook; env mode can
        mode = "env" if version_between(info, "3.5.0", "3.6.0") else "cli"
    payload = Path(payload) if payload is not None else payload_path()
    slots, warned = [], []
    for index in indices:
        label = f"cpu{index}" if cpu else str(index)
        params = RunParams(size=size, iters=iters, python=python, device="cpu" if cpu else index,
                           output=Path(output), name=f"vecadd-{'cpu' if cpu else 'gpu'}{index}", profile=profile,
                           timeout=timeout, mode=mode, inject_bug=index in bugged, payload=payload)
        findings = tuple(check_rules(params, info, environ))
        refusals = [finding for finding in findings if finding.refuses]
        if refusals:
            raise CheckError("refused configuration: " + "; ".join(f.message for f in refusals), tuple(refusals))
        warned += [finding for finding in findings if finding.message not in {f.message for f in warned}]
        plan = RunPlan(params, info, findings, resolve_backend(params.backend, info) if profile else None, payload)
        name = INTERPRETER_NAME if cpu else info.gpu_names[index]
        slots.append(CheckSlot(index, label, name, plan))
    return CheckPlan(info, tuple(slots), cpu, size, iters, profile, Path(output), fraction,
                     tuple(finding.message for finding in warned), tuple(warned))


async def execute_check(plan: CheckPlan, *, on_lines: LinesCallback | None = None,
                        on_start: StartCallback | None = None, on_done: DoneCallback | None = None,
                        stop: asyncio.Event | None = None, environ: Mapping[str, str] | None = None) -> CheckReport:
    """Run every slot at once (each its own process group, pinned by the engine) under one check folder
    ``<output>/<timestamp>-check/``, which also receives ``check.json``. ``stop`` ends every run; cancelling
    the task ends them too and re-raises."""
    check_dir = create_run_dir(plan.output, "check")
    started: dict[int, float] = {}
    environ = os.environ if environ is None else environ
    nvml, readings_note = (None, None) if plan.cpu else await _open_readings(plan.info)

    async def one(slot: CheckSlot) -> CheckRow:
        run_plan = replace(slot.plan, params=replace(slot.plan.params, output=check_dir))
        watch = await _watch(nvml, slot, plan.info, environ) if nvml is not None else None

        def lines(batch: list[str]) -> None:
            if on_lines:
                on_lines(slot, batch)

        def begin(run_dir: Path, command: Command) -> None:
            started[slot.index] = time.time()
            if on_start:
                on_start(slot, run_dir, command)

        try:
            if isinstance(watch, gpuhealth.Watch):
                await watch.begin()
            result: RunResult | BaseException = await execute_run(run_plan, lines, stop=stop, on_start=begin,
                                                                   environ=environ)
        except asyncio.CancelledError:
            if isinstance(watch, gpuhealth.Watch):
                watch.stop()
            raise
        except Exception as error:  # a run that could not start is that GPU's failure, not the check's
            result = error
        finished_at = time.time()
        readings = await watch.end() if isinstance(watch, gpuhealth.Watch) else watch
        row = build_row(slot, result, cpu=plan.cpu, size=plan.size)
        row.started_at, row.finished_at, row.readings = started.get(slot.index), finished_at, readings
        if on_done:
            on_done(row)
        return row

    tasks = [asyncio.ensure_future(one(slot)) for slot in plan.slots]
    try:
        rows = list(await asyncio.gather(*tasks))
    except BaseException:  # one slot's defect, or the check cancelled: no run is left going unwatched
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        if nvml is not None:
            await nvml.settled()  # a cancel leaves NVML calls running in their threads
            nvml.close()
    median = flag_rows(rows, plan.min_fraction)
    explain_rows(rows, median, plan.min_fraction)
    info = plan.info
    report = CheckReport(rows, plan.cpu, info.python, plan.size, plan.iters, plan.profile, plan.min_fraction, median,
                       str(check_dir), plan.warnings,
                       InterpreterRecord.of(info).to_json("python", "has_proton"), readings_note)
    write_json(check_dir / CHECK_JSON, report.to_json())
    return report


async def _open_readings(info: InterpreterInfo) -> tuple[gpuhealth.Nvml | None, str | None]:
    """NVML for a check of NVIDIA GPUs, or why there is none (one line)."""
    if info.gpu_vendor != "nvidia":
        vendor = {"amd": "AMD"}.get(info.gpu_vendor or "", info.gpu_vendor or "these")
        return None, f"reading {vendor} GPUs is not supported (only NVIDIA GPUs, through NVML)"
    return await asyncio.to_thread(gpuhealth.Nvml.open)


async def _watch(nvml: gpuhealth.Nvml, slot: CheckSlot, info: InterpreterInfo,
                 environ: Mapping[str, str]) -> gpuhealth.Watch | dict:
    """A watch on the NVML device the slot's run uses, found by the interpreter's UUID (or PCI bus id) for its
    CUDA device, never by index; or the readings that say why it was not found."""
    uuid = info.gpu_uuids[slot.index] if slot.index < len(info.gpu_uuids) else None
    bus = info.gpu_pci_bus_ids[slot.index] if slot.index < len(info.gpu_pci_bus_ids) else None
    pin = slot.pinning(environ).get("CUDA_VISIBLE_DEVICES")
    try:
        handle, device = await nvml.call(nvml.find, uuid or None, bus or None, pin,
                                         environ.get("CUDA_DEVICE_ORDER") == "PCI_BUS_ID")
    except LookupError as error:
        return gpuhealth.unread_readings(f"no NVML device for CUDA device {slot.index}: {error}")
    except Exception as error:  # noqa: BLE001 - an NVML failure is this GPU's missing readings, not the check's
        return gpuhealth.unread_readings(f"NVML failed to find CUDA device {slot.index}: "
                                         f"{gpuhealth.nvml_reason(error)}")
    return gpuhealth.Watch(nvml, handle, device)


def cause_lines(row: CheckRow, joiner: str | None = None) -> list[str]:
    """What the row's readings explain, a line per cause ("likely cause: …" for a flagged GPU, "noted: …" for any
    other), or all on one line joined by ``joiner``; the table's text when the rules found none. Printable."""
    label = gpuhealth.cause_label(row.flagged)
    if not row.causes:  # a slow GPU whose readings show no cause
        return [f"{label}: {printable(row.likely_cause)}"] if row.likely_cause else []
    if joiner is not None:
        return [f"{label}: {printable(joiner.join(row.causes))}"]
    return [f"{label}: {printable(cause)}" for cause in row.causes]


def explain_rows(rows: list[CheckRow], median: float | None, min_fraction: float) -> None:
    """Each row's likely causes (in place), from its readings and its GB/s against the median."""
    for row in rows:
        explanation = gpuhealth.explain(row.readings, row.gbps if row.passed else None, median, min_fraction)
        row.causes, row.likely_cause = explanation.texts, explanation.text


def build_row(slot: CheckSlot, result: RunResult | BaseException, *, cpu: bool, size: int) -> CheckRow:
    """One row from a finished run (or the exception that stopped it from running)."""
    if isinstance(result, BaseException):
        return CheckRow(slot.index, slot.label, slot.name, "error", False, f"{type(result).__name__}: {result}")
    signals, verdict, capture = result.signals, result.verdict, result.command.capture_path
    name = slot.name if cpu or not signals.device else signals.device
    row = CheckRow(slot.index, slot.label, name, verdict.outcome.value, verdict.passed, verdict.message,
                   max_abs_err=signals.max_abs_err, payload_gbps=signals.gbps,
                   capture=str(capture) if capture is not None and capture.is_file() else None,
                   run_dir=str(result.run_dir), pinning=dict(result.record.device_pinning),
                   wall_s=result.process.wall_s)
    if signals.per_iter_us is not None:
        row.kernel_us, row.kernel_time_source = signals.per_iter_us, "payload loop"
    if cpu:
        row.peak_note = "the Triton interpreter: bandwidth not measured"
        return row
    if signals.gbps is not None:
        row.gbps, row.gbps_source = signals.gbps, "payload loop"
    measured = measure_capture(result.profile, size) if result.profile is not None else None
    if measured is None:
        row.peak_note = (NO_CAPTURE_NOTE if capture is None else "no readable capture: peak unknown"
                         if result.profile is None else f"the capture has no {KERNEL_PREFIX} kernel timed in ns")
        return row
    row.kernel_us, row.kernel_time_source = measured.kernel_us, "capture"
    row.capture_gbps = measured.gbps
    row.gbps, row.gbps_source = measured.gbps, "capture"
    row.peak_gbps = measured.peak_gbps
    row.peak_percent = 100.0 * measured.gbps / measured.peak_gbps if measured.peak_gbps else None
    row.peak_note = None if measured.peak_gbps else measured.peak_note
    return row


@dataclass(frozen=True)
class CaptureMeasure:
    """The payload kernel as the capture saw it."""

    kernel: str
    device: str | None  # "CUDA:0"
    kernel_us: float  # per launch
    gbps: float
    bytes_from_capture: bool  # False: 3·n·4 per launch from the payload's definition
    peak_gbps: float | None
    peak_note: str | None


def measure_capture(profile: Profile, size: int) -> CaptureMeasure | None:
    """Time per launch, GB/s and the device's peak for the payload's kernel; None when the capture lacks it
    (or has no time in ns)."""
    if profile.unit != "ns":
        return None
    stats = [stat for stat in profile.kernel_stats() if stat.name.startswith(KERNEL_PREFIX) and stat.launches]
    if not stats:
        return None
    stat = max(stats, key=lambda s: s.value)
    if not stat.value:
        return None
    moved = stat.bytes or BYTES_PER_ELEMENT * size * stat.launches
    device = stat.devices[0] if len(stat.devices) == 1 else None
    peak = profile.peak_bytes_per_s(device) if device else None
    note = None
    if peak is None:
        note = (f"the capture's device_info gives no peak for {device}" if device
                else "the kernel ran on several devices or none: peak unknown")
    return CaptureMeasure(stat.name, device, stat.value / stat.launches / 1e3, moved / stat.value,
                          bool(stat.bytes), peak / 1e9 if peak else None, note)


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
    threshold = min_fraction * median
    for row in measured:
        if row.gbps < threshold:
            row.flagged = True
            row.flag_reason = (f"{row.gbps:.1f} GB/s is {100 * row.gbps / median:.0f}% of the median "
                               f"{median:.1f} GB/s (below {100 * min_fraction:.0f}%)")
    return median


def _number(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _time_us(value: float | None) -> str:
    return "-" if value is None else format(value, ".1f" if value >= 1 else ".3g")


def _capture_cell(row: CheckRow, check_dir: str | None) -> str:
    """The capture's path, relative to the check folder when it lies inside it (the report names the folder)."""
    if not row.capture:
        return "-"
    if check_dir:
        try:
            return str(Path(row.capture).relative_to(check_dir))
        except ValueError:
            pass
    return row.capture


TABLE_COLUMNS = ("GPU", "NAME", "RESULT", "MAX_ABS_ERR", "KERNEL_US", "GB/S", "%PEAK", "FLAG", "LIKELY_CAUSE",
                 "CAPTURE")


def table_rows(report: CheckReport) -> list[tuple[str, ...]]:
    """The table's cells as plain strings (names are data: print them as they are)."""
    na = report.cpu  # the interpreter measures no bandwidth
    return [(row.label, printable(row.name), row.verdict, _number(row.max_abs_err, ".3e"), _time_us(row.kernel_us),
             "n/a" if na else _number(row.gbps, ".1f"), "n/a" if na else _number(row.peak_percent, ".1f"),
             "SLOW" if row.flagged else "", "n/a" if na else printable(row.likely_cause),
             _capture_cell(row, report.check_dir)) for row in report.rows]


def format_report(report: CheckReport) -> str:
    """The plain-text report: an aligned table, then its notes (`report_notes`)."""
    cells = [TABLE_COLUMNS, *table_rows(report)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(TABLE_COLUMNS))]
    numeric = {3, 4, 5, 6}
    lines = ["  ".join(cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i])
                       for i, cell in enumerate(row)).rstrip() for row in cells]
    return "\n".join([*lines, "", *report_notes(report)]) + "\n"


def report_notes(report: CheckReport) -> list[str]:
    """What the report says under its table: where the numbers come from, what failed, and the result."""
    lines = []
    if report.cpu:
        lines.append(f"interpreter check (--cpu): {counted(len(report.rows), 'run')} of size {report.size}, "
                     f"{counted(report.iters, 'iteration')}; bandwidth is not measured through the interpreter")
    else:
        sources = sorted({row.gbps_source for row in report.rows if row.gbps_source})
        lines.append(f"size {report.size} elements, {report.iters} iterations; GB/s from "
                     + (" and ".join(_SOURCE_TEXT[source] for source in sources) or "nothing (no run measured it)"))
        if report.median_gbps is not None:
            lines.append(f"median {report.median_gbps:.1f} GB/s over the passing GPUs; flagged below "
                         f"{report.min_fraction:.2f} x median = {report.threshold_gbps:.1f} GB/s")
        notes = sorted({row.peak_note for row in report.rows if row.passed and row.peak_note})
        lines += [f"% of peak unknown: {note}" for note in notes]
        lines += _readings_notes(report)
    for row in report.rows:
        if not row.passed:
            where = f" (run folder {row.run_dir})" if row.run_dir else ""
            lines.append(f"{_what(report)} {row.label}: {row.message}{where}")
        if row.flagged:
            lines.append(f"{_what(report)} {row.label}: flagged: {row.flag_reason}")
        lines += [f"{_what(report)} {row.label}: {line}" for line in cause_lines(row, "; ")]
    count = len(report.rows)
    if report.cancelled:
        failed = f", {len(report.failed)} failed" if report.failed else ""
        lines.append(f"check: CANCELLED: {len(report.cancelled)} of {count} {_what(report, count)} ended by the "
                     f"cancel{failed}")
    elif report.exit_code == 0:
        lines.append(f"check: PASS: {count} of {count} {_what(report, count)} passed, none flagged")
    else:
        lines.append(f"check: FAIL: {len(report.failed)} of {count} {_what(report, count)} failed, "
                     f"{len(report.flagged)} flagged")
    if report.check_dir:
        lines.append(f"check folder: {report.check_dir}")
    return [printable(line) for line in lines]  # folders and messages are data


def _readings_notes(report: CheckReport) -> list[str]:
    """What could not be read, once: for the whole check, or per problem with the GPUs it concerns."""
    if report.readings_note:
        return [f"GPU readings (likely cause): not read: {printable(report.readings_note)}"]
    problems: dict[str, list[str]] = {}
    for row in report.rows:
        if row.readings and row.readings.get("problem"):
            problems.setdefault(str(row.readings["problem"]), []).append(row.label)
    return [f"GPU readings of {_what(report, len(labels))} {', '.join(labels)}: not read: {printable(problem)}"
            for problem, labels in problems.items()]


_SOURCE_TEXT = {"capture": "each capture (kernel bytes / kernel time)",
                "payload loop": "the payload's timed loop (host-timed, no capture)"}


def _what(report: CheckReport, count: int = 1) -> str:
    word = "run" if report.cpu else "GPU"
    return word + ("s" if count != 1 else "")
