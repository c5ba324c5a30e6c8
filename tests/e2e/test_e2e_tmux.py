"""End to end: the installed ``proton-tui`` in a real terminal (a private tmux server), driven as a user would.

Type a tiny size and iteration count into the launch form, start the CPU check (F2), read the screen until the
run passes, check its run folder, quit with ctrl+q, and check that nothing it started is left running.
The only waits are polls of the screen (``capture-pane``) with generous deadlines: CI has two slow cores and the
form's interpreter probe imports torch.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import termios
import time
import uuid
from pathlib import Path

import orjson
import pytest

from tests.e2e.terminal import NO_TMUX, POLL_S, TMUX, Terminal, assert_nothing_left, exit_status, start_proton_tui
from tests.helpers import HOSTILE_NAMES, REPO, TRITON_VERSION, hostile_tree

TAB_WAIT_S = 3.0  # how long a Tab that moved no cursor (focus on a widget without one) is given to be taken
SETTLE_S = 0.5  # how long the cursor must stay on a field: a queued Tab moves it on within milliseconds

pytestmark = [pytest.mark.slow, pytest.mark.skipif(TMUX is None, reason=NO_TMUX)]


def inside(line: str) -> str:
    """A screen line without the panel border it may start with."""
    return line.strip().lstrip("│").strip()


def row_of(screen: str, label: str) -> int | None:
    """The screen row (0-based) that starts with ``label`` (inside its panel)."""
    for row, line in enumerate(screen.splitlines()):
        if inside(line).startswith(label):
            return row
    return None


def focus_field(term: Terminal, label: str, max_tabs: int = 40) -> None:
    """Press Tab until the terminal cursor (Textual puts it in the focused Input) moves to ``label``'s row.

    One Tab at a time: the next is sent once the cursor has moved (the Tab was taken), or after TAB_WAIT_S where
    focus went to a widget without a cursor. A Tab answered later than that is still queued when the cursor reaches
    the field, and takes it on at once: the cursor must stay there SETTLE_S, else the Tabs go on round the focus
    chain (Tab wraps)."""
    for _ in range(max_tabs):
        assert row_of(term.screen(), label) is not None, f"no {label!r} field on screen:\n{term.screen()}"
        before = term.pane("#{cursor_flag} #{cursor_x} #{cursor_y}")
        term.keys("Tab")
        deadline = time.monotonic() + TAB_WAIT_S
        while time.monotonic() < deadline:
            seen = term.pane("#{cursor_flag} #{cursor_x} #{cursor_y}")
            # the field's row read again after the cursor: a line of the form's appearing above moves the fields
            if seen.split()[-1:] == [str(row_of(term.screen(), label))] and \
                    term.pane("#{cursor_flag} #{cursor_x} #{cursor_y}") == seen:
                time.sleep(SETTLE_S)
                if term.pane("#{cursor_flag} #{cursor_x} #{cursor_y}") == seen:
                    return
                break
            if seen != before:
                break
            time.sleep(POLL_S)
    raise AssertionError(f"Tab never reached the {label!r} field; the screen:\n{term.screen()}")


def type_into(term: Terminal, label: str, value: str) -> None:
    """Focus the field, erase it (end, then ctrl+u deletes everything left of the cursor), wait until the form
    says it is empty, then type the value. (Erasing and typing in one burst can lose the typing: Textual may run
    the ctrl+u binding after the characters that followed it are inserted.)"""
    focus_field(term, label)
    term.keys("C-e")
    term.keys("C-u")
    term.wait_for(lambda s: (row := row_of(s, label)) is not None  # the form's message above may move it down
                  and inside(s.splitlines()[row + 1]).startswith("'' is not"), 15, f"{label} erased")
    term.keys(value, literal=True)
    pattern = re.compile(rf"^[\s│]*{re.escape(label)}\s+{re.escape(value)}(\s\s|\s*│|$)", re.M)
    term.wait_for(lambda s: pattern.search(s) and "'' is not" not in s, 15, f"{label} showing {value}")


def test_cpu_run_typed_in_the_tui_passes_then_quits(tmp_path):
    runs = tmp_path / "runs"
    term = Terminal(f"proton-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        rc_file = start_proton_tui(term, tmp_path, "--output", str(runs))

        # The form probes the workload's interpreter (imports torch) before it says what it found.
        term.wait_for(lambda s: "no GPU found" in s or re.search(r"\d+ \w+ GPUs?:", s), 90, "the interpreter's detection")
        assert f"Triton {TRITON_VERSION}" in term.screen()

        type_into(term, "Size", "4096")
        type_into(term, "Iterations", "2")
        term.keys("F2")  # CPU check: the payload through the Triton interpreter, no profile

        status = re.compile(r"^[\s│]*(PASS|FAIL|not run|payload error|cancelled|timeout)\b.*·", re.M)
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
        term.keys("K")
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


def test_a_file_named_dash_opens_as_a_file_and_the_viewer_never_reads_its_terminal(tmp_path):
    """`view ./-` opens the file called `-` (pathlib reads `./-` as `-`, the name of standard input, which is the
    terminal here); `-` typed as compare's B names a file too, said in one line when there is none, and the keys
    still work."""
    shutil.copy(REPO / "tests" / "fixtures" / "vecadd_hook.hatchet", tmp_path / "-")
    term = Terminal(f"proton-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        rc_file = start_proton_tui(term, tmp_path, "view", "./-")
        term.wait_for(lambda s: "GPU time" in s and "add_kernel" in s, 30, "the table of the file called -")
        (tmp_path / "-").unlink()
        term.keys("m")
        term.wait_for(lambda s: "B: a capture" in s, 15, "compare's dialog")
        term.keys("--", "-", literal=True)
        term.keys("Enter")
        term.wait_for(lambda s: f"{tmp_path}/-: no such file" in s, 15, "the line naming the file")
        term.keys("Escape")
        term.wait_for(lambda s: "B: a capture" not in s, 15, "the dialog closed")
        term.keys("q")
        assert exit_status(term, rc_file, 30, "q") == "0"
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
        assert term.modes("1 1 0") == "1 1 0"  # as a TUI runs
        shell = int(term.pane("#{pane_pid}"))
        (viewer,) = (int(pid) for pid in Path(f"/proc/{shell}/task/{shell}/children").read_text().split())
        os.kill(viewer, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while not (code := rc_file.read_text() if rc_file.is_file() else "").endswith("\n"):
            assert time.monotonic() < deadline, f"SIGTERM did not end proton-tui:\n{term.screen()}"
            time.sleep(POLL_S)
        assert code.strip() == str(128 + signal.SIGTERM)
        assert term.modes("0 0 1") == "0 0 1"
    finally:
        term.kill()


def test_quitting_while_a_large_capture_is_read(tmp_path):
    """A 290 MB capture, read in pieces: while it is read the viewer says how much of it it has read, and q then
    ends proton-tui without finishing the read: the table never shows, the terminal is given back (main screen,
    cursor, no mouse reporting) and nothing is left running or holding the file. Opened again and left to read it
    all, the table."""
    generator = REPO / "benchmarks" / "make_capture.py"
    subprocess.run([sys.executable, str(generator), "300000", "--out", str(tmp_path)], check=True,
                   capture_output=True, timeout=300)
    (capture,) = tmp_path.glob("*.hatchet")
    term = Terminal(f"proton-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        rc_file = start_proton_tui(term, tmp_path, "view", str(capture), linger=True)  # the pane outlives it
        progress = re.compile(r"(\d+) % read")  # before "Reading FILE (288 MB)…"
        share = term.wait_for(lambda s: "Reading" in s and (found := progress.search(s)) and int(found[1]) > 0
                              and found[1], 120, "the share of the capture read so far")
        assert int(share) < 100
        term.keys("q")
        deadline = time.monotonic() + 30
        while term.pane("#{alternate_on}") == "1":  # until the TUI has left the terminal
            assert "GPU time" not in term.screen(), "the table was shown after q"
            assert time.monotonic() < deadline, f"q did not end the viewer:\n{term.screen()}"
            time.sleep(POLL_S / 5)
        while not (code := rc_file.read_text() if rc_file.is_file() else "").endswith("\n"):
            assert time.monotonic() < deadline, f"q did not end proton-tui:\n{term.screen()}"
            time.sleep(POLL_S)
        assert code.strip() == "0"
        assert term.modes("0 0 1") == "0 0 1"
        term.kill()  # and the shell lingering after it
        assert_nothing_left(str(tmp_path))

        term = Terminal(f"proton-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        rc_file = start_proton_tui(term, tmp_path, "view", str(capture))
        term.wait_for(lambda s: "GPU time" in s and "step_" in s, 120, "the table")
        term.keys("q")
        assert exit_status(term, rc_file, 30, "q") == "0"
    finally:
        term.kill()


def test_the_bytes_the_viewer_writes_hold_no_control_character_of_a_name(tmp_path):
    """The hostile names' own control sequences never reach the terminal: checked on every byte the viewer writes
    to its pty, from start to quit, with the tree expanded (every name drawn)."""
    capture = tmp_path / "hostile.hatchet"
    capture.write_text(json.dumps(hostile_tree()))
    script = Path(sys.executable).with_name("proton-tui")
    main, side = os.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    env = {**{key: value for key, value in os.environ.items() if key not in ("TMUX", "COLUMNS", "LINES")},
           "TERM": "xterm-256color"}
    viewer = subprocess.Popen([str(script), "view", str(capture)], stdin=side, stdout=side, stderr=side, env=env,
                              start_new_session=True)
    os.close(side)
    written = bytearray()

    def read_until(wanted: bytes, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while wanted not in written:
            assert time.monotonic() < deadline, f"{wanted!r} not written after {seconds} s: {bytes(written[-2000:])!r}"
            if select.select([main], [], [], POLL_S)[0]:
                try:
                    written.extend(os.read(main, 65536))
                except OSError:  # the viewer has closed the pty
                    return

    try:
        read_until(b"GPU time", 30)
        os.write(main, b"e")
        read_until(rb"\x1b]0;PWNED\x07kernel", 15)  # the name drawn, escaped
        os.write(main, b"q")
        deadline = time.monotonic() + 30
        while viewer.poll() is None:  # keep reading: a full pty would block the viewer's last writes
            assert time.monotonic() < deadline, f"q did not end the viewer: {bytes(written[-2000:])!r}"
            if select.select([main], [], [], POLL_S)[0]:
                try:
                    written.extend(os.read(main, 65536))
                except OSError:
                    break
        assert viewer.wait(timeout=30) == 0
        while select.select([main], [], [], 0.2)[0]:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                break
            if not chunk:
                break
            written.extend(chunk)
    finally:
        if viewer.poll() is None:
            viewer.kill()
        os.close(main)
    for name in (*HOSTILE_NAMES, "scope\x1b[1mbold"):
        for raw in re.finditer(r"[a-z0-9][^a-z0-9]+[a-z0-9]", name):  # a control run, with the letters around it
            assert raw[0].encode() not in written, (name, raw[0])
    assert "\u202e".encode() not in written and "\x9b".encode() not in written  # (Textual's own OSCs end in BEL)
