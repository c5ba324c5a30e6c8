"""What a row, a trace event or a warp scope says in the details pane and in text: the header line, per-device
totals, bandwidth and cycle notes."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from proton_tui.console import printable
from proton_tui.hatchet import KernelStats, Profile
from proton_tui.hatchet.cycles import LOAD_CAUTION, UNATTRIBUTED, ScopeNumbers, scope_numbers
from proton_tui.view.display import Display
from proton_tui.view.formatting import (
    counted,
    cycles_number,
    format_count,
    format_gbps,
    format_mean,
    format_mhz,
    format_percent,
    format_value,
)
from proton_tui.view.names import Names
from proton_tui.view.warp_units import Warp, cycles_of

if TYPE_CHECKING:
    from proton_tui.hatchet.trace import Trace
    from proton_tui.view.warps import ScopeStats, WarpTrace


NO_METRICS_NOTE = "(none: a scope or frame; its numbers are its children's sums)"


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


def name_rows(names: Names, raw: str, label: str = "name") -> list[tuple[str, str]]:
    """A name in its three forms, as (label, value) pairs: short under `label`, then the full and the raw forms
    where they differ from the one before; a C++ name the demangler could not read says so."""
    short, full = names.short(raw), names.full(raw)
    rows = [(label, short)]
    if full != short:
        rows.append(("full", full))
    if names.unreadable(raw):
        rows.append(("raw", f"{raw} (a C++ name the demangler could not read: every form shows it as it is)"))
    elif raw != full:
        rows.append(("raw", raw))
    return rows


def node_details(display: Display, node: int) -> list[tuple[str, str]]:
    """Everything known about one node, as (label, value) pairs: names, numbers, derived metrics, raw metrics."""
    profile, unit = display.profile, display.profile.unit
    rows = name_rows(display.names, profile.names[node])
    rows.append(("time" if unit == "ns" else "cycles", f"{format_value(profile.inclusive[node], unit)} "
                 f"({format_percent(profile.percent(profile.inclusive[node]))} of the capture)"))
    if unit != "cycles":
        rows.append(("launches", format_count(profile.launches[node])))
    elif (numbers := scope_numbers(profile, node)) is not None:
        rows += cycle_rows(profile, numbers, profile.is_derived(node))
    if profile.launches[node]:
        rows.append(("avg", format_mean(profile.inclusive[node], profile.launches[node], unit)))
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
    rows = name_rows(display.names, kernel.name, "kernel")
    rows += [
        ("time" if unit == "ns" else "cycles",
         f"{format_value(kernel.value, unit)} ({format_percent(profile.percent(kernel.value))} of the capture)"),
        ("launches", format_count(None if unit == "cycles" else kernel.launches)),
        ("devices", ", ".join(kernel.devices) or "no device"),
    ]
    if kernel.avg is not None:
        rows.insert(-1, ("avg", format_mean(kernel.value, kernel.launches, unit)))
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


STRAGGLERS_SHOWN = 4  # stragglers named per scope in text; JSON has them all


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
    forms = name_rows(names, event.name)
    rows.append(forms[0])
    if event.call_stack:
        rows.append(("call stack", " / ".join(names.shown(frame) for frame in event.call_stack)))
    if event.args:
        rows.append(("args", ", ".join(f"{key}={value}" for key, value in sorted(event.args.items()))))
    return rows + forms[1:]


def warp_event_details(warps: WarpTrace, index: int) -> list[tuple[str, str]]:
    """A warp's scope, in cycles: which scope, warp and launch; its cycles against the other warps' (rank, min,
    median, p99, max); the scope's stragglers (n/N goes to them); the same over all launches (once worked out: the
    viewer works them out after the first launch is drawn); the clock."""
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
    if len(warps.launches) > 1 and not warps.across_worked_out:  # its launches are worked out meanwhile
        rows.append(("all launches", f"{format_count(len(warps.launches))} launches being worked out…"))
    elif len(warps.launches) > 1 and (overall := warps.across[launch.kernel].get(event.name)) is not None:
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
