"""What every front end says the same way: the one-line error, a file's size in words, text from a capture made safe
for a terminal, and a field too long to show cut to what a screen shows."""

from __future__ import annotations

import os
import re


def error_line(message: str) -> str:
    """The one line a failed command prints on stderr (a path or name in it printable)."""
    return f"proton-tui: error: {printable(message)}"


def size_text(size: int) -> str:
    """A size in bytes as people read it: "86 MB", "3 kB"."""
    return f"{size / 1e6:,.0f} MB" if size >= 1e6 else f"{size / 1e3:,.0f} kB"


# What a terminal must never be handed raw from a capture: C0 and C1 controls and DEL (they move the cursor, clear
# the screen, set the window title, colour text), and every invisible format character, line and paragraph
# separator (Unicode categories Cf, Zl, Zp, as of Unicode 14: bidi marks, embeddings, overrides and isolates,
# zero-width spaces and joiners, the byte-order mark, soft hyphen, tags), which reverse text or make two different
# names look the same. A path's bytes that are not UTF-8 arrive as lone surrogates (U+DC80 to U+DCFF): they are
# written \xNN too.
CONTROLS = re.compile(
    "[\x00-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f\udc80-\udcff]")
NOT_UTF8 = re.compile("[\udc80-\udcff]")
NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


# Characters of one field (a name, a path, metrics) a screen shows; beyond them it says how long the field is. A
# real capture's longest name (a demangled template, tests/fixtures) has about 5,000.
FIELD_CHARS = 10_000


def cut_field(text: str, keep: int = FIELD_CHARS) -> str:
    """A field as a screen shows it: whole up to `keep` characters, else its first `keep` characters and its length
    ("kkk… (50,000,000 characters)"). Every view of the TUI shows a capture's fields through it: what it draws then
    costs the same for a name of 50 million characters as for one of 10,000."""
    if len(text) <= keep:
        return text
    return f"{text[:keep]}… ({len(text):,} characters)"


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


def path_text(path: str | os.PathLike) -> str:
    """A path as JSON and exports carry it: exact, but for each byte that is not UTF-8, written ``\\xNN``."""
    text = os.fspath(path)
    return NOT_UTF8.sub(_escape, text) if NOT_UTF8.search(text) else text


def _escape(match: re.Match) -> str:
    char = match.group()
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a path that is not UTF-8
        return f"\\x{code - 0xDC00:02x}"
    if char in NAMED_ESCAPES:
        return NAMED_ESCAPES[char]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
