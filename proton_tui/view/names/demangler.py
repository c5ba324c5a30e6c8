"""Itanium C++ names read by the `demangle` library (pure Python): the parse tree and the whole readable name, spelled
as GNU c++filt spells it."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from demangle.core.ast import Node

MANGLED_PREFIX = "_Z"  # Itanium C++ ABI
STYLE = "gnu"  # the spelling of GNU c++filt: `A<B<int> >`, `{lambda(int)#1}`

# raw -> (parse tree, whole readable name) for every mangled name read so far; None for one that cannot be read.
_cache: dict[str, tuple[Node, str] | None] = {}


UNAVAILABLE = "C++ names are shown as the capture has them: demangling them needs Python >= 3.11 (the demangle package)"


def demangler_available() -> bool:
    """Whether C++ names can be demangled: the demangler is a Python dependency (on Python >= 3.11), not a system
    tool."""
    return _library() is not None


@cache
def _library():
    """The `demangle` library, imported when a name first needs it (a capture without C++ names never does); None
    without it (it needs Python >= 3.11: names then stay as the capture has them)."""
    try:
        import demangle
    except ImportError:
        return None
    return demangle


def mangled(raw: str) -> bool:
    return raw.startswith(MANGLED_PREFIX)


def parsed(raw: str) -> tuple[Node, str] | None:
    """The parse tree and the whole readable name of a mangled name, or None when it is not mangled or cannot be
    read (malformed, cut short, over the library's bounds)."""
    if raw in _cache:
        return _cache[raw]
    answer = None
    if mangled(raw) and (library := _library()) is not None:
        try:
            tree = library.parse(raw, language="itanium", style=STYLE)
            answer = tree, tree.spell(style=STYLE)
        except (library.DemanglingError, RecursionError, ValueError):
            answer = None
    _cache[raw] = answer
    return answer


def demangle_all(names: Iterable[str]) -> dict[str, str]:
    """Every given name mapped to its demangled form; a name that is not mangled, or that cannot be read, maps to
    itself."""
    readable = {}
    for name in set(names):
        answer = parsed(name)
        readable[name] = name if answer is None else answer[1]
    return readable
