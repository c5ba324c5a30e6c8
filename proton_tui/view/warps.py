"""The warps of an instrumentation trace (Proton's instrumentation backend with `-d trace`), without Textual: its
launches, each one's warps grouped SM → CTA → warp, and per scope the statistics across warps (count, min, median,
p99, max) with the straggling warps named.

Proton writes one lane per warp and nesting depth: `pid` "<kernel> Core<SM> CTA<id>", `tid` "warp <w> (line <l>)"
(line 0 holds the outermost scopes, line 1 the scopes inside them, …); durations are cycles / 1000 written as µs
under Proton's assumed 1 GHz (`args."Frequency (MHz)"` 1000), so the trace's ns are cycles again, and positions are
TRACE_UNITS (Proton's writer adds each CTA's start in GPU ns to its cycles). The file holds no clock:
`clock_khz` (the SM clock, e.g. a `.hatchet`'s device_info `clock_rate`) turns cycles into time; without it
everything stays in cycles.

Launches (`hatchet.launches.split_launches`, which the tree's launch count uses too). Successive launches of a kernel
share lanes (a CTA that ran on the same SM again writes into the same lane), and a CTA may run on another SM in the
next launch, so launches are found by time. The rule, per kernel: its events in start order are cut where one starts
after every earlier one has ended (a gap in their union); each piece joins the launch before it unless one of its
warps (CTA id, warp number: a CTA runs once per launch) already ran in that launch, in which case it starts a new
launch. A later wave of new CTAs after a gap thus stays in its launch, and a repeat of the same CTA starts the next
one. Limits: two launches that overlap in time (concurrent streams) read as one; a kernel whose warps all leave the
outermost scope and later enter another one at the same time (scoped work, unscoped work, scoped work again, with no
warp inside any scope in between) splits at that gap.

Statistics. A warp's value for a scope is its cycles in that scope in the launch (the sum when the scope recurs in
it, a loop); count is how many warps recorded the scope. Median: the middle value, or the mean of the two middle
ones (exact: it may end in .5). p99: nearest rank, the value at rank ⌈0.99 · n⌉ of the n values in ascending order
(so under 100 warps it is the maximum). Stragglers: the warps above the p99, and those at the maximum."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import NamedTuple

import numpy as np

from proton_tui.hatchet.columns import MadeWhenAsked, order_by
from proton_tui.hatchet.lanes import WarpLane, WarpLanes
from proton_tui.hatchet.trace import Trace
from proton_tui.view.formatting import format_mhz, format_value
from proton_tui.view.warp_units import TRACE_UNITS as TRACE_UNITS  # where the views have read them
from proton_tui.view.warp_units import Warp, cycles_of

P99 = 99

class Sample(NamedTuple):
    """One warp's cycles in a scope, in launch `launch` (1-based, among all launches); `event` is the scope's
    (longest) event in the trace, where the timeline jumps to."""

    warp: Warp
    launch: int
    cycles: int
    event: int


class SortedWarps(MadeWhenAsked):
    """A trace's warps in the timeline's order (SM, CTA, warp), held as columns, each `Warp` made when asked for (a
    trace whose CTAs moved between SMs has one per launch: 28,288 in one of the payload's traces)."""

    def __init__(self, sm: np.ndarray, cta: np.ndarray, warp: np.ndarray) -> None:
        self.sm, self.cta, self.warp = sm, cta, warp

    def __len__(self) -> int:
        return len(self.sm)

    def _item(self, index: int) -> Warp:
        return Warp(int(self.sm[index]), int(self.cta[index]), int(self.warp[index]))


@dataclass(frozen=True)
class Samples:
    """Warps' cycles in a scope as columns: the warp (an index into `warps`, which is sorted), the launch, the
    cycles and the scope's (longest) event."""

    warps: Sequence[Warp]
    warp: np.ndarray
    launch: np.ndarray
    cycles: np.ndarray
    event: np.ndarray

    def __len__(self) -> int:
        return len(self.cycles)

    def rows(self, at: np.ndarray | None = None) -> tuple[Sample, ...]:
        picked = range(len(self)) if at is None else at.tolist()
        warp, launch, cycles, event = (column.tolist() for column in (self.warp, self.launch, self.cycles, self.event))
        return tuple(Sample(self.warps[warp[i]], launch[i], cycles[i], event[i]) for i in picked)

    def at(self, index: int) -> Sample:
        return Sample(self.warps[int(self.warp[index])], int(self.launch[index]), int(self.cycles[index]),
                      int(self.event[index]))

    @staticmethod
    def joined(parts: list[Samples]) -> Samples:
        return Samples(parts[0].warps, *(np.concatenate([getattr(part, name) for part in parts])
                                         for name in ("warp", "launch", "cycles", "event")))


class SampleRows(Sequence):
    """Some of a scope's samples (`at`, indices into its table), each made when asked for."""

    def __init__(self, table: Samples, at: np.ndarray) -> None:
        self.table, self.positions = table, at

    def __len__(self) -> int:
        return len(self.positions)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self.table.rows(self.positions[index])
        return self.table.at(int(self.positions[index]))

    def __iter__(self):
        return iter(self.table.rows(self.positions))


@dataclass(frozen=True)
class ScopeStats:
    """A scope's cycles across warps: count, min, median, p99 (nearest rank), max; the stragglers slowest first."""

    name: str
    count: int
    min: int
    median: float
    p99: int
    max: int
    stragglers: Sequence[Sample]
    table: Samples = field(repr=False, compare=False)

    @property
    def samples(self) -> tuple[Sample, ...]:
        return self.table.rows()

    def rank_of(self, cycles: int) -> int:
        """How many warps were faster than `cycles`."""
        return int(np.count_nonzero(self.table.cycles < cycles))


@dataclass
class Launch:
    """One launch of a kernel: `number` among all the trace's launches (1-based, in time order), `ordinal` among
    its kernel's; start and end in cycles from the trace's first event; its events; its warps (SM, CTA, warp order)
    with their events per line; SM → CTA → warp numbers; the statistics per scope in order of first appearance."""

    kernel: str
    number: int
    ordinal: int
    start: int
    end: int
    events: list[int]
    scopes: dict[str, ScopeStats]
    counts: tuple[int, int, int]  # warps, SMs, CTAs
    _runs: Callable[[], Iterator[tuple[Warp, int, list[int]]]] = field(repr=False, default=lambda: iter(()))

    @cached_property
    def warps(self) -> dict[Warp, dict[int, list[int]]]:
        """Each warp's events per line, the warps in the timeline's order (made when first asked for)."""
        warps: dict[Warp, dict[int, list[int]]] = {}
        for warp, line, events in self._runs():
            lines = warps.get(warp)
            if lines is None:
                lines = warps[warp] = {}
            lines[line] = events
        return warps

    @cached_property
    def sms(self) -> dict[int, dict[int, list[int]]]:
        sms: dict[int, dict[int, list[int]]] = {}
        for warp in self.warps:
            sms.setdefault(warp.sm, {}).setdefault(warp.cta, []).append(warp.warp)
        return sms

    @property
    def ctas(self) -> int:
        return self.counts[2]


class EventLaunches:
    """Which launch each event belongs to (an index into the launches), for the events of warp lanes."""

    def __init__(self, launch: np.ndarray) -> None:
        self.launch = launch

    def get(self, event: int, default=None):
        found = int(self.launch[event]) if 0 <= event < len(self.launch) else -1
        return default if found < 0 else found

    def __contains__(self, event) -> bool:
        return self.get(event) is not None


class Launches(MadeWhenAsked):
    """A trace's launches in time order, each one (its warps' statistics per scope) worked out when first asked for
    and kept: the warp timeline shows one launch at a time, and its first is drawn before the others are worked
    out."""

    def __init__(self, count: int, make: Callable[[int], Launch]) -> None:
        self._made: list[Launch | None] = [None] * count
        self._make = make
        self._lock = threading.Lock()  # a launch is made once, whichever thread asks first

    def __len__(self) -> int:
        return len(self._made)

    def _item(self, index: int) -> Launch:
        launch = self._made[index]
        if launch is None:
            with self._lock:
                launch = self._made[index]
                if launch is None:
                    launch = self._made[index] = self._make(index)
        return launch

    @property
    def worked_out(self) -> int:
        """How many launches have been worked out so far."""
        return sum(launch is not None for launch in self._made)


@dataclass
class WarpTrace:
    """The launches of a trace's instrumented kernels (`Launches`: each worked out when first asked for) and, per
    kernel, the statistics across all its launches (`across`: worked out when first asked for, from every launch)."""

    trace: Trace
    launches: Sequence[Launch]
    kernels: list[str]  # the instrumented kernels, in the order their first events come in the columns
    clock_khz: int | None = None
    launch_of: EventLaunches | dict = field(default_factory=dict, repr=False)  # event → index into launches
    lane_of: Mapping[int, WarpLane] = field(default_factory=dict, repr=False)

    @property
    def across_worked_out(self) -> bool:
        """Whether `across` has been worked out (it works out every launch: a view that must stay quick asks first)."""
        return "across" in self.__dict__

    @cached_property
    def across(self) -> dict[str, dict[str, ScopeStats]]:
        """Per kernel, per scope (in order of first appearance over its launches): the statistics across all its
        launches' warps."""
        tables: dict[str, dict[str, list[Samples]]] = {kernel: {} for kernel in self.kernels}
        for launch in self.launches:
            for name, stats in launch.scopes.items():
                tables[launch.kernel].setdefault(name, []).append(stats.table)
        return {kernel: {name: scope_stats(name, Samples.joined(parts)) for name, parts in by_name.items()}
                for kernel, by_name in tables.items()}

    def micros(self, cycles: float) -> float | None:
        """Cycles as µs at the SM clock; None when the clock is unknown."""
        return None if not self.clock_khz else cycles / (self.clock_khz / 1000)

    def cycles_text(self, cycles: float) -> str:
        """Exact cycles ("78.5 cyc" for a median between two warps), then the time at the SM clock when known."""
        text = format_value(cycles, "cycles")
        micros = self.micros(cycles)
        return text if micros is None else f"{text} ({format_value(micros * 1000, 'ns')})"

    @property
    def clock_note(self) -> str:
        if not self.clock_khz:
            return "cycles (SM clock unknown: the trace does not record it)"
        return f"cycles; times at the reported max SM clock {format_mhz(self.clock_khz)}"

    def launch_at(self, event: int) -> Launch | None:
        at = self.launch_of.get(event)
        return None if at is None else self.launches[at]


def nearest_rank(values: list[int], percent: float) -> int:
    """The `percent` percentile by nearest rank: the value at rank ⌈percent/100 · n⌉ (1-based) of the sorted values."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(percent / 100 * len(ordered))) - 1]


def median(values: list[int]) -> float:
    """The middle value, or the mean of the two middle values (a whole number stays an int)."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    total = ordered[middle - 1] + ordered[middle]
    return total // 2 if total % 2 == 0 else total / 2


def scope_stats(name: str, table: Samples) -> ScopeStats:
    """A scope's statistics from its samples (`median` and `nearest_rank` on the sorted cycles); the stragglers, the
    warps above the p99 and those at the maximum, slowest first (then by launch, then warp)."""
    values = np.sort(table.cycles)
    count = len(values)
    p99, top = int(values[max(1, math.ceil(P99 / 100 * count)) - 1]), int(values[-1])
    middle = count // 2
    if count % 2:
        mid = int(values[middle])
    else:
        total = int(values[middle - 1]) + int(values[middle])
        mid = total // 2 if total % 2 == 0 else total / 2
    slow = np.flatnonzero((table.cycles > p99) | (table.cycles == top))
    slow = slow[np.lexsort((table.warp[slow], table.launch[slow], -table.cycles[slow]))]
    return ScopeStats(name, count, int(values[0]), mid, p99, top, SampleRows(table, slow), table)


def warp_trace(trace: Trace, clock_khz: int | None = None) -> WarpTrace | None:
    """The warp timeline's data for `trace`; None when it has no instrumentation lanes. Which events each launch
    holds is found here; each launch's statistics when it is first asked for (`Launches`)."""
    lanes, by_kernel = trace.warp_launches()
    if not lanes:
        return None
    starts = trace.columns.start
    pieces = [(kernel, launch) for kernel, launches_of in by_kernel.items() for launch in launches_of]
    pieces.sort(key=lambda piece: float(starts[piece[1][0]]))
    launch_of = np.full(len(trace.columns), -1, dtype=np.int64)
    ordinals: list[int] = []
    seen: dict[str, int] = {}
    for at, (kernel, indices) in enumerate(pieces):
        seen[kernel] = seen.get(kernel, 0) + 1
        ordinals.append(seen[kernel])
        launch_of[indices] = at
    lane_order = cache(lambda: _LaneOrder(trace, lanes))  # made with the first launch worked out

    def make(at: int) -> Launch:
        kernel, indices = pieces[at]
        return _launch(trace, lane_order(), kernel, at + 1, ordinals[at], indices)

    return WarpTrace(trace, Launches(len(pieces), make), list(by_kernel), clock_khz or None,
                     EventLaunches(launch_of), lanes)


class _LaneOrder:
    """The warp lanes in the timeline's order (SM, CTA, warp, line), each one's warp (an index into the sorted
    warps), (SM, CTA), SM and line, as arrays by lane number."""

    def __init__(self, trace: Trace, lanes: WarpLanes) -> None:
        numbers = lanes.numbers
        sm, cta, warp, line = (column[numbers] for column in (lanes.sm, lanes.cta, lanes.warp, lanes.line))
        ordered = np.lexsort((numbers, line, warp, cta, sm))  # the timeline's order, ties by lane number
        new_cta = np.r_[True, (np.diff(sm[ordered]) != 0) | (np.diff(cta[ordered]) != 0)]  # the next (SM, CTA)'s
        new_warp = new_cta | np.r_[True, np.diff(warp[ordered]) != 0]  # where the lanes of the next warp start
        first = ordered[new_warp]
        self.warps = SortedWarps(sm[first], cta[first], warp[first])
        count = len(trace.lanes)
        self.warp = np.full(count, -1, dtype=np.int64)
        self.line = np.zeros(count, dtype=np.int64)
        self.sm = np.zeros(count, dtype=np.int64)
        self.warp[numbers[ordered]] = np.cumsum(new_warp) - 1
        self.cta_on_sm = np.full(count, -1, dtype=np.int64)  # each (SM, CTA) numbered from 0: a CTA number can be huge
        self.cta_on_sm[numbers[ordered]] = np.cumsum(new_cta) - 1
        self.line[numbers], self.sm[numbers] = line, sm
        self.rank = np.zeros(count, dtype=np.int64)
        self.rank[numbers[ordered]] = np.arange(len(ordered))


def _launch(trace: Trace, order: _LaneOrder, kernel: str, number: int, ordinal: int, indices: np.ndarray) -> Launch:
    """A launch from its events (in start order): each scope's samples and statistics."""
    columns = trace.columns
    walk = indices[np.argsort(order.rank[columns.lane[indices]], kind="stable")]  # lane by lane, in the rows' order
    lanes = columns.lane[walk]
    warps = order.warp[lanes]
    names = columns.name[walk].astype(np.int64)
    # each scope's samples: a warp's cycles in it (summed where it recurs), its longest event
    keys = names * len(order.warps) + warps
    by = np.argsort(keys, kind="stable")
    keys_by = keys[by]
    firsts = np.flatnonzero(np.r_[True, keys_by[1:] != keys_by[:-1]])
    durations = columns.duration[walk][by]
    cycles = np.add.reduceat(np.rint(durations).astype(np.int64), firsts)
    longest_value = np.maximum.reduceat(durations, firsts)
    group = np.cumsum(np.r_[True, keys_by[1:] != keys_by[:-1]]) - 1
    at_max = np.flatnonzero(durations == longest_value[group])
    _, first_max = np.unique(group[at_max], return_index=True)
    longest = walk[by][at_max[first_max]]
    group_name, group_warp = keys_by[firsts] // len(order.warps), keys_by[firsts] % len(order.warps)
    # the scopes in order of their first start (then line, then where they come in the walk)
    starts = columns.start[walk]
    earliest = order_by(names, starts)  # equal starts in the walk's order
    earliest = earliest[np.r_[True, names[earliest][1:] != names[earliest][:-1]]]
    appears = {int(names[at]): (int(order.line[lanes[at]]), float(starts[at])) for at in earliest}
    first_in_walk = np.unique(names, return_index=True)[1]
    by_walk = [int(names[at]) for at in np.sort(first_in_walk)]
    samples: dict[str, Samples] = {}
    bounds = np.searchsorted(group_name, np.array(by_walk, dtype=np.int64))
    ends = np.searchsorted(group_name, np.array(by_walk, dtype=np.int64), side="right")
    spans = dict(zip(by_walk, zip(bounds.tolist(), ends.tolist())))
    for name in sorted(by_walk, key=lambda found: appears[found]):
        low, high = spans[name]
        samples[columns.names[name]] = Samples(order.warps, group_warp[low:high], np.full(high - low, number),
                                               cycles[low:high], longest[low:high])
    scopes = {name: scope_stats(name, table) for name, table in samples.items()}

    def runs() -> Iterator[tuple[Warp, int, list[int]]]:
        """(warp, line, events) per lane, in the walk's order."""
        cuts = (np.flatnonzero(lanes[1:] != lanes[:-1]) + 1).tolist()
        events, lane_warps, lines = walk.tolist(), warps.tolist(), order.line[lanes].tolist()
        for low, high in zip([0, *cuts], [*cuts, len(events)]):
            yield order.warps[lane_warps[low]], lines[low], events[low:high]
    counts = (_distinct(warps), _distinct(order.sm[lanes]), _distinct(order.cta_on_sm[lanes]))
    return Launch(kernel, number, ordinal, cycles_of(float(columns.start[indices[0]])),
                  cycles_of(float(columns.end[indices].max())), indices.tolist(), scopes, counts, runs)


def _distinct(values: np.ndarray) -> int:
    """How many different values: `len(np.unique(values))`, which imports numpy.ma on its first call (0.02 s on the
    H200 box, in front of the first launch drawn)."""
    ordered = np.sort(values)
    return int(np.count_nonzero(ordered[1:] != ordered[:-1])) + 1 if len(ordered) else 0
