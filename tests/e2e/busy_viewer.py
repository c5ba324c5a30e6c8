"""The viewer of a capture with one key more, z, whose action computes on the app's thread for a minute (it writes
the file named second first): what a SIGTERM or SIGHUP must end at once all the same.

Usage: python -m tests.e2e.busy_viewer CAPTURE STARTED_FILE"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from textual.binding import Binding

from proton_tui.hatchet import load_profile
from proton_tui.tui.app import ProtonApp

BUSY_S = 60


class BusyViewer(ProtonApp):
    BINDINGS = [*ProtonApp.BINDINGS, Binding("z", "compute", "Compute")]

    def __init__(self, capture: Path, started: Path) -> None:
        super().__init__(load_profile(capture))
        self.started = started

    def action_compute(self) -> None:
        self.started.write_text("computing\n")
        end = time.monotonic() + BUSY_S
        while time.monotonic() < end:  # Python steps, one after another, never back to the event loop
            pass


if __name__ == "__main__":
    BusyViewer(Path(sys.argv[1]), Path(sys.argv[2])).run_to_the_end()
