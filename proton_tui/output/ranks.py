"""A rank set: one capture per rank of a workload (a run folder of `run -- torchrun …`, any folder of captures, or
files given in order), compared kernel by kernel and rank by rank, as text and JSON.

A capture's rank comes from the sidecar beside it (`<stem>.sidecar.json`, written by the start-up hook), else from a
``rank<R>`` in its file name, else from the order given; the set says which.

The set keeps what its tables show of each capture (`CaptureSummary`: totals and each kernel's time), not the
captures: a rank's own capture is read again when it is opened or compared (`open_rank`), and refused if the file
changed after the set was read, so the set and the rank's own view never disagree."""

from __future__ import annotations

import os
import re
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TypeVar

from proton_tui import JSON_SCHEMA
from proton_tui.console import path_text, printable
from proton_tui.hatchet import CaptureError, Profile, open_capture
from proton_tui.hatchet.source import STDIN
from proton_tui.output.document import Streamed
from proton_tui.output.merged_trace import RankTrace, merge_traces
from proton_tui.records import MIN_FRACTION, RankRecord, RecordError, read_sidecar
from proton_tui.records.ranks import SIDECAR_SUFFIX
from proton_tui.view.formatting import aligned_table, counted, format_count, format_ratio, format_value
from proton_tui.view.names import Names

TRACE_SUFFIX = ".chrome_trace"
CAPTURE_SUFFIXES = (".hatchet", ".hatchet_msgpack", TRACE_SUFFIX)
MIXED_KINDS = "the captures mix trees (.hatchet) and traces (.chrome_trace): a rank set is of one kind"
RANK_IN_NAME = re.compile(r"(?:^|[._-])rank[._-]?(\d+)(?:[._-]|$)")
FROM_SIDECAR, FROM_NAME, FROM_ORDER = "sidecar", "file name", "order given"


class RankSetError(ValueError):
    """Captures that cannot be a rank set: one line naming what is wrong."""


Read = TypeVar("Read")
Stamp = tuple[int, int, int, int]  # a file's device, inode, size and modification time (ns)


def file_stamp(path: Path) -> Stamp:
    """What tells a file apart from itself changed. Raises OSError."""
    stat = os.stat(path)
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns


@dataclass(frozen=True)
class CaptureSummary:
    """What a rank set keeps of one rank's capture: what its rank row shows, and the file as it was read (`stamp`)."""

    path: Path
    unit: str
    total: float
    kernel_count: int
    recorded_launches: int | None
    is_empty: bool
    is_trace: bool
    stamp: Stamp

    @classmethod
    def of(cls, profile: Profile, stamp: Stamp) -> CaptureSummary:
        return cls(profile.path, profile.unit, profile.total, profile.kernel_count, profile.recorded_launches,
                   profile.is_empty, profile.trace is not None, stamp)


@dataclass(frozen=True)
class RankCapture:
    """One rank's capture: its number, where the number came from, the capture's summary, and its sidecar when
    there is one."""

    rank: int
    source: str
    capture: CaptureSummary
    record: RankRecord | None = None

    @property
    def label(self) -> str:
        return f"rank {self.rank}"

    @property
    def heading(self) -> str:
        """The rank with where it ran: ``rank R (host, GPU i …)``, as the merged trace names its process."""
        where = ", ".join(part for part in (self.host, self.gpu) if part)
        return self.label + (f" ({where})" if where else "")

    @property
    def host(self) -> str:
        return self.record.host if self.record is not None else ""

    @property
    def gpu(self) -> str:
        """The GPU as the process saw it: its index and UUID, where the sidecar has them."""
        record = self.record
        if record is None or record.gpu_index is None:
            return ""
        return f"GPU {record.gpu_index}" + (f" {record.gpu_uuid}" if record.gpu_uuid else "")


@dataclass(frozen=True)
class KernelAcross:
    """One kernel on every rank: its time on each (None where the rank never ran it) and the spread."""

    name: str
    values: tuple[float | None, ...]

    @cached_property
    def present(self) -> list[float]:
        return [value for value in self.values if value is not None]

    @cached_property
    def minimum(self) -> float:
        return min(self.present)

    @cached_property
    def median(self) -> float:
        return statistics.median(self.present)

    @cached_property
    def maximum(self) -> float:
        return max(self.present)

    @cached_property
    def skew(self) -> float | None:
        """max ÷ median; None where the median is 0."""
        median = self.median
        return self.maximum / median if median else None

    @cached_property
    def slowest(self) -> int:
        """The position (in the set) of the rank that spent the most time in it."""
        return max(range(len(self.values)), key=lambda i: (self.values[i] is not None, self.values[i] or 0))


@dataclass(frozen=True)
class RankSet:
    """Every rank's capture, in rank order; each kernel across them; every name their trees hold."""

    ranks: tuple[RankCapture, ...]
    kernel_rows: tuple[KernelAcross, ...] = ()  # by name
    names: frozenset[str] = frozenset()

    @cached_property  # every rank's and every kernel's cells ask for it
    def unit(self) -> str:
        units = {rank.capture.unit for rank in self.ranks if not rank.capture.is_empty}
        return units.pop() if len(units) == 1 else "ns"

    @cached_property  # a set of 1,024 ranks asks for it once per rank
    def median_total(self) -> float:
        return statistics.median(rank.capture.total for rank in self.ranks)

    @property
    def of_traces(self) -> bool:
        return bool(self.ranks) and all(rank.capture.is_trace for rank in self.ranks)

    def flagged(self, rank: RankCapture, min_fraction: float = MIN_FRACTION) -> bool:
        """Slower than the set's median as `check` flags a GPU: the median is under `min_fraction` of its time."""
        return rank.capture.total > 0 and self.median_total < min_fraction * rank.capture.total

    def kernels(self) -> list[KernelAcross]:
        """Every kernel name of any rank, the largest spread (max ÷ median) first, then the largest time."""
        return list(self._kernels)

    @cached_property  # the viewer asks again at each sort and resize
    def _kernels(self) -> tuple[KernelAcross, ...]:
        return tuple(sorted(self.kernel_rows, key=lambda row: (-(row.skew or 0.0), -row.maximum, row.name)))


def merged_rank_trace(rank_set: RankSet) -> tuple[dict, str]:
    """The ranks' Chrome traces merged for Perfetto (`merge_traces`), each rank's process named by its rank, host
    and GPU; and how the clocks were aligned. Raises RankSetError for a set of trees."""
    import msgspec

    if not rank_set.of_traces:
        raise RankSetError("a merged trace needs a Chrome trace per rank (run with --data trace); these are trees")
    traces = []
    for rank in rank_set.ranks:
        data = read_again(rank, Path.read_bytes)
        try:
            document = msgspec.json.decode(data)
        except msgspec.DecodeError as error:
            raise RankSetError(f"{printable(str(rank.capture.path))}: cannot be read again: {error}") from None
        traces.append(RankTrace(rank.rank, rank.heading, document))
    return merge_traces(traces)


def unchanged(rank: RankCapture, stamp: Stamp) -> None:
    """Raises RankSetError when `stamp` is not the rank's file as the set read it."""
    if stamp != rank.capture.stamp:
        raise RankSetError(f"{printable(str(rank.capture.path))}: changed after the rank set was read: open the set "
                           "again")


def read_again(rank: RankCapture, read: Callable[[Path], Read]) -> Read:
    """`read` of the rank's file, which must still be the file the set read, before and after (else
    RankSetError)."""
    path = rank.capture.path
    try:
        unchanged(rank, file_stamp(path))
        found = read(path)
        unchanged(rank, file_stamp(path))
    except OSError as error:
        raise RankSetError(f"{printable(str(path))}: cannot be read again: {error.strerror or error}") from None
    return found


def open_rank(rank: RankCapture, opener: Callable[[Path], Profile] = open_capture) -> Profile:
    """The rank's own capture, read again: the same file the set read (else RankSetError). Raises CaptureError."""
    return read_again(rank, opener)


def rank_of_name(path: Path) -> int | None:
    found = RANK_IN_NAME.search(path.name)
    return int(found[1]) if found else None


def rank_files(paths: list[Path]) -> list[Path]:
    """The captures a folder holds (or the files given), in the order given. Raises RankSetError for a folder with
    no capture, a file given that is not there, or captures that mix trees and traces (told by their names)."""
    if len(paths) == 1 and paths[0].is_dir():
        found = sorted(path for path in paths[0].iterdir() if path.name.endswith(CAPTURE_SUFFIXES))
        if not found:
            raise RankSetError(f"{printable(str(paths[0]))}: no Proton capture in this folder "
                               f"({', '.join(CAPTURE_SUFFIXES)})")
    else:
        found = list(paths)
        for path in found:
            if path == STDIN:
                raise RankSetError("-: standard input holds one capture; give a rank set as capture files, one per "
                                   "rank, or as their folder")
            if path.is_dir():
                raise RankSetError(f"{printable(str(path))}: a folder among the rank captures: give a folder alone, "
                                   "or capture files")
            if not path.is_file():
                raise RankSetError(f"{printable(str(path))}: no such capture file")
    traces = [path.name.endswith(TRACE_SUFFIX) for path in found]
    if any(traces) and not all(traces):
        raise RankSetError(MIXED_KINDS)
    return found


def summarize(path: Path, opener: Callable[[Path], Profile], kernels: dict[str, dict[int, float]], at: int,
              names: set[str]) -> CaptureSummary:
    """Read one capture and keep its summary: each kernel's time goes into `kernels` (name → the `at`-th capture's
    value), its names into `names`; the capture itself is let go. Raises CaptureError, RankSetError."""
    try:
        before = file_stamp(path)
        profile = opener(path)
        stamp = file_stamp(path)
    except OSError as error:
        raise RankSetError(f"{printable(str(path))}: cannot be read: {error.strerror or error}") from None
    if stamp != before:
        raise RankSetError(f"{printable(str(path))}: changed while it was read: open the set again once it is "
                           "written")
    for kernel in profile.kernel_stats():
        kernels.setdefault(sys.intern(kernel.name), {})[at] = kernel.value
    names.update(profile.names)
    return CaptureSummary.of(profile, stamp)


def open_rank_set(paths: list[Path], opener: Callable[[Path], Profile] = open_capture) -> RankSet:
    """Read every rank's capture (`opener`: CaptureError for a bad one), keeping each one's summary. Raises
    RankSetError, CaptureError."""
    files = rank_files(paths)
    sidecars: list[RankRecord | None] = []
    for path in files:
        sidecar = path.with_name(path.name.rsplit(".", 1)[0] + SIDECAR_SUFFIX)
        try:
            sidecars.append(read_sidecar(sidecar) if sidecar.is_file() else None)
        except RecordError:
            sidecars.append(None)
    if all(record is not None and record.rank is not None for record in sidecars):
        numbers, source = [record.rank for record in sidecars], FROM_SIDECAR
    elif None not in (named := [rank_of_name(path) for path in files]):
        numbers, source = named, FROM_NAME
    else:
        numbers, source = list(range(len(files))), FROM_ORDER
    if len(set(numbers)) != len(numbers):
        repeated = sorted({number for number in numbers if numbers.count(number) > 1})
        named = ", ".join(printable(path.name) for path, number in zip(files, numbers) if number == repeated[0])
        raise RankSetError(f"rank {repeated[0]} has more than one capture ({source}): {named}: give one capture "
                           "per rank")
    kernels: dict[str, dict[int, float]] = {}
    names: set[str] = set()
    ranks = [RankCapture(number, source, summarize(path, opener, kernels, at, names), record)
             for at, (number, path, record) in enumerate(zip(numbers, files, sidecars))]
    if len({rank.capture.is_trace for rank in ranks}) > 1:
        raise RankSetError(MIXED_KINDS)
    units = {rank.capture.unit for rank in ranks if not rank.capture.is_empty}
    if len(units) > 1:
        raise RankSetError("the captures mix time in ns and cycles: a rank set compares one kind")
    order = sorted(range(len(ranks)), key=lambda at: ranks[at].rank)
    rows = tuple(KernelAcross(name, tuple(values.get(at) for at in order))
                 for name, values in sorted(kernels.items()))
    return RankSet(tuple(ranks[at] for at in order), rows, frozenset(names))


RANK_HEADER = ("rank", "GPU time", "vs median", "kernels", "launches", "host", "GPU", "")
KERNEL_STATS_HEADER = ("min", "median", "max", "max/med", "slowest")
KERNEL_SORTS = ("max/med", "max", "name")  # the kernel table's orders: the largest spread, the largest time, A to Z


def rank_cells(rank_set: RankSet, rank: RankCapture) -> list[str]:
    """One rank's row of the rank table (RANK_HEADER): its GPU time, its ratio to the set's median, kernels,
    launches, host and GPU, and SLOW where it is flagged."""
    capture, median = rank.capture, rank_set.median_total
    return [str(rank.rank), format_value(capture.total, rank_set.unit),
            format_ratio(capture.total / median if median else None), format_count(capture.kernel_count),
            format_count(capture.recorded_launches), printable(rank.host), printable(rank.gpu),
            "SLOW" if rank_set.flagged(rank) else ""]


def kernel_cells(rank_set: RankSet, kernel: KernelAcross, rank_columns: int) -> list[str]:
    """One kernel's row of the kernel × rank table: its time on the first `rank_columns` ranks (— where a rank never
    ran it), then KERNEL_STATS_HEADER's min, median, max, max ÷ median and the slowest rank."""
    unit = rank_set.unit
    cells = ["—" if value is None else format_value(value, unit) for value in kernel.values[:rank_columns]]
    return cells + [format_value(kernel.minimum, unit), format_value(kernel.median, unit),
                    format_value(kernel.maximum, unit), format_ratio(kernel.skew),
                    rank_set.ranks[kernel.slowest].label]


def sorted_kernels(kernels: list[KernelAcross], key: str, names: Names) -> list[KernelAcross]:
    """The kernels in one of KERNEL_SORTS' orders (`RankSet.kernels` gives them by max ÷ median already)."""
    if key == "max":
        return sorted(kernels, key=lambda row: (-row.maximum, row.name))
    if key == "name":
        return sorted(kernels, key=lambda row: names.sort_key(row.name))
    return kernels


@dataclass(frozen=True)
class KernelOnRank:
    """One kernel on one rank: its time (None where the rank never ran it), its share of the rank's GPU time, and
    its ratio to the kernel's median across the ranks."""

    rank: RankCapture
    value: float | None
    share: float | None  # percent
    vs_median: float | None


def kernel_on_ranks(rank_set: RankSet, kernel: KernelAcross) -> list[KernelOnRank]:
    """`kernel` on every rank, in rank order."""
    median = kernel.median
    return [KernelOnRank(rank, value,
                         None if value is None or not rank.capture.total else 100.0 * value / rank.capture.total,
                         None if value is None or not median else value / median)
            for rank, value in zip(rank_set.ranks, kernel.values)]


def typical_rank(rank_set: RankSet) -> RankCapture:
    """The rank whose GPU time is nearest the set's median (the first of two as near): what a rank is compared with
    by default."""
    return min(rank_set.ranks, key=lambda rank: abs(rank.capture.total - rank_set.median_total))


def rank_set_text(rank_set: RankSet, names: Names, limit: int | None = None, rank_columns: int = 8,
                  ranks_table: bool = True) -> str:
    """The rank table (unless not `ranks_table`), then the kernel × rank table (as many rank columns as
    `rank_columns`, then min, median, max, max÷median and the slowest rank)."""
    unit, ranks = rank_set.unit, rank_set.ranks
    source = ranks[0].source if ranks else FROM_ORDER
    lines = [f"{counted(len(ranks), 'rank')} (ranks from the {source})  median GPU time "
             f"{format_value(rank_set.median_total, unit)}"]
    if ranks_table:
        rows = [list(RANK_HEADER)] + [rank_cells(rank_set, rank) for rank in ranks]
        lines += aligned_table(rows, right=(1, 2, 3, 4)) + [""]
    kernels = rank_set.kernels()
    shown = ranks[:rank_columns]
    header = [f"r{rank.rank}" for rank in shown] + [*KERNEL_STATS_HEADER, "kernel"]
    rows = [header] + [kernel_cells(rank_set, kernel, rank_columns) + [printable(names.shown(kernel.name))]
                       for kernel in kernels[:limit]]
    lines += aligned_table(rows, right=tuple(range(len(header) - 2)))
    if len(ranks) > rank_columns:
        lines.append(f"(ranks past r{shown[-1].rank} are in min, median, max; --json has every rank)")
    if limit is not None and len(kernels) > limit:
        lines.append(f"(+{counted(len(kernels) - limit, 'more kernel')})")
    return "\n".join(lines) + "\n"


def rank_set_json(rank_set: RankSet, names: Names) -> dict:
    """The rank set as JSON: each rank (its capture, totals, sidecar), each kernel across the ranks; the ranks and
    the kernels made and written one at a time (`write_json`)."""
    ranks = rank_set.ranks
    return {
        "schema": JSON_SCHEMA,
        "kind": "rank set",
        "unit": rank_set.unit,
        "rank_source": ranks[0].source if ranks else FROM_ORDER,
        "median_total": rank_set.median_total,
        "min_fraction": MIN_FRACTION,
        "ranks": Streamed(lambda: ({
            "rank": rank.rank, "capture": path_text(rank.capture.path), "total": rank.capture.total,
            "kernels": rank.capture.kernel_count, "launches": rank.capture.recorded_launches,
            "host": rank.host or None, "gpu_index": rank.record.gpu_index if rank.record else None,
            "gpu_uuid": rank.record.gpu_uuid if rank.record else None, "flagged": rank_set.flagged(rank),
        } for rank in ranks)),
        "kernels": Streamed(lambda: ({
            "name": names.shown(kernel.name), "raw_name": kernel.name,
            "values": list(kernel.values), "min": kernel.minimum, "median": kernel.median, "max": kernel.maximum,
            "skew": kernel.skew, "slowest_rank": ranks[kernel.slowest].rank,
        } for kernel in rank_set.kernels())),
    }


__all__ = ["CaptureError", "RankSet", "RankSetError", "open_rank", "open_rank_set", "rank_set_json", "rank_set_text"]
