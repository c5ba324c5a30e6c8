"""End to end, in a real terminal (a private tmux server): the viewer under rough use. Every key of the viewer pressed
while a million-node capture is read; a kernel named with 50 million characters, selected, then q or SIGTERM."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.e2e.terminal import NO_TMUX, POLL_S, TMUX, Terminal, assert_nothing_left, start_proton_tui
from tests.e2e.viewer_keys import keys_that_keep_it_open, tmux_key
from tests.helpers import REPO, kernel, scope

pytestmark = [pytest.mark.slow, pytest.mark.skipif(TMUX is None, reason=NO_TMUX)]

MODAL_KEYS = {"f1", "question_mark"}  # they open the keys dialog, which Escape closes
HELP_TITLE = "proton-tui keys"
HUGE = 50_000_000  # characters of the kernel name below


def viewer_pid(term: Terminal) -> int:
    shell = int(term.pane("#{pane_pid}"))
    (viewer,) = (int(pid) for pid in Path(f"/proc/{shell}/task/{shell}/children").read_text().split())
    return viewer


@pytest.mark.longest
def test_every_key_while_a_million_node_capture_is_read(tmp_path):
    """Each key of the viewer's bindings (the app's, the screen's, its widgets'), pressed in turn while a capture of
    a million nodes is read: the viewer neither crashes nor ends; q then ends it, the terminal given back."""
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "make_capture.py"), "1000000", "--out", str(tmp_path)],
                   check=True, capture_output=True, timeout=120)
    (capture,) = tmp_path.glob("*.hatchet")
    term = Terminal(f"proton-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        rc_file = start_proton_tui(term, tmp_path, "view", str(capture), linger=True)
        term.wait_for(lambda s: "Reading" in s and "% read" in s, 60, "the share of the capture read")
        keys = keys_that_keep_it_open()  # the dialogs' keys last: each waits for its dialog, open then closed
        still_reading = None
        for key in [key for key in keys if key not in MODAL_KEYS] + [key for key in keys if key in MODAL_KEYS]:
            if key in MODAL_KEYS and still_reading is None:
                still_reading = "Reading" in term.screen()
            if sent := tmux_key(key):
                term.keys(sent)
                if key in MODAL_KEYS:  # an Escape sent before the dialog is up, or merged with the next key, is lost
                    term.wait_for(lambda s: HELP_TITLE in s, 30, f"the keys dialog of {key}")
                    term.keys("Escape")
                    term.wait_for(lambda s: HELP_TITLE not in s, 30, "the keys dialog closed by Escape")
                time.sleep(POLL_S)
            assert term.pane("#{pane_dead}") != "1" and not rc_file.exists(), f"{key} ended the viewer:\n" \
                f"{term.screen(history=True)}"
        screen = term.screen()
        assert "Traceback" not in screen and "Error" not in screen, screen
        assert HELP_TITLE not in screen, screen
        term.keys("q")
        deadline = time.monotonic() + 30
        while not (code := rc_file.read_text() if rc_file.is_file() else "").endswith("\n"):
            assert time.monotonic() < deadline, f"q did not end proton-tui:\n{term.screen()}"
            time.sleep(POLL_S)
        assert code.strip() == "0", term.screen(history=True)
        assert term.modes("0 0 1") == "0 0 1"
        assert still_reading, "the capture was read before the viewer's own keys were all pressed"
        term.kill()
        assert_nothing_left(str(tmp_path))
    finally:
        term.kill()


@pytest.mark.parametrize("end", ["q", "SIGTERM", "SIGHUP"])
def test_a_kernel_named_with_50_million_characters_is_shown_and_the_viewer_ends_at_once(tmp_path, end):
    """The kernel selected: its details say its length; then q, SIGTERM or SIGHUP ends the viewer within seconds,
    the terminal given back."""
    capture = tmp_path / "huge-name.hatchet"
    capture.write_text(json.dumps([scope("ROOT", kernel("k" * HUGE, 100.0), kernel("b", 1.0)), {}]))
    term = Terminal(f"proton-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        rc_file = start_proton_tui(term, tmp_path, "view", str(capture), linger=True)
        term.wait_for(lambda s: "GPU time" in s and "kkkk" in s, 60, "the table")
        term.keys("Down")
        term.wait_for(lambda s: re.search(r"name\s+kkkk", s), 30, "the kernel's details")
        started = time.monotonic()
        if end == "q":
            term.keys("q")
        else:
            os.kill(viewer_pid(term), getattr(signal, end))
        while not (code := rc_file.read_text() if rc_file.is_file() else "").endswith("\n"):
            assert time.monotonic() - started < 15, f"{end} did not end proton-tui:\n{term.screen()}"
            time.sleep(POLL_S)
        expected = "0" if end == "q" else str(128 + getattr(signal, end))
        assert code.strip() == expected
        assert term.modes("0 0 1") == "0 0 1"
    finally:
        term.kill()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_ends_the_viewer_at_once_while_it_computes(tmp_path, signum):
    """SIGTERM or SIGHUP while the viewer's own thread computes (an action a minute long, never back to its event
    loop): it ends within seconds, with the status of a death by that signal, the terminal given back."""
    started, rc_file, viewer = tmp_path / "started", tmp_path / "exit-status", None
    env = {key: value for key, value in os.environ.items() if key not in ("TMUX", "TMUX_PANE", "COLUMNS", "LINES")}
    term = Terminal(f"proton-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        term.start(["sh", "-c", '"$@"; echo "$?" > "$0"; sleep 60', str(rc_file), sys.executable, "-m",
                    "tests.e2e.busy_viewer", str(REPO / "tests" / "fixtures" / "vecadd_auto.hatchet"), str(started)],
                   REPO, env)
        term.wait_for(lambda s: "GPU time" in s, 60, "the table")
        term.keys("z")
        deadline = time.monotonic() + 30
        while not started.exists():
            assert time.monotonic() < deadline, f"z did not start the computation:\n{term.screen()}"
            time.sleep(POLL_S)
        viewer = viewer_pid(term)
        os.kill(viewer, signum)
        ended = time.monotonic() + 10
        while not (code := rc_file.read_text() if rc_file.is_file() else "").endswith("\n"):
            assert time.monotonic() < ended, f"signal {signum} did not end the busy viewer:\n{term.screen()}"
            time.sleep(POLL_S)
        assert code.strip() == str(128 + signum)
        assert term.modes("0 0 1") == "0 0 1"
    finally:
        if viewer is not None and Path(f"/proc/{viewer}").exists():  # still computing: it would outlive its terminal
            os.kill(viewer, signal.SIGKILL)
        term.kill()
