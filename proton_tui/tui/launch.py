"""Open the TUI's viewer on a capture file (or a rank set: a folder of rank captures, or captures one per rank): the
file is checked and mapped at once (a bad one is reported before the TUI starts), the viewer's first screen says it
is being read and then reads it."""

from __future__ import annotations

import os
import sys
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from proton_tui.hatchet import PendingLoad
    from proton_tui.tui.app import ProtonApp
    from proton_tui.view.filters import ViewFilter
    from proton_tui.view.reading import Reading

def open_viewer(file: Path, view_filter: ViewFilter | None = None, show_internal: bool = False,
                clock_khz: int | None = None) -> str | None:
    """Open FILE in the viewer until the user quits; the one-line reason when it cannot be loaded. `clock_khz`: the
    SM clock an instrumentation trace's cycles are shown as time at (``open_capture``)."""
    from proton_tui.hatchet import CaptureError, pending_capture
    from proton_tui.hatchet.source import STDIN

    if file.is_dir():  # a folder of rank captures
        return open_rank_viewer([file], view_filter)
    try:
        pending = pending_capture(file, sm_clock=clock_khz, show_internal=show_internal)
    except CaptureError as error:
        return str(error)
    if pending.path == STDIN and not sys.stdin.isatty():  # the capture came through standard input
        try:
            keyboard = os.open("/dev/tty", os.O_RDONLY)
        except OSError:
            pending.close()
            return "-: the capture was read from standard input and no terminal is left for the keys"
        os.dup2(keyboard, 0)
        os.close(keyboard)
    from proton_tui.view.reading import read_now

    # a trace decoded by workers is read while Textual is imported and starts; one read here would hold the
    # interpreter through Textual's start instead (its first frame 0.3 s later on the 2-core machine)
    reading = read_now(pending) if pending.decoded_by_workers else None
    with closing(pending):
        viewer = viewer_app(pending, view_filter, reading)
        viewer.run_to_the_end()
    return viewer.load_error


def open_rank_viewer(paths: list[Path], view_filter: ViewFilter | None = None) -> str | None:
    """Open a rank set (a folder of rank captures, or captures given one per rank) in the viewer until the user
    quits; the one-line reason when it cannot be: a folder with no capture, a file that is not there, trees and
    traces mixed (said before the TUI starts), a capture that cannot be read (said as the TUI ends)."""
    from proton_tui.output.ranks import RankSetError, rank_files
    from proton_tui.tui.app import ProtonApp
    from proton_tui.tui.opening import Opening
    from proton_tui.view.filters import ViewFilter

    try:
        files = rank_files(paths)
    except RankSetError as error:
        return str(error)
    viewer = ProtonApp(opening=Opening.of_rank_set(files, view_filter or ViewFilter()))
    viewer.run_to_the_end()
    return viewer.load_error


def viewer_app(pending: PendingLoad, view_filter: ViewFilter | None = None,
               reading: Reading | None = None) -> ProtonApp:
    """The viewer of a capture about to be read (`pending_capture`): its first screen says so and then reads it (or
    takes over `reading`, its read already under way)."""
    from proton_tui.tui.app import ProtonApp
    from proton_tui.tui.opening import Opening
    from proton_tui.view.filters import ViewFilter

    return ProtonApp(opening=Opening.of(pending, view_filter or ViewFilter(), reading=reading))
