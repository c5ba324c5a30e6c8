"""The likely-cause rules on NVML readings of an H200 (tests/fixtures/nvml, in the reader's own format), the detail
lines, and the reader itself where NVML cannot start (this machine has no NVIDIA driver)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from proton_tui.engine.gpuhealth import (
    NO_CAUSE,
    Nvml,
    detail_lines,
    explain,
    likely_causes,
    reason_names,
    summarise_samples,
    unread_readings,
)
from tests.helpers import FIXTURES


def readings(name: str) -> dict:
    return json.loads((FIXTURES / "nvml" / f"h200_{name}.json").read_text())


@pytest.mark.parametrize("name, cause", [
    ("other_process", "other process on the GPU: pid 4242 (python3)"),
    ("busy_unlisted", "GPU 100% busy before the run started (no process listed: another container or user?)"),
    ("mig", "MIG enabled: the run had a slice of the GPU"),
    ("hw_slowdown", "HW slowdown"),
    ("memory_clock", "memory clock 1593 MHz of 3201 MHz while busy"),
    ("thermal", "thermal slowdown at 91 °C (slowdown at 90 °C) for about 0.82 s"),
    ("power_cap", "power cap: throttled by SW power cap at 300 W of 700 W for about 1.3 s"),
    ("ecc", "ECC: 2 uncorrected errors since the driver loaded; a row remap is pending (reset the GPU to apply it)"),
    ("pcie_degraded", "PCIe Gen3 x8 of Gen5 x16"),
])
def test_each_reading_names_its_cause_first(name, cause):
    assert likely_causes(readings(name))[0].text == cause


def test_a_healthy_gpu_has_no_cause_and_says_so_only_when_slow():
    healthy = readings("healthy")
    assert likely_causes(healthy) == []
    assert explain(healthy, 3000.0, 4400.0).text == NO_CAUSE
    assert explain(healthy, 4390.0, 4400.0).text == ""


def test_causes_come_likeliest_first_and_the_column_counts_the_rest():
    capped = readings("power_cap")
    assert [cause.kind for cause in likely_causes(capped)] == ["power_cap", "sm_clock"]
    assert likely_causes(capped)[1].text == "SM clock 1320 MHz of 1980 MHz"
    shared = readings("other_process")
    shared["during"].update(pcie_generation_max=4, clocks_event_reasons=0x4)
    explanation = explain(shared, 2100.0, 4400.0)
    assert [cause.kind for cause in explanation.causes] == ["processes", "power_cap", "pcie"]
    assert explanation.text == "other process on the GPU: pid 4242 (python3) (+2 more)"


def test_an_idle_pcie_link_is_not_a_cause():
    """An idle link steps down (Gen1 before the run): only the generation seen while busy counts."""
    healthy = readings("healthy")
    assert healthy["before"]["pcie_generation"] == 1 and likely_causes(healthy) == []
    healthy["during"]["busy_samples"] = 0
    healthy["after"]["pcie_generation"] = 1
    assert likely_causes(healthy) == []


def test_unread_fields_are_no_cause_and_are_named_once():
    partial = readings("healthy")
    for snapshot in (partial["before"], partial["after"]):
        for key in ("power_limit_mw", "temperature_c", "processes", "ecc_enabled"):
            snapshot.pop(key)
        snapshot["unread"] = {"power_limit_mw": "Not Supported", "temperature_c": "Not Supported",
                              "processes": "Insufficient Permissions", "ecc_enabled": "Not Supported"}
    assert likely_causes(partial) == []
    lines = detail_lines(partial)
    assert lines[-1] == ("not read   power limit mw, temperature c, ecc enabled: Not Supported; "
                         "processes: Insufficient Permissions")
    assert not any(line.startswith(("processes", "ECC")) for line in lines)


def test_readings_that_failed_explain_nothing():
    failed = unread_readings("NVML did not start: NVML Shared Library Not Found")
    assert likely_causes(failed) == [] and likely_causes(None) == []
    assert explain(failed, 1000.0, 4400.0).text == ""  # not "no cause found": nothing was looked at
    assert detail_lines(failed) == ["GPU readings: not read: NVML did not start: NVML Shared Library Not Found"]
    assert detail_lines(None) == ["no GPU readings in this check"]


def test_detail_lines_of_a_gpu_shared_with_another_process():
    lines = detail_lines(readings("other_process"))
    assert lines[0] == ("device     NVIDIA H200  GPU-6c1f0e2a-3b4d-5e6f-8a9b-0c1d2e3f4a5b  00000000:18:00.0 "
                        "(found by uuid); driver 580.159.04")
    assert "clocks     SM 1980 MHz of 1980 MHz while busy, memory 3201 MHz of 3201 MHz while busy" in lines
    assert "power      up to 512.384 W while it ran, 1,284.663 J in all, limit 700 W (default 700 W, max 700 W)" in lines
    assert "processes  pid 4242 (python3) 3,081 MiB" in lines
    assert "PCIe       Gen5 x16 while busy, Gen5 x16 after (an idle link steps down); at most Gen5 x16" in lines


def test_process_names_are_data():
    hostile = readings("other_process")
    hostile["before"]["processes"][0]["name"] = "evil\x1b[31mred"
    text = likely_causes(hostile)[0].text + "\n".join(detail_lines(hostile))
    assert "\x1b" not in text


def test_samples_keep_the_busy_extremes_and_every_reason_seen():
    samples = [{"clocks_event_reasons": 1, "sm_clock_mhz": 345, "mem_clock_mhz": 3201, "pcie_generation": 1},
               {"clocks_event_reasons": 0, "sm_clock_mhz": 1980, "mem_clock_mhz": 3201, "pcie_generation": 5,
                "power_mw": 500000},
               {"clocks_event_reasons": 4, "sm_clock_mhz": 1500, "mem_clock_mhz": 3201, "pcie_generation": 5,
                "unread": {"temperature_c": "Unknown Error"}}]
    during = summarise_samples(samples, 0.1)
    assert during == {"samples": 3, "busy_samples": 2, "interval_s": 0.1, "clocks_event_reasons": 4,
                      "sm_clock_mhz_min": 1500, "sm_clock_mhz_max": 1980, "mem_clock_mhz_min": 3201,
                      "mem_clock_mhz_max": 3201, "power_mw_max": 500000, "pcie_generation_max": 5,
                      "unread": {"temperature_c": "Unknown Error"}}
    assert reason_names(0x10C | 0x200) == ["SW power cap", "HW slowdown", "display clock setting", "0x200"]


def test_without_a_driver_nvml_says_why_in_one_line():
    """The real binding on a machine with no NVIDIA driver: the reader gives up with NVML's reason."""
    nvml, problem = Nvml.open()
    if nvml is not None:
        nvml.close()
        pytest.skip("NVML starts on this machine")
    assert problem.startswith("NVML did not start: ") and "\n" not in problem


def test_without_the_binding_it_names_the_extra_to_install():
    code = ("import sys; sys.modules['pynvml'] = None\n"  # as if nvidia-ml-py were not installed
            "from proton_tui.engine.gpuhealth import Nvml; print(Nvml.open()[1])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "nvidia-ml-py is not installed (pip install 'proton-tui[gpu]')"


@pytest.mark.gpu
def test_the_reader_reads_a_real_gpu():
    from proton_tui.engine.probe import probe_interpreter

    info = probe_interpreter(sys.executable)
    if info.gpu_vendor != "nvidia":
        pytest.skip("needs an NVIDIA GPU; this machine has none")
    nvml, problem = Nvml.open()
    assert nvml is not None, problem
    try:
        handle, device = nvml.find(info.gpu_uuids[0] if info.gpu_uuids else None)
        snapshot = nvml.snapshot(handle)
        assert device["found_by"] == "uuid" and device["name"] == info.gpu_names[0]
        for key in ("sm_clock_max_mhz", "mem_clock_max_mhz", "power_limit_mw", "temperature_c", "pcie_width_max"):
            assert isinstance(snapshot.get(key), int), (key, snapshot.get("unread"))
        assert isinstance(snapshot.get("processes"), list)
    finally:
        nvml.close()


def recorded(name: str) -> dict:
    return json.loads((FIXTURES / "nvml" / f"recorded_h200_{name}.json").read_text())


def test_recorded_h200_readings():
    """Recorded on the H200 with benchmarks/gpu/record_nvml.py: idle and under its own load nothing explains a slow
    GPU; beside benchmarks/gpu/load_gpu.py (another process, started apart) that process is named first."""
    for name in ("idle", "load"):
        assert likely_causes(recorded(name)) == [], name
        assert recorded(name)["device"]["found_by"] == "uuid"
    loaded = recorded("load")
    assert loaded["during"]["busy_samples"] >= 1 and loaded["during"]["sm_clock_mhz_max"] == 1980
    shared = likely_causes(recorded("other_process"))
    assert shared[0].text == "other process on the GPU: pid 749 (python3)"


def test_a_gpu_that_is_not_slow_only_has_something_noted():
    degraded = readings("pcie_degraded")
    assert explain(degraded, 4380.0, 4400.0).text == "noted: PCIe Gen3 x8 of Gen5 x16"
    assert explain(degraded, 4380.0, 4400.0).label == "noted"
    assert explain(degraded, 1000.0, 4400.0).text == "PCIe Gen3 x8 of Gen5 x16"
    assert explain(degraded, None, 4400.0).text == "noted: PCIe Gen3 x8 of Gen5 x16"  # a failed run: no bandwidth


def test_a_slow_gpu_never_seen_busy_says_what_was_not_judged():
    idle = json.loads((FIXTURES / "nvml" / "recorded_h200_idle.json").read_text())
    assert explain(idle, 1000.0, 4400.0).text == (
        f"{NO_CAUSE} (NVML never saw the GPU busy while the run went: clocks and throttling not judged)")
    refused = {"source": "nvml", "before": {"unread": {"sm_clock_mhz": "Not Supported"}}, "during": {"samples": 3},
               "after": {"unread": {"sm_clock_mhz": "Not Supported"}}}
    assert explain(refused, 1000.0, 4400.0).text == f"{NO_CAUSE} (NVML answered no reading)"
    assert explain(readings("healthy"), 1000.0, 4400.0).text == NO_CAUSE


def test_long_throttling_is_said_in_whole_seconds():
    capped = readings("power_cap")
    capped["after"]["violation_power_ns"] = capped["before"]["violation_power_ns"] + 599_600_000_000
    assert likely_causes(capped)[0].text == "power cap: throttled by SW power cap at 300 W of 700 W for about 600 s"
    capped["after"]["violation_power_ns"] = capped["before"]["violation_power_ns"] + 99_600_000_000
    assert likely_causes(capped)[0].text.endswith("for about 100 s")


def test_a_pcie_generation_drop_with_the_width_unread():
    slow_link = readings("healthy")
    slow_link["during"]["pcie_generation_max"] = 3
    for snapshot in (slow_link["before"], slow_link["after"], slow_link["during"]):
        for key in ("pcie_width", "pcie_width_max"):
            snapshot.pop(key, None)
    assert [cause.text for cause in likely_causes(slow_link)] == ["PCIe Gen3 of Gen5"]


def test_a_counter_that_went_down_is_said_to_have_reset_not_zero():
    reset = readings("healthy")
    reset["after"]["energy_mj"] = reset["before"]["energy_mj"] - 5
    reset["after"]["violation_thermal_ns"] = 0
    reset["before"]["violation_thermal_ns"] = 7_000_000
    lines = "\n".join(detail_lines(reset))
    assert "energy counter reset during the run" in lines and "thermal counter reset during the run" in lines
    assert " 0 J in all" not in lines and "thermal 0 ms" not in lines


def test_a_memory_clock_drop_in_part_of_the_run_is_a_cause():
    dipped = readings("healthy")
    dipped["during"]["mem_clock_mhz_min"] = 1593
    assert [cause.text for cause in likely_causes(dipped)] == ["memory clock 1593–3201 MHz of 3201 MHz while busy"]


def test_the_default_power_limit_is_named_only_when_read():
    capped = readings("power_cap")
    for snapshot in (capped["before"], capped["after"]):
        snapshot["power_limit_mw"] = 700000
        snapshot.pop("power_default_limit_mw", None)
    assert likely_causes(capped)[0].text.startswith("power cap: throttled by SW power cap at 700 W for")
    for snapshot in (capped["before"], capped["after"]):
        snapshot["power_limit_mw"] = 300000
    assert "at 300 W of 700 W (its maximum)" in likely_causes(capped)[0].text


def test_a_hw_thermal_slowdown_is_named_once():
    hot = readings("hw_slowdown")
    hot["during"]["clocks_event_reasons"] = 0x40
    hot["after"]["violation_thermal_ns"] = hot["before"].get("violation_thermal_ns", 0) + 800_000_000
    hot["before"].setdefault("violation_thermal_ns", 0)
    causes = likely_causes(hot)
    assert "HW thermal slowdown" in causes[0].text and not any(cause.kind == "thermal" for cause in causes)


def test_driver_and_problem_text_are_data():
    hostile = readings("other_process")
    hostile["driver_version"] = "580\x1b]0;owned\x07"
    assert "\x1b" not in "\n".join(detail_lines(hostile)) and "\x07" not in "\n".join(detail_lines(hostile))
    assert "\x1b" not in detail_lines(unread_readings("UUID GPU-\x1b[31mred: Not Found"))[0]


def test_a_process_memory_in_bytes_is_exact_or_about():
    shared = readings("other_process")
    assert "processes  pid 4242 (python3) 3,081 MiB" in detail_lines(shared)
    shared["before"]["processes"][0]["used_memory_bytes"] = 3_230_662_656 + 1000
    shared["after"]["processes"][0]["used_memory_bytes"] = 3_230_662_656 + 1000
    assert "processes  pid 4242 (python3) about 3,081 MiB" in detail_lines(shared)
    recorded = json.loads((FIXTURES / "nvml" / "recorded_h200_other_process.json").read_text())
    assert "processes  pid 749 (python3) at least 2,658 MiB" in detail_lines(recorded)  # an older reader's MiB


class Refusing:
    """The real binding with NVML not started here, so every call raises NVML's own error, except the calls given
    (NVML failures that only a GPU box can produce)."""

    def __init__(self, **calls) -> None:
        import pynvml

        self.pynvml, self.calls = pynvml, calls

    def __getattr__(self, name):
        return self.calls[name] if name in self.calls else getattr(self.pynvml, name)


def nvml_error(code_name: str):
    import pynvml

    def fail(*args):
        raise pynvml.NVMLError(getattr(pynvml, code_name))
    return fail


def test_a_gpu_lost_while_finding_it_by_pci_order_is_a_lookup_failure():
    nvml = Nvml(Refusing(nvmlDeviceGetCount=lambda: 2, nvmlDeviceGetHandleByIndex=nvml_error("NVML_ERROR_GPU_IS_LOST")))
    with pytest.raises(LookupError, match="PCI bus order: GPU is lost"):
        nvml.find(None, None, "1", pci_order=True)
    with pytest.raises(LookupError, match="the only GPU: GPU is lost"):
        Nvml(Refusing(nvmlDeviceGetCount=lambda: 1,
                      nvmlDeviceGetHandleByIndex=nvml_error("NVML_ERROR_GPU_IS_LOST"))).find(None, None, "0")


def test_a_refused_graphics_list_keeps_the_compute_processes():
    from types import SimpleNamespace

    nvml = Nvml(Refusing(
        nvmlDeviceGetComputeRunningProcesses=lambda handle: [SimpleNamespace(pid=4242, usedGpuMemory=3 * 2**30)],
        nvmlDeviceGetGraphicsRunningProcesses=nvml_error("NVML_ERROR_NOT_SUPPORTED")))
    snapshot = nvml.snapshot("handle", own_pid=None)
    assert [(p["pid"], p["kind"], p["used_memory_bytes"]) for p in snapshot["processes"]] == [(4242, "compute",
                                                                                              3 * 2**30)]
    assert snapshot["unread"]["processes_graphics"] == "Not Supported" and "processes" not in snapshot["unread"]
    both = Nvml(Refusing()).snapshot("handle", own_pid=None)
    assert "processes" not in both and "processes" in both["unread"]


@pytest.mark.parametrize("slow", ["snapshot", "sample"])
async def test_nvml_settles_only_once_every_call_cancelled_under_way_has_returned(slow):
    """A check cancelled while NVML answers a snapshot (before or after a run) or a sample: the thread's call runs
    on, and NVML is shut down only once it has returned."""
    import asyncio
    import threading

    from proton_tui.engine.gpuhealth import Watch

    release, returned = threading.Event(), []
    nvml = Nvml(Refusing())

    def slow_call(handle, *args):
        release.wait(5)
        returned.append(True)
        return {}
    setattr(nvml, slow, slow_call)
    watch = Watch(nvml, "handle", {})
    if slow == "snapshot":
        task = asyncio.create_task(watch.begin())
    else:
        task = watch.task = asyncio.create_task(watch._sample())
    await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    settling = asyncio.create_task(nvml.settled())
    await asyncio.sleep(0.1)
    assert not settling.done() and not returned  # NVML may not be shut down yet
    release.set()
    await asyncio.wait_for(settling, 5)
    assert returned == [True] and not nvml.calls
