"""End to end: a command of the user's typed on the form in a real terminal, run, streamed and judged; on a GPU,
profiled and opened as its kernel table."""

from __future__ import annotations

import os
import re
import sys
import time
import uuid

import pytest

from proton_tui.engine.probe import probe_interpreter
from tests.e2e.terminal import NO_TMUX, TMUX, Terminal, assert_nothing_left, exit_status, start_proton_tui
from tests.e2e.test_e2e_tmux import row_of

pytestmark = [pytest.mark.slow, pytest.mark.skipif(TMUX is None, reason=NO_TMUX)]
JOB = """\
import torch
device = "cuda" if torch.cuda.is_available() else "cpu"
x = torch.ones(256, 256, device=device)
print("job ran on", device, float((x @ x).sum()))
"""


def choose_my_command(term: Terminal) -> None:
    """Tab to the Workload choice, move to "my command", take it; the form then asks for the command."""
    for key in ("Tab", "Down", "Enter"):
        term.keys(key)
        time.sleep(0.7)
    term.wait_for(lambda s: "no command typed" in s, 15, "the form asking for the command")
    term.keys("Tab")  # the Command field: typing waits until the cursor is in it
    term.wait_for(lambda s: term.pane("#{cursor_y}") == str(row_of(s, "Command")), 15, "the Command field focused")


def run_typed_command(tmp_path, gpu: bool) -> None:
    (tmp_path / "job.py").write_text(JOB)
    term = Terminal(f"proton-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        rc_file = start_proton_tui(term, tmp_path, "--output", str(tmp_path / "runs"), size=(100, 30))
        term.wait_for(lambda s: "no GPU found" in s or re.search(r"\d+ \w+ GPUs?:", s), 90, "the detection")
        choose_my_command(term)
        term.keys(f"{sys.executable} job.py", literal=True)
        term.wait_for(lambda s: "no command typed" not in s and "no such" not in s, 15, "the command typed")
        term.keys("C-r")
        verdict = "PASS: the command exited 0; capture " if gpu else "PASS: the command exited 0 (not profiled)"
        if gpu:  # the capture opens as its kernel table
            term.wait_for(lambda s: "GPU time" in s, 240, "the kernel table")
        else:
            screen = term.wait_for(lambda s: s if verdict in s else None, 120, "the verdict")
            assert "job ran on cpu" in screen, screen
        (folder,) = (tmp_path / "runs").iterdir()
        assert verdict in (folder / "run.json").read_text()
        term.keys("C-q")
        assert exit_status(term, rc_file, 30, "ctrl+q") == "0"
        assert_nothing_left(str(tmp_path))
    finally:
        term.kill()


def test_a_command_typed_on_the_form_runs_in_a_real_terminal(tmp_path):
    run_typed_command(tmp_path, gpu=False) if not probe_interpreter(sys.executable).gpu_count else None


@pytest.mark.gpu
def test_gpu_a_command_typed_on_the_form_is_profiled_and_opened(tmp_path):
    if not probe_interpreter(sys.executable).gpu_count:
        pytest.skip("needs a CUDA or ROCm GPU with Proton; this machine has none")
    run_typed_command(tmp_path, gpu=True)
