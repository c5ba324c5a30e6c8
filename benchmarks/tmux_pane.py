"""What the tmux benchmarks share: running a tmux command, and reading what a session's pane shows."""

from __future__ import annotations

import subprocess
import time


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def screen(session: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout


def until(session: str, test, seconds: float, what: str) -> float:
    """Poll the session's pane until `test(screen)`; the seconds it took. Exits naming `what` after `seconds`."""
    start = time.perf_counter()
    while not test(screen(session)):
        if time.perf_counter() - start > seconds:
            raise SystemExit(f"{what}: not on screen after {seconds:.0f} s:\n{screen(session)}")
        time.sleep(0.005)
    return time.perf_counter() - start
