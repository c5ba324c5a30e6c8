"""Running a box check: every slot at once (each its own process group, pinned by the engine) under one check
folder, each GPU watched through NVML around its run, each finished run turned into its row."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from proton_tui.engine import gpuhealth, job
from proton_tui.engine.check.plan import CheckPlan, CheckSlot
from proton_tui.engine.check.report import CHECK_JSON, CheckReport, explain_rows, flag_rows
from proton_tui.engine.command import Command
from proton_tui.engine.job import RowVerdict, row_verdict, run_rows
from proton_tui.engine.probe import InterpreterInfo
from proton_tui.engine.rundir import create_run_dir
from proton_tui.engine.session import RunResult, execute_run
from proton_tui.hatchet import Profile
from proton_tui.records import CheckRow, InterpreterRecord, write_check

KERNEL_PREFIX = "add_kernel"  # the payload's kernel; the triton hook names it add_kernel<n=…>
BYTES_PER_ELEMENT = 3 * 4  # the payload reads x and y and writes out, float32
NO_CAPTURE_NOTE = "no capture, so no device_info to take the peak from (--profile captures one)"

LinesCallback = Callable[[CheckSlot, list[str]], None]
StartCallback = Callable[[CheckSlot, Path, Command], None]
DoneCallback = Callable[[CheckRow], None]


async def execute_check(plan: CheckPlan, *, on_lines: LinesCallback | None = None,
                        on_start: StartCallback | None = None, on_done: DoneCallback | None = None,
                        stop: asyncio.Event | None = None, environ: Mapping[str, str] | None = None) -> CheckReport:
    """Run every slot at once (each its own process group, pinned by the engine) under one check folder
    ``<output>/<timestamp>-check/``, which also receives ``check.json``. ``stop`` ends every run; cancelling
    the task ends them too and re-raises."""
    check_dir = create_run_dir(plan.output, "check")
    started: dict[int, float] = {}
    unwritten: list[str] = []
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
        if isinstance(result, RunResult):
            unwritten.extend(result.unwritten)
        readings = await watch.end() if isinstance(watch, gpuhealth.Watch) else watch
        row = build_row(slot, result, cpu=plan.cpu, size=plan.size)
        row.started_at, row.finished_at, row.readings = started.get(slot.index), finished_at, readings
        return row

    try:  # one slot's defect, or the check cancelled: no run is left going unwatched
        rows = await run_rows(plan.slots, one, plan.jobs, on_done=on_done)
    finally:
        if nvml is not None:
            await nvml.settled()  # a cancel leaves NVML calls running in their threads
            nvml.close()
    median = flag_rows(rows, plan.min_fraction)
    explain_rows(rows, median, plan.min_fraction)
    info = plan.info
    report = CheckReport(rows, plan.cpu, info.python, plan.size, plan.iters, plan.profile, plan.min_fraction, median,
                       str(check_dir), plan.warnings,
                       InterpreterRecord.of(info).to_json("python", "has_proton"), readings_note, unwritten)
    return job.report(report, check_dir / CHECK_JSON, lambda path, done: write_check(path, done.to_record()))


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


def build_row(slot: CheckSlot, result: RunResult | BaseException, *, cpu: bool, size: int) -> CheckRow:
    """One row from a finished run (or the exception that stopped it from running)."""
    if isinstance(result, BaseException):
        return CheckRow(slot.index, slot.label, slot.name, RowVerdict.ERROR, False,
                        f"{type(result).__name__}: {result}")
    signals, verdict, capture = result.signals, result.verdict, result.command.capture_path
    name = slot.name if cpu or not signals.device else signals.device
    row = CheckRow(slot.index, slot.label, name, row_verdict(verdict.outcome), verdict.passed, verdict.message,
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


