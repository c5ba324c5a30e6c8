"""The one rule for the name a person sees, in three forms: short (the C++ base name with only what tells it apart
from the capture's other kernels), full (C++ demangled whole) and raw (as the capture has it). Python frames are
``func  file:line`` (the file's base name when short, its path when full); any name that is not Itanium-mangled
(Triton, Inductor, cuBLAS) is the same in every form. A short name is at most 80 characters: a longer one loses its
middle (`…`), keeping its start and its end, still told apart from the capture's other names."""

from __future__ import annotations

import re
from collections.abc import Iterable

from proton_tui.console import printable
from proton_tui.view.names.cut import within_limit
from proton_tui.view.names.demangler import MANGLED_PREFIX, demangle_all, demangler_available, mangled, parsed
from proton_tui.view.names.short import part, unique

__all__ = ["DEFAULT_FORM", "FORMS", "MANGLED_PREFIX", "PYTHON_FRAME", "Names", "demangle_all", "demangler_available",
           "display_name", "frame_location", "short_names"]

FORMS = ("short", "full", "raw")  # the order `next_form` goes through them
DEFAULT_FORM = "short"  # the form a view starts in
PYTHON_FRAME = re.compile(r"(?P<file>.+):(?P<line>\d+)@(?P<func>.+)")
FOLDER_SEPARATOR = re.compile(r"[\\/]")  # POSIX or Windows paths, whichever machine made the capture


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


def _frame_full(raw: str) -> str | None:
    location = frame_location(raw)
    return None if location is None else f"{location[0]}  {location[1]}:{location[2]}"


def short_names(names: Iterable[str]) -> dict[str, str]:
    """The short form of each of these raw names, every two different names told apart: C++ names from their parse
    trees, Python frames with their file's base name (its path where two frames would look the same), the rest as
    they are; any of them over 80 characters with its middle cut out (`within_limit`)."""
    names = set(names)
    trees, fixed, frames = {}, {}, {}
    for raw in names:
        answer = parsed(raw)
        if answer is not None:
            trees[raw] = part(answer[0])
        elif frame_location(raw) is not None:
            frames[raw] = display_name(raw)
        else:
            fixed[raw] = raw
    seen: dict[str, int] = {}
    for short in frames.values():
        seen[short] = seen.get(short, 0) + 1
    fixed.update({raw: short if seen[short] == 1 else _frame_full(raw) for raw, short in frames.items()})
    texts, stuck = unique(trees, fixed)
    texts.update({raw: parsed(raw)[1] for raw in stuck})  # told apart by nothing short of the whole name
    texts.update(fixed)
    return within_limit(texts)


class Names:
    """The names of a capture under one form (`short`, `full` or `raw`), used by every view. A pattern matches a node
    when it matches any of the three forms, so a filter or search finds what is on screen and what is in the file.
    `readable` (raw -> full) is None until the names are demangled; `shorts` (raw -> short) too."""

    def __init__(self, readable: dict[str, str] | None = None, raw: bool = False, form: str | None = None,
                 shorts: dict[str, str] | None = None) -> None:
        form = "raw" if raw else (form or DEFAULT_FORM)
        if form not in FORMS:
            raise ValueError(f"name form {form!r} is not one of {', '.join(FORMS)}")
        self.readable, self.shorts, self.form = readable, shorts, form
        self._full: dict[str, str] = {}
        self._shown: dict[str, str] = {}

    @classmethod
    def demangled(cls, names: Iterable[str], raw: bool = False, form: str | None = None) -> Names:
        """Names under any form for these raw names (every name of the capture: the short forms tell them apart)."""
        names = set(names)
        return cls(demangle_all(names), raw, form, short_names(names))

    @property
    def raw(self) -> bool:
        """Whether names are shown as the capture has them."""
        return self.form == "raw"

    def with_form(self, form: str) -> Names:
        """The same names under another form."""
        return Names(self.readable, form=form, shorts=self.shorts)

    def with_raw(self, raw: bool) -> Names:
        """The same names raw, or back from raw to the default form (a form other than raw is kept)."""
        if raw == self.raw:
            return self.with_form(self.form)
        return self.with_form("raw" if raw else DEFAULT_FORM)

    def next_form(self) -> Names:
        """The same names under the next form: short, full, raw, then short again."""
        place = FORMS.index(self.form)
        return self.with_form(FORMS[(place + 1) % len(FORMS)])

    def unreadable(self, raw: str) -> bool:
        """Whether this is a C++ (Itanium-mangled) name that could not be demangled, so every form shows it raw."""
        return mangled(raw) and parsed(raw) is None

    def short(self, raw: str) -> str:
        """The short form, exactly; the full form for a name the short forms were not worked out for."""
        short = self.shorts.get(raw) if self.shorts else None
        return self.readable_name(raw) if short is None else short

    def full(self, raw: str) -> str:
        """The full form, exactly: C++ demangled whole, a Python frame with its file's path."""
        name = self._full.get(raw)
        if name is None:
            name = self._full[raw] = _frame_full(raw) or self.readable_name(raw)
        return name

    def in_form(self, raw: str, form: str) -> str:
        """The name in a given form, exactly."""
        if form == "raw":
            return raw
        if form == "short":
            return self.short(raw)
        return self.full(raw)

    def shown(self, raw: str) -> str:
        """The name as shown to a person (terminal, text, CSV, Markdown): control characters written as escapes."""
        shown = self._shown.get(raw)
        if shown is None:
            shown = self._shown[raw] = printable(self.exact(raw))
        return shown

    def exact(self, raw: str) -> str:
        """The name under the form, exactly (no escapes): for data outputs."""
        return self.in_form(raw, self.form)

    def readable_name(self, raw: str) -> str:
        """The name JSON carries as `readable_name`, whatever the form shown, exactly: C++ demangled whole, a Python
        frame as ``func  file:line`` with its file's base name."""
        return display_name(raw, self.readable)

    def matches(self, pattern: re.Pattern, raw: str) -> bool:
        return bool(pattern.search(raw) or pattern.search(self.readable_name(raw)) or pattern.search(self.full(raw))
                    or pattern.search(self.short(raw)))

    def sort_key(self, raw: str) -> tuple[str, str]:
        """Orders by the name shown, the raw name breaking ties."""
        return self.shown(raw), raw
