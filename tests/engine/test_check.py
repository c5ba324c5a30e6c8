"""`proton-tui check`: planning and pinning (pure, explicit InterpreterInfo for NVIDIA and AMD), rows, median,
flags and exit codes (constructed inputs and the real H200 captures), the GPU path end to end with real
processes and a stand-in payload, and the real payload through the Triton interpreter (`--cpu --jobs 2`)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from proton_tui.cli.check import register
from proton_tui.engine.check import (
    CHECK_JSON,
    CheckError,
    CheckReport,
    CheckRow,
    NoGpuError,
    build_row,
    execute_check,
    explain_rows,
    flag_rows,
    format_report,
    measure_capture,
    plan_check,
)
from proton_tui.engine.classify import Outcome, OutputClassifier, Verdict
from proton_tui.engine.command import Command
from proton_tui.engine.gpuhealth import NO_CAUSE, Nvml, unread_readings
from proton_tui.engine.params import ParamError
from proton_tui.engine.probe import InterpreterInfo, probe_interpreter
from proton_tui.engine.runner import ProcessResult
from proton_tui.engine.session import RunResult
from proton_tui.engine.sizes import CHECK_SIZE, GPU_ITERS
from proton_tui.hatchet import load_profile
from proton_tui.records import RunRecord
from tests.helpers import FIXTURES, capture_path

PY = sys.executable
CONSOLE_SCRIPT = Path(sys.executable).parent / "proton-tui"
H200_PEAK_GBPS = 2 * 6016 * 3201000e3 / 8 / 1e9  # the fixtures' device_info: bus width x memory clock, DDR


def interpreter(vendor: str | None = "nvidia", gpus: int = 2, triton: str = "3.6.0", **extra) -> InterpreterInfo:
    """An interpreter described explicitly; ``python`` is this one, so the real-process tests can run it."""
    names = {"nvidia": "NVIDIA H200", "amd": "AMD Instinct MI300X", None: ""}[vendor]
    fields = dict(python=PY, executable=PY, python_version="3.11.7", triton_version=triton, has_proton=True,
                  torch_version="2.11.0", gpu_vendor=vendor, gpu_names=(names,) * gpus if vendor else ())
    return InterpreterInfo(**{**fields, **extra})


def row(label: str, gbps: float | None, passed: bool = True) -> CheckRow:
    return CheckRow(int(label), label, "NVIDIA H200", "PASS" if passed else "FAIL", passed, gbps=gbps)


# --- planning and pinning (pure) ------------------------------------------------------------------------------


def test_gpu_defaults_are_bandwidth_bound_with_a_capture_per_gpu():
    plan = plan_check(info=interpreter(), environ={})
    assert [slot.label for slot in plan.slots] == ["0", "1"]
    assert (plan.size, plan.iters, plan.profile, plan.cpu) == (CHECK_SIZE, GPU_ITERS, True, False)
    assert [slot.plan.params.device for slot in plan.slots] == [0, 1]
    assert all(slot.plan.params.profile and slot.plan.backend_resolved == "cupti" for slot in plan.slots)
    assert len({slot.plan.params.name for slot in plan.slots}) == 2  # each GPU its own capture name


@pytest.mark.parametrize("vendor, environ, expected", [
    ("nvidia", {}, [{"CUDA_VISIBLE_DEVICES": "0"}, {"CUDA_VISIBLE_DEVICES": "1"}]),
    # An index counts among the GPUs the interpreter already sees: map it through the existing pin.
    ("nvidia", {"CUDA_VISIBLE_DEVICES": "4,5"}, [{"CUDA_VISIBLE_DEVICES": "4"}, {"CUDA_VISIBLE_DEVICES": "5"}]),
    ("amd", {}, [{"ROCR_VISIBLE_DEVICES": "0"}, {"ROCR_VISIBLE_DEVICES": "1"}]),
    ("amd", {"ROCR_VISIBLE_DEVICES": "2,3"}, [{"ROCR_VISIBLE_DEVICES": "2"}, {"ROCR_VISIBLE_DEVICES": "3"}]),
    # Triton raises on AMD when these are set, and Proton ignores them: removed, ROCR pins instead.
    ("amd", {"HIP_VISIBLE_DEVICES": "1", "CUDA_VISIBLE_DEVICES": "1"},
     [{"HIP_VISIBLE_DEVICES": None, "CUDA_VISIBLE_DEVICES": None, "ROCR_VISIBLE_DEVICES": str(i)} for i in (0, 1)]),
])
def test_each_gpu_is_pinned_with_the_vendors_variable(vendor, environ, expected):
    plan = plan_check(info=interpreter(vendor), environ=environ)
    assert [slot.pinning(environ) for slot in plan.slots] == expected


def test_gpus_picks_a_subset():
    plan = plan_check(info=interpreter(gpus=4), gpus="1,3", environ={})
    assert [slot.label for slot in plan.slots] == ["1", "3"]
    assert [slot.pinning({}) for slot in plan.slots] == [{"CUDA_VISIBLE_DEVICES": "1"}, {"CUDA_VISIBLE_DEVICES": "3"}]


def test_cpu_plans_unpinned_interpreter_jobs_without_a_capture():
    plan = plan_check(info=interpreter(None, 0), cpu=True, jobs=3, profile=False, environ={})
    assert [slot.label for slot in plan.slots] == ["cpu0", "cpu1", "cpu2"]
    assert all(slot.plan.params.device == "cpu" and not slot.plan.params.profile for slot in plan.slots)
    assert [slot.pinning({}) for slot in plan.slots] == [{}, {}, {}]
    assert (plan.size, plan.iters) == (4096, 2)


def test_no_gpu_names_the_interpreter_and_the_cpu_check():
    with pytest.raises(NoGpuError) as caught:
        plan_check(info=interpreter(None, 0), environ={})
    assert PY in str(caught.value) and "--cpu" in str(caught.value)


def test_missing_torch_or_a_refusal_stops_the_check():
    with pytest.raises(CheckError, match="torch does not import") as caught:
        plan_check(info=interpreter(torch_version=None, torch_error="ModuleNotFoundError: torch"), environ={})
    assert f"`{PY} -m pip install torch triton numpy` installs what the payload needs" in str(caught.value)
    with pytest.raises(CheckError, match="refused configuration: .*without Proton"):
        plan_check(info=interpreter(has_proton=False), environ={})


def test_triton_35_uses_env_mode_where_the_cli_cannot_hook():
    assert {slot.plan.params.mode for slot in plan_check(info=interpreter(triton="3.5.1"), environ={}).slots} == {"env"}
    assert {slot.plan.params.mode for slot in plan_check(info=interpreter(), environ={}).slots} == {"cli"}


@pytest.mark.parametrize("options, flag", [
    ({"gpus": "0,x"}, "--gpus"),
    ({"gpus": "0,0"}, "--gpus"),
    ({"gpus": "2"}, "--gpus"),  # the interpreter sees 0..1
    ({"size": "lots"}, "--size"),
    ({"iters": "0"}, "--iters"),
    ({"min_fraction": "1.5"}, "--min-fraction"),
    ({"min_fraction": "half"}, "--min-fraction"),
    ({"timeout": "-3"}, "--timeout"),
    ({"jobs": "2"}, "--jobs"),  # only with --cpu
    ({"cpu": True, "profile": False, "jobs": "0"}, "--jobs"),
    ({"cpu": True, "profile": False, "gpus": "0"}, "--gpus"),
    ({"cpu": True, "profile": True}, "--profile"),
])
def test_bad_options_name_the_flag(options, flag):
    with pytest.raises(ParamError) as caught:
        plan_check(info=interpreter(), environ={}, **options)
    assert caught.value.flag == flag


# --- rows, median, flags, exit codes (constructed inputs) ------------------------------------------------------


def test_median_is_over_passing_gpus_and_the_slow_one_is_flagged():
    rows = [row("0", 1000.0), row("1", 990.0), row("2", 800.0), row("3", 10.0, passed=False), row("4", None)]
    median = flag_rows(rows, 0.9)
    assert median == 990.0  # the failed GPU's 10 GB/s and the unmeasured one do not count
    assert [r.label for r in rows if r.flagged] == ["2"]
    assert "81% of the median" in rows[2].flag_reason


def test_exactly_at_the_threshold_is_not_flagged_and_one_gpu_never_is():
    rows = [row("0", 100.0), row("1", 90.0), row("2", 100.0)]
    assert flag_rows(rows, 0.9) == 100.0 and not any(r.flagged for r in rows)
    alone = [row("0", 1.0)]
    assert flag_rows(alone, 1.0) == 1.0 and not alone[0].flagged
    assert flag_rows([row("0", None), row("1", 5.0, passed=False)], 0.9) is None


@pytest.mark.parametrize("rows, code", [
    ([row("0", 1000.0), row("1", 995.0)], 0),
    ([row("0", 1000.0), row("1", 500.0)], 1),  # flagged
    ([row("0", 1000.0), row("1", 1000.0, passed=False)], 1),  # failed
    ([], 1),  # nothing checked is not a pass
])
def test_exit_codes(rows, code):
    report = CheckReport(rows, False, PY, CHECK_SIZE, GPU_ITERS, True, 0.9)
    report.median_gbps = flag_rows(rows, 0.9)
    assert report.exit_code == code
    assert report.to_json()["exit_code"] == code


def test_capture_gives_kernel_time_gbps_and_percent_of_peak():
    """The real H200 capture of 2^28 elements x 50 launches with the triton hook's bytes: 4.40 TB/s."""
    measured = measure_capture(load_profile(capture_path("vecadd_hook")), 2**28)
    assert measured.kernel == "add_kernel<n=268435456>" and measured.device == "CUDA:0"
    assert measured.bytes_from_capture
    assert measured.kernel_us == pytest.approx(36601403 / 50 / 1e3)
    assert measured.gbps == pytest.approx(161061273600 / 36601403)
    assert measured.peak_gbps == pytest.approx(H200_PEAK_GBPS)


def test_capture_without_bytes_uses_the_payloads_definition():
    measured = measure_capture(load_profile(capture_path("vecadd_auto")), 2**20)  # no hook: no bytes metric
    assert not measured.bytes_from_capture
    assert measured.gbps == pytest.approx(3 * 4 * 2**20 * 20 / 46112)
    assert measure_capture(load_profile(capture_path("vecadd_instr")), 2**20) is None  # ROOT only


def result_of(lines: list[str], profile_name: str | None, outcome: Outcome = Outcome.PASS) -> RunResult:
    classifier = OutputClassifier()
    classifier.feed(lines)
    profile = load_profile(capture_path(profile_name)) if profile_name else None
    command = Command(("python",), {}, {"CUDA_VISIBLE_DEVICES": "1"},
                      capture_path(profile_name) if profile_name else None)
    return RunResult(Path("/runs/x"), command, Verdict(outcome, outcome.value), classifier.signals,
                     ProcessResult(0, None, 3.0), profile, RunRecord(device_pinning={"CUDA_VISIBLE_DEVICES": "1"}))


PAYLOAD_LINES = ["vecadd: device=NVIDIA H200", "vecadd: size=268435456 iters=49 block_size=1024",
                 "vecadd: first_launch_ms=300.0 (includes compile)",
                 "vecadd: loop_ms=36.000 per_iter_us=734.694 gbps=4.38e+03",
                 "vecadd: max_abs_err=0.000e+00", "vecadd: PASS"]


def test_row_prefers_the_capture_and_keeps_the_payloads_number():
    slot = plan_check(info=interpreter(), environ={}).slots[1]
    built = build_row(slot, result_of(PAYLOAD_LINES, "vecadd_hook"), cpu=False, size=2**28)
    assert (built.verdict, built.passed, built.max_abs_err, built.name) == ("PASS", True, 0.0, "NVIDIA H200")
    assert (built.gbps_source, built.kernel_time_source) == ("capture", "capture")
    assert built.gbps == pytest.approx(4400.4, abs=0.1) and built.payload_gbps == 4380.0
    assert built.peak_percent == pytest.approx(100 * built.gbps / H200_PEAK_GBPS)
    assert built.pinning == {"CUDA_VISIBLE_DEVICES": "1"} and built.capture.endswith("vecadd_hook.hatchet")


def test_row_without_a_capture_says_the_peak_is_unknown():
    slot = plan_check(info=interpreter(), environ={}, profile=False).slots[0]
    built = build_row(slot, result_of(PAYLOAD_LINES, None), cpu=False, size=2**28)
    assert (built.gbps, built.gbps_source, built.kernel_us) == (4380.0, "payload loop", 734.694)
    assert built.peak_percent is None and built.peak_gbps is None and "no capture" in built.peak_note
    failed = build_row(slot, OSError("disk full"), cpu=False, size=2**28)
    assert (failed.verdict, failed.passed, failed.message) == ("error", False, "OSError: disk full")


def test_text_table_is_aligned_and_prints_names_verbatim():
    rows = [row("0", 4400.0), row("1", 3000.0)]
    rows[1].name = "[bold red]GPU[/]"  # data, not markup
    rows[0].peak_percent, rows[0].capture = 91.4, "/runs/a/vecadd-gpu0.hatchet"
    report = CheckReport(rows, False, PY, CHECK_SIZE, GPU_ITERS, True, 0.9, flag_rows(rows, 0.9), "/runs/a")
    text = format_report(report)
    lines = text.splitlines()
    assert lines[0].split() == ["GPU", "NAME", "RESULT", "MAX_ABS_ERR", "KERNEL_US", "GB/S", "%PEAK", "FLAG",
                                "LIKELY_CAUSE", "CAPTURE"]
    assert "[bold red]GPU[/]" in lines[2] and "SLOW" in lines[2] and "SLOW" not in lines[1]
    assert lines[1].endswith("  vecadd-gpu0.hatchet") and lines[2].endswith("  -")  # relative to the folder
    rows[0].name = "H200\x1b[2J"  # a name with a control sequence reaches no terminal
    assert "\x1b" not in format_report(report)
    assert lines[0].index("GB/S") + len("GB/S") == lines[1].index("4400.0") + len("4400.0")  # right-aligned
    assert "flagged below 0.90 x median = 3330.0 GB/s" in text
    assert "GPU 1: flagged: 3000.0 GB/s is 81% of the median" in text
    assert "check: FAIL: 0 of 2 GPUs failed, 1 flagged" in text


def nvml_readings(name: str) -> dict:
    return json.loads((FIXTURES / "nvml" / f"h200_{name}.json").read_text())


def test_the_likely_cause_column_and_notes_come_from_each_gpus_readings():
    rows = [row("0", 4400.0), row("1", 2200.0), row("2", 4380.0), row("3", 3000.0)]
    rows[0].readings, rows[1].readings = nvml_readings("healthy"), nvml_readings("other_process")
    rows[2].readings, rows[3].readings = nvml_readings("pcie_degraded"), nvml_readings("healthy")
    median = flag_rows(rows, 0.9)
    explain_rows(rows, median, 0.9)
    report = CheckReport(rows, False, PY, CHECK_SIZE, GPU_ITERS, True, 0.9, median, "/runs/a")
    lines = format_report(report).splitlines()
    cause = lines[0].index("LIKELY_CAUSE")
    assert [line[cause:].split("  ")[0] for line in lines[1:5]] == [
        "", "other process on the GPU: pid 4242 (python3)", "noted: PCIe Gen3 x8 of Gen5 x16", NO_CAUSE]
    assert "GPU 1: likely cause: other process on the GPU: pid 4242 (python3)" in lines
    assert "GPU 2: noted: PCIe Gen3 x8 of Gen5 x16" in lines  # not slow: nothing to be the cause of
    assert f"GPU 3: likely cause: {NO_CAUSE}" in lines and not any(line.startswith("GPU 0: likely") for line in lines)
    assert not any("GPU readings" in line for line in lines)
    assert rows[1].causes == ["other process on the GPU: pid 4242 (python3)"]


def test_what_could_not_be_read_is_said_once():
    rows = [row("0", 4400.0), row("1", 3000.0)]
    for each in rows:
        each.readings = unread_readings("no NVML device for CUDA device: no UUID")
    median = flag_rows(rows, 0.9)
    explain_rows(rows, median, 0.9)
    text = format_report(CheckReport(rows, False, PY, CHECK_SIZE, GPU_ITERS, True, 0.9, median, "/runs/a"))
    assert text.count("not read") == 1 and "GPU readings of GPUs 0, 1: not read: no NVML device" in text
    assert NO_CAUSE not in text  # nothing was read, so nothing was looked for
    report = CheckReport([row("0", 4400.0)], False, PY, CHECK_SIZE, GPU_ITERS, True, 0.9, 4400.0, "/runs/a",
                         readings_note="NVML did not start: NVML Shared Library Not Found")
    assert "GPU readings (likely cause): not read: NVML did not start: NVML Shared Library Not Found" in \
        format_report(report)


def test_old_and_new_check_folders_read_back_with_their_readings():
    from proton_tui.engine.history import stored_runs

    (old,) = [entry.check_report() for entry in stored_runs(FIXTURES / "runs") if entry.kind == "check"]
    assert old.readings_note is None and all(r.readings is None and r.likely_cause == "" for r in old.rows)
    (new,) = [entry.check_report() for entry in stored_runs(FIXTURES / "gpu_checks") if entry.kind == "check"]
    assert [r.likely_cause for r in new.rows] == ["", "other process on the GPU: pid 4242 (python3)"]
    assert new.rows[1].readings["device"]["uuid"].startswith("GPU-") and new.rows[1].flagged
    assert new.to_json()["rows"][1]["causes"] == ["other process on the GPU: pid 4242 (python3)"]


def test_a_check_read_back_is_explained_by_todays_rules(tmp_path):
    """A check written before the not-flagged GPU's causes were called 'noted' shows them as noted once read back."""
    import shutil

    from proton_tui.engine.history import stored_runs

    folder = tmp_path / "20261202-093015-check"
    shutil.copytree(FIXTURES / "gpu_checks" / "20261202-093015-check", folder)
    record = json.loads((folder / CHECK_JSON).read_text())
    record["rows"][0]["readings"] = record["rows"][1]["readings"]  # GPU 0, not flagged, beside the same process
    record["rows"][0]["likely_cause"] = "other process on the GPU: pid 4242 (python3)"
    (folder / CHECK_JSON).write_text(json.dumps(record))
    (report,) = [entry.check_report() for entry in stored_runs(tmp_path) if entry.kind == "check"]
    assert report.rows[0].likely_cause == "noted: other process on the GPU: pid 4242 (python3)"
    assert "GPU 0: noted: other process on the GPU: pid 4242 (python3)" in format_report(report)


def test_a_cancelled_check_says_so_and_names_folders_printably():
    rows = [row("0", None, passed=False), row("1", None, passed=False)]
    for each in rows:
        each.verdict, each.message = "cancelled", "cancelled after 1.0 s"
    report = CheckReport(rows, False, PY, CHECK_SIZE, GPU_ITERS, True, 0.9, None, "/runs/\x1b[31mcheck")
    text = format_report(report)
    assert "check: CANCELLED: 2 of 2 GPUs ended by the cancel" in text and "FAIL" not in text
    assert "\x1b" not in text and report.exit_code == 1
    assert (report.to_json()["failed"], report.to_json()["cancelled"]) == (0, 2)


# --- the GPU path with real processes: a stand-in payload that reports the pinning it was given ---------------

STAND_IN = textwrap.dedent('''
    import argparse, json, os, time
    parser = argparse.ArgumentParser()
    for flag in ("--size", "--iters", "--block-size"):
        parser.add_argument(flag, type=int)
    for flag in ("--device", "--proton-name", "--proton-context", "--proton-hook", "--proton-backend"):
        parser.add_argument(flag)
    parser.add_argument("--inject-bug", action="store_true")
    args = parser.parse_args()
    env = {var: os.environ.get(var) for var in ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")}
    pinned = env["CUDA_VISIBLE_DEVICES"] or env["ROCR_VISIBLE_DEVICES"]
    gbps = 3000.0 if pinned in os.environ.get("STAND_IN_SLOW", "").split(",") else 4000.0
    print("stand-in: env=" + json.dumps(env), flush=True)
    print(f"vecadd: device=Stand-in GPU {pinned}", flush=True)
    print(f"vecadd: size={args.size} iters={args.iters} block_size={args.block_size}", flush=True)
    time.sleep(0.5)  # long enough for every run of the check to be alive at once
    moved = 12 * args.size * (args.iters + 1)
    print(f"vecadd: loop_ms=1.0 per_iter_us=2.0 gbps={gbps / 2:.6g}", flush=True)  # the capture's differs
    if args.proton_name:  # env mode: write the capture Proton would
        kernel = {"frame": {"name": f"add_kernel<n={args.size}>", "type": "function"}, "children": [],
                  "metrics": {"count": args.iters + 1, "device_id": "0", "device_type": "CUDA",
                              "time (ns)": moved / gbps, "bytes": moved}}
        root = {"frame": {"name": "ROOT", "type": "function"}, "metrics": {}, "children": [kernel]}
        info = {"CUDA": {"0": {"arch": "90", "bus_width": 6016, "memory_clock_rate": 3201000}}}
        with open(args.proton_name + ".hatchet", "w") as capture:
            json.dump([root, info], capture)
    print("vecadd: max_abs_err=0.000e+00", flush=True)
    print("vecadd: PASS", flush=True)
''')


@pytest.fixture
def stand_in(tmp_path) -> Path:
    path = tmp_path / "stand_in.py"
    path.write_text(STAND_IN)
    return path


def clean_environ(**extra: str) -> dict[str, str]:
    environ = {key: value for key, value in os.environ.items() if not key.endswith("VISIBLE_DEVICES")}
    return {**environ, **extra}


def child_env(run_dir: str) -> dict:
    line = next(line for line in (Path(run_dir) / "stdout.log").read_text().splitlines()
                if line.startswith("stand-in: env="))
    return json.loads(line.removeprefix("stand-in: env="))


async def test_gpus_run_in_parallel_pinned_captured_and_the_slow_one_flagged(stand_in, tmp_path):
    environ = clean_environ(CUDA_VISIBLE_DEVICES="4,5", STAND_IN_SLOW="5")
    plan = plan_check(info=interpreter("nvidia", 2), environ=environ, payload=stand_in, mode="env",
                      output=tmp_path / "runs", size=1024, iters=3)
    report = await execute_check(plan, environ=environ)
    first, second = report.rows
    assert [child_env(r.run_dir)["CUDA_VISIBLE_DEVICES"] for r in report.rows] == ["4", "5"]
    assert [r.pinning for r in report.rows] == [{"CUDA_VISIBLE_DEVICES": "4"}, {"CUDA_VISIBLE_DEVICES": "5"}]
    assert max(r.started_at for r in report.rows) < min(r.finished_at for r in report.rows)  # both ran at once
    assert [r.verdict for r in report.rows] == ["PASS", "PASS"] and first.name == "Stand-in GPU 4"
    assert (first.gbps, first.gbps_source, first.payload_gbps) == (pytest.approx(4000.0), "capture", 2000.0)
    assert first.peak_percent == pytest.approx(100 * 4000 / H200_PEAK_GBPS)
    assert Path(first.capture).is_file() and Path(first.capture).parent.parent == Path(report.check_dir)
    assert report.median_gbps == pytest.approx(3500.0)
    assert not first.flagged and second.flagged and report.exit_code == 1
    saved = json.loads((Path(report.check_dir) / "check.json").read_text())
    assert saved["exit_code"] == 1 and saved["flagged"] == 1 and len(saved["rows"]) == 2
    nvml, problem = Nvml.open()  # the GPUs are stand-ins: NVML finds none of them
    if nvml is None:
        assert saved["readings_note"] == report.readings_note == problem
        assert [r["readings"] for r in saved["rows"]] == [None, None]
        assert format_report(report).count(problem) == 1
    else:
        nvml.close()
        assert all(r["readings"]["problem"].startswith("no NVML device for CUDA device") for r in saved["rows"])


async def test_amd_runs_get_rocr_and_lose_cuda_and_hip(stand_in, tmp_path):
    environ = clean_environ(CUDA_VISIBLE_DEVICES="1", HIP_VISIBLE_DEVICES="1")
    plan = plan_check(info=interpreter("amd", 2), environ=environ, payload=stand_in, profile=False,
                      output=tmp_path / "runs", size=1024, iters=3)
    assert any("HIP_VISIBLE_DEVICES=1 is removed" in warning for warning in plan.warnings)
    report = await execute_check(plan, environ=environ)
    assert [child_env(r.run_dir) for r in report.rows] == [
        {"CUDA_VISIBLE_DEVICES": None, "ROCR_VISIBLE_DEVICES": str(i), "HIP_VISIBLE_DEVICES": None} for i in (0, 1)]
    assert [(r.gbps, r.gbps_source, r.peak_percent) for r in report.rows] == [(2000.0, "payload loop", None)] * 2
    assert report.exit_code == 0 and "% of peak unknown: no capture, so no device_info" in format_report(report)
    assert report.readings_note == "reading AMD GPUs is not supported (only NVIDIA GPUs, through NVML)"


# --- the command line -----------------------------------------------------------------------------------------


def cli_app() -> typer.Typer:
    app = typer.Typer(add_completion=False)

    @app.callback()
    def main() -> None:
        """proton-tui (test entry)."""

    register(app)
    return app


def invoke(*args: str):
    return CliRunner().invoke(cli_app(), ["check", *args])


@pytest.mark.parametrize("args, flag", [
    (["--gpus", "one"], "--gpus"),
    (["--min-fraction", "0"], "--min-fraction"),
    (["--size", "big"], "--size"),
    (["--jobs", "2"], "--jobs"),
    (["--cpu", "--gpus", "0"], "--gpus"),
    (["--cpu", "--profile"], "--profile"),
    (["--timeout", "soon"], "--timeout"),
])
def test_bad_flags_are_one_line_with_exit_2(args, flag):
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"proton-tui: error: {flag}") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.output


def this_interpreter_sees_a_gpu() -> bool:
    return probe_interpreter(PY).gpu_count > 0


def test_no_gpu_exits_2_naming_the_interpreter_and_cpu():
    if this_interpreter_sees_a_gpu():
        pytest.skip("this interpreter sees a GPU")
    result = invoke()
    assert result.exit_code == 2
    assert result.stderr == (f"proton-tui: error: {PY} sees no GPU (torch.cuda.is_available() is False there): "
                             "nothing to check; --cpu runs the interpreter check instead\n")


@pytest.mark.slow
def test_cpu_jobs_run_the_real_payload_in_parallel(tmp_path):
    """Two interpreter runs at once; the second's kernel drops the last element, so it FAILs: exit 1."""
    result = invoke("--cpu", "--jobs", "2", "--inject-bug", "1", "--output", str(tmp_path))
    assert result.exit_code == 1, result.output
    table = result.stdout.splitlines()
    assert table[1].split()[:6] == ["cpu0", "Triton", "interpreter", "(CPU)", "PASS", "0.000e+00"]
    assert table[2].split()[:5] == ["cpu1", "Triton", "interpreter", "(CPU)", "FAIL"]
    assert "check: FAIL: 1 of 2 runs failed, 0 flagged" in result.stdout
    assert "[cpu1] vecadd: FAIL" in result.stderr and "[cpu0] vecadd: PASS" in result.stderr
    saved = json.loads(next(tmp_path.glob("*-check/check.json")).read_text())
    rows = saved["rows"]
    assert max(r["started_at"] for r in rows) < min(r["finished_at"] for r in rows)  # both alive at once
    for saved_row in rows:
        record = json.loads((Path(saved_row["run_dir"]) / "run.json").read_text())
        assert record["env_changes"]["TRITON_INTERPRET"] == "1" and record["device_pinning"] == {}
        assert record["device"].startswith("cpu")


def console_script_has_check() -> bool:
    if not CONSOLE_SCRIPT.exists():
        return False
    probe = subprocess.run([str(CONSOLE_SCRIPT), "check", "--help"], capture_output=True, text=True)
    return probe.returncode == 0 and "--cpu" in probe.stdout


@pytest.mark.slow
def test_console_script_cpu_check_json(tmp_path):
    if not console_script_has_check():
        pytest.skip("`proton-tui check` is not wired into proton_tui/cli.py yet (cli_check.register)")
    result = subprocess.run([str(CONSOLE_SCRIPT), "check", "--cpu", "--jobs", "2", "--json",
                             "--output", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert {"mode", "python", "rows", "median_gbps", "threshold_gbps", "min_fraction", "exit_code",
            "check_dir"} <= report.keys()
    assert (report["mode"], report["exit_code"], report["median_gbps"], report["failed"]) == ("cpu", 0, None, 0)
    assert [(r["label"], r["verdict"], r["gbps"], r["peak_percent"]) for r in report["rows"]] == [
        ("cpu0", "PASS", None, None), ("cpu1", "PASS", None, None)]
    assert {"index", "name", "max_abs_err", "kernel_us", "capture", "flagged", "pinning"} <= report["rows"][0].keys()
    assert report["readings_note"] is None and [r["readings"] for r in report["rows"]] == [None, None]
    assert [(r["likely_cause"], r["causes"]) for r in report["rows"]] == [("", []), ("", [])]
    assert "[cpu1] vecadd: PASS" in result.stderr


# --- GPU: the real payload under Proton on every visible GPU (the lead's 2xH200 run; skipped without a GPU) ----


def needs_gpus() -> InterpreterInfo:
    info = probe_interpreter(PY)
    if not info.gpu_count:
        pytest.skip("needs a CUDA or ROCm GPU with Proton; this machine has none")
    return info


@pytest.mark.gpu
async def test_gpu_check_every_visible_gpu(tmp_path):
    info = needs_gpus()
    last = info.gpu_count - 1
    plan = plan_check(PY, size="2^24", iters=5, output=tmp_path, min_fraction=0.5, inject_bug=str(last))
    report = await execute_check(plan)
    assert [r.index for r in report.rows] == list(range(info.gpu_count))
    var = {"nvidia": "CUDA_VISIBLE_DEVICES", "amd": "ROCR_VISIBLE_DEVICES"}[info.gpu_vendor]
    for checked in report.rows:
        assert checked.pinning[var] == str(checked.index)
        assert checked.capture and Path(checked.capture).is_file(), checked.message
        assert checked.gbps_source == "capture" and checked.gbps > 0 and checked.kernel_us > 0
        assert checked.verdict == ("FAIL" if checked.index == last else "PASS"), checked.message
    if info.gpu_vendor == "nvidia":
        assert all(r.peak_percent and 0 < r.peak_percent < 100 for r in report.rows if r.passed)
    if len(report.rows) > 1:
        assert max(r.started_at for r in report.rows) < min(r.finished_at for r in report.rows)
    assert report.exit_code == 1 and report.failed == [report.rows[-1]]


@pytest.mark.gpu
async def test_gpu_check_reads_each_gpu_and_names_a_concurrent_load(tmp_path):
    """benchmarks/gpu/load_gpu.py keeps the last GPU busy through the check: NVML, found by UUID, shows it as the
    likely cause there; every GPU's readings were taken before, during and after its run."""
    info = needs_gpus()
    if info.gpu_vendor != "nvidia":
        pytest.skip("GPU readings are NVIDIA's (NVML)")
    last = info.gpu_count - 1
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu" / "load_gpu.py"
    # Started through a shell that leaves it behind: another program's process, not one of this one's (the check
    # leaves its own process tree out of the GPU's processes).
    log = tmp_path / "load.log"
    started = subprocess.run(["sh", "-c", f'"$0" "$1" --gpu {last} --seconds 120 > "$2" 2>&1 & echo $!',
                              PY, str(script), str(log)], capture_output=True, text=True, check=True)
    load_pid = int(started.stdout)
    try:
        for _ in range(600):
            if "load_gpu: busy" in log.read_text():
                break
            await asyncio.sleep(0.1)
        assert "load_gpu: busy" in log.read_text(), "the load did not start"
        report = await execute_check(plan_check(PY, size="2^26", iters=20, output=tmp_path / "check"))
    finally:
        os.kill(load_pid, signal.SIGKILL)
    assert report.readings_note is None
    for checked in report.rows:
        readings = checked.readings
        assert readings and not readings.get("problem"), readings
        assert readings["device"]["found_by"] == "uuid" and readings["during"]["samples"] >= 1
        assert "sm_clock_max_mhz" in readings["before"] and "clocks_event_reasons" in readings["after"]
    # Other tests' processes may share the GPU when GPU tests run in parallel: the load must be among those named.
    first = report.rows[last].causes[0]
    assert first.startswith(("other process on the GPU: ", "other processes on the GPU: ")), report.rows[last]
    assert f"pid {load_pid} (" in first, report.rows[last]
    if len(report.rows) > 1:
        assert report.rows[last].flagged and report.rows[last].likely_cause.startswith("other process")
        assert not any(cause.startswith("other process") for row in report.rows[:last] for cause in row.causes)


def test_a_refused_check_carries_its_rules_for_each_front_end_to_word():
    """Under rocprofv3 a profiled check is refused: the command line names --backend instrumentation, the TUI's
    check screen the form's Backend control (from the same findings)."""
    with pytest.raises(CheckError) as refused:
        plan_check(info=interpreter("amd"), environ={"ROCPROFILER_REGISTER_LIBRARY": "1"})
    assert "--backend instrumentation" in str(refused.value)
    (finding,) = refused.value.findings
    assert "Backend instrumentation" in finding.form_message and "--" not in finding.form_message


def test_a_check_json_of_the_previous_layout_reads_and_writes_back_whole(tmp_path):
    from proton_tui.engine.job import RowVerdict
    from proton_tui.records import RecordError, read_check, write_check

    stored = FIXTURES / "gpu_checks" / "20261202-093015-check" / CHECK_JSON  # written before "cancelled" was counted
    assert "cancelled" not in json.loads(stored.read_text())
    record = read_check(stored)
    assert [row.verdict for row in record.rows] == [RowVerdict.PASS, RowVerdict.PASS] and record.cancelled == 0
    report = CheckReport.from_record(record)
    write_check(tmp_path / CHECK_JSON, report.to_record())
    saved = json.loads((tmp_path / CHECK_JSON).read_text())
    assert [row["verdict"] for row in saved["rows"]] == ["PASS", "PASS"] and saved["cancelled"] == 0
    assert read_check(tmp_path / CHECK_JSON) == report.to_record()
    assert [path.name for path in tmp_path.iterdir()] == [CHECK_JSON]  # nothing partial left beside it
    (tmp_path / "bad.json").write_text('{"rows": "none"}')
    with pytest.raises(RecordError):
        read_check(tmp_path / "bad.json")


def test_a_write_that_fails_leaves_nothing_partial(tmp_path):
    from proton_tui.records import read_check, write_check

    record = read_check(FIXTURES / "gpu_checks" / "20261202-093015-check" / CHECK_JSON)
    (tmp_path / CHECK_JSON).mkdir()  # the rename into place cannot replace a folder
    with pytest.raises(OSError):
        write_check(tmp_path / CHECK_JSON, record)
    assert [path.name for path in tmp_path.iterdir()] == [CHECK_JSON]



def test_the_json_threshold_is_the_exact_product_not_float_noise():
    """A real record (two H200s, one slowed): the flag threshold that check --json prints is median × min_fraction
    as written (3300.45 × 0.9 = 2970.405), where the float product is 2970.4049999999997."""
    import json as json_module

    from proton_tui.engine.history import stored_runs
    from tests.helpers import FIXTURES

    (entry,) = [entry for entry in stored_runs(FIXTURES / "gpu_checks") if entry.kind == "check"]
    report = entry.check_report()
    assert report.median_gbps * report.min_fraction == 2970.4049999999997
    text = json_module.dumps(report.to_json())
    assert '"threshold_gbps": 2970.405,' in text and '"median_gbps": 3300.45,' in text
