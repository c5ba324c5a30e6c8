"""Building a profile's tree: children lists from parents, inclusive values summed up the tree, and a part read
on its own grafted under a node of the whole."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from proton_tui.hatchet.errors import CaptureError

if TYPE_CHECKING:
    from proton_tui.hatchet.profile import Profile

GRAFTED_PARENT = -2  # the parent of subtrees flattened on their own, to be attached to a node of another part


def records(metrics: dict | int | None) -> bool:
    """Whether a node's raw metrics record anything: any metric but a zero (None: a plain kernel's, which do)."""
    if metrics is None:
        return True
    return isinstance(metrics, dict) and any(not (is_number(value) and value == 0) for value in metrics.values())


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def add_children(children: list[list[int]], parents: list[int], first: int = 0) -> None:
    """Extend `children` with the lists of new nodes `first`, `first` + 1, … whose parents are `parents`, and add
    each new node to its parent's list."""
    children += [[] for _ in parents]
    for node, parent in enumerate(parents, first):
        if parent >= 0:
            children[parent].append(node)



def with_inclusive(profile: Profile) -> Profile:
    """Fill inclusive value, launches and bytes: a node with its own value keeps it, others sum their children.
    Works on a forest too (the subtrees of a piece read on its own: roots with parent GRAFTED_PARENT)."""
    has_own, parents = profile.has_own, profile.parents
    inclusive = [value if own else 0 for value, own in zip(profile.own, has_own)]  # integers summed exactly
    # A scope's own launches or bytes (user scope metrics) would count its kernels twice.
    launches = [n if own else 0 for n, own in zip(profile.own_launches, has_own)]
    node_bytes = [b if own else 0.0 for b, own in zip(profile.own_bytes, has_own)]
    for node, parent in zip(range(profile.node_count - 1, 0, -1), reversed(parents)):
        if parent >= 0 and not has_own[parent]:
            inclusive[parent] += inclusive[node]
            launches[parent] += launches[node]
            node_bytes[parent] += node_bytes[node]
    if any(has_own[parent] for parent in set(parents) if parent >= 0):  # regions under a kernel (instrumentation)
        under_own = [False] * profile.node_count
        for node in range(1, profile.node_count):
            parent = parents[node]
            under_own[node] = parent >= 0 and (under_own[parent] or has_own[parent])
        profile.is_kernel = [own and not under for own, under in zip(has_own, under_own)]
    else:  # no node with its own value has children: those nodes are the kernels
        profile.is_kernel = list(has_own)
    _check_finite(profile, inclusive)
    profile.inclusive, profile.launches, profile.bytes = inclusive, launches, node_bytes
    profile.has_bytes = any(node_bytes)
    profile._kernel_stats = profile._device_totals = profile._empty = None
    return profile


def graft(profile: Profile, part: Profile, at: int) -> None:
    """Attach `part` (a forest loaded on its own, inclusive values computed, roots with parent GRAFTED_PARENT; its
    `children` are not read) as the last children of node `at`; its totals climb to ROOT through the nodes without
    their own value, so the result is what `_with_inclusive` gives for the whole tree."""
    chain = [at, *profile.ancestors(at)]
    inside_kernel = any(profile.has_own[node] for node in chain)  # then none of the part's nodes is a kernel
    offset, children = profile.node_count, profile.children
    parents = [at if parent == GRAFTED_PARENT else parent + offset for parent in part.parents]
    first_root = len(children[at])
    add_children(children, parents, offset)  # from the parents: cheaper than sending the part's and renumbering them
    roots = children[at][first_root:]
    profile.parents += parents
    for item in ("names", "depths", "metrics", "own", "has_own", "devices", "own_launches", "own_bytes",
                 "inclusive", "launches", "bytes"):
        getattr(profile, item).extend(getattr(part, item))
    profile.is_kernel += [False] * part.node_count if inside_kernel else part.is_kernel
    profile.hidden_internal += part.hidden_internal
    profile.has_bytes = profile.has_bytes or part.has_bytes
    profile._kernel_stats = profile._device_totals = profile._empty = None  # summed over the whole when first asked for
    value = sum(profile.inclusive[root] for root in roots)
    launches = sum(profile.launches[root] for root in roots)
    size = sum(profile.bytes[root] for root in roots)
    for node in chain:  # up to the first node with its own value (which keeps it)
        if profile.has_own[node]:
            break
        profile.inclusive[node] += value
        profile.launches[node] += launches
        profile.bytes[node] += size
    _check_finite(profile, [profile.inclusive[node] for node in chain])


def _check_finite(profile: Profile, values: list[float]) -> None:
    """Refuse sums a float cannot hold (values whose total is past 1.8e308): no number shown would be true."""
    if any(isinstance(value, float) and not math.isfinite(value) for value in values):
        raise CaptureError(f"{profile.path}: its {profile.unit} values sum past what a number can hold "
                           "(the total is infinite)")
