"""A trace's lanes: what each row of the timeline is (a GPU stream, a CPU thread, an instrumented kernel's warp),
what a lane's events add up to, where an instrumentation lane's events ran, and the launch metadata a kernel event
carries."""

from __future__ import annotations

import re
from dataclasses import dataclass

GPU, CPU, WARP, OTHER = "gpu", "cpu", "warp", "other"
# instrumentation traces: pid "<kernel> Core<SM> CTA<id>", tid "warp <w> (line <l>)"


@dataclass(frozen=True)
class Lane:
    """One row of the timeline: a GPU stream, a CPU thread (≥ 3.8 names them), or a stream id alone (3.6)."""

    pid: object
    tid: object
    name: str
    kind: str
    order: float


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


WARP_PID = re.compile(r"(?P<kernel>.*) Core(?P<sm>\d+) CTA(?P<cta>\d+)")
WARP_TID = re.compile(r"warp (?P<warp>\d+)(?: \(line (?P<line>\d+)\))?")


@dataclass(frozen=True)
class WarpLane:
    """Where a lane's events ran: kernel, SM, CTA, warp, and the nesting depth its scopes sit at (Proton's line)."""

    kernel: str
    sm: int
    cta: int
    warp: int
    line: int


def warp_lane(lane: Lane) -> WarpLane | None:
    """The SM, CTA, warp and line of an instrumentation lane; None for any other lane."""
    return warp_lanes([lane]).get(0)


def warp_lanes(lanes: list[Lane]) -> dict[int, WarpLane]:
    """The instrumentation lanes among `lanes` (lane number → its SM, CTA, warp and line), each pid and tid parsed
    once: a CTA's pid names many lanes, a warp's tid those of every CTA."""
    sites: dict[str, tuple | None] = {}
    warps: dict[str, tuple | None] = {}
    found = {}
    for number, lane in enumerate(lanes):
        if lane.kind != WARP:
            continue
        pid, tid = str(lane.pid), str(lane.tid)
        if (site := sites.get(pid, False)) is False:
            where = WARP_PID.fullmatch(pid)
            site = sites[pid] = (where["kernel"], int(where["sm"]), int(where["cta"])) if where else None
        if (warp := warps.get(tid, False)) is False:
            who = WARP_TID.fullmatch(tid)
            warp = warps[tid] = (int(who["warp"]), int(who["line"] or 0)) if who else None
        if site is not None and warp is not None:
            found[number] = WarpLane(*site, *warp)
    return found
