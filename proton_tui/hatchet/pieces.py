"""Large captures read in pieces, in one process: a piece of the file is parsed, flattened and its pages dropped
before the next is read, so memory holds the arrays of what was read plus one piece's parsed objects, never the
whole document's (a 1 GB capture parsed whole holds ~3 GB at its peak).

Proton writes its `.hatchet` pretty-printed with keys sorted (``children`` first), and JSON strings cannot hold a
raw newline, so a line's indentation says what it is: with an indent unit ``u``, a node at depth ``d`` opens with a
line that is only ``{`` at ``(2d+1)u`` spaces, its keys sit at ``(2d+2)u`` and its children at ``(2d+3)u``. That
finds, without parsing, a cut inside the children list of a node on the tree's last path (its last child, that
one's last child, …): the children after the cut are parsed as a list of subtrees (a piece), then removed from the
document by moving its small tail (the closing brackets and device_info) up over them, and the next piece is cut
from what is left. What is left at the end is parsed as the document; the pieces, whose nodes come last in
pre-order, join it by appending (`profile.graft`), the last one cut first.

The capture's copy (`source.Copy`) is mapped again privately (copy-on-write): the bytes written change that view
only.
Anything unexpected (another layout, a parse or validation error in a piece, pieces in different units) returns
None and the caller reads the file whole, which also gives the canonical error message.
"""

from __future__ import annotations

import mmap
import re
from collections.abc import Callable
from pathlib import Path

from proton_tui.hatchet.decode import DECODE_ERRORS, DOCUMENT, NODES
from proton_tui.hatchet.errors import LoadCancelled
from proton_tui.hatchet.flatten import NodeError, flatten, profile_from
from proton_tui.hatchet.profile import ROOT_PARENT, Profile
from proton_tui.hatchet.tree import GRAFTED_PARENT, graft

# The size of a piece, calibrated on the 2-core machine with the 1M-node benchmark capture (963 MB):
# benchmarks/README.md, "Reading large captures".
PIECE_BYTES = 64_000_000
MAX_PIECES = 256
FIRST_NODE = re.compile(rb"\s*\[\n( +)\{\n")  # the list's first line, then the tree's root opening
MAX_DEPTH = 64
PAGE = mmap.PAGESIZE


def load_in_pieces(path: Path, data, show_internal: bool, piece_bytes: int | None = None,
                   cancelled: Callable[[], bool] = lambda: False,
                   progress: Callable[[int], None] = lambda done: None) -> Profile | None:
    """The profile of a pretty-printed capture (memory-mapped as `data`) read in pieces of about `piece_bytes`; None
    when it has no room for two pieces, its layout does not allow a cut, or anything in it fails. `cancelled` is
    asked before each piece and while one is flattened: True raises LoadCancelled. `progress` is told, after each
    piece, how many of the file's bytes have been read."""
    piece_bytes = piece_bytes or PIECE_BYTES
    if not isinstance(data, mmap.mmap) or len(data) < 2 * piece_bytes:
        return None
    private = _private_map(data)
    if private is None:
        return None
    try:
        return _read(path, private, show_internal, piece_bytes, cancelled, progress)
    except (*DECODE_ERRORS, NodeError):
        return None
    finally:
        private.close()


def _read(path: Path, private: mmap.mmap, show_internal: bool, piece_bytes: int,
          cancelled: Callable[[], bool], progress: Callable[[int], None]) -> Profile | None:
    limit = clean_to = len(private)  # the document ends at `limit`; bytes before `clean_to` are the file's own
    pieces: list[tuple[int, Profile]] = []
    while limit > 2 * piece_bytes and len(pieces) < MAX_PIECES:
        if cancelled():
            raise LoadCancelled(path)
        cut = find_cut(private, piece_bytes, limit)
        if cut is None:
            break
        depth, start, end = cut
        if limit - end > end - start:  # the tail must fit where the piece was
            break
        closing = private[end]
        private[start - 1] = ord("[")  # was the comma before the cut
        private[end] = ord("]")  # was the newline before the list's closing line
        with memoryview(private) as view:
            nodes = NODES.decode(view[start - 1 : end + 1])
        private[end] = closing
        flat = flatten([(node, GRAFTED_PARENT, depth + 1) for node in nodes], show_internal, compact=True,
                       structs=True, cancelled=cancelled)
        del nodes
        if flat.hidden_with_children:  # the walk down the last path that finds where a piece hangs would miss it
            return None
        pieces.append((depth, profile_from(path, flat, {}, with_children=False)))
        _drop_pages(private, start, min(end, clean_to))
        tail = private[end:limit]  # the closing of the cut's list and of every node around it, and device_info
        private[start - 1 : start - 1 + len(tail)] = tail  # over the cut's leading comma and its first bytes
        limit, clean_to = start - 1 + len(tail), start - 1
        progress(len(private) - limit)
    if not pieces:
        return None
    if cancelled():
        raise LoadCancelled(path)
    with memoryview(private) as view:
        tree, device_info = DOCUMENT.decode(view[:limit])
    _drop_pages(private, 0, min(limit, clean_to))
    flat = flatten([(tree, ROOT_PARENT, 0)], show_internal, compact=True, structs=True, cancelled=cancelled)
    del tree
    if not flat.names or flat.hidden_with_children:
        return None
    profile = profile_from(path, flat, device_info)
    units = {part.unit for part in [profile, *(part for _, part in pieces)] if any(part.has_own)}
    if len(units) > 1:  # e.g. times only in one piece: reading it whole decides
        return None
    for depth, part in reversed(pieces):  # the last cut first: an earlier piece may hang inside it
        anchor = 0
        for _ in range(depth):
            kids = profile.children[anchor]
            if not kids:
                return None
            anchor = kids[-1]
        graft(profile, part, anchor)
    return profile


def _drop_pages(private: mmap.mmap, start: int, end: int) -> None:
    """Give back this process's pages of private[start:end], which hold the file's own bytes (the page cache keeps
    them; a later read maps them again)."""
    first = -(-start // PAGE) * PAGE
    last = end // PAGE * PAGE
    if last > first and hasattr(mmap, "MADV_DONTNEED"):
        private.madvise(mmap.MADV_DONTNEED, first, last - first)


def _private_map(data) -> mmap.mmap | None:
    """The capture's copy mapped again copy-on-write (bytes written change this view only); None when that cannot
    be had."""
    try:
        return data.private()
    except (AttributeError, OSError, ValueError):
        return None


def find_cut(data, largest: int, limit: int | None = None) -> tuple[int, int, int] | None:
    """(depth, start, end): the bytes ``data[start:end]`` are whole children, the last ones, of the node at
    ``depth`` on the tree's last path: as many as fit in `largest` bytes, at the shallowest depth where one does;
    `limit`: the document ends there (what follows is stale). None when the file offers no such cut. Every search
    stays within `largest` bytes of the end of a children list, so finding a cut costs the same in a small file and
    a large one."""
    first = FIRST_NODE.match(data, 0, 256)
    if first is None:
        return None
    unit = len(first[1])
    tree_start = first.end()
    limit = len(data) if limit is None else limit
    tree_end = data.rfind(b"\n" + b" " * unit + b"},\n", max(0, limit - 1_000_000), limit)  # device_info follows
    children_key = b"\n" + b" " * (2 * unit) + b'"children": ['
    if tree_end < 0 or data[tree_start - 1 : tree_start - 1 + len(children_key)] != children_key:
        return None  # not Proton's layout (keys sorted: children first)
    for depth in range(MAX_DEPTH):
        keys = b"\n" + b" " * ((2 * depth + 2) * unit)
        indent = b" " * ((2 * depth + 3) * unit)
        list_end = data.rfind(keys + b"],", max(tree_start, tree_end - largest), tree_end)
        if list_end < 0 or data[list_end - len(indent) - 2 : list_end] != b"\n" + indent + b"}":
            return None  # no children list near the end, or not one of nodes
        if depth and data.find(b"\n" + b" " * ((2 * depth + 1) * unit) + b"{\n", list_end, tree_end) >= 0:
            return None  # the last node at this depth has no children: that list is an earlier node's
        boundary = b"\n" + indent + b"},\n" + indent + b"{\n"
        at = data.find(boundary, max(tree_start, list_end - largest), list_end)  # the most children that fit
        if at >= 0:
            return depth, at + len(indent) + 3, list_end  # after "\n" + indent + "},"
        # The last child alone is larger than a piece: cut among its children.
    return None
