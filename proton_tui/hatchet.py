"""Proton `.hatchet` captures: load, validate, and compute what every view shows.

A capture is a JSON list ``[tree, device_info]``. Nodes are stored flat, in pre-order (node 0 is ROOT), so a
million-node capture costs a few Python lists rather than a million objects, and the reverse of the node order
visits every child before its parent.
"""

from __future__ import annotations

import gc
import json
import json.scanner
import math
import mmap
import re
import sys
import threading
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from itertools import compress
from pathlib import Path

import orjson

TIME_KEY = re.compile(r"^time \((ns|us|ms|s)\)$", re.IGNORECASE)
NS_PER_UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
COUNT_KEYS = ("count", "Count")
DEVICE_ID_KEYS = ("device_id", "DeviceId")
DEVICE_TYPE_KEYS = ("device_type", "DeviceType")
CYCLES_KEY = "cycles"
INTERNAL_PREFIX = "__proton_launch_metadata"
ROOT_PARENT = -1  # the parent of the tree's root
GRAFTED_PARENT = -2  # the parent of subtrees flattened on their own, to be attached to a node of another part
NO_METRICS: dict = {}  # the metrics of every node that has none (shared: never changed)
NO_KIDS: list = []  # the children of a node whose capture leaves them out (shared: never changed)
# From here a capture is parsed on two cores (two_process.py). Measured on 2 cores: even at 17 MB, 0.34 s instead of
# 0.41 s at 34 MB.
TWO_PROCESS_MIN_BYTES = 24_000_000
FLOPS_KEY = re.compile(r"^flops(8|16|32|64)?$")
PLAIN_KERNEL_KEYS = frozenset(("time (ns)", "count", "device_id", "device_type"))  # a kernel's metrics, Triton >= 3.2
# Peak HBM bandwidth (bytes/s) for AMD arches whose device_info lacks the bus numbers (Proton's specs.py).
HIP_PEAK_BYTES_PER_S = {"gfx90a": 3.2e12, "gfx942": 5.3e12, "gfx950": 8.0e12}


class CaptureError(Exception):
    """A capture that cannot be read; the message is one line that names the file."""


@dataclass
class KernelStats:
    """One kernel name summed across the whole tree."""

    name: str
    value: float
    launches: int
    bytes: float
    devices: tuple[str, ...]
    unit: str = "ns"

    @property
    def avg(self) -> float:
        return self.value / self.launches if self.launches else 0.0

    @property
    def gbps(self) -> float | None:
        """Bytes over time (GB/s) when the kernel declared bytes; None otherwise (or for cycle captures)."""
        return self.bytes / self.value if self.bytes and self.value and self.unit == "ns" else None


def _largest_first(kernel: KernelStats) -> tuple[float, str]:
    """The kernel summary's order: largest total first, then by name."""
    return -kernel.value, kernel.name


@dataclass
class Profile:
    """A loaded capture: per-node arrays indexed by node id, plus derived inclusive values."""

    path: Path
    names: list[str]
    parents: list[int]
    children: list[list[int]]
    depths: list[int]
    # None: a plain kernel whose metrics the arrays hold; an int: where the node's metrics are in `_sent_metrics`
    metrics: list[dict | int | None]
    own: list[float]  # the node's own time in ns (or cycles), 0.0 where it has none
    has_own: list[bool]  # the node carries its own time (or cycles): a kernel or an instrumented region
    is_kernel: list[bool]  # has its own value and no ancestor that has one
    devices: list[str]  # "CUDA:0", or "" where the node names no device
    unit: str  # "ns" or "cycles"
    own_launches: list[int]
    own_bytes: list[float]
    device_info: dict
    hidden_internal: int = 0
    reference_total: float | None = None  # the unfiltered capture's total, when this is a filtered subset
    inclusive: list[float] = field(default_factory=list)
    launches: list[int] = field(default_factory=list)
    bytes: list[float] = field(default_factory=list)
    _kernel_stats: list[KernelStats] | None = field(default=None, repr=False)
    _device_names: list[str] | None = field(default=None, repr=False)
    _device_totals: dict[str, float] | None = field(default=None, repr=False)
    # The metrics of a loader child's kernels that the arrays do not hold: a JSON list, read when first needed.
    _sent_metrics: bytes | list[dict] | None = field(default=None, repr=False)
    has_bytes: bool = False  # some kernel declared bytes: the GB/s columns apply

    @property
    def node_count(self) -> int:
        return len(self.names)

    @property
    def total(self) -> float:
        """Total GPU time in ns (or cycles): ROOT's inclusive value."""
        return self.inclusive[0]

    @property
    def is_empty(self) -> bool:
        """True when Proton recorded no kernels (a ROOT-only tree, or no node with a time)."""
        return not any(self.is_kernel)

    @property
    def kernel_launches(self) -> int:
        return sum(compress(self.launches, self.is_kernel))

    @property
    def kernel_count(self) -> int:
        """Distinct kernel names (without summing the kernel summary)."""
        if self._kernel_stats is not None:
            return len(self._kernel_stats)
        return len(set(compress(self.names, self.is_kernel)))

    def kernel_devices(self) -> set[str]:
        """The device labels of the kernels ("" for a kernel that names none)."""
        return set(compress(self.devices, self.is_kernel))

    def kernel_stats(self) -> list[KernelStats]:
        """Every kernel grouped by name across the tree, largest total first (computed once)."""
        if self._kernel_stats is None:
            self._summarize_kernels()
        return self._kernel_stats

    def device_totals(self) -> dict[str, float]:
        """Kernel time (or cycles) per device, as the capture labels the kernels (computed once)."""
        if self._device_totals is None:
            self._summarize_kernels()
        return self._device_totals

    def _summarize_kernels(self) -> None:
        """One pass over the kernels for both summaries: by name, and by device."""
        by_name: dict[str, list] = {}
        by_device: dict[str, float] = {}
        for name, value, launches, size, device in compress(
            zip(self.names, self.inclusive, self.launches, self.bytes, self.devices), self.is_kernel
        ):
            entry = by_name.get(name)
            if entry is None:
                entry = by_name[name] = [0.0, 0, 0.0, set()]
            entry[0] += value
            entry[1] += launches
            entry[2] += size
            entry[3].add(device)
            by_device[device] = by_device.get(device, 0.0) + value
        stats = [
            KernelStats(name, v, n, b, tuple(sorted(d - {""})), self.unit) for name, (v, n, b, d) in by_name.items()
        ]
        stats.sort(key=_largest_first)
        self._kernel_stats, self._device_totals = stats, dict(sorted(by_device.items()))

    def kernels_sorted(self, sort_key: str = "time") -> list[KernelStats]:
        """The kernel summary in display order: largest first by time, launches, average or GB/s; or by name."""
        keys = {
            "time": _largest_first,
            "launches": lambda k: (-k.launches, -k.value, k.name),
            "avg": lambda k: (-k.avg, -k.value, k.name),
            "gbps": lambda k: (-(k.gbps or -1.0), -k.value, k.name),
            "name": lambda k: (k.name,),
        }
        return sorted(self.kernel_stats(), key=keys[sort_key])

    def device_names(self) -> list[str]:
        """Devices that ran a recorded kernel, plus those listed in device_info (computed once)."""
        if self._device_names is None:
            self._device_names = self._find_device_names()
        return self._device_names

    def _find_device_names(self) -> list[str]:
        return sorted((set(self.devices) - {""}) | self._listed_devices())

    def _listed_devices(self) -> set[str]:
        """The devices device_info describes, as "CUDA:0"."""
        return {
            f"{device_type}:{device_id}"
            for device_type, by_id in self.device_info.items()
            if isinstance(by_id, dict)
            for device_id in by_id
        }

    def percent(self, value: float) -> float:
        """Share of the whole capture's total, also in a filtered subset."""
        total = self.total if self.reference_total is None else self.reference_total
        return 100.0 * value / total if total else 0.0

    def filtered(self, include: re.Pattern | None = None, exclude: re.Pattern | None = None) -> Profile:
        """The capture without excluded names (and their subtrees), keeping only included names with their
        ancestors and descendants. Totals are recomputed; percentages stay shares of the whole capture."""
        names, parents, count = self.names, self.parents, self.node_count
        keep = [True] * count
        if exclude is not None:
            keep = [node == 0 or not exclude.search(names[node]) for node in range(count)]
        if include is not None:
            hit = [node > 0 and bool(include.search(names[node])) for node in range(count)]
            below_hit = list(hit)
            for node in range(1, count):
                below_hit[node] = below_hit[node] or below_hit[parents[node]]
            above_hit = list(hit)
            for node in range(count - 1, 0, -1):
                if above_hit[node]:
                    above_hit[parents[node]] = True
            keep = [k and (b or a) for k, b, a in zip(keep, below_hit, above_hit)]
        return self if all(keep) else self.subset(keep)

    def shown(self, min_percent: float = 0.0, max_depth: int | None = None) -> list[bool]:
        """Which nodes a display shows: at most max_depth deep and at least min_percent of the total.
        Hiding a row changes no number: a scope keeps the time of the kernels it hides."""
        return [
            node == 0 or ((max_depth is None or depth <= max_depth) and self.percent(value) >= min_percent)
            for node, (depth, value) in enumerate(zip(self.depths, self.inclusive))
        ]

    def subset(self, keep: list[bool]) -> Profile:
        """A new profile of the kept nodes (ROOT is always kept), with inclusive values recomputed."""
        new_id = [-1] * self.node_count
        picked = []
        for node in range(self.node_count):
            parent = self.parents[node]
            if node == 0 or (keep[node] and new_id[parent] >= 0):
                new_id[node] = len(picked)
                picked.append(node)
        children: list[list[int]] = [[] for _ in picked]
        for node in picked[1:]:
            children[new_id[self.parents[node]]].append(new_id[node])
        return _with_inclusive(
            Profile(
                path=self.path,
                names=[self.names[i] for i in picked],
                parents=[new_id[self.parents[i]] if i else -1 for i in picked],
                children=children,
                depths=[self.depths[i] for i in picked],
                metrics=[self.metrics[i] for i in picked],
                _sent_metrics=self._sent_metrics,
                own=[self.own[i] for i in picked],
                has_own=[self.has_own[i] for i in picked],
                is_kernel=[],
                devices=[self.devices[i] for i in picked],
                unit=self.unit,
                own_launches=[self.own_launches[i] for i in picked],
                own_bytes=[self.own_bytes[i] for i in picked],
                device_info=self.device_info,
                hidden_internal=self.hidden_internal,
                reference_total=self.total if self.reference_total is None else self.reference_total,
            )
        )

    def peak_bytes_per_s(self, device: str) -> float | None:
        """Peak memory bandwidth of one device from device_info, or None when the capture does not say."""
        device_type, _, device_id = device.partition(":")
        spec = self.device_info.get(device_type, {}).get(device_id)
        if not isinstance(spec, dict):
            return None
        bus_width, mem_clock_khz = spec.get("bus_width"), spec.get("memory_clock_rate")
        if _is_number(bus_width) and _is_number(mem_clock_khz) and bus_width > 0 and mem_clock_khz > 0:
            return 2.0 * bus_width * mem_clock_khz * 1e3 / 8.0
        return HIP_PEAK_BYTES_PER_S.get(str(spec.get("arch", "")))

    def gbps(self, node: int) -> float | None:
        """Achieved GB/s of a kernel (its bytes over its time); None for scopes, whose time may include kernels
        that declared no bytes, and where bytes or time are missing."""
        if self.unit != "ns" or not self.has_own[node] or not self.bytes[node] or not self.inclusive[node]:
            return None
        return self.bytes[node] / self.inclusive[node]

    def peak_percent(self, node: int) -> float | None:
        """Achieved bandwidth as a percentage of the node's device peak, or None when unknown."""
        achieved = self.gbps(node)
        peak = self.peak_bytes_per_s(self.devices[node]) if achieved and self.devices[node] else None
        return 100.0 * achieved * 1e9 / peak if peak else None

    def sorted_children(self, node: int, key: str = "time") -> list[int]:
        """Children of a node in display order: largest first by inclusive time, launches, avg or GB/s; or by name."""
        kids = self.children[node]
        if key == "name":
            return sorted(kids, key=lambda c: (self.names[c], c))
        first = {
            "time": lambda c: 0.0,
            "launches": lambda c: -self.launches[c],
            "avg": lambda c: -self.avg(c),
            "gbps": lambda c: -(self.gbps(c) or -1.0),
        }[key]
        return sorted(kids, key=lambda c: (first(c), -self.inclusive[c], self.names[c], c))

    def node_metrics(self, node: int) -> dict:
        """The node's metrics as the capture has them (a kernel the loader child sent as None is rebuilt here)."""
        metrics = self.metrics[node]
        if type(metrics) is int:
            metrics = self._read_sent_metrics()[metrics]
        elif metrics is None:
            device_type, _, device_id = self.devices[node].partition(":")
            metrics = {"count": self.own_launches[node], "device_id": device_id, "device_type": device_type,
                       "time (ns)": self.own[node]}
        return metrics

    def _read_sent_metrics(self) -> list[dict]:
        if type(self._sent_metrics) is bytes:
            self._sent_metrics = orjson.loads(self._sent_metrics)
        return self._sent_metrics

    def tflops(self, node: int) -> dict[str, float]:
        """A kernel's TFLOP/s for each flops metric it declared (flops, flops8 … flops64), over its time."""
        if self.unit != "ns" or not self.has_own[node] or not self.inclusive[node]:
            return {}
        seconds = self.inclusive[node] * 1e-9
        return {
            key: value / seconds / 1e12
            for key, value in self.node_metrics(node).items()
            if FLOPS_KEY.match(key) and _is_number(value) and value
        }

    def device_warnings(self) -> list[str]:
        """What a multi-device capture cannot tell apart, said plainly."""
        ran_on = sorted(self.kernel_devices() - {""})
        listed = self._listed_devices()
        warnings = []
        if len(ran_on) > 1:
            warnings.append(
                f"kernels ran on {len(ran_on)} devices ({', '.join(ran_on)}): Proton merges same-named kernels "
                "launched from one calling context on different GPUs into one node labelled with a single device, "
                "so per-device totals can be off; scope each GPU's work to tell them apart"
            )
        missing = [d for d in ran_on if d not in listed]
        if missing and listed:
            warnings.append(
                f"device_info lists {', '.join(sorted(listed))} but not {', '.join(missing)} "
                "(Triton 3.6's multi-GPU metadata bug): no peak bandwidth for those"
            )
        return warnings

    def avg(self, node: int) -> float:
        launches = self.launches[node]
        return self.inclusive[node] / launches if launches else 0.0

    def path_of(self, node: int) -> str:
        """The node's names from the top level down, joined by ' / '."""
        names = []
        while node > 0:
            names.append(self.names[node])
            node = self.parents[node]
        return " / ".join(reversed(names)) or "ROOT"

    def metrics_summary(self) -> dict:
        """The keys downstream tools already read from a Proton run."""
        kernels = self.kernel_stats()
        to_ms = 1e-6 if self.unit == "ns" else None
        return {
            "proton_kernel_count": self.kernel_launches,
            "proton_gpu_time_ms": self.total * to_ms if to_ms else None,
            "proton_top_kernel_ms": kernels[0].value * to_ms if kernels and to_ms else None,
            "proton_top_kernels": [k.name for k in kernels[:5]],
            "proton_artifact_dir": str(self.path.resolve().parent),
        }


def load_profile(path: str | Path, *, show_internal: bool = False) -> Profile:
    """Read, validate and index a `.hatchet` file (from TWO_PROCESS_MIN_BYTES on two cores). Raises CaptureError
    with a one-line reason."""
    pending = PendingLoad(Path(path), show_internal)
    try:
        return pending.finish()
    finally:
        pending.close()


class PendingLoad:
    """A capture being loaded: made, it has checked and mapped the file and, for a large one, forked the child that
    loads part of it (CaptureError for a file that cannot be read); `finish` does the rest here. `close` releases
    the file and the child (also when `finish` was never called)."""

    def __init__(self, path: Path, show_internal: bool, busy_s: float = 0.0) -> None:
        """`busy_s`: seconds of other work this process does before `finish` (the child then takes more)."""
        self.path, self.show_internal = path, show_internal
        self._held = ExitStack()
        self.data = self._held.enter_context(_mapped(path))
        self.split = None
        if len(self.data) >= TWO_PROCESS_MIN_BYTES:
            from .two_process import start_split

            self.split = start_split(path, self.data, show_internal, busy_s)
            if self.split is not None:
                self._held.callback(self.split.close)

    def finish(self) -> Profile:
        """The profile; raises CaptureError. The loaded capture is frozen out of the cyclic GC: it is long-lived
        and acyclic, and full collections would walk all of it (~50 ms at 100k nodes)."""
        collecting = gc.isenabled()
        gc.disable()  # millions of new containers, none cyclic: collections would walk the whole tree again and again
        try:
            with self._held:
                profile = self.split.finish() if self.split is not None else None
                if profile is None:
                    profile = _load_in_one_process(self.path, self.data, self.show_internal)
            gc.freeze()
            return profile
        finally:
            if collecting:
                gc.enable()

    def close(self) -> None:
        self._held.close()


def _load_in_one_process(path: Path, data, show_internal: bool) -> Profile:
    tree, device_info = _document_parts(path, _parse(path, data))
    try:
        return _index(path, tree, device_info, show_internal)
    except _NodeError as error:
        raise CaptureError(f"{path}: {error}") from None


def _document_parts(path: Path, document) -> tuple[object, dict]:
    """The tree and device_info of a parsed capture; CaptureError when the document is not [tree, device_info]."""
    if not isinstance(document, list) or len(document) != 2:
        raise CaptureError(f"{path}: not a Proton capture: expected a JSON list [tree, device_info]")
    tree, device_info = document
    if not isinstance(device_info, dict):
        raise CaptureError(f"{path}: not a Proton capture: device_info (the list's second element) is not an object")
    return tree, device_info


@contextmanager
def _mapped(path: Path):
    """The file's bytes, memory-mapped where possible: orjson then reads the page cache without a copy
    (a 1 GB capture loads ~0.8 s sooner and ~1 GB smaller)."""
    if not path.exists():
        doubled = path.with_name(path.name + ".hatchet")
        hint = f" (but {doubled.name} is: Proton's -n takes the name without .hatchet)" if doubled.exists() else ""
        raise CaptureError(f"{path}: no such file{hint}")
    if path.is_dir():
        raise CaptureError(f"{path}: is a directory, not a .hatchet file")
    try:
        handle = open(path, "rb")
    except OSError as error:
        raise CaptureError(f"{path}: cannot read: {error.strerror or error}") from None
    with handle:
        try:
            data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (ValueError, OSError):  # empty, or not a regular file (a pipe): read it instead
            data = handle.read()
        try:
            if not len(data) or re.match(rb"\s*\Z", data):
                raise CaptureError(f"{path}: empty file")
            if data[:1] == b"\x92":
                raise CaptureError(f"{path}: binary data, a MessagePack capture (.hatchet_msgpack, Triton >= 3.7); "
                                   "proton-tui reads Proton's JSON .hatchet format")
            if b"\x00" in data[:65536]:
                raise CaptureError(f"{path}: binary data, not a JSON .hatchet capture")
            yield data
        finally:
            if isinstance(data, mmap.mmap):
                data.close()


def _parse(path: Path, data):
    try:
        with memoryview(data) as view:
            return orjson.loads(view)
    except orjson.JSONDecodeError as error:
        if "depth limit" in str(error) or "recursion" in str(error):  # orjson stops at 1,024 levels
            return _parse_deep(path, bytes(data))
        tail = bytes(data[-65536:])
        if error.pos >= len(data) - (len(tail) - len(tail.rstrip())):
            raise CaptureError(f"{path}: truncated: the JSON ends early (line {error.lineno})") from None
        if re.match(rb"-?(NaN|Infinity)", data[error.pos : error.pos + 9]):
            raise CaptureError(f"{path}: metric value is NaN or Infinity at line {error.lineno}") from None
        raise CaptureError(f"{path}: not valid JSON: {error.msg} at line {error.lineno} column {error.colno}") from None


def _parse_deep(path: Path, data: bytes):
    """Parse JSON nested deeper than orjson allows (deep python-context stacks).

    The pure-Python scanner recurses in Python frames only, so a raised recursion limit on a thread with a large
    stack copes with any depth that fits in memory.
    """
    decoder = json.JSONDecoder()
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    outcome: dict = {}

    def parse() -> None:
        try:
            outcome["value"] = decoder.decode(data.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError) as error:
            outcome["error"] = error

    old_limit, old_stack = sys.getrecursionlimit(), threading.stack_size()
    sys.setrecursionlimit(max(old_limit, 2_000_000))
    threading.stack_size(512 * 1024 * 1024)
    try:
        worker = threading.Thread(target=parse, name="deep-json")
        worker.start()
        worker.join()
    finally:
        threading.stack_size(old_stack)
        sys.setrecursionlimit(old_limit)
    if "error" in outcome:
        raise CaptureError(f"{path}: not valid JSON: {outcome['error']}")
    return outcome["value"]


class _NodeError(Exception):
    pass


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_metrics(metrics: dict) -> None:
    for key, value in metrics.items():
        kind = type(value)
        if kind is int or (kind is float and math.isfinite(value)):
            continue
        if key in DEVICE_ID_KEYS or key in DEVICE_TYPE_KEYS:
            if kind is not str:
                raise _NodeError(f"metric {key!r} is {value!r}, not a device name")
        elif kind is float:
            raise _NodeError(f"metric {key!r} is {value!r}, not a finite number")
        elif not (kind is list and all(_is_number(v) for v in value)):
            raise _NodeError(f"metric {key!r} is {value!r}, not a number")


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
            raise _NodeError(f"negative time or cycles {value!r}")
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


def _index(path: Path, tree, device_info: dict, show_internal: bool) -> Profile:
    flat = _flatten([(tree, ROOT_PARENT, 0)], show_internal)
    if not flat.names:
        raise _NodeError("the tree's root is an internal Proton frame")
    return _profile_from(path, flat, device_info)


@dataclass
class _Flat:
    """Nodes in pre-order as parallel lists, before inclusive values: what `_flatten` reads from parsed JSON."""

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
    marked: int | None = None  # the id of the node object passed as `mark`, once flattened


def _flatten(roots: list[tuple[object, int, int]], show_internal: bool, mark: object = None,
             compact: bool = False) -> _Flat:
    """Validate and flatten JSON nodes given as (node, parent, depth), the first root first. A root's parent is
    ROOT_PARENT for the tree's root (its metrics are hints, not values) or GRAFTED_PARENT (a node like any other).
    `compact`: a kernel whose metrics are exactly what the arrays hold gets None there (`Profile.node_metrics`)."""
    flat = _Flat()
    names, parents, depths = flat.names, flat.parents, flat.depths
    metrics_of, time_own, cycles_own, counts = flat.metrics, flat.time_own, flat.cycles_own, flat.counts
    devices, node_bytes = flat.devices, flat.bytes
    device_label: dict[tuple, str] = {}
    isfinite = math.isfinite
    name_copies: dict[str, str] = {}  # one string per distinct name: kernel names repeat across the tree
    # Siblings are read through an iterator on the stack, left when a node has children and resumed after them.
    pending = [(iter([node]), parent, depth) for node, parent, depth in reversed(roots)]
    while pending:
        siblings, parent, depth = pending[-1]
        for node in siblings:
            if type(node) is not dict:
                raise _NodeError(f"{_where(names, parent)} is {type(node).__name__}, not an object")
            frame, metrics, kids = node.get("frame"), node.get("metrics", NO_METRICS), node.get("children", NO_KIDS)
            name = frame.get("name") if type(frame) is dict else None
            if type(name) is not str:
                raise _NodeError(f"{_where(names, parent)} has no frame name")
            if type(metrics) is not dict or type(kids) is not list:
                raise _NodeError(f"node {name!r}: 'metrics' must be an object and 'children' a list")
            if not show_internal and name.startswith(INTERNAL_PREFIX):
                flat.hidden += 1 + _count_nodes(kids)
                continue
            time_ns = cycles = None
            count, device, size, kept = 0, "", 0.0, metrics or NO_METRICS
            if metrics:
                time_ns, count = metrics.get("time (ns)"), metrics.get("count")
                device_id, device_type = metrics.get("device_id"), metrics.get("device_type")
                label_key = None
                if (
                    type(time_ns) is int
                    and type(count) is int
                    and type(device_id) is str
                    and type(device_type) is str
                    and parent != ROOT_PARENT
                    and time_ns >= 0
                ):  # a kernel as Proton >= 3.2 writes it, maybe with numeric extras (bytes, flops): no general checks
                    label_key = device_type, device_id
                    if len(metrics) != 4:
                        for key, value in metrics.items():
                            kind = type(value)
                            if not (kind is int or (kind is float and isfinite(value))) and key not in PLAIN_KERNEL_KEYS:
                                label_key = None  # a value the general checks must see
                                break
                        if "cycles" in metrics:
                            label_key = None
                        elif label_key is not None:
                            size = float(metrics.get("bytes", 0))
                    elif compact and time_ns and device_type and ":" not in device_type:
                        kept = None
                if label_key is None:
                    is_root = parent == ROOT_PARENT
                    try:
                        _check_metrics(metrics)
                        time_ns, cycles = (None, None) if is_root else _own_value(metrics)
                    except _NodeError as error:
                        raise _NodeError(f"node {name!r}: {error}") from None
                    value = None if is_root else _first(metrics, COUNT_KEYS)
                    count = int(value) if _is_number(value) else 0
                    device_id = _first(metrics, DEVICE_ID_KEYS)
                    if device_id is not None:
                        label_key = (_first(metrics, DEVICE_TYPE_KEYS), device_id)
                    value = metrics.get("bytes")
                    size = float(value) if _is_number(value) else 0.0
                if label_key is not None:
                    device = device_label.get(label_key) or device_label.setdefault(
                        label_key, f"{label_key[0] or 'GPU'}:{label_key[1]}"
                    )
            node_id = len(names)
            if node is mark:
                flat.marked = node_id
            names.append(name_copies.setdefault(name, name))
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


def _profile_from(path: Path, flat: _Flat, device_info: dict, with_children: bool = True) -> Profile:
    """The profile of flattened nodes: its unit (ns, or cycles when no node has a time) and inclusive values;
    without `with_children`, its children lists are left empty (a part sent elsewhere, where they are rebuilt)."""
    unit = "ns" if any(v is not None for v in flat.time_own) else "cycles"
    own = flat.time_own if unit == "ns" else flat.cycles_own
    children: list[list[int]] = []
    if with_children:
        _add_children(children, flat.parents)
    return _with_inclusive(
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


def _add_children(children: list[list[int]], parents: list[int], first: int = 0) -> None:
    """Extend `children` with the lists of new nodes `first`, `first` + 1, … whose parents are `parents`, and add
    each new node to its parent's list."""
    children += [[] for _ in parents]
    for node, parent in enumerate(parents, first):
        if parent >= 0:
            children[parent].append(node)


def _count_nodes(kids: list) -> int:
    total, stack = 0, list(kids)
    while stack:
        node = stack.pop()
        total += 1
        if isinstance(node, dict) and isinstance(node.get("children"), list):
            stack.extend(node["children"])
    return total


def _with_inclusive(profile: Profile) -> Profile:
    """Fill inclusive value, launches and bytes: a node with its own value keeps it, others sum their children.
    Works on a forest too (the subtrees a forked loader flattened: roots with parent GRAFTED_PARENT)."""
    has_own, parents = profile.has_own, profile.parents
    inclusive = list(profile.own)
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
    profile.inclusive, profile.launches, profile.bytes = inclusive, launches, node_bytes
    profile.has_bytes = any(node_bytes)
    profile._kernel_stats = profile._device_totals = None
    return profile


def _graft(profile: Profile, part: Profile, at: int) -> None:
    """Attach `part` (a forest loaded on its own, inclusive values computed, roots with parent GRAFTED_PARENT; its
    `children` are not read) as the last children of node `at`; its totals climb to ROOT through the nodes without
    their own value, so the result is what `_with_inclusive` gives for the whole tree."""
    chain = [at]
    while chain[-1] > 0:
        chain.append(profile.parents[chain[-1]])
    inside_kernel = any(profile.has_own[node] for node in chain)  # then none of the part's nodes is a kernel
    offset, children = profile.node_count, profile.children
    parents = [at if parent == GRAFTED_PARENT else parent + offset for parent in part.parents]
    first_root = len(children[at])
    _add_children(children, parents, offset)  # from the parents: cheaper than sending the part's and renumbering them
    roots = children[at][first_root:]
    profile.parents += parents
    for item in ("names", "depths", "metrics", "own", "has_own", "devices", "own_launches", "own_bytes",
                 "inclusive", "launches", "bytes"):
        getattr(profile, item).extend(getattr(part, item))
    profile.is_kernel += [False] * part.node_count if inside_kernel else part.is_kernel
    profile._sent_metrics = part._sent_metrics  # what its ints in `metrics` refer to
    profile.hidden_internal += part.hidden_internal
    profile.has_bytes = profile.has_bytes or part.has_bytes
    profile._kernel_stats = profile._device_totals = None  # summed over the whole when first asked for
    value = sum(profile.inclusive[root] for root in roots)
    launches = sum(profile.launches[root] for root in roots)
    size = sum(profile.bytes[root] for root in roots)
    for node in chain:  # up to the first node with its own value (which keeps it)
        if profile.has_own[node]:
            break
        profile.inclusive[node] += value
        profile.launches[node] += launches
        profile.bytes[node] += size
