"""End to end: the installed ``proton-tui`` in a real terminal (a private tmux server), driven as a user would.

Type a tiny size and iteration count into the launch form, start the CPU check (F2), read the screen until the
run passes, check its run folder, quit with ctrl+q, and check that nothing it started is left running.
The only waits are polls of the screen (``capture-pane``) with generous deadlines: CI has two slow cores and the
form's interpreter probe imports torch.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import orjson
import pytest

from tests.helpers import REPO, hostile_tree

TMUX = shutil.which("tmux")
WIDTH, HEIGHT = 120, 40
SESSION = "e2e"
POLL_S = 0.05
TAB_WAIT_S = 1.0

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed: the end-to-end test drives proton-tui in tmux "
                                            "(CI installs it with apt)"),
]


class Terminal:
    """One tmux session on a private server (its own socket): send keys, read the screen, inspect the pane."""

    def __init__(self, socket: str) -> None:
        self.socket = socket
        self.socket_path: str | None = None

    def tmux(self, *args: str, check: bool = True) -> str:
        done = subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True, timeout=30)
        if check and done.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
        return done.stdout

    def start(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        # -f /dev/null: no user configuration; remain-on-exit keeps the pane (and its exit status) after proton-tui
        # exits, so the test can read how it ended.
        subprocess.run([TMUX, "-L", self.socket, "-f", os.devnull, "new-session", "-d", "-s", SESSION,
                        "-x", str(WIDTH), "-y", str(HEIGHT), "-c", str(cwd), *argv,
                        ";", "set-option", "-g", "remain-on-exit", "on"],
                       check=True, env=env, capture_output=True, timeout=30)
        self.socket_path = self.tmux("display-message", "-p", "#{socket_path}").strip() or None

    def screen(self, history: bool = False) -> str:
        """What the pane shows; `history`: with the lines scrolled off the top, wrapped lines joined back."""
        return self.tmux("capture-pane", "-p", *(["-J", "-S", "-"] if history else []), "-t", SESSION, check=False)

    def pane(self, fmt: str) -> str:
        return self.tmux("display-message", "-p", "-t", SESSION, fmt, check=False).strip()

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.tmux("send-keys", "-t", SESSION, *(["-l"] if literal else []), *keys)

    def wait_for(self, test, seconds: float, what: str):
        """Poll the screen until ``test(screen)`` is truthy and return that value; fail with the screen."""
        deadline = time.monotonic() + seconds
        while True:
            screen = self.screen()
            if result := test(screen):
                return result
            if self.pane("#{pane_dead}") == "1":
                raise AssertionError(f"proton-tui exited while waiting for {what}:\n{screen}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: not on screen after {seconds:.0f} s; the screen:\n{screen}")
            time.sleep(POLL_S)

    def kill(self) -> None:
        """End the server and everything in it, and remove its socket (kill-server leaves the file)."""
        self.tmux("kill-server", check=False)
        if self.socket_path:
            Path(self.socket_path).unlink(missing_ok=True)


def row_of(screen: str, label: str) -> int | None:
    """The screen row (0-based) that starts with ``label``."""
    for row, line in enumerate(screen.splitlines()):
        if line.strip().startswith(label):
            return row
    return None


def focus_field(term: Terminal, label: str, max_tabs: int = 40) -> None:
    """Press Tab until the terminal cursor (Textual puts it in the focused Input) moves to ``label``'s row.

    Each Tab gets a moment to move the cursor; one that lands elsewhere is followed by another. A Tab answered
    late only costs a trip round the focus chain (Tab wraps), never a wrong field."""
    for _ in range(max_tabs):
        row = row_of(term.screen(), label)
        assert row is not None, f"no {label!r} field on screen:\n{term.screen()}"
        term.keys("Tab")
        deadline = time.monotonic() + TAB_WAIT_S
        while time.monotonic() < deadline:
            if term.pane("#{cursor_y}") == str(row):
                return
            time.sleep(POLL_S)
    raise AssertionError(f"Tab never reached the {label!r} field; the screen:\n{term.screen()}")


def type_into(term: Terminal, label: str, value: str) -> None:
    """Focus the field, erase it (end, then ctrl+u deletes everything left of the cursor), wait until the form
    says it is empty, then type the value. (Erasing and typing in one burst can lose the typing: Textual may run
    the ctrl+u binding after the characters that followed it are inserted.)"""
    focus_field(term, label)
    term.keys("C-e")
    term.keys("C-u")
    row = row_of(term.screen(), label)
    term.wait_for(lambda s: s.splitlines()[row + 1].strip().startswith("'' is not"), 15, f"{label} erased")
    term.keys(value, literal=True)
    pattern = re.compile(rf"^\s*{re.escape(label)}\s+{re.escape(value)}(\s\s|$)", re.M)
    term.wait_for(lambda s: pattern.search(s) and "'' is not" not in s, 15, f"{label} showing {value}")


def leftover_processes(marker: str) -> list[str]:
    """proton-tui or payload processes started by this test: the marker (its tmp folder) is in their command line
    or is their working directory. (The tmux server, whose command line names proton-tui too, is not one.)"""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = [arg.decode(errors="replace") for arg in (entry / "cmdline").read_bytes().split(b"\0") if arg]
            cwd = os.readlink(entry / "cwd")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state == "Z" or not argv or os.path.basename(argv[0]).startswith("tmux"):
            continue
        if not any(os.path.basename(arg) in ("proton-tui", "vecadd.py") for arg in argv):
            continue
        if any(marker in arg for arg in argv) or cwd.startswith(marker):
            found.append(f"{entry.name}: {' '.join(argv)} (cwd {cwd})")
    return found


def start_proton_tui(term: Terminal, tmp_path: Path, *args: str, linger: bool = False) -> Path:
    """Run the installed proton-tui with `args` in the terminal; the file its exit status will be written to. With
    `linger` the shell stays a while after it, so the terminal's state is read while a program still runs there."""
    script = Path(sys.executable).with_name("proton-tui")
    assert script.is_file(), f"the proton-tui console script is not installed next to {sys.executable}"
    env = {key: value for key, value in os.environ.items()
           if key not in ("TMUX", "TMUX_PANE", "COLUMNS", "LINES", "TEXTUAL", "NO_COLOR")}
    rc_file = tmp_path / f"exit-status-{uuid.uuid4().hex[:8]}"
    # sh records proton-tui's exit status (tmux's own #{pane_dead_status} is not always filled in).
    after = "; sleep 60" if linger else ""
    term.start(["sh", "-c", '"$@"; echo "$?" > "$0"' + after, str(rc_file), str(script), *args], tmp_path, env)
    return rc_file


def exit_status(term: Terminal, rc_file: Path, seconds: float, what: str) -> str:
    """proton-tui's exit status once it has exited (and its terminal closed); fails with the screen otherwise."""
    deadline = time.monotonic() + seconds
    while not (code := rc_file.read_text() if rc_file.is_file() else "").endswith("\n"):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not end proton-tui; the screen:\n{term.screen()}")
        time.sleep(POLL_S)
    while term.pane("#{pane_dead}") != "1":  # its terminal closed too
        if time.monotonic() > deadline:
            raise AssertionError(f"the pane is still open after proton-tui exited:\n{term.screen()}")
        time.sleep(POLL_S)
    return code.strip()


def assert_nothing_left(marker: str) -> None:
    deadline = time.monotonic() + 10  # a killed child may take a moment to leave the process table
    while left := leftover_processes(marker):
        if time.monotonic() > deadline:
            raise AssertionError("processes left behind after quitting:\n" + "\n".join(left))
        time.sleep(POLL_S)


def test_cpu_run_typed_in_the_tui_passes_then_quits(tmp_path):
    runs = tmp_path / "runs"
    term = Terminal(f"proton-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        rc_file = start_proton_tui(term, tmp_path, "--output", str(runs))

        # The form probes the workload's interpreter (imports torch) before it says what it found.
        term.wait_for(lambda s: "no GPU found" in s or "GPU(s):" in s, 90, "the interpreter's detection")
        assert "Triton 3.6.0" in term.screen()

        type_into(term, "Size (elements)", "4096")
        type_into(term, "Iterations", "2")
        term.keys("F2")  # CPU check: the payload through the Triton interpreter, no profile

        status = re.compile(r"^\s*(PASS|FAIL|not run|payload error|cancelled|timeout)\b.*·", re.M)
        state = term.wait_for(status.search, 120, "the run's verdict in the status line").group(1)
        screen = term.wait_for(lambda s: s if "vecadd: PASS" in s or state != "PASS" else None, 15, "the log")
        assert state == "PASS", f"the run ended {state}:\n{screen}"
        assert "vecadd: size=4096 iters=2 block_size=1024" in screen and "vecadd: PASS" in screen, screen

        folders = [folder for folder in runs.iterdir() if (folder / "run.json").is_file()]
        assert len(folders) == 1, f"expected one run folder with run.json in {runs}: {list(runs.iterdir())}"
        record = orjson.loads((folders[0] / "run.json").read_bytes())
        assert record["verdict"] == "PASS" and record["params"]["size"] == 4096 and record["params"]["iters"] == 2
        assert record["params"]["device"] == "cpu" and record["params"]["profile"] is False

        term.keys("C-q")
        code = exit_status(term, rc_file, 30, "ctrl+q")
        assert code == "0", f"proton-tui exited with status {code}:\n{term.screen()}"
        assert_nothing_left(str(tmp_path))
    finally:
        term.kill()


def test_view_of_a_large_capture_then_of_a_broken_one(tmp_path):
    """`proton-tui view` on a terminal with an 86 MB capture: the viewer says it is reading the file, then the table,
    the kernel summary, q, and no process left; then the same capture with a bad metric near its end: the one-line
    error after the TUI closes, exit status 2."""
    generator = REPO / "benchmarks" / "make_capture.py"
    subprocess.run([sys.executable, str(generator), "100000", "--out", str(tmp_path)], check=True,
                   capture_output=True, timeout=120)
    (capture,) = tmp_path.glob("*.hatchet")
    data = capture.read_bytes()
    last_time = [found.start(1) for found in re.finditer(rb'"time \(ns\)": ([1-9])', data[-1_000_000:])][-1]
    last_time += len(data) - 1_000_000  # the last kernel's time (ROOT's own zero comes after it)
    broken = tmp_path / "broken.hatchet"
    broken.write_bytes(data[:last_time] + b"-" + data[last_time:])  # made negative

    term = Terminal(f"proton-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        rc_file = start_proton_tui(term, tmp_path, "view", str(capture))
        term.wait_for(lambda s: f"Reading {capture} (86 MB)…" in s, 30, "the viewer reading the capture")
        screen = term.wait_for(lambda s: s if "GPU time" in s and "step_" in s else None, 60, "the table")
        assert re.search(r"^\s*name\s.*time", screen, re.M), screen
        term.keys("k")
        term.wait_for(lambda s: re.search(r"^\s*kernel\s", s, re.M), 15, "the kernel summary")
        term.keys("q")
        code = exit_status(term, rc_file, 30, "q")
        assert code == "0", f"proton-tui exited with status {code}:\n{term.screen()}"
        assert_nothing_left(str(tmp_path))
        term.kill()

        term = Terminal(f"proton-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        rc_file = start_proton_tui(term, tmp_path, "view", str(broken))
        code = exit_status(term, rc_file, 60, "the broken capture")
        screen = term.screen(history=True)
        assert code == "2", f"proton-tui exited with status {code}:\n{screen}"
        error = rf"^proton-tui: error: {re.escape(str(broken))}: node '.+': negative time or cycles -\d+$"
        assert re.search(error, screen, re.M), screen
        assert "Traceback" not in screen
        assert_nothing_left(str(tmp_path))
    finally:
        term.kill()


def test_hostile_names_neither_retitle_nor_clear_the_terminal(tmp_path):
    """A name holding a window-title sequence and a screen clear, opened in a real terminal: the title is unchanged,
    the name is shown escaped."""
    capture = tmp_path / "hostile.hatchet"
    capture.write_text(json.dumps(hostile_tree()))
    term = Terminal(f"proton-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        rc_file = start_proton_tui(term, tmp_path, "view", str(capture))
        term.wait_for(lambda s: "GPU time" in s, 30, "the table")
        term.keys("e")
        term.wait_for(lambda s: "\\x1b]0;PWNED\\x07kernel" in s, 15, "the escaped name")
        assert "PWNED" not in term.pane("#{pane_title}")
        term.keys("q")
        assert exit_status(term, rc_file, 30, "q") == "0"
        assert "PWNED" not in term.pane("#{pane_title}")
    finally:
        term.kill()


def test_a_terminated_viewer_gives_the_terminal_back(tmp_path):
    """SIGTERM to a viewer on a terminal: the main screen, the cursor and no mouse reporting come back, and the
    process ends by that signal."""
    term = Terminal(f"proton-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        rc_file = start_proton_tui(term, tmp_path, "view", str(REPO / "tests" / "fixtures" / "vecadd_auto.hatchet"),
                                   linger=True)
        term.wait_for(lambda s: "GPU time" in s, 30, "the table")
        assert term.pane("#{alternate_on} #{mouse_any_flag} #{cursor_flag}") == "1 1 0"  # as a TUI runs
        shell = int(term.pane("#{pane_pid}"))
        (viewer,) = (int(pid) for pid in Path(f"/proc/{shell}/task/{shell}/children").read_text().split())
        os.kill(viewer, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while not (code := rc_file.read_text() if rc_file.is_file() else "").endswith("\n"):
            assert time.monotonic() < deadline, f"SIGTERM did not end proton-tui:\n{term.screen()}"
            time.sleep(POLL_S)
        assert code.strip() == str(128 + signal.SIGTERM)
        assert term.pane("#{alternate_on} #{mouse_any_flag} #{cursor_flag}") == "0 0 1"
    finally:
        term.kill()
