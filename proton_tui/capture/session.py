"""A whole capture run: plan it (probe and rules, nothing runs), then execute it (run folder, live output,
verdict, run.json). The CLI's ``run`` command and the TUI both drive this module."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path

import orjson

from .. import JSON_SCHEMA, __version__
from ..hatchet import CaptureError, Profile, load_profile
from ..hatchet.cycles import CycleFacts, facts_from_record
from ..hatchet.devices import device_label
from .classify import CaptureStatus, Outcome, OutputClassifier, Verdict, decide_verdict
from .command import Command, build_command
from .params import RunParams
from .payload import payload_path
from .probe import InterpreterInfo, probe_interpreter
from .rules import Finding, check_rules, resolve_backend
from .rundir import RUN_JSON, STDOUT_LOG, create_run_dir, relevant_env, write_json
from .runner import LineCallback, ProcessResult, run_process


@dataclass(frozen=True)
class RunPlan:
    """A run checked against the rules. Show ``findings`` before executing; a refusal stops it."""

    params: RunParams
    info: InterpreterInfo
    findings: tuple[Finding, ...]
    backend_resolved: str | None  # what Proton will use; the capture itself does not say
    payload: Path

    @property
    def refusal(self) -> Verdict | None:
        reasons = [finding.message for finding in self.findings if finding.refuses]
        return Verdict(Outcome.REFUSED, "refused configuration: " + "; ".join(reasons)) if reasons else None

    @property
    def warnings(self) -> list[str]:
        return [finding.message for finding in self.findings if not finding.refuses]


@dataclass(frozen=True)
class RunResult:
    """A finished (or cancelled) run: its folder, what ran, the verdict, and the loaded capture."""

    run_dir: Path
    command: Command
    verdict: Verdict
    classifier: OutputClassifier
    process: ProcessResult
    profile: Profile | None
    record: dict  # the contents of run.json

    @property
    def backend_text(self) -> str:
        """The backend asked for and what it resolved to, or "unprofiled"."""
        return backend_text(self.record)

    def banner(self) -> str:
        """The verdict and what ran: backend, Triton version, device, folder."""
        record = self.record
        what = [self.backend_text, f"Triton {record['interpreter']['triton_version']}", device_text(record),
                str(self.run_dir)]
        return f"{self.verdict.message}\n" + "  ·  ".join(what)


def device_text(record: dict) -> str:
    """The device a run record ran on, with the GPU the user chose when it was pinned (`pinned_text`)."""
    pinned = pinned_text(record)
    return f"device {record.get('device')}" + (f" ({pinned})" if pinned else "")


def pinned_text(record: dict) -> str | None:
    """A GPU chosen by index is pinned with *_VISIBLE_DEVICES, so the run and its capture number it 0: which GPU it
    was and how the capture calls it; None for a run not pinned to one GPU."""
    chosen, pinning = record.get("device_requested"), record.get("device_pinning") or {}
    if not isinstance(chosen, int) or not pinning:
        return None
    variable, value = next(iter(pinning.items()))
    return f"GPU {chosen}, pinned with {variable}={value}: the capture calls it device 0"


PINNING_DEVICE_TYPES = {"CUDA_VISIBLE_DEVICES": "CUDA", "HIP_VISIBLE_DEVICES": "HIP", "ROCR_VISIBLE_DEVICES": "HIP"}


def pinned_devices(record: dict) -> tuple[dict[str, str], str] | None:
    """For a run pinned to one GPU: how its capture's device 0 is renamed to the GPU the user chose
    ({"CUDA:0": "CUDA:1"}) and the note that says so; None for a run not pinned."""
    chosen, pinning = record.get("device_requested"), record.get("device_pinning") or {}
    if not isinstance(chosen, int) or not pinning:
        return None
    variable, value = next(iter(pinning.items()))
    device_type = PINNING_DEVICE_TYPES.get(variable)
    if device_type is None:
        return None
    seen, chosen_label = device_label(device_type, 0), device_label(device_type, chosen)
    return ({seen: chosen_label},
            f"{chosen_label} is the GPU chosen, pinned with {variable}={value}: the capture file calls it {seen}")


def backend_text(record: dict) -> str:
    """A run record's backend asked for and what it resolved to, or "unprofiled"."""
    requested, resolved = record.get("backend_requested"), record.get("backend_resolved")
    return "unprofiled" if requested is None else f"backend {requested} → {resolved or 'unknown'}"


def plan_run(params: RunParams, environ: Mapping[str, str] | None = None) -> RunPlan:
    """Probe the workload's interpreter (cached) and apply the rules. Raises ProbeError or FileNotFoundError."""
    info = probe_interpreter(params.python)
    findings = tuple(check_rules(params, info, environ))
    backend = resolve_backend(params.backend, info) if params.profile else None
    return RunPlan(params, info, findings, backend, params.payload or payload_path())


async def execute_run(plan: RunPlan, on_lines: LineCallback | None = None, *, stop: asyncio.Event | None = None,
                      on_start: Callable[[Path, Command], None] | None = None,
                      environ: Mapping[str, str] | None = None) -> RunResult:
    """Run a plan that was not refused. ``on_lines`` gets output batches live; ``stop`` cancels (the whole
    process group ends). Cancelling the task also ends the group, writes run.json, and re-raises."""
    if plan.refusal:
        raise ValueError(plan.refusal.message)
    params, started_at = plan.params, datetime.now()
    run_dir = create_run_dir(params.output, params.name, started_at)
    command = build_command(params, plan.info, plan.payload, run_dir, environ)
    if on_start:
        on_start(run_dir, command)
    classifier = OutputClassifier()
    with open(run_dir / STDOUT_LOG, "w", encoding="utf-8") as log:
        def deliver(lines: list[str]) -> None:
            log.write("".join(line + "\n" for line in lines))
            log.flush()
            classifier.feed(lines)
            if on_lines:
                on_lines(lines)

        try:
            process = await run_process(command.argv, deliver, env=command.env, timeout=params.timeout, stop=stop)
        except asyncio.CancelledError:
            process = ProcessResult(None, "cancelled", (datetime.now() - started_at).total_seconds())
            _finish(plan, run_dir, command, classifier, process, started_at)
            raise
    return _finish(plan, run_dir, command, classifier, process, started_at)


def _finish(plan: RunPlan, run_dir: Path, command: Command, classifier: OutputClassifier, process: ProcessResult,
            started_at: datetime) -> RunResult:
    profile, capture = None, None
    if command.capture_path is not None:
        capture, profile = capture_status(command.capture_path, {"device_requested": plan.params.device,
                                                                  "device_pinning": pinning(command),
                                                                  "params": asdict(plan.params),
                                                                  "sm_clock_khz": classifier.signals.sm_clock_khz})
    verdict = decide_verdict(classifier, process, capture, plan.params.backend)
    record = run_record(plan, run_dir, command, classifier, process, verdict, profile, started_at)
    write_json(run_dir / RUN_JSON, record)
    return RunResult(run_dir, command, verdict, classifier, process, profile, record)


def pinning(command: Command) -> dict[str, str]:
    """The *_VISIBLE_DEVICES variables a command sets to pin its run to one GPU."""
    return {key: value for key, value in command.env_changes.items() if key.endswith("VISIBLE_DEVICES")}


def capture_status(path: Path, record: dict | None = None) -> tuple[CaptureStatus, Profile | None]:
    """What Proton left at ``path``, and the loaded profile when it could be read; with the run's `record`, its
    devices called as the user chose them (`pinned_devices`)."""
    if not path.exists():
        return CaptureStatus(path, missing=True), None
    try:
        profile = load_profile(path, settled=True)  # the run's processes have ended
    except CaptureError as error:
        return CaptureStatus(path, error=str(error)), None
    if record is not None:
        apply_run_record(profile, record)
    return CaptureStatus(path, empty=profile.is_empty), profile


def apply_run_record(profile: Profile, record: dict, source: str = "the run") -> Profile:
    """What the capture's run knows and its file does not: the GPU it pinned (`pinned_devices`) and, for an
    instrumentation capture, its launches, CTAs and sampled warps (a trace's own count of launches is kept)."""
    if (pinned := pinned_devices(record)) is not None:
        profile.renumber_devices(*pinned)
    if profile.unit == "cycles" and (facts := facts_from_record(record, source)):
        if profile.trace is not None and profile.cycle_facts is not None:  # a trace counts its own launches
            facts = replace(profile.cycle_facts, clock_khz=facts.clock_khz)
        profile.cycle_facts = facts
    return profile


def record_beside(path: Path) -> dict | None:
    """The run.json in the capture's folder when it is the record of the run that wrote this capture."""
    record_path = Path(path).parent / RUN_JSON
    try:
        record = orjson.loads(record_path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(record, dict) or not isinstance(record.get("capture"), str):
        return None
    try:
        same = Path(record["capture"]).resolve() == Path(path).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    return record if same else None


def with_record_beside(profile: Profile, sm_clock_khz: float | None = None) -> Profile:
    """A capture opened on its own, completed by the run.json beside it when that run wrote it, then by the SM clock
    the user gave for an instrumentation trace (``with_sm_clock``: CaptureError for any other capture)."""
    record = record_beside(profile.path)
    if record is not None:
        profile = apply_run_record(profile, record, f"{RUN_JSON} beside the capture")
    return with_sm_clock(profile, sm_clock_khz)


def with_sm_clock(profile: Profile, clock_khz: float | None, flag: str = "--sm-clock-khz") -> Profile:
    """The profile with its instrumentation trace's cycles timed at `clock_khz` (kHz), the user's word over the
    clock its run reported; unchanged for None. A trace records no device info, so only a trace takes a clock.
    Raises CaptureError naming `flag` for any other capture."""
    if clock_khz is None:
        return profile
    if profile.trace is None or not profile.trace.has_warps:
        raise CaptureError(f"{flag}: {profile.path} is not an instrumentation trace (its cycles are what the clock "
                           "converts)")
    profile.cycle_facts = replace(profile.cycle_facts or CycleFacts(), clock_khz=clock_khz)
    return profile


def run_record(plan: RunPlan, run_dir: Path, command: Command, classifier: OutputClassifier,
               process: ProcessResult, verdict: Verdict, profile: Profile | None, started_at: datetime) -> dict:
    """Everything run.json holds: enough to reproduce the run and to compare it with another."""
    params, info, signals = plan.params, plan.info, classifier.signals
    pinned = pinning(command)
    return {
        "schema": JSON_SCHEMA,
        "tool": f"proton-tui {__version__}",
        "run_dir": str(run_dir),
        "started_at": started_at.isoformat(timespec="seconds"),
        "finished_at": datetime.now().isoformat(timespec="seconds"),
        "params": asdict(params),
        "payload": str(plan.payload),
        "argv": list(command.argv),
        "command": command.display(),
        "env": relevant_env(command.env),
        "env_changes": command.env_changes,
        "interpreter": {
            "python": info.python, "executable": info.executable, "python_version": info.python_version,
            "triton_version": info.triton_version, "torch_version": info.torch_version,
            "gpu_vendor": info.gpu_vendor, "gpu_names": list(info.gpu_names),
        },
        "backend_requested": params.backend if params.profile else None,
        "backend_resolved": plan.backend_resolved,
        "device": signals.device,
        "device_requested": params.device,
        "device_pinning": pinned,
        "findings": [{"level": finding.level, "message": finding.message} for finding in plan.findings],
        "exit_code": process.exit_code,
        "ended_by": process.ended_by,
        "verdict": verdict.outcome.value,
        "message": verdict.message,
        "hints": list(verdict.hints),
        "error": classifier.error,
        "wall_s": round(process.wall_s, 3),
        "compile_ms": signals.first_launch_ms,  # the first launch, which includes Triton's compile
        "loop_ms": signals.loop_ms,
        "per_iter_us": signals.per_iter_us,
        "gbps": signals.gbps,
        "sm_clock_khz": signals.sm_clock_khz,
        "max_abs_err": signals.max_abs_err,
        "capture": str(command.capture_path) if command.capture_path else None,
        "stdout_log": str(run_dir / STDOUT_LOG),
        "metrics_summary": profile.metrics_summary() if profile is not None else None,
    }
