"""Textual's Linux terminal driver, except for one thing: when the app ends while a capture is still being read
(the read is abandoned and the process ends next), giving the terminal back does not wait for the input thread.

Textual's input thread polls the terminal with `select` timeouts of 0.1 s, and stopping it waits for the current
one and then one more, on every quit (docs/measurements.md, row 41). Everything else that gives the terminal back
(mouse reporting, bracketed paste, line wrap, the saved terminal modes, the main screen, the cursor) is done as
Textual does it."""

from __future__ import annotations

import signal

from textual.drivers.linux_driver import LinuxDriver


class LinuxDriverQuickExit(LinuxDriver):
    def disable_input(self) -> None:
        if not getattr(self._app, "abandoning_read", False):
            super().disable_input()
            return
        if not self.exit_event.is_set():
            signal.signal(signal.SIGWINCH, signal.SIG_DFL)
            self._disable_mouse_support()
            self.exit_event.set()  # the input thread stops at its next turn; the process does not wait for it
