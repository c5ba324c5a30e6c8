"""A large Chrome trace decoded by several processes at once, each a stretch of its events, on a machine with the
cores for it (a GPU box has dozens; the read is otherwise the one long wait before the first view).

The stretches are cut at a `}` followed by `,` and the next event's `{`. Such a cut may lie inside a string, but
then the stretch before it cannot decode: a stretch that starts where an event starts, decoded as a list, leaves a
string open where it ends inside one. The first stretch starts where the list does, so when every stretch decodes,
every cut was right. Each worker is forked from this process (sharing its modules and the open file), decodes its
stretch a piece at a time into columns (`trace_stream.read_events`) and hands them back in a file of memory made
for it before the fork (where the system has one and the file takes them whole; else through its pipe, whose closing
says it is done); its columns are taken in, stretch after stretch, as if one reader had read them
(`EventColumns.absorb`). Anything else (a worker that fails, a stretch that does not decode, keys after the events
that are not right) and the trace is read by one reader from the start, which words every error as it always does.

Workers are forked only from a process with one thread (the command line, before a TUI starts its own), only under
the file's read lease (a writer waits; without it the single reader's second read compares the bytes), and only with
four cores or more. A worker never outlives its reader (Linux kills it when the reader's process ends); a worker that
ends without its columns whole (killed, say, by the out-of-memory killer) sends the read to one reader as well.
"""

from __future__ import annotations

import ctypes
import gc
import os
import pickle
import re
import select
import signal
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from proton_tui.hatchet.errors import LoadCancelled

if TYPE_CHECKING:
    from proton_tui.hatchet.chrome_trace import EventColumns
    from proton_tui.hatchet.source import TraceFile
    from proton_tui.hatchet.trace import Trace

MIN_CPUS = 4  # below this one reader reads: on two cores workers saved nothing of `view --plain` (measurements.md)
MAX_WORKERS = 4  # at most: 4 to 16 read as fast on the H200 box (16 cores), 4 with the least memory (measurements.md)
MIN_STRETCH_BYTES = 8_000_000  # the least a worker is given
CUT_WINDOW = 1 << 20  # bytes searched for a cut after each stretch's nominal end
BETWEEN_EVENTS = re.compile(rb"\}[ \t\n\r]*,[ \t\n\r]*(?=\{)")
PIECE_BYTES = 4 << 20  # a worker reads its stretch this much at a time
WAIT_MS = 50  # how often a collection under way asks whether it was cancelled
PR_SET_PDEATHSIG = 1  # prctl: the signal a process gets when the thread that forked it ends (Linux)


def workers_for(trace_file: TraceFile) -> int:
    """How many workers read this trace: 0 (one reader) unless the process has one thread, the file is under its
    read lease, and the machine has MIN_CPUS cores or more for this process."""
    if not hasattr(os, "fork") or trace_file.lease is None or threading.active_count() > 1:
        return 0
    cpus = usable_cpus()
    if cpus < MIN_CPUS:
        return 0
    workers = min(cpus, MAX_WORKERS, trace_file.size // MIN_STRETCH_BYTES)
    return workers if workers >= 2 else 0


def usable_cpus() -> int:
    """The cores this process may run on: its CPU affinity, less where its control group's quota allows fewer (a
    container limited to a few cores of a large host)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    quota = cpu_quota()
    return min(cpus, max(1, int(quota))) if quota is not None else cpus


def cpu_quota() -> float | None:
    """The cores the control group's CPU quota allows (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us`); None: no quota."""
    for quota_file, period_file in (("/sys/fs/cgroup/cpu.max", None),
                                    ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.cfs_period_us")):
        try:
            words = Path(quota_file).read_text().split()
            if period_file is not None:
                words.append(Path(period_file).read_text().strip())
            quota, period = words[0], words[1]
            if quota == "max" or int(quota) < 0:
                return None
            return int(quota) / int(period)
        except (OSError, ValueError, IndexError):
            continue
    return None


class SplitRead:
    """Workers forked now, each decoding a stretch of the trace's events; `trace` gathers their columns (None: read
    it with one reader instead); `kill` stops them from any thread; `close` stops and reaps any still running. A
    trace whose stretches cannot be found, or a machine that cannot start them, starts no worker."""

    def __init__(self, path: Path, trace_file: TraceFile, workers: int) -> None:
        self.path, self.fd, self.size = path, trace_file.fd, trace_file.size
        self.children: list[Child] = []
        self._lock = threading.Lock()  # a kill from another thread never signals a worker already reaped
        self.head: bytes = b""
        stretches = self._stretches(workers)  # imports the reader (and numpy) here, once for every worker
        if stretches is None:
            return
        try:
            with warnings.catch_warnings():  # Python >= 3.12 warns of a fork beside threads: this one has none of
                warnings.simplefilter("ignore", DeprecationWarning)  # its own, and a worker runs only the decode
                for at, (start, end) in enumerate(stretches):
                    self._fork(start, end, last=at == len(stretches) - 1)
        except OSError:  # no process or pipe to be had (a process limit, descriptors): one reader reads it
            self.close()

    def _stretches(self, workers: int) -> list[tuple[int, int]] | None:
        """(start, end) of each worker's bytes: the first from just after the list's `[`, each later one from an
        event's `{`, each but the last to just after an event's `}`, the last to the end of the file."""
        from proton_tui.hatchet.trace_stream import HEAD_LIMIT, NotStreamable, trace_head

        def pieces() -> Iterator[bytes]:
            for at in range(0, min(self.size, HEAD_LIMIT + 65536), 65536):
                yield os.pread(self.fd, 65536, at)

        try:
            head, _, _ = trace_head(pieces())
        except (NotStreamable, OSError):
            return None
        self.head = head
        first = len(head) + 1
        bounds = [first]
        ends = []
        for worker in range(1, workers):
            nominal = first + (self.size - first) * worker // workers
            if nominal <= bounds[-1]:
                continue
            try:
                window = os.pread(self.fd, CUT_WINDOW, nominal)
            except OSError:
                return None
            found = BETWEEN_EVENTS.search(window)
            if found is None:
                continue
            ends.append(nominal + found.start() + 1)
            bounds.append(nominal + found.end())
        if len(bounds) < 2:
            return None
        return list(zip(bounds, [*ends, self.size]))

    def _fork(self, start: int, end: int, last: bool) -> None:
        read_end, write_end = os.pipe()
        scratch = _scratch()
        parent = os.getpid()
        try:
            pid = os.fork()
        except OSError:
            for fd in (read_end, write_end) if scratch is None else (read_end, write_end, scratch):
                os.close(fd)
            raise
        if pid == 0:  # the worker: nothing of the parent's runs here, and it leaves without its exit handlers
            code = 1
            try:
                os.close(read_end)
                for earlier in self.children:  # the earlier workers' pipes and files: only the reader holds them
                    earlier.close()
                _die_with(parent)
                if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends it (an ignored one stays ignored)
                gc.disable()
                payload = pickle.dumps(_decode(self.path, self.fd, start, end, last), protocol=pickle.HIGHEST_PROTOCOL)
                try:
                    _write_all(write_end if scratch is None else scratch, payload)
                except OSError:
                    if scratch is None:
                        raise
                    os.ftruncate(scratch, 0)  # the file refused it whole (a file-size limit, say): the pipe carries it
                    _write_all(write_end, payload)
                code = 0
            finally:
                os._exit(code)
        os.close(write_end)
        self.children.append(Child(pid, read_end, scratch, end))

    def trace(self, cancelled: Callable[[], bool] = lambda: False,
              progress: Callable[[int], None] = lambda done: None) -> Trace | None:
        """The trace from the workers' columns; None when a worker failed or a stretch did not decode (read it with
        one reader: the other workers are stopped at once). Raises LoadCancelled once `cancelled` says so. `progress`
        is told, as each worker's columns come, where in the file its stretch ended."""
        from proton_tui.hatchet.trace_stream import NotStreamable, base_time

        if not self.children:
            return None
        gathered: list = []
        for child in list(self.children):
            payload = self._collect(child.pipe, cancelled)
            found = None
            status = self._reaped(child.pid)
            if status is not None:
                try:
                    if status == 0:  # a worker killed while it handed back leaves a part
                        if not payload and child.scratch is not None:
                            payload = _whole(child.scratch)
                        found = pickle.loads(payload) if payload else None
                except Exception:  # noqa: BLE001 - whatever it left (or no memory for it), one reader reads the file
                    found = None
                finally:
                    child.close()
            if found is None:
                self.close()
                return None
            gathered.append(found)
            progress(child.end)
        self.close()
        columns, *later = (found[0] for found in gathered)
        for more in later:
            columns.absorb(more)
        try:
            base = base_time(self.head, gathered[-1][1])
        except NotStreamable:
            return None
        return columns.trace(base)

    def _collect(self, fd: int, cancelled: Callable[[], bool]) -> bytes:
        """What one worker handed back, until it closed its pipe."""
        chunks = []
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while True:
            if cancelled():
                self.close()
                raise LoadCancelled(self.path)
            if not poller.poll(WAIT_MS):
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)

    def _reaped(self, pid: int) -> int | None:
        """The worker's exit status, once it has ended (it is taken off the workers; its pipe and file are then the
        caller's to close); None where `close` took it off first."""
        with self._lock:
            for at, child in enumerate(self.children):
                if child.pid == pid:
                    del self.children[at]
                    return _wait(pid)
        return None

    def kill(self) -> None:
        """Stop the workers still running (from any thread; `close` reaps them)."""
        with self._lock:
            _stop(self.children)

    def close(self) -> None:
        """Stop the workers still running and reap them all."""
        with self._lock:
            children, self.children = self.children, []
            _stop(children)
            for child in children:
                child.close()
                _wait(child.pid)


class Child(NamedTuple):
    """A worker: its pid, the read end of its pipe, the file of memory it hands its columns back in (None: it
    hands them back through the pipe) and where its stretch ends."""

    pid: int
    pipe: int
    scratch: int | None
    end: int

    def close(self) -> None:
        """Close this process's ends of the worker's pipe and file (once: whoever takes it off the workers)."""
        for fd in (self.pipe,) if self.scratch is None else (self.pipe, self.scratch):
            os.close(fd)


def _scratch() -> int | None:
    """A file in memory that a worker hands its columns back in (Linux): written whole without waiting for the
    reader, then read at once; None where the system has none (the pipe carries them)."""
    try:
        return os.memfd_create("proton-tui-part", os.MFD_CLOEXEC)
    except (AttributeError, OSError):
        return None


def _write_all(fd: int, payload: bytes) -> None:
    """In a worker: `payload` written whole (OSError where it cannot be)."""
    view, at = memoryview(payload), 0
    while at < len(view):
        at += os.write(fd, view[at:])


def _whole(fd: int) -> bytes:
    """What a worker wrote in its file (empty where it cannot be read)."""
    try:
        size = os.fstat(fd).st_size
        chunks, at = [], 0
        while at < size:
            chunk = os.pread(fd, size - at, at)
            if not chunk:
                break
            chunks.append(chunk)
            at += len(chunk)
        return b"".join(chunks) if len(chunks) != 1 else chunks[0]
    except OSError:
        return b""


def _stop(children: list[Child]) -> None:
    """SIGKILL each worker (one already gone is passed over)."""
    for child in children:
        try:
            os.kill(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _wait(pid: int) -> int:
    """Reap a worker: its exit status (-1: not a child of this process any more)."""
    while True:
        try:
            return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        except InterruptedError:
            continue
        except ChildProcessError:
            return -1


def _die_with(parent: int) -> None:
    """In a worker: have the kernel kill it when the reader's process ends (Linux; the fork was made on the main
    thread, whose end is the process's), and end now if it already has."""
    if LIBC is None:
        return
    LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def _libc():
    try:
        return ctypes.CDLL(None, use_errno=True) if os.uname().sysname == "Linux" else None
    except (OSError, AttributeError):
        return None


LIBC = _libc()  # loaded before any fork, so a worker has it at once


def _decode(path: Path, fd: int, start: int, end: int, last: bool) -> tuple[EventColumns, bytes] | None:
    """In a worker: the columns of the events in bytes start … end and, for the last stretch, the object's keys after
    its events; None when the stretch does not decode as whole events."""
    from proton_tui.hatchet.chrome_trace import EventColumns, TraceError
    from proton_tui.hatchet.trace_stream import NotStreamable, read_events

    def pieces() -> Iterator[bytes]:
        at = start
        while at < end:
            piece = os.pread(fd, min(PIECE_BYTES, end - at), at)
            if not piece:
                return
            at += len(piece)
            yield piece
        if not last:
            yield b"]"  # the stretch's events end here: as a list, for the reader

    columns = EventColumns()
    stream = pieces()
    try:
        tail, _, _ = read_events(path, bytearray(b"["), stream, columns)
    except (NotStreamable, TraceError, OSError):
        return None
    tail += b"".join(stream)
    if not last and tail.strip():
        return None
    return columns, tail
