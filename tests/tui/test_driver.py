"""The terminal driver's input thread: a lone Escape becomes the Escape key once the escape delay has passed, not at
the next poll of the terminal after it."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from textual import events
from textual._xterm_parser import XTermParser

from proton_tui.tui.driver import ESCAPE_DELAY, POLL, poll_timeout


def test_the_input_thread_waits_no_longer_than_a_lone_escapes_delay():
    parser = XTermParser()
    assert poll_timeout(parser) == POLL  # nothing pending: the usual poll
    assert list(parser.feed("\x1b")) == []  # the start of a sequence, or the Escape key: not known yet
    waited = poll_timeout(parser)
    assert 0 <= waited <= ESCAPE_DELAY < POLL  # 0 where the delay had passed already (a loaded machine)
    time.sleep(waited)
    keys = [event.key for event in parser.tick() if isinstance(event, events.Key)]
    assert keys == ["escape"] and poll_timeout(parser) == POLL


def test_escdelay_in_the_environment_is_kept():
    script = "import proton_tui.tui.driver, textual.constants as c; print(c.ESCAPE_DELAY)"
    env = {key: value for key, value in os.environ.items() if key != "ESCDELAY"}
    ours = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    theirs = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env={**env, "ESCDELAY": "250"}, check=True)
    assert float(ours.stdout) == ESCAPE_DELAY and float(theirs.stdout) == 0.25
