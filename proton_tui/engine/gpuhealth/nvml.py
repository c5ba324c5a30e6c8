"""Reading NVML (the ``nvidia-ml-py`` binding, module ``pynvml``, imported only when a check reads a GPU): the
device a CUDA index names, a snapshot before and after a run, fast samples while it goes (``Watch``)."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping
from pathlib import Path

from proton_tui.engine.gpuhealth.causes import REASON_GPU_IDLE

READINGS_SOURCE = "nvml"
INSTALL_HINT = "pip install 'proton-tui[gpu]'"
SAMPLE_INTERVAL_S = 0.1  # NVML's fast fields, every 0.1 s while a GPU's run goes (a few cheap calls each time)


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
            return as_text(call(*args))
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
                by_bus = sorted((as_text(nvml.nvmlDeviceGetPciInfo(h).busId).upper(), h)
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
                device["parent_uuid"] = as_text(nvml.nvmlDeviceGetUUID(handle))
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


def as_text(value):
    return value.decode(errors="replace") if isinstance(value, bytes) else value


def nvml_reason(error: BaseException) -> str:
    """NVML's words for a refusal ("Not Supported", "Insufficient Permissions"), else the exception's."""
    text = str(error).strip()
    return text or type(error).__name__
