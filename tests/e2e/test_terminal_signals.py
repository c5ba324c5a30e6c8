"""The viewer on a pseudo-terminal, under the signals a terminal's end brings: a SIGTERM while the terminal no longer
reads what the viewer writes (a stalled SSH connection), and a SIGCONT that follows no suspend (tmux and SSH send one
with the SIGHUP of a closed terminal)."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time

from tests.helpers import FIXTURES, REPO

CAPTURE = FIXTURES / "vecadd_auto.hatchet"
ALTERNATE_SCREEN_ON = b"\x1b[?1049h"


def set_size(fd: int, rows: int, columns: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))


def start_viewer() -> tuple[subprocess.Popen, int, bytes]:
    """`proton-tui view CAPTURE` on a new pseudo-terminal of 120×40, read until its table is drawn: the process, the
    terminal's leader side, what it wrote so far."""
    leader, follower = pty.openpty()
    set_size(follower, 40, 120)
    env = {key: value for key, value in os.environ.items() if key not in ("TMUX", "TMUX_PANE", "COLUMNS", "LINES")}
    viewer = subprocess.Popen([sys.executable, "-m", "proton_tui", "view", str(CAPTURE)], stdin=follower,
                              stdout=follower, stderr=follower, start_new_session=True, cwd=REPO,
                              env={**env, "TERM": "xterm-256color"})
    os.close(follower)
    written, deadline = b"", time.monotonic() + 60
    while b"GPU time" not in written:
        assert time.monotonic() < deadline, f"the table was not drawn: {written[-2000:]!r}"
        if select.select([leader], [], [], 0.1)[0]:
            written += os.read(leader, 65536)
    return viewer, leader, written


def read_while_it_writes(leader: int, quiet_s: float = 0.5) -> bytes:
    written = b""
    while select.select([leader], [], [], quiet_s)[0]:
        try:
            written += os.read(leader, 65536)
        except OSError:  # the terminal's other side closed: the viewer ended
            break
    return written


def test_a_sigterm_ends_the_viewer_when_the_terminal_no_longer_reads():
    """Redraws the terminal never reads fill it and then the viewer's own queue of writes: a SIGTERM still ends the
    process within seconds, with the status of a death by SIGTERM, and the terminal's modes come back."""
    viewer, leader, _ = start_viewer()
    try:
        for turn in range(60):  # each resize redraws the whole screen; nothing of it is read
            set_size(leader, 40 + turn % 2 * 10, 120 + turn % 2 * 40)
            viewer.send_signal(signal.SIGWINCH)
            time.sleep(0.02)
        viewer.send_signal(signal.SIGTERM)
        try:
            code = viewer.wait(timeout=15)
        except subprocess.TimeoutExpired:
            raise AssertionError("SIGTERM did not end a viewer whose terminal stopped reading") from None
        assert code in (128 + signal.SIGTERM, -signal.SIGTERM)
        modes = termios.tcgetattr(leader)[3]
        assert modes & termios.ECHO and modes & termios.ICANON, "the terminal's modes were not given back"
    finally:
        if viewer.poll() is None:
            viewer.kill()
            viewer.wait()
        os.close(leader)


def test_a_sigcont_that_follows_no_suspend_changes_nothing_and_q_still_quits():
    """A SIGCONT with no suspend before it: the viewer does not start its terminal mode again (no second switch to the
    alternate screen), and q then quits at once with status 0."""
    viewer, leader, _ = start_viewer()
    try:
        viewer.send_signal(signal.SIGCONT)
        time.sleep(0.5)
        after = read_while_it_writes(leader)
        assert ALTERNATE_SCREEN_ON not in after, "a SIGCONT started the terminal mode a second time"
        os.write(leader, b"q")
        read_while_it_writes(leader)
        assert viewer.wait(timeout=15) == 0
    finally:
        if viewer.poll() is None:
            viewer.kill()
            viewer.wait()
        os.close(leader)
