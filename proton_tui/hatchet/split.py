"""Load a large capture on two cores: a forked child loads the last part of the tree (parse, flatten, inclusive
values) while this process does the rest, then the parts are joined.

Proton writes its `.hatchet` pretty-printed with keys sorted (``children`` first), and JSON strings cannot hold a
raw newline, so a line's indentation says what it is: with an indent unit ``u``, a node at depth ``d`` opens with a
line that is only ``{`` at ``(2d+1)u`` spaces, its keys sit at ``(2d+2)u`` and its children at ``(2d+3)u``. That
finds, without parsing, a cut inside the children list of a node on the tree's last path (its last child, that
one's last child, …): the children after the cut are parsed by the child process as a list of subtrees, the rest of
the file (the cut removed) here. Their nodes come last in pre-order, so they join by appending; their totals then
climb from the node they hang from to ROOT (`profile.graft`); the kernel summary is summed over the whole profile
when first asked for (the viewer's first screen does not need it).

Neither part is copied: each process maps the file privately (copy-on-write) and writes the few bytes that make
its part a JSON document of its own (brackets around the cut; the file's small tail moved up to close the rest).

Anything unexpected (another layout, a parse or validation error in either part, a child that fails) returns None
and the caller loads the file in one process, which also gives the canonical error message.
"""

from __future__ import annotations

import fcntl
import gc
import marshal
import mmap
import os
import re
import signal
import threading
from pathlib import Path

import orjson

from .profile import GRAFTED_PARENT, ROOT_PARENT, Profile, graft
from .reader import CaptureError, NodeError, document_parts, flatten, profile_from

FIRST_NODE = re.compile(rb"\s*\[\n( +)\{\n")  # the list's first line, then the tree's root opening
BALANCED = 0.2  # how far from the share it should get the child's part may be and still be taken at once
ACCEPTABLE = (0.15, 0.85)  # shares taken when no level offers a balanced cut
MAX_DEPTH = 64
PIPE_BYTES = 1 << 20  # Linux's default limit for unprivileged processes (/proc/sys/fs/pipe-max-size)
# For the child's share of the file (measured on a 2-core machine like CI's): loading a part (parse, flatten, sums,
# and the child's marshalling) takes ~10 ns a byte in either process.
PARSE_S_PER_BYTE = 10e-9
# What the child sends of its part, marshalled: the numbers in marshal's version 2 (without back-references, which
# cost more than they save for numbers: 4x faster), the rest in the current version (a name or device label is
# sent once, then referred to). Of the metrics, a plain kernel's go as None (rebuilt from the arrays when asked for,
# `Profile.node_metrics`), a scope's empty ones as they are, and the rest (kernels with more: bytes, flops) as one
# JSON document, read here only when one of them is first asked for. The children lists are rebuilt here from the
# parents (`profile.graft`).
NUMBER_FIELDS = ("parents", "depths", "own", "own_launches", "inclusive", "launches")
OTHER_FIELDS = ("names", "has_own", "is_kernel", "devices", "own_bytes", "bytes", "hidden_internal", "unit",
                "has_bytes")


def start_split(path: Path, data, show_internal: bool, busy_s: float = 0.0) -> Split | None:
    """Fork the child that loads the second part of a pretty-printed capture (memory-mapped as `data`); None when
    this path does not apply. `busy_s`: seconds of other work this process does before `Split.finish` (the child
    then takes a larger part)."""
    if not hasattr(os, "fork") or threading.active_count() != 1:  # forking a threaded process is unsafe
        return None
    cut = find_cut(data, child_share(len(data), busy_s)) if isinstance(data, mmap.mmap) else None
    if cut is None or len(data) - cut[2] > cut[2] - cut[1]:  # the tail must fit where the cut was
        return None
    private = _private_map(path, data)
    if private is None:
        return None
    try:
        read_end, write_end = os.pipe()
    except OSError:
        private.close()
        return None
    try:  # fewer round trips for the part (megabytes): the child writes up to 1 MB before this process must read
        fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (OSError, AttributeError):  # not Linux, or a lower limit: the default size works too
        pass
    try:
        child = os.fork()
    except OSError:
        for end in (read_end, write_end):
            os.close(end)
        private.close()
        return None
    if child == 0:  # pragma: no cover - runs in the forked child, which leaves through os._exit
        os.close(read_end)
        _child_main(path, private, cut, show_internal, write_end)
    os.close(write_end)
    return Split(path, private, cut, show_internal, child, read_end)


class Split:
    """A capture whose second part a forked child is loading: `finish` loads the first part here and joins them;
    `close` (also after `finish`) ends the child if it still runs and releases the pipe and the map."""

    def __init__(self, path: Path, private: mmap.mmap, cut: tuple[int, int, int], show_internal: bool, child: int,
                 read_end: int) -> None:
        self.path, self.private, self.cut, self.show_internal = path, private, cut, show_internal
        self.child, self.read_end = child, read_end

    def finish(self) -> Profile | None:
        """The whole profile; None when either part could not be loaded (the caller loads it in one process)."""
        try:
            mine = _parse_first_part(self.path, self.private, self.cut, self.show_internal)
            theirs = _receive(self.path, self.read_end) if mine is not None else None
        except BaseException:
            self.close()
            raise
        self.close(kill=mine is None)  # else it has sent its part (or given up) and is exiting
        if mine is None or theirs is None:
            return None
        profile, at = mine
        if theirs.node_count and theirs.unit != profile.unit:  # e.g. times only in one part: let one process decide
            return None
        graft(profile, theirs, at)
        return profile

    def close(self, kill: bool = True) -> None:
        """Reap the child (killed first unless it is known to be exiting) and release the pipe and the map; once."""
        if self.child is None:
            return
        if kill:
            os.kill(self.child, signal.SIGKILL)
        os.waitpid(self.child, 0)
        os.close(self.read_end)
        self.private.close()
        self.child = None


def _private_map(path: Path, data: mmap.mmap) -> mmap.mmap | None:
    """The file mapped copy-on-write (bytes written change this process's view only, never the file; a forked
    child gets its own view), checked to hold what `data` holds; None when that cannot be had."""
    try:
        with open(path, "rb") as handle:
            private = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_COPY)
    except (OSError, ValueError):
        return None
    ends = 65536
    if len(private) != len(data) or private[:ends] != data[:ends] or private[-ends:] != data[-ends:]:
        private.close()  # the file changed since it was mapped
        return None
    return private


def child_share(size: int, busy_s: float = 0.0) -> float:
    """The share of the file that makes both processes finish together when the parent is first busy for `busy_s`
    seconds with other work."""
    parse_s = size * PARSE_S_PER_BYTE
    return min(ACCEPTABLE[1], (parse_s + busy_s) / (2 * parse_s))


def find_cut(data, share: float = 0.5) -> tuple[int, int, int] | None:
    """(depth, start, end): the bytes ``data[start:end]`` are whole children, the last ones, of the node at
    ``depth`` on the tree's last path, and about `share` of the tree. None when the file offers no such cut."""
    first = FIRST_NODE.match(data, 0, 256)
    if first is None:
        return None
    unit = len(first[1])
    tree_start = first.end()
    tree_end = data.rfind(b"\n" + b" " * unit + b"},\n")  # the root's closing line; device_info follows
    if tree_end < 0:
        return None
    middle = tree_end - int(share * (tree_end - tree_start))
    node_start, fallback = tree_start, None
    for depth in range(MAX_DEPTH):
        if depth:  # the last node opened at this depth is the one on the last path
            opening = b"\n" + b" " * ((2 * depth + 1) * unit) + b"{\n"
            node_start = data.rfind(opening, node_start, tree_end)
            if node_start < 0:
                return fallback
            first_line = node_start + len(opening) - 1  # the newline that ends the node's "{" line
        else:
            first_line = tree_start - 1
        keys = b"\n" + b" " * ((2 * depth + 2) * unit)
        list_end = data.rfind(keys + b"],", node_start, tree_end)
        indent = b" " * ((2 * depth + 3) * unit)
        children_key = keys + b'"children": ['
        if (
            list_end < 0  # no children
            or data[first_line : first_line + len(children_key)] != children_key  # not Proton's key order
            or data[list_end - len(indent) - 2 : list_end] != b"\n" + indent + b"}"  # not a list of nodes
        ):
            return fallback
        boundary = b"\n" + indent + b"},\n" + indent + b"{\n"
        candidates = [data.find(boundary, max(middle, node_start), list_end),
                      data.rfind(boundary, node_start, min(middle, list_end))]
        cuts = [(abs((list_end - at) / (tree_end - tree_start) - share), at) for at in candidates if at >= 0]
        if cuts:
            at = min(cuts)[1]
            got = (list_end - at) / (tree_end - tree_start)
            start = at + len(indent) + 3  # after "\n" + indent + "},"
            if abs(got - share) <= BALANCED:
                return depth, start, list_end
            if ACCEPTABLE[0] <= got <= ACCEPTABLE[1] and fallback is None:
                fallback = depth, start, list_end
        last_child = data.rfind(boundary, node_start, list_end)
        if last_child > middle:  # the split point is not inside the last child: deeper cuts get smaller
            return fallback
    return fallback


def _parse_first_part(path: Path, private: mmap.mmap, cut: tuple[int, int, int], show_internal: bool):
    """This process's part: the file without the cut, flattened, with the id of the node the cut belonged to."""
    depth, start, end = cut
    tail = private[end:]  # the closing of the cut's list and of every node around it, and device_info: a few KB
    private[start - 1 : start - 1 + len(tail)] = tail  # over the cut's leading comma and its first bytes
    try:
        with memoryview(private) as view:
            document = orjson.loads(view[: start - 1 + len(tail)])
        tree, device_info = document_parts(path, document)
    except (orjson.JSONDecodeError, CaptureError):
        return None
    node = tree
    for _ in range(depth):
        kids = node.get("children") if type(node) is dict else None
        if type(kids) is not list or not kids:
            return None
        node = kids[-1]
    try:
        flat = flatten([(tree, ROOT_PARENT, 0)], show_internal, mark=node)
    except NodeError:
        return None
    if flat.marked is None or not flat.names:  # the node is an internal frame, hidden
        return None
    return profile_from(path, flat, device_info), flat.marked


def _child_main(path: Path, private: mmap.mmap, cut: tuple[int, int, int], show_internal: bool,
                write_end: int) -> None:
    """In the forked child: load the cut's subtrees (inclusive values too) and send them through the pipe; never
    returns."""
    gc.disable()  # millions of new containers, none cyclic, in a process that lives for this load only
    depth, start, end = cut
    status = 1
    try:
        with os.fdopen(write_end, "wb") as pipe:
            try:
                private[start - 1] = ord("[")  # was the comma before the cut
                private[end] = ord("]")  # was the newline before the list's closing line
                with memoryview(private) as view:
                    subtrees = orjson.loads(view[start - 1 : end + 1])
                flat = flatten([(node, GRAFTED_PARENT, depth + 1) for node in subtrees], show_internal, compact=True)
                part = profile_from(path, flat, {}, with_children=False)
                numbers = marshal.dumps([getattr(part, item) for item in NUMBER_FIELDS], 2)
                others = [getattr(part, item) for item in OTHER_FIELDS]
                metrics, more = [], []
                for entry in part.metrics:
                    if entry:  # more than the arrays hold: its place in the JSON document
                        metrics.append(len(more))
                        more.append(entry)
                    else:
                        metrics.append(entry)
                payload = marshal.dumps((numbers, others, metrics, orjson.dumps(more)))
            except (orjson.JSONDecodeError, NodeError, ValueError, TypeError):
                payload = b""
            pipe.write(len(payload).to_bytes(8, "little"))
            pipe.write(payload)
            status = 0
    finally:
        os._exit(status)


def _receive(path: Path, read_end: int) -> Profile | None:
    """The child's part, as it computed it; None when it sent nothing."""
    with os.fdopen(read_end, "rb", closefd=False) as pipe:
        header = pipe.read(8)
        size = int.from_bytes(header, "little") if len(header) == 8 else 0
        payload = pipe.read(size) if size else b""
    if not payload or len(payload) != size:
        return None
    numbers, others, metrics, sent_metrics = marshal.loads(payload)
    return Profile(path=path, device_info={}, children=[], metrics=metrics, _sent_metrics=sent_metrics,
                   **dict(zip(NUMBER_FIELDS, marshal.loads(numbers))), **dict(zip(OTHER_FIELDS, others)))
