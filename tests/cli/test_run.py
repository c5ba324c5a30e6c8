"""`proton-tui run`: live output, verdict, run folder; exit 0 PASS, 1 failed run, 2 usage or configuration."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from proton_tui.cli import app
from proton_tui.engine.probe import probe_interpreter
from tests.helpers import SCRIPTS, running

TINY = ["--size", "2048", "--iters", "2"]
has_gpu = probe_interpreter(sys.executable).gpu_count > 0


def invoke(*args: str, output: Path | None = None):
    extra = ["--output", str(output)] if output is not None else []
    return CliRunner().invoke(app, ["run", *args, *extra])


def only_run(output: Path) -> Path:
    (run_dir,) = output.iterdir()
    return run_dir


@pytest.mark.parametrize("args, message", [
    (["--size", "3x"], "--size: '3x' is not a size"),
    (["--block-size", "1000"], "--block-size: 1000 is not a power of two"),
    (["--iters", "0"], "--iters: '0' is not a positive integer"),
    (["--backend", "rocprof"], "--backend: 'rocprof' is not one of auto, cupti, roctracer, rocprofiler"),
    (["--context", "deep"], "--context: 'deep' is not one of shadow, python"),
    (["--mode", "api"], "--mode: 'api' is not one of cli, env"),
    (["--device", "gpu0"], "--device: 'gpu0' is not auto, cpu or a GPU index"),
    (["--timeout", "-1"], "--timeout: '-1' must be positive"),
    (["--name", "a/b"], "--name: 'a/b' must be letters"),
    (["--python", "/no/such/python"], "interpreter '/no/such/python' not found"),
    (["--bogus"], "No such option: --bogus"),
    (["--block-size", "2^40"], "--block-size: 1099511627776 is more than 1048576 (Triton's largest tensor"),
    (["--block-size", "2^21"], "--block-size: 2097152 is more than 1048576"),
    (["--size", "2^31"], "--size: 2147483648 is out of range 1..2147483647"),
    (["--iters", "2^64"], "--iters: 18446744073709551616 is more than 2147483647"),
    (["--timeout", "1e400"], "--timeout: '1e400' is not a finite number of seconds"),
    (["--buffer-size", "2^40"], "--buffer-size: 1099511627776 is more than 1073741824"),
])
def test_bad_flags_exit_2_with_one_line(args, message, tmp_path):
    result = invoke(*args, output=tmp_path / "runs")
    assert result.exit_code == 2
    assert message in result.stderr and "Traceback" not in result.output
    if args[0] != "--bogus":  # Typer reports unknown options itself
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("proton-tui: error: ")
    assert not (tmp_path / "runs").exists()


def test_refused_configuration_exits_2_before_anything_runs(tmp_path):
    result = invoke("--backend", "roctracer", output=tmp_path)
    assert result.exit_code == 2
    assert "proton-tui: refused: backend roctracer in cli mode is refused" in result.stderr
    assert "--mode env" in result.stderr and list(tmp_path.iterdir()) == []


def test_crashing_payload_exits_1(tmp_path):
    result = invoke("--no-profile", "--payload", str(SCRIPTS / "crash.py"), output=tmp_path)
    assert result.exit_code == 1
    assert "vecadd: device=cpu (crash test)" in result.stdout
    assert "verdict: payload error: RuntimeError: boom: the payload crashed on purpose" in result.stdout
    assert f"run folder: {only_run(tmp_path)}" in result.stdout


def test_hanging_payload_times_out_and_leaves_nothing(tmp_path, monkeypatch):
    pidfile = tmp_path / "pids"
    monkeypatch.setenv("PROTON_TUI_TEST_PIDFILE", str(pidfile))
    # long enough for the payload and its child to start on a loaded machine before the timeout ends them
    result = invoke("--no-profile", "--payload", str(SCRIPTS / "hang.py"), "--timeout", "6",
                    output=tmp_path / "runs")
    assert result.exit_code == 1 and re.search(r"verdict: timed out after (6|7|8|9)\.\d s", result.stdout), \
        result.stdout
    child, grandchild = map(int, pidfile.read_text().split())
    assert not running(child) and not running(grandchild)
    assert orjson.loads((only_run(tmp_path / "runs") / "run.json").read_bytes())["verdict"] == "timed out"


def test_ctrl_c_cancels_the_run_and_its_process_group(tmp_path):
    pidfile = tmp_path / "pids"
    env = {**os.environ, "PROTON_TUI_TEST_PIDFILE": str(pidfile)}
    cli = subprocess.Popen([sys.executable, "-m", "proton_tui", "run", "--no-profile", "--payload",
                            str(SCRIPTS / "hang.py"), "--output", str(tmp_path / "runs")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        for _ in range(600):
            if pidfile.exists() and pidfile.read_text().endswith("\n"):
                break
            time.sleep(0.05)
        child, grandchild = map(int, pidfile.read_text().split())
        time.sleep(0.3)  # let "ready" reach the CLI
        cli.send_signal(signal.SIGINT)
        stdout, stderr = cli.communicate(timeout=30)
    finally:
        cli.kill()
    assert cli.returncode == 1, stderr
    assert "ready" in stdout and "verdict: cancelled after" in stdout
    assert not running(child) and not running(grandchild)
    assert orjson.loads((only_run(tmp_path / "runs") / "run.json").read_bytes())["verdict"] == "cancelled"


@pytest.mark.slow
def test_pass_unprofiled_prints_live_lines_then_json(tmp_path):
    result = invoke(*TINY, "--device", "cpu", "--no-profile", "--json", output=tmp_path)
    assert result.exit_code == 0, result.output
    record = orjson.loads(result.stdout)  # with --json, stdout is run.json and nothing else
    assert record["verdict"] == "PASS" and record["run_dir"] == str(only_run(tmp_path))
    assert record == orjson.loads((only_run(tmp_path) / "run.json").read_bytes())
    assert "vecadd: device=cpu (Triton interpreter, TRITON_INTERPRET=1)\n" in result.stderr
    assert "vecadd: PASS\n\nverdict: PASS: the kernel matched x + y (not profiled)" in result.stderr
    assert "warning" not in result.stderr  # the interpreter warning is for profiled runs only


@pytest.mark.slow
def test_fail_exits_1(tmp_path):
    result = invoke(*TINY, "--device", "cpu", "--no-profile", "--inject-bug", output=tmp_path)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("$ env PYTHONUNBUFFERED=1 TRITON_INTERPRET=1 ")
    assert lines[0].endswith(" --device cpu --inject-bug")
    assert "vecadd: FAIL" in lines
    assert any(line.startswith("verdict: FAIL: the kernel's output differs from x + y (max_abs_err=")
               for line in lines)
    assert lines[-1] == f"run folder: {only_run(tmp_path)}"


@pytest.mark.slow
@pytest.mark.skipif(has_gpu, reason="on a GPU machine Proton captures: this checks the no-GPU outcome")
def test_profiling_without_a_gpu_is_refused_at_once(tmp_path):
    """Proton cannot profile without a GPU: refused before anything runs (exit 2, no run folder), with the way to
    check the payload on the CPU."""
    result = invoke(*TINY, output=tmp_path)
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("proton-tui: refused: ") and "sees no GPU" in line and "proton-tui check --cpu" in line
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


@pytest.mark.slow
@pytest.mark.skipif(has_gpu, reason="on a GPU machine the payload runs on the GPU at its own size")
def test_an_unprofiled_run_without_a_gpu_is_sized_for_the_interpreter(tmp_path):
    """`run --no-profile` with no GPU: the defaults become the interpreter's (seconds, not ~40 s), and it says so."""
    result = invoke("--no-profile", output=tmp_path)
    assert result.exit_code == 0, result.stderr
    assert "no GPU: the payload runs through the Triton interpreter at 4,096 elements × 2 launches" in result.stderr
    record = orjson.loads((only_run(tmp_path) / "run.json").read_bytes())
    assert record["params"]["size"] == 4096 and record["params"]["iters"] == 2 and record["verdict"] == "PASS"


@pytest.mark.gpu
@pytest.mark.skipif(not has_gpu, reason="needs a CUDA or ROCm GPU with Proton; this machine has none")
def test_gpu_run_prints_the_kernel_table(tmp_path):
    result = invoke("--size", "1M", "--iters", "5", output=tmp_path)
    assert result.exit_code == 0, result.output
    assert "verdict: PASS" in result.stdout and "add_kernel<n=1048576>" in result.stdout


@pytest.mark.gpu
@pytest.mark.skipif(not has_gpu, reason="needs a CUDA or ROCm GPU with Proton; this machine has none")
@pytest.mark.parametrize("data", ["tree", "trace"])
def test_an_instrumentation_run_records_the_payloads_scopes(tmp_path, data):
    """Under the instrumentation backend the payload runs its scoped kernel: PASS, and cycles for each of its
    scopes, nested as the kernel nests them (in a trace too, read by each warp's lines)."""
    result = invoke("--backend", "instrumentation", "--data", data, "--iters", "3", output=tmp_path)
    assert result.exit_code == 0 and "verdict: PASS" in result.stdout, result.output
    from proton_tui.hatchet import load_profile

    (capture,) = only_run(tmp_path).glob("vecadd.*")
    profile = load_profile(capture)
    names = {profile.names[node]: node for node in range(profile.node_count)}
    assert profile.unit == "cycles" and {"kernel", "load", "add", "store"} <= set(names)
    assert {profile.names[child] for child in profile.children[names["kernel"]]} == {
        "load", "add", "store", "(unattributed)"}
    document = orjson.loads(CliRunner().invoke(app, ["view", str(capture), "--json"]).stdout)
    kernel = next(scope for scope in document["instrumentation"]["scopes"] if scope["name"] == "kernel")
    assert document["instrumentation"]["launches"] == 4 and kernel["per_warp_per_launch"] > 0
    assert kernel["time_ns"] is not None  # at the clock in device_info, or, for a trace, the one the payload printed


@pytest.mark.gpu
@pytest.mark.skipif(not has_gpu, reason="needs a CUDA or ROCm GPU with Proton; this machine has none")
def test_sampled_warps_and_a_buffer_size_reach_proton(tmp_path):
    """--warps 0,2 in env mode: Proton records half the warps (the run's own correction then applies), and a
    64-byte buffer loses events, which the verdict counts."""
    result = invoke("--backend", "instrumentation", "--mode", "env", "--warps", "0,2", "--iters", "3",
                    output=tmp_path / "sampled")
    assert result.exit_code == 0 and "verdict: PASS" in result.stdout, result.output
    run_dir = only_run(tmp_path / "sampled")
    assert "--proton-mode default:sampling_strategy=selective:sampling_options=0,2" in result.stdout
    document = orjson.loads(CliRunner().invoke(app, ["view", str(run_dir / "vecadd.hatchet"), "--json"]).stdout)
    assert document["instrumentation"]["sampled_warps"] == [2, 4]
    kernel = next(scope for scope in document["instrumentation"]["scopes"] if scope["name"] == "kernel")
    assert kernel["per_warp"] == pytest.approx(2 * kernel["normalized_cycles"])
    small = invoke("--backend", "instrumentation", "--mode", "env", "--buffer-size", "64", "--iters", "3",
                   output=tmp_path / "small")
    assert "drops events" in small.stderr and "warps lost events" in small.stdout, small.output


@pytest.mark.gpu
@pytest.mark.skipif(not has_gpu, reason="needs a CUDA or ROCm GPU with Proton; this machine has none")
def test_a_plain_kernel_after_a_scoped_one_is_named_as_the_cause_of_proton_s_sigfpe(tmp_path):
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu" / "sigfpe.py"
    result = invoke("--backend", "instrumentation", "--payload", str(script), output=tmp_path)
    assert result.exit_code == 1, result.output
    verdict = next(line for line in result.stdout.splitlines() if line.startswith("verdict: "))
    assert "SIGFPE" in verdict and "without proton.language scopes" in verdict, result.output


@pytest.mark.parametrize("command", [["run", "--no-profile", "--device", "cpu"], ["check", "--cpu"], ["doctor"]])
def test_an_output_folder_that_cannot_be_made_is_one_line_exit_2(tmp_path, command):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = subprocess.run([sys.executable, "-m", "proton_tui", *command, "--output", str(blocker / "runs")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert errors == [f"proton-tui: error: --output {blocker / 'runs'}: Not a directory"]
    assert "Traceback" not in result.stderr


def test_run_help_shows_the_parameter_tables_defaults_and_choices():
    """`run --help` says each option's default and names each of its choices, as the parameter table has them."""
    import re

    from proton_tui.engine.params import PARAMS

    result = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "400"})
    assert result.exit_code == 0
    lines = {match[1]: match[2] for match in re.finditer(r"^[│ ]*(--[a-z-]+)\s+(?:--no-[a-z-]+\s+)?(.*?)\s*│?$",
                                                         result.output, re.MULTILINE)}
    for param in PARAMS.values():
        flag = param.flag.split("/")[0]
        if param.field in ("inject_bug", "payload"):  # hidden
            assert flag not in lines
            continue
        text = lines[flag]
        assert param.cli_help in text, flag
        if param.interpreter_default is not None:
            assert f"(default: {param.text}; {param.interpreter_default} through the Triton interpreter)" in text
        elif isinstance(param.default, str) and param.default:
            assert f"default: {param.default}" in text, flag
        for choice in param.choices:
            assert re.search(rf"\b{choice}\b", text), (flag, choice)


@pytest.mark.parametrize("command", ["check", "run", "doctor"])
def test_help_shows_brackets_as_written(command):
    """Help text is plain text: `proton-tui[gpu]` keeps its brackets (no markup eats them)."""
    result = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "400"})
    assert result.exit_code == 0
    if command == "check":
        assert "(pip install 'proton-tui[gpu]')" in result.output
    assert "Usage:" in result.output


def test_check_bounds_its_counts_as_run_does(tmp_path):
    result = CliRunner().invoke(app, ["check", "--cpu", "--iters", "2^64", "--output", str(tmp_path)])
    assert result.exit_code == 2 and "--iters: 18446744073709551616 is more than 2147483647" in result.stderr


CONTROL_BYTES = ("\x1b", "\x07", "\x9b")


@pytest.mark.slow
@pytest.mark.parametrize("command", [["run", "--no-profile", "--device", "cpu", *TINY],
                                     ["check", "--cpu", *TINY, "--jobs", "1"]])
def test_control_bytes_in_paths_are_printed_escaped(tmp_path, command):
    """An --output and a --python whose paths hold ESC and BEL reach the terminal escaped in every line (the run
    folder, the `$` command line), never raw: they would rename the terminal."""
    venv = tmp_path / "v\x1b]2;T\x07"
    venv.symlink_to(Path(sys.prefix))
    output = tmp_path / "o2\x1b]2;T\x07"
    result = subprocess.run([sys.executable, "-m", "proton_tui", *command, "--python", str(venv / "bin" / "python"),
                             "--output", str(output)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    for stream in (result.stdout, result.stderr):
        assert not any(byte in stream for byte in CONTROL_BYTES), stream
    assert "v\\x1b]2;T\\x07/bin/python" in result.stdout + result.stderr
    assert "o2\\x1b]2;T\\x07/" in result.stdout + result.stderr


def test_a_refusal_naming_the_interpreter_prints_it_escaped(tmp_path):
    result = invoke("--python", str(tmp_path / "no\x1b]2;T\x07python"), output=tmp_path / "runs")
    assert result.exit_code == 2 and "\x1b" not in result.stderr and "no\\x1b]2;T\\x07python" in result.stderr
