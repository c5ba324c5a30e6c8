"""Readable kernel names: C++ names demangled by the system's ``c++filt``, Python frames as ``func  file:line``."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterable

from proton_tui.console import printable

DEMANGLER = "c++filt"
DEMANGLE_TIMEOUT_S = 30.0
MANGLED_PREFIX = "_Z"  # Itanium C++ ABI
LINE_BREAKS = ("\n", "\r", "\x00")  # c++filt reads one name a line: such a name would shift every later answer
PYTHON_FRAME = re.compile(r"(?P<file>.+):(?P<line>\d+)@(?P<func>.+)")
FOLDER_SEPARATOR = re.compile(r"[\\/]")  # POSIX or Windows paths, whichever machine made the capture

# raw -> demangled for every name a c++filt run answered; a failed run is not remembered, so a later call retries.
_cache: dict[str, str] = {}


def demangler_available() -> bool:
    """Whether c++filt is on PATH (the UI says "c++filt not found" otherwise)."""
    return shutil.which(DEMANGLER) is not None


def demangle_all(names: Iterable[str]) -> dict[str, str]:
    """Every given name mapped to its demangled form, with one c++filt run for all mangled names not cached yet.
    A name that is not mangled, or that c++filt could not read (missing, failing), maps to itself."""
    names = set(names)
    wanted = sorted(
        name
        for name in names
        if name.startswith(MANGLED_PREFIX) and name not in _cache and not any(c in name for c in LINE_BREAKS)
    )
    if wanted:
        _cache.update(_run_demangler(wanted))
    return {name: _cache.get(name, name) for name in names}


def _run_demangler(mangled: list[str]) -> dict[str, str]:
    """c++filt's answer for each name (one per line in, one per line out), or nothing when it cannot answer."""
    executable = shutil.which(DEMANGLER)
    if executable is None:
        return {}
    try:
        result = subprocess.run(
            [executable],
            input="\n".join(mangled) + "\n",
            capture_output=True,
            encoding="utf-8",
            errors="surrogateescape",
            timeout=DEMANGLE_TIMEOUT_S,
        )
    except (OSError, subprocess.SubprocessError):
        return {}
    lines = result.stdout.removesuffix("\n").split("\n")
    if result.returncode != 0 or len(lines) != len(mangled):
        return {}
    return {name: line or name for name, line in zip(mangled, lines)}


def frame_location(raw: str) -> tuple[str, str, int] | None:
    """A Python-context frame ``path:line@func`` as (func, path, line); None for any other name."""
    match = PYTHON_FRAME.fullmatch(raw)
    if match is None:
        return None
    return match["func"], match["file"], int(match["line"])


def display_name(raw: str, demangled: dict[str, str] | None = None) -> str:
    """The name a view shows: a Python frame as ``func  file:line`` (file without its folders), else the
    demangled name when `demangled` (from demangle_all) has one, else the raw name."""
    location = frame_location(raw)
    if location is not None:
        func, path, line = location
        return f"{func}  {FOLDER_SEPARATOR.split(path)[-1]}:{line}"
    return demangled.get(raw, raw) if demangled else raw


class Names:
    """The one rule for the name a person sees, used by every view: readable (C++ demangled when `readable` maps the
    raw name, Python frames as ``func  file:line``) or, with `raw`, the name as the capture has it. A pattern
    matches a node when it matches either form, so a filter or search finds what is on screen and what is in the
    file."""

    def __init__(self, readable: dict[str, str] | None = None, raw: bool = False) -> None:
        self.readable, self.raw = readable, raw
        self._readable: dict[str, str] = {}
        self._shown: dict[str, str] = {}

    @classmethod
    def demangled(cls, names: Iterable[str], raw: bool = False) -> Names:
        """Names under either rule for these raw names, their readable forms from one c++filt run (JSON carries
        them whatever the rule)."""
        return cls(demangle_all(names), raw)

    def with_raw(self, raw: bool) -> Names:
        """The same names under the other rule."""
        return Names(self.readable, raw)

    def shown(self, raw: str) -> str:
        """The name as shown to a person (terminal, text, CSV, Markdown): control characters written as escapes."""
        shown = self._shown.get(raw)
        if shown is None:
            shown = self._shown[raw] = printable(raw if self.raw else self.readable_name(raw))
        return shown

    def exact(self, raw: str) -> str:
        """The name under the rule, exactly (no escapes): for data outputs."""
        return raw if self.raw else self.readable_name(raw)

    def readable_name(self, raw: str) -> str:
        """The readable form, whatever the rule, exactly (JSON carries it beside the raw name)."""
        name = self._readable.get(raw)
        if name is None:
            name = self._readable[raw] = display_name(raw, self.readable)
        return name

    def matches(self, pattern: re.Pattern, raw: str) -> bool:
        return bool(pattern.search(raw) or pattern.search(self.readable_name(raw)))

    def sort_key(self, raw: str) -> tuple[str, str]:
        """Orders by the name shown, the raw name breaking ties."""
        return self.shown(raw), raw
