"""How a profile is shown: which name each node gets, the order of siblings (the one sort-key table), which rows a
depth or threshold hides, and the one walk of the tree in display order with its guide lines. The TUI's table, the
text outputs, export and diff all read the tree through a Display, so no two views can disagree."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass

from proton_tui.hatchet import KernelStats, Profile
from proton_tui.view.names import Names

LAST, MIDDLE, BELOW_LAST, BELOW_MIDDLE = "└─ ", "├─ ", "   ", "│  "
GUIDE_DEPTH = 30  # deeper nodes show their depth as a number instead of guide lines (30 levels: 90 columns)


@dataclass(frozen=True)
class SortKey:
    """One way to order rows: its key (as `--sort` and export take it), its label (as people read it) and the
    column it marks. Every order but name puts the largest first, ties by inclusive value, then name."""

    key: str
    label: str
    column: str | None
    node_first: Callable[[Profile, int], float] | None  # None: by name
    kernel_first: Callable[[KernelStats], float] | None


SORT_KEYS: dict[str, SortKey] = {
    sort.key: sort
    for sort in (
        SortKey("time", "time", "time", lambda p, n: 0.0, lambda k: 0.0),
        SortKey("launches", "launches", "launches", lambda p, n: -p.launches[n], lambda k: -k.launches),
        SortKey("avg", "avg", "avg", lambda p, n: -p.avg(n), lambda k: -(k.avg or 0.0)),
        SortKey("gbps", "GB/s", "gbps", lambda p, n: -(p.gbps(n) or -1.0), lambda k: -(k.gbps or -1.0)),
        SortKey("name", "name", None, None, None),
    )
}


def sort_key(key: str) -> SortKey:
    """The sort key named `key`; ValueError naming the choices for any other."""
    if key not in SORT_KEYS:
        raise ValueError(f"unknown sort key {key!r}: use one of {', '.join(SORT_KEYS)}")
    return SORT_KEYS[key]


def sort_keys_for(profile: Profile) -> list[str]:
    """The sort keys that apply to a profile (GB/s only where it records bytes)."""
    return [key for key in SORT_KEYS if key != "gbps" or profile.has_bytes]


class Display:
    """A profile as a view shows it: names (`Names`), sort key and direction, rows hidden by depth, threshold or for
    being empty (`visible`, from Profile.visible; a hidden row hides its subtree; `hidden_empty` counts the empty
    frames among them); `bars`: the text outputs draw a share bar beside each % (on a terminal, never in a file)."""

    def __init__(self, profile: Profile, names: Names | None = None, sort: str = "time", reverse: bool = False,
                 visible: list[bool] | None = None, hidden_empty: int = 0, bars: bool = False) -> None:
        self.profile, self.names, self.sort, self.reverse, self.visible = profile, names or Names(), \
            sort_key(sort), reverse, visible
        self.hidden_empty, self.bars = hidden_empty, bars
        self._children: dict[int, list[int]] = {}
        self._below: dict[int, str] = {0: ""}

    def replace(self, **changes) -> Display:
        """The same display with some of profile, names, sort, reverse, visible, hidden_empty, bars changed."""
        values = {"profile": self.profile, "names": self.names, "sort": self.sort.key, "reverse": self.reverse,
                  "visible": self.visible, "hidden_empty": self.hidden_empty, "bars": self.bars, **changes}
        return Display(**values)

    @property
    def descending(self) -> bool:
        """Whether the order puts the largest (or, by name, the last) first."""
        return (self.sort.key != "name") != self.reverse

    def name(self, node: int) -> str:
        return self.names.shown(self.profile.names[node])

    def children(self, node: int) -> list[int]:
        """A node's shown children in display order."""
        kids = self._children.get(node)
        if kids is None:
            profile, first = self.profile, self.sort.node_first
            kids = [kid for kid in profile.children[node] if self.visible is None or self.visible[kid]]
            names, inclusive, by_name = profile.names, profile.inclusive, self.names.sort_key
            if first is None:
                kids.sort(key=lambda c: (by_name(names[c]), c))
            else:
                kids.sort(key=lambda c: (first(profile, c), -inclusive[c], by_name(names[c]), c))
            if self.reverse:
                kids.reverse()
            self._children[node] = kids
        return kids

    def has_children(self, node: int) -> bool:
        kids = self.profile.children[node]
        return bool(kids) if self.visible is None else any(self.visible[kid] for kid in kids)

    def walk(self, top: int = 0, expanded: Container[int] | None = None) -> Iterator[int]:
        """The subtree of `top` in display order, `top` first; with `expanded`, only below the nodes it holds."""
        stack = [top]
        while stack:
            node = stack.pop()
            yield node
            if expanded is None or node in expanded:
                stack.extend(reversed(self.children(node)))

    def guide(self, node: int) -> str:
        """The tree's guide lines before a node's name ("│  ├─ "), as the text outputs and the table draw them."""
        if node == 0:
            return ""
        branch = LAST if self._is_last(node) else MIDDLE
        depth = self.profile.depths[node]
        if depth > GUIDE_DEPTH:  # a deep python-context stack: what is drawn stays short
            return f"[{depth}] {branch}"
        return self._below_of(self.profile.parents[node]) + branch

    def compact_guide(self, node: int) -> str:
        """The guide lines in a few cells, where the drawn ones would cut the name: the depth between dotted bars,
        then the branch ("┊12┊└─ ")."""
        if node == 0:
            return ""
        return f"┊{self.profile.depths[node]}┊" + (LAST if self._is_last(node) else MIDDLE)

    def _is_last(self, node: int) -> bool:
        siblings = self.children(self.profile.parents[node])
        return bool(siblings) and siblings[-1] == node

    def _below_of(self, node: int) -> str:
        """What the rows under a node carry for it and its ancestors."""
        below = self._below.get(node)
        if below is None:
            chain = []
            while node not in self._below:
                chain.append(node)
                node = self.profile.parents[node]
            below = self._below[node]
            for ancestor in reversed(chain):
                below += BELOW_LAST if self._is_last(ancestor) else BELOW_MIDDLE
                self._below[ancestor] = below
        return below

    def kernels(self) -> list[KernelStats]:
        """The kernel summary in display order."""
        first, by_name = self.sort.kernel_first, self.names.sort_key
        if first is None:
            kernels = sorted(self.profile.kernel_stats(), key=lambda k: by_name(k.name))
        else:
            kernels = sorted(self.profile.kernel_stats(), key=lambda k: (first(k), -k.value, by_name(k.name)))
        if self.reverse:
            kernels.reverse()
        return kernels
