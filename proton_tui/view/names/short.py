"""Short C++ names from the demangler's parse tree: the function's base name, with only as much of its template
arguments, scopes and parameters as keeps two different kernels of one capture apart; what is left out shows as `…`.

A name becomes a tree of `Part`s; a path (a tuple of steps: an argument's index, "s" for the scope, "p" for the
parameter list) picks a part. Every name starts with nothing expanded; while two names show the same text, the path
that tells most of them apart is expanded in each of them, until every name is told apart or nothing is left.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

from proton_tui.view.names.demangler import STYLE

if TYPE_CHECKING:
    from demangle.core.ast import Node

ELIDED = "…"
SCOPE, PARAMETERS = "s", "p"
UNCHANGED = ("unchanged",)  # a name a path does not reach: expanding it leaves the name as it is

Path = tuple


class Part(NamedTuple):
    """One component of a name: `scope::label<args>(params)post`."""

    label: str
    args: tuple[Part, ...] | None = None  # template arguments; None when not a template
    scope: Part | None = None  # the namespace, class or function it is declared in
    post: str = ""  # what follows the type: `*`, `&`, ` const`, `...`
    params: tuple[Part, ...] | None = None  # the parameter types of the kernel's own function or of a lambda

    @property
    def local(self) -> bool:
        """A lambda or an unnamed type (`{lambda(int)#1}`): the function it is declared in tells it apart first."""
        return self.label.startswith("{")


def part(node: Node) -> Part:
    """The Part tree of a parsed name: the function's name with its parameters (its return type left out)."""
    kind = node.kind
    if kind == "decorated":
        inner = part(node.inner)
        return inner._replace(post=inner.post + node.decoration)
    if kind == "function" and node.name is not None:
        return _type(node.name)._replace(params=_arguments(node.parameters))
    return _type(node)


LAMBDA = re.compile(r"\{lambda\((?P<signature>.*)\)(?P<number>#\d+)\}")


def _type(node: Node) -> Part:
    kind = node.kind
    if kind == "name":
        return Part(node.text)
    if kind == "raw" and (closure := LAMBDA.fullmatch(node.text)) is not None:
        # a lambda as `{lambda#1}`: its parameter types are its parameter list, written out only to tell it apart
        return Part("{lambda", params=(Part(closure["signature"]),), post=closure["number"] + "}")
    if kind == "template":
        return _type(node.base)._replace(args=_arguments(node.arguments))
    if kind == "qualified":
        *scopes, last = _flat_scopes(node)
        scope = None
        for outer in scopes:
            scope = _type(outer.name if outer.kind == "function" and outer.name is not None else outer)._replace(
                scope=scope)
        return _type(last)._replace(scope=scope)
    if kind in ("pointer", "reference", "rvalue_reference", "pack", "qualify") and node.inner.kind not in (
            "function", "array", "member_pointer"):
        inner = _type(node.inner)
        if kind == "qualify":
            return inner._replace(post=f"{inner.post} {' '.join(map(str, node.qualifiers))}")
        return inner._replace(post=inner.post + {"pointer": "*", "reference": "&", "rvalue_reference": "&&",
                                                 "pack": "..."}[kind])
    return Part(node.spell(style=STYLE))  # a number, a builtin type, a function type, an expression: as written


def _flat_scopes(node: Node) -> list[Node]:
    """`a::b::c` as [a, b, c], nested qualified names opened up."""
    parts = []
    for child in node.parts:
        parts.extend(_flat_scopes(child) if child.kind == "qualified" else [child])
    return parts


def _arguments(nodes) -> tuple[Part, ...]:
    """Template arguments or parameter types, a pack's members spread in place."""
    parts = []
    for node in nodes:
        if node.kind == "parameter_pack":
            parts.extend(_arguments(node.members))
        else:
            parts.append(_type(node))
    return tuple(parts)


def render(name: Part, shown: set[Path], path: Path = (), scope: bool = False) -> str:
    """The text of `name` with the parts at the `shown` paths written out and the rest as `…`."""
    text = name.label
    if name.scope is not None and path + (SCOPE,) in shown:
        text = f"{render(name.scope, shown, path + (SCOPE,), scope=True)}::{text}"
    if name.args is not None and not (scope and not any(path + (index,) in shown for index in range(len(name.args)))):
        text += f"<{_joined(name.args, shown, path)}>"  # a scope's arguments, all left out, are not written
    if name.params is not None and path + (PARAMETERS,) in shown:
        if name.local:  # a lambda's parameter types: written whole
            text += f"({name.params[0].label})"
        else:
            text += f"({_joined(name.params, shown, path + (PARAMETERS,))})"
    return text + name.post


def _joined(items: tuple[Part, ...], shown: set[Path], path: Path) -> str:
    written: list[str] = []
    for index, item in enumerate(items):
        if path + (index,) in shown:
            written.append(render(item, shown, path + (index,)))
        elif not written or written[-1] != ELIDED:
            written.append(ELIDED)  # a run of left-out arguments is one `…`
    return ", ".join(written)


def frontier(name: Part, shown: set[Path], path: Path = ()) -> Iterator[Path]:
    """The paths that could be written out next: parts left out whose enclosing part is written."""
    if name.scope is not None:
        scope = path + (SCOPE,)
        if scope in shown:
            yield from frontier(name.scope, shown, scope)
        else:
            yield scope
    for items, base in ((name.args, path), (name.params, path + (PARAMETERS,))):
        if items is None or (base != path and (base not in shown or name.local)):
            if items is not None and base not in shown:
                yield base
            continue
        for index, item in enumerate(items):
            here = base + (index,)
            if here in shown:
                yield from frontier(item, shown, here)
            else:
                yield here


def at(name: Part | None, path: Path) -> Part | None:
    """The part a path picks, or None where this name has none there."""
    for step in path:
        if name is None:
            return None
        if step == SCOPE:
            name = name.scope
        elif step == PARAMETERS:
            name = None if name.params is None else Part("", name.params)
        else:
            name = name.args[step] if name.args is not None and step < len(name.args) else None
    return name


def _rank(path: Path, kinds: int, local: bool) -> tuple:
    """Which path to write out first (lowest): a template argument or a lambda's scope, then a lambda's parameter
    types, before a scope before the parameter list (a scope or parameter list differs whenever anything in it does,
    so it comes only where no argument tells the names apart); then the one that tells most kinds apart, the
    outermost, the first."""
    tier = ({SCOPE: 0, PARAMETERS: 0.5} if local else {SCOPE: 1, PARAMETERS: 2}).get(path[-1], 0)
    return tier, -kinds, len(path), tuple(str(step) for step in path)


def unique(names: dict[str, Part], fixed: dict[str, str]) -> tuple[dict[str, str], set[str]]:
    """The short text of every name, told apart from every other name and from the `fixed` texts (names shown as
    they are); with the raw names that no expansion told apart (their short text is left to the caller)."""
    shown: dict[str, set[Path]] = {raw: set() for raw in names}
    text = {raw: render(name, shown[raw]) for raw, name in names.items()}
    stuck: set[str] = set()
    while True:
        groups: dict[str, list[str]] = defaultdict(list)
        for raw, short in (*text.items(), *fixed.items()):
            groups[short].append(raw)
        expanded = False
        for members in groups.values():
            parsed = [raw for raw in members if raw in names and raw not in stuck]
            if len(members) < 2 or not parsed:
                continue
            path, reaching = _best_path(parsed, names, shown, len(members) > len(parsed))
            if path is None:
                stuck.update(parsed)
                continue
            for raw in reaching:
                shown[raw].add(path)
                text[raw] = render(names[raw], shown[raw])
            expanded = True
        if not expanded:
            return text, stuck


def _best_path(members: list[str], names: dict[str, Part], shown: dict[str, set[Path]],
               with_fixed: bool) -> tuple[Path | None, list[str]]:
    """The path that splits these same-looking names into most kinds (a fixed text among them is one more kind),
    and the names it can be written out in."""
    reachable = {raw: set(frontier(names[raw], shown[raw])) for raw in members}
    best, best_rank = None, None
    for path in set().union(*reachable.values()):
        kinds = {at(names[raw], path) if path in reachable[raw] else UNCHANGED for raw in members}
        if with_fixed:
            kinds.add(UNCHANGED)
        if len(kinds) < 2:
            continue
        rank = _rank(path, len(kinds), path[-1] in (SCOPE, PARAMETERS) and any(
            (owner := at(names[raw], path[:-1])) is not None and owner.local for raw in members))
        if best_rank is None or rank < best_rank:
            best, best_rank = path, rank
    return best, [raw for raw in members if best is not None and best in reachable[raw]]
