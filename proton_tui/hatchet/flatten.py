"""Validating a capture's nodes and flattening them, in pre-order, into the model's arrays (`Flat`), then into a
`Profile`. A node is read in steps: its parts (name, metrics, children), whether it is hidden (Proton's internal
frames), its values (a plain kernel's by a quick check, any other node's by the general ones), and its row."""

from __future__ import annotations

import math
import re
import reprlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from proton_tui.hatchet.decode import Node
from proton_tui.hatchet.devices import device_label
from proton_tui.hatchet.errors import LoadCancelled
from proton_tui.hatchet.profile import NO_UNIT, ROOT_PARENT, Profile
from proton_tui.hatchet.tree import GRAFTED_PARENT, add_children, is_number, with_inclusive

TIME_KEY = re.compile(r"^time \((ns|us|ms|s)\)$", re.IGNORECASE)
NS_PER_UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
COUNT_KEYS = ("count", "Count")
DEVICE_ID_KEYS = ("device_id", "DeviceId")
DEVICE_TYPE_KEYS = ("device_type", "DeviceType")
CYCLES_KEY = "cycles"
INTERNAL_PREFIX = "__proton_launch_metadata"
NO_METRICS: dict = {}  # the metrics of every node that has none (shared: never changed)
NO_KIDS: list = []  # the children of a node whose capture leaves them out (shared: never changed)
PLAIN_KERNEL_KEYS = frozenset(("time (ns)", "count", "device_id", "device_type"))  # a kernel's metrics, Triton >= 3.2
# Proton's numeric device types (instrumentation captures write its DeviceType enum's value).
DEVICE_TYPE_NAMES = {"0": "HIP", "1": "CUDA"}


class NodeError(Exception):
    """A node that is not what Proton writes; the message names the node."""


SHOWN = reprlib.Repr()  # a value as an error line shows it: 3 levels, 4 items, 200 characters of a name or string
SHOWN.maxlevel, SHOWN.maxlist, SHOWN.maxdict, SHOWN.maxstring, SHOWN.maxother = 3, 4, 4, 200, 40
LONGEST_SHOWN = 60  # characters of a value an error line shows before it is cut


def shown(value) -> str:
    """A metric's value as an error line shows it: short, its nesting and length cut, and said when cut."""
    if isinstance(value, msgspec.msgpack.Ext):  # its repr is an object's address
        return f"a MessagePack extension value (type {value.code})"
    text = SHOWN.repr(value)
    if isinstance(value, str) and len(value) > SHOWN.maxstring:
        return f"{text} (a string of {len(value):,} characters)"
    if isinstance(value, (list, dict)):
        if len(text) > LONGEST_SHOWN:
            text = text[:LONGEST_SHOWN] + "…"
        depth, inner = 1, value
        while isinstance(inner, list) and inner and isinstance(inner[0], list) and depth <= 3:
            depth, inner = depth + 1, inner[0]
        nesting = " nested deeper than 3" if depth > 3 else ""
        return f"{text} (a {type(value).__name__} of {len(value):,} items{nesting})"
    return text


LARGEST = int(sys.float_info.max)  # a whole number past it has no float: no sum or ratio of it could be worked out


def _check_metrics(metrics: dict) -> None:
    for key, value in metrics.items():
        kind = type(value)
        if (kind is int and -LARGEST <= value <= LARGEST) or (kind is float and math.isfinite(value)):
            continue
        if kind is int and key not in DEVICE_ID_KEYS and key not in DEVICE_TYPE_KEYS:
            raise NodeError(f"metric {shown(key)} is {shown(value)}, past the largest number a sum can hold")
        if key in DEVICE_ID_KEYS or key in DEVICE_TYPE_KEYS:
            if kind is not str:
                raise NodeError(f"metric {shown(key)} is {shown(value)}, not a device name")
        elif kind is float:
            raise NodeError(f"metric {shown(key)} is {shown(value)}, not a finite number")
        elif not (kind is list and all(is_number(v) for v in value)):
            raise NodeError(f"metric {shown(key)} is {shown(value)}, not a number")


def _check_amounts(metrics: dict) -> None:
    """What Proton cannot write: a launch count that is negative or not whole, negative bytes."""
    count = _first(metrics, COUNT_KEYS)
    if count is not None and not (count >= 0 and float(count).is_integer()):
        raise NodeError(f"metric 'count' is {count!r}, not a whole number of launches")
    size = metrics.get("bytes")
    if is_number(size) and size < 0:
        raise NodeError(f"metric 'bytes' is {size!r}, negative")


_ns_per_unit_of_key: dict[str, float | None] = {}  # metric key -> ns per unit for time keys, None for the rest


def _time_factor(key: str) -> float | None:
    if key not in _ns_per_unit_of_key:
        unit = TIME_KEY.match(key)
        _ns_per_unit_of_key[key] = NS_PER_UNIT[unit.group(1).lower()] if unit else None
    return _ns_per_unit_of_key[key]


def _own_value(metrics: dict) -> tuple[float | None, float | None]:
    """The node's own time in ns and own cycles, each None when absent."""
    time_ns = metrics.get("time (ns)")
    if time_ns is None:
        for key, value in metrics.items():
            factor = _time_factor(key)
            if factor is not None:
                time_ns = value * factor
    cycles = metrics.get(CYCLES_KEY)
    for value in (time_ns, cycles):
        if value is not None and value < 0:
            raise NodeError(f"negative time or cycles {value!r}")
    return time_ns, cycles


def _first(metrics: dict, keys: tuple[str, ...]):
    for key in keys:
        if key in metrics:
            return metrics[key]
    return None


def _where(names: list[str], parent: int) -> str:
    if parent == GRAFTED_PARENT:
        return "a node"
    return f"a child of node {names[parent]!r}" if parent >= 0 else "the tree's root"


@dataclass
class Flat:
    """Nodes in pre-order as parallel lists, before inclusive values: what `flatten` reads from a decoded tree."""

    names: list[str] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)
    depths: list[int] = field(default_factory=list)
    metrics: list[dict | None] = field(default_factory=list)
    time_own: list[float | None] = field(default_factory=list)
    cycles_own: list[float | None] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)
    bytes: list[float] = field(default_factory=list)
    hidden: int = 0
    hidden_with_children: bool = False  # a hidden internal frame had children

    def hide(self, kids: list) -> None:
        """Count a hidden internal frame and the nodes below it."""
        self.hidden += 1 + _count_nodes(kids)
        self.hidden_with_children = self.hidden_with_children or bool(kids)


# A node without metrics: no own time or cycles, no launches, no device, no bytes, the shared empty metrics.
NO_VALUES = (None, None, 0, "", 0.0, NO_METRICS)


def flatten(roots: list[tuple[object, int, int]], show_internal: bool, compact: bool = False,
            structs: bool = False, cancelled: Callable[[], bool] | None = None) -> Flat:
    """Validate and flatten nodes given as (node, parent, depth), the first root first: parsed JSON (dicts), or with
    `structs` msgspec's `Node`s (their shape checked by the decoder). A root's parent is ROOT_PARENT for the tree's
    root (its metrics are hints, not values) or GRAFTED_PARENT (a node like any other). `compact`: a kernel whose
    metrics are exactly what the arrays hold gets None there (`Profile.node_metrics`). `cancelled` is asked as the
    walk goes down or up: True raises LoadCancelled."""
    flat = Flat()
    names, parents, depths = flat.names, flat.parents, flat.depths
    metrics_of, time_own, cycles_own, counts = flat.metrics, flat.time_own, flat.cycles_own, flat.counts
    devices, node_bytes = flat.devices, flat.bytes
    labels: dict[tuple, str] = {}  # device label by (device type, device id)
    # Siblings are read through an iterator on the stack, left when a node has children and resumed after them.
    pending = [(iter([node]), parent, depth) for node, parent, depth in reversed(roots)]
    while pending:
        if cancelled is not None and cancelled():
            raise LoadCancelled
        siblings, parent, depth = pending[-1]
        for node in siblings:
            if structs:
                name, metrics, kids = node.frame.name, node.metrics, node.children
            else:
                name, metrics, kids = _parts(node, names, parent)
            if not show_internal and name.startswith(INTERNAL_PREFIX):
                flat.hide(kids)
                continue
            time_ns, cycles, count, device, size, kept = \
                _values(name, metrics, parent, compact, labels) if metrics else NO_VALUES
            node_id = len(names)
            names.append(sys.intern(name))  # one string per name: names repeat across the tree, and across ranks
            parents.append(parent)
            depths.append(depth)
            metrics_of.append(kept)
            time_own.append(time_ns)
            cycles_own.append(cycles)
            counts.append(count)
            devices.append(device)
            node_bytes.append(size)
            if kids:
                pending.append((iter(kids), node_id, depth + 1))
                break
        else:
            pending.pop()
    return flat


def _parts(node, names: list[str], parent: int) -> tuple[str, dict, list]:
    """A parsed node's name, metrics and children, its shape checked (msgspec checks a Struct's as it decodes)."""
    if type(node) is not dict:
        raise NodeError(f"{_where(names, parent)} is {type(node).__name__}, not an object")
    frame = node.get("frame")
    metrics, kids = node.get("metrics", NO_METRICS), node.get("children", NO_KIDS)
    name = frame.get("name") if type(frame) is dict else None
    if type(name) is not str:
        raise NodeError(f"{_where(names, parent)} has no frame name")
    if type(metrics) is not dict or type(kids) is not list:
        raise NodeError(f"node {name!r}: 'metrics' must be an object and 'children' a list")
    return name, metrics, kids


def _values(name: str, metrics: dict, parent: int, compact: bool, labels: dict[tuple, str]) -> tuple:
    """A node's (own time in ns, own cycles, launches, device label, bytes, metrics kept) from its metrics (not
    empty): a plain kernel's by the quick check, any other node's by the general checks."""
    plain = _plain_kernel(metrics, parent, compact)
    if plain is not None:
        key, size, kept = plain
        return metrics["time (ns)"], None, metrics["count"], labels.get(key) or _label(labels, key), size, kept
    is_root = parent == ROOT_PARENT
    try:
        _check_metrics(metrics)
        time_ns, cycles = (None, None) if is_root else _own_value(metrics)
        if not is_root:
            _check_amounts(metrics)
    except NodeError as error:
        raise NodeError(f"node {shown(name)}: {error}") from None
    value = None if is_root else _first(metrics, COUNT_KEYS)
    count = int(value) if is_number(value) else 0
    device_id = _first(metrics, DEVICE_ID_KEYS)
    key = None if device_id is None else (_first(metrics, DEVICE_TYPE_KEYS), device_id)
    device = "" if key is None else labels.get(key) or _label(labels, key)
    value = metrics.get("bytes")
    return time_ns, cycles, count, device, float(value) if is_number(value) else 0.0, metrics


def _plain_kernel(metrics: dict, parent: int, compact: bool) -> tuple[tuple[str, str], float, dict | None] | None:
    """(device key, bytes, metrics kept) of a kernel as Proton >= 3.2 writes it, maybe with numeric extras (bytes,
    flops), which needs no general checks; None for any other node. `compact`: see `flatten`."""
    time_ns, count = metrics.get("time (ns)"), metrics.get("count")
    device_id, device_type = metrics.get("device_id"), metrics.get("device_type")
    if not (type(time_ns) is int and type(count) is int and type(device_id) is str and type(device_type) is str
            and parent != ROOT_PARENT and 0 <= time_ns <= LARGEST and 0 <= count <= LARGEST):
        return None
    if len(metrics) == 4:
        bare = compact and time_ns and device_type and ":" not in device_type and device_type not in DEVICE_TYPE_NAMES
        return (device_type, device_id), 0.0, None if bare else metrics
    if "cycles" in metrics:
        return None
    isfinite = math.isfinite
    for key, value in metrics.items():
        kind = type(value)
        if not ((kind is int and -LARGEST <= value <= LARGEST) or (kind is float and isfinite(value))) \
                and key not in PLAIN_KERNEL_KEYS:
            return None  # a value the general checks must see
    size = float(metrics.get("bytes", 0))
    return None if size < 0 else ((device_type, device_id), size, metrics)  # negative: the general checks name it


def _label(labels: dict[tuple, str], key: tuple) -> str:
    """The label of a device by (device type, device id), made once: "CUDA:0", "GPU:1"."""
    return labels.setdefault(key, device_label(DEVICE_TYPE_NAMES.get(key[0], key[0]) or "GPU", key[1]))


def profile_from(path: Path, flat: Flat, device_info: dict, with_children: bool = True) -> Profile:
    """The profile of flattened nodes: its unit (ns, or cycles when no node has a time) and inclusive values;
    without `with_children`, its children lists are left empty (a part sent elsewhere, where they are rebuilt)."""
    unit = "ns" if any(v is not None for v in flat.time_own) else \
        "cycles" if any(v is not None for v in flat.cycles_own) else NO_UNIT
    own = flat.time_own if unit == "ns" else flat.cycles_own
    children: list[list[int]] = []
    if with_children:
        add_children(children, flat.parents)
    return with_inclusive(
        Profile(
            path=path,
            names=flat.names,
            parents=flat.parents,
            children=children,
            depths=flat.depths,
            metrics=flat.metrics,
            own=[v or 0.0 for v in own],
            has_own=[v is not None for v in own],
            is_kernel=[],
            devices=flat.devices,
            unit=unit,
            own_launches=flat.counts,
            own_bytes=flat.bytes,
            device_info=device_info,
            hidden_internal=flat.hidden,
        )
    )


def _count_nodes(kids: list) -> int:
    """The nodes in these subtrees (parsed JSON or Structs)."""
    total, stack = 0, list(kids)
    while stack:
        node = stack.pop()
        total += 1
        if isinstance(node, Node):
            stack.extend(node.children)
        elif isinstance(node, dict) and isinstance(node.get("children"), list):
            stack.extend(node["children"])
    return total
