"""A large Chrome trace read a piece at a time, never held whole: the same trace as the file read whole, cut
anywhere; anything the piece reader does not take is read whole, with the error worded as always; a file written
while it is read is reported, with or without the read lease."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import orjson
import pytest

from proton_tui.hatchet import CaptureError, PendingLoad, load_profile, source
from proton_tui.hatchet.chrome_trace import decode_trace
from proton_tui.hatchet.trace_stream import NotStreamable, stream_trace
from tests.helpers import FIXTURES, REPO, finished_under_lease

HERE = Path("trace")  # the name a cancelled read would give
COLUMNS = ("start", "duration", "lane", "name", "category", "stack", "arg")


def generated(folder, script: str, *arguments: str):
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, str(REPO / "benchmarks" / script), *arguments, "--out", str(folder)],
                   check=True, capture_output=True, timeout=120)
    (path,) = folder.glob("*.chrome_trace")
    return path


def in_pieces(data: bytes, size: int):
    return (data[at:at + size] for at in range(0, len(data), size))


def assert_same(streamed, whole) -> None:
    for name in COLUMNS:
        assert np.array_equal(getattr(streamed.columns, name), getattr(whole.columns, name)), name
    for name in ("names", "categories", "stacks", "args"):
        assert getattr(streamed.columns, name) == getattr(whole.columns, name), name
    assert streamed.columns.metrics.keys() == whole.columns.metrics.keys()
    for key, values in whole.columns.metrics.items():
        assert np.array_equal(streamed.columns.metrics[key], values, equal_nan=True)
    assert streamed.lanes == whole.lanes
    assert (streamed.flow_count, dict(streamed.launches), streamed.base_ns, streamed.metric_events) == \
        (whole.flow_count, dict(whole.launches), whole.base_ns, whole.metric_events)
    assert streamed.tree() == whole.tree()
    assert [summarised(lane) for lane in streamed.summaries()] == [summarised(lane) for lane in whole.summaries()]


def summarised(lane) -> tuple:
    return lane.kernels, lane.busy, lane.active, lane.others, lane.gaps


EDGES = {
    # strings that hold what a cut looks for, arguments nested in objects and lists, keys after the events
    "strings": b'{"traceEvents": [{"ph": "X", "name": "a}, {\\"b", "cat": "kernel", "pid": 0, "tid": 1, "ts": 1, '
               b'"dur": 2, "args": {"call_stack": ["ROOT", "}]"], "x": [{"y": {}}, {"z": [1]}]}},\n'
               b'{"ph": "X", "name": "c", "cat": "kernel", "pid": 0, "tid": 1, "ts": 5, "dur": 1}  ,\r\n\t'
               b'{"ph": "M", "name": "thread_name", "pid": 0, "tid": 1, "args": {"name": "GPU Stream 1"}}],'
               b' "baseTimeNanoseconds": 1700000000000000000, "other": {"traceEvents": []}}',
    "empty": b'{"displayTimeUnit": "ns", "traceEvents": [ ]}',
    "one": b'{"traceEvents":[{"ph":"X","name":"k","cat":"kernel","pid":0,"tid":7,"ts":0.5,"dur":0.25}]}',
}


@pytest.mark.parametrize("name", sorted(EDGES))
def test_a_trace_cut_anywhere_is_the_trace_read_whole(name):
    data = EDGES[name]
    whole = decode_trace(data)
    for size in (1, 2, 3, 5, 8, 13, 64, len(data)):
        assert_same(stream_trace(HERE, in_pieces(data, size)), whole)


def test_generated_and_recorded_traces_read_in_pieces_are_the_traces_read_whole(tmp_path):
    paths = [generated(tmp_path / "warps", "make_instr_trace.py", "--ctas", "64", "--launches", "3"),
             generated(tmp_path / "kernels", "make_trace.py", "3000"), *sorted(FIXTURES.glob("*.chrome_trace"))]
    for path in paths:
        data = path.read_bytes()
        whole = decode_trace(data)
        for size in (4093, 65536, 1 << 20):
            assert_same(stream_trace(path, in_pieces(data, size)), whole)


@pytest.mark.parametrize("data", [
    b'{"traceEvents": [{"ph": "X", "ts": 1, "dur": 1},]}',  # a comma before the end
    b'{"traceEvents": [{"ph": "X", "ts": 1, "dur": 1}, 5]}',  # an event that is no object
    b'{"traceEvents": [{"ph": "X", "ts": "soon", "dur": 1}]}',  # a field of another type
    b'{"traceEvents": [{"ph": "X", "ts": 1, "dur": 1}]} trailing',  # bytes after the document
    b'{"traceEvents": [{"ph": "X", "ts": 1, "dur": 1}',  # cut short
    b'{"traceEvents": [{"ph": "X", "ts": 1, "dur": 1}], "baseTimeNanoseconds": "x"}',
])
def test_what_the_piece_reader_does_not_take_is_read_whole(data):
    with pytest.raises(NotStreamable):
        stream_trace(HERE, in_pieces(data, 7))


@pytest.fixture(scope="module")
def big_trace_bytes(tmp_path_factory) -> bytes:
    """A trace large enough to be read a piece at a time, made once for the module."""
    path = generated(tmp_path_factory.mktemp("big"), "make_trace.py", "40000")
    assert path.stat().st_size >= source.STREAM_FROM_BYTES
    return path.read_bytes()


@pytest.fixture
def big_trace(tmp_path, big_trace_bytes):
    """A copy of the large trace of the test's own, dated a minute back (written before it is opened)."""
    def made(folder):
        path = folder / "big.chrome_trace"
        path.write_bytes(big_trace_bytes)
        os.utime(path, (time.time() - 60, time.time() - 60))
        return path
    return made


def test_a_large_trace_is_read_in_pieces_and_shows_what_it_shows_read_whole(tmp_path, monkeypatch, big_trace):
    path = big_trace(tmp_path)
    pending = PendingLoad(path, settled=True)
    try:
        assert pending.trace_file is not None and pending.data is None
        streamed = pending.finish()
    finally:
        pending.close()
    monkeypatch.setattr(source, "STREAM_FROM_BYTES", 1 << 62)
    whole = load_profile(path, settled=True)
    assert_same(streamed.trace, whole.trace)
    assert (streamed.total, streamed.node_count) == (whole.total, whole.node_count)


SPOILED = {  # the trace's end spoiled
    "a comma before the list's end": lambda data: data[:data.rindex(b"]")] + b",]}",
    "an event that is no object": lambda data: data[:data.rindex(b"]")] + b", 5]}",
    "a clock base of another type": lambda data: data[:data.rindex(b"]")] + b'], "baseTimeNanoseconds": "x"}',
    "bytes after the document": lambda data: data + b" trailing",
    "cut short": lambda data: data[:len(data) - 100],
}


@pytest.mark.parametrize("spoiled", sorted(SPOILED))
def test_a_large_trace_that_is_not_right_gets_the_error_it_gets_read_whole(tmp_path, monkeypatch, spoiled, big_trace):
    path = big_trace(tmp_path)
    path.write_bytes(SPOILED[spoiled](path.read_bytes()))
    errors = []
    for limit in (source.STREAM_FROM_BYTES, 1 << 62):
        monkeypatch.setattr(source, "STREAM_FROM_BYTES", limit)
        with pytest.raises(CaptureError) as error:
            load_profile(path, settled=True)
        errors.append(str(error.value))
    assert errors[0] == errors[1] and str(path) in errors[0]


def test_a_same_size_rewrite_while_a_trace_is_read_in_pieces_is_reported(tmp_path, big_trace):
    """Read off the main thread, as the viewer does, there is no lease: the file is read a second time and the two
    reads compared; a writer rewriting it in place, again and again, never gets a torn trace shown."""
    path = big_trace(tmp_path)
    old = path.read_bytes()
    new = old.replace(b'"dur": 1', b'"dur": 2')
    assert len(new) == len(old) and new != old
    totals = {load_profile(path, settled=True).total: "old"}
    path.write_bytes(new)
    totals[load_profile(path, settled=True).total] = "new"
    path.write_bytes(old)
    assert len(totals) == 2
    stop, outcomes = threading.Event(), []

    def overwrite() -> None:
        while not stop.is_set():
            for content in (new, old):
                with open(path, "r+b") as handle:
                    handle.write(content)

    def read() -> None:
        for _ in range(6):
            pending = PendingLoad(path)
            try:
                assert pending.trace_file is not None and pending.trace_file.lease is None
                outcomes.append(totals.get(pending.finish().total, "torn"))
            except CaptureError as error:
                outcomes.append(str(error))
            finally:
                pending.close()

    writer, reader = threading.Thread(target=overwrite), threading.Thread(target=read)
    writer.start()
    reader.start()
    reader.join()
    stop.set()
    writer.join()
    assert len(outcomes) == 6 and "torn" not in outcomes
    assert all(outcome in ("old", "new") or outcome == f"{path}: changed while it was read; open it again"
               for outcome in outcomes), outcomes


def test_a_writer_paused_in_a_trace_read_in_pieces_is_waited_for(tmp_path, big_trace, monkeypatch):
    """A same-size rewrite paused halfway, with the file's time already set, while the trace is read (off the main
    thread: no lease): the second read, made once the writer has had time to move on, sees the rest of its bytes."""
    monkeypatch.setattr(source, "SETTLE_S", 5.0)  # the writer pauses as long as the first read: longer under load
    path = big_trace(tmp_path)
    old = path.read_bytes()
    new = old.replace(b'"dur": 1', b'"dur": 2')
    path.write_bytes(new[:len(new) // 2] + old[len(old) // 2:])
    stamp = path.stat()
    found = []

    def read() -> None:
        pending = PendingLoad(path)
        try:
            first = list(pending.trace_file.pieces())  # the first read, all of it while the writer is paused
            with open(path, "r+b") as handle:  # the writer moves on: the rest of its bytes, the time it had set
                handle.write(new)
            os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
            pending.trace_file.pieces = lambda: iter(first)
            pending.finish()
            found.append("shown")
        except CaptureError as error:
            found.append(str(error))
        finally:
            pending.close()

    reader = threading.Thread(target=read)
    reader.start()
    reader.join()
    assert found == [f"{path}: changed while it was read; open it again"]


def test_a_trace_read_in_pieces_under_its_lease_holds_a_writer_off(tmp_path, big_trace):
    path = big_trace(tmp_path)
    old = path.read_bytes()
    pending = PendingLoad(path, settled=True)
    assert pending.trace_file is not None and pending.trace_file.lease is not None
    profile = finished_under_lease(pending, path)
    whole = decode_trace(orjson.dumps(orjson.loads(old)))
    assert profile.trace.flow_count == whole.flow_count and len(profile.trace.columns) == len(whole.columns)
