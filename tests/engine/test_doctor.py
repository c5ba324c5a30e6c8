"""`proton-tui doctor`'s pure core: the matrix it plans for a recorded interpreter (Triton 3.6.0, 3.7.1, 3.9.0, on
NVIDIA and AMD), the environment facts and their remedies, and how a finished cell is judged."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from proton_tui.engine.classify import Outcome, OutputClassifier, decide_verdict
from proton_tui.engine.command import payload_args
from proton_tui.engine.doctor import (
    HostReadings,
    environment_facts,
    judge_cell,
    plan_matrix,
)
from proton_tui.engine.probe import InterpreterInfo
from proton_tui.engine.runner import ProcessResult
from proton_tui.engine.session import capture_status
from tests.helpers import FIXTURES, doctor_folder, h200_probe, plant_probe

PASS_LINES = ["vecadd: device=NVIDIA H200", "vecadd: size=4096 iters=2 block_size=1024", "vecadd: max_abs_err=0.000e+00",
              "vecadd: PASS"]


def h200(version: str = "3.6.0", vendor: str = "nvidia") -> InterpreterInfo:
    """The 2×H200 box's recorded probe answer, its Triton version (and vendor) replaced."""
    info = h200_probe()
    names = info.gpu_names if vendor == "nvidia" else ("AMD Instinct MI300X",) * 2
    return replace(info, triton_version=version, gpu_vendor=vendor, gpu_names=names)


def by_key(cells):
    return {(c.backend, c.context, c.format, c.mode): c for c in cells}


# --- the matrix ------------------------------------------------------------------------------------------------
def test_triton_360_on_nvidia_offers_four_backends_tree_and_trace():
    cells = plan_matrix(h200("3.6.0"))
    assert len(cells) == 4 * 2 * 2 * 2  # backends × contexts × (hatchet, chrome_trace) × modes
    assert {c.backend for c in cells} == {"auto", "cupti", "roctracer", "instrumentation"}  # rocprofiler: >= 3.8
    assert {c.format for c in cells} == {"hatchet", "chrome_trace"}  # hatchet_msgpack: >= 3.7
    works = [c for c in cells if c.expected == "works"]
    assert len(works) == 3 * 2 * 2 * 2 and {c.backend for c in works} == {"auto", "cupti", "instrumentation"}
    for cell in cells:
        if cell.backend == "roctracer":
            assert cell.expected == "refused" and any("for AMD GPUs" in reason for reason in cell.reasons)
            assert cell.metric is None
        elif cell.backend == "instrumentation":
            assert cell.metric == "cycles" and "--scoped" in payload_args(cell.params)
        else:
            assert cell.metric == "time (ns)" and "--scoped" not in payload_args(cell.params)
    auto = by_key(cells)[("auto", "shadow", "hatchet", "cli")]
    assert auto.resolved == "cupti" and auto.data == "tree" and auto.params.device == 0
    trace = by_key(cells)[("cupti", "python", "chrome_trace", "env")]
    assert trace.data == "trace" and trace.params.data == "trace" and trace.params.context == "python"
    assert trace.params.mode == "env" and trace.params.hook


def test_triton_371_adds_msgpack_only_in_env_mode():
    cells = by_key(plan_matrix(h200("3.7.1")))
    assert len(cells) == 4 * 2 * 3 * 2
    cli = cells[("cupti", "shadow", "hatchet_msgpack", "cli")]
    assert cli.expected == "refused" and any("needs --mode env" in reason for reason in cli.reasons)
    env = cells[("cupti", "shadow", "hatchet_msgpack", "env")]
    assert env.expected == "works" and env.params.output_format == "hatchet_msgpack" and env.metric == "time (ns)"
    assert sum(c.expected == "works" for c in cells.values()) == 3 * 2 * 5


def test_triton_390_adds_rocprofiler_refused_on_nvidia():
    cells = plan_matrix(h200("3.9.0"))
    assert len(cells) == 5 * 2 * 3 * 2
    assert Counter(c.expected for c in cells) == {"works": 30, "refused": 30}
    assert all(c.expected == "refused" for c in cells if c.backend in ("roctracer", "rocprofiler"))


def test_on_amd_cupti_is_refused_and_auto_resolves_to_rocprofiler_from_380():
    cells = by_key(plan_matrix(h200("3.9.0", vendor="amd")))
    assert cells[("cupti", "shadow", "hatchet", "env")].expected == "refused"
    assert cells[("auto", "shadow", "hatchet", "cli")].resolved == "rocprofiler"
    roctracer_cli = cells[("roctracer", "shadow", "hatchet", "cli")]
    assert roctracer_cli.expected == "refused" and any("pinned roctracer" in r for r in roctracer_cli.reasons)
    assert cells[("roctracer", "shadow", "hatchet", "env")].expected == "works"
    assert cells[("rocprofiler", "python", "chrome_trace", "cli")].expected == "works"
    assert by_key(plan_matrix(h200("3.7.1", vendor="amd")))[("auto", "shadow", "hatchet", "cli")].resolved == "roctracer"


def test_each_cell_has_its_own_run_name_and_the_tiny_payload():
    cells = plan_matrix(h200("3.9.0"), gpu=1)
    assert len({c.params.name for c in cells}) == len(cells)
    assert {(c.params.size, c.params.iters, c.params.device) for c in cells} == {(4096, 2, 1)}


def test_filters_narrow_the_matrix():
    cells = plan_matrix(h200("3.7.1"), backend="cupti", mode="env")
    assert {(c.backend, c.mode) for c in cells} == {("cupti", "env")} and len(cells) == 2 * 3


def test_without_a_gpu_there_is_no_matrix():
    assert plan_matrix(replace(h200(), gpu_vendor=None, gpu_names=())) == []


# --- the environment facts -------------------------------------------------------------------------------------
NVIDIA_HOST = HostReadings(
    nvidia_version="NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  9 2025\nGCC version: gcc 13\n",
    nvidia_params="ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 0\nEnableMSI: 1\n", amdgpu_version=None, euid=1000)
CUPTI_OK = {"triton_dir": "/venv/triton", "libraries": [
    {"name": "cupti", "path": "/venv/triton/backends/nvidia/lib/cupti/libcupti.so", "source": "bundled",
     "exists": True, "loads": True, "error": None}]}


def facts(info=None, libraries=CUPTI_OK, host=NVIDIA_HOST, environ=None, cache="fresh"):
    return {fact.name: fact for fact in environment_facts(info or h200(), libraries, host, environ or {}, cache)}


def test_a_healthy_nvidia_box_has_no_remedy():
    found = facts()
    assert {name: fact.state for name, fact in found.items() if fact.state not in ("ok", "info")} == {}
    assert "580.159.04" in found["driver"].value
    assert "/venv/triton/backends/nvidia/lib/cupti/libcupti.so" in found["CUPTI"].value
    assert all(fact.remedy is None for fact in found.values())
    assert "roctracer" not in found  # NVIDIA: the ROCm libraries do not apply


def test_a_missing_or_unloadable_cupti_fails_with_its_remedy():
    missing = {"triton_dir": "/venv/triton", "libraries": [{**CUPTI_OK["libraries"][0], "exists": False,
                                                            "loads": False, "error": "not found"}]}
    fact = facts(libraries=missing)["CUPTI"]
    assert fact.state == "fail" and "TRITON_CUPTI_LIB_PATH" in fact.remedy
    broken = {"triton_dir": "/venv/triton", "libraries": [{**CUPTI_OK["libraries"][0], "source": "TRITON_CUPTI_LIB_PATH",
                                                           "loads": False, "error": "libcuda.so.1: cannot open"}]}
    fact = facts(libraries=broken)["CUPTI"]
    assert fact.state == "fail" and "libcuda.so.1: cannot open" in fact.value and "TRITON_CUPTI_LIB_PATH" in fact.value


def test_counters_restricted_to_admins_warn_a_user_not_root():
    restricted = replace(NVIDIA_HOST, nvidia_params="RmProfilingAdminOnly: 1\n")
    fact = facts(host=restricted)["profiling counters"]
    assert fact.state == "warn" and "NVreg_RestrictProfilingToAdminUsers=0" in fact.remedy
    assert "kernel times" in fact.value  # what still works
    assert facts(host=replace(restricted, euid=0))["profiling counters"].state == "ok"
    assert facts()["profiling counters"].state == "ok"
    assert facts(host=replace(NVIDIA_HOST, nvidia_params=None))["profiling counters"].state == "info"


def test_amd_with_hip_visible_devices_is_told_to_use_rocr():
    amd_host = HostReadings(None, None, "6.8.5", 1000)
    libraries = {"triton_dir": "/t", "libraries": [
        {"name": "roctracer", "path": "libroctracer64.so", "source": "default", "exists": None, "loads": True,
         "error": None},
        {"name": "rocprofiler-sdk", "path": "librocprofiler-sdk.so", "source": "default", "exists": None,
         "loads": False, "error": "librocprofiler-sdk.so: cannot open shared object file"}]}
    found = facts(h200("3.9.0", "amd"), libraries, amd_host, {"HIP_VISIBLE_DEVICES": "1"})
    assert found["visible devices"].state == "warn" and "ROCR_VISIBLE_DEVICES" in found["visible devices"].remedy
    assert found["roctracer"].state == "ok" and "CUPTI" not in found
    assert found["rocprofiler-sdk"].state == "warn" and "unversioned" in found["rocprofiler-sdk"].remedy
    assert found["driver"].state == "ok" and "6.8.5" in found["driver"].value


def test_no_gpu_names_the_likely_cause():
    cpu = replace(h200(), torch_version="2.13.0+cpu", gpu_vendor=None, gpu_names=())
    gpu = facts(cpu, host=HostReadings(None, None, None, 1000))["GPU"]
    assert gpu.state == "warn" and "CPU build" in gpu.remedy
    hidden = facts(replace(cpu, torch_version="2.11.0+cu130"), environ={"CUDA_VISIBLE_DEVICES": ""})
    assert "CUDA_VISIBLE_DEVICES" in hidden["GPU"].remedy and hidden["visible devices"].state == "warn"


def test_interpreter_problems_fail():
    no_triton = replace(h200(), triton_version=None, triton_error="ModuleNotFoundError: No module named 'triton'",
                        has_proton=False)
    fact = facts(no_triton)["interpreter"]
    assert fact.state == "fail" and "No module named 'triton'" in fact.value and "--python" in fact.remedy
    fact = facts(replace(h200(), has_proton=False))["interpreter"]
    assert fact.state == "fail" and "without Proton" in fact.value
    disabled = facts(environ={"TRITON_PROTON_DISABLE": "1"})["TRITON_PROTON_DISABLE"]
    assert disabled.state == "fail" and "unset TRITON_PROTON_DISABLE" in disabled.remedy
    assert "TRITON_PROTON_DISABLE" not in facts(environ={"TRITON_PROTON_DISABLE": "0"})


@pytest.mark.parametrize("state, level", [("fresh", "ok"), ("stale", "info"), ("absent", "info"),
                                          ("unreadable", "warn")])
def test_probe_cache_state(state, level):
    assert facts(cache=state)["probe cache"].state == level


# --- judging a finished cell (real captures, real verdicts) -----------------------------------------------------
def verdict_for(capture: str, backend: str):
    classifier = OutputClassifier()
    classifier.feed(PASS_LINES)
    status, profile = capture_status(FIXTURES / capture)
    return decide_verdict(classifier, ProcessResult(0, None, 1.0), status, backend), profile


def cell(backend: str, fmt: str = "hatchet"):
    return by_key(plan_matrix(h200("3.7.1")))[(backend, "shadow", fmt, "env")]


def test_a_cupti_capture_with_kernel_times_passes():
    verdict, profile = verdict_for("vecadd_hook.hatchet", "cupti")
    judged = judge_cell(cell("cupti"), verdict, profile.unit)
    assert judged.proved == "PASS" and judged.ok and judged.metric == "time (ns)" and judged.remedy is None


def test_instrumentation_needs_cycles():
    verdict, profile = verdict_for("instr_scopes_trace.chrome_trace", "instrumentation")
    assert judge_cell(cell("instrumentation", "chrome_trace"), verdict, profile.unit).ok
    verdict, profile = verdict_for("vecadd_hook.hatchet", "instrumentation")
    judged = judge_cell(cell("instrumentation"), verdict, profile.unit)
    assert not judged.ok and judged.proved == "wrong metric" and "cycles" in judged.message
    assert "time (ns)" in judged.message


def test_an_empty_capture_fails_with_the_classifier_hint():
    verdict, profile = verdict_for("vecadd_instr.hatchet", "cupti")
    assert verdict.outcome is Outcome.EMPTY_CAPTURE
    judged = judge_cell(cell("cupti"), verdict, profile.unit)
    assert not judged.ok and judged.proved == "empty capture" and judged.remedy


# --- the probe cache's state, read before probing ---------------------------------------------------------------
def test_cache_state_from_the_entry_on_disk(tmp_path, monkeypatch):
    import sys

    from proton_tui.engine.probe import cache_entry, cache_state, probe_interpreter

    probe_interpreter(sys.executable)
    assert cache_state(sys.executable) == "fresh"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_state(sys.executable) == "absent" and cache_state("/no/such/python") == "absent"
    entry = cache_entry(sys.executable)
    entry.parent.mkdir(parents=True)
    entry.write_text(json.dumps({"info": {}, "stamps": {sys.executable: 1}}))  # written before an upgrade
    assert cache_state(sys.executable) == "stale"
    entry.write_text("{")
    assert cache_state(sys.executable) == "unreadable"


# --- the report read back, as text --------------------------------------------------------------------------------
def stored_report(name: str):
    from proton_tui.engine.doctor import DoctorReport
    from proton_tui.records import read_doctor

    return DoctorReport.from_record(read_doctor(FIXTURES / "doctor" / f"{name}.json"))


def test_the_text_report_of_a_failed_matrix():
    from proton_tui.engine.doctor import format_report

    report = stored_report("no_driver")
    assert report.exit_code == 1 and report.to_json()["failed"] == 10 and report.to_json()["refused"] == 2
    text = format_report(report)
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("BACKEND"))
    assert lines[header].split() == ["BACKEND", "CONTEXT", "FORMAT", "MODE", "EXPECTED", "PROVED"]
    assert lines[header + 1].split()[:5] == ["cupti", "shadow", "hatchet", "cli", "time"]
    assert len([line for line in lines if line.startswith("cupti ")]) == 10  # the refused cells are not in the table
    assert "refused by the rules for Triton 3.7.1 (not run):" in text
    assert "  2 cells: Proton's command line writes a tree as .hatchet only" in text
    assert "  cupti/shadow/hatchet/cli: no capture written: Proton failed before the payload started" in text
    assert "    → Triton found no GPU driver" in text and text.rstrip().splitlines()[-2] == \
        "doctor: FAIL: 10 of 10 cells failed"


def test_the_no_gpu_report_exits_3():
    from proton_tui.engine.doctor import NO_GPU_EXIT, format_report

    report = stored_report("no_gpu")
    assert report.exit_code == NO_GPU_EXIT == 3
    assert "\nno GPU: profiling not checked\n" in format_report(report)


def test_the_open_kernel_modules_version_line_gives_the_driver_version():
    """The H200's driver (580.159.04, NVIDIA's open kernel module) words its version line "Open Kernel Module for
    x86_64": the version is the number, not the word after "Kernel Module"."""
    line = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  "
            "(dvs-builder@U22-I3-AF03-09-1)  Thu Oct  9 2025\n")
    assert facts(host=replace(NVIDIA_HOST, nvidia_version=line))["driver"].value == "NVIDIA 580.159.04"
    assert facts()["driver"].value == "NVIDIA 580.159.04"


def test_unreadable_driver_params_say_so():
    fact = facts(host=replace(NVIDIA_HOST, nvidia_params=None))["profiling counters"]
    assert fact.state == "info" and "could not be read" in fact.value


def test_rocm_variables_do_not_hide_nvidia_gpus():
    found = facts(environ={"ROCR_VISIBLE_DEVICES": "", "HIP_VISIBLE_DEVICES": "-1"})
    assert found["visible devices"].state == "info" and "hides" not in found["visible devices"].value
    assert facts(environ={"CUDA_VISIBLE_DEVICES": "-1"})["visible devices"].state == "warn"


def test_a_wrong_metric_on_auto_names_the_backend_auto_chose():
    verdict, profile = verdict_for("instr_scopes_trace.chrome_trace", "auto")
    judged = judge_cell(cell("auto"), verdict, profile.unit)
    assert judged.proved == "wrong metric" and "another backend than cupti" in judged.remedy


def test_a_cancelled_cell_is_not_a_failure(tmp_path):
    from proton_tui.engine.doctor import CellResult, DoctorReport, not_run
    from proton_tui.records import read_doctor, write_doctor

    cells = plan_matrix(h200())
    ran = [c for c in cells if c.expected == "works"][:2]
    results = [CellResult(ran[0], "PASS", True, "vecadd: PASS"),
               CellResult(ran[1], "cancelled", False, "cancelled after 0.5 s"),
               not_run(next(c for c in cells if c.expected == "refused"))]
    report = DoctorReport("python3", {"triton_version": "3.6.0"}, [], results, 0, "/runs/d", True)
    assert report.failed == [] and report.exit_code == 1
    assert report.verdict() == "CANCELLED: 1 of 2 cells proved before the cancel"
    record = report.to_json()
    assert (record["passed"], record["failed"], record["cancelled_cells"], record["refused"]) == (1, 0, 1, 1)
    write_doctor(tmp_path / "doctor.json", report.to_record())
    assert DoctorReport.from_record(read_doctor(tmp_path / "doctor.json")).to_json() == record
    assert [path.name for path in tmp_path.iterdir()] == ["doctor.json"]  # nothing partial left beside it


def test_a_filter_leaving_only_refused_cells_is_a_usage_error(tmp_path, monkeypatch):
    import sys

    from proton_tui.engine.doctor import plan_doctor
    from proton_tui.engine.params import ParamError

    plant_probe(monkeypatch, sys.executable, h200_probe(python=sys.executable, executable=sys.executable))
    with pytest.raises(ParamError) as raised:
        plan_doctor(sys.executable, output=tmp_path, backend="roctracer")
    assert raised.value.flag == "--backend" and "leaves only cells the rules refuse" in str(raised.value)


def test_a_doctor_json_of_the_previous_layout_reads_with_its_verdicts():
    from proton_tui.engine.job import RowVerdict
    from proton_tui.records import read_doctor

    path = FIXTURES / "doctor" / "no_driver.json"  # written before cancelled cells were counted
    assert "cancelled_cells" not in json.loads(path.read_text())
    record = read_doctor(path)
    assert record.cancelled_cells == 0 and {cell.proved for cell in record.cells} == {
        RowVerdict.NO_CAPTURE, RowVerdict.NOT_RUN}
    assert stored_report("no_driver").to_json()["cells"] == json.loads(path.read_text())["cells"]


def test_a_cell_read_back_from_disk_keeps_its_run(tmp_path):
    from proton_tui.engine.doctor import DoctorReport, read_cell_run
    from proton_tui.records import read_doctor

    report = DoctorReport.from_record(read_doctor(doctor_folder(tmp_path)))
    result = next(result for result in report.results if result.run_dir)
    assert result.run is None  # only its folder is known
    run = read_cell_run(result)
    assert run is not None and run.verdict.passed and run.run_dir == Path(result.run_dir)
    (Path(result.run_dir) / "run.json").write_text('{"schema": 1}')  # not a run record
    assert read_cell_run(result) is None


def test_the_plan_line_never_says_more_cells_at_once_than_there_are():
    from proton_tui.engine.doctor import at_once, plan_line

    where = "the Triton interpreter (no GPU)"
    assert plan_line(1, 1, 2, where) == f"doctor: 1 cell to run on {where}"
    assert plan_line(0, 1, 2, where) == f"doctor: no cell to run on {where}: the rules refuse it"
    assert plan_line(0, 3, 2, "GPU 0") == "doctor: no cell to run on GPU 0: the rules refuse all 3"
    assert plan_line(3, 3, 16, "GPU 0") == "doctor: 3 cells to run on GPU 0, 3 at once"
    assert plan_line(24, 32, 16, "GPU 0") == "doctor: 24 of 32 cells to run on GPU 0, 16 at once"
    assert at_once(2, 1) == "" and at_once(2, 5) == "2 at once"
