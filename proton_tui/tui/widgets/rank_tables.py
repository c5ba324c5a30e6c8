"""The rank set's tables: the ranks (GPU time against the set's median, the slow ones flagged), every kernel across
the ranks (its time on as many ranks as the width holds, then min, median, max, max ÷ median and the slowest rank),
and one kernel on every rank as share bars. The cells are `output.ranks`'; these only lay them out, and draw only
the rows on the screen (`RowTable`)."""

from __future__ import annotations

from rich.cells import cell_len

from proton_tui.console import printable
from proton_tui.output.ranks import (
    KERNEL_STATS_HEADER,
    RANK_HEADER,
    KernelAcross,
    RankCapture,
    RankSet,
    kernel_cells,
    kernel_on_ranks,
    rank_cells,
)
from proton_tui.tui.widgets.row_table import Column, RowTable
from proton_tui.view.formatting import format_percent, format_ratio, format_value, share_bar
from proton_tui.view.names import Names
from proton_tui.view.names.cut import cut_name, told_apart

MIN_NAME_WIDTH = 16  # cells the kernel column keeps: rank columns are left out before it narrows further
GAP, SCROLLBAR = 2, 2  # cells between two columns; the vertical scrollbar's width
RANK_ORDER = (0, 1, 2, 7, 3, 4, 5, 6)  # RANK_HEADER's cells as the table shows them: the flag beside the ratio


def _widths(rows: list[list[str]]) -> list[int]:
    return [max(cell_len(row[i]) for row in rows) for i in range(len(rows[0]))]


class RankTable(RowTable):
    """Every rank: GPU time, its ratio to the median, SLOW where flagged, kernels, launches, host and GPU; `A` marks
    the rank compare takes as A."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rank_set: RankSet | None = None
        self.marked: int | None = None  # position of compare's A
        self._cells: list[list[str]] = []

    def show(self, rank_set: RankSet) -> None:
        self.rank_set = rank_set
        self._cells = [[cells[i] for i in RANK_ORDER] for cells in (rank_cells(rank_set, rank)
                                                                    for rank in rank_set.ranks)]
        self.redraw()

    def redraw(self) -> None:
        header = [RANK_HEADER[i] for i in RANK_ORDER]
        columns = [Column("A", 1)] + [Column(title, width, right=0 < i < 3)
                                      for i, (title, width) in enumerate(zip(header, _widths([header, *self._cells])))]
        rows = [["A" if at == self.marked else "", *cells] for at, cells in enumerate(self._cells)]
        super().show(columns, rows, self.cursor_row)

    @property
    def selected(self) -> RankCapture | None:
        if self.rank_set is None or not self.row_count:
            return None
        return self.rank_set.ranks[self.cursor_row]

    def mark(self) -> RankCapture | None:
        """Mark the cursor's rank as compare's A (again: unmark it)."""
        self.marked = None if self.marked == self.cursor_row else self.cursor_row
        self.redraw()
        return None if self.marked is None else self.rank_set.ranks[self.marked]


class KernelRankTable(RowTable):
    """Every kernel across the ranks, in the order given; as many rank columns as `width` holds."""

    def __init__(self, **kwargs) -> None:
        super().__init__(cell_padding=0, **kwargs)
        self.kernels: list[KernelAcross] = []
        self.rank_columns = 0

    def show(self, rank_set: RankSet, kernels: list[KernelAcross], names: Names, width: int) -> None:
        """Show `kernels`, the cursor on the kernel it was on (else on the same row)."""
        before, row = self.selected, self.cursor_row
        self.kernels = kernels
        stats_header = list(KERNEL_STATS_HEADER)
        stats = sum(width + GAP for width in _widths([stats_header, *(kernel_cells(rank_set, kernel, 0)
                                                                      for kernel in kernels)]))
        room = width - SCROLLBAR - MIN_NAME_WIDTH - stats
        ranks = rank_set.ranks[:max(room, 0) // (GAP + 1)]  # the most rank columns that could fit: cells for those
        cells = [kernel_cells(rank_set, kernel, len(ranks)) for kernel in kernels]
        header = [f"r{rank.rank}" for rank in ranks] + stats_header
        widths = _widths([header, *cells])
        shown = 0
        while shown < len(ranks) and widths[shown] + GAP <= room:
            room -= widths[shown] + GAP
            shown += 1
        self.rank_columns = shown
        shown_columns = list(range(shown)) + list(range(len(ranks), len(header)))
        last = len(header) - 1  # the slowest rank: a name, left-aligned after its gap
        gap = " " * GAP
        columns = [Column(gap + header[i], widths[i] + GAP) if i == last else
                   Column(header[i], widths[i] + GAP, right=True) for i in shown_columns]
        columns.append(Column(gap + "kernel", max(room, 0) + MIN_NAME_WIDTH))
        name_cells = max(room, 0) + MIN_NAME_WIDTH - GAP
        shown_names = [printable(names.shown(kernel.name)) for kernel in kernels]
        apart = told_apart(shown_names, name_cells)  # names that would cut alike each show where they differ
        rows = [[gap + row_cells[i] if i == last else row_cells[i] for i in shown_columns]
                + [gap + (apart.get(name) or cut_name(name, name_cells))]
                for name, row_cells in zip(shown_names, cells)]
        if before is not None and before in kernels:
            row = kernels.index(before)
        super().show(columns, rows, row)

    @property
    def selected(self) -> KernelAcross | None:
        return self.kernels[self.cursor_row] if self.kernels and self.row_count else None


class KernelAcrossTable(RowTable):
    """One kernel on every rank: its time, its ratio to the kernel's median, and its share of the rank's GPU time
    with a share bar."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.kernel: KernelAcross | None = None

    def show(self, rank_set: RankSet, kernel: KernelAcross) -> None:
        self.kernel = kernel
        header = ["rank", "time", "vs median", "% of rank", ""]
        rows = [[on_rank.rank.label, "—" if on_rank.value is None else format_value(on_rank.value, rank_set.unit),
                 format_ratio(on_rank.vs_median), format_percent(on_rank.share), share_bar(on_rank.share or 0.0)]
                for on_rank in kernel_on_ranks(rank_set, kernel)]
        widths = _widths([header, *rows])
        super().show([Column(title, width, right=0 < i < 4) for i, (title, width) in enumerate(zip(header, widths))],
                     rows)
