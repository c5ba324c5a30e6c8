"""The profile model: a capture's nodes as flat arrays indexed by node id (pre-order, node 0 is ROOT), with the
inclusive values, kernel summary and derived metrics every view shows.

A million-node capture costs a few Python lists rather than a million objects, and the reverse of the node order
visits every child before its parent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import compress
from pathlib import Path
from typing import TYPE_CHECKING

from proton_tui.hatchet.devices import device_label
from proton_tui.hatchet.facts import CycleFacts
from proton_tui.hatchet.hardware import DeviceFacts
from proton_tui.hatchet.tree import records, with_inclusive

if TYPE_CHECKING:
    from proton_tui.hatchet.trace import Trace

ROOT_PARENT = -1  # the parent of the tree's root
SCOPE_SEPARATOR = "/"  # between the names of a scope's path (step/forward)
NO_UNIT = "none"  # the unit of a capture in which no node has a time or cycles (only scopes and their metrics)


@dataclass(slots=True)  # a rank set of 1,024 captures holds 51,200: 2.4 MiB less than a __dict__ each (tracemalloc)
class KernelStats:
    """One kernel name summed across the whole tree."""

    name: str
    value: float
    launches: int
    bytes: float
    devices: tuple[str, ...]
    unit: str = "ns"
    bytes_value: float = 0.0  # the time of the instances that declared bytes

    @property
    def avg(self) -> float | None:
        """Time (or cycles) per launch; None without launches (cycle captures record none)."""
        return exact_quotient(self.value, self.launches) if self.launches else None

    @property
    def gbps(self) -> float | None:
        """Bytes over the time of the instances that declared them (GB/s); None when none did (or for cycle
        captures)."""
        return self.bytes / self.bytes_value if self.bytes and self.bytes_value and self.unit == "ns" else None


def exact_quotient(value: float, count: int) -> float:
    """`value` / `count`, a whole integer where an integer divides exactly (so no digit of a large one is lost)."""
    if isinstance(value, int) and value % count == 0:
        return value // count
    return value / count


def ns_to_ms(value_ns: float) -> float:
    """ns as ms: the float nearest the exact quotient (an integer divided by an integer is correctly rounded, so
    39661509 ns is 39.661509, never 39.661508999999995)."""
    return value_ns / 1_000_000


def _largest_first(kernel: KernelStats) -> tuple[float, str]:
    """The kernel summary's order: largest total first, then by name."""
    return -kernel.value, kernel.name


@dataclass
class Profile(DeviceFacts):
    """A loaded capture: per-node arrays indexed by node id, plus derived inclusive values."""

    path: Path
    names: list[str]
    parents: list[int]
    children: list[list[int]]
    depths: list[int]
    # None for a plain kernel, whose metrics are exactly what the arrays hold (rebuilt by `node_metrics`)
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
    _empty: list[bool] | None = field(default=None, repr=False)
    has_bytes: bool = False  # some kernel declared bytes: the GB/s columns apply
    device_note: str | None = None  # why the devices are not called as the capture file calls them
    trace: Trace | None = None  # a Chrome trace's lanes and events, when the capture is one
    derived: list[bool] = field(default_factory=list)  # nodes proton-tui added (empty: none did)
    cycle_facts: CycleFacts | None = None  # what an instrumentation capture's run says that the file does not
    scope: str | None = None  # the subtree this profile is restricted to ("step/forward"); None: the whole capture

    @property
    def node_count(self) -> int:
        return len(self.names)

    @property
    def total(self) -> float:
        """Total GPU time in ns (or cycles): ROOT's inclusive value."""
        return self.inclusive[0]

    @property
    def is_root_only(self) -> bool:
        """Nothing under ROOT: Proton recorded nothing at all."""
        return self.node_count == 1

    @property
    def is_empty(self) -> bool:
        """True when Proton recorded no kernels (a ROOT-only tree, or no node with a time)."""
        return not any(self.is_kernel)

    @property
    def kernel_launches(self) -> int:
        return sum(compress(self.launches, self.is_kernel))

    @property
    def recorded_launches(self) -> int | None:
        """The kernel launches the capture records; None where it records none (an instrumentation tree)."""
        return None if self.unit == "cycles" else self.kernel_launches

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
                entry = by_name[name] = [0, 0, 0.0, set(), 0]  # whole numbers stay exact integers
            entry[0] += value
            entry[1] += launches
            if size:
                entry[2] += size
                entry[4] += value
            entry[3].add(device)
            by_device[device] = by_device.get(device, 0) + value
        stats = [KernelStats(name, v, n, b, tuple(sorted(d - {""})), self.unit, bv)
                 for name, (v, n, b, d, bv) in by_name.items()]
        stats.sort(key=_largest_first)
        self._kernel_stats, self._device_totals = stats, dict(sorted(by_device.items()))

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
            device_label(device_type, device_id)
            for device_type, by_id in self.device_info.items()
            if isinstance(by_id, dict)
            for device_id in by_id
        }

    def percent(self, value: float) -> float:
        """Share of the whole capture's total, also in a filtered subset."""
        total = self.total if self.reference_total is None else self.reference_total
        return 100 * value / total if total else 0.0  # int / int: exact to the float, whatever their size

    def filtered(self, include: Callable[[str], bool] | None = None,
                 exclude: Callable[[str], bool] | None = None) -> Profile:
        """The capture without the nodes whose name `exclude` accepts (and their subtrees), keeping only the nodes
        whose name `include` accepts with their ancestors and descendants. Totals are recomputed; percentages stay
        shares of the whole capture. Each distinct name is tested once."""
        names, count = self.names, self.node_count
        keep = [True] * count
        if exclude is not None:
            dropped = {name: exclude(name) for name in set(names)}
            keep = [node == 0 or not dropped[names[node]] for node in range(count)]
        if include is not None:
            wanted = {name: include(name) for name in set(names)}
            around = self.around([node > 0 and wanted[names[node]] for node in range(count)])
            keep = [k and a for k, a in zip(keep, around)]
        return self if all(keep) else self.subset(keep)

    def around(self, hit: list[bool]) -> list[bool]:
        """The nodes `hit` marks with their ancestors and descendants: what an include filter keeps."""
        parents, count = self.parents, self.node_count
        below_hit = list(hit)
        for node in range(1, count):
            below_hit[node] = below_hit[node] or below_hit[parents[node]]
        above_hit = list(hit)
        for node in range(count - 1, 0, -1):
            if above_hit[node]:
                above_hit[parents[node]] = True
        return [b or a for b, a in zip(below_hit, above_hit)]

    def subtree(self, node: int) -> Profile:
        """The capture restricted to one node's subtree (kept under its ancestors, which now hold only it): the
        kernel summary, totals and launches are those of the subtree; percentages stay shares of the whole capture.
        `scope` names the node by its path of names from the top level, joined by '/'. A region inside a kernel
        (instrumentation) is its own subtree: the kernel above it keeps no value of its own, the region is timed."""
        restricted = self.subset(self.around([n == node for n in range(self.node_count)]))
        restricted.scope = self.path_of(node, sep=SCOPE_SEPARATOR)
        ancestors = range(1, len(self.lineage(node)))  # pre-order: the ancestors come first, ROOT's child down
        if any(restricted.has_own[ancestor] for ancestor in ancestors):
            for ancestor in ancestors:
                restricted.has_own[ancestor], restricted.own[ancestor], restricted.metrics[ancestor] = False, 0, {}
                restricted.own_launches[ancestor], restricted.own_bytes[ancestor] = 0, 0.0
            with_inclusive(restricted)
        return restricted

    def empty_nodes(self) -> list[bool]:
        """Which nodes are empty: neither they nor any node below them record anything (a value of their own, or
        any metric but a zero): a python frame that launched nothing, Proton's `__enter__` of a scope. ROOT never
        is."""
        if self._empty is None:
            children, has_own, metrics = self.children, self.has_own, self.metrics
            if not any(not kids and not own and not records(metrics[node])
                       for node, (kids, own) in enumerate(zip(children, has_own))):  # no empty leaf: none is empty
                self._empty = [False] * self.node_count
            else:
                holds = [own or records(node_metrics) for own, node_metrics in zip(has_own, metrics)]
                holds[0] = True
                for node, parent in zip(range(self.node_count - 1, 0, -1), reversed(self.parents)):
                    if holds[node]:
                        holds[parent] = True
                self._empty = [not held for held in holds]
        return self._empty

    def empty_count(self) -> int:
        """How many nodes are empty (see `empty_nodes`)."""
        return self.empty_nodes().count(True)

    def visible(self, min_percent: float = 0.0, max_depth: int | None = None, show_empty: bool = True) -> list[bool]:
        """Which nodes a display shows: at most max_depth deep, at least min_percent of the total, and, without
        `show_empty`, not empty. Hiding a row changes no number: a scope keeps the time of the kernels it hides."""
        empty = None if show_empty else self.empty_nodes()
        return [
            node == 0 or ((max_depth is None or depth <= max_depth) and self.percent(value) >= min_percent
                          and (empty is None or not empty[node]))
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
        return with_inclusive(
            Profile(
                path=self.path,
                names=[self.names[i] for i in picked],
                parents=[new_id[self.parents[i]] if i else -1 for i in picked],
                children=children,
                depths=[self.depths[i] for i in picked],
                metrics=[self.metrics[i] for i in picked],
                own=[self.own[i] for i in picked],
                has_own=[self.has_own[i] for i in picked],
                is_kernel=[],
                devices=[self.devices[i] for i in picked],
                unit=self.unit,
                own_launches=[self.own_launches[i] for i in picked],
                own_bytes=[self.own_bytes[i] for i in picked],
                device_info=self.device_info,
                hidden_internal=self.hidden_internal,
                device_note=self.device_note,
                trace=self.trace,
                derived=[self.derived[i] for i in picked] if self.derived else [],
                cycle_facts=self.cycle_facts,
                scope=self.scope,
                reference_total=self.total if self.reference_total is None else self.reference_total,
            )
        )

    def is_derived(self, node: int) -> bool:
        """Whether proton-tui added this node (a scope's unattributed part), rather than the capture."""
        return bool(self.derived) and self.derived[node]

    def node_metrics(self, node: int) -> dict:
        """The node's metrics as the capture has them (a plain kernel's are rebuilt from the arrays)."""
        metrics = self.metrics[node]
        if metrics is None:
            device_type, _, device_id = self.devices[node].partition(":")
            metrics = {"count": self.own_launches[node], "device_id": device_id, "device_type": device_type,
                       "time (ns)": self.own[node]}
        return metrics

    def avg(self, node: int) -> float:
        launches = self.launches[node]
        return exact_quotient(self.inclusive[node], launches) if launches else 0.0

    def ancestors(self, node: int) -> list[int]:
        """The node's parent, its parent's parent, … up to ROOT (nothing for ROOT): the one walk up the tree."""
        chain, parents = [], self.parents
        node = parents[node]
        while node >= 0:
            chain.append(node)
            node = parents[node]
        return chain

    def lineage(self, node: int) -> list[int]:
        """The nodes from the top level down to this one (ROOT left out)."""
        return [*reversed(self.ancestors(node)[:-1]), node] if node > 0 else []

    def path_of(self, node: int, name: Callable[[str], str] = str, sep: str = " / ") -> str:
        """The node's names (as `name` shows them) from the top level down, joined by `sep`."""
        return sep.join(name(self.names[step]) for step in self.lineage(node)) or "ROOT"

    def metrics_summary(self) -> dict:
        """The keys downstream tools already read from a Proton run."""
        kernels = self.kernel_stats()
        timed = self.unit == "ns"
        return {
            "proton_kernel_count": self.recorded_launches,
            "proton_gpu_time_ms": ns_to_ms(self.total) if timed else None,
            "proton_top_kernel_ms": ns_to_ms(kernels[0].value) if kernels and timed else None,
            "proton_top_kernels": [k.name for k in kernels[:5]],
            "proton_artifact_dir": str(self.path.resolve().parent),
        }
