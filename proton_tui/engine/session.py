"""A whole capture run: plan it (probe and rules, nothing runs), then execute it (run folder, live output read once
for its signals, verdict, run.json). The CLI's ``run`` command and the TUI both drive this module."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from pathlib import Path

import msgspec

from proton_tui import JSON_SCHEMA, __version__
from proton_tui.engine.classify import CaptureStatus, Outcome, OutputClassifier, Verdict, decide_verdict
from proton_tui.engine.command import Command, build_command
from proton_tui.engine.judge import RankOutcome, decide_workload_verdict, first_to_fail
from proton_tui.engine.params import RunParams, capture_suffix
from proton_tui.engine.payload import payload_path
from proton_tui.engine.probe import InterpreterInfo, probe_interpreter
from proton_tui.engine.ranks import LauncherReport, LogTail, collect_ranks, expected_ranks
from proton_tui.engine.rules import Finding, check_rules, resolve_backend
from proton_tui.engine.rundir import RUN_JSON, STDOUT_LOG, create_run_dir, relevant_env
from proton_tui.engine.runner import LineCallback, ProcessResult, run_process
from proton_tui.engine.workload import Workload, command_interpreter, parse_workload
from proton_tui.hatchet import CaptureError, Profile, open_capture
from proton_tui.records import (
    InterpreterRecord,
    OutputSignals,
    RecordedFinding,
    RecordedParams,
    RunRecord,
    UnwrittenError,
    payload_launches,
    write_run_record,
)

SignalsCallback = Callable[[OutputSignals], None]


def refusal_text(findings: Iterable[Finding], for_form: bool = False) -> str | None:
    """Why the rules refuse a run, worded for the command line (or, `for_form`, for the form's controls); None when
    none refuses."""
    reasons = [finding.form_message if for_form else finding.message for finding in findings if finding.refuses]
    return "refused configuration: " + "; ".join(reasons) if reasons else None


@dataclass(frozen=True)
class RunPlan:
    """A run checked against the rules. Show ``findings`` before executing; a refusal stops it."""

    params: RunParams
    info: InterpreterInfo
    findings: tuple[Finding, ...]
    backend_resolved: str | None  # what Proton will use; the capture itself does not say
    payload: Path | None  # None for a user's command (`workload`)
    workload: Workload | None = None

    @property
    def refusal(self) -> Verdict | None:
        message = refusal_text(self.findings)
        return Verdict(Outcome.REFUSED, message) if message else None

    @property
    def warnings(self) -> list[str]:
        return [finding.message for finding in self.findings if not finding.refuses]


@dataclass(frozen=True)
class RunResult:
    """A finished (or cancelled) run: its folder, what ran, the verdict, what its stream said, and the loaded
    capture."""

    run_dir: Path
    command: Command
    verdict: Verdict
    signals: OutputSignals
    process: ProcessResult
    profile: Profile | None
    record: RunRecord  # the contents of run.json
    unwritten: tuple[str, ...] = ()  # a line for each file of the run folder that could not be written whole

    @property
    def backend_text(self) -> str:
        """The backend asked for and what it resolved to, or "unprofiled"."""
        return backend_text(self.record)

    def banner(self) -> str:
        """The verdict and what ran: backend, Triton version, device, folder."""
        record = self.record
        what = [self.backend_text, f"Triton {record.interpreter.triton_version}", device_text(record),
                str(self.run_dir)]
        return f"{self.verdict.message}\n" + "  ·  ".join(what)


def device_text(record: RunRecord) -> str:
    """The device a run record ran on, with the GPU the user chose when it was pinned (`pinned_text`)."""
    pinned = pinned_text(record)
    return f"device {record.device}" + (f" ({pinned})" if pinned else "")


def pinned_text(record: RunRecord) -> str | None:
    """A GPU chosen by index is pinned with *_VISIBLE_DEVICES, so the run and its capture number it 0: which GPU it
    was and how the capture calls it; None for a run not pinned to one GPU."""
    if (pinned := record.pinned_to) is None:
        return None
    chosen, variable, value = pinned
    return f"GPU {chosen}, pinned with {variable}={value}: the capture calls it device 0"


def backend_text(record: RunRecord) -> str:
    """A run record's backend asked for and what it resolved to, or "unprofiled"."""
    requested = record.backend_requested
    return "unprofiled" if requested is None else f"backend {requested} → {record.backend_resolved or 'unknown'}"


def plan_run(params: RunParams, environ: Mapping[str, str] | None = None) -> RunPlan:
    """Probe the workload's interpreter (cached) and apply the rules. Raises ProbeError, FileNotFoundError or, for a
    user's command that cannot run, WorkloadError."""
    workload, notes = None, []
    if params.command:
        workload = parse_workload(params.command, params.cwd, environ)
        python = command_interpreter(workload, params.python, environ)
        if not workload.by_proton_cli and params.mode == "cli" and params.profile:
            notes.append(Finding("warn", f"{workload.kind} {workload.target}: Proton's command line runs only a "
                                         "script or pytest, so the command runs as given and proton-tui's start-up "
                                         "hook starts Proton in each process it profiles (mode env)"))
        mode = params.mode if workload.by_proton_cli else "env"
        params = replace(params, python=python, mode=mode, cwd=workload.cwd)
    info = probe_interpreter(params.python)
    findings = tuple(check_rules(params, info, environ)) + tuple(notes)
    backend = resolve_backend(params.backend, info) if params.profile else None
    return RunPlan(params, info, findings, backend, None if workload else params.payload or payload_path(),
                   workload)


async def execute_run(plan: RunPlan, on_lines: LineCallback | None = None, *, stop: asyncio.Event | None = None,
                      on_start: Callable[[Path, Command], None] | None = None,
                      environ: Mapping[str, str] | None = None, on_signals: SignalsCallback | None = None) -> RunResult:
    """Run a plan that was not refused. ``on_lines`` gets output batches live, and ``on_signals`` what the stream
    has said so far after each (read once, here); ``stop`` cancels (the whole process group ends). Cancelling the
    task also ends the group, writes run.json, and re-raises."""
    if plan.refusal:
        raise ValueError(plan.refusal.message)
    params, started_at = plan.params, datetime.now()
    run_dir = create_run_dir(params.output, params.name, started_at)
    command = build_command(params, plan.info, plan.payload, run_dir, environ, plan.workload)
    if command.hook is not None:
        command.hook.install()
    if on_start:
        on_start(run_dir, command)
    stream = _Stream(OutputClassifier(), LauncherReport())
    unwritten: list[str] = []
    with _Log(run_dir / STDOUT_LOG, unwritten) as log:
        def deliver(lines: list[str], launcher: bool = True) -> None:
            log.write("".join(line + "\n" for line in lines))
            if launcher:
                stream.classifier.feed(lines)
                stream.launcher.feed(lines)
            if on_lines:
                on_lines(lines)
            if on_signals:
                on_signals(msgspec.structs.replace(stream.classifier.signals))

        ended, follow = asyncio.Event(), None
        if command.hook is not None and command.hook.ranks:  # each rank's log, prefixed by its rank
            tail = LogTail(run_dir, lambda lines: deliver(lines, launcher=False), stream.rank_lines)
            follow = asyncio.ensure_future(tail.follow(ended))
        try:
            process = await run_process(command.argv, deliver, env=command.env, timeout=params.timeout, stop=stop,
                                        cwd=command.cwd)
        except asyncio.CancelledError:
            process = ProcessResult(None, "cancelled", (datetime.now() - started_at).total_seconds())
            await _stop_following(follow, ended)
            _finish(plan, run_dir, command, stream, process, started_at, unwritten)
            raise
        await _stop_following(follow, ended)
    return _finish(plan, run_dir, command, stream, process, started_at, unwritten)


async def _stop_following(follow: asyncio.Future | None, ended: asyncio.Event) -> None:
    ended.set()
    if follow is not None:
        await asyncio.shield(follow)


@dataclass
class _Stream:
    """What the run's output said: the launcher's stream (its signals, its report of ranks that died), and each
    rank's own classifier, fed from its log."""

    classifier: OutputClassifier
    launcher: LauncherReport
    ranks: dict[str, OutputClassifier] = field(default_factory=dict)

    def rank_lines(self, label: str, lines: list[str]) -> None:
        self.ranks.setdefault(label, OutputClassifier()).feed(lines)


class _Log:
    """stdout.log, written as the lines come; once a write fails (a full disk, a file-size limit) the log stops
    there, the run goes on, and `unwritten` gets one line naming the file and the error."""

    def __init__(self, path: Path, unwritten: list[str]):
        self.path, self.unwritten, self.stream = path, unwritten, None
        try:
            self.stream = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed by __exit__
        except OSError as error:
            self._failed(error)

    def _failed(self, error: OSError) -> None:
        self.unwritten.append(str(UnwrittenError(self.path, error)))
        stream, self.stream = self.stream, None
        if stream is not None:
            try:
                stream.close()
            except OSError:
                pass  # what it held is what failed

    def write(self, text: str) -> None:
        if self.stream is None:
            return
        try:
            self.stream.write(text)
            self.stream.flush()
        except OSError as error:
            self._failed(error)

    def __enter__(self) -> _Log:
        return self

    def __exit__(self, *_) -> None:
        if self.stream is not None:
            try:
                self.stream.close()
            except OSError as error:
                self._failed(error)


def _finish(plan: RunPlan, run_dir: Path, command: Command, stream: _Stream, process: ProcessResult,
            started_at: datetime, unwritten: list[str]) -> RunResult:
    classifier = stream.classifier
    record = run_record(plan, run_dir, command, classifier, process, started_at)
    profile, capture = None, None
    if command.capture_path is not None:
        capture, profile = capture_status(command.capture_path, record)
    if plan.workload is None:
        verdict = decide_verdict(classifier, process, capture, plan.params.backend)
    else:
        ranks, outcomes = None, None
        if command.hook is not None and command.hook.ranks:
            ranks, outcomes, profile = _ranks(plan, run_dir, stream, record)
        verdict = decide_workload_verdict(classifier, process, plan.params.profile, capture, outcomes,
                                          first_to_fail(outcomes or [], stream.launcher.first))
        record = msgspec.structs.replace(record, workload=plan.workload.kind, ranks=ranks or [])
    record = msgspec.structs.replace(
        record, verdict=verdict.outcome.value, message=verdict.message, hints=list(verdict.hints),
        metrics_summary=profile.metrics_summary() if profile is not None else None)
    try:
        write_run_record(run_dir / RUN_JSON, record)
    except UnwrittenError as error:
        unwritten.append(str(error))
    return RunResult(run_dir, command, verdict, record.signals, process, profile, record, tuple(unwritten))


def _ranks(plan: RunPlan, run_dir: Path, stream: _Stream, record: RunRecord):
    """The sidecars of the ranks, completed; each expected rank's outcome; the first rank's profile (for the
    kernel table)."""
    profiling = plan.params.profile
    ranks = collect_ranks(run_dir, capture_suffix(plan.params) if profiling else None, stream.launcher)
    by_rank = {rank.rank: rank for rank in ranks}
    outcomes, first = [], None
    for number in sorted(set(expected_ranks(ranks, stream.launcher)) | set(by_rank) - {None}):
        sidecar = by_rank.get(number)
        status = None
        if profiling and sidecar is not None and sidecar.capture:
            status, profile = capture_status(Path(sidecar.capture), record)
            first = first or profile
        classifier = stream.ranks.get(f"rank {number}")
        outcomes.append(RankOutcome(number, sidecar, status, classifier.signals.exception if classifier else None))
    return ranks, outcomes, first


def pinning(command: Command) -> dict[str, str]:
    """The *_VISIBLE_DEVICES variables a command sets to pin its run to one GPU."""
    return {key: value for key, value in command.env_changes.items() if key.endswith("VISIBLE_DEVICES")}


def capture_status(path: Path, record: RunRecord | None = None) -> tuple[CaptureStatus, Profile | None]:
    """What Proton left at ``path``, and the profile when it could be read, complete with what its run's `record`
    says (else the run.json beside it: `open_capture`)."""
    if not path.exists():
        return CaptureStatus(path, missing=True), None
    try:
        profile = open_capture(path, record, settled=True)  # the run's processes have ended
    except CaptureError as error:
        return CaptureStatus(path, error=str(error)), None
    return CaptureStatus(path, empty=profile.is_empty), profile


def run_record(plan: RunPlan, run_dir: Path, command: Command, classifier: OutputClassifier,
               process: ProcessResult, started_at: datetime) -> RunRecord:
    """Everything run.json holds but the verdict and the capture's summary: enough to reproduce the run, to compare
    it with another, and to complete its capture."""
    params, signals = plan.params, msgspec.structs.replace(classifier.signals)
    recorded = msgspec.convert({key: str(value) if isinstance(value, Path) else value
                                for key, value in asdict(params).items()}, RecordedParams)
    launches, ctas = payload_launches(recorded)
    return RunRecord(
        schema=JSON_SCHEMA, tool=f"proton-tui {__version__}", run_dir=str(run_dir),
        started_at=started_at.isoformat(timespec="seconds"), finished_at=datetime.now().isoformat(timespec="seconds"),
        params=recorded, payload=str(plan.payload) if plan.payload else None, argv=list(command.argv),
        command=command.display(),
        env=relevant_env(command.env), env_changes=dict(command.env_changes),
        interpreter=InterpreterRecord.of(plan.info),
        backend_requested=params.backend if params.profile else None, backend_resolved=plan.backend_resolved,
        device=signals.device, device_requested=params.device, device_pinning=pinning(command),
        findings=[RecordedFinding(finding.level, finding.message) for finding in plan.findings],
        exit_code=process.exit_code, ended_by=process.ended_by, error=classifier.error,
        wall_s=round(process.wall_s, 3), compile_ms=signals.first_launch_ms, loop_ms=signals.loop_ms,
        per_iter_us=signals.per_iter_us, gbps=signals.gbps, sm_clock_khz=signals.sm_clock_khz,
        max_abs_err=signals.max_abs_err, capture=str(command.capture_path) if command.capture_path else None,
        stdout_log=str(run_dir / STDOUT_LOG), launches=launches, ctas=ctas, signals=signals)
