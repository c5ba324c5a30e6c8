"""A trace's kernels summed by call stack as a `.hatchet` tree (`Trace.tree`), from its columns: kernel events
grouped by call stack with sorted-array operations, and an instrumentation trace's scopes nested by time inside
their warp (a scope inside another's time is its child) with a search over a table of running maxima, not a walk of
the events one by one. Sums run in the order the events come, as a walk would add them, so every number is the
same to the last bit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from proton_tui.hatchet.columns import order_by
from proton_tui.hatchet.lanes import warp_site

if TYPE_CHECKING:
    from proton_tui.hatchet.trace import Trace


def trace_tree(trace: Trace) -> dict:
    root: dict = {"frame": {"name": "ROOT", "type": "function"}, "metrics": {}, "children": []}
    index: dict[tuple[str, ...], dict] = {(): root}

    def node_at(stack: tuple[str, ...]) -> dict:
        parent = root
        for depth in range(1, len(stack) + 1):
            key = stack[:depth]
            node = index.get(key)
            if node is None:
                node = {"frame": {"name": stack[depth - 1], "type": "function"}, "metrics": {}, "children": []}
                index[key] = node
                parent["children"].append(node)
            parent = node
        return parent

    columns = trace.columns
    on_warp = trace.lanes.is_warp[columns.lane] if len(trace.lanes) else np.zeros(0, dtype=bool)
    _kernels(trace, np.flatnonzero(columns.category_mask("kernel") & ~on_warp), node_at)
    _warps(trace, np.flatnonzero(on_warp), node_at)
    return root


def _base(stack: tuple[str, ...]) -> tuple[str, ...]:
    return stack[1:] if stack[:1] == ("ROOT",) else stack


def _groups(keys: np.ndarray) -> tuple[list[int], list[np.ndarray]]:
    """Positions grouped by key, the groups in the order their first positions come, each in position order."""
    order = np.argsort(keys, kind="stable")
    cuts = np.flatnonzero(np.diff(keys[order])) + 1
    pieces = np.split(order, cuts) if len(order) else []
    pieces.sort(key=lambda piece: piece[0])
    return [int(keys[piece[0]]) for piece in pieces], pieces


def _kernels(trace: Trace, events: np.ndarray, node_at) -> None:
    """Kernel events (not on warp lanes) summed per call stack ending in the kernel's name: time, count and the
    launch metadata's numbers."""
    columns = trace.columns
    if not len(events):
        return
    pairs = columns.stack[events].astype(np.int64) * len(columns.names) + columns.name[events]
    distinct, inverse = np.unique(pairs, return_inverse=True)
    paths: dict[tuple[str, ...], int] = {}
    path_of_pair = np.empty(len(distinct), dtype=np.int64)
    for at, pair in enumerate(distinct.tolist()):
        stack, name = _base(columns.stacks[pair // len(columns.names)]), columns.names[pair % len(columns.names)]
        path_of_pair[at] = paths.setdefault(stack if stack and stack[-1] == name else (*stack, name), len(paths))
    keys = list(paths)
    durations, args = columns.duration[events], columns.arg[events]
    for path, group in zip(*_groups(path_of_pair[inverse])):
        metrics = node_at(keys[path])["metrics"]
        metrics["time (ns)"] = sum(durations[group].tolist(), 0.0)
        metrics["count"] = len(group)
        found = []  # the launch metadata's keys, in the order the group's events first hold them
        for key, column in columns.metrics.items():
            values = column[args[group]]
            held = np.flatnonzero(~np.isnan(values))
            if len(held):
                found.append((int(held[0]), key, values[held].tolist()))
        for _, key, values in sorted(found, key=lambda item: item[0]):
            metrics[key] = sum(values, 0.0)


def _warps(trace: Trace, events: np.ndarray, node_at) -> None:
    """The scopes on warp lanes, nested by time per warp (its lines together): each one's path is its call stack,
    the scopes it lies inside, its name; cycles summed per path, and divided by the warps (of every CTA) that
    recorded it."""
    columns = trace.columns
    if not len(events):
        return
    warp_keys: dict[tuple, int] = {}  # (pid, "warp <w>"), in the order the lanes come
    cta_warps: dict[tuple, int] = {}  # a CTA may run on another SM at each launch: the warp is its CTA's
    group_of_lane = np.full(len(trace.lanes), -1, dtype=np.int64)
    cta_warp_of_lane = np.full(len(trace.lanes), -1, dtype=np.int64)
    for number in np.unique(columns.lane[events]).tolist():
        lane = trace.lanes[number]
        warp = str(lane.tid).split(" (")[0]
        group_of_lane[number] = warp_keys.setdefault((lane.pid, warp), len(warp_keys))
        site = warp_site(str(lane.pid))
        key = (site[0], site[2], warp) if site else (lane.pid, warp)
        cta_warp_of_lane[number] = cta_warps.setdefault(key, len(cta_warps))
    lanes = columns.lane[events]
    # each warp's scopes by start, the longest first among equal starts; ties keep the columns' order
    events = events[_by_warp_start_longest(group_of_lane[lanes], columns.start[events], columns.duration[events])]
    groups = group_of_lane[columns.lane[events]]
    starts, ends = columns.start[events], columns.end[events]
    parent = _enclosing(starts, ends, groups)
    names = columns.name[events].astype(np.int64)
    chain = _chains(parent, names, len(columns.names))
    stacks = columns.stack[events].astype(np.int64)
    pairs = stacks * (int(chain.max()) + 1) + chain
    distinct, inverse = np.unique(pairs, return_inverse=True)
    chains = _chain_names(chain, parent, names, columns.names)
    paths: dict[tuple[str, ...], int] = {}
    path_of_pair = np.empty(len(distinct), dtype=np.int64)
    span = int(chain.max()) + 1
    for at, pair in enumerate(distinct.tolist()):
        path_of_pair[at] = paths.setdefault((*_base(columns.stacks[pair // span]), *chains[pair % span]), len(paths))
    keys = list(paths)
    path = path_of_pair[inverse]
    cta_warp = cta_warp_of_lane[columns.lane[events]]
    durations = columns.duration[events]
    for found, group in zip(*_groups(path)):
        metrics = node_at(keys[found])["metrics"]
        metrics["cycles"] = sum(durations[group].tolist(), metrics.get("cycles", 0.0))
        metrics["normalized_cycles"] = metrics["cycles"] / len(np.unique(cta_warp[group]))


def _by_warp_start_longest(groups: np.ndarray, starts: np.ndarray, durations: np.ndarray) -> np.ndarray:
    """The positions sorted by group, then start, the longest first among equal starts, ties in position order: what
    ``np.lexsort((-durations, starts, groups))`` gives, by one sort of (group, start) and a second one over the few
    positions whose (group, start) another shares."""
    order = order_by(groups, starts)
    sorted_groups, sorted_starts = groups[order], starts[order]
    tied = (sorted_groups[1:] == sorted_groups[:-1]) & (sorted_starts[1:] == sorted_starts[:-1])
    if tied.any():
        runs = np.cumsum(np.r_[True, ~tied])  # each run of equal (group, start) numbered, in order
        shared = np.flatnonzero(np.r_[tied, False] | np.r_[False, tied])
        within = order[shared]
        order[shared] = within[np.lexsort((-durations[within], runs[shared]))]
    return order


def _enclosing(starts: np.ndarray, ends: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """For each event (sorted by group, then start), the one it lies inside: the latest earlier event of its group
    still running when it starts (-1: none), as a stack of open scopes finds it. Found by descending a table of
    running maxima of the ends over blocks of 2^k events."""
    count = len(starts)
    first = np.searchsorted(groups, groups, side="left")  # each event's group starts here
    longest = int((np.arange(count) - first).max()) + 1 if count else 0  # the most events a group holds
    tables = [ends]
    while (1 << len(tables)) <= longest:  # blocks no longer than a group: a search never leaves its group
        width, last = 1 << (len(tables) - 1), tables[-1]
        tables.append(np.concatenate([last[:width], np.maximum(last[width:], last[:-width])]))
    position = np.arange(count, dtype=np.int64) - 1  # the block of events skipped ends here
    for level in range(len(tables) - 1, -1, -1):
        width = 1 << level
        safe = np.maximum(position, 0)
        skip = (position - width + 1 >= first) & (tables[level][safe] <= starts)
        position[skip] -= width
    safe = np.maximum(position, 0)
    return np.where((position >= first) & (ends[safe] > starts), position, -1)


def _chains(parent: np.ndarray, names: np.ndarray, name_count: int) -> np.ndarray:
    """Each event's chain of scope names (its enclosing scopes', then its own) as an id: equal chains, equal ids."""
    chain = np.full(len(parent), -1, dtype=np.int64)
    known: dict[int, int] = {}
    ready = parent < 0
    keys = np.where(ready, names, 0)
    while ready.any():
        wanted = keys[ready]
        distinct, inverse = np.unique(wanted, return_inverse=True)
        ids = np.array([known.setdefault(key, len(known)) for key in distinct.tolist()], dtype=np.int64)
        chain[ready] = ids[inverse]
        waiting = chain < 0
        ready = waiting & (chain[np.maximum(parent, 0)] >= 0) & (parent >= 0)
        keys = (chain[np.maximum(parent, 0)] + 1) * name_count + names
    return chain


def _chain_names(chain: np.ndarray, parent: np.ndarray, names: np.ndarray, name_table: list[str]) -> dict:
    """Each chain id's names, outermost first."""
    found: dict[int, tuple[str, ...]] = {}
    distinct, first = np.unique(chain, return_index=True)
    for key, at in sorted(zip(distinct.tolist(), first.tolist())):
        steps = []
        while at >= 0:
            steps.append(name_table[int(names[at])])
            at = int(parent[at])
        found[key] = tuple(reversed(steps))
    return found
