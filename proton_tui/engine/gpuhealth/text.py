"""A GPU's readings in words, one line per subject: what a check's detail pane shows."""

from __future__ import annotations

from collections.abc import Mapping

from proton_tui.console import printable
from proton_tui.engine.gpuhealth.causes import (
    delta,
    exact_text,
    process_list,
    process_text,
    reason_names,
    was_reset,
    watts,
)
from proton_tui.engine.gpuhealth.nvml import SAMPLE_INTERVAL_S


def detail_lines(readings: Mapping | None) -> list[str]:
    """The readings in words, one line per subject: what a detail pane shows for a GPU."""
    if not readings:
        return ["no GPU readings in this check"]
    if readings.get("problem"):
        return [f"GPU readings: not read: {printable(str(readings['problem']))}"]
    before, during, after = (readings.get(key) or {} for key in ("before", "during", "after"))
    device = readings.get("device") or {}
    lines = []
    ident = [str(device[key]) for key in ("name", "uuid", "pci_bus_id") if device.get(key)]
    found = f" (found by {device['found_by']})" if device.get("found_by") else ""
    driver = f"; driver {printable(str(readings['driver_version']))}" if readings.get("driver_version") else ""
    lines.append("device     " + (printable("  ".join(ident)) or "?") + found + driver)
    busy = during.get("busy_samples")
    if during.get("samples") is not None:
        lines.append(f"sampled    {during['samples']} times every {during.get('interval_s', SAMPLE_INTERVAL_S)} s "
                     f"while it ran, busy in {busy or 0}")
    clocks = []
    for name, key in (("SM", "sm_clock"), ("memory", "mem_clock")):
        low, high, top = during.get(f"{key}_mhz_min"), during.get(f"{key}_mhz_max"), after.get(f"{key}_max_mhz")
        if busy and high is not None:
            span = f"{low}–{high}" if low is not None and low != high else f"{high}"
            clocks.append(f"{name} {span} MHz" + (f" of {top} MHz" if top else "") + " while busy")
        elif after.get(f"{key}_mhz") is not None:
            clocks.append(f"{name} {after[f'{key}_mhz']} MHz" + (f" of {top} MHz" if top else "") + " after the run")
    if clocks:
        lines.append("clocks     " + ", ".join(clocks))
    reasons = []
    if busy and "clocks_event_reasons" in during:
        reasons.append("while busy: " + (", ".join(reason_names(during["clocks_event_reasons"])) or "none"))
    if "clocks_event_reasons" in after:
        reasons.append("right after: " + (", ".join(reason_names(after["clocks_event_reasons"])) or "none"))
    counters = [f"{what} {exact_text(delta(before, after, key), 6)} ms" if not was_reset(before, after, key)
                else f"{what} counter reset during the run" for what, key in
                (("power", "violation_power_ns"), ("thermal", "violation_thermal_ns"))
                if delta(before, after, key) is not None or was_reset(before, after, key)]
    if counters:
        reasons.append("throttled " + ", ".join(counters))
    if reasons:
        lines.append("reasons    " + "; ".join(reasons))
    power = []
    if during.get("power_mw_max") is not None:
        power.append(f"up to {watts(during['power_mw_max'])} while it ran")
    energy = delta(before, after, "energy_mj")
    if energy is not None:
        power.append(f"{exact_text(energy, 3)} J in all")
    elif was_reset(before, after, "energy_mj"):
        power.append("energy counter reset during the run")
    if after.get("power_limit_mw") is not None:
        limits = [f"{what} {watts(after[key])}" for what, key in
                  (("default", "power_default_limit_mw"), ("max", "power_max_limit_mw")) if after.get(key)]
        power.append(f"limit {watts(after['power_limit_mw'])}" + (f" ({', '.join(limits)})" if limits else ""))
    if power:
        lines.append("power      " + ", ".join(power))
    temps = [f"{value} °C {what}" for what, value in
             (("before", before.get("temperature_c")), ("at most while it ran", during.get("temperature_c_max")),
              ("after", after.get("temperature_c"))) if value is not None]
    if temps:
        limit = after.get("temperature_slowdown_c")
        lines.append("temp       " + ", ".join(temps) + (f" (slowdown at {limit} °C)" if limit is not None else ""))
    if before.get("utilization_gpu_percent") is not None:
        lines.append(f"busy       {before['utilization_gpu_percent']}% before the run"
                     + (f", {after['utilization_gpu_percent']}% after" if after.get("utilization_gpu_percent")
                        is not None else ""))
    ecc = _ecc_line(after or before)
    if ecc:
        lines.append("ECC        " + ecc)
    pcie = _pcie_line(before, during, after)
    if pcie:
        lines.append("PCIe       " + pcie)
    if "mig_enabled" in after or "mig_enabled" in before:
        mig = after.get("mig_enabled", before.get("mig_enabled"))
        pending = after.get("mig_pending", before.get("mig_pending"))
        lines.append("MIG        " + ("on" if mig else "off") + (" (a change is pending)" if pending != mig
                                                                   and pending is not None else ""))
    processes = process_list(before, after)
    if "processes" in before or "processes" in after:
        lines.append("processes  " + (", ".join(process_text(p) + _memory_text(p) for p in processes)
                                       or "none besides the run"))
    unread = {**(before.get("unread") or {}), **(during.get("unread") or {}), **(after.get("unread") or {})}
    if unread:
        grouped: dict[str, list[str]] = {}
        for field_name, reason in unread.items():
            grouped.setdefault(str(reason), []).append(field_name.replace("_", " "))
        lines.append("not read   " + "; ".join(f"{', '.join(names)}: {printable(reason)}"
                                               for reason, names in grouped.items()))
    return lines


def _memory_text(process: Mapping) -> str:
    """A process's GPU memory: exact in MiB when NVML's bytes are whole MiB, else about; an older check's whole MiB
    (``used_memory_mib``, rounded down) as at least."""
    used = process.get("used_memory_bytes")
    if isinstance(used, int) and not isinstance(used, bool):
        whole, rest = divmod(used, 2**20)
        return f" {whole:,} MiB" if not rest else f" about {used / 2**20:,.0f} MiB"
    used = process.get("used_memory_mib")
    return f" at least {used:,} MiB" if isinstance(used, int) and not isinstance(used, bool) else ""


def _ecc_line(snapshot: Mapping) -> str:
    if "ecc_enabled" not in snapshot:
        return ""
    if not snapshot["ecc_enabled"]:
        return "off"
    parts = [f"{snapshot.get(key, '?')} {what}" for what, key in
             (("uncorrected", "ecc_uncorrected_volatile"), ("corrected", "ecc_corrected_volatile"))]
    text = "on; since the driver loaded " + ", ".join(parts)
    if "remapped_rows_corrected" in snapshot:
        text += (f"; rows remapped {snapshot['remapped_rows_corrected']} corrected, "
                 f"{snapshot.get('remapped_rows_uncorrected', '?')} uncorrected"
                 + (", a remap pending" if snapshot.get("remapped_rows_pending") else "")
                 + (", a remap failed" if snapshot.get("remapped_rows_failure") else ""))
    if "retired_pages_dbe" in snapshot or "retired_pages_sbe" in snapshot:
        text += (f"; retired pages {snapshot.get('retired_pages_dbe', '?')} double-bit, "
                 f"{snapshot.get('retired_pages_sbe', '?')} single-bit"
                 + (", retirement pending" if snapshot.get("retired_pages_pending") else ""))
    return text


def _pcie_line(before: Mapping, during: Mapping, after: Mapping) -> str:
    top = ""
    if after.get("pcie_generation_max") is not None:
        top = f"Gen{after['pcie_generation_max']} x{after.get('pcie_width_max', '?')}"
    parts = []
    if during.get("busy_samples") and during.get("pcie_generation_max") is not None:
        parts.append(f"Gen{during['pcie_generation_max']} x{during.get('pcie_width_max', '?')} while busy")
    if after.get("pcie_generation") is not None:
        parts.append(f"Gen{after['pcie_generation']} x{after.get('pcie_width', '?')} after (an idle link steps down)")
    if not parts and not top:
        return ""
    return ", ".join(parts) + (f"; at most {top}" if top else "")

