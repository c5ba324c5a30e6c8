"""What the tmux benchmarks share: running a tmux command, and reading what a session's pane shows."""

from __future__ import annotations

import subprocess


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def screen(session: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout
