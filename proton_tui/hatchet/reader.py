"""Reading a capture whole: decoded into msgspec Structs and flattened, or, when msgspec cannot take it, parsed
with orjson, which also words every error; a Chrome trace becomes the tree of its kernels, the trace kept beside it.
Every problem is a CaptureError whose message is one line naming the file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from proton_tui.hatchet.decode import (
    DECODE_ERRORS,
    decode_document,
    document_parts,
    is_msgpack,
    is_object,
    parse,
)
from proton_tui.hatchet.errors import CaptureError
from proton_tui.hatchet.flatten import NodeError, flatten, profile_from
from proton_tui.hatchet.profile import ROOT_PARENT, Profile

if TYPE_CHECKING:
    from proton_tui.hatchet.trace import Trace


def load_trace(path: Path, data, show_internal: bool, cancelled: Callable[[], bool] | None = None,
               first: Callable[[Trace], None] | None = None) -> Profile:
    """A Chrome trace decoded straight into compact structures (a large one is never held twice); anything the
    typed decoder refuses is read again with orjson, whose path words the error."""
    from proton_tui.hatchet.chrome_trace import NotATrace, TraceError, decode_trace  # numpy: for traces alone

    try:
        trace = decode_trace(data)
    except NotATrace:
        return load_parsed(path, data, show_internal, cancelled)  # which says what it is instead
    except TraceError as error:
        raise CaptureError(f"{path}: not a Proton trace: {error}") from None
    except DECODE_ERRORS:  # not JSON: orjson's path words what is wrong
        return load_parsed(path, data, show_internal, cancelled)
    return trace_profile(path, trace, show_internal, cancelled, first)


def load_whole(path: Path, data, show_internal: bool, cancelled: Callable[[], bool] | None = None,
               first: Callable[[Trace], None] | None = None) -> Profile:
    """The profile of the whole file in one read: decoded into msgspec Structs, or, when msgspec cannot take it (a
    bad document, nesting deeper than it allows), parsed with orjson, which also words every error. `cancelled`:
    see `flatten`; `first`: see `trace_profile`."""
    if not is_msgpack(data) and is_object(data):
        return load_trace(path, data, show_internal, cancelled, first)
    try:
        tree, device_info = decode_document(data)
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
        from proton_tui.hatchet.chrome_trace import TraceError, read_trace  # numpy: for traces alone

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


def trace_profile(path: Path, trace: Trace, show_internal: bool, cancelled: Callable[[], bool] | None,
                  first: Callable[[Trace], None] | None = None) -> Profile:
    """A Chrome trace's kernels as a tree (summed by call stack), with the trace kept for the timeline. `first` is
    called with the trace before its tree is built."""
    from proton_tui.hatchet.cycles import facts_from_trace

    if first is not None:
        first(trace)
    try:
        profile = _index(path, trace.tree(), {}, show_internal, cancelled=cancelled)
    except NodeError as error:
        raise CaptureError(f"{path}: {error}") from None
    profile.trace = trace
    profile.cycle_facts = facts_from_trace(trace)
    return profile


def _index(path: Path, tree, device_info: dict, show_internal: bool, structs: bool = False,
           cancelled: Callable[[], bool] | None = None) -> Profile:
    flat = flatten([(tree, ROOT_PARENT, 0)], show_internal, compact=True, structs=structs, cancelled=cancelled)
    if not flat.names:
        raise NodeError("the tree's root is an internal Proton frame")
    return profile_from(path, flat, device_info)
