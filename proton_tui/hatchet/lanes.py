"""A trace's lanes: what each row of the timeline is (a GPU stream, a CPU thread, an instrumented kernel's warp),
what a lane's events add up to, where an instrumentation lane's events ran, and the launch metadata a kernel event
carries."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

GPU, CPU, WARP, OTHER = "gpu", "cpu", "warp", "other"
# instrumentation traces: pid "<kernel> Core<SM> CTA<id>", tid "warp <w> (line <l>)"


class Lane(NamedTuple):
    """One row of the timeline: a GPU stream, a CPU thread (≥ 3.8 names them), or a stream id alone (3.6). A named
    tuple: an instrumentation trace has a lane per warp and line of every CTA on every SM it ran on (56,576 in one of
    the payload's traces), and a tuple is made in a third of a frozen dataclass's time."""

    pid: object
    tid: object
    name: str
    kind: str
    order: float
    own_name: str | None = None  # the name without its process, where `name` says the process to tell lanes apart


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


class WarpLane(NamedTuple):
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
    """The instrumentation lanes among `lanes` (lane number → its SM, CTA, warp and line)."""
    found = {}
    for number, (pid, tid, _, kind, _, _) in enumerate(lanes):
        if kind == WARP and (site := _site_numbers(str(pid))) and (warp := warp_line(str(tid))):
            found[number] = WarpLane(*site, *warp)
    return found


@lru_cache(maxsize=1 << 16)  # as warp_site's
def _site_numbers(pid: str) -> tuple[str, int, int] | None:
    """The kernel, SM and CTA of an instrumentation lane's pid, the numbers as numbers."""
    site = warp_site(pid)
    return None if site is None else (site[0], int(site[1]), int(site[2]))


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
    return (int(who["warp"]), int(who["line"] or 0)) if who else None
