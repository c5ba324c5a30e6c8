"""Run a command as an asyncio subprocess in its own process group and deliver its output as clean lines.

stdout and stderr are merged, stdin is closed. Cancelling (the ``stop`` event, the task itself, or the
timeout) ends the whole process group, so a grandchild holding the pipe is not left behind.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from proton_tui.engine import watchdog
from proton_tui.engine.watchdog import group_alive

CHUNK_BYTES = 64 * 1024
MAX_LINE_BYTES = 1024 * 1024  # a longer run without a newline is delivered as a line of its own
POLL_S = 0.01  # how soon an exit, a stop or a timeout is noticed (a capture's wall time includes it)
ANSI_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

LineCallback = Callable[[list[str]], None]


def clean_line(raw: bytes) -> str:
    """Decode (bad UTF-8 replaced), drop ANSI escapes, keep what a terminal would show after ``\\r``."""
    text = ANSI_ESCAPE.sub("", raw.decode("utf-8", errors="replace"))
    segments = [segment for segment in text.split("\r") if segment]
    return CONTROL_CHARS.sub("", segments[-1] if segments else "")


class LineSplitter:
    """Cut a byte stream into lines; an unfinished line waits for its newline."""

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, chunk: bytes) -> list[str]:
        *complete, self._pending = (self._pending + chunk).split(b"\n")
        if len(self._pending) > MAX_LINE_BYTES:
            complete.append(self._pending)
            self._pending = b""
        return [clean_line(line) for line in complete]

    def flush(self) -> list[str]:
        """The unfinished last line, if it shows anything."""
        rest, self._pending = self._pending, b""
        line = clean_line(rest)
        return [line] if line else []


@dataclass(frozen=True)
class ProcessResult:
    """How the process ended. ``ended_by`` is None when it exited on its own."""

    exit_code: int | None  # negative: killed by that signal
    ended_by: str | None  # None, "cancelled" or "timeout"
    wall_s: float


async def run_process(argv: Sequence[str], on_lines: LineCallback, *, env: Mapping[str, str] | None = None,
                      timeout: float | None = None, stop: asyncio.Event | None = None,
                      grace_s: float = 2.0, cwd: str | os.PathLike | None = None) -> ProcessResult:
    """Run ``argv`` and call ``on_lines`` with each batch of lines as it arrives.

    Setting ``stop`` or passing ``timeout`` ends the process group (SIGTERM, then SIGKILL after ``grace_s``)
    and returns normally. Cancelling the task kills the group at once and re-raises.
    """
    started = time.monotonic()
    watchdog.start()  # before the child, so that no moment of its life goes unwatched but the spawn itself
    proc = await _spawn(argv, env, cwd)
    group = proc.pid  # start_new_session makes the child a group leader
    watchdog.watch(group)  # the group dies with proton-tui, even when it is killed outright
    reader = asyncio.create_task(_pump(proc.stdout, on_lines))
    try:
        ended_by = await _wait_for_exit(proc, reader, started, timeout, stop)
        if ended_by:
            await end_group(group, grace_s)
        if not await _finished_within(reader, grace_s):  # something left in the group still holds the pipe
            await end_group(group, grace_s)
            await _finished_within(reader, grace_s)
        while proc.returncode is None:  # the child watcher reaps the leader shortly after it dies
            await asyncio.sleep(POLL_S)
        return ProcessResult(proc.returncode, ended_by, time.monotonic() - started)
    finally:
        if group_alive(group):
            signal_group(group, signal.SIGKILL)
        watchdog.release(group)
        reader.cancel()  # only still running if a process outside the group holds the pipe
        await asyncio.gather(reader, return_exceptions=True)  # its last line is delivered before we return


async def _spawn(argv: Sequence[str], env: Mapping[str, str] | None,
                 cwd: str | os.PathLike | None) -> asyncio.subprocess.Process:
    """Start `argv` as the leader of a new process group. A cancel that comes while it starts (the child running,
    its pipes not yet connected) ends the whole group before it is passed on: asyncio alone would kill the child
    and leave what it had started running."""
    spawning = asyncio.ensure_future(asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        env=None if env is None else dict(env), start_new_session=True, cwd=cwd))
    try:
        return await asyncio.shield(spawning)
    except asyncio.CancelledError:
        while not spawning.done():  # a second cancel meanwhile must not reach the start: asyncio would kill the
            try:  # child alone, then wait for pipes its children hold
                await asyncio.shield(spawning)
            except asyncio.CancelledError:
                pass
            except Exception:  # noqa: BLE001 - it never started: nothing to end
                break
        if not spawning.cancelled() and spawning.exception() is None:
            signal_group(spawning.result().pid, signal.SIGKILL)
        raise


async def _pump(stream: asyncio.StreamReader, on_lines: LineCallback) -> None:
    splitter = LineSplitter()
    try:
        while chunk := await stream.read(CHUNK_BYTES):
            if lines := splitter.feed(chunk):
                on_lines(lines)
    finally:
        if lines := splitter.flush():
            on_lines(lines)


async def _wait_for_exit(proc: asyncio.subprocess.Process, reader: asyncio.Task, started: float,
                         timeout: float | None, stop: asyncio.Event | None) -> str | None:
    """Poll rather than ``proc.wait()``, which also waits for the pipe a grandchild may hold open."""
    while proc.returncode is None:
        if stop is not None and stop.is_set():
            return "cancelled"
        if timeout is not None and time.monotonic() - started >= timeout:
            return "timeout"
        if reader.done() and not reader.cancelled() and reader.exception():
            raise reader.exception()  # the line callback failed: the finally clause ends the group
        await asyncio.sleep(POLL_S)
    return None


async def _finished_within(task: asyncio.Task, seconds: float) -> bool:
    done, _ = await asyncio.wait({task}, timeout=seconds)
    if task in done and not task.cancelled() and task.exception():
        raise task.exception()
    return task in done


async def end_group(group: int, grace_s: float) -> None:
    """SIGTERM the process group, then SIGKILL whatever is still running after ``grace_s``."""
    signal_group(group, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while group_alive(group) and time.monotonic() < deadline:
        await asyncio.sleep(POLL_S)
    signal_group(group, signal.SIGKILL)


def signal_group(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone


