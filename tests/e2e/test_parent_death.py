"""A run's processes die with proton-tui even when it is killed outright (SIGKILL: no handler runs), grandchildren
included: real `run`, `check --cpu` and `doctor`, their process trees found by a variable only they inherit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.helpers import SCRIPTS


def marked(mark: str) -> list[tuple[int, bytes]]:
    """(pid, command line) of every live process whose environment holds `mark`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if mark.encode() not in (entry / "environ").read_bytes():
                continue
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if stat[stat.rfind(")") + 2] != "Z":
            found.append((int(entry.name), cmdline))
    return found


@pytest.mark.parametrize("command, payload", [
    (["run", "--no-profile", "--payload", str(SCRIPTS / "hang.py")], b"hang.py"),
    (["check", "--cpu", "--size", "2^24", "--iters", "2"], b"vecadd.py"),
    (["doctor"], b"vecadd.py"),
])
def test_sigkill_of_proton_tui_leaves_no_process_of_its_runs(tmp_path, command, payload):
    mark = f"PROTON_TUI_TEST_MARK={uuid.uuid4().hex}"
    name, value = mark.split("=")
    env = {**os.environ, name: value, "PROTON_TUI_TEST_PIDFILE": str(tmp_path / "pids")}
    cli = subprocess.Popen([sys.executable, "-m", "proton_tui", *command, "--output", str(tmp_path / "runs")],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 120
        while not any(payload in cmdline for pid, cmdline in marked(mark) if pid != cli.pid):
            assert cli.poll() is None and time.monotonic() < deadline, "the payload never started"
            time.sleep(0.05)
        time.sleep(0.5)  # the payload is under way, its grandchildren started
        cli.send_signal(signal.SIGKILL)
        cli.wait(timeout=10)
        deadline = time.monotonic() + 10  # the watchdog wakes on the pipe's end; the killed processes then exit
        while (left := marked(mark)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert left == [], left
    finally:
        cli.kill()
        for pid, _ in marked(mark):
            os.kill(pid, signal.SIGKILL)
