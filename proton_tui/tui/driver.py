"""Textual's Linux terminal driver, except for four things. It can give the terminal back from another thread while
the app's own is busy (a SIGTERM or SIGHUP that the app's quit does not answer in time: `give_back_now`). When
the app ends while a capture is still being read (the read is abandoned and the process ends next), giving the
terminal back does not wait for the input thread. And a SIGCONT resumes the app only after the app itself was
suspended: Textual's driver starts application mode again on any SIGCONT (a terminal closed by tmux or SSH sends one
with its SIGHUP), a second writer thread beside the first that the app's end then waits on.

Textual's input thread polls the terminal with `select` timeouts of 0.1 s, and stopping it waits for the current
one and then one more, on every quit (docs/measurements.md, row 41). Here it waits no longer than the parser's
pending timeout: a lone Escape is a key once the escape delay has passed since it came, not at the first poll after
that, which added up to 0.1 s to every Escape. The delay is 50 ms unless ESCDELAY says otherwise (Textual's default
is 100 ms; a key's escape sequence comes in one read, so a lone ESC that long is the Escape key). Everything else
that gives the terminal back (mouse reporting, bracketed paste, line wrap, the saved terminal modes, the main
screen, the cursor) is done as Textual does it."""

from __future__ import annotations

import os
import selectors
import signal
import termios
from codecs import getincrementaldecoder

from textual import constants
from textual._loop import loop_last
from textual._parser import ParseError
from textual._time import get_time
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

POLL = 0.1  # seconds: the longest wait for input, as Textual's own input thread
ESCAPE_DELAY = 0.05  # seconds a lone ESC waits for the rest of a sequence before it is the Escape key

if "ESCDELAY" not in os.environ:
    constants.ESCAPE_DELAY = ESCAPE_DELAY


def poll_timeout(parser: XTermParser) -> float:
    """How long the input thread may wait for input: until the parser's pending timeout (a lone ESC becoming the
    Escape key), at most POLL."""
    due = parser._timeout_time
    return POLL if due is None else min(POLL, max(0.0, due - get_time()))


class LinuxDriverQuickExit(LinuxDriver):
    _suspended = False

    def suspend_application_mode(self) -> None:
        self._suspended = True
        super().suspend_application_mode()

    def resume_application_mode(self) -> None:
        self._suspended = False
        super().resume_application_mode()

    def _sigcont_application(self, *_) -> None:
        if self._suspended:  # a SIGCONT after a suspend of the app's own: resume; any other changes nothing
            super()._sigcont_application()

    def disable_input(self) -> None:
        if not getattr(self._app, "abandoning_read", False):
            super().disable_input()
            return
        if not self.exit_event.is_set():
            signal.signal(signal.SIGWINCH, signal.SIG_DFL)
            self._disable_mouse_support()
            self.exit_event.set()  # the input thread stops at its next turn; the process does not wait for it

    def give_back_now(self) -> None:
        """Give the terminal back as `stop_application_mode` does, from a thread other than the app's (which is busy
        and never returns to its event loop): what was queued for the terminal is written first, then the sequences
        that end the app's modes; the saved terminal modes last. The process ends next."""
        if self._writer_thread is None or not self._writer_thread.is_alive():
            return
        self.exit_event.set()
        self._disable_mouse_support()
        self._disable_bracketed_paste()
        self._enable_line_wrap()
        self._disable_in_band_window_resize()
        for sequence in ("\x1b[<u", "\x1b[?1049l", "\x1b[?25h", "\x1b[?1004l"):  # as stop_application_mode
            self.write(sequence)
        self._writer_thread.stop()  # returns once all of it is written
        self.restore_terminal_modes()

    def restore_terminal_modes(self) -> None:
        """The terminal's modes as they were before the app (echo, line editing); needs no writes, so it works on a
        terminal that no longer reads what the app writes."""
        if self.attrs_before is not None:
            try:
                termios.tcsetattr(self.fileno, termios.TCSANOW, self.attrs_before)
            except termios.error:
                pass

    def run_input_thread(self) -> None:
        """Textual's input thread (textual 8.2.8, `LinuxDriver.run_input_thread`), its waits cut to the parser's
        pending timeout (`poll_timeout`)."""
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        fileno = self.fileno
        parser = XTermParser(self._debug)
        feed, tick = parser.feed, parser.tick
        decode = getincrementaldecoder("utf-8")().decode

        def process_selector_events(selector_events: list, final: bool = False) -> None:
            for last, (_selector_key, mask) in loop_last(selector_events):
                if mask & selectors.EVENT_READ:
                    unicode_data = decode(os.read(fileno, 1024 * 4), final=final and last)
                    if not unicode_data:
                        break  # stdin is a pipe that ended
                    for event in feed(unicode_data):
                        self.process_message(event)
            for event in tick():
                self.process_message(event)

        try:
            while not self.exit_event.is_set():
                process_selector_events(selector.select(poll_timeout(parser)))
            selector.unregister(self.fileno)
            process_selector_events(selector.select(POLL), final=True)
        finally:
            selector.close()
            try:
                for _event in feed(""):
                    pass
            except (EOFError, ParseError):
                pass
