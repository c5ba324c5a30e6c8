"""A trace's lanes: what each row of the timeline is (a GPU stream, a CPU thread, an instrumented kernel's warp),
what a lane's events add up to, where an instrumentation lane's events ran, and the launch metadata a kernel event
carries."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from proton_tui.hatchet.columns import MadeWhenAsked, interned_ids

GPU, CPU, WARP, OTHER = "gpu", "cpu", "warp", "other"
KINDS = (GPU, CPU, WARP, OTHER)  # a lane's kind in `LaneTable.kind`: an index into these
# instrumentation traces: pid "<kernel> Core<SM> CTA<id>", tid "warp <w> (line <l>)"


class Lane(NamedTuple):
    """One row of the timeline: a GPU stream, a CPU thread (≥ 3.8 names them), an instrumented kernel's warp, or a
    stream id alone (3.6); `LaneTable` makes one when it is asked for."""

    pid: object
    tid: object
    name: str
    kind: str
    order: float
    own_name: str | None = None  # the name without its process, where `name` says the process to tell lanes apart


class LaneTable(MadeWhenAsked):
    """A trace's lanes by number, held as columns, each `Lane` made when asked for: an instrumentation trace has a
    lane per warp and line of every CTA on every SM it ran on (56,576 in one of the payload's traces). `pids` and
    `tids` are the distinct pids and tids, `pid` and `tid` each lane's index into them; `names`, each lane's name;
    `kind`, an index into KINDS; `order`, where it sorts; `own_names`, lane → its name without its process, where
    its name says the process."""

    __hash__ = None  # type: ignore[assignment]

    def __init__(self, pids: list, tids: list, pid: np.ndarray, tid: np.ndarray, names: list[str], kind: np.ndarray,
                 order: np.ndarray, own_names: dict[int, str] | None = None) -> None:
        self.pids, self.tids, self.pid, self.tid, self.names = pids, tids, pid, tid, names
        self.kind, self.order, self.own_names = kind, order, own_names or {}

    @classmethod
    def of(cls, lanes: Iterable[Lane]) -> LaneTable:
        """The table of these lanes, in their order."""
        lanes = list(lanes)
        pids: list = []
        tids: list = []
        pid, tid = (interned_ids([lane[side] for lane in lanes], {}, distinct).astype(np.int64)
                    for side, distinct in ((0, pids), (1, tids)))
        return cls(pids, tids, pid, tid, [lane.name for lane in lanes],
                   np.array([KINDS.index(lane.kind) for lane in lanes], dtype=np.int8),
                   np.array([lane.order for lane in lanes], dtype=np.float64),
                   {at: lane.own_name for at, lane in enumerate(lanes) if lane.own_name is not None})

    def __len__(self) -> int:
        return len(self.names)

    def _item(self, index: int) -> Lane:
        return Lane(self.pids[self.pid[index]], self.tids[self.tid[index]], self.names[index],
                    KINDS[self.kind[index]], float(self.order[index]), self.own_names.get(index))

    def __iter__(self) -> Iterator[Lane]:
        pids, tids, own = self.pids, self.tids, self.own_names
        for at, (pid, tid, name, kind, order) in enumerate(zip(self.pid.tolist(), self.tid.tolist(), self.names,
                                                               self.kind.tolist(), self.order.tolist())):
            yield Lane(pids[pid], tids[tid], name, KINDS[kind], order, own.get(at))

    def __eq__(self, other) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and list(self) == list(other)

    def __repr__(self) -> str:
        return f"LaneTable({list(self)!r})"

    @property
    def is_warp(self) -> np.ndarray:
        """Which lanes are an instrumented kernel's warps."""
        return self.kind == KINDS.index(WARP)

    def taken(self, order: np.ndarray) -> LaneTable:
        """The lanes at these numbers, in this order."""
        numbers, own = order.tolist(), self.own_names
        return LaneTable(self.pids, self.tids, self.pid[order], self.tid[order], [self.names[old] for old in numbers],
                         self.kind[order], self.order[order],
                         {new: own[old] for new, old in enumerate(numbers) if old in own} if own else {})


class LaneSummary:
    """What a lane's events add up to: its kernels' count, busy time (their union, overlaps counted once), idle gaps
    between its first kernel's start and its last one's end (made when asked for), that span, and how many events
    of other categories."""

    __slots__ = ("kernels", "busy", "active", "others", "_merged", "_low", "_high")

    def __init__(self, kernels: int, busy: float, active: float, others: dict[str, int],
                 merged: tuple[list[float], list[float]], low: int, high: int) -> None:
        self.kernels, self.busy, self.active, self.others = kernels, busy, active, others
        self._merged, self._low, self._high = merged, low, high  # the merged intervals' starts and ends, its run

    @property
    def gaps(self) -> list[tuple[float, float]]:
        starts, ends = self._merged
        return list(zip(ends[self._low:self._high - 1], starts[self._low + 1:self._high]))

    @property
    def idle(self) -> float:
        return sum(end - start for start, end in self.gaps)


def launch_metrics(found: dict | None) -> dict[str, float]:
    """A kernel event's launch metadata (`args.metrics`, Triton >= 3.9 writes the numbers as text): `bytes` and the
    `flops*` widths that parse as finite numbers."""
    if not isinstance(found, dict):
        return {}
    numbers = {}
    for key, value in found.items():
        if key == "bytes" or str(key).startswith("flops"):
            try:
                number = float(value)
            except (TypeError, ValueError):
                continue
            if number == number and number not in (float("inf"), float("-inf")) and number >= 0:
                numbers[str(key)] = number
    return numbers


INT64_HIGH = (1 << 63) - 1  # an SM, CTA, warp or line number past it names no warp (the warps are held as int64)
WARP_PID = re.compile(r"(?P<kernel>.*) Core(?P<sm>\d+) CTA(?P<cta>\d+)")
WARP_TID = re.compile(r"warp (?P<warp>\d+)(?: \(line (?P<line>\d+)\))?")


class WarpLane(NamedTuple):
    """Where a lane's events ran: kernel, SM, CTA, warp, and the nesting depth its scopes sit at (Proton's line)."""

    kernel: str
    sm: int
    cta: int
    warp: int
    line: int


def warp_lane(lane: Lane) -> WarpLane | None:
    """The SM, CTA, warp and line of an instrumentation lane; None for any other lane."""
    return warp_lanes(LaneTable.of([lane])).get(0)


class WarpLanes(Mapping):
    """An instrumentation trace's warp lanes (lane number → its `WarpLane`, made when asked for), held as columns by
    lane number: `kernel` (an index into `kernels`, which come in the order of their first lanes; -1: not a warp's
    lane), `sm`, `cta`, `warp`, `line` (0 where not a warp's); `numbers`, the warp lanes' numbers in ascending order."""

    def __init__(self, kernels: list[str], kernel: np.ndarray, sm: np.ndarray, cta: np.ndarray, warp: np.ndarray,
                 line: np.ndarray) -> None:
        self.kernels, self.kernel, self.sm, self.cta, self.warp, self.line = kernels, kernel, sm, cta, warp, line
        self.numbers = np.flatnonzero(kernel >= 0)

    def __getitem__(self, number) -> WarpLane:
        if not isinstance(number, (int, np.integer)) or not 0 <= number < len(self.kernel) or self.kernel[number] < 0:
            raise KeyError(number)
        return WarpLane(self.kernels[self.kernel[number]], int(self.sm[number]), int(self.cta[number]),
                        int(self.warp[number]), int(self.line[number]))

    def __len__(self) -> int:
        return len(self.numbers)

    def __iter__(self) -> Iterator[int]:
        return iter(self.numbers.tolist())


def warp_lanes(lanes: LaneTable) -> WarpLanes:
    """The instrumentation lanes among `lanes`: each distinct pid and tid read once (a CTA's pid names a lane per warp
    and line of it, a tid a lane per CTA), the lanes' columns taken from them with array operations."""
    count = len(lanes)
    nothing = np.zeros(count, dtype=np.int64)
    is_warp = lanes.is_warp
    if not is_warp.any():
        return WarpLanes([], nothing - 1, nothing, nothing, nothing, nothing)
    pids, tids, pid_of, tid_of = lanes.pids, lanes.tids, lanes.pid, lanes.tid
    sites = [_site_numbers(str(pid)) or (None, 0, 0) for pid in pids]
    spots = [warp_line(str(tid)) or (-1, 0) for tid in tids]
    names = list(dict.fromkeys(site[0] for site in sites if site[0] is not None))
    number_of = {name: at for at, name in enumerate(names)}
    kernel_of_pid = np.array([number_of.get(site[0], -1) for site in sites], dtype=np.int64)
    sm_of_pid, cta_of_pid = (np.array([site[at] for site in sites], dtype=np.int64) for at in (1, 2))
    warp_of_tid, line_of_tid = (np.array([spot[at] for spot in spots], dtype=np.int64) for at in (0, 1))
    valid = is_warp & (kernel_of_pid[pid_of] >= 0) & (warp_of_tid[tid_of] >= 0)
    if not valid.any():  # lanes named like warps, none of them readable as one
        return WarpLanes([], nothing - 1, nothing, nothing, nothing, nothing)
    kernel = kernel_of_pid[pid_of]
    found, first = np.unique(kernel[valid], return_index=True)
    ordered = found[np.argsort(first)]  # the kernels in the order of their first lanes
    renumbered = np.zeros(len(names), dtype=np.int64)
    renumbered[ordered] = np.arange(len(ordered))
    return WarpLanes([names[at] for at in ordered.tolist()], np.where(valid, renumbered[np.maximum(kernel, 0)], -1),
                     *(np.where(valid, column, 0) for column in (sm_of_pid[pid_of], cta_of_pid[pid_of],
                                                                 warp_of_tid[tid_of], line_of_tid[tid_of])))


@lru_cache(maxsize=1 << 16)  # as warp_site's
def _site_numbers(pid: str) -> tuple[str, int, int] | None:
    """The kernel, SM and CTA of an instrumentation lane's pid, the numbers as numbers."""
    site = warp_site(pid)
    numbers = None if site is None else (int(site[1]), int(site[2]))
    return None if numbers is None or max(numbers) > INT64_HIGH else (site[0], *numbers)


@lru_cache(maxsize=1 << 16)  # pids of CTAs: 1,024 in the payload's trace of 2^20 floats
def warp_site(pid: str) -> tuple[str, str, str] | None:
    """The kernel, SM and CTA (as written) that an instrumentation lane's pid names, `<kernel> Core<SM> CTA<id>`;
    None for any other pid. Each pid is parsed once: a CTA's pid names a lane per warp and line of it."""
    where = WARP_PID.fullmatch(pid)
    return (where["kernel"], where["sm"], where["cta"]) if where else None


@lru_cache(maxsize=1 << 10)  # tids: a warp and a line each, a few dozen in a trace
def warp_line(tid: str) -> tuple[int, int] | None:
    """The warp and line an instrumentation lane's tid names, `warp <w> (line <l>)`; None for any other tid."""
    who = WARP_TID.fullmatch(tid)
    numbers = (int(who["warp"]), int(who["line"] or 0)) if who else None
    return None if numbers is None or max(numbers) > INT64_HIGH else numbers
