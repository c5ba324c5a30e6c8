"""``proton-tui run [-- COMMAND …]``: capture the bundled payload, or the user's own command, with Proton, streaming
its output live, then print the verdict, the run folder and the top of the kernel table. Exit 0 on PASS, 1 on a
failed run, 2 on a usage or configuration error."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional, TextIO

import typer
from typer.models import OptionInfo

from proton_tui.cli.common import (
    METAVARS,
    OutputOption,
    PythonOption,
    command,
    fail,
    names_for,
    run_until_signalled,
    say,
    unwritten,
    writable_output,
)
from proton_tui.engine.params import PARAMS

if TYPE_CHECKING:
    from proton_tui.engine.command import Command
    from proton_tui.engine.session import RunPlan, RunResult

KERNEL_ROWS = 10


def register(app: typer.Typer) -> None:
    """Add the ``run`` command to ``app``."""
    command(app, "run", run, options_metavar="[OPTIONS] [-- COMMAND [ARGS]...]")


def split_command(args: list[str]) -> tuple[list[str], list[str] | None]:
    """``run … -- COMMAND …``: the command line's own words, and the user's command (None without ``--``)."""
    if "--" not in args:
        return args, None
    cut = args.index("--")
    if "run" not in args[:cut]:
        return args, None
    return args[:cut], args[cut + 1:]


def option(field: str, **extra) -> OptionInfo:
    """The option of run parameter `field`: its flag and help from the parameter table (`PARAMS`)."""
    param = PARAMS[field]
    return typer.Option(param.flag, help=param.cli_help, metavar=METAVARS.get(param.flag), **extra)


def default(field: str) -> str:
    """A parameter's default as it is typed (RunParams reads and checks it)."""
    return PARAMS[field].text


def run(
    ctx: typer.Context,
    size: Annotated[Optional[str], option("size", show_default=False)] = None,
    iters: Annotated[Optional[str], option("iters", show_default=False)] = None,
    block_size: Annotated[str, option("block_size")] = default("block_size"),
    backend: Annotated[str, option("backend")] = default("backend"),
    context: Annotated[str, option("context")] = default("context"),
    mode: Annotated[str, option("mode")] = default("mode"),
    hook: Annotated[bool, option("hook")] = PARAMS["hook"].default,
    data: Annotated[str, option("data")] = default("data"),
    output_format: Annotated[str, option("output_format")] = default("output_format"),
    warps: Annotated[str, option("warps", show_default=False)] = default("warps"),
    buffer_size: Annotated[str, option("buffer_size")] = default("buffer_size"),
    granularity: Annotated[str, option("granularity")] = default("granularity"),
    python: PythonOption = None,
    device: Annotated[str, option("device")] = default("device"),
    output: OutputOption = PARAMS["output"].default,
    name: Annotated[Optional[str], option("name", show_default=False)] = None,
    timeout: Annotated[Optional[str], option("timeout", show_default=False)] = None,
    no_profile: Annotated[bool, option("profile")] = not PARAMS["profile"].default,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print run.json on stdout at the end; the live output goes to stderr.")] = False,
    inject_bug: Annotated[bool, option("inject_bug", hidden=True)] = PARAMS["inject_bug"].default,
    payload: Annotated[Optional[Path], option("payload", hidden=True)] = None,
) -> None:
    """Capture the bundled Triton vector add with Proton and show where GPU time goes; after --, your own command
    instead: python SCRIPT.py, SCRIPT.py, python -m MODULE, pytest, or a launcher (torchrun, srun, mpirun), one
    capture per rank."""
    from proton_tui.engine.params import ParamError, RunParams, interpreter_sized
    from proton_tui.engine.probe import ProbeError
    from proton_tui.engine.session import plan_run
    from proton_tui.engine.workload import WorkloadError, parse_workload

    command = (ctx.obj or {}).get("command")
    try:
        if command is not None:
            workload = parse_workload(command)  # checked first: a bad command is the error to show
            name = name or workload.default_name
        params = RunParams(size=size or default("size"), iters=iters or default("iters"), block_size=block_size,
                           backend=backend, context=context, mode=mode, hook=hook, data=data,
                           output_format=output_format, python=python or sys.executable, device=device,
                           output=output, name=name or default("name"), profile=not no_profile, timeout=timeout,
                           inject_bug=inject_bug, payload=payload, warps=warps, buffer_size=buffer_size,
                           granularity=granularity, command=tuple(command or ()))
        plan = plan_run(params)
        given = {field for field, value in (("size", size), ("iters", iters)) if value is not None}
        if not command and (sized := interpreter_sized(params, plan.info.gpu_vendor, given)) != params:
            params, plan = sized, plan_run(sized)
            say(f"proton-tui: note: no GPU: the payload runs through the Triton interpreter at {params.size:,} "
                f"elements × {params.iters} launches (--size, --iters: larger sizes take the interpreter tens of "
                "seconds)\n")
    except (ParamError, ProbeError, FileNotFoundError, WorkloadError) as error:
        fail(str(error))
    for finding in plan.findings:  # refusals come first
        say(f"proton-tui: {'refused' if finding.refuses else 'warning'}: {finding.message}\n")
    if plan.refusal:
        raise typer.Exit(plan.refusal.exit_code)
    writable_output(params.output)
    result = _execute(plan, stream=sys.stderr if as_json else sys.stdout)
    unwritten(result.unwritten)
    _report(result, as_json)
    raise typer.Exit(result.verdict.exit_code or (1 if result.unwritten else 0))


def _execute(plan: RunPlan, stream: TextIO) -> RunResult:
    """Run the plan on a fresh event loop; Ctrl-C (or SIGTERM) ends the run's process group."""
    from proton_tui.engine.session import execute_run

    def show_start(run_dir: Path, command: Command) -> None:
        say(f"$ {command.display()}\n", stream)

    def show_lines(lines: list[str]) -> None:
        say("".join(line + "\n" for line in lines), stream)

    return run_until_signalled(lambda stop: execute_run(plan, show_lines, stop=stop, on_start=show_start))


def _report(result: RunResult, as_json: bool) -> None:
    """The verdict, its hints, the run folder and the top of the kernel table (or run.json with --json)."""
    out = sys.stderr if as_json else sys.stdout
    from proton_tui.engine.session import pinned_text

    verdict = result.verdict
    lines = [f"\nverdict: {verdict.message}", *(f"hint: {hint}" for hint in verdict.hints),
             f"run folder: {result.run_dir}"]
    if pinned := pinned_text(result.record):
        lines.append(f"device: {pinned}")
    say("\n".join(lines) + "\n", out)
    if result.profile is not None and not result.profile.is_empty:
        from proton_tui.output.text import kernel_summary_text
        from proton_tui.view.display import Display

        display = Display(result.profile, names_for(result.profile.names, None))
        say("\n" + kernel_summary_text(display, limit=KERNEL_ROWS), out)
    if as_json:
        import msgspec

        from proton_tui.output.document import json_text

        sys.stdout.write(json_text(msgspec.to_builtins(result.record)))
        sys.stdout.flush()
