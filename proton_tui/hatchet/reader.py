"""Reading a `.hatchet` file: the bytes (memory-mapped), the JSON document, and its validated nodes flattened into
the model's arrays. Every problem is a CaptureError whose message is one line naming the file."""

from __future__ import annotations

import errno
import fcntl
import json
import json.scanner
import math
import mmap
import os
import re
import signal
import stat
import sys
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import orjson

from proton_tui.hatchet.cycles import facts_from_trace
from proton_tui.hatchet.devices import device_label
from proton_tui.hatchet.profile import (
    NO_UNIT,
    ROOT_PARENT,
    Profile,
)
from proton_tui.hatchet.trace import NotATrace, Trace, TraceError, decode_trace, read_trace
from proton_tui.hatchet.tree import GRAFTED_PARENT, add_children, is_number, with_inclusive

TIME_KEY = re.compile(r"^time \((ns|us|ms|s)\)$", re.IGNORECASE)
NS_PER_UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
COUNT_KEYS = ("count", "Count")
DEVICE_ID_KEYS = ("device_id", "DeviceId")
DEVICE_TYPE_KEYS = ("device_type", "DeviceType")
CYCLES_KEY = "cycles"
INTERNAL_PREFIX = "__proton_launch_metadata"
NO_METRICS: dict = {}  # the metrics of every node that has none (shared: never changed)
NO_KIDS: list = []  # the children of a node whose capture leaves them out (shared: never changed)
PLAIN_KERNEL_KEYS = frozenset(("time (ns)", "count", "device_id", "device_type"))  # a kernel's metrics, Triton >= 3.2
# Proton's numeric device types (instrumentation captures write its DeviceType enum's value).
DEVICE_TYPE_NAMES = {"0": "HIP", "1": "CUDA"}


class Frame(msgspec.Struct, gc=False):
    """A node's frame as msgspec decodes it (only the name is read)."""

    name: str


class Node(msgspec.Struct, gc=False):
    """A node as msgspec decodes it: a few small objects per node, no dict for the node or its frame."""

    frame: Frame
    children: list[Node] = []
    metrics: dict = {}


DOCUMENT = msgspec.json.Decoder(tuple[Node, dict])
MSGPACK_DOCUMENT = msgspec.msgpack.Decoder(tuple[Node, dict])  # .hatchet_msgpack (Triton >= 3.7): the same document


def is_msgpack(data) -> bool:
    """Whether a capture is MessagePack: it starts with an array or a map (Proton writes a two-element array),
    bytes that never start a JSON document (which starts with text)."""
    first = data[:1]
    return bool(first) and (0x80 <= first[0] <= 0x9F or 0xDC <= first[0] <= 0xDF)
NODES = msgspec.json.Decoder(list[Node])
# Anything msgspec cannot take: the file is then read with orjson, whose path gives the one-line error.
DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)


class CaptureError(Exception):
    """A capture that cannot be read; the message is one line that names the file."""



def is_object(data) -> bool:
    """Whether a JSON capture is an object (a Chrome trace, or a mistake) rather than Proton's [tree, device_info]."""
    return bytes(data[:256]).lstrip()[:1] == b"{"


def load_trace(path: Path, data, show_internal: bool, cancelled: Callable[[], bool] | None = None) -> Profile:
    """A Chrome trace decoded straight into compact structures (a large one is never held twice); anything the
    typed decoder refuses is read again with orjson, whose path words the error."""
    try:
        trace = decode_trace(data)
    except NotATrace:
        return load_parsed(path, data, show_internal, cancelled)  # which says what it is instead
    except TraceError as error:
        raise CaptureError(f"{path}: not a Proton trace: {error}") from None
    except DECODE_ERRORS:  # not JSON: orjson's path words what is wrong
        return load_parsed(path, data, show_internal, cancelled)
    return trace_profile(path, trace, show_internal, cancelled)


def load_whole(path: Path, data, show_internal: bool, cancelled: Callable[[], bool] | None = None) -> Profile:
    """The profile of the whole file in one read: decoded into msgspec Structs, or, when msgspec cannot take it (a
    bad document, nesting deeper than it allows), parsed with orjson, which also words every error. `cancelled`:
    see `flatten`."""
    if not is_msgpack(data) and is_object(data):
        return load_trace(path, data, show_internal, cancelled)
    try:
        with memoryview(data) as view:
            tree, device_info = (MSGPACK_DOCUMENT if is_msgpack(data) else DOCUMENT).decode(view)
    except DECODE_ERRORS:
        return load_parsed(path, data, show_internal, cancelled)
    try:
        return _index(path, tree, device_info, show_internal, structs=True, cancelled=cancelled)
    except NodeError:
        return load_parsed(path, data, show_internal, cancelled)


def load_parsed(path: Path, data, show_internal: bool, cancelled: Callable[[], bool] | None = None) -> Profile:
    """The profile of the whole file parsed into dicts and lists with orjson; CaptureError names what is wrong. A
    Chrome trace becomes the tree of its kernels, the trace itself kept beside it (`Profile.trace`)."""
    document = parse(path, data)
    if isinstance(document, dict) and "traceEvents" in document:
        try:
            trace = read_trace(document)
        except TraceError as error:
            raise CaptureError(f"{path}: not a Proton trace: {error}") from None
        del document
        return trace_profile(path, trace, show_internal, cancelled)
    kind = "MessagePack array" if is_msgpack(data) else "JSON list"
    tree, device_info = document_parts(path, document, kind)
    try:
        return _index(path, tree, device_info, show_internal, cancelled=cancelled)
    except NodeError as error:
        raise CaptureError(f"{path}: {error}") from None


def trace_profile(path: Path, trace: Trace, show_internal: bool, cancelled: Callable[[], bool] | None) -> Profile:
    """A Chrome trace's kernels as a tree (summed by call stack), with the trace kept for the timeline."""
    try:
        profile = _index(path, trace.tree(), {}, show_internal, cancelled=cancelled)
    except NodeError as error:
        raise CaptureError(f"{path}: {error}") from None
    profile.trace = trace
    profile.cycle_facts = facts_from_trace(trace)
    return profile


def document_parts(path: Path, document, kind: str = "JSON list") -> tuple[object, dict]:
    """The tree and device_info of a parsed capture; CaptureError when the document is not [tree, device_info]."""
    if not isinstance(document, list) or len(document) != 2:
        raise CaptureError(f"{path}: not a Proton capture: expected a {kind} [tree, device_info]")
    tree, device_info = document
    if not isinstance(device_info, dict):
        raise CaptureError(f"{path}: not a Proton capture: device_info (the list's second element) is not an object")
    return tree, device_info


STDIN = Path("-")  # the capture is read from standard input
# From this size a capture is memory-mapped and read in pieces (twice pieces.PIECE_BYTES); a smaller one is read into
# memory at once, so a writer truncating it meanwhile cannot pull pages from under the reader.
MAP_FROM_BYTES = 128_000_000
SETTLE_S = 0.5  # a file written this recently is compared again after this long (a writer may be paused mid-write)
FILE_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
              (stat.S_ISBLK, "a block device"))


@contextmanager
def mapped(path: Path, settled: bool = False):
    """The file's bytes, memory-mapped where possible: msgspec and orjson then read the page cache without a copy
    (sooner and smaller: docs/measurements.md). `-` reads standard input to its end. Anything but a
    regular file is refused before it is opened (a FIFO without a writer would block). `settled`: no writer can be
    busy with the file (see `_Reread`)."""
    if path == STDIN:
        data = sys.stdin.buffer.read()
        _check_content(path, data)
        yield data
        return
    _check_kind(path)
    try:
        handle = open(path, "rb")
    except OSError as error:
        raise CaptureError(f"{path}: cannot read: {error.strerror or error}") from None
    with handle:
        before = _version(handle.fileno())
        data, lease = None, None
        if before[0] >= MAP_FROM_BYTES:
            lease = _ReadLease.take(handle.fileno())
            if lease is not None:
                try:
                    data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
                except (ValueError, OSError):
                    lease.release()
                    lease = None
        again = None
        if data is None:
            data = handle.read()
            _check_unchanged(path, handle, before, len(data))
            again = _Reread(handle.fileno(), len(data), before, settled)  # meanwhile: read once more, to compare
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


class _ReadLease:
    """A read lease on a mapped capture (Linux): a writer that opens the file meanwhile (Proton rewriting it in
    place) waits until the lease is released, so the mapped pages cannot be truncated away under the read (which
    would end the process with SIGBUS). Taken only where it can be: on the main thread (its SIGIO is caught there),
    on a file nobody has open for writing, by its owner or root; otherwise the file is read into memory instead."""

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
    """The file read once more, on a thread (the read itself leaves the GIL to the parse): a write in progress
    during the first read (one that already set the time it leaves, and keeps the size) shows as bytes that
    differ. A file written less than SETTLE_S ago is read again only once that time has passed, so that a writer
    paused in the middle of a write has moved on."""

    def __init__(self, fd: int, size: int, version: tuple[int, int, int], settled: bool) -> None:
        super().__init__(name="reread", daemon=True)
        self.fd, self.copy, self.version, self.longer = fd, bytearray(size), version, False
        self.settle_s = 0.0 if settled else SETTLE_S
        self.start()

    def run(self) -> None:
        time.sleep(max(0.0, self.version[1] / 1e9 + self.settle_s - time.time()))
        view, done = memoryview(self.copy), 0
        try:
            while done < len(self.copy) and (count := os.preadv(self.fd, [view[done:]], done)):
                done += count
            self.longer = bool(os.pread(self.fd, 1, done))
        except OSError:
            self.longer = True  # unreadable now: not the file that was read
        if done < len(self.copy) or _version(self.fd) != self.version:
            self.longer = True

    def same_as(self, data: bytes) -> bool:
        self.join()
        return not self.longer and self.copy == data


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
        raise CaptureError(f"{path}: gzip-compressed: decompress it first (gunzip -k {path})")
    if is_msgpack(data):
        return
    if b"\x00" in data[:65536]:
        raise CaptureError(f"{path}: binary data, neither a JSON .hatchet nor a MessagePack .hatchet_msgpack capture")


def parse(path: Path, data):
    """The document as dicts and lists (JSON with orjson, MessagePack with msgspec); CaptureError saying why not."""
    if is_msgpack(data):
        return _parse_msgpack(path, data)
    try:
        with memoryview(data) as view:
            return orjson.loads(view)
    except orjson.JSONDecodeError as error:
        if "depth limit" in str(error) or "recursion" in str(error):  # orjson stops at 1,024 levels
            return _parse_deep(path, bytes(data))
        tail = bytes(data[-65536:])
        if error.pos >= len(data) - (len(tail) - len(tail.rstrip())):
            raise CaptureError(f"{path}: truncated: the JSON ends early (line {error.lineno})") from None
        if re.match(rb"-?(NaN|Infinity)", data[error.pos : error.pos + 9]):
            raise CaptureError(f"{path}: metric value is NaN or Infinity at line {error.lineno}") from None
        raise CaptureError(f"{path}: not valid JSON: {error.msg} at line {error.lineno} column {error.colno}") from None


def _parse_msgpack(path: Path, data):
    try:
        with memoryview(data) as view:
            return msgspec.msgpack.decode(view)
    except RecursionError:
        raise CaptureError(f"{path}: MessagePack nested deeper than its decoder allows") from None
    except msgspec.DecodeError as error:
        if "truncated" in str(error):
            raise CaptureError(f"{path}: truncated: the MessagePack data ends early") from None
        raise CaptureError(f"{path}: not valid MessagePack: {error}") from None


def _parse_deep(path: Path, data: bytes):
    """Parse JSON nested deeper than orjson allows (deep python-context stacks).

    The pure-Python scanner recurses in Python frames only, so a raised recursion limit on a thread with a large
    stack copes with any depth that fits in memory.
    """
    decoder = json.JSONDecoder()
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    outcome: dict = {}

    def parse() -> None:
        try:
            outcome["value"] = decoder.decode(data.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError) as error:
            outcome["error"] = error

    old_limit, old_stack = sys.getrecursionlimit(), threading.stack_size()
    sys.setrecursionlimit(max(old_limit, 2_000_000))
    threading.stack_size(512 * 1024 * 1024)
    try:
        worker = threading.Thread(target=parse, name="deep-json")
        worker.start()
        worker.join()
    finally:
        threading.stack_size(old_stack)
        sys.setrecursionlimit(old_limit)
    if "error" in outcome:
        raise CaptureError(f"{path}: not valid JSON: {outcome['error']}")
    return outcome["value"]


class LoadCancelled(Exception):
    """The load was cancelled (the user quit while it ran)."""


class NodeError(Exception):
    pass


def _check_metrics(metrics: dict) -> None:
    for key, value in metrics.items():
        kind = type(value)
        if kind is int or (kind is float and math.isfinite(value)):
            continue
        if key in DEVICE_ID_KEYS or key in DEVICE_TYPE_KEYS:
            if kind is not str:
                raise NodeError(f"metric {key!r} is {value!r}, not a device name")
        elif kind is float:
            raise NodeError(f"metric {key!r} is {value!r}, not a finite number")
        elif not (kind is list and all(is_number(v) for v in value)):
            raise NodeError(f"metric {key!r} is {value!r}, not a number")


def _check_amounts(metrics: dict) -> None:
    """What Proton cannot write: a launch count that is negative or not whole, negative bytes."""
    count = _first(metrics, COUNT_KEYS)
    if count is not None and not (count >= 0 and float(count).is_integer()):
        raise NodeError(f"metric 'count' is {count!r}, not a whole number of launches")
    size = metrics.get("bytes")
    if is_number(size) and size < 0:
        raise NodeError(f"metric 'bytes' is {size!r}, negative")


_ns_per_unit_of_key: dict[str, float | None] = {}  # metric key -> ns per unit for time keys, None for the rest


def _time_factor(key: str) -> float | None:
    if key not in _ns_per_unit_of_key:
        unit = TIME_KEY.match(key)
        _ns_per_unit_of_key[key] = NS_PER_UNIT[unit.group(1).lower()] if unit else None
    return _ns_per_unit_of_key[key]


def _own_value(metrics: dict) -> tuple[float | None, float | None]:
    """The node's own time in ns and own cycles, each None when absent."""
    time_ns = metrics.get("time (ns)")
    if time_ns is None:
        for key, value in metrics.items():
            factor = _time_factor(key)
            if factor is not None:
                time_ns = value * factor
    cycles = metrics.get(CYCLES_KEY)
    for value in (time_ns, cycles):
        if value is not None and value < 0:
            raise NodeError(f"negative time or cycles {value!r}")
    return time_ns, cycles


def _first(metrics: dict, keys: tuple[str, ...]):
    for key in keys:
        if key in metrics:
            return metrics[key]
    return None


def _where(names: list[str], parent: int) -> str:
    if parent == GRAFTED_PARENT:
        return "a node"
    return f"a child of node {names[parent]!r}" if parent >= 0 else "the tree's root"


def _index(path: Path, tree, device_info: dict, show_internal: bool, structs: bool = False,
           cancelled: Callable[[], bool] | None = None) -> Profile:
    flat = flatten([(tree, ROOT_PARENT, 0)], show_internal, structs=structs, cancelled=cancelled)
    if not flat.names:
        raise NodeError("the tree's root is an internal Proton frame")
    return profile_from(path, flat, device_info)


@dataclass
class Flat:
    """Nodes in pre-order as parallel lists, before inclusive values: what `_flatten` reads from parsed JSON."""

    names: list[str] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)
    depths: list[int] = field(default_factory=list)
    metrics: list[dict | None] = field(default_factory=list)
    time_own: list[float | None] = field(default_factory=list)
    cycles_own: list[float | None] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)
    bytes: list[float] = field(default_factory=list)
    hidden: int = 0
    hidden_with_children: bool = False  # a hidden internal frame had children


def flatten(roots: list[tuple[object, int, int]], show_internal: bool, compact: bool = False,
            structs: bool = False, cancelled: Callable[[], bool] | None = None) -> Flat:
    """Validate and flatten nodes given as (node, parent, depth), the first root first: parsed JSON (dicts), or with
    `structs` msgspec's `Node`s (their shape checked by the decoder). A root's parent is ROOT_PARENT for the tree's
    root (its metrics are hints, not values) or GRAFTED_PARENT (a node like any other). `compact`: a kernel whose
    metrics are exactly what the arrays hold gets None there (`Profile.node_metrics`). `cancelled` is asked as the
    walk goes down or up: True raises LoadCancelled."""
    flat = Flat()
    names, parents, depths = flat.names, flat.parents, flat.depths
    metrics_of, time_own, cycles_own, counts = flat.metrics, flat.time_own, flat.cycles_own, flat.counts
    devices, node_bytes = flat.devices, flat.bytes
    labels: dict[tuple, str] = {}
    isfinite = math.isfinite
    name_copies: dict[str, str] = {}  # one string per distinct name: kernel names repeat across the tree
    # Siblings are read through an iterator on the stack, left when a node has children and resumed after them.
    pending = [(iter([node]), parent, depth) for node, parent, depth in reversed(roots)]
    while pending:
        if cancelled is not None and cancelled():
            raise LoadCancelled
        siblings, parent, depth = pending[-1]
        for node in siblings:
            if structs:
                name, metrics, kids = node.frame.name, node.metrics, node.children
            else:
                if type(node) is not dict:
                    raise NodeError(f"{_where(names, parent)} is {type(node).__name__}, not an object")
                frame = node.get("frame")
                metrics, kids = node.get("metrics", NO_METRICS), node.get("children", NO_KIDS)
                name = frame.get("name") if type(frame) is dict else None
                if type(name) is not str:
                    raise NodeError(f"{_where(names, parent)} has no frame name")
                if type(metrics) is not dict or type(kids) is not list:
                    raise NodeError(f"node {name!r}: 'metrics' must be an object and 'children' a list")
            if not show_internal and name.startswith(INTERNAL_PREFIX):
                flat.hidden += 1 + _count_nodes(kids)
                flat.hidden_with_children = flat.hidden_with_children or bool(kids)
                continue
            time_ns = cycles = None
            count, device, size, kept = 0, "", 0.0, metrics or NO_METRICS
            if metrics:
                time_ns, count = metrics.get("time (ns)"), metrics.get("count")
                device_id, device_type = metrics.get("device_id"), metrics.get("device_type")
                label_key = None
                if (
                    type(time_ns) is int
                    and type(count) is int
                    and type(device_id) is str
                    and type(device_type) is str
                    and parent != ROOT_PARENT
                    and time_ns >= 0
                    and count >= 0
                ):  # a kernel as Proton >= 3.2 writes it, maybe with numeric extras (bytes, flops): no general checks
                    label_key = device_type, device_id
                    if len(metrics) != 4:
                        for key, value in metrics.items():
                            kind = type(value)
                            number = kind is int or (kind is float and isfinite(value))
                            if not number and key not in PLAIN_KERNEL_KEYS:
                                label_key = None  # a value the general checks must see
                                break
                        if "cycles" in metrics:
                            label_key = None
                        elif label_key is not None:
                            size = float(metrics.get("bytes", 0))
                            if size < 0:
                                label_key = None  # the general checks name it
                    elif compact and time_ns and device_type and ":" not in device_type \
                            and device_type not in DEVICE_TYPE_NAMES:
                        kept = None
                if label_key is None:
                    is_root = parent == ROOT_PARENT
                    try:
                        _check_metrics(metrics)
                        time_ns, cycles = (None, None) if is_root else _own_value(metrics)
                        if not is_root:
                            _check_amounts(metrics)
                    except NodeError as error:
                        raise NodeError(f"node {name!r}: {error}") from None
                    value = None if is_root else _first(metrics, COUNT_KEYS)
                    count = int(value) if is_number(value) else 0
                    device_id = _first(metrics, DEVICE_ID_KEYS)
                    if device_id is not None:
                        label_key = (_first(metrics, DEVICE_TYPE_KEYS), device_id)
                    value = metrics.get("bytes")
                    size = float(value) if is_number(value) else 0.0
                if label_key is not None:
                    device = labels.get(label_key) or labels.setdefault(
                        label_key,
                        device_label(DEVICE_TYPE_NAMES.get(label_key[0], label_key[0]) or "GPU", label_key[1]))
            node_id = len(names)
            names.append(name_copies.setdefault(name, name))
            parents.append(parent)
            depths.append(depth)
            metrics_of.append(kept)
            time_own.append(time_ns)
            cycles_own.append(cycles)
            counts.append(count)
            devices.append(device)
            node_bytes.append(size)
            if kids:
                pending.append((iter(kids), node_id, depth + 1))
                break
        else:
            pending.pop()
    return flat


def profile_from(path: Path, flat: Flat, device_info: dict, with_children: bool = True) -> Profile:
    """The profile of flattened nodes: its unit (ns, or cycles when no node has a time) and inclusive values;
    without `with_children`, its children lists are left empty (a part sent elsewhere, where they are rebuilt)."""
    unit = "ns" if any(v is not None for v in flat.time_own) else \
        "cycles" if any(v is not None for v in flat.cycles_own) else NO_UNIT
    own = flat.time_own if unit == "ns" else flat.cycles_own
    children: list[list[int]] = []
    if with_children:
        add_children(children, flat.parents)
    return with_inclusive(
        Profile(
            path=path,
            names=flat.names,
            parents=flat.parents,
            children=children,
            depths=flat.depths,
            metrics=flat.metrics,
            own=[v or 0.0 for v in own],
            has_own=[v is not None for v in own],
            is_kernel=[],
            devices=flat.devices,
            unit=unit,
            own_launches=flat.counts,
            own_bytes=flat.bytes,
            device_info=device_info,
            hidden_internal=flat.hidden,
        )
    )


def _count_nodes(kids: list) -> int:
    """The nodes in these subtrees (parsed JSON or Structs)."""
    total, stack = 0, list(kids)
    while stack:
        node = stack.pop()
        total += 1
        if isinstance(node, Node):
            stack.extend(node.children)
        elif isinstance(node, dict) and isinstance(node.get("children"), list):
            stack.extend(node["children"])
    return total
