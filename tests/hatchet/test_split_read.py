"""A large trace decoded by several forked workers, a stretch each: the same trace as one reader reads, whatever the
stretches; a cut that falls inside a string, a worker that fails or a spoiled event sends the read back to one
reader, with its error worded as always; a cancelled or abandoned read leaves no worker behind."""

from __future__ import annotations

import errno
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest

from proton_tui.hatchet import CaptureError, PendingLoad, source, split_read
from proton_tui.hatchet.chrome_trace import decode_trace
from proton_tui.hatchet.errors import LoadCancelled
from proton_tui.hatchet.split_read import SplitRead, workers_for
from proton_tui.hatchet.trace_stream import stream_trace
from tests.hatchet.test_trace_stream import EDGES, assert_same, generated, in_pieces
from tests.helpers import CLI, FIXTURES, REPO, WITH_WORKERS, finished_under_lease

HERE = Path("trace")


def split(path: Path, workers: int):
    """The trace of `path` read by `workers` workers (None: one reader must read it), and how many were forked."""
    with source.streamed(path, settled=True) as trace_file:
        assert trace_file is not None and trace_file.lease is not None
        reading = SplitRead(path, trace_file, workers)
        forked = len(reading.children)
        try:
            return reading.trace(), forked
        finally:
            reading.close()


def with_workers(path: Path, workers: int) -> PendingLoad:
    """The load of `path` with `workers` forked whatever this machine's cores (the policy is tested on its own)."""
    pending = PendingLoad(path, settled=True)
    pending._split = SplitRead(path, pending.trace_file, workers)
    return pending


def read_with_workers(path: Path, workers: int):
    """The profile of `path` as its load with `workers` finishes it."""
    pending = with_workers(path, workers)
    try:
        return pending.finish()
    finally:
        pending.close()


@pytest.fixture(scope="module")
def big_bytes(tmp_path_factory) -> bytes:
    """A trace of 16 MB and more (as one read in pieces is), made once for the module."""
    return generated(tmp_path_factory.mktemp("big"), "make_trace.py", "40000").read_bytes()


@pytest.fixture
def big_trace(big_bytes):
    """A copy of the large trace of the test's own, dated a minute back (written before it is opened)."""
    def made(folder: Path) -> Path:
        path = folder / "big.chrome_trace"
        path.write_bytes(big_bytes)
        os.utime(path, (time.time() - 60, time.time() - 60))
        return path
    return made


@pytest.fixture
def large(monkeypatch):
    """Every trace from 1 KB up is read a stretch at a time (as a large one is)."""
    monkeypatch.setattr(source, "STREAM_FROM_BYTES", 1024)


def test_generated_and_recorded_traces_read_by_workers_are_the_traces_one_reader_reads(tmp_path, large):
    paths = [generated(tmp_path / "warps", "make_instr_trace.py", "--ctas", "64", "--launches", "3"),
             generated(tmp_path / "kernels", "make_trace.py", "3000"),
             *(path for path in sorted(FIXTURES.glob("*.chrome_trace")) if path.stat().st_size > 8192)]
    assert len(paths) >= 3
    for path in paths:
        one = stream_trace(path, in_pieces(path.read_bytes(), 1 << 20))
        for workers in (2, 3, 7):
            trace, forked = split(path, workers)
            assert forked >= 2, (path, workers)
            assert trace is not None, (path, workers)
            assert_same(trace, one)


def test_edge_traces_read_with_workers_are_read_as_one_reader_reads_them(tmp_path, large):
    for name in ("strings", "one"):
        path = tmp_path / f"{name}.chrome_trace"
        data = EDGES[name].replace(b"[", b"[" + b" " * 2048, 1)  # from 1 KB up: read in stretches
        path.write_bytes(data)
        assert_same(read_with_workers(path, 3).trace, decode_trace(data))


def strings_at_every_cut(count: int) -> bytes:
    """A trace whose events' names hold `}, {` many times over: wherever a stretch is cut, it is likely inside one."""
    name = "}, {" * 40_000
    events = [f'{{"ph": "X", "name": "{name}{at}", "cat": "kernel", "pid": 0, "tid": 7, "ts": {at}, "dur": 1}}'
              for at in range(count)]
    return ('{"traceEvents": [' + ", ".join(events) + "]}").encode()


def test_a_cut_inside_a_string_sends_the_read_to_one_reader_and_the_trace_is_right(tmp_path, large):
    path = tmp_path / "strings.chrome_trace"
    data = strings_at_every_cut(12)
    path.write_bytes(data)
    trace, forked = split(path, 4)
    assert forked == 4 and trace is None  # a stretch ended inside a name: it did not decode
    assert_same(read_with_workers(path, 4).trace, decode_trace(data))


def test_mixed_flow_ids_decoded_in_separate_pieces_match_as_when_decoded_together():
    """A flow whose start and finish are decoded in different pieces, one piece with a flow id of text beside a
    number and one with numbers alone: the number is the same number in both."""
    events = [b'{"ph": "X", "name": "launch", "cat": "cpu_op", "pid": 0, "tid": 1, "ts": 1, "dur": 1}',
              b'{"ph": "X", "name": "k", "cat": "kernel", "pid": 0, "tid": 7, "ts": 5, "dur": 1}',
              b'{"ph": "X", "name": "k2", "cat": "kernel", "pid": 0, "tid": 7, "ts": 9, "dur": 1}',
              b'{"ph": "s", "name": "launch->kernel", "cat": "flow", "pid": 0, "tid": 1, "ts": 1, "id": "x"}',
              b'{"ph": "s", "name": "launch->kernel", "cat": "flow", "pid": 0, "tid": 1, "ts": 1, "id": 5}',
              b'{"ph": "f", "name": "launch->kernel", "cat": "flow", "pid": 0, "tid": 7, "ts": 5, "id": 5}',
              b'{"ph": "f", "name": "launch->kernel", "cat": "flow", "pid": 0, "tid": 7, "ts": 9, "id": "x"}']
    data = b'{"traceEvents": [' + b", ".join(events) + b"]}"
    whole = decode_trace(data)
    assert whole.flow_count == 2
    cuts = [data.index(events[5]), data.index(events[6])]
    pieces = [data[:cuts[0]], data[cuts[0]:cuts[1]], data[cuts[1]:]]
    assert_same(stream_trace(HERE, iter(pieces)), whole)


def test_a_spoiled_event_in_a_later_stretch_gets_the_error_one_reader_gives(tmp_path, large):
    path = generated(tmp_path / "kernels", "make_trace.py", "3000")
    data = path.read_bytes()
    at = data.index(b'"ts": ', len(data) * 3 // 4)
    path.write_bytes(data[:at] + b'"ts": "soon", "old": ' + data[at + 6:])
    trace, forked = split(path, 3)
    assert forked == 3 and trace is None
    errors = refusals_with_and_without_workers(path)
    assert errors[0] == errors[1] and str(path) in errors[0] and "'ts'" in errors[0]


def refusals_with_and_without_workers(path: Path) -> list[str]:
    """The CaptureError's words for `path` read by three workers, then by one reader."""
    errors = []
    for workers in (3, 0):
        pending = with_workers(path, workers) if workers else PendingLoad(path, settled=True)
        try:
            with pytest.raises(CaptureError) as error:
                pending.finish()
        finally:
            pending.close()
        errors.append(str(error.value))
    return errors


@pytest.mark.parametrize("field", ["dur", "flow"])
def test_a_time_past_the_largest_float_in_a_later_stretch_gets_the_error_one_reader_gives(tmp_path, large, field):
    """The workers decode every stretch; the time only passes the largest float once in ns, when their columns
    are put together: refused with the one reader's line (a CaptureError), not a TraceError from the columns."""
    path = generated(tmp_path / "kernels", "make_trace.py", "3000")
    data = path.read_bytes()
    if field == "dur":
        at = data.index(b'"dur": ', len(data) * 3 // 4)
        path.write_bytes(data[:at] + b'"dur": 1e306, "old": ' + data[at + 7:])
    else:
        end = data.rindex(b"]")
        path.write_bytes(data[:end] + b', {"ph": "s", "name": "launch", "cat": "flow", "pid": 1, "tid": 0, '
                         b'"ts": 1e306, "id": 1}' + data[end:])
    errors = refusals_with_and_without_workers(path)
    assert errors[0] == errors[1] and str(path) in errors[0] and "past the largest float" in errors[0]


def alive(pids: list[int]) -> list[int]:
    """Those of `pids` that are still processes (a zombie not reaped counts)."""
    return [pid for pid in pids if Path(f"/proc/{pid}").exists()]


def running(pids: list[int]) -> list[int]:
    """Those of `pids` still running (not ended, whether or not something has reaped them)."""
    found = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X"):
            found.append(pid)
    return found


def waited(test, seconds: float = 10.0):
    """Whether `test()` came true within `seconds`."""
    end = time.monotonic() + seconds
    while not test():
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


def test_a_cancelled_read_stops_and_reaps_its_workers(tmp_path, large):
    path = tmp_path / "strings.chrome_trace"
    path.write_bytes(strings_at_every_cut(40))
    os.utime(path, (time.time() - 60, time.time() - 60))
    pending = with_workers(path, 3)
    pids = [pid for pid, *_ in pending._split.children]
    assert len(pids) == 3
    pending.cancel()
    with pytest.raises(LoadCancelled):
        pending.finish()
    pending.close()
    assert alive(pids) == []


def test_a_read_never_finished_reaps_its_workers_when_closed(tmp_path, large):
    path = generated(tmp_path / "kernels", "make_trace.py", "3000")
    pending = with_workers(path, 2)
    pids = [pid for pid, *_ in pending._split.children]
    pending.close()
    assert len(pids) == 2 and alive(pids) == []


def test_workers_read_only_from_a_process_of_one_thread_under_the_lease_with_the_cores(tmp_path, large, monkeypatch):
    path = generated(tmp_path / "kernels", "make_trace.py", "3000")
    monkeypatch.setattr(split_read, "MIN_STRETCH_BYTES", 1024)
    monkeypatch.setattr(split_read, "cpu_quota", lambda: None)
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    with source.streamed(path, settled=True) as trace_file:
        assert workers_for(trace_file) == split_read.MAX_WORKERS
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(split_read.MIN_CPUS - 1)))
        assert workers_for(trace_file) == 0  # too few cores
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
        monkeypatch.setattr(threading, "active_count", lambda: 2)
        assert workers_for(trace_file) == 0  # another thread: no fork beside it
        monkeypatch.setattr(threading, "active_count", lambda: 1)
        lease, trace_file.lease = trace_file.lease, None
        try:
            assert workers_for(trace_file) == 0  # no lease: one reader reads it, and reads it again to compare
        finally:
            trace_file.lease = lease


def test_a_load_says_whether_workers_decode_its_file(tmp_path, large, monkeypatch):
    # the viewer reads such a file while Textual starts: its reading thread mostly waits for the workers
    path = generated(tmp_path / "kernels", "make_trace.py", "3000")
    monkeypatch.setattr(split_read, "MIN_STRETCH_BYTES", 1024)
    monkeypatch.setattr(split_read, "cpu_quota", lambda: None)
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    for cores, decoded_by_workers in ((16, True), (split_read.MIN_CPUS - 1, False)):
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid, cores=cores: set(range(cores)))
        pending = PendingLoad(path, settled=True)
        try:
            assert pending.decoded_by_workers is decoded_by_workers
            pending.finish()
            assert not pending.decoded_by_workers  # read: none left
        finally:
            pending.close()


FORCED = WITH_WORKERS + """
from proton_tui.entry import main
sys.argv = ["proton-tui", *sys.argv[1:]]
try:
    main()
finally:
    print(f"forked {len(forks)}", file=sys.stderr)
"""


def test_the_command_line_reads_a_large_trace_with_workers_and_prints_what_one_reader_prints(tmp_path):
    """`view FILE --json` in a process of its own, its policy lowered to this machine: workers fork, and the output
    is byte for byte the output of one reader."""
    path = generated(tmp_path / "warps", "make_instr_trace.py", "--ctas", "64", "--launches", "3")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    split_run = subprocess.run([sys.executable, "-c", FORCED, "view", str(path), "--json"], capture_output=True,
                               env=env, timeout=120)
    one = subprocess.run([CLI, "view", str(path), "--json"], capture_output=True, timeout=120)
    assert split_run.returncode == 0 and one.returncode == 0, split_run.stderr
    forked = int(split_run.stderr.decode().split("forked ")[-1])
    assert forked >= 2
    assert split_run.stdout == one.stdout


def test_a_trace_read_by_workers_under_its_lease_holds_a_writer_off(tmp_path, large):
    """The workers share the reader's open file: its read lease holds while they read, and a writer that opens the
    file meanwhile waits until the read is done."""
    path = generated(tmp_path / "kernels", "make_trace.py", "3000")
    one = stream_trace(path, in_pieces(path.read_bytes(), 1 << 20))
    pending = with_workers(path, 3)
    assert pending.trace_file.lease is not None
    assert len(pending._split.children) == 3
    profile = finished_under_lease(pending, path)
    assert_same(profile.trace, one)


def test_negative_and_text_flow_ids_read_by_workers_are_the_flows_one_reader_finds(tmp_path, large):
    """Flow ids below zero are ids like any other: workers number them as one reader does, and no negative number
    is taken for a text id (the first text id and -1 once shared a number)."""
    events = []
    for at in range(3000):
        flow = -(at + 1) if at % 3 else f"id{at}"
        events += [f'{{"ph": "X", "name": "launch", "cat": "cpu_op", "pid": 0, "tid": 1, "ts": {at * 10}, "dur": 1}}',
                   f'{{"ph": "X", "name": "k", "cat": "kernel", "pid": 0, "tid": 7, "ts": {at * 10 + 5}, "dur": 1}}',
                   f'{{"ph": "s", "cat": "flow", "pid": 0, "tid": 1, "ts": {at * 10}, "id": {orjson.dumps(flow).decode()}}}',
                   f'{{"ph": "f", "cat": "flow", "pid": 0, "tid": 7, "ts": {at * 10 + 5}, "id": {orjson.dumps(flow).decode()}}}']
    path = tmp_path / "flows.chrome_trace"
    path.write_text('{"traceEvents": [' + ", ".join(events) + "]}")
    one = stream_trace(path, in_pieces(path.read_bytes(), 1 << 20))
    assert one.flow_count == 3000 and len(one.launches) == 3000
    for workers in (2, 5):
        trace, forked = split(path, workers)
        assert forked == workers and trace is not None
        assert_same(trace, one)
    crossed = b'{"traceEvents": [' + b", ".join([
        b'{"ph": "X", "name": "launch", "cat": "cpu_op", "pid": 0, "tid": 1, "ts": 0, "dur": 1}',
        b'{"ph": "X", "name": "k", "cat": "kernel", "pid": 0, "tid": 7, "ts": 5, "dur": 1}',
        b'{"ph": "s", "cat": "flow", "pid": 0, "tid": 1, "ts": 0, "id": -1}',
        b'{"ph": "f", "cat": "flow", "pid": 0, "tid": 7, "ts": 5, "id": "x"}']) + b"]}"
    assert decode_trace(crossed).flow_count == 0  # -1 and "x" are two flows, neither whole


def many_names(tmp_path: Path) -> Path:
    """A trace of 60,000 kernels of different names and arguments (columns of several MB a worker)."""
    events = [f'{{"ph": "X", "name": "kernel_{at}", "cat": "kernel", "pid": 0, "tid": 7, "ts": {at}, "dur": 1, '
              f'"args": {{"u": {at}}}}}' for at in range(60_000)]
    path = tmp_path / "many_names.chrome_trace"
    path.write_text('{"traceEvents": [' + ", ".join(events) + "]}")
    return path


def open_files() -> dict[int, str]:
    """This process's open descriptors and what each is."""
    found = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            found[int(name)] = os.readlink(f"/proc/self/fd/{name}")
        except OSError:  # the listing's own descriptor, gone
            pass
    return found


def test_a_worker_killed_while_it_hands_back_its_columns_sends_the_read_to_one_reader(tmp_path, large, monkeypatch):
    """A worker killed (by the out-of-memory killer, say) with part of its columns in the pipe (a system with no file
    of memory to hand them back in): the part is never taken for the whole, and one reader reads the file."""
    monkeypatch.setattr(split_read, "_scratch", lambda: None)
    path = many_names(tmp_path)
    with source.streamed(path, settled=True) as trace_file:
        reading = SplitRead(path, trace_file, 2)
        pids = [pid for pid, *_ in reading.children]
        try:
            blocked = lambda: all("pipe_write" in Path(f"/proc/{pid}/wchan").read_text() for pid in pids)  # noqa: E731
            assert waited(blocked, 30), "the workers never filled their pipes"
            os.kill(pids[1], signal.SIGKILL)
            assert reading.trace() is None
        finally:
            reading.close()
    assert alive(pids) == []
    pending = with_workers(path, 2)
    try:
        os.kill(pending._split.children[0][0], signal.SIGKILL)  # before it hands back anything
        profile = pending.finish()
    finally:
        pending.close()
    assert_same(profile.trace, stream_trace(path, in_pieces(path.read_bytes(), 1 << 20)))


@pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="no file of memory on this system: the pipe carries it")
def test_a_worker_whose_file_refuses_its_columns_hands_them_back_through_its_pipe(tmp_path, large):
    """A worker whose file of memory will not take its columns whole (here the file-size limit, 64 KB, that it was
    forked under) hands them back through its pipe: the workers' trace, the same as one reader's."""
    path = many_names(tmp_path)
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    with source.streamed(path, settled=True) as trace_file:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 16, limit[1]))
        try:
            reading = SplitRead(path, trace_file, 2)
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, limit)
        children = list(reading.children)
        try:
            assert len(children) == 2 and all(child.scratch is not None for child in children)
            trace = reading.trace()
        finally:
            reading.close()
    assert alive([child.pid for child in children]) == []
    assert trace is not None
    assert_same(trace, stream_trace(path, in_pieces(path.read_bytes(), 1 << 20)))


def test_columns_that_cannot_be_taken_in_leave_no_pipe_or_file_open(tmp_path, large, monkeypatch):
    """A worker's columns that the reader has no memory to take in: one reader reads the file instead, and no
    worker's pipe or file is left open in the reader."""
    path = many_names(tmp_path)
    if hasattr(os, "memfd_create"):
        monkeypatch.setattr(split_read, "_whole", lambda fd: (_ for _ in ()).throw(MemoryError()))
    else:
        monkeypatch.setattr(split_read.pickle, "loads", lambda payload: (_ for _ in ()).throw(MemoryError()))
    before = open_files()
    with source.streamed(path, settled=True) as trace_file:
        reading = SplitRead(path, trace_file, 2)
        children = list(reading.children)
        try:
            assert reading.trace() is None
        finally:
            reading.close()
    assert alive([child.pid for child in children]) == []
    left = {fd: what for fd, what in open_files().items() if before.get(fd) != what}
    assert left == {}


def test_an_abandoned_read_stops_its_workers_while_they_are_collected(tmp_path, large, big_trace):
    """Quitting the viewer mid-read abandons the read (the reading thread is parked for good): the workers are
    stopped then, not left decoding."""
    path = big_trace(tmp_path)
    pending = with_workers(path, 2)
    pids = [pid for pid, *_ in pending._split.children]
    reader = threading.Thread(target=pending.finish, daemon=True)
    collecting = threading.Event()
    real = SplitRead._collect

    def collect(self, fd, cancelled):
        collecting.set()
        return real(self, fd, cancelled)

    SplitRead._collect = collect
    try:
        reader.start()
        assert collecting.wait(30)
        pending.cancel(abandon=True)
        assert waited(lambda: running(pids) == [], 5), running(pids)
    finally:
        SplitRead._collect = real


DIES = """
import os, sys
from pathlib import Path
from proton_tui.hatchet import source
from proton_tui.hatchet.split_read import SplitRead
path = Path(sys.argv[1])
opened = source.streamed(path, settled=True)
trace_file = opened.__enter__()
reading = SplitRead(path, trace_file, 2)
import signal, time
for pid, *_ in reading.children:
    while int(Path(f"/proc/{pid}/io").read_text().split()[1]) == 0:  # rchar: it has begun to read its stretch
        time.sleep(0.001)
    os.kill(pid, signal.SIGSTOP)  # a worker that cannot end by itself
print(" ".join(str(pid) for pid, *_ in reading.children), flush=True)
sys.stdin.readline()
os._exit(0)  # ends without stopping or reaping them
"""


def test_workers_end_with_the_process_that_forked_them(tmp_path, big_trace):
    """A reader's process that ends without stopping its workers (killed, say) takes them with it, even workers
    that could not end by themselves (stopped, here)."""
    path = big_trace(tmp_path)
    parent = subprocess.Popen([sys.executable, "-c", DIES, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    pids = [int(pid) for pid in parent.stdout.readline().split()]
    try:
        assert len(pids) == 2 and running(pids) == pids
        parent.stdin.write("\n")
        parent.stdin.flush()
        assert parent.wait(30) == 0
        assert waited(lambda: running(pids) == [], 10), running(pids)
    finally:
        for pid in running(pids):
            os.kill(pid, signal.SIGKILL)


def test_a_fork_refused_midway_reads_with_one_reader_and_leaves_no_worker(tmp_path, large, monkeypatch):
    path = generated(tmp_path / "kernels", "make_trace.py", "3000")
    fork, forked = os.fork, []

    def refused():
        if forked:
            raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")  # a process limit reached
        forked.append(fork())
        return forked[-1]

    monkeypatch.setattr(os, "fork", refused)
    pending = with_workers(path, 3)
    try:
        assert pending._split.children == [] and len(forked) == 1
        profile = pending.finish()
    finally:
        pending.close()
    assert alive(forked) == []
    assert_same(profile.trace, stream_trace(path, in_pieces(path.read_bytes(), 1 << 20)))


def test_workers_are_collected_through_descriptors_past_1024(tmp_path, large):
    path = generated(tmp_path / "kernels", "make_trace.py", "3000")
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        trace, forked = split(path, 2)
    finally:
        for fd in held:
            os.close(fd)
    assert forked == 2 and trace is not None
    assert_same(trace, stream_trace(path, in_pieces(path.read_bytes(), 1 << 20)))


def test_the_cores_a_control_group_allows_bound_the_workers(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)))
    monkeypatch.setattr(split_read, "cpu_quota", lambda: 2.5)
    assert split_read.usable_cpus() == 2
    monkeypatch.setattr(split_read, "cpu_quota", lambda: None)
    assert split_read.usable_cpus() == 64
