"""A rank set of traces on one timeline: the ranks' Chrome traces merged as for Perfetto (`merged_trace.py`: clocks
aligned by the traces' clock base, else by each rank's first event), read back as one trace; its rows each rank's
heading, then that rank's lanes. A kernel's launches are matched across the ranks by their order on each rank (the
k-th launch of a kernel on one rank with the k-th on every other), which says how much later one rank's launch ended
than the earliest rank's."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from proton_tui.hatchet.chrome_trace import read_trace
from proton_tui.hatchet.trace import Trace
from proton_tui.output.merged_trace import BY_CLOCK_BASE, PID_STRIDE
from proton_tui.output.ranks import RankSet, merged_rank_trace
from proton_tui.view.formatting import counted, format_value


@dataclass(frozen=True)
class TimelineRow:
    """A row of the timeline: a rank's heading (`lane` None) or one of its lanes."""

    rank: int  # its position in the rank set
    lane: int | None
    label: str


@dataclass
class RankTimeline:
    """The merged trace, how its clocks were aligned, its rows, and each lane's rank (position in the set)."""

    rank_set: RankSet
    trace: Trace
    alignment: str
    rows: list[TimelineRow]
    rank_of_lane: list[int]
    _launches: dict[str, dict[int, list[int]]] = field(default_factory=dict, repr=False)
    _number: dict[int, int] = field(default_factory=dict, repr=False)  # a kernel event → its launch on its rank
    _order: dict[str, tuple[list[int], dict[int, int]]] = field(default_factory=dict, repr=False)

    @property
    def aligned_by(self) -> str:
        """How the clocks were aligned, in two words (a narrow header's)."""
        return "clock base" if self.alignment == BY_CLOCK_BASE else "first events"

    @property
    def row_of_lane(self) -> dict[int, int]:
        return {row.lane: number for number, row in enumerate(self.rows) if row.lane is not None}

    def launches(self, name: str) -> dict[int, list[int]]:
        """A kernel's launches on each rank (position in the set → event indices in time order)."""
        found = self._launches.get(name)
        if found is None:
            found = {}
            for index in self.trace.launches_of(name):  # in time order
                launches = found.setdefault(self.rank_of_lane[self.trace.events[index].lane], [])
                self._number[index] = len(launches)
                launches.append(index)
            self._launches[name] = found
        return found

    def launch_number(self, index: int) -> int:
        """Which launch of its kernel on its rank the event is (from 0)."""
        self.launches(self.trace.events[index].name)
        return self._number[index]

    def step(self, index: int, step: int) -> int | None:
        """The next (1) or previous (-1) launch of the event's kernel, every rank's k-th launch before any rank's
        (k+1)-th, the ranks in order: one launch on every rank in turn."""
        name = self.trace.events[index].name
        if name not in self._order:
            by_rank = self.launches(name)
            order = [launches[k] for k in range(max(map(len, by_rank.values()), default=0))
                     for _, launches in sorted(by_rank.items()) if k < len(launches)]
            self._order[name] = order, {event: at for at, event in enumerate(order)}
        order, where = self._order[name]
        there = where[index] + step
        return order[there] if 0 <= there < len(order) else None

    def lag(self, index: int) -> tuple[float, int, int] | None:
        """How much later the event (a kernel) ended than the same launch on the rank where it ended first: the
        time, that rank (position in the set) and how many ranks ran that launch; None for another event."""
        event = self.trace.events[index]
        if event.category != "kernel":
            return None
        number = self.launch_number(index)
        ends = {rank: self.trace.events[launches[number]].end
                for rank, launches in self.launches(event.name).items() if number < len(launches)}
        first = min(ends, key=lambda rank: (ends[rank], rank))
        return event.end - ends[first], first, len(ends)

    def details(self, index: int) -> list[tuple[str, str]]:
        """The event's rank, and for a kernel which launch on that rank it is and how much later it ended than the
        earliest rank's; the rows put before the event's own details."""
        event = self.trace.events[index]
        rank = self.rank_set.ranks[self.rank_of_lane[event.lane]]
        rows = [("rank", rank.heading)]
        found = self.lag(index)
        if found is None:
            return rows
        lag, first, ran = found
        number, on_rank = self.launch_number(index), len(self.launches(event.name)[self.rank_of_lane[event.lane]])
        rows.append(("launch", f"{number + 1} of {on_rank} on this rank; n/N: this launch on every rank"))
        earliest = self.rank_set.ranks[first].label
        if lag == 0:
            rows.append(("vs ranks", f"ended first of the {counted(ran, 'rank')} that ran this launch"))
        else:
            rows.append(("vs ranks", f"ended {format_value(lag, 'ns')} later than {earliest}, the earliest of "
                                     f"{counted(ran, 'rank')}"))
        return rows


def rank_timeline(rank_set: RankSet) -> RankTimeline:
    """The rank set's traces on one timeline. Raises RankSetError for a set of trees or a trace that cannot be read
    again."""
    document, alignment = merged_rank_trace(rank_set)
    trace = read_trace(document)
    position = {rank.rank: at for at, rank in enumerate(rank_set.ranks)}
    rank_of_lane = [position[int(lane.pid) // PID_STRIDE] for lane in trace.lanes]
    rows: list[TimelineRow] = []
    for at, rank in enumerate(rank_set.ranks):
        rows.append(TimelineRow(at, None, rank.heading))
        lanes = [lane for lane in range(len(trace.lanes)) if rank_of_lane[lane] == at]
        # under its rank, a lane by its own name, unless another of the rank's processes has a lane of that name
        own = [trace.lanes[lane].own_name or trace.lanes[lane].name for lane in lanes]
        alike = Counter(own)
        rows += [TimelineRow(at, lane, name if alike[name] == 1 else trace.lanes[lane].name)
                 for lane, name in zip(lanes, own)]
    return RankTimeline(rank_set, trace, alignment, rows, rank_of_lane)
