"""The watchdog's end when proton-tui is gone: it kills each registered process group until none of its processes
runs, and stops there (a group left with zombies only, whose new parent has not reaped them yet, is done)."""

from __future__ import annotations

import io
import os
import subprocess
import sys

from proton_tui.engine import watchdog


def test_a_group_of_zombies_only_is_done_at_once(monkeypatch):
    child = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    try:
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # it has ended, not reaped: a zombie
        assert not watchdog.group_alive(child.pid)
        pauses = []
        monkeypatch.setattr(watchdog.time, "sleep", pauses.append)
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(f"+{child.pid}\n".encode())))
        watchdog.main()  # the end of its input without `exit`: proton-tui is gone
        assert pauses == []  # one round: killed, found dead, done (not killed again for two seconds)
    finally:
        child.wait()


def test_a_running_group_is_killed_and_then_done(monkeypatch):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        assert watchdog.group_alive(child.pid)
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(f"+{child.pid}\n".encode())))
        watchdog.main()
        assert child.wait(timeout=10) == -9 and not watchdog.group_alive(child.pid)
    finally:
        child.kill()
        child.wait()
