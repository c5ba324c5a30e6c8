"""The one way numbers are written, for the TUI, the text outputs, Markdown export and diff alike; and the numeric
columns, each as wide as its widest cell can be, so no view ever cuts a digit."""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from rich.cells import cell_len, set_cell_size

from proton_tui.console import printable
from proton_tui.hatchet import KernelStats, Profile
from proton_tui.hatchet.cycles import ScopeNumbers, kernel_numbers, scope_numbers

# The largest value of each unit step before rounding carries it into the next one ("999.996 µs" is "1000.00 µs"):
# the widest a time cell gets below a given value.
UNIT_EDGES = (999.9, 999_999.9, 999_999_999.9)


def format_value(value: float, unit: str) -> str:
    """A time in ns as ns, µs, ms or s with two decimals, or a cycle count; nothing where the capture records
    neither."""
    if unit == "none":
        return ""
    if unit == "cycles":
        return f"{cycles_number(value)} cyc"
    if value < 1e3:
        return f"{value:.0f} ns"
    for scale, suffix in ((1e6, "µs"), (1e9, "ms")):
        if value < scale:
            return f"{value / scale * 1e3:.2f} {suffix}"
    if isinstance(value, int) and value > FLOAT_EXACT:
        return f"{_hundredths(value, 10**9)} s"
    return f"{value / 1e9:,.2f} s"


def format_tick(value: float, step: float) -> str:
    """A time ruler's label: `value` ns in the unit format_value gives it, with the decimals (two at least, none for
    ns) that tell labels `step` ns apart, so a zoomed ruler never repeats a label."""
    scale, suffix, decimals = next(((scale, suffix, 2) for scale, suffix in ((1e3, "µs"), (1e6, "ms"))
                                    if value < scale * 1e3), (1e9, "s", 2)) if value >= 1e3 else (1.0, "ns", 0)
    if step > 0:
        decimals = max(decimals, math.ceil(-math.log10(step / scale)))
    return f"{value / scale:{',' if suffix == 's' else ''}.{decimals}f} {suffix}"


def format_window(start: float, end: float, cell: float) -> tuple[str, str]:
    """A timeline's window, its ends in ns with the decimals that tell one cell from the next (so they never read
    alike), and its cell's span with two figures at least ("1.7 ns", never "0 ns")."""
    return f"{format_tick(start, cell)} – {format_tick(end, cell)}", format_tick(cell, cell / 10)


def format_mean(value: float, count: int, unit: str) -> str:
    """`value` / `count` as format_value writes it; a large integer's mean divided exactly (no float between)."""
    if unit == "ns" and isinstance(value, int) and value > FLOAT_EXACT * count:
        return f"{_hundredths(value, 10**9 * count)} s"
    return format_value(value / count, unit)


FLOAT_EXACT = 2**53  # the largest integer up to which every integer is a float: past it, integers are divided exactly


def _hundredths(value: int, scale: int) -> str:
    """`value` / `scale` with two decimals, computed on integers (rounded half to even, as a float's format)."""
    whole, cents = divmod(round(Fraction(value * 100, scale)), 100)
    return f"{whole:,}.{cents:02d}"


def cycles_number(cycles: float) -> str:
    """Cycles without their unit: a count whole, a mean or a median between two warps with one decimal."""
    if isinstance(cycles, int):
        return f"{cycles:,}"
    return f"{cycles:,.0f}" if cycles == int(cycles) else f"{cycles:,.1f}"



NOT_RECORDED = "—"  # a count the capture does not record (an instrumentation tree's launches)


def format_count(count: int | None) -> str:
    return NOT_RECORDED if count is None else f"{count:,}"


def counted(count: int, word: str, plural: str | None = None) -> str:
    """A count with its noun in the right number: "1 kernel", "2 kernels", "16,415,098 launches"."""
    return f"{format_count(count)} {word if count == 1 else plural or word + 's'}"


def aligned_table(rows, right=()) -> list[str]:
    """Rows of text cells as aligned lines, two spaces apart: the columns numbered in `right` right-aligned, the
    others left-aligned; trailing spaces dropped."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
                      for i, cell in enumerate(row)).rstrip() for row in rows]


def one_line(parts: list[str], width: int, cut_last: bool = False) -> str:
    """Parts joined by two spaces on one line of at most `width` cells: the first always (cut with "…" if it must
    be), then the next ones while they fit; "…" at the end says the rest were left out. With `cut_last` the last
    part (a path, say: never a number) is cut in its middle to fit rather than left out."""
    if not parts or width <= 0:
        return ""
    line = parts[0] if cell_len(parts[0]) <= width else set_cell_size(parts[0], width - 1) + "…"
    for index, part in enumerate(parts[1:], 1):
        last = index == len(parts) - 1
        room = width - cell_len(line) - 2
        if cell_len(part) + (0 if last else 3) > room:
            if last and cut_last and room >= MIN_CUT:
                return line + "  " + middle_cut(part, room)
            return line + "  …" if cell_len(line) + 3 <= width else line
        line += "  " + part
    return line


def wrapped_parts(parts: list[str], width: int, lines: int = 2) -> list[str]:
    """Parts joined by two spaces on at most `lines` lines of `width` cells, whole parts in order, a part starting a
    line cut with "…" only when it alone is wider; what the last line cannot hold is left out, as `one_line` does."""
    shown: list[str] = []
    rest = list(parts)
    while rest and len(shown) < lines - 1:
        line, taken = one_line(rest[:1], width), 1
        while taken < len(rest) and cell_len(line) + 2 + cell_len(rest[taken]) <= width:
            line, taken = line + "  " + rest[taken], taken + 1
        shown.append(line)
        rest = rest[taken:]
    return shown + ([one_line(rest, width)] if rest else [])


MIN_CUT = 12  # cells a part cut in its middle keeps at least (fewer say nothing)


def middle_cut(text: str, width: int) -> str:
    """`text` in `width` cells, its middle replaced by "…" when it is wider (a path keeps its start and its file)."""
    if cell_len(text) <= width:
        return text
    tail = (width - 1) // 2 + (width - 1) % 2
    head = width - 1 - tail
    end = text[-tail:] if tail else ""
    while cell_len(end) > tail:
        end = end[1:]
    return set_cell_size(text, head).rstrip() + "…" + end


def format_percent(percent: float | None) -> str:
    return "" if percent is None else f"{percent:.1f}%"


def format_gbps(gbps: float | None) -> str:
    return "" if gbps is None else f"{gbps:,.1f}"


def format_delta(delta: float, unit: str) -> str:
    """A signed change: "+1.20 µs", "-30.05 µs", "0 ns"."""
    sign = "+" if delta > 0 else "-" if delta < 0 else ""
    return sign + format_value(abs(delta), unit)


def format_ratio(ratio: float | None) -> str:
    return "" if ratio is None else f"{ratio:,.2f}x"


def value_width(largest: float, unit: str) -> int:
    """The widest cell format_value writes for any value up to `largest`."""
    candidates = [largest] + ([edge for edge in UNIT_EDGES if edge <= largest] if unit == "ns" else [])
    if unit == "cycles":  # a mean just under a whole largest value has as many digits and a decimal more
        candidates.append(max(largest - 0.5, 0.5))
    return max(len(format_value(value, unit)) for value in candidates)


BAR_WIDTH = 8  # cells of a share bar: 100 % fills them, an eighth of a cell is 1.5625 %
EIGHTHS = " ▏▎▍▌▋▊▉█"


def share_bar(percent: float, width: int = BAR_WIDTH) -> str:
    """A share of 0–100 % as a bar of eighth-cell blocks, `width` cells long; any share above zero shows at least
    an eighth, so a small one is still seen (the % beside it is the number)."""
    eighths = round(max(0.0, min(percent, 100.0)) / 100.0 * width * 8)
    if percent > 0 and eighths == 0:
        eighths = 1
    full, part = divmod(eighths, 8)
    return ("█" * full + (EIGHTHS[part] if part else "")).ljust(width)


@dataclass(frozen=True)
class Column:
    """A numeric column: what it shows (`key`, also the sort keys' reference), its title, its width, and whether it
    is right-aligned (numbers) or left (the share bar)."""

    key: str
    title: str
    width: int
    left: bool = False

    def align(self, cell: str, width: int | None = None) -> str:
        """`cell` padded to the column's width (or `width` cells), on its side."""
        width = self.width if width is None else width
        return cell.ljust(width) if self.left else cell.rjust(width)


def columns(profile: Profile, bars: bool = False) -> list[Column]:
    """The numeric columns this profile has (GB/s and % of peak only where it records bytes, the device on a
    multi-device capture; with `bars`, a share bar after the %), each wide enough for every cell of the tree and of
    the kernel summary."""
    unit = profile.unit
    largest = max(profile.inclusive, default=0.0)
    time_width = value_width(largest, unit)
    launches = max(max(profile.launches, default=0), profile.kernel_launches)
    cols = [
        Column("time", "cycles" if unit == "cycles" else "time", time_width),
        Column("percent", "%", len(format_percent(max(100.0, profile.percent(largest))))),
        *([Column("bar", "share", BAR_WIDTH, left=True)] if bars else []),
    ]
    if unit == "cycles":
        cols += cycle_columns(profile)
    else:
        cols += [Column("launches", "launches", len(format_count(launches))), Column("avg", "avg", time_width)]
    if profile.has_bytes:
        # A scope's or a kernel summary's bytes over time never exceed the largest node's: this bounds every cell.
        fastest = max((size / time for size, time in zip(profile.bytes, profile.inclusive) if size and time),
                      default=0.0)
        peaks = [peak for device in profile.device_names() if (peak := profile.peak_bytes_per_s(device))]
        top_share = 100.0 * fastest * 1e9 / min(peaks) if peaks else 0.0
        cols += [Column("gbps", "GB/s", len(format_gbps(fastest))),
                 Column("peak", "% peak", len(format_percent(top_share)))]
    if len(profile.device_names()) > 1:
        cols.append(Column("device", "device", len(printable(",".join(profile.device_names())))))
    return [Column(col.key, col.title, max(col.width, len(col.title)), col.left) for col in cols]


def format_mhz(clock_khz: float) -> str:
    """A clock given in kHz, in MHz exactly: "1,980 MHz", "1,980.5 MHz", "0.001 MHz" (a float kHz as the shortest
    decimal that reads back as it)."""
    khz = Decimal(clock_khz) if isinstance(clock_khz, int) else Decimal(repr(float(clock_khz)))
    return f"{(khz / 1000).normalize():,f} MHz"


def per_warp_title(profile: Profile) -> str:
    """The per-warp column: per launch where the launches are known, else every launch summed."""
    facts = profile.cycle_facts
    return "per warp·launch" if facts is not None and facts.launches else "per warp, all launches"


def clock_title(profile: Profile) -> str | None:
    """The time column's title, naming the SM clock it is at; None when the capture gives no clock."""
    clocks = profile.sm_clocks
    return None if not clocks else f"at {format_mhz(clocks[0])}" if len(clocks) == 1 else "at SM clock"


def cycle_columns(profile: Profile) -> list[Column]:
    """The columns a cycles capture has instead of launches and avg: cycles per warp (per launch when known), and
    that in time at the device's clock where the capture gives it."""
    shown = [numbers for node in range(profile.node_count) if (numbers := scope_numbers(profile, node)) is not None]
    per_warp = [value for numbers in shown if (value := _per_warp_shown(numbers)) is not None]
    times = [numbers.time_ns for numbers in shown if numbers.time_ns is not None]
    cols = [Column("per_warp", per_warp_title(profile), value_width(max(per_warp, default=0.0), "cycles"))]
    if (title := clock_title(profile)) is not None:
        cols.append(Column("warp_time", title, value_width(max(times, default=0.0), "ns")))
    return cols


def _per_warp_shown(numbers: ScopeNumbers) -> float | None:
    return numbers.per_launch if numbers.per_launch is not None else numbers.per_warp


def cycle_cells(profile: Profile, numbers: ScopeNumbers | None) -> list[str]:
    """A row's cells for cycle_columns (empty for a node without cycles of its own)."""
    per_warp = None if numbers is None else _per_warp_shown(numbers)
    cells = ["" if per_warp is None else format_value(per_warp, "cycles")]
    if clock_title(profile) is not None:
        cells.append("" if numbers is None or numbers.time_ns is None else format_value(numbers.time_ns, "ns"))
    return cells


def node_cells(profile: Profile, node: int, bars: bool = False) -> list[str]:
    """The numeric cells of one tree row, matching columns(profile, bars)."""
    unit = profile.unit
    share = profile.percent(profile.inclusive[node])
    cells = [
        format_value(profile.inclusive[node], unit),
        format_percent(share),
        *([share_bar(share)] if bars else []),
        *(cycle_cells(profile, scope_numbers(profile, node)) if unit == "cycles" else [
            format_count(profile.launches[node]),
            format_mean(profile.inclusive[node], profile.launches[node], unit) if profile.launches[node] else ""]),
    ]
    if profile.has_bytes:
        cells += [format_gbps(profile.gbps(node)), format_percent(profile.peak_percent(node))]
    if len(profile.device_names()) > 1:
        cells.append(printable(profile.devices[node]))
    return cells


def kernel_cells(profile: Profile, kernel: KernelStats, bars: bool = False) -> list[str]:
    """The numeric cells of one kernel-summary row, matching columns(profile, bars)."""
    unit = profile.unit
    share = profile.percent(kernel.value)
    cells = [
        format_value(kernel.value, unit),
        format_percent(share),
        *([share_bar(share)] if bars else []),
        *(cycle_cells(profile, kernel_numbers(profile, kernel.name)) if unit == "cycles" else [
            format_count(kernel.launches),
            "" if kernel.avg is None else format_mean(kernel.value, kernel.launches, unit)]),
    ]
    if profile.has_bytes:
        cells += [format_gbps(kernel.gbps), format_percent(profile.kernel_peak_percent(kernel))]
    if len(profile.device_names()) > 1:
        cells.append(printable(",".join(kernel.devices)))
    return cells


def aligned_row(cells: list[str], cols: list[Column], name: str) -> str:
    """Cells aligned in their columns (never cut: a column is as wide as its widest cell), then the name."""
    return "  ".join(col.align(cell) for cell, col in zip(cells, cols)) + "  " + name
