#!/usr/bin/env python3
"""Where the time goes from `proton-tui view TRACE` to an instrumentation trace's first launch drawn, phase by phase,
in a real terminal (tmux, 160×48): the viewer runs under a wrapper that stamps each phase's start and end (the
wall clock against the moment tmux was asked to start it), each worker's end, and the timeline's first drawn line.
Runs one after the other; each phase's median and range printed, the runs written to `.results/phases_<file>.json`.

    python benchmarks/bench_phases.py TRACE [--runs 5] [--tree DIR]

`--tree`: the proton_tui to run (a folder holding it, put first on PYTHONPATH); this checkout's by default."""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SESSION = f"proton-phases-{os.getpid()}"

# the viewer under stamps: each phase's start (">") and end ("<"), seconds since the command was given. The TUI's
# modules are stamped once `viewer_app` has imported them, where the viewer imports them, not before.
WRAPPER = r"""
import functools, os, sys, time
T0, LOG = float(os.environ["PHASES_T0"]), open(os.environ["PHASES_LOG"], "a")
def mark(what): print(f"{time.time() - T0:.4f} {what}", file=LOG, flush=True)
mark("python up")
from proton_tui.hatchet import loader, split_read
from proton_tui.tui import launch
from proton_tui.view import reading
mark("reader imported")
def stamped(owner, name):
    original = getattr(owner, name)
    @functools.wraps(original)
    def call(*args, **kwargs):
        mark(f"{name} >"); found = original(*args, **kwargs); mark(f"{name} <"); return found
    setattr(owner, name, call)
decode = split_read._decode
def worker(*args):
    found = decode(*args); mark("worker decoded"); return found
split_read._decode = worker
stamped(split_read.SplitRead, "__init__"); stamped(loader.PendingLoad, "finish")
stamped(loader.PendingLoad, "_split_trace"); stamped(loader, "trace_profile"); stamped(reading.Reading, "_first")
tell = reading.Reading._tell
def told(self, outcome):
    mark(f"told {type(outcome).__name__}"); return tell(self, outcome)
reading.Reading._tell = told
made = launch.viewer_app
def viewer_app(*args, **kwargs):
    from proton_tui.hatchet import trace_stream
    from proton_tui.tui import app
    from proton_tui.tui.widgets.timeline import warps as timeline
    from proton_tui.view import warps
    mark("textual imported")
    stamped(trace_stream, "stream_trace"); stamped(warps, "warp_trace")
    stamped(app.ProtonApp, "on_mount"); stamped(timeline.WarpTimeline, "show")
    drawn = timeline.WarpTimeline.render_line
    def render_line(self, y):
        if getattr(self, "_first_stamped", None) is None and getattr(self, "warps", None) is not None:
            self._first_stamped = True
            mark("first line of a launch")
        return drawn(self, y)
    timeline.WarpTimeline.render_line = render_line
    return made(*args, **kwargs)
launch.viewer_app = viewer_app
sys.argv = ["proton-tui", "view", sys.argv[1]]
from proton_tui.entry import main
mark("entry imported")
main()
"""

# (name, from, to): a span between two stamps ("" for the command itself)
SPANS = (("python up", "", "python up"), ("the reader imported", "", "reader imported"),
         ("workers forked", "", "__init__ <"), ("reading thread starts", "", "finish >"),
         ("Textual imported", "", "textual imported"), ("viewer mounted", "", "on_mount <"),
         ("last worker decoded", "", "worker decoded"),
         ("workers' columns taken in", "_split_trace >", "_split_trace <"),
         ("one reader's decode (no workers)", "stream_trace >", "stream_trace <"),
         ("first launch worked out (warp_trace, launch 1)", "_first >", "told First"),
         ("told to shown", "told First", "show >"), ("timeline shown", "show >", "first line of a launch"),
         ("first launch drawn", "", "drawn"),
         ("the tree, after (trace_profile)", "_first <", "trace_profile <"), ("the tree read", "", "told Read"))


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


def one_run(trace: Path, tree: Path, log: Path) -> dict[str, list[float]]:
    """The stamps of one run (a name may recur: the workers'), with "drawn" when the pane first shows the launch."""
    log.unlink(missing_ok=True)
    wrapper = log.with_suffix(".py")
    wrapper.write_text(WRAPPER)
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    start = time.time()
    env = f"PHASES_T0={start} PHASES_LOG={log} PYTHONPATH={tree}"
    tmux("new-session", "-d", "-c", "/", "-s", SESSION, "-x", "160", "-y", "48",
         f"env {env} {sys.executable} {wrapper} {trace}")
    deadline = time.monotonic() + 120
    while "Launch 1 of" not in tmux("capture-pane", "-p", "-t", SESSION):
        if time.monotonic() > deadline:
            raise SystemExit("the first launch was not drawn within 120 s")
        time.sleep(0.005)
    drawn = time.time() - start
    tmux("send-keys", "-t", SESSION, "q")
    time.sleep(1)
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    stamps: dict[str, list[float]] = {"": [0.0], "drawn": [drawn]}
    for line in log.read_text().splitlines():
        at, what = line.split(" ", 1)
        stamps.setdefault(what, []).append(float(at))
    return stamps


def spans(stamps: dict[str, list[float]]) -> dict[str, float]:
    found = {}
    for name, low, high in SPANS:
        if low in stamps and high in stamps:
            found[name] = max(stamps[high]) - min(stamps[low])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tree", type=Path, default=HERE.parent)
    options = parser.parse_args()
    # bytecode written, as an installed package has it, whatever PYTHONDONTWRITEBYTECODE says
    compileall.compile_dir(options.tree.resolve() / "proton_tui", quiet=1)
    runs = []
    with tempfile.TemporaryDirectory() as scratch:
        for _ in range(options.runs):
            runs.append(spans(one_run(options.trace.resolve(), options.tree.resolve(), Path(scratch) / "phases.log")))
    names = [name for name, _, _ in SPANS if all(name in run for run in runs)]
    medians = {name: statistics.median(run[name] for run in runs) for name in names}
    for name in names:
        values = [run[name] for run in runs]
        print(f"{name:48} median {medians[name]:.3f} s  ({min(values):.3f}–{max(values):.3f})")
    out = HERE / ".results" / f"phases_{options.trace.stem}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"trace": str(options.trace), "bytes": options.trace.stat().st_size,
                               "tree": str(options.tree), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                               "cpus": os.cpu_count(), "runs": runs, "medians": medians}, indent=2) + "\n")


if __name__ == "__main__":
    main()
