"""What a capture's devices say and what follows from it: each device's spec, SM clock and peak bandwidth, a node's
achieved GB/s, % of peak and TFLOP/s, and what a multi-device capture cannot tell apart. A part of ``Profile``."""

from __future__ import annotations

import re
from functools import cached_property
from itertools import compress
from typing import TYPE_CHECKING

from proton_tui.hatchet.tree import is_number

if TYPE_CHECKING:
    from proton_tui.hatchet.profile import KernelStats

FLOPS_KEY = re.compile(r"^flops(8|16|32|64)?$")
# Peak HBM bandwidth (bytes/s) for AMD arches whose device_info lacks the bus numbers (Proton's specs.py).
HIP_PEAK_BYTES_PER_S = {"gfx90a": 3.2e12, "gfx942": 5.3e12, "gfx950": 8.0e12}


class DeviceFacts:
    """The device side of ``Profile`` (its fields: device_info, devices, cycle_facts, unit and the node arrays)."""

    def device_spec(self, device: str) -> dict | None:
        """What device_info says of one device ("CUDA:0"): its arch, clocks, bus width…; None when it is not there."""
        device_type, _, device_id = device.partition(":")
        by_id = self.device_info.get(device_type)
        spec = by_id.get(device_id) if isinstance(by_id, dict) else None
        return spec if isinstance(spec, dict) else None

    def sm_clock_khz(self, device: str) -> float | None:
        """The device's SM clock in kHz from the capture's device_info (`clock_rate`, the maximum it reports), else
        the clock its run reported (`cycle_facts`); None when neither says."""
        spec = self.device_spec(device)
        value = spec.get("clock_rate") if spec is not None else None
        if is_number(value) and value > 0:
            return float(value)
        return self.run_clock_khz

    @property
    def run_clock_khz(self) -> float | None:
        """The SM clock (kHz) an instrumentation capture's run gives: the one the user gave (`view --sm-clock-khz`)
        or the one its run reported; None when neither did."""
        facts = self.cycle_facts
        return facts.clock_khz if facts is not None and facts.clock_khz else None

    @cached_property
    def sm_clocks(self) -> tuple[float, ...]:
        """The SM clocks (kHz) the cycles of this capture's scopes are timed at, lowest first (none for a capture
        without cycles or without a clock)."""
        if self.unit != "cycles":
            return ()
        devices = set(compress(self.devices, self.has_own))
        return tuple(sorted({clock for device in devices if (clock := self.sm_clock_khz(device))}))

    def peak_bytes_per_s(self, device: str) -> float | None:
        """Peak memory bandwidth of one device, as Proton defines it (`triton.profiler.specs`): for CUDA from
        device_info's bus width and memory clock, for HIP the architecture's peak; None when the capture does not
        say or the architecture is unknown (no guess)."""
        spec = self.device_spec(device)
        if spec is None:
            return None
        device_type = device.partition(":")[0]
        if device_type == "HIP":
            return HIP_PEAK_BYTES_PER_S.get(str(spec.get("arch", "")))
        bus_width, mem_clock_khz = spec.get("bus_width"), spec.get("memory_clock_rate")
        if device_type == "CUDA" and is_number(bus_width) and is_number(mem_clock_khz) and bus_width > 0 \
                and mem_clock_khz > 0:
            return 2.0 * bus_width * mem_clock_khz * 1e3 / 8.0
        return None

    def gbps(self, node: int) -> float | None:
        """Achieved GB/s of a kernel (its bytes over its time); None for scopes, whose time may include kernels
        that declared no bytes, and where bytes or time are missing."""
        if self.unit != "ns" or not self.has_own[node] or not self.bytes[node] or not self.inclusive[node]:
            return None
        return self.bytes[node] / self.inclusive[node]

    def peak_percent(self, node: int) -> float | None:
        """Achieved bandwidth as a percentage of the node's device peak, or None when unknown."""
        achieved = self.gbps(node)
        peak = self.peak_bytes_per_s(self.devices[node]) if achieved and self.devices[node] else None
        return 100.0 * achieved * 1e9 / peak if peak else None

    def kernel_peak_percent(self, kernel: KernelStats) -> float | None:
        """A kernel's achieved bandwidth as a percentage of its device's peak; None when unknown or when its
        instances ran on devices of different peaks."""
        peaks = {self.peak_bytes_per_s(device) for device in kernel.devices}
        peak = peaks.pop() if len(peaks) == 1 else None
        return 100.0 * kernel.gbps * 1e9 / peak if kernel.gbps and peak else None

    def tflops(self, node: int) -> dict[str, float]:
        """A kernel's TFLOP/s for each flops metric it declared (flops, flops8 … flops64), over its time."""
        if self.unit != "ns" or not self.has_own[node] or not self.inclusive[node]:
            return {}
        seconds = self.inclusive[node] * 1e-9
        return {
            key: value / seconds / 1e12
            for key, value in self.node_metrics(node).items()
            if FLOPS_KEY.match(key) and is_number(value) and value
        }

    def device_warnings(self) -> list[str]:
        """What a multi-device capture cannot tell apart, said plainly."""
        ran_on = sorted(self.kernel_devices() - {""})
        listed = self._listed_devices()
        warnings = []
        if len(ran_on) > 1:
            warnings.append(
                f"kernels ran on {len(ran_on)} devices ({', '.join(ran_on)}): Proton merges same-named kernels "
                "launched from one calling context on different GPUs into one node labelled with a single device, "
                "so per-device totals can be off; scope each GPU's work to tell them apart"
            )
        missing = [d for d in ran_on if d not in listed]
        if missing and listed:
            warnings.append(
                f"device_info lists {', '.join(sorted(listed))} but not {', '.join(missing)} "
                "(Triton 3.6's multi-GPU metadata bug): no peak bandwidth for those"
            )
        return warnings
