"""What the GPU itself said around a box check's run, and the rules that turn it into a likely cause of a slow GPU.

Readings come from NVML (the ``nvidia-ml-py`` binding, module ``pynvml``, imported only when a check reads a GPU;
``pip install 'proton-tui[gpu]'``). Around each GPU's run the check takes a snapshot before the process starts,
samples a few fast fields while it runs, and takes a snapshot right after it ends. Everything is a plain JSON
object (``readings``), stored in check.json as NVML reports it (clocks in MHz, power in mW, energy in mJ,
violation counters in ns, temperatures in °C); a field NVML refuses is left out and named in the snapshot's
``unread`` with NVML's reason.

The cause rules (``likely_causes``, ``explain``) are pure functions of those objects: no NVML needed to judge a
check read back from disk. Never imports Textual.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..console import printable

READINGS_SOURCE = "nvml"
INSTALL_HINT = "pip install 'proton-tui[gpu]'"
SAMPLE_INTERVAL_S = 0.1  # NVML's fast fields, every 0.1 s while a GPU's run goes (a few cheap calls each time)
NO_CAUSE = "no cause found in NVML readings"

# NVML's clocks event (throttle) reason bits, nvmlClocksEventReason* in nvml.h.
REASON_GPU_IDLE = 0x1
REASON_APPLICATIONS_CLOCKS = 0x2
REASON_SW_POWER_CAP = 0x4
REASON_HW_SLOWDOWN = 0x8
REASON_SYNC_BOOST = 0x10
REASON_SW_THERMAL = 0x20
REASON_HW_THERMAL = 0x40
REASON_HW_POWER_BRAKE = 0x80
REASON_DISPLAY_CLOCKS = 0x100
REASON_NAMES = {
    REASON_GPU_IDLE: "GPU idle",
    REASON_APPLICATIONS_CLOCKS: "clocks set by the user",
    REASON_SW_POWER_CAP: "SW power cap",
    REASON_HW_SLOWDOWN: "HW slowdown",
    REASON_SYNC_BOOST: "sync boost",
    REASON_SW_THERMAL: "SW thermal slowdown",
    REASON_HW_THERMAL: "HW thermal slowdown",
    REASON_HW_POWER_BRAKE: "HW power brake slowdown",
    REASON_DISPLAY_CLOCKS: "display clock setting",
}

# A clock counts as lowered below this fraction of its maximum (the highest clock seen while the run was busy).
SM_CLOCK_FRACTION = 0.9
MEM_CLOCK_FRACTION = 0.98  # HBM runs at one clock under load: any drop is a change of state
# GPU utilisation (%) before the run that says something else was running on it: an idle GPU reads 0.
BUSY_BEFORE_PERCENT = 10


def reason_names(mask: int | None) -> list[str]:
    """``0x24`` -> ["SW power cap", "SW thermal slowdown"]; unknown bits as hex."""
    if not mask:
        return []
    names = [name for bit, name in REASON_NAMES.items() if mask & bit]
    unknown = mask & ~sum(REASON_NAMES)
    return names + ([f"0x{unknown:x}"] if unknown else [])


# ---- the cause rules (pure) -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cause:
    """One thing in the readings that can explain lower bandwidth. ``kind`` is stable; ``text`` is for people."""

    kind: str
    text: str


def cause_label(slow: bool) -> str:
    """What a GPU's causes are called: the likely cause of a slow GPU; for any other, only something noted."""
    return "likely cause" if slow else "noted"


@dataclass(frozen=True)
class Explanation:
    """The causes found for one GPU, likeliest first, and the one line that a table shows for it."""

    causes: tuple[Cause, ...]
    slow: bool  # below the flagging threshold
    read: bool  # readings were taken
    unjudged: str | None = None  # what the rules could not look at, when that leaves a slow GPU unexplained

    @property
    def label(self) -> str:
        return cause_label(self.slow)

    @property
    def text(self) -> str:
        """The likeliest cause (with how many more), prefixed ``noted:`` for a GPU that is not slow; for a slow GPU
        with none, ``NO_CAUSE`` (and what could not be judged); else ""."""
        if self.causes:
            more = len(self.causes) - 1
            text = self.causes[0].text + (f" (+{more} more)" if more else "")
            return text if self.slow else f"{self.label}: {text}"
        if self.slow and self.read:
            return NO_CAUSE + (f" ({self.unjudged})" if self.unjudged else "")
        return ""

    @property
    def texts(self) -> list[str]:
        return [cause.text for cause in self.causes]


def explain(readings: Mapping | None, gbps: float | None = None, median_gbps: float | None = None,
            min_fraction: float = 0.9) -> Explanation:
    """The causes for a GPU whose bandwidth is ``gbps`` on a box whose median is ``median_gbps``."""
    slow = gbps is not None and median_gbps is not None and gbps < min_fraction * median_gbps
    read = bool(readings) and not readings.get("problem")
    causes = tuple(likely_causes(readings)) if read else ()
    return Explanation(causes, slow, read, _unjudged(readings) if read and not causes else None)


def _unjudged(readings: Mapping) -> str | None:
    """Why the rules may have missed a cause: NVML answered nothing, or never saw the GPU busy (the clock, throttle
    and link rules judge only busy samples)."""
    before, during, after = (readings.get(key) or {} for key in ("before", "during", "after"))
    if not any(key != "unread" for snapshot in (before, after) for key in snapshot):
        return "NVML answered no reading"
    if not during.get("busy_samples"):
        return "NVML never saw the GPU busy while the run went: clocks and throttling not judged"
    return None


def likely_causes(readings: Mapping | None) -> list[Cause]:
    """Every cause the readings show, ordered by how directly it takes bandwidth from a memory-bound kernel: a GPU
    shared with other work, a MIG slice, hardware slowdown, a lowered memory clock, thermal then power limits, a
    lowered SM clock, memory errors, and last the PCIe link (which the kernel's traffic does not cross)."""
    if not readings or readings.get("problem"):
        return []
    before, during, after = (readings.get(key) or {} for key in ("before", "during", "after"))
    rules: list[Callable[[Mapping, Mapping, Mapping], Cause | None]] = [
        _processes, _busy_before, _mig, _hw_slowdown, _memory_clock, _thermal, _power_cap, _sm_clock, _ecc, _pcie,
    ]
    return [cause for rule in rules if (cause := rule(before, during, after)) is not None]


def _run_reasons(during: Mapping, after: Mapping) -> int:
    """The reasons seen while the run was busy, and those still set right after it (idle aside)."""
    return (during.get("clocks_event_reasons") or 0) | ((after.get("clocks_event_reasons") or 0) & ~REASON_GPU_IDLE)


def _delta(before: Mapping, after: Mapping, key: str) -> int | None:
    """How much a counter grew over the run; None when unread or when it went down (reset during the run)."""
    first, last = before.get(key), after.get(key)
    return None if first is None or last is None or last < first else last - first


def _reset(before: Mapping, after: Mapping, key: str) -> bool:
    first, last = before.get(key), after.get(key)
    return first is not None and last is not None and last < first


def _about_seconds(ns: int | None) -> str:
    if not ns:
        return ""
    seconds = ns / 1e9
    if seconds < 0.01:
        return " for under 0.01 s"
    return f" for about {seconds:.2g} s" if seconds < 10 else f" for about {seconds:,.0f} s"


def _exact(value: int, decimals: int) -> str:
    """An integer count of 10^-decimals units, every digit kept: (412345, 3) -> "412.345", (300000, 3) -> "300"."""
    sign, digits = ("-" if value < 0 else ""), str(abs(int(value))).rjust(decimals + 1, "0")
    whole, fraction = digits[:-decimals] if decimals else digits, digits[-decimals:].rstrip("0") if decimals else ""
    return f"{sign}{int(whole):,}" + (f".{fraction}" if fraction else "")


def _watts(mw: int) -> str:
    """NVML's milliwatts in watts, every digit kept: 300000 -> "300 W", 412345 -> "412.345 W"."""
    return f"{_exact(mw, 3)} W"


def _process_list(before: Mapping, after: Mapping) -> list[dict]:
    seen: dict[int, dict] = {}
    for snapshot in (before, after):
        for process in snapshot.get("processes") or ():
            pid = process.get("pid")
            if isinstance(pid, int) and (pid not in seen or not seen[pid].get("name")):
                seen[pid] = process
    return [seen[pid] for pid in sorted(seen)]


def _process_text(process: Mapping) -> str:
    name = process.get("name")
    return f"pid {process['pid']}" + (f" ({printable(Path(str(name)).name)})" if name else "")


def _processes(before: Mapping, during: Mapping, after: Mapping) -> Cause | None:
    processes = _process_list(before, after)
    if not processes:
        return None
    word = "process" if len(processes) == 1 else "processes"
    return Cause("processes", f"other {word} on the GPU: " + ", ".join(_process_text(p) for p in processes))


def _busy_before(before: Mapping, during: Mapping, after: Mapping) -> Cause | None:
    busy = before.get("utilization_gpu_percent")
    if busy is None or busy < BUSY_BEFORE_PERCENT or _process_list(before, after):
        return None
    why = ("processes not readable" if "processes" not in before
           else "no process listed: another container or user?")
    return Cause("busy", f"GPU {busy}% busy before the run started ({why})")


def _mig(before: Mapping, during: Mapping, after: Mapping) -> Cause | None:
    if before.get("mig_enabled") or after.get("mig_enabled"):
        return Cause("mig", "MIG enabled: the run had a slice of the GPU")
    return None


def _hw_slowdown(before: Mapping, during: Mapping, after: Mapping) -> Cause | None:
    reasons = _run_reasons(during, after)
    names = reason_names(reasons & (REASON_HW_SLOWDOWN | REASON_HW_THERMAL | REASON_HW_POWER_BRAKE))
    return Cause("hw_slowdown", " and ".join(names)) if names else None


def _memory_clock(before: Mapping, during: Mapping, after: Mapping) -> Cause | None:
    """Any busy sample below the memory's maximum clock: HBM runs at one clock under load."""
    low, high = during.get("mem_clock_mhz_min"), during.get("mem_clock_mhz_max")
    top = before.get("mem_clock_max_mhz") or after.get("mem_clock_max_mhz")
    low = low if low is not None else high
    if not during.get("busy_samples") or low is None or not top or low >= MEM_CLOCK_FRACTION * top:
        return None
    span = f"{low}–{high}" if high is not None and high != low else f"{low}"
    return Cause("memory_clock", f"memory clock {span} MHz of {top} MHz while busy")


def _thermal(before: Mapping, during: Mapping, after: Mapping) -> Cause | None:
    reasons = _run_reasons(during, after)
    counted = _delta(before, after, "violation_thermal_ns")
    hottest = max((value for value in (during.get("temperature_c_max"), after.get("temperature_c"))
                   if value is not None), default=None)
    limit = before.get("temperature_slowdown_c") or after.get("temperature_slowdown_c")
    over = hottest is not None and limit is not None and hottest >= limit
    if not (reasons & REASON_SW_THERMAL or over or counted and not reasons & REASON_HW_THERMAL):
        return None  # a HW thermal slowdown alone is named by _hw_slowdown
    where = f" at {hottest} °C" if hottest is not None else ""
    threshold = f" (slowdown at {limit} °C)" if limit is not None else ""
    return Cause("thermal", f"thermal slowdown{where}{threshold}{_about_seconds(counted)}")


def _power_cap(before: Mapping, during: Mapping, after: Mapping) -> Cause | None:
    reasons = _run_reasons(during, after)
    counted = _delta(before, after, "violation_power_ns")
    if not (reasons & REASON_SW_POWER_CAP or counted):
        return None
    limit = after.get("power_limit_mw") or before.get("power_limit_mw")
    default = after.get("power_default_limit_mw") or before.get("power_default_limit_mw")
    full = default or after.get("power_max_limit_mw") or before.get("power_max_limit_mw")
    if limit and full and limit < full:
        at = f" at {_watts(limit)} of {_watts(full)}" + ("" if default else " (its maximum)")
    elif limit:
        at = f" at {_watts(limit)} (the default limit)" if limit == default else f" at {_watts(limit)}"
    else:
        at = ""
    return Cause("power_cap", f"power cap: throttled by SW power cap{at}{_about_seconds(counted)}")


def _sm_clock(before: Mapping, during: Mapping, after: Mapping) -> Cause | None:
    clock, top = during.get("sm_clock_mhz_max"), before.get("sm_clock_max_mhz") or after.get("sm_clock_max_mhz")
    if not during.get("busy_samples") or clock is None or not top or clock >= SM_CLOCK_FRACTION * top:
        return None
    user = " (clocks set by the user)" if (during.get("clocks_event_reasons") or 0) & REASON_APPLICATIONS_CLOCKS else ""
    return Cause("sm_clock", f"SM clock {clock} MHz of {top} MHz{user}")


def _ecc(before: Mapping, during: Mapping, after: Mapping) -> Cause | None:
    state = {**before, **{key: value for key, value in after.items() if value is not None}}
    parts = []
    uncorrected = state.get("ecc_uncorrected_volatile")
    if uncorrected:
        parts.append(f"{uncorrected} uncorrected error{'s' if uncorrected != 1 else ''} since the driver loaded")
    if state.get("remapped_rows_failure"):
        parts.append("a row remap failed")
    if state.get("remapped_rows_pending"):
        parts.append("a row remap is pending (reset the GPU to apply it)")
    if state.get("retired_pages_pending"):
        parts.append("retired pages pending (reset the GPU to retire them)")
    return Cause("ecc", "ECC: " + "; ".join(parts)) if parts else None


def _pcie(before: Mapping, during: Mapping, after: Mapping) -> Cause | None:
    """The link width as read any time; the generation only while busy (an idle link steps down to save power)."""
    top_gen = before.get("pcie_generation_max") or after.get("pcie_generation_max")
    top_width = before.get("pcie_width_max") or after.get("pcie_width_max")
    width = during.get("pcie_width_max") if during.get("busy_samples") else None
    width = width if width is not None else after.get("pcie_width") or before.get("pcie_width")
    gen = during.get("pcie_generation_max") if during.get("busy_samples") else None
    narrow = width is not None and top_width and width < top_width
    slow = gen is not None and top_gen and gen < top_gen
    if not (narrow or slow):
        return None
    now = " ".join(part for part in (f"Gen{gen}" if gen is not None else "",
                                     f"x{width}" if width is not None else "") if part)
    most = " ".join(part for part in (f"Gen{top_gen}" if gen is not None and top_gen else "",
                                      f"x{top_width or '?'}" if width is not None else "") if part)
    return Cause("pcie", f"PCIe {now} of {most}")


# ---- what a detail pane shows ----------------------------------------------------------------------------------
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
    counters = [f"{what} {_exact(_delta(before, after, key), 6)} ms" if not _reset(before, after, key)
                else f"{what} counter reset during the run" for what, key in
                (("power", "violation_power_ns"), ("thermal", "violation_thermal_ns"))
                if _delta(before, after, key) is not None or _reset(before, after, key)]
    if counters:
        reasons.append("throttled " + ", ".join(counters))
    if reasons:
        lines.append("reasons    " + "; ".join(reasons))
    power = []
    if during.get("power_mw_max") is not None:
        power.append(f"up to {_watts(during['power_mw_max'])} while it ran")
    energy = _delta(before, after, "energy_mj")
    if energy is not None:
        power.append(f"{_exact(energy, 3)} J in all")
    elif _reset(before, after, "energy_mj"):
        power.append("energy counter reset during the run")
    if after.get("power_limit_mw") is not None:
        limits = [f"{what} {_watts(after[key])}" for what, key in
                  (("default", "power_default_limit_mw"), ("max", "power_max_limit_mw")) if after.get(key)]
        power.append(f"limit {_watts(after['power_limit_mw'])}" + (f" ({', '.join(limits)})" if limits else ""))
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
    processes = _process_list(before, after)
    if "processes" in before or "processes" in after:
        lines.append("processes  " + (", ".join(_process_text(p) + _memory_text(p) for p in processes)
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


# ---- reading NVML -----------------------------------------------------------------------------------------------
class Nvml:
    """NVML, started once for a check. ``Nvml.open()`` returns it, or the one-line reason it cannot be read."""

    def __init__(self, module) -> None:
        self.nvml = module
        self.driver_version = self._value(module.nvmlSystemGetDriverVersion)
        self.calls: set[asyncio.Future] = set()  # the calls under way in threads (``call``)

    async def call(self, function, *args):
        """``function(*args)`` in a thread, never on the event loop. Cancelling the caller leaves the thread's call
        to finish; ``settled`` waits for every such call, so NVML is shut down only after the last has returned."""
        future = asyncio.ensure_future(asyncio.to_thread(function, *args))
        self.calls.add(future)
        future.add_done_callback(self.calls.discard)
        return await asyncio.shield(future)

    async def settled(self) -> None:
        while self.calls:
            await asyncio.wait(set(self.calls))

    @classmethod
    def open(cls) -> tuple[Nvml | None, str | None]:
        try:
            import pynvml
        except ImportError:
            return None, f"nvidia-ml-py is not installed ({INSTALL_HINT})"
        try:
            pynvml.nvmlInit()
        except Exception as error:  # noqa: BLE001 - NVMLError_LibraryNotFound, DriverNotLoaded, NoPermission, …
            return None, f"NVML did not start: {nvml_reason(error)}"
        return cls(pynvml), None

    def close(self) -> None:
        try:
            self.nvml.nvmlShutdown()
        except Exception:  # noqa: BLE001 - nothing to do about a failed shutdown
            pass

    @staticmethod
    def _value(call, *args):
        try:
            return _text(call(*args))
        except Exception:  # noqa: BLE001
            return None

    # ---- finding the device a CUDA index names -----------------------------------------------------------------
    def find(self, uuid: str | None = None, pci_bus_id: str | None = None, pin: str | None = None,
             pci_order: bool = False) -> tuple[object, dict]:
        """The NVML handle of the GPU the run used, and how it was found. ``uuid``/``pci_bus_id``: the workload
        interpreter's own words for its CUDA device (its probe); ``pin``: the ``CUDA_VISIBLE_DEVICES`` value the run
        was given; ``pci_order``: CUDA numbers GPUs by PCI bus id (``CUDA_DEVICE_ORDER=PCI_BUS_ID``). NVML's own
        index is never trusted to be CUDA's. Raises LookupError with the reason."""
        nvml, tried = self.nvml, []
        names = []
        if uuid:
            names = [uuid] if uuid.startswith(("GPU-", "MIG-")) else [f"GPU-{uuid}", f"MIG-{uuid}"]
        elif pin and pin.startswith(("GPU-", "MIG-")):
            names = [pin]
        for name in names:
            try:
                return self._device(nvml.nvmlDeviceGetHandleByUUID(name), "uuid")
            except Exception as error:  # noqa: BLE001
                tried.append(f"UUID {name}: {nvml_reason(error)}")
        if pci_bus_id:
            try:
                return self._device(nvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id), "PCI bus id")
            except Exception as error:  # noqa: BLE001
                tried.append(f"PCI bus id {pci_bus_id}: {nvml_reason(error)}")
        try:
            count = nvml.nvmlDeviceGetCount()
        except Exception as error:  # noqa: BLE001
            raise LookupError(f"NVML lists no GPU: {nvml_reason(error)}") from None
        if pin is not None and pin.isdigit() and pci_order:
            try:
                by_bus = sorted((_text(nvml.nvmlDeviceGetPciInfo(h).busId).upper(), h)
                                for h in (nvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)))
            except Exception as error:  # noqa: BLE001 - a lost GPU among them, say
                tried.append(f"PCI bus order: {nvml_reason(error)}")
            else:
                if int(pin) < len(by_bus):
                    return self._device(by_bus[int(pin)][1], "PCI bus order")
        if count == 1 and (pin is None or pin == "0") and not names:
            try:
                return self._device(nvml.nvmlDeviceGetHandleByIndex(0), "the only GPU")
            except Exception as error:  # noqa: BLE001
                tried.append(f"the only GPU: {nvml_reason(error)}")
        raise LookupError("; ".join(tried) if tried else
                          "the workload's interpreter gave no UUID for it, so its NVML device is unknown")

    def _device(self, handle, found_by: str) -> tuple[object, dict]:
        nvml = self.nvml
        device = {"found_by": found_by}
        for key, call in (("name", nvml.nvmlDeviceGetName), ("uuid", nvml.nvmlDeviceGetUUID),
                          ("pci_bus_id", lambda h: nvml.nvmlDeviceGetPciInfo(h).busId)):
            value = self._value(call, handle)
            if value is not None:
                device[key] = value
        if device.get("uuid", "").startswith("MIG-"):  # a MIG slice: the clocks and counters are its GPU's
            try:
                handle = nvml.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(handle)
                device["parent_uuid"] = _text(nvml.nvmlDeviceGetUUID(handle))
            except Exception:  # noqa: BLE001
                pass
        return handle, device

    # ---- readings ------------------------------------------------------------------------------------------------
    def snapshot(self, handle, own_pid: int | None = None) -> dict:
        """Every field, before or after a run. Processes of ``own_pid``'s tree (this program's runs) are left out."""
        nvml, out, unread = self.nvml, {}, {}

        def read(key: str, call, *args, convert=lambda value: value) -> None:
            try:
                out[key] = convert(call(*args))
            except Exception as error:  # noqa: BLE001 - a refused field is recorded, never raised
                unread[key] = nvml_reason(error)

        read("sm_clock_mhz", nvml.nvmlDeviceGetClockInfo, handle, nvml.NVML_CLOCK_SM)
        read("mem_clock_mhz", nvml.nvmlDeviceGetClockInfo, handle, nvml.NVML_CLOCK_MEM)
        read("sm_clock_max_mhz", nvml.nvmlDeviceGetMaxClockInfo, handle, nvml.NVML_CLOCK_SM)
        read("mem_clock_max_mhz", nvml.nvmlDeviceGetMaxClockInfo, handle, nvml.NVML_CLOCK_MEM)
        read("clocks_event_reasons", self._reasons, handle)
        read("power_mw", nvml.nvmlDeviceGetPowerUsage, handle)
        read("power_limit_mw", nvml.nvmlDeviceGetEnforcedPowerLimit, handle)
        read("power_default_limit_mw", nvml.nvmlDeviceGetPowerManagementDefaultLimit, handle)
        read("power_max_limit_mw", nvml.nvmlDeviceGetPowerManagementLimitConstraints, handle,
             convert=lambda pair: pair[1])
        read("energy_mj", nvml.nvmlDeviceGetTotalEnergyConsumption, handle)
        read("violation_power_ns", nvml.nvmlDeviceGetViolationStatus, handle, nvml.NVML_PERF_POLICY_POWER,
             convert=lambda status: status.violationTime)
        read("violation_thermal_ns", nvml.nvmlDeviceGetViolationStatus, handle, nvml.NVML_PERF_POLICY_THERMAL,
             convert=lambda status: status.violationTime)
        read("temperature_c", nvml.nvmlDeviceGetTemperature, handle, nvml.NVML_TEMPERATURE_GPU)
        read("temperature_slowdown_c", nvml.nvmlDeviceGetTemperatureThreshold, handle,
             nvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)
        read("temperature_shutdown_c", nvml.nvmlDeviceGetTemperatureThreshold, handle,
             nvml.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN)
        try:
            rates = nvml.nvmlDeviceGetUtilizationRates(handle)
            out["utilization_gpu_percent"], out["utilization_memory_percent"] = rates.gpu, rates.memory
        except Exception as error:  # noqa: BLE001
            unread["utilization_gpu_percent"] = nvml_reason(error)
        read("ecc_enabled", nvml.nvmlDeviceGetEccMode, handle, convert=lambda modes: bool(modes[0]))
        if out.get("ecc_enabled"):
            read("ecc_uncorrected_volatile", nvml.nvmlDeviceGetTotalEccErrors, handle,
                 nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml.NVML_VOLATILE_ECC)
            read("ecc_corrected_volatile", nvml.nvmlDeviceGetTotalEccErrors, handle,
                 nvml.NVML_MEMORY_ERROR_TYPE_CORRECTED, nvml.NVML_VOLATILE_ECC)
            read("ecc_uncorrected_aggregate", nvml.nvmlDeviceGetTotalEccErrors, handle,
                 nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml.NVML_AGGREGATE_ECC)
        try:
            corrected, uncorrected, pending, failure = nvml.nvmlDeviceGetRemappedRows(handle)
            out.update(remapped_rows_corrected=corrected, remapped_rows_uncorrected=uncorrected,
                       remapped_rows_pending=bool(pending), remapped_rows_failure=bool(failure))
        except Exception as error:  # noqa: BLE001 - before Ampere: retired pages instead
            unread["remapped_rows"] = nvml_reason(error)
            read("retired_pages_sbe", nvml.nvmlDeviceGetRetiredPages, handle,
                 nvml.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, convert=len)
            read("retired_pages_dbe", nvml.nvmlDeviceGetRetiredPages, handle,
                 nvml.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, convert=len)
            read("retired_pages_pending", nvml.nvmlDeviceGetRetiredPagesPendingStatus, handle, convert=bool)
        read("pcie_generation", nvml.nvmlDeviceGetCurrPcieLinkGeneration, handle)
        read("pcie_width", nvml.nvmlDeviceGetCurrPcieLinkWidth, handle)
        read("pcie_generation_max", nvml.nvmlDeviceGetMaxPcieLinkGeneration, handle)
        read("pcie_width_max", nvml.nvmlDeviceGetMaxPcieLinkWidth, handle)
        try:
            current, pending = nvml.nvmlDeviceGetMigMode(handle)
            out["mig_enabled"], out["mig_pending"] = bool(current), bool(pending)
        except Exception as error:  # noqa: BLE001 - a GPU without MIG says Not Supported
            unread["mig_enabled"] = nvml_reason(error)
        read("processes", self._processes, handle, own_pid, unread)
        if unread:
            out["unread"] = unread
        return out

    def sample(self, handle) -> dict:
        """The fast fields, while a run goes."""
        nvml, out = self.nvml, {}
        for key, call, args in (("clocks_event_reasons", self._reasons, ()),
                                ("sm_clock_mhz", nvml.nvmlDeviceGetClockInfo, (nvml.NVML_CLOCK_SM,)),
                                ("mem_clock_mhz", nvml.nvmlDeviceGetClockInfo, (nvml.NVML_CLOCK_MEM,)),
                                ("utilization_gpu_percent", lambda h: nvml.nvmlDeviceGetUtilizationRates(h).gpu, ()),
                                ("temperature_c", nvml.nvmlDeviceGetTemperature, (nvml.NVML_TEMPERATURE_GPU,)),
                                ("power_mw", nvml.nvmlDeviceGetPowerUsage, ()),
                                ("pcie_generation", nvml.nvmlDeviceGetCurrPcieLinkGeneration, ()),
                                ("pcie_width", nvml.nvmlDeviceGetCurrPcieLinkWidth, ())):
            try:
                out[key] = call(handle, *args)
            except Exception as error:  # noqa: BLE001
                out.setdefault("unread", {})[key] = nvml_reason(error)
        return out

    def _reasons(self, handle) -> int:
        nvml = self.nvml
        call = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            nvml.nvmlDeviceGetCurrentClocksThrottleReasons
        return int(call(handle))

    def _processes(self, handle, own_pid: int | None, unread: dict) -> list[dict]:
        """The compute and graphics processes on the GPU; a kind NVML refuses is named in ``unread``
        (``processes_compute``, ``processes_graphics``) and the other kept. Raises when both are refused."""
        nvml, found, refused = self.nvml, {}, {}
        for kind, call in (("compute", nvml.nvmlDeviceGetComputeRunningProcesses),
                           ("graphics", nvml.nvmlDeviceGetGraphicsRunningProcesses)):
            try:
                processes = list(call(handle))
            except Exception as error:  # noqa: BLE001
                refused[f"processes_{kind}"] = error
                continue
            for process in processes:
                pid = int(process.pid)
                if pid in found or (own_pid is not None and _descends_from(pid, own_pid)):
                    continue
                used = getattr(process, "usedGpuMemory", None)
                found[pid] = {"pid": pid, "name": self._process_name(pid), "kind": kind,
                              "used_memory_bytes": used if isinstance(used, int) else None}
        if len(refused) == 2:
            raise refused["processes_compute"]
        unread.update({key: nvml_reason(error) for key, error in refused.items()})
        return [found[pid] for pid in sorted(found)]

    def _process_name(self, pid: int) -> str | None:
        name = self._value(self.nvml.nvmlSystemGetProcessName, pid)
        if name:
            return name
        try:
            return Path(f"/proc/{pid}/comm").read_text().strip() or None
        except OSError:
            return None


def summarise_samples(samples: list[dict], interval_s: float = SAMPLE_INTERVAL_S) -> dict:
    """The ``during`` object: how many samples, how many busy (not idle), and the extremes of the busy ones."""
    busy = [s for s in samples if _busy(s)]
    during: dict = {"samples": len(samples), "busy_samples": len(busy), "interval_s": interval_s}
    reasons = [s["clocks_event_reasons"] for s in busy if "clocks_event_reasons" in s]
    if reasons:
        mask = 0
        for value in reasons:
            mask |= value
        during["clocks_event_reasons"] = mask
    for key in ("sm_clock_mhz", "mem_clock_mhz"):
        values = [s[key] for s in busy if key in s]
        if values:
            during[f"{key}_min"], during[f"{key}_max"] = min(values), max(values)
    for key in ("temperature_c", "power_mw", "pcie_generation", "pcie_width", "utilization_gpu_percent"):
        values = [s[key] for s in (busy if key.startswith("pcie") else samples) if key in s]
        if values:
            during[f"{key}_max"] = max(values)
    unread = {}
    for sample in samples:
        unread.update(sample.get("unread") or {})
    if unread:
        during["unread"] = unread
    return during


def _busy(sample: Mapping) -> bool:
    """A sample taken while a kernel ran: not idle by NVML's reasons (or, without them, by its utilisation)."""
    if "clocks_event_reasons" in sample:
        return not sample["clocks_event_reasons"] & REASON_GPU_IDLE
    return bool(sample.get("utilization_gpu_percent"))


class Watch:
    """One GPU around one run: ``await begin()`` before the process starts, ``await end()`` after; ``end`` returns
    the readings. Sampling runs as a task in between; NVML calls run in a thread, never on the event loop."""

    def __init__(self, nvml: Nvml, handle, device: dict, interval_s: float = SAMPLE_INTERVAL_S) -> None:
        self.nvml, self.handle, self.device, self.interval_s = nvml, handle, device, interval_s
        self.before: dict = {}
        self.samples: list[dict] = []
        self.task: asyncio.Task | None = None
        self.started = 0.0

    async def begin(self) -> None:
        self.before = await self.nvml.call(self.nvml.snapshot, self.handle, os.getpid())
        self.started = time.monotonic()
        self.task = asyncio.create_task(self._sample())

    async def _sample(self) -> None:
        while True:
            self.samples.append(await self.nvml.call(self.nvml.sample, self.handle))
            await asyncio.sleep(self.interval_s)

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()

    async def end(self) -> dict:
        self.stop()
        after = await self.nvml.call(self.nvml.snapshot, self.handle, os.getpid())
        return {"source": READINGS_SOURCE, "driver_version": self.nvml.driver_version, "device": self.device,
                "seconds": round(time.monotonic() - self.started, 3), "before": self.before,
                "during": summarise_samples(self.samples, self.interval_s), "after": after}


def unread_readings(problem: str) -> dict:
    """The readings of a GPU that could not be read, with the reason."""
    return {"source": READINGS_SOURCE, "problem": problem}


def _descends_from(pid: int, ancestor: int) -> bool:
    """Whether ``pid`` is ``ancestor`` or one of its descendants (from /proc; False where it cannot tell)."""
    for _ in range(64):
        if pid == ancestor:
            return True
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            pid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            return False
        if pid <= 1:
            return False
    return False


def _text(value):
    return value.decode(errors="replace") if isinstance(value, bytes) else value


def nvml_reason(error: BaseException) -> str:
    """NVML's words for a refusal ("Not Supported", "Insufficient Permissions"), else the exception's."""
    text = str(error).strip()
    return text or type(error).__name__
