"""The `proton-tui` console script (and `python -m proton_tui`).

`proton-tui view FILE` on a terminal (or `view DIR`, `view FILE FILE …`: a rank set), the command's plainest form,
opens the viewer without importing the command line (typer's import is part of every start: docs/measurements.md);
every other form goes through the Typer command line (`cli`), whose `view` opens the viewer the same way.
"""

from __future__ import annotations

import sys
from pathlib import Path

from proton_tui.cache import keep_bytecode


def main() -> None:
    """Console-script entry."""
    on_a_terminal = sys.stdout is not None and sys.stdout.isatty()
    if on_a_terminal:  # someone waits at it, not a job's ranks all at once
        keep_bytecode()
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "view" and not any(arg.startswith("-") for arg in args[1:]) \
            and on_a_terminal and not _fleet(args[1:]):  # a capture, or a rank set: a folder or several
        from proton_tui.console import error_line
        from proton_tui.hatchet.source import capture_path
        from proton_tui.tui.launch import open_rank_viewer, open_viewer

        try:
            error = open_viewer(capture_path(args[1])) if len(args) == 2 \
                else open_rank_viewer([capture_path(arg) for arg in args[1:]])
        except KeyboardInterrupt:  # before the TUI is up (it takes Ctrl-C as a key): as Typer's commands end
            print(file=sys.stderr)
            sys.exit(1)
        if error is not None:
            print(error_line(error), file=sys.stderr)
            sys.exit(2)
        sys.exit(0)
    from proton_tui.cli import main as command_line

    command_line()


def _fleet(paths: list[str]) -> bool:
    """A folder of a fleet's reports (check --report-dir): the command line shows it, as text."""
    if len(paths) != 1 or not Path(paths[0]).is_dir():  # only a folder pays for the import
        return False
    from proton_tui.engine.fleet import is_fleet_folder

    return is_fleet_folder(Path(paths[0]))
