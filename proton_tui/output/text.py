"""The text outputs (`--plain`, `--kernels`): the tree, the kernel summary, a trace's lanes and warps, in lines."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import TYPE_CHECKING, TextIO

from proton_tui.console import printable
from proton_tui.view.display import Display
from proton_tui.view.formatting import (
    Column,
    aligned_row,
    columns,
    counted,
    cycles_number,
    format_count,
    format_percent,
    format_value,
    kernel_cells,
    node_cells,
)
from proton_tui.view.warp_units import TRACE_UNITS

if TYPE_CHECKING:
    from proton_tui.hatchet.trace import Trace
    from proton_tui.view.warps import ScopeStats, WarpTrace
from proton_tui.output.details import (
    bandwidth_notes,
    cycle_notes,
    device_lines,
    empty_hidden_text,
    header_line,
    stragglers_text,
)


def tree_lines(display: Display) -> Iterator[str]:
    """The tree as aligned text, a line at a time: header, per-device lines, column titles, then every shown row in
    display order (numeric columns first, then the guide lines and the name, never cut)."""
    profile = display.profile
    yield header_line(profile)
    if profile.is_root_only:
        return
    yield from device_lines(profile)
    yield from bandwidth_notes(profile)
    yield from cycle_notes(profile)
    cols = columns(profile, display.bars)
    yield aligned_row([c.title for c in cols], cols, "name")
    for node in display.walk():
        yield aligned_row(node_cells(profile, node, display.bars), cols, display.guide(node) + display.name(node))
    if display.hidden_empty:
        yield f"({empty_hidden_text(display.hidden_empty)}; --show-empty shows them)"
    if profile.hidden_internal:
        yield f"({profile.hidden_internal} internal Proton nodes hidden)"


def trace_lines(trace: Trace, clock_khz: int | None = None) -> list[str]:
    """A trace's lanes: each one's busy time (its kernels' union), its idle gaps (between its first kernel's start
    and its last one's end: how long the stream waited) and what else it holds. An instrumentation trace's warp lanes
    are not listed one by one: its launches' statistics across warps are (`warp_lines`), in cycles (times only at
    `clock_khz`, the SM clock in kHz, when given)."""
    from proton_tui.view.warps import warp_trace

    warps = warp_trace(trace, clock_khz)
    span = trace.end - trace.start
    if warps is not None and len(warps.lane_of) == len(trace.lanes):  # all warps: the trace's times are cycles
        lines = [f"trace: {counted(len(trace.lanes), 'warp lane')}, {cycles_number(round(span))} {TRACE_UNITS} from "
                 "the first event to the last"]
    else:
        lines = [f"trace: {counted(len(trace.lanes), 'lane')}, {format_value(span, 'ns')} from the first event to "
                 "the last" + (f"; clock base {trace.base_ns:,} ns" if trace.base_ns is not None else "")
                 + (f"; {counted(trace.flow_count, 'launch → kernel flow')}" if trace.flow_count else "")]
    for number, (lane, summary) in enumerate(zip(trace.lanes, trace.summaries())):
        if warps is not None and number in warps.lane_of:
            continue
        parts = [printable(lane.name)]
        if summary.kernels:
            busy, gaps, active = summary.busy, summary.gaps, summary.active
            parts.append(f"busy {format_value(busy, 'ns')} of {format_value(active, 'ns')} "
                         f"({format_percent(100.0 * busy / active if active else 100.0)})")
            parts.append(counted(summary.kernels, "kernel"))
            if gaps:
                largest = max(gaps, key=lambda gap: gap[1] - gap[0])
                parts.append(f"idle {format_value(summary.idle, 'ns')} in "
                             f"{counted(len(gaps), 'gap')}, the longest {format_value(largest[1] - largest[0], 'ns')} "
                             f"at {format_value(largest[0], 'ns')}")
        if summary.others:
            kinds = sorted({category or "event" for category in summary.others})
            parts.append(counted(sum(summary.others.values()), " and ".join(kinds) + " event"))
        lines.append("  " + "  ".join(parts))
    if warps is not None:
        lines += warp_lines(warps)
    return lines


def warp_lines(warps: WarpTrace) -> list[str]:
    """Per launch, then per kernel across its launches: each scope's cycles across warps (count, min, median, p99,
    max) and its slowest warps named."""
    kernels = {launch.kernel: launch.ordinal for launch in warps.launches}
    lines = ["warps: " + ", ".join(f"{counted(count, 'launch', 'launches')} of {printable(kernel)}"
                                   for kernel, count in kernels.items())
             + f"; {warps.clock_note}; p99 by nearest rank"]
    for launch in warps.launches:
        lines.append(f"launch {launch.number} of {len(warps.launches)} ({printable(launch.kernel)}): "
                     f"{counted(launch.ctas, 'CTA')} on {counted(launch.counts[1], 'SM')}, "
                     f"{counted(launch.counts[0], 'warp')}, {cycles_number(launch.end - launch.start)} trace units "
                     "from its first scope to its last end")
        lines += scope_table(warps, list(launch.scopes.values()), across=False)
    if len(warps.launches) > 1:
        for kernel, count in kernels.items():
            scopes = list(warps.across[kernel].values())
            lines.append(f"all {counted(count, 'launch', 'launches')} of {printable(kernel)}: "
                         f"{counted(max(scope.count for scope in scopes), 'warp run')}")
            lines += scope_table(warps, scopes, across=True)
    return lines


def scope_table(warps: WarpTrace, scopes: list[ScopeStats], across: bool) -> list[str]:
    """Scopes' statistics as aligned rows (numbers never cut), each followed by its stragglers."""
    rows = [[format_count(scope.count), *(warps.cycles_text(value) for value in (scope.min, scope.median, scope.p99,
                                                                                  scope.max))] for scope in scopes]
    titles = ["warps", "min", "median", "p99", "max"]
    cols = [Column(title, title, max(len(title), *(len(row[at]) for row in rows))) for at, title in enumerate(titles)]
    lines = ["  " + aligned_row(titles, cols, "scope")]
    for scope, cells in zip(scopes, rows):
        lines.append("  " + aligned_row(cells, cols, f"{printable(scope.name)}  slowest: "
                                        f"{stragglers_text(warps, scope, across)}"))
    return lines


def write_lines(lines: Iterator[str], out: TextIO) -> None:
    for line in lines:
        out.write(line + "\n")


def tree_text(display: Display) -> str:
    out = io.StringIO()
    write_lines(tree_lines(display), out)
    return out.getvalue()


def kernel_summary_lines(display: Display, limit: int | None = None) -> Iterator[str]:
    """The flat kernel summary as aligned text in display order; `limit` keeps the top rows. A trace's lanes come
    first (an instrumentation trace's warp statistics, with times at its SM clock when known: `run_clock_khz`)."""
    profile = display.profile
    yield header_line(profile)
    if profile.trace is not None:
        yield from trace_lines(profile.trace, profile.run_clock_khz)
    if profile.is_empty:
        return
    yield from bandwidth_notes(profile)
    cols = columns(profile, display.bars)
    yield aligned_row([c.title for c in cols], cols, "kernel")
    kernels = display.kernels()
    for kernel in kernels[:limit]:
        yield aligned_row(kernel_cells(profile, kernel, display.bars), cols, display.names.shown(kernel.name))
    if limit is not None and len(kernels) > limit:
        yield f"(+{counted(len(kernels) - limit, 'more kernel')})"


def kernel_summary_text(display: Display, limit: int | None = None) -> str:
    out = io.StringIO()
    write_lines(kernel_summary_lines(display, limit), out)
    return out.getvalue()
