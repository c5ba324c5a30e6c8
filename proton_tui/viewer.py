"""Open the TUI's viewer on a capture file: the load starts at once (a large capture's loader child works while the
TUI is imported and draws its first screen), the viewer finishes it."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

from .console import size_text
from .filters import ViewFilter

if TYPE_CHECKING:
    from .hatchet import PendingLoad
    from .tui.app import ProtonApp

# Seconds of importing the TUI and drawing its first screen while a loader child works, calibrated on the 2-core
# machine at 100k nodes (benchmarks/README.md, "Where the time goes").
VIEWER_START_S = 0.42


def open_viewer(file: Path, view_filter: ViewFilter | None = None, show_internal: bool = False) -> str | None:
    """Open FILE in the viewer until the user quits; the one-line reason when it cannot be loaded."""
    from .hatchet import CaptureError, PendingLoad

    try:
        pending = PendingLoad(file, show_internal, busy_s=VIEWER_START_S)
    except CaptureError as error:
        return str(error)
    with closing(pending):
        viewer = viewer_app(pending, view_filter)
        viewer.run()
    return viewer.load_error


def viewer_app(pending: PendingLoad, view_filter: ViewFilter | None = None) -> ProtonApp:
    """The viewer of a capture being loaded: its first screen says so and then finishes the load."""
    from .tui.app import ProtonApp
    from .tui.messages import Opening

    return ProtonApp(opening=Opening(pending.path, f"Reading {pending.path} ({size_text(pending.path)})…",
                                     pending.finish, view_filter or ViewFilter()))
