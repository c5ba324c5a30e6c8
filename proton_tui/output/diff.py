"""Two captures compared kernel by kernel: time in A and B, the change, new and gone kernels."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.cells import cell_len

from proton_tui import JSON_SCHEMA
from proton_tui.console import path_text, printable
from proton_tui.hatchet import Profile
from proton_tui.view.formatting import (
    Column,
    counted,
    format_count,
    format_delta,
    format_ratio,
    format_value,
    value_width,
)
from proton_tui.view.names import Names

NEW, GONE, BOTH = "new", "gone", "both"


class DiffError(ValueError):
    """Two captures that cannot be compared; the message is one line that names both files."""


@dataclass(frozen=True)
class KernelDiff:
    """One kernel name in A and B: time (ns or cycles) is None on the side that lacks the kernel."""

    name: str
    value_a: float | None
    value_b: float | None
    launches_a: int | None  # None where that side records no launches
    launches_b: int | None

    @property
    def status(self) -> str:
        """"new" (only in B), "gone" (only in A) or "both"."""
        return NEW if self.value_a is None else GONE if self.value_b is None else BOTH

    @property
    def delta(self) -> float:
        """B − A, a missing side counting as 0."""
        return (self.value_b or 0.0) - (self.value_a or 0.0)

    @property
    def ratio(self) -> float | None:
        """B / A, or None unless both sides have the kernel and A's time is not 0."""
        return self.value_b / self.value_a if self.value_a and self.value_b is not None else None


@dataclass(frozen=True)
class ProfileDiff:
    """Every kernel of A and B, largest absolute change first."""

    a: Profile
    b: Profile
    unit: str
    kernels: list[KernelDiff]

    @property
    def delta(self) -> float:
        return self.b.total - self.a.total

    @property
    def ratio(self) -> float | None:
        return self.b.total / self.a.total if self.a.total else None

    def count(self, status: str) -> int:
        return sum(kernel.status == status for kernel in self.kernels)


def diff_profiles(a: Profile, b: Profile) -> ProfileDiff:
    """Compare A (before) with B (after) per kernel name. Raises DiffError for a ns capture against a cycles one;
    a capture without kernels takes the other's unit."""
    if a.unit != b.unit and not (a.is_empty or b.is_empty):
        raise DiffError(f"cannot compare {a.path} (time in ns) with {b.path} (cycles)" if a.unit == "ns"
                        else f"cannot compare {a.path} (cycles) with {b.path} (time in ns)")
    stats_a = {kernel.name: kernel for kernel in a.kernel_stats()}
    stats_b = {kernel.name: kernel for kernel in b.kernel_stats()}
    kernels = []
    for name in stats_a.keys() | stats_b.keys():
        in_a, in_b = stats_a.get(name), stats_b.get(name)
        kernels.append(
            KernelDiff(
                name=name,
                value_a=in_a.value if in_a else None,
                value_b=in_b.value if in_b else None,
                launches_a=None if a.recorded_launches is None else in_a.launches if in_a else 0,
                launches_b=None if b.recorded_launches is None else in_b.launches if in_b else 0,
            )
        )
    kernels.sort(key=lambda kernel: (-abs(kernel.delta), kernel.name))
    unit = a.unit if not a.is_empty else b.unit if not b.is_empty else "ns"
    return ProfileDiff(a=a, b=b, unit=unit, kernels=kernels)


def diff_columns(diff: ProfileDiff) -> list[Column]:
    """The numeric columns of a diff row, the name following them; each as wide as its widest cell."""
    unit, value = diff.unit, "time" if diff.unit == "ns" else "cycles"
    largest = max([diff.a.total, diff.b.total] + [abs(k.delta) for k in diff.kernels], default=0.0)
    width = value_width(largest, unit)
    ratios = [len(format_ratio(r)) for r in [diff.ratio, *(k.ratio for k in diff.kernels)] if r is not None]
    launches = max(len(format_count(diff.a.recorded_launches)), len(format_count(diff.b.recorded_launches)))
    cols = [Column("a", f"{value} A", width), Column("b", f"{value} B", width), Column("delta", "delta", width + 1),
            Column("ratio", "ratio", max(ratios, default=4)), Column("launches_a", "launches A", launches),
            Column("launches_b", "launches B", launches)]
    return [Column(col.key, col.title, max(col.width, len(col.title))) for col in cols]


def kernel_diff_cells(kernel: KernelDiff, unit: str) -> list[str]:
    """The cells of one kernel's row, matching diff_columns; the ratio column says "new" or "gone"."""
    return [
        "" if kernel.value_a is None else format_value(kernel.value_a, unit),
        "" if kernel.value_b is None else format_value(kernel.value_b, unit),
        format_delta(kernel.delta, unit),
        format_ratio(kernel.ratio) if kernel.status == BOTH else kernel.status,
        "" if kernel.value_a is None else format_count(kernel.launches_a),
        "" if kernel.value_b is None else format_count(kernel.launches_b),
    ]


def total_cells(diff: ProfileDiff) -> list[str]:
    """The cells of the totals row, matching diff_columns."""
    unit = diff.unit
    return [format_value(diff.a.total, unit), format_value(diff.b.total, unit), format_delta(diff.delta, unit),
            format_ratio(diff.ratio), format_count(diff.a.recorded_launches), format_count(diff.b.recorded_launches)]


DIFF_NAME_WIDTH = 80  # the widest kernel column of a text diff: every short C++ name fits (tests/unit/test_names.py)


def diff_text(diff: ProfileDiff, limit: int | None = None, names: Names | None = None) -> str:
    """The comparison as aligned text: the two files, the totals row, then one row per kernel, the name (as `names`
    shows it) first, in a column as wide as the widest name up to DIFF_NAME_WIDTH (a longer name is written whole, its
    numbers after it), the numbers after it, never cut; `limit` keeps the largest changes."""
    names = names or Names()
    cols = diff_columns(diff)
    shown = [(kernel, names.shown(kernel.name)) for kernel in diff.kernels[:limit]]
    width = min(DIFF_NAME_WIDTH, max([len("(total)"), *(cell_len(name) for _, name in shown)]))

    def row(name: str, cells: list[str]) -> str:
        return name + " " * (width - cell_len(name)) + "  " + "  ".join(col.align(c) for c, col in zip(cells, cols))

    lines = [
        printable(f"A: {side_name(diff.a)}"),
        printable(f"B: {side_name(diff.b)}"),
        counts_line(diff),
        row("kernel", [c.title for c in cols]),
        row("(total)", total_cells(diff)),
    ]
    lines.extend(row(name, kernel_diff_cells(kernel, diff.unit)) for kernel, name in shown)
    if limit is not None and len(diff.kernels) > limit:
        lines.append(f"(+{counted(len(diff.kernels) - limit, 'more kernel')})")
    return "\n".join(line.rstrip() for line in lines) + "\n"


def counts_line(diff: ProfileDiff) -> str:
    """How many kernels are new, gone and in both; and, where a side records no kernel, that it is why."""
    line = f"{diff.count(NEW)} new, {diff.count(GONE)} gone, {diff.count(BOTH)} in both"
    in_a, in_b = diff.count(GONE) + diff.count(BOTH), diff.count(NEW) + diff.count(BOTH)
    if not in_a and not in_b:
        return line + "; neither A nor B records a kernel"
    if not in_b:
        return line + "; B records no kernel: every kernel of A is gone"
    if not in_a:
        return line + "; A records no kernel: every kernel of B is new"
    return line


def side_name(profile: Profile) -> str:
    """One side of a comparison in words: its file, and the scope it is restricted to when it is."""
    return str(profile.path) if profile.scope is None else f"{profile.path}, scope {profile.scope}"


def _side(profile: Profile) -> dict:
    return {
        "file": path_text(profile.path),
        "scope": profile.scope,
        "total": profile.total,
        "kernel_launches": profile.recorded_launches,
        "distinct_kernels": len(profile.kernel_stats()),
    }


def diff_json(diff: ProfileDiff, limit: int | None = None, names: Names | None = None) -> dict:
    """The comparison as one JSON document; values are in `unit` (ns or cycles), a missing side is null; each
    kernel's `name` is exact, `readable_name` as people read it, `short_name` and `full_name` its other forms."""
    names = names or Names()
    return {
        "schema": JSON_SCHEMA,
        "unit": diff.unit,
        "a": _side(diff.a),
        "b": _side(diff.b),
        "delta": diff.delta,
        "ratio": diff.ratio,
        "new": diff.count(NEW),
        "gone": diff.count(GONE),
        "kernels": [
            {
                "name": kernel.name,
                "readable_name": names.readable_name(kernel.name),
                "short_name": names.short(kernel.name),
                "full_name": names.full(kernel.name),
                "status": kernel.status,
                "value_a": kernel.value_a,
                "value_b": kernel.value_b,
                "delta": kernel.delta,
                "ratio": kernel.ratio,
                "launches_a": kernel.launches_a,
                "launches_b": kernel.launches_b,
            }
            for kernel in diff.kernels[:limit]
        ],
        "more_kernels": max(0, len(diff.kernels) - limit) if limit is not None else 0,
    }


CAPTURE_SUFFIXES = (".hatchet", ".hatchet_msgpack")
MAX_CANDIDATES = 50  # captures offered to compare with, newest first


def compare_candidates(opened: Path, output: Path) -> list[Path]:
    """Captures worth comparing `opened` with, newest first: the files beside it and those in the output folder's
    run folders, without `opened` itself."""
    found: dict[Path, float] = {}
    folders = [opened.parent] + _children(output)
    for folder in folders:
        for path in _children(folder):
            if path.suffix in CAPTURE_SUFFIXES and path.is_file():
                try:
                    found[path.resolve()] = path.stat().st_mtime
                except OSError:
                    continue
    found.pop(opened.resolve(), None)
    return sorted(found, key=lambda path: (-found[path], str(path)))[:MAX_CANDIDATES]


def _children(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:
        return []
