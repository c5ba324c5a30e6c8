"""What the tests share: the real H200 captures, hand-shaped nodes, bad inputs, and waiting without sleeps."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import shutil
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
SCRIPTS = Path(__file__).parent / "scripts"  # small programs that crash, hang or flood, to test the runner
REPO = Path(__file__).resolve().parents[1]
CLI = shutil.which("proton-tui", path=os.path.dirname(sys.executable)) or "proton-tui"  # the console script

TRITON_VERSION = version("triton")  # the Triton the suite runs the payload with (any of 3.6 to 3.9)


H200_PYTHON = "/opt/torch/.venv/bin/python3"  # the interpreter of the 2×H200 box's recorded probe answer


# The start of a `python -c` program that reads a trace of any size with workers on any machine (the policy lowered
# to this one), counting the workers it forks in `forks`
WITH_WORKERS = """
import os, sys
from proton_tui.hatchet import source, split_read
split_read.MIN_CPUS, split_read.MIN_STRETCH_BYTES = 1, 1024
source.STREAM_FROM_BYTES = 1024
fork, forks = os.fork, []
def counted():
    pid = fork()
    if pid:
        forks.append(pid)
    return pid
os.fork = counted
"""


def h200_probe(**changes):
    """The 2×H200 box's probe answer, recorded there (tests/fixtures/h200_probe.json), with `changes` made to it."""
    from dataclasses import replace

    from proton_tui.engine.probe import InterpreterInfo

    fields = json.loads((FIXTURES / "h200_probe.json").read_text())
    return replace(InterpreterInfo(**{**fields, "gpu_names": tuple(fields["gpu_names"])}), **changes)


def plant_probe(monkeypatch, python: str, info) -> None:
    """`info` as the probe's answer for `python`, as if just asked: with no stamp of the files it depended on, so a
    folder changed by another process meanwhile does not ask the interpreter again."""
    from proton_tui.engine import probe

    monkeypatch.setitem(probe._cache, python, info)
    monkeypatch.delitem(probe._stamps, python, raising=False)


def finished_under_lease(pending, path: Path):
    """`pending` (a PendingLoad of `path`, under its read lease) finished while another process truncates the file:
    the writer waits until the read is done, then has its way. Returns the profile read."""
    size = path.stat().st_size
    writer = subprocess.Popen([sys.executable, "-c", f"open({str(path)!r}, 'r+b').truncate(0)"])
    time.sleep(0.5)
    assert writer.poll() is None and path.stat().st_size == size  # the writer waits
    try:
        profile = pending.finish()
    finally:
        pending.close()
    assert writer.wait(timeout=60) == 0 and path.stat().st_size == 0  # then it has its way
    return profile


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
    except (FileNotFoundError, ProcessLookupError):  # gone before the open, or between the open and the read
        return False
    return stat[stat.rfind(")") + 2] != "Z"


# Files that are not valid captures, each with the words its one-line error must hold.
BAD_INPUTS = {
    "empty": (b"", "empty file"),
    "whitespace": (b"\n  \n", "empty file"),
    "truncated": (capture_path("vecadd_auto").read_bytes()[:700], "truncated"),
    "not json": (b"hello world\n", "not valid JSON"),
    "binary": (bytes(range(256)) * 4, "binary data"),
    "msgpack truncated": (b"\x92\x83\xa8children\x90", "truncated: the MessagePack data ends early"),
    "msgpack not a pair": (b"\x92\x01", "truncated: the MessagePack data ends early"),
    "dict": (b'{"frame": {"name": "ROOT"}}', "expected a JSON list [tree, device_info]"),
    "three elements": (b"[{}, {}, {}]", "expected a JSON list [tree, device_info]"),
    "device info list": (b'[{"frame": {"name": "ROOT"}, "metrics": {}, "children": []}, []]', "device_info"),
    "node not object": (b'[{"frame": {"name": "ROOT"}, "metrics": {}, "children": [3]}, {}]', "not an object"),
    "no frame name": (b'[{"frame": {}, "metrics": {}, "children": []}, {}]', "no frame name"),
    "children not list": (b'[{"frame": {"name": "ROOT"}, "metrics": {}, "children": {}}, {}]', "'children' a list"),
    "string metric": (
        b'[{"frame": {"name": "ROOT"}, "metrics": {}, "children": [{"frame": {"name": "k"}, "metrics": {"time (ns)": "fast"}, "children": []}]}, {}]',
        "node 'k': metric 'time (ns)' is 'fast', not a number",
    ),
    "nan metric": (
        b'[{"frame": {"name": "ROOT"}, "metrics": {}, "children": [{"frame": {"name": "k"}, "metrics": {"time (ns)": NaN}, "children": []}]}, {}]',
        "NaN or Infinity",
    ),
    "negative time": (
        b'[{"frame": {"name": "ROOT"}, "metrics": {}, "children": [{"frame": {"name": "k"}, "metrics": {"time (ns)": -5}, "children": []}]}, {}]',
        "negative",
    ),
    "negative count": (
        b'[{"frame": {"name": "ROOT"}, "metrics": {}, "children": [{"frame": {"name": "k"}, "metrics": {"time (ns)": 5, "count": -3, "device_id": "0", "device_type": "CUDA"}, "children": []}]}, {}]',
        "node 'k': metric 'count' is -3, not a whole number of launches",
    ),
    "fractional count": (
        b'[{"frame": {"name": "ROOT"}, "metrics": {}, "children": [{"frame": {"name": "k"}, "metrics": {"time (ns)": 5, "count": 1.5, "device_id": "0", "device_type": "CUDA"}, "children": []}]}, {}]',
        "node 'k': metric 'count' is 1.5, not a whole number of launches",
    ),
    "negative bytes": (
        b'[{"frame": {"name": "ROOT"}, "metrics": {}, "children": [{"frame": {"name": "k"}, "metrics": {"time (ns)": 5, "count": 1, "device_id": "0", "device_type": "CUDA", "bytes": -8}, "children": []}]}, {}]',
        "node 'k': metric 'bytes' is -8, negative",
    ),
    "gzip": (b"\x1f\x8b\x08\x00" + bytes(60), "gzip-compressed: decompress it first"),
    "chrome trace not a list": (b'{"displayTimeUnit": "us", "traceEvents": {}}', "not a Proton trace"),
    "bool metric": (
        b'[{"frame": {"name": "ROOT"}, "metrics": {}, "children": [{"frame": {"name": "k"}, "metrics": {"count": true}, "children": []}]}, {}]',
        "not a number",
    ),
}


# Kernel and scope names that would drive a terminal if written raw: clear the screen and set the window title,
# break rows, colour a row, reverse text.
HOSTILE_NAMES = (
    "clear\x1b[2J\x1b]0;PWNED\x07kernel",
    "two\nlines\rback\bspace",
    "red\x1b[31mrow",
    "rev\u202eesrever",
    "c1\x9b31mcsi",
)
CONTROL_BYTES = ("\x1b", "\r", "\b", "\x07", "\u202e", "\x9b")


def hostile_tree() -> list:
    """A capture whose names hold control characters, under a scope whose name does too."""
    kernels = [kernel(name, 1000 * (index + 1), count=index + 1) for index, name in enumerate(HOSTILE_NAMES)]
    return [scope("ROOT", scope("scope\x1b[1mbold", *kernels)), {}]


def run_folder(tmp_path, fixture: str, **params) -> Path:
    """A run folder as `proton-tui run` leaves it: the capture and its run.json (the fields the views read)."""
    folder = tmp_path / "20261201-030000-vecadd"
    folder.mkdir()
    capture = folder / "vecadd.hatchet"
    capture.write_bytes((FIXTURES / f"{fixture}.hatchet").read_bytes())
    record = {"capture": str(capture), "device_requested": "auto", "device_pinning": {},
              "params": {"size": 1 << 20, "iters": 20, "block_size": 1024, "backend": "instrumentation",
                         "profile": True, "payload": None, "warps": [], **params}}
    (folder / "run.json").write_text(json.dumps(record))
    return capture


def on_a_terminal(*args: str, env: dict[str, str] | None = None) -> str:
    """What `proton-tui ARGS` writes when its standard output is a terminal (a pseudo-terminal, read to its end),
    its line ends as text has them; the command must succeed."""
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen([CLI, *args], stdout=follower, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                   env=env)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the command has ended
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.wait(timeout=60) == 0
    finally:
        os.close(leader)
    return b"".join(chunks).decode().replace("\r\n", "\n")


def doctor_folder(tmp_path) -> Path:
    """A finished doctor's folder as it stays on disk: doctor.json (the no-GPU check) and its one cell's run folder
    (a real run's run.json and log), the cell pointing at it. Returns doctor.json."""
    doctor = tmp_path / "20261201-030717-doctor"
    cell_run = doctor / "20261201-030717-cpu-check"
    shutil.copytree(FIXTURES / "runs" / "20261201-004713-vecadd", cell_run)
    record = json.loads((FIXTURES / "doctor" / "no_gpu.json").read_text())
    for cell in record["cells"]:
        if cell["run_dir"]:
            cell["run_dir"], cell["stdout_log"] = str(cell_run), str(cell_run / "stdout.log")
    (doctor / "doctor.json").write_text(json.dumps(record))
    return doctor / "doctor.json"
