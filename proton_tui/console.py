"""What every front end says the same way: the one-line error, and a file's size in words."""

from __future__ import annotations

import os
import re


def error_line(message: str) -> str:
    """The one line a failed command prints on stderr (a path or name in it printable)."""
    return f"proton-tui: error: {printable(message)}"


def size_text(size: int) -> str:
    """A size in bytes as people read it: "86 MB", "3 kB"."""
    return f"{size / 1e6:,.0f} MB" if size >= 1e6 else f"{size / 1e3:,.0f} kB"


# What a terminal must never be handed raw from a capture: C0 and C1 controls, DEL, and the bidi marks, embeddings,
# overrides and isolates (they move the cursor, clear the screen, set the window title, colour or reverse text).
# A path's bytes that are not UTF-8 arrive as lone surrogates (U+DC80 to U+DCFF): they are written \xNN too.
CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\udc80-\udcff]")
NOT_UTF8 = re.compile("[\udc80-\udcff]")
NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def near_path(path: str | os.PathLike) -> str:
    """A path as short as it reads unambiguously here: relative to the working folder when it is under it, else
    as given."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if relative.startswith("..") else relative


def printable(text: str) -> str:
    """Text from a capture as a terminal may show it: every control character written visibly as an escape
    (``\\x1b``, ``\\n``, ``\\u202e``), so what is drawn is exactly one cell per character shown."""
    if not CONTROLS.search(text):
        return text
    return CONTROLS.sub(_escape, text)


# What begins a terminal's control sequence (ESC, and C1's CSI), and a path's bytes that are not UTF-8.
ESCAPE_STARTS = re.compile("[\x1b\x9b\udc80-\udcff]")


def without_escapes(text: str) -> str:
    """Text kept exact but for what could begin a terminal control sequence, written as an escape (CSV data)."""
    return ESCAPE_STARTS.sub(_escape, text) if ESCAPE_STARTS.search(text) else text


def path_text(path: str | os.PathLike) -> str:
    """A path as JSON and exports carry it: exact, but for each byte that is not UTF-8, written ``\\xNN``."""
    text = os.fspath(path)
    return NOT_UTF8.sub(_escape, text) if NOT_UTF8.search(text) else text


def _escape(match: re.Match) -> str:
    char = match.group()
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a path that is not UTF-8
        return f"\\x{code - 0xDC00:02x}"
    return NAMED_ESCAPES.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
