"""A capture's bytes: from a regular file (a large one copied into memory of its own under a read lease, a smaller
one read whole and compared with a second read) or from standard input; anything but a regular file is refused
before it is opened, and a file written while it was read is reported, never read as neither version."""

from __future__ import annotations

import errno
import fcntl
import hashlib
import mmap
import os
import re
import signal
import stat
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from proton_tui.hatchet.decode import is_msgpack
from proton_tui.hatchet.errors import CaptureError

STDIN = Path("-")  # the capture is read from standard input
# From this size a capture is copied under a lease and read in pieces (twice pieces.PIECE_BYTES); a smaller one is
# read into memory and read once more to compare.
MAP_FROM_BYTES = 128_000_000
# Below this size a settled file is read the second time at once, not on a thread: a thread's start and join (about
# 3 ms on the 2-core machine) cost more than reading the file (1,024 ranks of 42 KB: docs/measurements.md).
REREAD_THREAD_FROM_BYTES = 4_000_000
REREAD_PIECE_BYTES = 1 << 20  # read again and compared this much at a time
# From this size a trace is read a piece at a time into its columns, never whole (docs/measurements.md, 107–108)
STREAM_FROM_BYTES = 16_000_000
TRACE_PIECE_BYTES = 4 << 20  # a trace's piece: about 16k events of the 83 MB instrumentation trace
HEAD_BYTES = 65536  # what is looked at to tell a Chrome trace: an object that names its traceEvents early
TRACE_HEAD = re.compile(rb'\s*\{.*?"traceEvents"\s*:\s*\[', re.DOTALL)
SETTLE_S = 0.5  # a file written this recently is compared again after this long (a writer may be paused mid-write)
FILE_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
              (stat.S_ISBLK, "a block device"))


def capture_path(text: str) -> Path:
    """The capture a command-line argument names: `-` alone is standard input; any other spelling of that name
    (`./-`) is the file called `-` in the working folder."""
    return STDIN if text == "-" else file_path(text)


def file_path(text: str) -> Path:
    """A file a path names, never standard input: `-` is the file of that name in the working folder (a path typed
    in the TUI, whose standard input is the terminal). pathlib reads `./-` as `-`, which is taken for standard
    input: such a path is made absolute."""
    path = Path(text)
    return Path.cwd() / path if path == STDIN else path


@contextmanager
def mapped(path: Path, settled: bool = False):
    """The file's bytes: a large file as a `Copy` (msgspec and orjson read its pages without a further copy), a
    smaller one read into memory. `-` reads standard input to its end. Anything but a
    regular file is refused before it is opened (a FIFO without a writer would block). `settled`: no writer can be
    busy with the file (see `_Reread`)."""
    if path == STDIN:
        data = sys.stdin.buffer.read()
        _check_content(path, data)
        yield data
        return
    with _opened(path) as handle:
        before = _version(handle.fileno())
        data, lease = _copied(handle.fileno(), before[0])
        again = None
        if data is None:
            data = handle.read()
            if not before[0] and data:  # /proc, /sys: a size of 0 that reads as text
                raise CaptureError(f"{path}: is a special file (its size says 0, yet it reads as text), not a capture "
                                   "file")
            _check_unchanged(path, handle, before, len(data))
            again = _Reread(handle.fileno(), len(data), before, settled, data)  # meanwhile: read again, to compare
        try:
            _check_content(path, data)
            yield data
            if isinstance(data, mmap.mmap):
                _check_unchanged(path, handle, before, len(data))
            elif not again.same_as(data):
                raise _changed(path)
        except CaptureError:  # what was read may be torn: then that is the reason, not what it looked like
            if again is not None and not again.same_as(data):
                raise _changed(path) from None
            raise
        finally:
            if isinstance(data, mmap.mmap):
                data.close()
                lease.release()
            elif again is not None:
                again.join()


class Copy(mmap.mmap):
    """A large capture's bytes: a copy of the file in memory of this process's own (a memfd), mapped read-only.
    Nothing can truncate it away, where a mapping of the file itself ends the process with SIGBUS when the file is
    truncated while it is read; `private()` maps it again copy-on-write, for a reader that writes to its view."""

    fd: int

    def private(self) -> mmap.mmap:
        return mmap.mmap(self.fd, 0, access=mmap.ACCESS_COPY)

    def close(self) -> None:
        super().close()
        if getattr(self, "fd", -1) >= 0:
            os.close(self.fd)
            self.fd = -1


def _copied(fd: int, size: int) -> tuple[Copy | None, _ReadLease | None]:
    """A file of at least MAP_FROM_BYTES copied (by the kernel, page cache to memfd) under a read lease, so that a
    writer opening it meanwhile waits, and the lease, held until the read is done; (None, None) when it is smaller,
    no lease or memfd can be had, or it was not read whole (it is then read into memory and compared)."""
    if size < MAP_FROM_BYTES or not hasattr(os, "memfd_create") or (lease := _ReadLease.take(fd)) is None:
        return None, None
    try:
        memfd = os.memfd_create("capture", os.MFD_CLOEXEC)
    except OSError:
        lease.release()
        return None, None
    try:
        done = 0
        while done < size and (count := os.sendfile(memfd, fd, done, size - done)):
            done += count
        if done != size:
            raise OSError(errno.EIO, "short read")
        copy = Copy(memfd, 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        os.close(memfd)
        lease.release()
        return None, None
    copy.fd = memfd
    return copy, lease


class _ReadLease:
    """A read lease on a capture being read (Linux): a writer that opens the file meanwhile (Proton rewriting it in
    place) waits until the read is done, or until the kernel breaks the lease (/proc/sys/fs/lease-break-time): the
    read, of its own copy, then ends as a file changed while it was read. Taken only where it can be: on the main thread
    (its SIGIO is caught there), on a file nobody has open for writing, by its owner or root; otherwise the file is
    read into memory and compared instead."""

    def __init__(self, fd: int, previous) -> None:
        self.fd, self.previous = fd, previous

    @classmethod
    def take(cls, fd: int) -> _ReadLease | None:
        if not hasattr(fcntl, "F_SETLEASE") or threading.current_thread() is not threading.main_thread():
            return None
        previous = signal.signal(signal.SIGIO, _lease_broken)  # a writer waits: nothing to do but finish soon
        try:
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
        except OSError:
            signal.signal(signal.SIGIO, previous)
            return None
        return cls(fd, previous)

    def release(self) -> None:
        try:
            fcntl.fcntl(self.fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
        except OSError:
            pass
        if threading.current_thread() is threading.main_thread():  # elsewhere the no-op handler stays
            signal.signal(signal.SIGIO, self.previous)


def _lease_broken(signum, frame) -> None:
    """SIGIO: a writer is waiting for the lease (it gets the file once the read is done)."""


def _version(file: int | Path) -> tuple[int, int, int] | None:
    """What changes when a file is written: its size, modification time and inode (of an open descriptor, or of a
    path: None when it is gone)."""
    try:
        status = os.stat(file)
    except OSError:
        return None
    return status.st_size, status.st_mtime_ns, status.st_ino


def _changed(path: Path) -> CaptureError:
    return CaptureError(f"{path}: changed while it was read; open it again")


def _check_unchanged(path: Path, handle, before: tuple[int, int, int], read: int) -> None:
    """CaptureError when the file was written while it was read: what was read may be neither version."""
    if read != before[0] or _version(handle.fileno()) != before or _version(path) != before:
        raise _changed(path)


class _Reread(threading.Thread):
    """The file read once more, on a thread (the read itself leaves the GIL to the parse), a piece at a time compared
    with what was read first (`data`), or, without it, hashed: a write in progress during the first read (one that
    already set the time it leaves, and keeps the size) shows as bytes that differ. A file written less than
    SETTLE_S ago is read again only once that time has passed, so that a writer paused in the middle of a write has
    moved on."""

    def __init__(self, fd: int, size: int, version: tuple[int, int, int], settled: bool, data=None) -> None:
        super().__init__(name="reread", daemon=True)
        self.fd, self.size, self.version, self.data = fd, size, version, data
        self.differs, self.digest = False, hashlib.sha256()
        self.settle_s = 0.0 if settled else SETTLE_S
        # a small file settled already is read again at once: a thread would cost more than the read it overlaps
        self.inline = size < REREAD_THREAD_FROM_BYTES and time.time() >= self.version[1] / 1e9 + self.settle_s
        if self.inline:
            self.run()
        else:
            self.start()

    def run(self) -> None:
        if (wait := self.version[1] / 1e9 + self.settle_s - time.time()) > 0:  # a sleep of 0 still yields the CPU
            time.sleep(wait)
        done = 0
        try:
            while done < self.size and (piece := os.pread(self.fd, min(REREAD_PIECE_BYTES, self.size - done), done)):
                if self.data is None:
                    self.digest.update(piece)
                elif piece != self.data[done:done + len(piece)]:
                    self.differs = True
                    return
                done += len(piece)
            self.differs = bool(os.pread(self.fd, 1, done))  # longer now
        except OSError:
            self.differs = True  # unreadable now: not the file that was read
        if done < self.size or _version(self.fd) != self.version:
            self.differs = True

    def same_as(self, data) -> bool:
        """Whether the second read found `data` (the bytes read first)."""
        self.join()
        return not self.differs and self.data is data

    def same_digest(self, digest: bytes) -> bool:
        """Whether the second read found bytes of this SHA-256 (those read first, hashed as they were read)."""
        self.join()
        return not self.differs and self.digest.digest() == digest

    def join(self, timeout: float | None = None) -> None:
        if not self.inline:
            super().join(timeout)


class TraceFile:
    """A large Chrome trace read a piece at a time (`pieces`), never held whole. Under a read lease a writer waits
    until the read is done; without one the file is read a second time on a thread and the two reads' SHA-256
    compared. `check`, once every piece is read, raises CaptureError when the file changed meanwhile."""

    def __init__(self, path: Path, fd: int, version: tuple[int, int, int], settled: bool) -> None:
        self.path, self.fd, self.version, self.size = path, fd, version, version[0]
        self.lease = _ReadLease.take(fd)
        self.digest = None if self.lease is not None else hashlib.sha256()
        self.again = None if self.lease is not None else _Reread(fd, self.size, version, settled)
        self.read = 0

    def pieces(self, piece_bytes: int = TRACE_PIECE_BYTES) -> Iterator[bytes]:
        """The file's bytes in order, `piece_bytes` at a time."""
        while self.read < self.size:
            try:
                piece = os.pread(self.fd, min(piece_bytes, self.size - self.read), self.read)
            except OSError as error:
                raise CaptureError(f"{self.path}: cannot read: {error.strerror or error}") from None
            if not piece:
                raise _changed(self.path)  # shorter now than when it was opened
            if self.digest is not None:
                self.digest.update(piece)
            self.read += len(piece)
            yield piece

    def read_by_workers(self) -> None:
        """The whole file was read by workers that share this open file (`split_read`), under its read lease."""
        assert self.lease is not None, "workers read only a file under its lease"
        self.read = self.size

    def check(self) -> None:
        """CaptureError when the file was written while it was read (what was read may be neither version)."""
        if self.read != self.size or _version(self.fd) != self.version or _version(self.path) != self.version \
                or (self.again is not None and not self.again.same_digest(self.digest.digest())):
            raise _changed(self.path)

    def close(self) -> None:
        if self.again is not None:
            self.again.join()
        if self.lease is not None:
            self.lease.release()
            self.lease = None


@contextmanager
def streamed(path: Path, settled: bool = False):
    """A Chrome trace of at least STREAM_FROM_BYTES as a `TraceFile`, read a piece at a time; None for anything else
    (standard input, a smaller file, another kind of capture: `mapped` reads it whole). Anything but a regular file
    is refused before it is opened."""
    if path == STDIN:
        yield None
        return
    with _opened(path) as handle:
        version = _version(handle.fileno())
        head = os.pread(handle.fileno(), HEAD_BYTES, 0) if version[0] >= STREAM_FROM_BYTES else b""
        if not TRACE_HEAD.match(head) or b"\x00" in head:
            yield None
            return
        trace = TraceFile(path, handle.fileno(), version, settled)
        try:
            yield trace
        finally:
            trace.close()


def _opened(path: Path):
    """The capture file opened for reading, once it is known to be a regular file; CaptureError otherwise."""
    _check_kind(path)
    try:
        return open(path, "rb")
    except OSError as error:
        raise CaptureError(f"{path}: cannot read: {error.strerror or error}") from None


def _check_kind(path: Path) -> None:
    """CaptureError unless `path` names a regular file (after symbolic links)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        doubled = path.with_name(path.name + ".hatchet")
        hint = f" (but {doubled.name} is: Proton's -n takes the name without .hatchet)" if doubled.exists() else ""
        raise CaptureError(f"{path}: no such file{hint}") from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise CaptureError(f"{path}: a loop of symbolic links, not a file") from None
        raise CaptureError(f"{path}: cannot read: {error.strerror or error}") from None
    if stat.S_ISDIR(mode):
        raise CaptureError(f"{path}: is a directory, not a .hatchet file")
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in FILE_KINDS if test(mode)), "not a regular file")
        raise CaptureError(f"{path}: is {kind}, not a capture file (use - to read one from standard input)")


def _check_content(path: Path, data) -> None:
    if not len(data) or re.match(rb"\s*\Z", data):
        raise CaptureError(f"{path}: empty file")
    if data[:2] == b"\x1f\x8b":
        how = "gunzip -c FILE | proton-tui view -" if path == STDIN else f"gunzip -k {path}"
        raise CaptureError(f"{path}: gzip-compressed: decompress it first ({how})")
    if is_msgpack(data):
        return
    if b"\x00" in data[:65536]:
        raise CaptureError(f"{path}: binary data, neither a JSON .hatchet nor a MessagePack .hatchet_msgpack capture")
