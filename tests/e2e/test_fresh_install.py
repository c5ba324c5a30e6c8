"""End to end from nothing, on a box without a GPU: a fresh virtual environment, the README's install command, then
proton-tui at 80x24 followed only where its form points, until a passing CPU check is on screen."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from importlib.metadata import version
from pathlib import Path

import pytest

from tests.e2e.terminal import NO_TMUX, TMUX, Terminal, assert_nothing_left, start_proton_tui
from tests.helpers import REPO

NO_GPU_HERE = pytest.mark.skipif(any(Path(dev).exists() for dev in ("/dev/nvidia0", "/dev/kfd")),
                                 reason="a GPU is here: the form's advice for a box without one does not apply")

SIZE = (80, 24)
BUDGET_S = 300  # the whole test, installs included (60–220 s seen on the 2-core machine, by its load)
# `pip install …` as the form writes it, with the interpreter that runs pip where it names one
PIP = re.compile(r"(?:(?P<python>\S*python[\d.]*)\s+-m\s+)?\bpip3?\s+install\s+(?P<rest>.+)")
REQUIREMENT = re.compile(r"""-[-\w=.]+|'[^']+'|"[^"]+"|\.|[\w.\-]+(\[[\w,\-]+\])?([=<>!~]=?[\w.+*]+)?""")
NOT_A_REQUIREMENT = {"then", "and", "or", "to", "in", "into", "from", "for", "with", "press", "run", "·", "—", "→"}
CPU_CHECK_KEY = re.compile(r"\b[Ff](?P<number>\d{1,2})\s+(?:runs\s+)?(?:the\s+)?CPU check")


def screen_text(screen: str) -> str:
    """The screen's lines as one line of words: the form wraps its advice across lines and draws boxes around it."""
    return " ".join(line.strip(" │╭╮╰╯─") for line in screen.splitlines())


def advised_install(screen: str) -> str | None:
    """The pip command the form tells the user to run, as a shell line; None when it names none. The command runs
    from `pip` (or `PYTHON -m pip`) to its last requirement or option: a word ending a sentence or a clause ends it."""
    match = PIP.search(screen_text(screen))
    if match is None:
        return None
    words = []
    for word in match["rest"].split():
        ends = word[-1] in ",;`)" or (word.endswith(".") and word != ".")
        word = word.strip("`").rstrip(",;)")
        word = word[:-1] if word.endswith(".") and word != "." else word
        if word.lower() in NOT_A_REQUIREMENT or not REQUIREMENT.fullmatch(word):
            break
        words.append(word)
        if ends:
            break
    if not any(not word.startswith("-") for word in words):
        return None
    python = [match["python"].lstrip("`'\"("), "-m"] if match["python"] else []
    return " ".join([*python, "pip", "install", *words])


def cpu_check_key(screen: str) -> str:
    match = CPU_CHECK_KEY.search(screen_text(screen))
    assert match is not None, f"the form names no key for the CPU check:\n{screen}"
    return f"F{match['number']}"


def left(deadline: float) -> float:
    seconds = deadline - time.monotonic()
    assert seconds > 0, f"over the test's {BUDGET_S} s"
    return seconds


@pytest.mark.longest
@pytest.mark.slow
@pytest.mark.skipif(TMUX is None, reason=NO_TMUX)
@NO_GPU_HERE
def test_a_fresh_venv_reaches_a_passing_cpu_check_by_following_the_form(tmp_path, request):
    deadline = time.monotonic() + BUDGET_S
    # at a short path, as a user's would be: the form's command then fits in 80 columns and reads off the screen
    short = Path(tempfile.mkdtemp(prefix="pv", dir="/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(short, ignore_errors=True))
    venv = short / "v"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=left(deadline))
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    # The advised command runs verbatim; pip is held to the versions this suite runs on, as a site's pip
    # configuration would hold it (an unpinned torch would bring a CUDA build of several GB here).
    pins = tmp_path / "constraints.txt"
    pins.write_text("".join(f"{name}=={version(name)}\n" for name in ("torch", "triton", "numpy")))
    env["PIP_CONSTRAINT"] = str(pins)
    env["PIP_NO_COMPILE"] = "1"  # torch's byte-code compiled at its first import instead of at the install
    # the README's `python3 -m pip install . && proton-tui`, in the fresh environment, from this checkout
    installed = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(REPO)], env=env, capture_output=True,
                               text=True, timeout=left(deadline))
    assert installed.returncode == 0, installed.stderr[-4000:]
    term = Terminal(f"proton-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        start_proton_tui(term, tmp_path, size=SIZE, script=venv / "bin" / "proton-tui")
        screen = term.wait_for(lambda s: s if "no torch" in s or "no Triton" in s else None, 60,
                               "the form saying what this interpreter lacks")
        command = advised_install(screen)
        assert command is not None, f"the form names no pip command that brings torch and Triton:\n{screen}"
        ran = subprocess.run(command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=left(deadline))
        assert ran.returncode == 0, f"{command}\n{ran.stderr[-4000:]}"
        key = cpu_check_key(term.screen())
        term.keys(key)
        term.wait_for(lambda s: "PASS: the kernel matched" in s, left(deadline),
                      f"a passing CPU check after `{command}` and {key}")
        term.keys("C-q")  # quits from any screen (q goes back from the run screen to the form)
    finally:
        term.kill()
    assert_nothing_left(str(tmp_path))


@pytest.mark.parametrize(("screen", "command"), [
    ("  · no torch: run python3 -m pip install 'torch==2.13.0' triton numpy, then F2",
     "python3 -m pip install 'torch==2.13.0' triton numpy"),
    ("  install them: `/tmp/v/bin/python3 -m pip install\n  'proton-tui[payload]'` then f2 runs the CPU check",
     "/tmp/v/bin/python3 -m pip install 'proton-tui[payload]'"),
    (" │ pip install torch triton │\n │ and press F2 │", "pip install torch triton"),
    ("  · no torch · no GPU found: Proton needs one. Run the CPU check", None),
    ("  pip install then press F2", None),
])
def test_the_advised_command_is_read_off_the_screen(screen, command):
    assert advised_install(screen) == command
