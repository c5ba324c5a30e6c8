"""Runs die with proton-tui, even when it is killed outright (SIGKILL leaves no handler to end them): one small
watchdog process per proton-tui holds the read end of a pipe whose write end only proton-tui holds, and is told
each run's process group as it starts and ends. When the pipe closes without a word (proton-tui is gone), it
kills every group still registered, grandchildren included. Run as a script it is that watchdog."""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import threading
import time

KILL_ROUNDS, KILL_PAUSE_S = 100, 0.02  # how long an orphaned group is killed again until it is empty: two seconds
_lock = threading.Lock()
_watchdog: subprocess.Popen | None = None
_owner = os.getpid()  # the process the watchdog watches (a forked copy starts its own)


def _started() -> subprocess.Popen | None:
    """The watchdog of this process, started on first use; None where it cannot start (runs then go unwatched)."""
    global _watchdog, _owner
    if _watchdog is not None and _watchdog.poll() is None and os.getpid() == _owner:
        return _watchdog
    _owner = os.getpid()
    try:  # its own session: a Ctrl-C or hang-up for proton-tui's terminal does not reach it
        _watchdog = subprocess.Popen([sys.executable, "-I", "-S", __file__], stdin=subprocess.PIPE,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        _watchdog = None
    return _watchdog


def _tell(word: str) -> None:
    with _lock:
        if (watchdog := _started()) is None:
            return
        try:
            watchdog.stdin.write(word.encode() + b"\n")
            watchdog.stdin.flush()
        except OSError:
            pass  # the watchdog is gone: the run's own clean-up still ends its group


def start() -> None:
    """Start this process's watchdog now, if it is not running (`watch` would start it, later)."""
    with _lock:
        _started()


def watch(group: int) -> None:
    """Kill process group `group` if proton-tui dies before `release(group)`."""
    _tell(f"+{group}")


def release(group: int) -> None:
    """The group has been ended (or ended itself): no longer watched."""
    _tell(f"-{group}")


@atexit.register
def _close() -> None:
    """proton-tui ends normally: the watchdog is told so and exits, killing nothing."""
    with _lock:
        if _watchdog is not None and os.getpid() == _owner:
            try:
                _watchdog.stdin.write(b"exit\n")
                _watchdog.stdin.close()
                _watchdog.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass


def group_alive(group: int) -> bool:
    """Whether any process of the group is still running (zombies waiting to be reaped do not count)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        try:
            os.killpg(group, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    for entry in entries:
        if entry.isdigit() and (stat := _proc_stat(entry)) and stat[0] != "Z" and int(stat[2]) == group:
            return True
    return False


def _proc_stat(pid: str) -> list[str] | None:
    """Fields after the command name of /proc/<pid>/stat: state, ppid, pgrp, …"""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            data = stat.read()
    except OSError:
        return None
    return data[data.rfind(b")") + 2:].decode().split()


def main() -> None:
    """The watchdog: read `+group` / `-group` lines until `exit`; at end of input without it, kill what is left."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)  # only the end of its pipe ends it
    groups: set[int] = set()
    for line in sys.stdin.buffer:
        word = line.strip().decode()
        if word == "exit":
            return
        if word[:1] in "+-" and word[1:].isdigit():
            (groups.add if word[0] == "+" else groups.discard)(int(word[1:]))
    for _ in range(KILL_ROUNDS):  # again until no process of a group runs: one forked as it was killed is caught
        for group in list(groups):
            try:
                os.killpg(group, signal.SIGKILL)
            except OSError:
                groups.discard(group)  # the group is gone
                continue
            if not group_alive(group):  # its processes are dead, zombies at most until their new parent reaps them
                groups.discard(group)
        if not groups:
            return
        time.sleep(KILL_PAUSE_S)


if __name__ == "__main__":
    main()
