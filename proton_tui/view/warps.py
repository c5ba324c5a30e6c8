"""The warps of an instrumentation trace (Proton's instrumentation backend with `-d trace`), without Textual: its
launches, each one's warps grouped SM → CTA → warp, and per scope the statistics across warps (count, min, median,
p99, max) with the straggling warps named.

Proton writes one lane per warp and nesting depth: `pid` "<kernel> Core<SM> CTA<id>", `tid` "warp <w> (line <l>)"
(line 0 holds the outermost scopes, line 1 the scopes inside them, …); durations are cycles / 1000 written as µs
under Proton's assumed 1 GHz (`args."Frequency (MHz)"` 1000), so the trace's ns are cycles again, and positions are
TRACE_UNITS (Proton's writer adds each CTA's start in GPU ns to its cycles). The file holds no clock:
`clock_khz` (the SM clock, e.g. a `.hatchet`'s device_info `clock_rate`) turns cycles into time; without it
everything stays in cycles.

Launches (`hatchet.trace.split_launches`, which the tree's launch count uses too). Successive launches of a kernel
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
from dataclasses import dataclass, field
from typing import NamedTuple

from proton_tui.hatchet.trace import Trace, WarpLane
from proton_tui.view.formatting import format_mhz, format_value

P99 = 99

# Where an instrumentation trace puts events: Proton's writer adds each CTA's start on the GPU's clock in ns to its
# cycle count, so positions are cycles within a CTA and ns between CTAs; durations are cycles.
TRACE_UNITS = "trace units (cycles within a CTA, ns between CTAs)"


class Warp(NamedTuple):
    """One warp in one launch (ordered by SM, CTA, warp: the timeline's order; a tuple, as fast to hash and sort)."""

    sm: int
    cta: int
    warp: int

    @property
    def name(self) -> str:
        return f"CTA {self.cta} warp {self.warp} (SM {self.sm})"


class Sample(NamedTuple):
    """One warp's cycles in a scope, in launch `launch` (1-based, among all launches); `event` is the scope's
    (longest) event in the trace, where the timeline jumps to."""

    warp: Warp
    launch: int
    cycles: int
    event: int


@dataclass(frozen=True)
class ScopeStats:
    """A scope's cycles across warps: count, min, median, p99 (nearest rank), max; the stragglers slowest first."""

    name: str
    count: int
    min: int
    median: float
    p99: int
    max: int
    stragglers: tuple[Sample, ...]
    samples: tuple[Sample, ...] = field(repr=False, default=())

    def rank_of(self, cycles: int) -> int:
        """How many warps were faster than `cycles`."""
        return sum(1 for sample in self.samples if sample.cycles < cycles)


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
    warps: dict[Warp, dict[int, list[int]]]
    sms: dict[int, dict[int, list[int]]]
    scopes: dict[str, ScopeStats]

    @property
    def ctas(self) -> int:
        return sum(len(ctas) for ctas in self.sms.values())


@dataclass
class WarpTrace:
    """The launches of a trace's instrumented kernels and, per kernel, the statistics across all its launches."""

    trace: Trace
    launches: list[Launch]
    across: dict[str, dict[str, ScopeStats]]
    clock_khz: int | None = None
    launch_of: dict[int, int] = field(default_factory=dict, repr=False)  # event → index into launches
    lane_of: dict[int, WarpLane] = field(default_factory=dict, repr=False)

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
        return f"cycles; times at the reported max SM clock {format_mhz(self.clock_khz)} (rounded)"

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


def cycles_of(duration: float) -> int:
    # Proton writes cycles / 1000 with three decimals; × 1000 in floating point can land a hair off the whole
    # number (1.011 × 1000 = 1010.9999999999999): the nearest integer is the exact cycle count.
    return round(duration)


def scope_stats(name: str, samples: list[Sample]) -> ScopeStats:
    values = sorted(sample.cycles for sample in samples)
    p99, top = nearest_rank(values, P99), values[-1]
    slow = sorted((s for s in samples if s.cycles > p99 or s.cycles == top),
                  key=lambda s: (-s.cycles, s.launch, s.warp))
    return ScopeStats(name, len(values), values[0], median(values), p99, top, tuple(slow), tuple(samples))


def warp_trace(trace: Trace, clock_khz: int | None = None) -> WarpTrace | None:
    """The warp timeline's data for `trace`; None when it has no instrumentation lanes."""
    lanes, by_kernel = trace.warp_launches()
    if not lanes:
        return None
    pieces: list[tuple[str, list[int]]] = []
    for kernel, launches_of in by_kernel.items():
        pieces += [(kernel, sorted(launch, key=lambda i: trace.events[i].start)) for launch in launches_of]
    pieces.sort(key=lambda piece: trace.events[piece[1][0]].start)
    launches: list[Launch] = []
    ordinals: dict[str, int] = {}
    launch_of: dict[int, int] = {}
    for kernel, indices in pieces:
        ordinals[kernel] = ordinals.get(kernel, 0) + 1
        launches.append(_launch(trace, lanes, kernel, len(launches) + 1, ordinals[kernel], indices))
        launch_of.update(dict.fromkeys(indices, len(launches) - 1))
    across: dict[str, dict[str, ScopeStats]] = {}
    for kernel in by_kernel:
        samples: dict[str, list[Sample]] = {}
        for launch in launches:
            if launch.kernel == kernel:
                for name, scope in launch.scopes.items():
                    samples.setdefault(name, []).extend(scope.samples)
        across[kernel] = {name: scope_stats(name, found) for name, found in samples.items()}
    return WarpTrace(trace, launches, across, clock_khz or None, launch_of, lanes)


def _launch(trace: Trace, lanes: dict[int, WarpLane], kernel: str, number: int, ordinal: int,
            indices: list[int]) -> Launch:
    """A launch from its events (in start order)."""
    events = trace.events
    by_lane: dict[int, list[int]] = {}  # each lane's events, in start order
    for index in indices:
        lane_id = events[index].lane
        found = by_lane.get(lane_id)
        if found is None:
            by_lane[lane_id] = [index]
        else:
            found.append(index)
    # lanes in the timeline's order (SM, CTA, warp, line): every dict below is then built in that order
    ordered = sorted(by_lane, key=lambda lane_id: (lanes[lane_id].sm, lanes[lane_id].cta, lanes[lane_id].warp,
                                                     lanes[lane_id].line))
    warps: dict[Warp, dict[int, list[int]]] = {}
    per_scope: dict[str, dict[Warp, list[int]]] = {}
    first_seen: dict[str, tuple[float, int]] = {}  # a scope's first start, and its line there
    for lane_id in ordered:
        lane, found = lanes[lane_id], by_lane[lane_id]
        warp = Warp(lane.sm, lane.cta, lane.warp)
        lines = warps.get(warp)
        if lines is None:
            lines = warps[warp] = {}
        lines[lane.line] = found
        for index in found:
            event = events[index]
            name = event.name
            scope = per_scope.get(name)
            if scope is None:
                scope = per_scope[name] = {}
            same = scope.get(warp)
            if same is None:
                scope[warp] = [index]
            else:
                same.append(index)
            seen = first_seen.get(name)
            if seen is None or event.start < seen[0]:
                first_seen[name] = (event.start, lane.line)
    sms: dict[int, dict[int, list[int]]] = {}
    for warp in warps:
        sms.setdefault(warp.sm, {}).setdefault(warp.cta, []).append(warp.warp)
    scopes = {}
    for name in sorted(per_scope, key=lambda n: (first_seen[n][1], first_seen[n][0])):
        samples = []
        for warp, found in per_scope[name].items():
            if len(found) == 1:
                samples.append(Sample(warp, number, cycles_of(events[found[0]].duration), found[0]))
            else:  # the scope recurs in this warp: its cycles summed, its longest occurrence the one to show
                longest = max(found, key=lambda i: events[i].duration)
                samples.append(Sample(warp, number, sum(cycles_of(events[i].duration) for i in found), longest))
        scopes[name] = scope_stats(name, samples)
    start = cycles_of(events[indices[0]].start)
    end = cycles_of(max(events[i].end for i in indices))
    return Launch(kernel, number, ordinal, start, end, indices, warps, sms, scopes)
