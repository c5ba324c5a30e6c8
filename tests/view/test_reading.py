"""A capture read on a thread from the moment it is asked for: what came of it held until someone listens, then told
in order; an instrumentation trace's first launch told before its tree is built, the tree waiting for that launch to
be shown; a bad file told as its one line."""

from __future__ import annotations

import threading

from proton_tui.hatchet import pending_capture
from proton_tui.view.reading import Failed, First, Read, read_now
from tests.helpers import FIXTURES

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
