"""A capture read on a thread from the moment it is asked for: what came of it held until someone listens, then told
in order; an instrumentation trace's first launch told before its tree is built, the tree waiting for that launch to
be shown; a bad file told as its one line."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

from proton_tui.hatchet import pending_capture
from proton_tui.view.reading import Failed, First, Read, read_now
from tests.helpers import FIXTURES, REPO, WITH_WORKERS

INSTR = FIXTURES / "instr_scopes_trace.chrome_trace"


def listened(reading) -> tuple[list, threading.Event]:
    heard, told = [], threading.Event()

    def listener(outcome) -> None:
        heard.append(outcome)
        told.set()

    reading.listen(listener)
    return heard, told


def told_of(path) -> list:
    """What the read of `path` told, its thread run to its end before anyone listened (a trace's tree not held
    back: nothing draws here)."""
    pending = pending_capture(path)
    try:
        reading = read_now(pending)
        reading.first_shown.set()
        reading.thread.join(60)
        return listened(reading)[0]
    finally:
        pending.close()


def test_what_the_read_told_before_anyone_listened_is_held_and_then_told_in_order():
    pending = pending_capture(INSTR, sm_clock=1_980_000)
    try:
        reading = read_now(pending)
        assert reading.thread.is_alive() or reading.settled.is_set()
        reading.first_shown.set()  # nobody draws here: the tree is not held back
        reading.thread.join(60)
        assert reading.settled.is_set() and not reading.loading()
        heard, _ = listened(reading)
    finally:
        pending.close()
    first, read = heard
    assert isinstance(first, First) and isinstance(read, Read)
    assert read.profile.trace is first.trace and first.warps.clock_khz == read.profile.run_clock_khz == 1_980_000
    assert first.warps.launches.worked_out == 1 and len(first.warps.launches) == 2


def test_the_tree_waits_until_the_first_launch_is_shown():
    pending = pending_capture(INSTR)
    try:
        reading = read_now(pending)
        heard, told = listened(reading)
        assert told.wait(60) and isinstance(heard[0], First)
        told.clear()
        assert not told.wait(0.5) and not reading.settled.is_set()  # the tree is held back while it is drawn
        reading.first_shown.set()
        reading.thread.join(60)
    finally:
        pending.close()
    assert [type(outcome) for outcome in heard] == [First, Read]


def test_a_capture_that_is_not_a_trace_tells_its_profile_alone_and_a_bad_one_its_line(tmp_path):
    for path in (FIXTURES / "vecadd_hook.hatchet", FIXTURES / "vecadd_trace.chrome_trace"):
        assert [type(outcome) for outcome in told_of(path)] == [Read], path  # a trace without warps: lanes wait for it
    broken = tmp_path / "broken.chrome_trace"
    broken.write_text('{"traceEvents": [{"ph": "X", "name": "k", "ts": 1, "dur": -5, "pid": 0, "tid": "stream 7"}]}')
    (failed,) = told_of(broken)
    assert isinstance(failed, Failed) and str(broken) in failed.reason


def forced(program: str) -> str:
    """What `program` prints, run after WITH_WORKERS in a process of its own (nothing imported before it)."""
    found = subprocess.run([sys.executable, "-c", WITH_WORKERS + program, str(INSTR)], capture_output=True, text=True,
                           timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert found.returncode == 0, found.stderr
    return found.stdout.strip()


def test_a_read_that_waits_for_workers_imports_what_works_out_the_first_launch_before_it_waits():
    # imported while the workers decode, not after they are done, in front of the first launch drawn
    assert forced("""
from pathlib import Path
from proton_tui.hatchet import pending_capture
from proton_tui.view.reading import First, read_now
waiting = split_read.SplitRead.trace
def trace(self, *args, **kwargs):
    print("proton_tui.view.warps" in sys.modules)
    return waiting(self, *args, **kwargs)
split_read.SplitRead.trace = trace
pending = pending_capture(Path(sys.argv[1]))
assert pending.decoded_by_workers
reading = read_now(pending)
reading.first_shown.set()
reading.thread.join(60)
heard = []
reading.listen(heard.append)
assert isinstance(heard[0], First) and len(forks) >= 2, (heard, forks)
pending.close()
""") == "True"


def test_the_viewer_forks_a_trace_s_workers_before_it_imports_what_they_do_not_need():
    # every module imported before the fork is imported before the workers start: names, demangler and Textual wait
    imported = forced("""
from pathlib import Path
def at_fork():
    print(" ".join(sorted(name for name in sys.modules if name.split(".")[0] in ("proton_tui", "demangle", "textual"))))
    sys.stdout.flush()
    os._exit(0)
os.fork = at_fork
from proton_tui.tui.launch import open_viewer
open_viewer(Path(sys.argv[1]))
""").split()
    assert "proton_tui.hatchet.split_read" in imported
    assert not [name for name in imported if name.startswith(("proton_tui.view", "proton_tui.tui.app", "demangle",
                                                               "textual"))]
