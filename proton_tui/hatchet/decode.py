"""Decoding a capture's bytes: JSON or MessagePack (Proton's `[tree, device_info]`) into msgspec Structs, the
fast way, or into dicts and lists with orjson, whose errors name what is wrong in one line."""

from __future__ import annotations

import json
import json.scanner
import re
import sys
import threading
from pathlib import Path

import msgspec
import orjson

from proton_tui.hatchet.errors import CaptureError


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
NODES = msgspec.json.Decoder(list[Node])
# Anything msgspec cannot take: the file is then read with orjson, whose path gives the one-line error.
DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)
DEEP_STACK_BYTES = 512 * 1024 * 1024  # the stack of the thread that decodes a deeply nested document


def is_msgpack(data) -> bool:
    """Whether a capture is MessagePack: it starts with an array or a map (Proton writes a two-element array),
    bytes that never start a JSON document (which starts with text)."""
    first = data[:1]
    return bool(first) and (0x80 <= first[0] <= 0x9F or 0xDC <= first[0] <= 0xDF)


def is_object(data) -> bool:
    """Whether a JSON capture is an object (a Chrome trace, or a mistake) rather than Proton's [tree, device_info]."""
    return bytes(data[:256]).lstrip()[:1] == b"{"


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
            return deeply(msgspec.msgpack.decode, view)
    except RecursionError:
        raise CaptureError(f"{path}: MessagePack nested deeper than its decoder allows") from None
    except msgspec.DecodeError as error:
        if "truncated" in str(error):
            raise CaptureError(f"{path}: truncated: the MessagePack data ends early") from None
        raise CaptureError(f"{path}: not valid MessagePack: {error}") from None


def decode_document(data):
    """(tree, device_info) decoded into Structs from JSON or MessagePack, at any depth that fits in memory.
    Raises one of DECODE_ERRORS."""
    decoder = MSGPACK_DOCUMENT if is_msgpack(data) else DOCUMENT
    with memoryview(data) as view:
        try:
            return decoder.decode(view)
        except RecursionError:  # nested deeper than the default limit: again, with room for any depth
            return deeply(decoder.decode, view)


def deeply(function, *args):
    """function(*args) on a thread with a large stack and a raised recursion limit, for documents nested deeper
    than the interpreter's default allows (msgspec and the pure-Python JSON scanner count their levels against
    it); its exception is raised here."""
    outcome: dict = {}

    def call() -> None:
        try:
            outcome["value"] = function(*args)
        except BaseException as error:  # noqa: BLE001 - raised again on the calling thread
            outcome["error"] = error

    old_limit, old_stack = sys.getrecursionlimit(), threading.stack_size()
    sys.setrecursionlimit(max(old_limit, 2_000_000))
    threading.stack_size(DEEP_STACK_BYTES)
    try:
        worker = threading.Thread(target=call, name="deep-decode")
        worker.start()
        worker.join()
    finally:
        threading.stack_size(old_stack)
        sys.setrecursionlimit(old_limit)
    if "error" in outcome:
        raise outcome.pop("error")
    return outcome["value"]


def _parse_deep(path: Path, data: bytes):
    """Parse JSON nested deeper than orjson allows (deep python-context stacks): the pure-Python scanner recurses
    in Python frames only, so under `deeply` it copes with any depth that fits in memory."""
    decoder = json.JSONDecoder()
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    try:
        return deeply(decoder.decode, data.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError) as error:
        raise CaptureError(f"{path}: not valid JSON: {error}") from None


def document_parts(path: Path, document, kind: str = "JSON list") -> tuple[object, dict]:
    """The tree and device_info of a parsed capture; CaptureError when the document is not [tree, device_info]."""
    if not isinstance(document, list) or len(document) != 2:
        raise CaptureError(f"{path}: not a Proton capture: expected a {kind} [tree, device_info]")
    tree, device_info = document
    if not isinstance(device_info, dict):
        raise CaptureError(f"{path}: not a Proton capture: device_info (the list's second element) is not an object")
    return tree, device_info
