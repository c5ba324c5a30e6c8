"""The likely-cause rules on NVML readings of an H200 (tests/fixtures/nvml, in the reader's own format), the detail
lines, and the reader itself where NVML cannot start (this machine has no NVIDIA driver)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from proton_tui.capture.gpuhealth import (
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
    ("memory_clock", "memory clock 1593 MHz of 3201 MHz"),
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
            "from proton_tui.capture.gpuhealth import Nvml; print(Nvml.open()[1])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "nvidia-ml-py is not installed (pip install 'proton-tui[gpu]')"


@pytest.mark.gpu
def test_the_reader_reads_a_real_gpu():
    from proton_tui.capture.probe import probe_interpreter

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
