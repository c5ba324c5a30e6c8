"""The `proton-tui` entry point, and how `view` opens the viewer on a terminal.

`proton-tui view FILE` on a terminal, the command's plainest form, opens the viewer without importing the command
line (typer: ~0.07 s of a 2-core machine's start, during which the loader child of a large capture would not yet
be working); every other form goes through Typer (`cli.py`), whose `view` opens the viewer the same way.
"""

from __future__ import annotations

import re
import sys
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .hatchet import PendingLoad
    from .tui.app import ProtonApp

# Importing the TUI and drawing its first screen take ~0.4–0.5 s while a loader child works (2 cores, measured: the
# child's fork to this process's load); counted as 0.42 s, which gives the child the part that measured as fast or
# faster at 100k (79 % of the file against 69 %: 0.93 against 0.97 s in 16 alternating pairs, then even).
VIEWER_START_S = 0.42


def main() -> None:
    """Console-script entry."""
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "view" and not args[1].startswith("-") and sys.stdout.isatty():
        try:
            error = open_viewer(Path(args[1]), show_internal=False)
        except KeyboardInterrupt:  # before the TUI is up (it takes Ctrl-C as a key): as Typer's commands end
            print(file=sys.stderr)
            sys.exit(1)
        if error is not None:
            print(error_line(error), file=sys.stderr)
            sys.exit(2)
        sys.exit(0)
    from .cli import main as command_line

    command_line()


def error_line(message: str) -> str:
    return f"proton-tui: error: {message}"


def open_viewer(file: Path, show_internal: bool, include: re.Pattern | None = None,
                exclude: re.Pattern | None = None) -> str | None:
    """Open FILE in the viewer until the user quits; the one-line reason when it cannot be loaded."""
    from .hatchet import CaptureError, PendingLoad

    try:
        pending = PendingLoad(file, show_internal, busy_s=VIEWER_START_S)
    except CaptureError as error:
        return str(error)
    with closing(pending):
        viewer = viewer_app(pending, include, exclude)
        viewer.run()
    return viewer.load_error


def viewer_app(pending: PendingLoad, include: re.Pattern | None = None,
               exclude: re.Pattern | None = None) -> ProtonApp:
    """The viewer of a capture being loaded: the TUI is imported and its first screen drawn while a forked child
    loads part of a large capture; that screen then finishes the load."""
    from .tui.app import ProtonApp
    from .tui.screens import Opening

    return ProtonApp(opening=Opening(pending.path, f"Reading {pending.path} ({size_text(pending.path)})…",
                                     lambda: pending.finish().filtered(include, exclude)))


def size_text(path: Path) -> str:
    size = path.stat().st_size
    return f"{size / 1e6:,.0f} MB" if size >= 1e6 else f"{size / 1e3:,.0f} kB"
