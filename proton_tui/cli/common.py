"""What every command shares: the options declared once, one-line errors with exit code 2, and running until a
signal."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn, Optional, TextIO, TypeVar

import typer
from typer.core import TyperCommand

from proton_tui.console import error_line, printable
from proton_tui.engine.params import PARAMS

if TYPE_CHECKING:
    import asyncio

    from proton_tui.hatchet import Profile
    from proton_tui.view.filters import ViewFilter
    from proton_tui.view.names import Names

# What an option that takes a number (or a list of them) shows in --help instead of Typer's `<str>`: the options are
# read as text so that a bad value is this program's one-line error.
METAVARS = {"--size": "SIZE", "--iters": "INTEGER", "--block-size": "INTEGER", "--timeout": "SECONDS",
            "--warps": "LIST", "--buffer-size": "SIZE", "--device": "INDEX|auto|cpu"}


class Command(TyperCommand):
    """A command whose usage line names its arguments as written (`FILE`, not Typer's `{file}`)."""

    def collect_usage_pieces(self, ctx) -> list[str]:
        return [piece[1:-1] if piece.startswith("{") and piece.endswith("}") else piece
                for piece in super().collect_usage_pieces(ctx)]


def paragraphs(text: str) -> str:
    """A help text as paragraphs that Rich wraps to the terminal: the lines of each paragraph joined, a paragraph
    whose lines are indented (a list) kept as written."""
    import inspect

    kept = []
    for paragraph in inspect.cleandoc(text).split("\n\n"):
        lines = paragraph.splitlines()
        kept.append(paragraph if any(line.startswith(" ") for line in lines) else " ".join(paragraph.split()))
    return "\n\n".join(kept)


def command(app: typer.Typer, name: str, function: Callable, help: str | None = None, **settings) -> None:
    """Add `function` as command `name`: its help (else its docstring) as paragraphs, its usage line plain."""
    app.command(name, cls=Command, help=paragraphs(help or function.__doc__ or ""), **settings)(function)


def _interpreter(value: str | None) -> str | None:
    if value is not None and not value.strip():
        fail("--python: an empty path names no interpreter")
    return value


PythonOption = Annotated[Optional[str], typer.Option(
    PARAMS["python"].flag, help=PARAMS["python"].cli_help, show_default=False, callback=_interpreter)]
def named_path(flag: str) -> Callable[[object], Path | None]:
    """The callback of an option that names a file or folder: its Path, the option refused in one line when the
    name is blank (a Path of '' would be the current folder)."""
    def named(value: object) -> Path | None:
        if value is None:
            return None
        if not str(value).strip():
            fail(f"{flag}: no file or folder name given")
        return Path(value)
    return named


OutputOption = Annotated[Optional[str], typer.Option(
    PARAMS["output"].flag, help=PARAMS["output"].cli_help, show_default=False, metavar="PATH",
    callback=named_path(PARAMS["output"].flag))]
ReportDirOption = Annotated[Optional[str], typer.Option(
    "--report-dir", metavar="PATH", callback=named_path("--report-dir"), show_default=False,
    help="Also write the JSON report into this folder as KIND-HOST-TIME.json, never over another file: one task per "
    "node under srun or mpirun into a shared folder, then `proton-tui view FOLDER` shows the fleet (docs/check.md).")]
IncludeOption = Annotated[Optional[str], typer.Option(
    "--include", help="Keep nodes whose name (as shown or raw) matches REGEX, with their ancestors.")]
ExcludeOption = Annotated[Optional[str], typer.Option(
    "--exclude", help="Drop nodes whose name (as shown or raw) matches REGEX, with their subtrees.")]
RawNamesOption = Annotated[bool, typer.Option("--raw-names", help="The same as --names raw.")]
NamesOption = Annotated[Optional[str], typer.Option(
    "--names", help="Names short (C++ base names with what tells kernels apart; Python frames as func file:line), "
    "full (C++ demangled whole; Python frames with their path) or raw (as the capture has them).",
    show_default="short")]
FLAG_LABELS = {"include": "--include", "exclude": "--exclude", "threshold": "--threshold", "depth": "--depth"}


def shown(text: str) -> str:
    """Text as the command line prints it for people: each line printable (`printable`: a path, a command line or
    a message from a payload never moves the cursor or renames the terminal), its newlines kept. JSON is printed
    exact instead."""
    return "\n".join(printable(line) for line in text.split("\n"))


def say(text: str, stream: TextIO | None = None) -> None:
    """Write `text` as `shown` has it on `stream` (stderr unless given) and flush."""
    stream = sys.stderr if stream is None else stream
    stream.write(shown(text))
    stream.flush()


def fail(message: str) -> NoReturn:
    """Print a one-line error and exit with code 2."""
    typer.echo(error_line(message), err=True)
    raise typer.Exit(2)


def view_filter(include: str | None = None, exclude: str | None = None, threshold: str | None = None,
                depth: str | None = None, show_empty: bool = False) -> ViewFilter:
    """The filter options as one ViewFilter; a bad value is a one-line error naming its flag."""
    from proton_tui.view.filters import FilterError, ViewFilter

    try:
        return ViewFilter.parse(include, exclude, threshold, depth, labels=FLAG_LABELS, show_empty=show_empty)
    except FilterError as error:
        fail(str(error))


def print_report(report, text_of: Callable[[object], str], as_json: bool) -> NoReturn:
    """A finished check's or doctor's report on stdout, as JSON or as `text_of` writes it; exit with its code (1
    rather than 0 when a file of it could not be written, each said on stderr in one line)."""
    unwritten(report.unwritten)
    if as_json:
        from proton_tui.output.document import json_text

        sys.stdout.write(json_text(report.to_json()))
    else:
        sys.stdout.write(shown(text_of(report)))
    sys.stdout.flush()
    raise typer.Exit(report.exit_code or (1 if report.unwritten else 0))


def unwritten(lines: list[str] | tuple[str, ...]) -> None:
    """One error line on stderr for each file a command could not write whole."""
    for line in lines:
        typer.echo(error_line(line), err=True)


def writable_output(output: Path, flag: str = "--output") -> Path:
    """The output folder, made if missing and proved writable by a file made and removed in it; one line naming
    `flag` when it cannot be (a file there, no rights, a read-only file system)."""
    import tempfile

    try:
        Path(output).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        fail(f"{flag} {output}: {error.strerror or error}")
    try:
        with tempfile.TemporaryFile(dir=output):
            pass
    except OSError as error:
        fail(f"{flag} {output}: no file can be made there: {error.strerror or error}")
    return Path(output)


def to_fleet(report, folder: Path | None):
    """A finished check's or doctor's report, also written into a fleet's shared `folder` (when given) under a name
    of its own (check-HOST-TIME.json), never over another file; where it went is said on stderr."""
    if folder is not None:
        from proton_tui.records import UnwrittenError, write_fleet_report

        try:
            say(f"proton-tui: report written to {write_fleet_report(folder, report.to_record())}\n", sys.stderr)
        except UnwrittenError as error:
            report.unwritten.append(str(error))
    return report


def load(path: Path, show_internal: bool = False, sm_clock_khz: int | None = None) -> Profile:
    """A capture, complete with the run.json beside it when its run wrote it (an instrumentation trace's cycles
    timed at ``sm_clock_khz`` when given), or a one-line error naming the file or the flag."""
    from proton_tui.hatchet import CaptureError, open_capture

    try:
        return open_capture(path, sm_clock=sm_clock_khz, show_internal=show_internal)
    except CaptureError as error:
        fail(str(error))


def load_scoped(*targets: str) -> list[Profile]:
    """Each of `FILE` or `FILE:SCOPE` (`hatchet.scope.split_target`): the capture (a file named twice is read once),
    restricted to the scope's subtree when one is named; a one-line error naming the file or the scope."""
    from proton_tui.hatchet import CaptureError
    from proton_tui.hatchet.scope import split_target, within

    split = [split_target(target) for target in targets]
    read: dict[Path, Profile] = {}
    for path, _ in split:
        if path not in read:
            read[path] = load(path)
    try:
        return [within(read[path], scope) for path, scope in split]
    except CaptureError as error:
        fail(str(error))


def names_for(names: Iterable[str], form: str | None, raw: bool = False) -> Names:
    """The display names of these names (captures' nodes, demangled once for all) in a form of --names (`raw`:
    --raw-names)."""
    from proton_tui.view.names import FORMS, Names

    if form is not None and form not in FORMS:
        fail(f"--names {form!r} is not a name form: use one of {', '.join(FORMS)}")
    if raw and form not in (None, "raw"):
        fail(f"--raw-names and --names {form} disagree: pick one")
    return Names.demangled(set(names), form="raw" if raw else form)


Result = TypeVar("Result")


def run_until_signalled(start: Callable[[asyncio.Event], Awaitable[Result]]) -> Result:
    """Run ``start(stop)`` on a fresh event loop; Ctrl-C or SIGTERM sets ``stop`` so the runs end their process
    groups and report, rather than dying mid-way."""
    import asyncio
    import signal

    async def main() -> Result:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(signum, stop.set)
            except (NotImplementedError, RuntimeError, ValueError):
                pass  # not the main thread: Ctrl-C keeps its default meaning
        return await start(stop)

    return asyncio.run(main())
