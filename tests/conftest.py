"""Fixtures for every test: a private probe cache, Textual without its cursor blink, and a writer for hand-shaped
captures."""

from __future__ import annotations

import atexit
import compileall
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

# The interpreter probe's disk cache goes to a private folder, not the user's home; subprocesses inherit it, as do
# pytest-xdist's workers (started after this runs in the controller): an interpreter is probed once a run, not once a
# worker. The process that made the folder removes it.
if "PROTON_TUI_TESTS_CACHE" not in os.environ:
    os.environ["PROTON_TUI_TESTS_CACHE"] = tempfile.mkdtemp(prefix="proton-tui-tests-")
    atexit.register(shutil.rmtree, os.environ["PROTON_TUI_TESTS_CACHE"], ignore_errors=True)
os.environ["XDG_CACHE_HOME"] = os.environ["PROTON_TUI_TESTS_CACHE"]


@pytest.fixture(autouse=True)
def steady_cursors(monkeypatch):
    """Text fields start with their cursor steady, not blinking: a screen drawn twice looks the same, and no blink
    timer runs in a pilot or a snapshot."""
    from textual.widgets import Input, TextArea

    for widget in (Input, TextArea):
        monkeypatch.setattr(widget.__dict__["cursor_blink"], "_default", False)


@pytest.fixture
def write_capture(tmp_path):
    """Write a [tree, device_info] capture (or raw bytes) to a file and return its path. It is dated a minute back,
    as a capture that was written before it is opened: reading one written just now waits for its writer."""

    def write(content, name: str = "capture.hatchet") -> Path:
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(json.dumps(content, indent=4))
        written = time.time() - 60
        os.utime(path, (written, written))
        return path

    return write




def pytest_configure(config):
    """The package's and the tests' byte-code written once, before any worker or subprocess imports them. Python
    reads it even under PYTHONDONTWRITEBYTECODE (set on the CI machine), where every process of the run would
    otherwise compile the package again (0.15 s a process on the 2-core machine, docs/measurements.md, 119)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        root = Path(__file__).resolve().parent.parent
        for folder in ("proton_tui", "tests"):
            compileall.compile_dir(root / folder, quiet=1)


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: two workers a core (at most 16). A test here spends much of its time waiting, on a terminal, a
    pilot's idle check or a subprocess, and a second worker a core runs in those waits (docs/measurements.md, 112)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(2 * cores, 16)


def pytest_collection_modifyitems(config, items):
    """The longest tests, then the slow ones first: under pytest-xdist they start on every worker at once instead of
    one of them being the last to finish while the others wait (the order is the same on every worker, as xdist
    needs)."""
    items.sort(key=lambda item: (item.get_closest_marker("longest") is None, item.get_closest_marker("slow") is None))
