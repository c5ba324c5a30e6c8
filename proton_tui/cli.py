"""The `proton-tui` command line. Textual is imported only when a TUI is about to open, so `--help` stays fast."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from typer._click.exceptions import ClickException

from .cli_check import register as register_check
from .cli_common import fail, regex_option
from .cli_diff import register as register_diff
from .cli_run import register as register_run
from .launch import error_line, open_viewer, size_text

LARGE_CAPTURE_BYTES = 50_000_000  # above this, say that a capture is being read (a 1 GB one takes seconds)

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Capture a Triton kernel with Proton and explore where GPU time goes.",
)


@app.callback(invoke_without_command=True)
def start(
    ctx: typer.Context,
    python: Annotated[
        Optional[str], typer.Option("--python", help="The workload's interpreter (default: this Python).")
    ] = None,
    output: Annotated[
        Optional[Path], typer.Option("--output", help="Folder for run folders (default: ./proton-runs).")
    ] = None,
) -> None:
    """With no command, open the interactive session: set parameters, run, explore the capture."""
    if ctx.invoked_subcommand is None:
        from .tui.app import ProtonApp

        ProtonApp(python=python, output=output).run()


@app.command()
def view(
    file: Annotated[Path, typer.Argument(help="A Proton .hatchet capture.", show_default=False)],
    plain: Annotated[bool, typer.Option("--plain", help="Print the tree as text (the default when piped).")] = False,
    kernels: Annotated[bool, typer.Option("--kernels", help="Print the flat kernel summary as text.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the metrics and kernel summaries as JSON.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="Print the kernel summary as CSV.")] = False,
    depth: Annotated[Optional[int], typer.Option("--depth", min=0, help="Tree: show nodes down to this depth.")] = None,
    threshold: Annotated[
        float, typer.Option("--threshold", min=0.0, max=100.0, help="Tree: hide nodes under this % of the total.")
    ] = 0.0,
    include: Annotated[Optional[str], typer.Option("--include", help="Keep nodes matching REGEX.")] = None,
    exclude: Annotated[Optional[str], typer.Option("--exclude", help="Drop nodes matching REGEX.")] = None,
    show_internal: Annotated[
        bool, typer.Option("--show-internal", help="Keep Proton's internal __proton_launch_metadata frames.")
    ] = False,
    export: Annotated[
        Optional[Path],
        typer.Option("--export", help="Write the view (tree, or --kernels) to a new .csv, .json or .md file."),
    ] = None,
) -> None:
    """Open a Proton capture in the kernel-time table; piped, print it as text, JSON or CSV."""
    from . import report
    from .hatchet import CaptureError, load_profile

    include_re, exclude_re = regex_option("--include", include), regex_option("--exclude", exclude)
    if sum((plain, kernels, as_json, as_csv)) > 1:
        fail("--plain, --kernels, --json and --csv are exclusive: pick one")
    if export is None and not (plain or kernels or as_json or as_csv) and sys.stdout.isatty():
        error = open_viewer(file, show_internal, include_re, exclude_re)  # `launch.main` opens `view FILE` alone
        if error is not None:
            fail(error)
        return
    if sys.stderr.isatty() and file.is_file() and file.stat().st_size > LARGE_CAPTURE_BYTES:
        typer.echo(f"proton-tui: reading {file} ({size_text(file)})…", err=True)
    try:
        profile = load_profile(file, show_internal=show_internal)
    except CaptureError as error:
        fail(str(error))
    shown = profile.filtered(include_re, exclude_re)
    if export is not None:
        from .export import export_text, format_for_path, write_export

        try:
            mask = None if kernels else shown.shown(threshold, depth)
            view_name = "kernels" if kernels else "tree"
            text = export_text(shown, view=view_name, fmt=format_for_path(export), shown=mask)
            write_export(export, text)
        except (OSError, ValueError) as error:
            fail(str(error))
        typer.echo(f"wrote the {view_name} view to {export}", err=True)
        return
    if as_json:
        import orjson

        sys.stdout.write(orjson.dumps(report.summary_json(shown), option=orjson.OPT_INDENT_2).decode() + "\n")
    elif as_csv:
        sys.stdout.write(report.kernel_csv(shown))
    elif kernels:
        sys.stdout.write(report.kernel_summary_text(shown))
    else:
        sys.stdout.write(report.tree_text(shown, shown.shown(threshold, depth)))


register_run(app)
register_check(app)
register_diff(app)


def main() -> None:
    """The command line (from `launch.main`): every usage error is one line on stderr with exit code 2, never a
    traceback."""
    try:
        code = app(standalone_mode=False)
    except ClickException as error:
        typer.echo(error_line(error.format_message()), err=True)
        code = error.exit_code
    except typer.Abort:
        code = 1
    except BrokenPipeError:
        sys.stderr.close()  # the reader went away (`| head`): nothing left to say
        code = 0
    sys.exit(code if isinstance(code, int) else 0)
