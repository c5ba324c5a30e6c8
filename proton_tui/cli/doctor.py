"""``proton-tui doctor``: does Proton work here? The environment facts that decide it, each with a remedy when wrong,
then every backend × context × output × mode the interpreter's Triton offers, expected (its rules) against proved
(a short capture each, in parallel on one GPU). Without a GPU, the payload through the Triton interpreter instead.
Exit 0 when everything the version promises works, 1 when something failed, 2 on a usage error, 3 when there is no
GPU (profiling not checked) and nothing failed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from proton_tui.cli.common import (
    OutputOption,
    PythonOption,
    ReportDirOption,
    command,
    fail,
    print_report,
    run_until_signalled,
    say,
    to_fleet,
    writable_output,
)

HELP = """Check the Triton/Proton stack of the workload's interpreter: the facts that decide whether Proton works
(GPU, driver, CUPTI/roctracer/rocprofiler libraries, counters restricted to admins, *_VISIBLE_DEVICES, the probe's
cache), each with a remedy when wrong, then a short capture for every backend × context × output × mode its Triton
offers, expected (the version's rules) against proved.

\b
Exit codes:
  0  everything the version promises works
  1  a cell or a fact failed
  2  a usage error (nothing ran)
  3  no GPU: profiling not checked (the interpreter check passed, no fact failed)"""


def register(app: typer.Typer) -> None:
    """Add the ``doctor`` command to ``app``."""
    command(app, "doctor", doctor, help=HELP)


def doctor(
    python: PythonOption = None,
    gpu: Annotated[str, typer.Option(
        "--gpu", metavar="INTEGER", help="The GPU every cell runs on (an index the interpreter sees).")] = "0",
    backend: Annotated[Optional[str], typer.Option(
        "--backend", help="Only this backend's cells (auto, cupti, roctracer, rocprofiler, instrumentation).",
        show_default=False)] = None,
    context: Annotated[Optional[str], typer.Option(
        "--context", help="Only this context's cells (shadow, python).", show_default=False)] = None,
    mode: Annotated[Optional[str], typer.Option(
        "--mode", help="Only this mode's cells (cli, env).", show_default=False)] = None,
    jobs: Annotated[Optional[str], typer.Option(
        "--jobs", metavar="INTEGER", help="Cells captured at once, at most 64. (default: the CPU count, at most 16)",
        show_default=False)] = None,
    timeout: Annotated[str, typer.Option("--timeout", metavar="SECONDS",
                                         help="End a cell's run after this many seconds.")] = "180",
    output: OutputOption = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the report as JSON on stdout (docs/json.md); progress goes to stderr.")] = False,
    report_dir: ReportDirOption = None,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Print each cell's command line as it starts (else in the cell's run.json).")] = False,
) -> None:
    from proton_tui.engine.doctor import format_report, plan_doctor
    from proton_tui.engine.params import ParamError
    from proton_tui.engine.probe import ProbeError
    from proton_tui.engine.rundir import DEFAULT_OUTPUT

    try:
        plan = plan_doctor(python or sys.executable, gpu=gpu, jobs=jobs, output=output or DEFAULT_OUTPUT,
                           timeout=timeout, backend=backend, context=context, mode=mode)
    except (ParamError, ProbeError) as error:
        fail(str(error))
    writable_output(output or DEFAULT_OUTPUT)
    if report_dir is not None:
        writable_output(report_dir, "--report-dir")
    print_report(to_fleet(_execute(plan, verbose), report_dir), format_report, as_json)


def _execute(plan, verbose: bool = False):
    """Run the cells on a fresh event loop, a line on stderr as each starts and ends; Ctrl-C (or SIGTERM) ends every
    run's process group."""
    from proton_tui.engine.doctor import execute_doctor, plan_line

    err = sys.stderr
    running = sum(cell.expected == "works" for cell in plan.cells)
    where = f"GPU {plan.gpu}" if plan.has_gpu else "the Triton interpreter (no GPU)"
    say(plan_line(running, len(plan.cells), plan.jobs, where) + "\n", err)
    done = 0

    def show_start(cell, run_dir: Path, command) -> None:
        if verbose:  # else in the cell's run.json
            say(f"[{cell.key}] $ {command.display()}\n", err)

    def show_done(result) -> None:
        nonlocal done
        if result.cell.expected == "refused":
            return
        done += 1
        wall = f" ({result.wall_s:.1f} s)" if result.wall_s is not None else ""
        say(f"[{done}/{running}] {result.cell.key}: {result.proved}{wall}\n", err)

    return run_until_signalled(lambda stop: execute_doctor(plan, on_start=show_start, on_done=show_done, stop=stop))
