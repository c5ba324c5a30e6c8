"""``proton-tui run``: capture the bundled payload with Proton, streaming its output live, then print the
verdict, the run folder and the top of the kernel table. Exit 0 on PASS, 1 on a failed run, 2 on a usage or
configuration error."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional, TextIO

import typer

from ..capture.rundir import DEFAULT_OUTPUT
from .common import OutputOption, PythonOption, fail, names_for, run_until_signalled, writable_output

if TYPE_CHECKING:
    from ..capture.command import Command
    from ..capture.session import RunPlan, RunResult

KERNEL_ROWS = 10


def register(app: typer.Typer) -> None:
    """Add the ``run`` command to ``app``."""
    app.command("run")(run)


def run(
    size: Annotated[Optional[str], typer.Option(
        "--size", help="Elements per vector: 1048576, 1M (2^20), 2^20 or 1<<20. (default: 1M; 4096 through the "
                       "Triton interpreter)", show_default=False)] = None,
    iters: Annotated[Optional[str], typer.Option(
        "--iters", help="Timed launches after the first (compile) launch. (default: 20; 2 through the Triton "
                        "interpreter)", show_default=False)] = None,
    block_size: Annotated[str, typer.Option("--block-size", help="Elements per program; a power of two.")] = "1024",
    backend: Annotated[str, typer.Option(
        "--backend", help="auto, cupti, roctracer, rocprofiler or instrumentation; auto lets Proton choose.")] = "auto",
    context: Annotated[str, typer.Option("--context", help="shadow or python (Python call stacks).")] = "shadow",
    mode: Annotated[str, typer.Option(
        "--mode", help="cli: python -m triton.profiler.proton; env: the payload drives Proton itself.")] = "cli",
    hook: Annotated[bool, typer.Option(
        "--hook/--no-hook", help="Proton's triton hook: kernel names with sizes, bytes and flops.")] = True,
    data: Annotated[str, typer.Option(
        "--data", help="tree (the call tree) or trace (a Chrome trace: a timeline; Triton >= 3.5).")] = "tree",
    output_format: Annotated[str, typer.Option(
        "--format", help="A tree's file: hatchet (JSON) or hatchet_msgpack (Triton >= 3.7, --mode env).")] = "hatchet",
    warps: Annotated[str, typer.Option(
        "--warps", help="Instrumentation: record only these warps of each CTA (0,2); default every warp.")] = "",
    buffer_size: Annotated[str, typer.Option(
        "--buffer-size", help="Instrumentation: the profile buffer per CTA in bytes, a power of two; 0 lets Proton "
                              "size it.")] = "0",
    granularity: Annotated[str, typer.Option(
        "--granularity", help="Instrumentation: what one record covers; Proton compiles only warp.")] = "warp",
    python: PythonOption = None,
    device: Annotated[str, typer.Option("--device", help="A GPU index, auto, or cpu (Triton interpreter).")] = "auto",
    output: OutputOption = DEFAULT_OUTPUT,
    name: Annotated[str, typer.Option("--name", help="Capture name (the capture file's stem).")] = "vecadd",
    timeout: Annotated[Optional[str], typer.Option(
        "--timeout", help="End the run after this many seconds.", show_default=False)] = None,
    no_profile: Annotated[bool, typer.Option("--no-profile", help="Run the payload alone, without Proton.")] = False,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print run.json on stdout at the end; the live output goes to stderr.")] = False,
    inject_bug: Annotated[bool, typer.Option("--inject-bug", hidden=True)] = False,
    payload: Annotated[Optional[Path], typer.Option("--payload", hidden=True)] = None,
) -> None:
    """Capture the bundled Triton vector add with Proton and show where GPU time goes."""
    from ..capture.params import ParamError, RunParams
    from ..capture.probe import ProbeError
    from ..capture.session import plan_run
    from ..capture.sizes import CPU_ITERS, CPU_SIZE, GPU_ITERS, RUN_SIZE

    try:
        params = RunParams(size=size or RUN_SIZE, iters=iters or GPU_ITERS, block_size=block_size, backend=backend,
                           context=context, mode=mode, hook=hook, data=data, output_format=output_format,
                           python=python or sys.executable, device=device,
                           output=output, name=name, profile=not no_profile, timeout=timeout,
                           inject_bug=inject_bug, payload=payload, warps=warps, buffer_size=buffer_size,
                           granularity=granularity)
        plan = plan_run(params)
        interpreted = params.device == "cpu" or not plan.info.gpu_vendor
        if interpreted and not params.profile and (size is None or iters is None):  # sized for the interpreter
            params = replace(params, size=size or CPU_SIZE, iters=iters or CPU_ITERS)
            plan = plan_run(params)
            typer.echo(f"proton-tui: note: no GPU: the payload runs through the Triton interpreter at "
                       f"{params.size:,} elements × {params.iters} launches (--size, --iters: larger sizes take "
                       "the interpreter tens of seconds)", err=True)
    except (ParamError, ProbeError, FileNotFoundError) as error:
        fail(str(error))
    for finding in plan.findings:  # refusals come first
        typer.echo(f"proton-tui: {'refused' if finding.refuses else 'warning'}: {finding.message}", err=True)
    if plan.refusal:
        raise typer.Exit(plan.refusal.exit_code)
    writable_output(params.output)
    result = _execute(plan, stream=sys.stderr if as_json else sys.stdout)
    _report(result, as_json)
    raise typer.Exit(result.verdict.exit_code)


def _execute(plan: RunPlan, stream: TextIO) -> RunResult:
    """Run the plan on a fresh event loop; Ctrl-C (or SIGTERM) ends the run's process group."""
    from ..capture.session import execute_run

    def show_start(run_dir: Path, command: Command) -> None:
        stream.write(f"$ {command.display()}\n")
        stream.flush()

    def show_lines(lines: list[str]) -> None:
        stream.write("".join(line + "\n" for line in lines))
        stream.flush()

    return run_until_signalled(lambda stop: execute_run(plan, show_lines, stop=stop, on_start=show_start))


def _report(result: RunResult, as_json: bool) -> None:
    """The verdict, its hints, the run folder and the top of the kernel table (or run.json with --json)."""
    out = sys.stderr if as_json else sys.stdout
    from ..capture.session import pinned_text

    verdict = result.verdict
    out.write(f"\nverdict: {verdict.message}\n")
    out.writelines(f"hint: {hint}\n" for hint in verdict.hints)
    out.write(f"run folder: {result.run_dir}\n")
    if pinned := pinned_text(result.record):
        out.write(f"device: {pinned}\n")
    if result.profile is not None and not result.profile.is_empty:
        from ..display import Display
        from ..report import kernel_summary_text

        display = Display(result.profile, names_for([result.profile], raw=False))
        out.write("\n" + kernel_summary_text(display, limit=KERNEL_ROWS))
    out.flush()
    if as_json:
        import msgspec

        from ..report import json_text

        sys.stdout.write(json_text(msgspec.to_builtins(result.record)))
        sys.stdout.flush()
