"""The cause rules (pure functions of a GPU's readings, no NVML needed to judge a check read back from disk): what
in the readings can explain a slow GPU, likeliest first, and the one line a table shows for it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from proton_tui.console import printable

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


def threshold_of(median: float, min_fraction: float) -> float:
    """The GB/s a GPU is flagged below: the nearest float to the exact product of the two numbers as written
    (3300.45 × 0.9 is 2970.405, not the float product 2970.4049999999997)."""
    from decimal import Decimal

    return float(Decimal(repr(median)) * Decimal(repr(min_fraction)))


def explain(readings: Mapping | None, gbps: float | None = None, median_gbps: float | None = None,
            min_fraction: float = 0.9) -> Explanation:
    """The causes for a GPU whose bandwidth is ``gbps`` on a box whose median is ``median_gbps``."""
    slow = gbps is not None and median_gbps is not None and gbps < threshold_of(median_gbps, min_fraction)
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


def delta(before: Mapping, after: Mapping, key: str) -> int | None:
    """How much a counter grew over the run; None when unread or when it went down (reset during the run)."""
    first, last = before.get(key), after.get(key)
    return None if first is None or last is None or last < first else last - first


def was_reset(before: Mapping, after: Mapping, key: str) -> bool:
    first, last = before.get(key), after.get(key)
    return first is not None and last is not None and last < first


def _about_seconds(ns: int | None) -> str:
    if not ns:
        return ""
    seconds = ns / 1e9
    if seconds < 0.01:
        return " for under 0.01 s"
    return f" for about {seconds:.2g} s" if seconds < 10 else f" for about {seconds:,.0f} s"


def exact_text(value: int, decimals: int) -> str:
    """An integer count of 10^-decimals units, every digit kept: (412345, 3) -> "412.345", (300000, 3) -> "300"."""
    sign, digits = ("-" if value < 0 else ""), str(abs(int(value))).rjust(decimals + 1, "0")
    whole, fraction = digits[:-decimals] if decimals else digits, digits[-decimals:].rstrip("0") if decimals else ""
    return f"{sign}{int(whole):,}" + (f".{fraction}" if fraction else "")


def watts(mw: int) -> str:
    """NVML's milliwatts in watts, every digit kept: 300000 -> "300 W", 412345 -> "412.345 W"."""
    return f"{exact_text(mw, 3)} W"


def process_list(before: Mapping, after: Mapping) -> list[dict]:
    seen: dict[int, dict] = {}
    for snapshot in (before, after):
        for process in snapshot.get("processes") or ():
            pid = process.get("pid")
            if isinstance(pid, int) and (pid not in seen or not seen[pid].get("name")):
                seen[pid] = process
    return [seen[pid] for pid in sorted(seen)]


def process_text(process: Mapping) -> str:
    name = process.get("name")
    return f"pid {process['pid']}" + (f" ({printable(Path(str(name)).name)})" if name else "")


def _processes(before: Mapping, during: Mapping, after: Mapping) -> Cause | None:
    processes = process_list(before, after)
    if not processes:
        return None
    word = "process" if len(processes) == 1 else "processes"
    return Cause("processes", f"other {word} on the GPU: " + ", ".join(process_text(p) for p in processes))


def _busy_before(before: Mapping, during: Mapping, after: Mapping) -> Cause | None:
    busy = before.get("utilization_gpu_percent")
    if busy is None or busy < BUSY_BEFORE_PERCENT or process_list(before, after):
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
    counted = delta(before, after, "violation_thermal_ns")
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
    counted = delta(before, after, "violation_power_ns")
    if not (reasons & REASON_SW_POWER_CAP or counted):
        return None
    limit = after.get("power_limit_mw") or before.get("power_limit_mw")
    default = after.get("power_default_limit_mw") or before.get("power_default_limit_mw")
    full = default or after.get("power_max_limit_mw") or before.get("power_max_limit_mw")
    if limit and full and limit < full:
        at = f" at {watts(limit)} of {watts(full)}" + ("" if default else " (its maximum)")
    elif limit:
        at = f" at {watts(limit)} (the default limit)" if limit == default else f" at {watts(limit)}"
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

