"""Shared fixtures: the real H200 captures and a writer for hand-shaped ones."""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"

# The interpreter probe's disk cache goes to a private folder, not the user's home; subprocesses inherit it.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="proton-tui-tests-")
atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], ignore_errors=True)


def capture_path(name: str) -> Path:
    """A real Proton capture from tests/fixtures (made on an H200, see its README)."""
    return FIXTURES / f"{name}.hatchet"


def kernel(name: str, time_ns: float, count: int = 1, device: str = "0", **extra) -> dict:
    """A kernel node as Proton 3.2+ writes it."""
    metrics = {"count": count, "device_id": device, "device_type": "CUDA", "time (ns)": time_ns, **extra}
    return {"frame": {"name": name, "type": "function"}, "metrics": metrics, "children": []}


def scope(name: str, *children: dict, **metrics) -> dict:
    """A scope or python-frame node: no metrics of its own."""
    return {"frame": {"name": name, "type": "function"}, "metrics": metrics, "children": list(children)}


@pytest.fixture
def write_capture(tmp_path):
    """Write a [tree, device_info] capture (or raw bytes) to a file and return its path."""

    def write(content, name: str = "capture.hatchet") -> Path:
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(json.dumps(content, indent=4))
        return path

    return write


async def wait_for(predicate, seconds: float = 120.0, what: str = "condition") -> None:
    """Poll (never a fixed pause) until predicate() holds; fail after ``seconds``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"{what} not reached in {seconds:.0f} s")
        await asyncio.sleep(0.05)


def payload_processes(marker: str) -> list[int]:
    """PIDs of payload processes (vecadd.py) whose command line holds this marker argument (from /proc)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(b"vecadd.py" in part for part in cmdline) and marker.encode() in cmdline:
                pids.append(int(entry.name))
    return pids


def running(pid: int) -> bool:
    """Whether the process table has ``pid`` as a live process (a zombie has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"
