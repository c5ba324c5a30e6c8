"""One subtree of a capture, named by a scope: `FILE:SCOPE` split into the file and the scope, and the scope found
among the capture's nodes (`step`, or the path `step/forward` for a nested one).

A scope is matched by the exact names of its frames. A path of names matches each node whose nearest ancestors are
named as the path says, from the path's last name (the node) up; a path that is a node's whole path from the top
level names that node even where a deeper node ends in the same names."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from proton_tui.hatchet.errors import CaptureError
from proton_tui.hatchet.profile import SCOPE_SEPARATOR as SEPARATOR
from proton_tui.hatchet.profile import Profile
from proton_tui.hatchet.source import capture_path

SHOWN_MATCHES = 3  # the paths an ambiguous scope's error suggests


class ScopeError(CaptureError):
    """A scope that names no node of the capture, or several; the message is one line that names it."""


def split_target(text: str, as_path: Callable[[str], Path] = capture_path) -> tuple[Path, str | None]:
    """`FILE` or `FILE:SCOPE` as the file and the scope (None: the whole capture). A file path holding ':' is
    read as a file where the whole text is an existing path; else the text is split at the last ':' whose left part
    is an existing file (a scope's name may hold ':' too); with no such ':', the whole text is the file. `as_path`
    makes the file's path (`source.capture_path` by default: `-` is standard input)."""
    if os.path.exists(text):
        return as_path(text), None
    cut = len(text)
    while (cut := text.rfind(":", 0, cut)) > 0:
        if os.path.isfile(text[:cut]):
            return as_path(text[:cut]), text[cut + 1:]
    return as_path(text), None


def find_scope(profile: Profile, scope: str) -> int:
    """The node `scope` names (see the module's docstring). Raises ScopeError for a scope that names no node or
    several."""
    if not scope.strip(SEPARATOR):
        raise ScopeError(f"{profile.path}: the scope {scope!r} names no frame")
    found = _matches(profile, [scope])
    if not found and SEPARATOR in scope:
        path = scope.strip(SEPARATOR).split(SEPARATOR)
        found = _matches(profile, path)
        whole = [node for node in found if len(profile.lineage(node)) == len(path)]
        found = whole if len(whole) == 1 else found
    if not found:
        raise ScopeError(f"{profile.path}: no frame is named {scope!r} (a nested scope is named by its path, "
                         f"names joined by {SEPARATOR!r}: step/forward)")
    if len(found) > 1:
        paths = ", ".join(profile.path_of(node, sep=SEPARATOR) for node in found[:SHOWN_MATCHES])
        more = ", …" if len(found) > SHOWN_MATCHES else ""
        raise ScopeError(f"{profile.path}: the scope {scope!r} matches {len(found)} frames ({paths}{more}): "
                         f"name one by its path, names joined by {SEPARATOR!r}")
    return found[0]


def _matches(profile: Profile, path: list[str]) -> list[int]:
    """The nodes named `path[-1]` whose nearest ancestors are named, upwards, as the rest of `path` reversed."""
    names, parents = profile.names, profile.parents
    found = []
    for node in range(1, profile.node_count):
        if names[node] != path[-1]:
            continue
        step = node
        for name in reversed(path[:-1]):
            step = parents[step]
            if step <= 0 or names[step] != name:
                break
        else:
            found.append(node)
    return found


def within(profile: Profile, scope: str | None) -> Profile:
    """`profile` restricted to the subtree `scope` names (`Profile.subtree`), or whole for None. Raises
    ScopeError."""
    return profile if scope is None else profile.subtree(find_scope(profile, scope))
