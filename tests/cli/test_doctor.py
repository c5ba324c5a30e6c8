"""`proton-tui doctor` end to end: the console script in a real process with this machine's interpreter. Without
a GPU: the facts, the interpreter check, exit 3; on a GPU (marked): every cell proved as its version's rules
expect, exit 0. With PROTON_TUI_EVIDENCE=DIR the GPU test keeps its doctor.json there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from proton_tui.cli import app
from proton_tui.engine.doctor import DOCTOR_JSON, NO_GPU_EXIT
from proton_tui.engine.probe import probe_interpreter

CONSOLE_SCRIPT = Path(sys.executable).parent / "proton-tui"
has_gpu = probe_interpreter(sys.executable).gpu_count > 0


def doctor(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(CONSOLE_SCRIPT), "doctor", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


@pytest.mark.parametrize("args, message", [
    (["--jobs", "0"], "--jobs: '0' is not a positive integer"),
    (["--jobs", "99"], "--jobs: 99 is more than 64"),
    (["--gpu", "x"], "--gpu: 'x' is not a GPU index"),
    (["--gpu", "²"], "--gpu: '²' is not a GPU index"),
    (["--backend", "nvtx"], "--backend: 'nvtx' is not one of auto, cupti"),
    (["--mode", "api"], "--mode: 'api' is not one of cli, env"),
    (["--timeout", "-3"], "--timeout: '-3' must be positive"),
    (["--python", "/no/such/python"], "interpreter '/no/such/python' not found"),
    (["--python", ""], "--python: an empty path names no interpreter"),
    (["--gpu", "9" * 5000], "--gpu: '999"),
    (["--jobs", "9" * 5000], "--jobs: '999"),
])
def test_usage_errors_exit_2_with_one_line_and_run_nothing(args, message, tmp_path):
    result = CliRunner().invoke(app, ["doctor", *args, "--output", str(tmp_path / "runs")])
    assert result.exit_code == 2, result.output
    assert message in result.stderr and result.stderr.count("\n") == 1 and "Traceback" not in result.output
    assert not (tmp_path / "runs").exists()


def test_help_documents_the_exit_codes():
    result = CliRunner().invoke(app, ["doctor", "--help"], terminal_width=120)
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for line in ("0 everything the version promises works", "1 a cell or a fact failed", "2 a usage error",
                 "3 no GPU: profiling not checked"):
        assert line in text


@pytest.mark.slow
@pytest.mark.skipif(has_gpu, reason="this machine has a GPU: the no-GPU path does not apply")
def test_without_a_gpu_the_interpreter_check_runs_and_the_exit_code_says_so(tmp_path):
    result = doctor("--json", "--output", "runs", cwd=tmp_path)
    assert result.returncode == NO_GPU_EXIT, result.stderr
    report = json.loads(result.stdout)
    assert report["schema"] == "proton-tui/1" and report["gpu"] is None and report["exit_code"] == NO_GPU_EXIT
    assert report["verdict"] == "no GPU: profiling not checked; the interpreter check passed"
    facts = {fact["name"]: fact for fact in report["facts"]}
    assert facts["interpreter"]["state"] == "ok" and "with Proton" in facts["interpreter"]["value"]
    assert facts["GPU"]["state"] == "warn" and facts["GPU"]["remedy"]
    assert facts["CUPTI"]["state"] == "ok" and facts["CUPTI"]["value"].endswith("loads")  # Triton's bundled one
    (cell,) = report["cells"]
    assert (cell["cell"], cell["proved"], cell["ok"]) == ("cpu-check", "PASS", True)
    assert Path(cell["stdout_log"]).read_text().count("vecadd: PASS") == 1
    stored = json.loads((Path(report["doctor_dir"]) / DOCTOR_JSON).read_text())
    assert stored == report
    assert "[1/1] cpu-check: PASS" in result.stderr

    text = doctor("--output", "runs", cwd=tmp_path)
    assert text.returncode == NO_GPU_EXIT
    assert "\nno GPU: profiling not checked\n" in text.stdout
    assert "CPU check (the payload through the Triton interpreter, no profile): PASS" in text.stdout
    assert "  ok    interpreter " in text.stdout and "  WARN  GPU " in text.stdout


@pytest.mark.slow
@pytest.mark.gpu
@pytest.mark.skipif(not has_gpu, reason="needs a CUDA or ROCm GPU with Proton; this machine has none")
def test_on_a_gpu_every_cell_proves_what_its_version_promises(tmp_path):
    result = doctor("--json", "--output", "runs", cwd=tmp_path)
    report = json.loads(result.stdout)
    evidence = os.environ.get("PROTON_TUI_EVIDENCE")
    if evidence:
        Path(evidence).mkdir(parents=True, exist_ok=True)
        shutil.copy(Path(report["doctor_dir"]) / DOCTOR_JSON, Path(evidence) / DOCTOR_JSON)
    wrong = [(cell["cell"], cell["expected"], cell["expected_metric"], cell["proved"], cell["metric"],
              cell["message"], cell["stdout_log"])
             for cell in report["cells"]
             if (cell["expected"] == "works") != (cell["proved"] == "PASS" and cell["metric"] == cell["expected_metric"])
             or (cell["expected"] == "refused" and cell["proved"] != "not run")]
    assert wrong == [], json.dumps(wrong, indent=1)
    assert [fact for fact in report["facts"] if fact["state"] == "fail"] == []
    assert report["passed"] > 0 and report["failed"] == 0 and result.returncode == 0, result.stdout[-2000:]


def test_filters_that_leave_no_cell_are_a_usage_error(tmp_path, monkeypatch):
    """With the H200's probe answer for this interpreter (Triton 3.6.0): rocprofiler is not among its backends, so
    `--backend rocprofiler` is refused naming it, rather than a PASS of nothing."""
    from proton_tui.engine.doctor import plan_doctor
    from proton_tui.engine.params import ParamError
    from tests.helpers import h200_probe, plant_probe

    plant_probe(monkeypatch, sys.executable, h200_probe(python=sys.executable, executable=sys.executable))
    with pytest.raises(ParamError) as raised:
        plan_doctor(sys.executable, output=tmp_path, backend="rocprofiler")
    assert raised.value.flag == "--backend" and "--backend rocprofiler leaves no cell of Triton 3.6.0" in str(
        raised.value)


def test_every_cell_of_the_largest_matrix_can_run_at_once(tmp_path, monkeypatch):
    """Triton 3.7.1 on an NVIDIA GPU offers 30 cells that run: `--jobs 30` starts them together."""
    from proton_tui.engine.doctor import plan_doctor
    from tests.helpers import h200_probe, plant_probe

    plant_probe(monkeypatch, sys.executable, h200_probe(python=sys.executable, executable=sys.executable,
                                                                 triton_version="3.7.1"))
    plan = plan_doctor(sys.executable, output=tmp_path, jobs="30")
    assert plan.jobs == 30 and sum(cell.expected == "works" for cell in plan.cells) == 30


def test_an_output_folder_that_cannot_be_written_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(app, ["doctor", "--output", "/proc"])
    assert result.exit_code == 2 and result.stderr.startswith("proton-tui: error: --output /proc: ")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output


@pytest.mark.slow
def test_paths_with_control_bytes_reach_the_terminal_escaped(tmp_path, monkeypatch):
    """With the H200's probe answer for this interpreter the cells' commands name their capture paths: the progress
    lines on stderr show the output folder's escape byte escaped, as the report does."""
    from tests.helpers import h200_probe, plant_probe

    plant_probe(monkeypatch, sys.executable, h200_probe(python=sys.executable, executable=sys.executable))
    out = tmp_path / "runs\x1b[31mred"
    result = CliRunner().invoke(app, ["doctor", "-v", "--python", sys.executable, "--backend", "cupti", "--context",
                                      "shadow", "--mode", "cli", "--output", str(out)])
    assert "$ env " in result.stderr and "-n " in result.stderr
    assert "\x1b" not in result.stderr and "\x1b" not in result.stdout and "\\x1b[31mred" in result.stderr


@pytest.mark.slow
@pytest.mark.skipif(has_gpu, reason="this machine has a GPU: the no-GPU path does not apply")
def test_a_stop_after_the_last_cell_finished_cancels_nothing(tmp_path):
    """Ctrl-C (or Escape) just as the last cell ends: every cell proved what it proved, the report is not cancelled."""
    import asyncio

    from proton_tui.engine.doctor import execute_doctor, plan_doctor

    plan = plan_doctor(sys.executable, output=tmp_path)
    stop = asyncio.Event()
    report = asyncio.run(execute_doctor(plan, stop=stop, on_done=lambda result: stop.set()))
    assert stop.is_set() and not report.cancelled and report.exit_code == NO_GPU_EXIT
    assert report.verdict() == "no GPU: profiling not checked; the interpreter check passed"


@pytest.mark.slow
@pytest.mark.skipif(has_gpu, reason="this machine has a GPU: the no-GPU path does not apply")
def test_the_text_report_shows_the_table_and_failures_and_the_commands_only_with_verbose(tmp_path):
    """Without -v no cell's command line is printed (each is in its cell's run.json); the first line counts the
    cells as they are: one cell, so nothing about how many run at once."""
    quiet = doctor("--jobs", "2", "--output", "runs", cwd=tmp_path)
    assert quiet.returncode == NO_GPU_EXIT, quiet.stderr
    assert quiet.stderr.startswith("doctor: 1 cell to run on the Triton interpreter (no GPU)\n"), quiet.stderr
    assert "$ " not in quiet.stderr and "at once" not in quiet.stderr
    loud = doctor("-v", "--jobs", "2", "--output", "runs", cwd=tmp_path)
    assert "[cpu-check] $ " in loud.stderr and loud.stdout.replace(str(tmp_path), "").count("doctor folder") == 1
