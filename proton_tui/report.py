"""Text, JSON and CSV renderings of a profile, and the cell formatting the TUI shares."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from .hatchet import KernelStats, Profile


def format_value(value: float, unit: str) -> str:
    """A time in ns as ns, µs, ms or s with two decimals, or a cycle count."""
    if unit == "cycles":
        return f"{value:,.0f} cyc"
    if value < 1e3:
        return f"{value:.0f} ns"
    for scale, suffix in ((1e6, "µs"), (1e9, "ms")):
        if value < scale:
            return f"{value / scale * 1e3:.2f} {suffix}"
    return f"{value / 1e9:.2f} s"


def format_percent(percent: float | None) -> str:
    return "" if percent is None else f"{percent:.1f}%"


def format_gbps(gbps: float | None) -> str:
    return "" if gbps is None else f"{gbps:,.1f}"


@dataclass(frozen=True)
class Column:
    """A right-aligned numeric column: its title and width."""

    title: str
    width: int


def columns(profile: Profile) -> list[Column]:
    """The numeric columns this profile has: GB/s and % of peak only where it records bytes."""
    time_title = "time" if profile.unit == "ns" else "cycles"
    cols = [Column(time_title, 11), Column("%", 7), Column("launches", 9), Column("avg", 11)]
    if profile.has_bytes:
        cols += [Column("GB/s", 10), Column("% peak", 7)]
    if len(profile.device_names()) > 1:
        cols.append(Column("device", 15))
    return cols


def node_cells(profile: Profile, node: int) -> list[str]:
    """The numeric cells of one tree row, matching columns(profile)."""
    unit = profile.unit
    cells = [
        format_value(profile.inclusive[node], unit),
        format_percent(profile.percent(profile.inclusive[node])),
        f"{profile.launches[node]:,}",
        format_value(profile.avg(node), unit) if profile.launches[node] else "",
    ]
    if profile.has_bytes:
        cells += [format_gbps(profile.gbps(node)), format_percent(profile.peak_percent(node))]
    if len(profile.device_names()) > 1:
        cells.append(profile.devices[node])
    return cells


def kernel_cells(profile: Profile, kernel: KernelStats) -> list[str]:
    """The numeric cells of one kernel-summary row, matching columns(profile)."""
    unit, gbps = profile.unit, kernel.gbps
    peaks = {profile.peak_bytes_per_s(device) for device in kernel.devices}
    peak = peaks.pop() if len(peaks) == 1 else None
    cells = [
        format_value(kernel.value, unit),
        format_percent(profile.percent(kernel.value)),
        f"{kernel.launches:,}",
        format_value(kernel.avg, unit),
    ]
    if profile.has_bytes:
        cells += [format_gbps(gbps), format_percent(100.0 * gbps * 1e9 / peak if gbps and peak else None)]
    if len(profile.device_names()) > 1:
        cells.append(",".join(kernel.devices))
    return cells


def device_lines(profile: Profile) -> list[str]:
    """Per-device kernel totals and the warnings of a multi-device capture (nothing for a single device)."""
    if len(profile.kernel_devices()) < 2:
        return []
    totals = profile.device_totals()
    shares = "  ".join(
        f"{device or 'no device'} {format_value(value, profile.unit)} ({format_percent(profile.percent(value))})"
        for device, value in totals.items()
    )
    return [f"per device: {shares}"] + [f"warning: {warning}" for warning in profile.device_warnings()]


def node_details(profile: Profile, node: int, readable_name: str | None = None) -> list[tuple[str, str]]:
    """Everything known about one node, as (label, value) pairs: names, numbers, derived metrics, raw metrics."""
    unit = profile.unit
    rows = [("name", profile.names[node])]
    if readable_name and readable_name != profile.names[node]:
        rows.append(("readable", readable_name))
    rows += [
        ("time" if unit == "ns" else "cycles", f"{format_value(profile.inclusive[node], unit)} "
         f"({format_percent(profile.percent(profile.inclusive[node]))} of the capture)"),
        ("launches", f"{profile.launches[node]:,}"),
    ]
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
    raw = ", ".join(f"{key}={value}" for key, value in sorted(profile.node_metrics(node).items()))
    rows.append(("metrics", raw or "(none: a scope or frame; its numbers are its children's sums)"))
    rows.append(("path", profile.path_of(node)))
    return rows


def header_line(profile: Profile) -> str:
    """One line: file, total GPU time, launches, kernels, devices."""
    if profile.is_empty:
        return f"{profile.path.name}: Proton recorded no kernels"
    total = format_value(profile.total, profile.unit)
    label = "GPU time" if profile.unit == "ns" else "GPU cycles"
    devices = ", ".join(profile.device_names()) or "no device listed"
    return (
        f"{profile.path.name}  {label} {total}  {profile.kernel_launches:,} launches  "
        f"{profile.kernel_count} kernels  devices: {devices}"
    )


def aligned_row(cells: list[str], cols: list[Column], name: str) -> str:
    return "  ".join(cell.rjust(col.width) for cell, col in zip(cells, cols)) + "  " + name


def tree_text(profile: Profile, shown: list[bool] | None = None) -> str:
    """The tree as aligned text: numeric columns first, then the indented name (never cut). `shown` (from
    Profile.shown) hides rows and their subtrees."""
    lines = [header_line(profile)]
    if profile.is_empty:
        return lines[0] + "\n"
    lines += device_lines(profile)
    cols = columns(profile)
    lines.append(aligned_row([c.title for c in cols], cols, "name"))
    stack = [(0, "", "")]
    while stack:
        node, prefix, branch = stack.pop()
        lines.append(aligned_row(node_cells(profile, node), cols, prefix + branch + profile.names[node]))
        kids = [kid for kid in profile.sorted_children(node) if shown is None or shown[kid]]
        child_prefix = prefix + ("" if node == 0 else ("   " if branch == "└─ " else "│  "))
        for index in range(len(kids) - 1, -1, -1):
            stack.append((kids[index], child_prefix, "└─ " if index == len(kids) - 1 else "├─ "))
    if profile.hidden_internal:
        lines.append(f"({profile.hidden_internal} internal Proton nodes hidden)")
    return "\n".join(lines) + "\n"


def kernel_summary_text(profile: Profile, limit: int | None = None) -> str:
    """The flat kernel summary as aligned text, largest first; `limit` keeps the top rows."""
    lines = [header_line(profile)]
    if profile.is_empty:
        return lines[0] + "\n"
    cols = columns(profile)
    lines.append(aligned_row([c.title for c in cols], cols, "kernel"))
    kernels = profile.kernel_stats()
    for kernel in kernels[:limit]:
        lines.append(aligned_row(kernel_cells(profile, kernel), cols, kernel.name))
    if limit is not None and len(kernels) > limit:
        lines.append(f"(+{len(kernels) - limit} more kernels)")
    return "\n".join(lines) + "\n"


def record_value_key(profile: Profile) -> str:
    """The field that holds a record's value: time_ns, or cycles for instrumentation captures."""
    return "time_ns" if profile.unit == "ns" else "cycles"


def kernel_records(profile: Profile, kernels: list[KernelStats] | None = None) -> list[dict]:
    """The kernel summary as plain records (JSON and CSV), in the given order (default: largest first)."""
    records, value_key = [], record_value_key(profile)
    for kernel in profile.kernel_stats() if kernels is None else kernels:
        record = {
            "name": kernel.name,
            value_key: kernel.value,
            "percent": round(profile.percent(kernel.value), 4),
            "launches": kernel.launches,
            f"avg_{value_key}": kernel.avg,
            "bytes": kernel.bytes or None,
            "gbps": kernel.gbps,
            "devices": list(kernel.devices),
        }
        records.append(record)
    return records


def summary_json(profile: Profile) -> dict:
    """Metrics summary, totals and kernel summary in one document."""
    return {
        "file": str(profile.path),
        "unit": profile.unit,
        "empty": profile.is_empty,
        "total": profile.total,
        "kernel_launches": profile.kernel_launches,
        "distinct_kernels": profile.kernel_count,
        "devices": profile.device_names(),
        "nodes": profile.node_count,
        "hidden_internal_nodes": profile.hidden_internal,
        "metrics_summary": profile.metrics_summary(),
        "kernels": kernel_records(profile),
    }


def kernel_csv(profile: Profile) -> str:
    """The kernel summary as CSV with a header row."""
    records = kernel_records(profile)
    out = io.StringIO()
    value_key = record_value_key(profile)
    fields = ["name", value_key, "percent", "launches", f"avg_{value_key}", "bytes", "gbps", "devices"]
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({**record, "devices": " ".join(record["devices"])})
    return out.getvalue()
