"""Planning and running a doctor: ``plan_doctor`` (probe the interpreter, read the host, ask the interpreter which
profiler libraries it can load, plan the matrix; nothing is captured) -> ``execute_doctor`` (one short capture per
cell the rules let run, in parallel, each in its own process group and run folder under
``<output>/<timestamp>-doctor/``, judged as any run is, then ``doctor.json``)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from proton_tui.engine import job
from proton_tui.engine.command import Command
from proton_tui.engine.doctor.facts import HostReadings, environment_facts, probe_libraries, read_host
from proton_tui.engine.doctor.matrix import CELL_TIMEOUT_S, Cell, cpu_cell, judge_cell, plan_matrix
from proton_tui.engine.doctor.report import DOCTOR_JSON, CellResult, DoctorReport, interpreter_record, not_run
from proton_tui.engine.job import JobPlan, RowVerdict, run_rows
from proton_tui.engine.params import BACKENDS, CONTEXTS, MODES, ParamError, parse_count, parse_timeout, whole_number
from proton_tui.engine.payload import payload_path
from proton_tui.engine.probe import InterpreterInfo, cache_dir, cache_state, probe_interpreter
from proton_tui.engine.rules import BACKEND_SINCE
from proton_tui.engine.rundir import DEFAULT_OUTPUT, RUN_JSON, create_run_dir
from proton_tui.engine.session import RunPlan, RunResult, execute_run
from proton_tui.records import Fact, RecordError, read_run_record, write_doctor
from proton_tui.view.formatting import counted

DEFAULT_JOBS = 16  # at most, by default: each cell holds an interpreter with torch and a CUDA context
MAX_JOBS = 64  # cells at once: a whole matrix fits (5 backends × 2 contexts × 3 outputs × 2 modes = 60 at most)


@dataclass(frozen=True)
class DoctorPlan(JobPlan):
    """The facts and the cells of a doctor, planned against the rules; run it with ``execute_doctor``."""

    facts: tuple[Fact, ...] = ()
    cells: tuple[Cell, ...] = ()  # the matrix, or the CPU check alone without a GPU
    gpu: int | None = None  # the GPU the cells run on; None without one

    @property
    def has_gpu(self) -> bool:
        return self.gpu is not None


def plan_doctor(python: str, *, gpu: str | int = 0, jobs: str | int | None = None,
                output: str | Path = DEFAULT_OUTPUT, timeout: str | float | None = CELL_TIMEOUT_S,
                backend: str | None = None, context: str | None = None, mode: str | None = None,
                environ: Mapping[str, str] | None = None, host: HostReadings | None = None) -> DoctorPlan:
    """Check the options, probe the interpreter, read the host and the libraries, plan the cells. Nothing is
    captured. Raises ParamError (a bad option, named) or ProbeError."""
    environ = os.environ if environ is None else environ
    index = whole_number(str(gpu))
    if index is None:
        raise ParamError("--gpu", f"{gpu!r} is not a GPU index (0, 1, …)")
    count = parse_count("--jobs", jobs if jobs is not None else min(os.cpu_count() or 1, DEFAULT_JOBS))
    if count > MAX_JOBS:
        raise ParamError("--jobs", f"{count} is more than {MAX_JOBS}")
    timeout = parse_timeout(timeout)
    for flag, value, allowed in (("--backend", backend, BACKENDS), ("--context", context, CONTEXTS),
                                 ("--mode", mode, MODES)):
        if value is not None and value not in allowed:
            raise ParamError(flag, f"{value!r} is not one of {', '.join(allowed)}")
    before = cache_state(python)
    info = probe_interpreter(python)
    cache = "unwritable" if before != "fresh" and cache_state(python) != "fresh" and not _writable(cache_dir()) \
        else before
    facts = environment_facts(info, probe_libraries(python), host or read_host(), environ, cache)
    output = Path(output)
    if not info.gpu_count:
        return DoctorPlan(info, output, count, tuple(facts), (cpu_cell(info, output, timeout, environ),), None)
    if index >= info.gpu_count:
        raise ParamError("--gpu", f"GPU {index} is not visible: {python} sees {counted(info.gpu_count, 'GPU')}, "
                                  f"0..{info.gpu_count - 1}")
    cells = plan_matrix(info, gpu=index, output=output, timeout=timeout, environ=environ, backend=backend,
                        context=context, mode=mode)
    chosen = [(flag, value) for flag, value in (("--backend", backend), ("--context", context), ("--mode", mode))
              if value is not None]
    filters = " ".join(f"{flag} {value}" for flag, value in chosen)
    if not cells:  # the filters left nothing of what this Triton offers
        raise ParamError(chosen[0][0] if chosen else "--backend",
                         f"{filters} leaves no cell of Triton {info.triton_version}'s matrix (its backends: "
                         f"{', '.join(b for b, since in BACKEND_SINCE.items() if info.triton_at_least(since))})")
    if chosen and all(cell.expected == "refused" for cell in cells):  # nothing would be proved
        reasons = sorted({reason for cell in cells for reason in cell.reasons})
        raise ParamError(chosen[0][0], f"{filters} leaves only cells the rules refuse: {'; '.join(reasons)}")
    return DoctorPlan(info, output, count, tuple(facts), tuple(cells), index)


def _writable(folder: Path) -> bool:
    """Whether ``folder``, or the nearest folder above it that exists, can be written."""
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            return os.access(candidate, os.W_OK)
    return False


StartCallback = Callable[[Cell, Path, Command], None]
LinesCallback = Callable[[Cell, list[str]], None]
DoneCallback = Callable[[CellResult], None]


async def execute_doctor(plan: DoctorPlan, *, on_start: StartCallback | None = None,
                         on_lines: LinesCallback | None = None, on_done: DoneCallback | None = None,
                         stop: asyncio.Event | None = None, environ: Mapping[str, str] | None = None) -> DoctorReport:
    """Run every cell expected to work, at most ``plan.jobs`` at once, each in its own run folder under
    ``<output>/<timestamp>-doctor/`` (which also receives doctor.json). Refused cells are reported at once, not run.
    ``stop`` ends the runs under way and starts no other; cancelling the task ends them too and re-raises."""
    doctor_dir = create_run_dir(plan.output, "doctor")
    stop = stop or asyncio.Event()

    async def one(cell: Cell) -> CellResult:
        if cell.expected == "refused":
            return not_run(cell)
        return await _prove(cell, plan.info, doctor_dir, on_start, on_lines, stop, environ)

    results = await run_rows(plan.cells, one, plan.jobs, gated=lambda cell: cell.expected != "refused",
                             on_done=on_done)
    report = DoctorReport(plan.info.python, interpreter_record(plan.info), list(plan.facts), results, plan.gpu,
                          str(doctor_dir), any(result.cancelled for result in results),
                          [line for result in results if result.run is not None for line in result.run.unwritten])
    return job.report(report, doctor_dir / DOCTOR_JSON, lambda path, done: write_doctor(path, done.to_record()))


async def _prove(cell: Cell, info: InterpreterInfo, doctor_dir: Path, on_start: StartCallback | None,
                 on_lines: LinesCallback | None, stop: asyncio.Event,
                 environ: Mapping[str, str] | None) -> CellResult:
    if stop.is_set():
        return CellResult(cell, RowVerdict.CANCELLED, False, "cancelled before it started")
    params = replace(cell.params, output=doctor_dir)
    run_plan = RunPlan(params, info, (), cell.resolved, payload_path())
    try:
        run = await execute_run(run_plan, (lambda lines: on_lines(cell, lines)) if on_lines else None, stop=stop,
                                on_start=(lambda run_dir, command: on_start(cell, run_dir, command)) if on_start
                                else None, environ=environ)
    except asyncio.CancelledError:
        raise
    except Exception as error:  # a cell that could not start is that cell's failure, not the doctor's
        return CellResult(cell, RowVerdict.ERROR, False, f"{type(error).__name__}: {error}")
    judged = judge_cell(cell, run.verdict, run.profile.unit if run.profile is not None else None)
    return CellResult(cell, judged.proved, judged.ok, judged.message, judged.metric, judged.remedy, str(run.run_dir),
                      round(run.process.wall_s, 3), run)


def read_cell_run(result: CellResult) -> RunResult | None:
    """A cell's run, in memory or read back from its run folder (for its log); None when it has none."""
    if result.run is not None or not result.run_dir:
        return result.run
    from proton_tui.engine.history import StoredRun

    path = Path(result.run_dir)
    try:
        record = read_run_record(path / RUN_JSON)
    except RecordError:
        return None
    return StoredRun(path, "run", record).run_result()


