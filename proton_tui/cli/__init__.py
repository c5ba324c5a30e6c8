"""The `proton-tui` command line (Typer): one module per command. Textual is imported only when a TUI is about to
open, so `--help` stays fast."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from typer._click.exceptions import ClickException, UsageError

from proton_tui.cli import check, diff, doctor, run, view
from proton_tui.cli.common import OutputOption, PythonOption, paragraphs
from proton_tui.console import error_line

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    help=paragraphs("""Capture a Triton kernel with Proton and explore where GPU time goes.

    With no command, proton-tui opens the TUI: the form of a new capture (the payload's and Proton's parameters),
    its run, the capture's table, flame view and timeline, the box check and the doctor. Each command below does
    one of those from the command line."""),
)


TAKE_RUN_OPTIONS = ("run", "check", "doctor")  # the commands with their own --python and --output


@app.callback(invoke_without_command=True)
def start(
    ctx: typer.Context,
    python: PythonOption = None,
    output: OutputOption = None,
    version: Annotated[bool, typer.Option("--version", help="Print proton-tui's version and exit.")] = False,
) -> None:
    """With no command, open the interactive session: set parameters, run, explore the capture."""
    if version:
        from proton_tui import __version__

        typer.echo(f"proton-tui {__version__}")
        raise typer.Exit(0)
    given = [flag for flag, value in (("--python", python), ("--output", output)) if value is not None]
    if ctx.invoked_subcommand is not None and given:  # the TUI's options: a command takes its own, after it
        command, flag = ctx.invoked_subcommand, given[0]
        where = f"put it after the command (proton-tui {command} {flag} …)" if command in TAKE_RUN_OPTIONS \
            else f"{command} takes none"
        raise UsageError(f"{flag} before a command is the TUI's option: {where}")
    if ctx.invoked_subcommand is None:
        from proton_tui.tui.app import ProtonApp

        ProtonApp(python=python, output=output).run_to_the_end()


for command in (view, run, check, diff, doctor):
    command.register(app)


def main() -> None:
    """The command line (from `entry.main`): every usage error is one line on stderr with exit code 2, never a
    traceback."""
    args, command = run.split_command(sys.argv[1:])
    try:
        code = app(args=args, standalone_mode=False, obj={"command": command})
    except ClickException as error:
        typer.echo(error_line(error.format_message()), err=True)
        code = error.exit_code
    except typer.Abort:
        code = 1
    except BrokenPipeError:
        sys.stderr.close()  # the reader went away (`| head`): nothing left to say
        code = 0
    sys.exit(code if isinstance(code, int) else 0)
