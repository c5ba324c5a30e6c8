"""What a profile says, in words: the header line, per-device totals, a row's details, and the text, JSON and CSV
outputs. Every output reads the tree through a `Display`, so names, order and numbers are the table's."""

from __future__ import annotations

import csv
import io
import textwrap
from collections.abc import Iterator
from typing import TYPE_CHECKING, TextIO

import orjson

from proton_tui import JSON_SCHEMA
from proton_tui.console import printable, without_escapes
from proton_tui.hatchet import KernelStats, Profile
from proton_tui.hatchet.cycles import LOAD_CAUTION, UNATTRIBUTED, ScopeNumbers, scope_numbers
from proton_tui.hatchet.profile import NO_UNIT
from proton_tui.view.display import Display
from proton_tui.view.formatting import (
    Column,
    aligned_row,
    columns,
    counted,
    cycles_number,
    format_count,
    format_gbps,
    format_mhz,
    format_percent,
    format_value,
    kernel_cells,
    node_cells,
)
from proton_tui.view.names import Names
from proton_tui.view.warps import TRACE_UNITS, Warp, cycles_of

if TYPE_CHECKING:
    from proton_tui.hatchet.trace import Trace
    from proton_tui.view.warps import ScopeStats, WarpTrace

NO_METRICS_NOTE = "(none: a scope or frame; its numbers are its children's sums)"


def json_text(document) -> str:
    """A JSON document as every command prints it: indented, one trailing newline."""
    return orjson.dumps(document, default=str, option=orjson.OPT_INDENT_2).decode() + "\n"


def bandwidth_notes(profile: Profile) -> list[str]:
    """A line for each kernel that moves more than its device's DRAM peak: its working set is cache-resident, so
    its % of peak is not DRAM bandwidth. Its GB/s is kernel time as Proton measured it, not the payload's own
    host-timed `gbps=` (a loop that includes launch overhead)."""
    notes = []
    for kernel in profile.kernel_stats() if profile.has_bytes else []:
        share = profile.kernel_peak_percent(kernel)
        if share is not None and share > 100:
            per_launch = kernel.bytes / kernel.launches if kernel.launches else kernel.bytes
            notes.append(printable(
                f"note: {kernel.name} moves {format_percent(share)} of the DRAM peak: its working set "
                f"({per_launch:,.0f} bytes a launch) is served from cache, so % peak is not DRAM bandwidth here; "
                "GB/s is kernel time from Proton, not the payload's host-timed gbps="))
    return notes


def device_lines(profile: Profile) -> list[str]:
    """Why the devices are called as they are (a pinned run), then per-device kernel totals and the warnings of a
    multi-device capture (nothing more for a single device)."""
    note = [printable(f"device: {profile.device_note}")] if profile.device_note else []
    if len(profile.kernel_devices()) < 2:
        return note
    totals = profile.device_totals()
    shares = "  ".join(
        f"{device or 'no device'} {format_value(value, profile.unit)} ({format_percent(profile.percent(value))})"
        for device, value in totals.items()
    )
    return note + [printable(line) for line in
                   [f"per device: {shares}"] + [f"warning: {warning}" for warning in profile.device_warnings()]]


def node_details(display: Display, node: int) -> list[tuple[str, str]]:
    """Everything known about one node, as (label, value) pairs: names, numbers, derived metrics, raw metrics."""
    profile, unit = display.profile, display.profile.unit
    raw_name, readable = profile.names[node], display.names.readable_name(profile.names[node])
    rows = [("name", raw_name)]
    if readable != raw_name:
        rows.append(("readable", readable))
    rows.append(("time" if unit == "ns" else "cycles", f"{format_value(profile.inclusive[node], unit)} "
                 f"({format_percent(profile.percent(profile.inclusive[node]))} of the capture)"))
    if unit != "cycles":
        rows.append(("launches", format_count(profile.launches[node])))
    elif (numbers := scope_numbers(profile, node)) is not None:
        rows += cycle_rows(profile, numbers, profile.is_derived(node))
    if profile.launches[node]:
        rows.append(("avg", format_value(profile.avg(node), unit)))
    if profile.devices[node]:
        rows.append(("device", profile.devices[node]))
    if profile.gbps(node) is not None:
        peak = profile.peak_bytes_per_s(profile.devices[node])
        share = profile.peak_percent(node)
        bandwidth = f"{format_gbps(profile.gbps(node))} GB/s"
        if peak:
            bandwidth += f", {format_percent(share)} of the {peak / 1e9:,.0f} GB/s peak in device_info"
            if share and share > 100:
                bandwidth += " (above the HBM peak: the working set is likely cache-resident)"
        rows.append(("bandwidth", bandwidth))
    rows += [(f"TFLOP/s ({'fp' + key[5:] if key[5:] else 'flops'})", f"{value:,.3f}")
             for key, value in profile.tflops(node).items()]
    if node == 0:  # what the capture as a whole calls for: the notes the text outputs print under their header
        for line in device_lines(profile) + bandwidth_notes(profile) + cycle_notes(profile):
            label, _, text = line.partition(": ")
            rows.append((label, text))
    metrics = profile.node_metrics(node)
    raw = ", ".join(f"{key}={value}" for key, value in sorted(metrics.items()))
    if profile.is_derived(node):
        raw = f"{raw} (derived, not in the capture)"
    if node == 0 and raw and not any(metrics.values()):  # Proton's zeros on ROOT: the time above is computed
        rows.append(("Proton's hints", f"{raw} (placeholders Proton writes on ROOT; the totals above are the "
                                         "sums of its children)"))
    else:
        rows.append(("metrics", raw or NO_METRICS_NOTE))
    rows.append(("path", profile.path_of(node, display.names.shown)))
    return rows


def kernel_details(display: Display, kernel: KernelStats) -> list[tuple[str, str]]:
    """A kernel-summary row's details, as (label, value) pairs."""
    profile, unit = display.profile, display.profile.unit
    rows = [("kernel", kernel.name)]
    readable = display.names.readable_name(kernel.name)
    if readable != kernel.name:
        rows.append(("readable", readable))
    rows += [
        ("time" if unit == "ns" else "cycles",
         f"{format_value(kernel.value, unit)} ({format_percent(profile.percent(kernel.value))} of the capture)"),
        ("launches", format_count(kernel.launches)),
        ("devices", ", ".join(kernel.devices) or "no device"),
    ]
    if kernel.avg is not None:
        rows.insert(-1, ("avg", format_value(kernel.avg, unit)))
    if kernel.gbps is not None:
        rows.append(("bandwidth", f"{format_gbps(kernel.gbps)} GB/s"))
    return rows


def details_text(rows: list[tuple[str, str]], width: int | None = None) -> str:
    """(label, value) pairs as aligned lines, every value printable (names and metric keys are the capture's); with
    `width`, a long value wraps within that width under itself, never back under the labels."""
    labels = max((len(label) for label, _ in rows), default=0)
    room = None if width is None else max(width - labels - 2, 20)
    lines = []
    for label, value in rows:
        pieces = [printable(value)] if room is None else textwrap.wrap(
            printable(value), room, break_long_words=True, break_on_hyphens=False) or [""]
        lines.append(f"{label.rjust(labels)}  {pieces[0]}")
        lines += [" " * (labels + 2) + piece for piece in pieces[1:]]
    return "\n".join(lines)


def header_line(profile: Profile) -> str:
    """One line: file, total GPU time, launches, kernels, devices (file and device names printable)."""
    name = printable(profile.path.name)
    if profile.reference_total is not None and profile.is_root_only:
        return f"{name}: no node matches the filter"
    if profile.is_root_only:
        return f"{name}: Proton recorded no kernels"
    if profile.is_empty:
        scopes = profile.node_count - 1
        return printable(f"{name}: no kernel time recorded; {scopes} scope{'s' if scopes != 1 else ''} with their "
                         "metrics")
    total = format_value(profile.total, profile.unit)
    label = "GPU time" if profile.unit == "ns" else "GPU cycles"
    devices = ", ".join(profile.device_names()) or ("none in a trace" if profile.trace is not None
                                                    else "no device listed")
    launches = counted(profile.kernel_launches, "launch", "launches")
    if profile.unit == "cycles":  # Proton's instrumentation tree records no launches: say where a count comes from
        facts = profile.cycle_facts
        launches = (f"{counted(facts.launches, 'launch', 'launches')} ({facts.source})"
                    if facts is not None and facts.launches else "launches not recorded")
    return printable(f"{name}  {label} {total}  {launches}  {counted(profile.kernel_count, 'kernel')}  "
                     f"devices: {devices}")


def cycle_notes(profile: Profile) -> list[str]:
    """What an instrumentation capture's numbers mean, and what they cannot say: a line each."""
    if profile.unit != "cycles":
        return []
    facts = profile.cycle_facts
    shown = [(node, numbers) for node in range(profile.node_count)
             if (numbers := scope_numbers(profile, node)) is not None]
    notes = ["note: cycles are summed over every CTA, warp and launch; " + (
        "per warp divides them by the warps the trace holds (only those recorded)" if profile.trace is not None else
        "per warp divides them by the warps recorded (Proton's normalized_cycles divides by every warp of every CTA)")]
    if facts is not None and facts.launches:
        notes.append(f"note: per warp·launch divides per warp by the {counted(facts.launches, 'launch', 'launches')} "
                     f"({facts.source})")
    else:
        notes.append("note: the capture does not record how many launches it sums: per warp is every launch's "
                     "total (a run's run.json beside the capture gives the count)")
    sampled = next((numbers.sampling for _, numbers in shown if numbers.sampling), None)
    if sampled:
        notes.append(f"note: {sampled[0]} of {sampled[1]} warps recorded in each CTA ({facts.source}): Proton's "
                     f"normalized_cycles divides by all {sampled[1]}, so per warp is corrected "
                     f"(×{sampled[1] / sampled[0]:g})")
    elif facts is not None and facts.sampled_warps and profile.trace is None:
        notes.append(f"note: {facts.sampled_warps} warps of each CTA were recorded ({facts.source}), but how many "
                     "CTAs and warps each launch ran is unknown: per warp (Proton's normalized_cycles, divided by "
                     "every warp) is too small, by the share of warps not recorded")
    elif facts is None or not facts.sampling_known:
        notes.append("note: whether warps were sampled is not recorded: if they were, per warp is too small (Proton "
                     "divides by every warp)")
    clocks = {numbers.clock_khz for _, numbers in shown if numbers.clock_khz}
    if clocks:
        mhz = ", ".join(format_mhz(clock) for clock in sorted(clocks))
        notes.append(f"note: times are cycles at the SM clock in device_info ({mhz}, the maximum): at a lower clock "
                     "the same cycles take longer")
    else:
        notes.append("note: the capture gives no SM clock: cycles only")
    if any(profile.is_derived(node) for node in range(profile.node_count)):
        notes.append(f"note: {UNATTRIBUTED} is a scope's cycles its child scopes do not cover (index math, masking, "
                     "the waits between scopes)")
    for name in sorted({profile.names[node] for node, numbers in shown if numbers.caution}):
        notes.append(printable(f"caution: {name}: {LOAD_CAUTION}"))
    return notes


def cycle_rows(profile: Profile, numbers: ScopeNumbers, derived: bool = False) -> list[tuple[str, str]]:
    """A scope's cycle numbers as (label, value) detail rows."""
    rows = []
    if derived:
        rows.append(("derived", "the parent scope's cycles its child scopes do not cover: index math, masking, "
                                "the waits between scopes"))
    if numbers.per_warp is not None:
        if profile.trace is not None:  # worked out here: a trace has no normalized_cycles
            proton = f"cycles ÷ the {numbers.divisor:,} warps the trace holds"
        else:
            proton = (f"Proton's normalized_cycles ÷ {numbers.divisor:,} CTAs × warps" if numbers.divisor
                      else "Proton's normalized_cycles")
        if numbers.sampling:
            recorded, warps = numbers.sampling
            rows.append(("per warp", f"{format_value(numbers.per_warp, 'cycles')}, corrected: {recorded} of "
                                     f"{warps} warps recorded in each CTA; {proton} "
                                     f"({format_value(numbers.normalized, 'cycles')}) counts all {warps}"))
        else:
            rows.append(("per warp", f"{format_value(numbers.per_warp, 'cycles')} ({proton}), every launch summed"))
    if numbers.per_launch is not None:
        at = (f" = {format_value(numbers.time_ns, 'ns')} at {format_mhz(numbers.clock_khz)}"
              if numbers.time_ns is not None else "")
        rows.append(("per warp·launch", f"{format_value(numbers.per_launch, 'cycles')}{at} "
                                        f"({counted(numbers.launches, 'launch', 'launches')})"))
    elif numbers.time_ns is not None:
        rows.append(("warp time", f"{format_value(numbers.time_ns, 'ns')} at {format_mhz(numbers.clock_khz)}, "
                                  "every launch summed (launches not recorded)"))
    if numbers.caution:
        rows.append(("caution", numbers.caution))
    return rows


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
    for number, lane in enumerate(trace.lanes):
        if warps is not None and number in warps.lane_of:
            continue
        kernels = trace.lane_events(number)
        others = [event for event in trace.lane_events(number, None) if event.category != "kernel"]
        parts = [printable(lane.name)]
        if kernels:
            busy, gaps = trace.busy(number)
            active = max(event.end for event in kernels) - min(event.start for event in kernels)
            parts.append(f"busy {format_value(busy, 'ns')} of {format_value(active, 'ns')} "
                         f"({format_percent(100.0 * busy / active if active else 100.0)})")
            parts.append(counted(len(kernels), "kernel"))
            if gaps:
                largest = max(gaps, key=lambda gap: gap[1] - gap[0])
                parts.append(f"idle {format_value(sum(end - start for start, end in gaps), 'ns')} in "
                             f"{counted(len(gaps), 'gap')}, the longest {format_value(largest[1] - largest[0], 'ns')} "
                             f"at {format_value(largest[0], 'ns')}")
        if others:
            kinds = sorted({event.category or "event" for event in others})
            parts.append(counted(len(others), " and ".join(kinds) + " event"))
        lines.append("  " + "  ".join(parts))
    if warps is not None:
        lines += warp_lines(warps)
    return lines


STRAGGLERS_SHOWN = 4  # stragglers named per scope in text; JSON has them all


def warp_lines(warps: WarpTrace) -> list[str]:
    """Per launch, then per kernel across its launches: each scope's cycles across warps (count, min, median, p99,
    max) and its slowest warps named."""
    kernels = {launch.kernel: launch.ordinal for launch in warps.launches}
    lines = ["warps: " + ", ".join(f"{counted(count, 'launch', 'launches')} of {printable(kernel)}"
                                   for kernel, count in kernels.items())
             + f"; {warps.clock_note}; p99 by nearest rank"]
    for launch in warps.launches:
        lines.append(f"launch {launch.number} of {len(warps.launches)} ({printable(launch.kernel)}): "
                     f"{counted(launch.ctas, 'CTA')} on {counted(len(launch.sms), 'SM')}, "
                     f"{counted(len(launch.warps), 'warp')}, {cycles_number(launch.end - launch.start)} trace units "
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


def stragglers_text(warps: WarpTrace, scope: ScopeStats, across: bool, shown: int = STRAGGLERS_SHOWN) -> str:
    """The first `shown` stragglers ("CTA 10 warp 1 (SM 4) 1,331 cyc", with its launch when `across`), and how many
    more there are."""
    named = [f"{sample.warp.name}{f' in launch {sample.launch}' if across else ''} {warps.cycles_text(sample.cycles)}"
             for sample in scope.stragglers[:shown]]
    more = len(scope.stragglers) - shown
    return ", ".join(named) + (f" (+{format_count(more)} more)" if more > 0 else "")


def empty_hidden_text(count: int) -> str:
    """What the views say of the empty frames they hide."""
    return f"{counted(count, 'empty frame')} hidden: nothing recorded below them"


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


def kernel_records(display: Display) -> list[dict]:
    """The kernel summary in display order as plain records: `name` exact as the capture has it, `readable_name`
    as people read it; `value` and `avg` in the document's unit."""
    profile = display.profile
    return [
        {
            "name": kernel.name,
            "readable_name": display.names.readable_name(kernel.name),
            "value": kernel.value,
            "percent": round(profile.percent(kernel.value), 4),
            "launches": None if profile.unit == "cycles" else kernel.launches,  # an instrumentation tree has none
            "avg": kernel.avg,
            "bytes": kernel.bytes or None,
            "gbps": kernel.gbps,
            "peak_percent": profile.kernel_peak_percent(kernel),
            "devices": list(kernel.devices),
        }
        for kernel in display.kernels()
    ]


def tree_records(display: Display) -> list[dict]:
    """The tree's shown rows in display order as plain records; `value` and `avg` in the document's unit."""
    profile = display.profile
    return [
        {
            "depth": profile.depths[node],
            "path": profile.path_of(node, display.names.exact),
            "name": profile.names[node],
            "readable_name": display.names.readable_name(profile.names[node]),
            "value": profile.inclusive[node],
            "percent": round(profile.percent(profile.inclusive[node]), 4),
            "launches": None if profile.unit == "cycles" else profile.launches[node],
            "avg": profile.avg(node) if profile.launches[node] else None,
            "gbps": profile.gbps(node),
            "peak_percent": profile.peak_percent(node),
            "device": profile.devices[node] or None,
        }
        for node in display.walk()
    ]


def json_unit(profile: Profile) -> str | None:
    """What every `value`/`avg` of a document is in: "ns", "cycles", or None when the capture has neither."""
    return None if profile.unit == NO_UNIT else profile.unit


def summary_json(display: Display) -> dict:
    """Metrics summary, totals and kernel summary in one document (a trace's lanes too; an instrumentation trace's
    warp statistics, with times at its SM clock when known: `Profile.run_clock_khz`)."""
    profile = display.profile
    return {
        "schema": JSON_SCHEMA,
        "file": str(profile.path),
        "unit": json_unit(profile),
        "empty": profile.is_empty,
        "total": profile.total,
        "kernel_launches": profile.kernel_launches,
        "distinct_kernels": profile.kernel_count,
        "devices": profile.device_names(),
        "device_totals": profile.device_totals(),
        "nodes": profile.node_count,
        "hidden_internal_nodes": profile.hidden_internal,
        "empty_nodes": profile.empty_count(),
        "metrics_summary": profile.metrics_summary(),
        "kernels": kernel_records(display),
        **({"trace": trace_record(profile.trace, profile.run_clock_khz)} if profile.trace is not None
           else {}),
        "instrumentation": instrumentation_record(display) if profile.unit == "cycles" else None,
    }


def instrumentation_record(display: Display) -> dict:
    """An instrumentation capture's derived numbers: what its run says, and each scope's cycles per warp and per
    launch, and time at the SM clock (null where unknown)."""
    profile = display.profile
    facts = profile.cycle_facts
    scopes = []
    sampled = None
    for node in display.walk():
        numbers = scope_numbers(profile, node)
        if numbers is None:
            continue
        sampled = sampled or numbers.sampling
        scopes.append({
            "path": profile.path_of(node, display.names.exact), "name": profile.names[node],
            "derived": profile.is_derived(node), "cycles": numbers.cycles, "normalized_cycles": numbers.normalized,
            "divisor": numbers.divisor, "per_warp": numbers.per_warp, "per_warp_per_launch": numbers.per_launch,
            "time_ns": numbers.time_ns, "clock_khz": numbers.clock_khz, "caution": numbers.caution,
        })
    return {
        "launches": facts.launches if facts else None,
        "source": facts.source if facts else None,
        "sampling_known": bool(facts and facts.sampling_known),
        "sampled_warps": list(sampled) if sampled else None,
        "scopes": scopes,
    }


def event_details(trace: Trace, index: int, names: Names, warps: WarpTrace | None = None) -> list[tuple[str, str]]:
    """One event of a trace as (label, value) pairs: lane, when, how long, the idle time before it on its lane, what
    launched it, how often its kernel ran, then its name, call stack and arguments. A scope of an instrumentation
    trace's warp (given its `warps`) gets `warp_event_details`."""
    if warps is not None and index in warps.launch_of:
        return warp_event_details(warps, index)
    event = trace.events[index]
    # the numbers first: a kernel's readable name can fill the pane on its own
    rows = [("lane", trace.lanes[event.lane].name), ("kind", event.category or "event"),
            ("start", f"{format_value(event.start, 'ns')} after the trace's first event"),
            ("duration", format_value(event.duration, "ns")), ("end", format_value(event.end, "ns"))]
    if (idle := trace.idle_before(index)) is not None:
        rows.append(("idle before", f"{format_value(idle, 'ns')} on its lane"))
    if (launched := trace.launches.get(index)) is not None:
        launch = trace.events[launched]
        rows.append(("launched", f"from {trace.lanes[launch.lane].name} at {format_value(launch.start, 'ns')} "
                                 f"({format_value(event.start - launch.start, 'ns')} before it ran)"))
    if event.category == "kernel":
        same = trace.launches_of(event.name)
        rows.append(("launches", f"{counted(len(same), 'launch', 'launches')} of this kernel in the trace (n/N)"))
    rows.append(("name", names.readable_name(event.name)))
    if event.call_stack:
        rows.append(("call stack", " / ".join(names.shown(frame) for frame in event.call_stack)))
    if event.args:
        rows.append(("args", ", ".join(f"{key}={value}" for key, value in sorted(event.args.items()))))
    if names.readable_name(event.name) != event.name:
        rows.append(("raw name", event.name))
    return rows


def warp_event_details(warps: WarpTrace, index: int) -> list[tuple[str, str]]:
    """A warp's scope, in cycles: which scope, warp and launch; its cycles against the other warps' (rank, min,
    median, p99, max); the scope's stragglers (n/N goes to them); the same over all launches; the clock."""
    event = warps.trace.events[index]
    lane, launch = warps.lane_of[event.lane], warps.launch_at(index)
    scope = launch.scopes[event.name]
    cycles = cycles_of(event.duration)
    faster = scope.rank_of(cycles)
    standing = f"the slowest of {format_count(scope.count)} warps" if cycles >= scope.max else \
        f"slower than {format_count(faster)} of {format_count(scope.count)} warps"
    rows = [("scope", f"{printable(event.name)} in launch {launch.number} of {len(warps.launches)} "
                      f"({printable(launch.kernel)})"),
            ("warp", f"{Warp(lane.sm, lane.cta, lane.warp).name}, line {lane.line}"),
            ("cycles", f"{warps.cycles_text(cycles)}: {standing}; from "
                       f"{warps.cycles_text(cycles_of(event.start) - launch.start)} into the launch"),
            ("warps", stats_text(warps, scope)),
            ("stragglers", stragglers_text(warps, scope, across=False) + "  (n/N)")]
    if len(warps.launches) > 1 and (overall := warps.across[launch.kernel].get(event.name)) is not None:
        rows.append(("all launches", stats_text(warps, overall)))
    rows.append(("clock", warps.clock_note))
    return rows


def stats_text(warps: WarpTrace, scope: ScopeStats) -> str:
    """"64: min 969  median 1,117  p99 1,331  max 1,331 cyc", each with its time when the clock is known."""
    if warps.clock_khz:
        values = "  ".join(f"{label} {warps.cycles_text(value)}" for label, value in
                           (("min", scope.min), ("median", scope.median), ("p99", scope.p99), ("max", scope.max)))
    else:  # the unit once
        values = "  ".join(f"{label} {cycles_number(value)}" for label, value in
                           (("min", scope.min), ("median", scope.median), ("p99", scope.p99), ("max", scope.max)))
        values += " cyc"
    return f"{format_count(scope.count)}: {values}"


def trace_record(trace: Trace, clock_khz: int | None = None) -> dict:
    """A trace's lanes for scripts: name, kind, busy time, idle gaps (start, end), kernels; times in ns from the
    trace's first event. An instrumentation trace adds `warps` (`warps_record`)."""
    from proton_tui.view.warps import warp_trace

    lanes = []
    for number, lane in enumerate(trace.lanes):
        busy, gaps = trace.busy(number)
        lanes.append({"name": lane.name, "kind": lane.kind, "kernels": len(trace.lane_events(number)), "busy": busy,
                      "idle": sum(end - start for start, end in gaps), "gaps": [list(gap) for gap in gaps]})
    record = {"span": trace.end - trace.start, "base_ns": trace.base_ns, "flows": trace.flow_count, "lanes": lanes}
    if (warps := warp_trace(trace, clock_khz)) is not None:
        record["warps"] = warps_record(warps)
    return record


def warps_record(warps: WarpTrace) -> dict:
    """An instrumentation trace's launches and their scopes' statistics across warps, in cycles (`us`: the same at
    the SM clock, null when it is unknown); stragglers all named."""

    def scope_record(scope: ScopeStats) -> dict:
        numbers = {"min": scope.min, "median": scope.median, "p99": scope.p99, "max": scope.max}
        return {"name": scope.name, "count": scope.count, **numbers,
                "us": {key: warps.micros(value) for key, value in numbers.items()} if warps.clock_khz else None,
                "stragglers": [{"name": sample.warp.name, "sm": sample.warp.sm, "cta": sample.warp.cta,
                                "warp": sample.warp.warp, "launch": sample.launch, "cycles": sample.cycles}
                               for sample in scope.stragglers]}

    return {
        "clock_khz": warps.clock_khz,
        "p99": "nearest rank",
        "launches": [{"number": launch.number, "kernel": launch.kernel, "ordinal": launch.ordinal,
                      "start": launch.start, "end": launch.end, "sms": len(launch.sms), "ctas": launch.ctas,
                      "warps": len(launch.warps), "scopes": [scope_record(scope) for scope in launch.scopes.values()]}
                     for launch in warps.launches],
        "across_launches": {kernel: [scope_record(scope) for scope in scopes.values()]
                            for kernel, scopes in warps.across.items()},
    }


def csv_text(display: Display, records: list[dict], fields: list[str]) -> str:
    """Records as CSV with a header row: names under the display's rule and exact (quoted where CSV needs it) but
    for what could start a terminal control sequence (ESC), a list as space-separated words."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    unit = json_unit(display.profile)
    for record in records:
        row = {**record, "name": display.names.exact(record["name"]), "unit": unit}
        if isinstance(row.get("devices"), list):
            row["devices"] = " ".join(row["devices"])
        writer.writerow({key: _csv_cell(value) for key, value in row.items()})
    return out.getvalue()


def _csv_cell(value):
    """One number format: a whole number as an integer (39661509, not 39661509.0), any other float exactly as
    Python writes it; text exact but for what could start a terminal control sequence."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return without_escapes(value) if isinstance(value, str) else value


def kernel_csv(display: Display) -> str:
    """The kernel summary as CSV."""
    fields = ["name", "value", "unit", "percent", "launches", "avg", "bytes", "gbps", "peak_percent", "devices"]
    return csv_text(display, kernel_records(display), fields)


def tree_csv(display: Display) -> str:
    """The tree's shown rows as CSV."""
    fields = ["depth", "path", "name", "value", "unit", "percent", "launches", "avg", "gbps", "peak_percent",
              "device"]
    return csv_text(display, tree_records(display), fields)
