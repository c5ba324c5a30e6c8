"""``proton-tui check``: run the payload on every visible GPU at once (one pinned process per GPU, each with a
Proton capture by default) and print one row per GPU. Exit 0 when every GPU passed and none is flagged as slow,
1 otherwise, 2 when there is no GPU (``--cpu`` runs the interpreter check instead) or an option is bad."""

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
from proton_tui.engine.rundir import DEFAULT_OUTPUT


def register(app: typer.Typer) -> None:
    """Add the ``check`` command to ``app``."""
    command(app, "check", check)


def check(
    python: PythonOption = None,
    gpus: Annotated[Optional[str], typer.Option(
        "--gpus", metavar="LIST",
        help="Check only these GPUs: 0,1. (default: every visible GPU)", show_default=False)] = None,
    size: Annotated[Optional[str], typer.Option(
        "--size", metavar="SIZE", help="Elements per vector (1M, 2^28, …). (default: 2^28 on GPU, 4096 with --cpu)",
        show_default=False)] = None,
    iters: Annotated[Optional[str], typer.Option(
        "--iters", metavar="INTEGER", help="Timed launches after the first. (default: 20 on GPU, 2 with --cpu)",
        show_default=False)] = None,
    profile: Annotated[Optional[bool], typer.Option(
        "--profile/--no-profile", help="A Proton capture per GPU (kernel time, GB/s and % of peak from it). "
                                       "(default: on; off with --cpu)", show_default=False)] = None,
    output: OutputOption = DEFAULT_OUTPUT,
    min_fraction: Annotated[str, typer.Option(
        "--min-fraction", metavar="NUMBER", help="Flag a GPU below this fraction of the median GB/s.")] = "0.9",
    cpu: Annotated[bool, typer.Option(
        "--cpu", help="No GPU needed: run the payload through the Triton interpreter instead.")] = False,
    jobs: Annotated[Optional[str], typer.Option(
        "--jobs", metavar="INTEGER",
        help="With --cpu: how many interpreter runs at once. (default: 1)", show_default=False)] = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the report as JSON on stdout; live output goes to stderr.")] = False,
    timeout: Annotated[str, typer.Option(
        "--timeout", metavar="SECONDS", help="End a GPU's run after this many seconds (0: no limit).")] = "600",
    report_dir: ReportDirOption = None,
    inject_bug: Annotated[Optional[str], typer.Option("--inject-bug", hidden=True)] = None,
    payload: Annotated[Optional[Path], typer.Option("--payload", hidden=True)] = None,
) -> None:
    """Run the payload on every visible GPU in parallel and compare them: PASS/FAIL, kernel time, GB/s, and a likely
    cause for a slow GPU from NVML (pip install 'proton-tui\\[gpu]')."""
    from proton_tui.engine.check import CheckError, format_report, plan_check
    from proton_tui.engine.params import ParamError
    from proton_tui.engine.probe import ProbeError

    try:
        plan = plan_check(python or sys.executable, gpus=gpus, size=size, iters=iters,
                          profile=(not cpu) if profile is None else profile, output=output, cpu=cpu, jobs=jobs,
                          min_fraction=min_fraction, timeout=timeout, inject_bug=inject_bug, payload=payload)
    except (ParamError, ProbeError, CheckError, FileNotFoundError) as error:
        fail(str(error))
    for warning in plan.warnings:
        say(f"proton-tui: warning: {warning}\n")
    writable_output(output)
    if report_dir is not None:
        writable_output(report_dir, "--report-dir")
    print_report(to_fleet(_execute(plan), report_dir), format_report, as_json)


def _execute(plan):
    """Run every slot on a fresh event loop, live output on stderr prefixed by its GPU; Ctrl-C (or SIGTERM)
    ends every run's process group."""

    from proton_tui.engine.check import execute_check

    width = max(len(slot.label) for slot in plan.slots)
    err = sys.stderr

    def show_start(slot, run_dir: Path, command) -> None:
        say(f"[{slot.label:>{width}}] $ {command.display()}\n", err)

    def show_lines(slot, lines: list[str]) -> None:
        say("".join(f"[{slot.label:>{width}}] {line}\n" for line in lines), err)

    def show_done(row) -> None:
        say(f"[{row.label:>{width}}] {row.verdict} ({row.wall_s or 0.0:.1f} s)\n", err)

    return run_until_signalled(
        lambda stop: execute_check(plan, on_lines=show_lines, on_start=show_start, on_done=show_done, stop=stop)
    )
