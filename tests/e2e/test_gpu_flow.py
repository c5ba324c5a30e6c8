"""On a GPU, the newcomer's whole path in a real terminal (tmux, 160×48): the form → Run → the kernel table → the
flame view and back → back to the form → a second run at another size → F4 lists both → compare the two captures.

With PROTON_TUI_EVIDENCE=DIR it also writes what it measured there (`flow.json`: seconds from each keystroke to
the screen it brings) and an SVG screenshot of the comparison, taken through the command palette."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
import uuid
from pathlib import Path

import orjson
import pytest

from proton_tui.engine.probe import probe_interpreter
from proton_tui.hatchet import load_profile
from tests.e2e.terminal import NO_TMUX, TMUX, Terminal, assert_nothing_left, exit_status, start_proton_tui
from tests.e2e.test_e2e_tmux import type_into

SIZE = (160, 48)
has_gpu = probe_interpreter(sys.executable).gpu_count > 0

pytestmark = [pytest.mark.slow, pytest.mark.gpu, pytest.mark.skipif(TMUX is None, reason=NO_TMUX),
              pytest.mark.skipif(not has_gpu, reason="needs a CUDA or ROCm GPU with Proton; this machine has none")]


def timed(term: Terminal, keys: tuple[str, ...], test, seconds: float, what: str) -> tuple[float, object]:
    """Send keys, wait for the screen they bring; the seconds between the two and what `test` returned."""
    started = time.monotonic()
    term.keys(*keys)
    found = term.wait_for(test, seconds, what)
    return time.monotonic() - started, found


def table_of(size: int):
    """The viewer's table of a run at `size`: its kernel row and the header's GPU time."""
    return lambda s: f"add_kernel<n={size}>" in s and "GPU time" in s and s


def on_the_form(screen: str) -> bool:
    return bool(re.search(r"^[\s│]*Size\b", screen, re.M)) and "Iterations" in screen and "GPU time" not in screen


def save_screenshot(term: Terminal, home: Path, to: Path) -> None:
    """An SVG of the screen as the app draws it, taken through the command palette, copied to `to`."""
    before = set(home.rglob("*.svg"))
    term.keys("C-p")
    term.wait_for(lambda s: "Search for commands" in s or ">" in s, 10, "the command palette")
    term.keys("screenshot", literal=True)
    time.sleep(1.0)
    term.keys("Enter")
    deadline = time.monotonic() + 15
    while not (new := set(home.rglob("*.svg")) - before) and time.monotonic() < deadline:
        time.sleep(0.2)
    to.parent.mkdir(parents=True, exist_ok=True)
    if new:
        shutil.copy(sorted(new)[0], to)
    time.sleep(0.5)  # the palette's toast, gone before the next keys


def test_form_run_table_back_second_run_runs_list_and_compare(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "Downloads").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))  # where the palette's screenshot lands
    runs = tmp_path / "runs"
    figures: dict[str, float] = {}
    term = Terminal(f"proton-gpu-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        rc_file = start_proton_tui(term, tmp_path, "--output", str(runs), size=SIZE)
        term.wait_for(lambda s: re.search(r"\d+ \w+ GPUs?:", s), 120, "the interpreter's GPU detection")

        figures["run_1m_s"], screen = timed(term, ("C-r",), table_of(1048576), 300, "the first run's table")
        assert "PASS" in screen, screen
        figures["flame_s"], screen = timed(term, ("g",), lambda s: "Flame: ROOT" in s and s, 30, "the flame view")
        assert "add_kernel<n=1048576>" in screen or "add_kernel" in screen, screen
        if os.environ.get("PROTON_TUI_EVIDENCE"):
            save_screenshot(term, home, Path(os.environ["PROTON_TUI_EVIDENCE"]) / "flow-flame.svg")
        term.keys("g")
        term.wait_for(table_of(1048576), 15, "the table again")
        for _ in range(3):  # the viewer goes back to the run screen, which goes back to the form
            if on_the_form(term.screen()):
                break
            term.keys("b")
            time.sleep(0.5)
        term.wait_for(on_the_form, 15, "the form, back from the table")

        type_into(term, "Size", "2097152")
        figures["run_2m_s"], screen = timed(term, ("C-r",), table_of(2097152), 300, "the second run's table")
        assert "PASS" in screen, screen

        figures["runs_list_s"], screen = timed(term, ("F4",), lambda s: "2 runs" in s and s, 30, "F4's list")
        assert screen.count("PASS") >= 2 and "size=1048576" in screen and "size=2097152" in screen, screen
        term.keys("Escape")
        term.wait_for(table_of(2097152), 15, "the second table again")

        first = next(json.loads(path.read_text())["capture"] for path in runs.glob("*/run.json")
                     if json.loads(path.read_text())["params"]["size"] == 1048576)
        term.keys("m")
        term.wait_for(lambda s: "B: a capture" in s, 15, "the compare dialog")
        assert Path(first).parent.name in term.screen(), term.screen()  # offered among the choices
        term.keys(first, literal=True)
        figures["compare_s"], screen = timed(term, ("Enter",),
                                             lambda s: "(total)" in s and "B: a capture" not in s and s, 30,
                                             "the comparison")
        assert "add_kernel<n=2097152>" in screen and "add_kernel<n=1048576>" in screen, screen

        evidence = os.environ.get("PROTON_TUI_EVIDENCE")
        if evidence:
            folder = Path(evidence)
            save_screenshot(term, home, folder / "flow-compare.svg")
            (folder / "flow-screen.txt").write_text(term.screen())
            records = [orjson.loads(path.read_bytes()) for path in sorted(runs.glob("*/run.json"))]
            figures["runs"] = [{key: record.get(key) for key in ("verdict", "device", "gbps", "wall_s")}
                               | {"size": record["params"]["size"]} for record in records]
            (folder / "flow.json").write_text(json.dumps(figures, indent=2))

        term.keys("C-q")
        assert exit_status(term, rc_file, 30, "ctrl+q") == "0"
        assert_nothing_left(str(tmp_path))
    finally:
        term.kill()


def test_a_trace_run_opens_on_its_timeline(tmp_path, monkeypatch):
    """`run --data trace` on the GPU, then its capture viewed in a real terminal: the timeline, the GPU stream's
    kernels, n to the next launch of the same kernel, t to the tree of its kernels."""
    import subprocess

    home = tmp_path / "home"
    (home / "Downloads").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    runs = tmp_path / "runs"
    script = Path(sys.executable).with_name("proton-tui")
    done = subprocess.run([str(script), "run", "--data", "trace", "--output", str(runs)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and "verdict: PASS" in done.stdout, done.stdout + done.stderr
    (capture,) = runs.glob("*/vecadd.chrome_trace")
    term = Terminal(f"proton-gpu-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        rc_file = start_proton_tui(term, tmp_path, "view", str(capture), size=SIZE)
        screen = term.wait_for(lambda s: "Timeline:" in s and "kind  kernel" in s and s, 60,
                               "the timeline with its first kernel's details")
        gpu_lanes = [lane.name for lane in load_profile(capture).trace.lanes if lane.kind == "gpu"]
        assert gpu_lanes and gpu_lanes[0] in screen, screen  # the stream as this Triton names it
        term.keys("n")
        term.wait_for(lambda s: "launches of this kernel" in s, 15, "the next launch's details")
        if os.environ.get("PROTON_TUI_EVIDENCE"):
            save_screenshot(term, home, Path(os.environ["PROTON_TUI_EVIDENCE"]) / "trace-timeline.svg")
        term.keys("t")
        term.wait_for(lambda s: "▼time" in s and "add_kernel<n=1048576>" in s, 15, "the tree of its kernels")
        term.keys("q")
        assert exit_status(term, rc_file, 30, "q") == "0"
    finally:
        term.kill()


BACKEND_FIELD_TABS = 9  # Tab presses from the form's start to the Backend choices (checked on CPU by a pilot test)


def test_an_instrumentation_run_from_the_form_shows_cycles_per_warp(tmp_path, monkeypatch):
    """The form in a real terminal: Backend instrumentation (the Instrumentation panel comes alive), Run: PASS, and
    the table of the scoped kernel in cycles per warp·launch at the GPU's clock, with its unattributed part."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    term = Terminal(f"proton-gpu-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        rc_file = start_proton_tui(term, tmp_path, "--output", str(tmp_path / "runs"), size=SIZE)
        term.wait_for(lambda s: re.search(r"\d+ \w+ GPUs?:", s), 120, "the interpreter's GPU detection")
        term.keys(*["Tab"] * BACKEND_FIELD_TABS)
        for _ in range(6):  # down the backends to instrumentation: its panel's "with backend …" note goes
            term.keys("Down", "Enter")
            time.sleep(0.3)
            if "with backend instrumentation" not in term.screen():
                break
        assert "with backend instrumentation" not in term.screen(), term.screen()
        started = time.monotonic()
        term.keys("C-r")
        screen = term.wait_for(lambda s: "per warp·launch" in s and "(unattributed)" in s and s, 300,
                               "the instrumentation table")
        seconds = time.monotonic() - started
        assert "PASS" in screen and re.search(r"at [\d,]+ MHz", screen), screen
        assert "21 launches (the run)" in screen or "launches" in screen, screen
        if evidence := os.environ.get("PROTON_TUI_EVIDENCE"):
            save_screenshot(term, home, Path(evidence) / "instrumentation-table.svg")
            (Path(evidence) / "instrumentation.json").write_text(json.dumps({"run_to_table_s": seconds}))
        term.keys("C-q")
        assert exit_status(term, rc_file, 30, "ctrl+q") == "0"
    finally:
        term.kill()


def test_an_instrumentation_trace_opens_on_its_warp_timeline(tmp_path, monkeypatch):
    """`run --backend instrumentation --data trace` (2^20 floats: 1,024 CTAs × 4 warps, 21 launches), then its
    capture in a real terminal: the warp timeline of the first launch at the SM clock the run reported, ] to the
    next launch, n to a straggler, t to the tree of its scopes."""
    import subprocess

    monkeypatch.setenv("HOME", str(tmp_path))
    runs = tmp_path / "runs"
    script = Path(sys.executable).with_name("proton-tui")
    done = subprocess.run([str(script), "run", "--backend", "instrumentation", "--data", "trace", "--output",
                           str(runs)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "verdict: PASS" in done.stdout, done.stdout + done.stderr
    (capture,) = runs.glob("*/vecadd.chrome_trace")
    term = Terminal(f"proton-gpu-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        started = time.monotonic()
        rc_file = start_proton_tui(term, tmp_path, "view", str(capture), size=SIZE)
        screen = term.wait_for(lambda s: "Launch 1 of 21" in s and "stragglers" in s and s, 120,
                               "the first launch's warp timeline")
        seconds = time.monotonic() - started
        assert "SM clock unknown" not in screen, screen  # the clock the payload printed, from run.json beside it
        term.keys("]")
        term.wait_for(lambda s: "Launch 2 of 21" in s, 15, "the second launch")
        term.keys("n")
        time.sleep(0.5)
        term.keys("t")
        term.wait_for(lambda s: "per warp·launch" in s and "(unattributed)" in s, 15, "the tree of its scopes")
        if evidence := os.environ.get("PROTON_TUI_EVIDENCE"):
            (Path(evidence) / "warp-timeline.json").write_text(json.dumps({"view_to_timeline_s": seconds}))
        term.keys("q")
        assert exit_status(term, rc_file, 30, "q") == "0"
    finally:
        term.kill()
