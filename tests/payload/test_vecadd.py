"""payload/vecadd.py on its own: its output contract, through the Triton interpreter on CPU."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from proton_tui.engine.payload import payload_path
from proton_tui.engine.probe import probe_interpreter
from tests.helpers import REPO

ROOT = REPO
VECADD = ROOT / "payload" / "vecadd.py"
PY = sys.executable
TINY = ["--size", "2048", "--iters", "2"]
# Run the payload the way Proton's CLI does (in-process, argv replaced), then show that control came back:
# a sys.exit() anywhere in the payload would skip this, as it skips Proton 3.5-3.6's finalize().
AS_PROTON_CLI = (
    "import runpy, sys\n"
    "sys.argv = sys.argv[1:]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
    "print('payload returned to its caller')\n"
)


def run_payload(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environ = {key: value for key, value in os.environ.items() if not key.startswith(("PROTON_TUI_", "TRITON_"))}
    return subprocess.run([PY, "-c", AS_PROTON_CLI, str(VECADD), *args], capture_output=True, text=True,
                          env={**environ, **(env or {})}, timeout=120)


def load_vecadd():
    spec = importlib.util.spec_from_file_location("vecadd_under_test", VECADD)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("args, message", [
    (["--block-size", "1000"], "argument --block-size: 1000 is not a power of two"),
    (["--block-size", "0"], "argument --block-size: 0 must be at least 1"),
    (["--size", "1M"], "argument --size: '1M' is not an integer"),
    (["--iters", "0"], "argument --iters: 0 must be at least 1"),
    (["--device", "tpu"], "argument --device: invalid choice: 'tpu'"),
    (["--proton-data", "graph"], "argument --proton-data: invalid choice: 'graph'"),
    (["--proton-format", "json"], "argument --proton-format: invalid choice: 'json'"),
])
def test_bad_flags_are_rejected_before_triton_is_touched(args, message):
    code = (
        "import runpy, sys\n"
        "sys.argv = sys.argv[1:]\n"
        "try:\n"
        "    runpy.run_path(sys.argv[0], run_name='__main__')\n"
        "except SystemExit as exit:\n"
        "    print('exit', exit.code, 'triton' in sys.modules, 'torch' in sys.modules)\n"
    )
    result = subprocess.run([PY, "-c", code, str(VECADD), *args], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "exit 2 False False"
    assert f"vecadd: error: {message}" in result.stderr


def test_env_values_are_checked_too():
    result = subprocess.run([PY, str(VECADD), "--size", "4096", "--iters", "1", "--device", "cpu"], capture_output=True,
                            text=True, timeout=60,
                            env={**os.environ, "PROTON_TUI_CONTEXT": "deep"})
    assert result.returncode == 2 and "PROTON_TUI_CONTEXT" in result.stderr


class Float32Tensor:
    """What launch_metadata reads of a float32 tensor argument."""

    def element_size(self) -> int:
        return 4


def test_launch_metadata_names_the_size_and_counts_bytes():
    args = {"n_elements": 4096, "x_ptr": Float32Tensor()}
    assert load_vecadd().launch_metadata((4,), {}, args) == {
        "name": "add_kernel<n=4096>", "bytes": 3 * 4096 * 4, "flops32": 4096}


@pytest.mark.slow
def test_pass_prints_the_contract_lines_in_order_and_returns():
    result = run_payload(*TINY, "--block-size", "256", "--device", "cpu")
    lines = result.stdout.splitlines()
    assert result.returncode == 0, result.stderr
    assert lines[0] == "vecadd: device=cpu (Triton interpreter, TRITON_INTERPRET=1)"
    assert lines[1] == "vecadd: size=2048 iters=2 block_size=256"
    assert lines[2].startswith("vecadd: first_launch_ms=") and lines[2].endswith("(includes compile)")
    assert lines[3].startswith("vecadd: loop_ms=") and " per_iter_us=" in lines[3] and " gbps=" in lines[3]
    assert lines[4:] == ["vecadd: max_abs_err=0.000e+00", "vecadd: PASS", "payload returned to its caller"]


def gpu_present() -> bool:
    return probe_interpreter(PY).gpu_count > 0


@pytest.mark.slow
def test_fail_is_printed_not_exited():
    # --device auto: the interpreter when there is no GPU. The size is not a multiple of the block.
    result = run_payload("--size", "3001", "--iters", "2", "--inject-bug")
    lines = result.stdout.splitlines()
    assert result.returncode == 0, result.stderr
    assert gpu_present() or lines[0] == "vecadd: device=cpu (Triton interpreter, TRITON_INTERPRET=1)"
    err = float(lines[4].removeprefix("vecadd: max_abs_err="))
    assert err > 0 and lines[5:] == ["vecadd: FAIL", "payload returned to its caller"]


@pytest.mark.slow
def test_env_mode_starts_proton_itself(tmp_path):
    # Asked through the environment, the payload calls proton.start() after its device line. Without a GPU
    # Proton's start is what fails; with one, the payload finalizes and leaves the capture.
    result = run_payload(*TINY, env={"PROTON_TUI_NAME": str(tmp_path / "envmode")})
    lines = result.stdout.splitlines()
    if not gpu_present():
        assert "0 active drivers" in result.stderr
        assert lines[:2] == ["vecadd: device=cpu (Triton interpreter, TRITON_INTERPRET=1)",
                             "vecadd: size=2048 iters=2 block_size=1024"]
        assert "triton/profiler" in result.stderr and "payload returned" not in result.stdout
    else:
        assert lines[2] == f"vecadd: proton=env session={tmp_path / 'envmode'}"
        assert (tmp_path / "envmode.hatchet").exists() and lines[-2] == "vecadd: PASS"


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_present(), reason="needs a CUDA or ROCm GPU with Proton; this machine has none")
def test_env_mode_writes_a_trace_when_asked(tmp_path):
    """--proton-data trace: the payload starts Proton with data="trace" and leaves a .chrome_trace."""
    result = run_payload(*TINY, "--proton-name", str(tmp_path / "traced"), "--proton-data", "trace")
    assert result.stdout.splitlines()[-2] == "vecadd: PASS", result.stderr  # then the helper's own last line
    assert (tmp_path / "traced.chrome_trace").is_file() and not (tmp_path / "traced.hatchet").exists()


def test_payload_found_in_the_checkout():
    assert payload_path() == VECADD.resolve()


@pytest.mark.slow
def test_payload_found_in_an_installed_wheel(tmp_path):
    source = tmp_path / "source"  # build from a copy: setuptools writes build/ and egg-info next to the sources
    for part in ("proton_tui", "payload"):
        shutil.copytree(ROOT / part, source / part, ignore=shutil.ignore_patterns("__pycache__"))
    for part in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / part, source / part)
    build = subprocess.run([PY, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                            str(tmp_path / "dist"), str(source)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    (wheel,) = (tmp_path / "dist").glob("proton_tui-*.whl")
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)  # a wheel is installed by unpacking it into site-packages
    assert (site / "proton_tui" / "payload" / "vecadd.py").read_bytes() == VECADD.read_bytes()
    code = "from proton_tui.engine.payload import payload_path; print(payload_path())"
    found = subprocess.run([PY, "-I", "-c", f"import sys; sys.path.insert(0, {str(site)!r}); {code}"],
                           capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert found.stdout.strip() == str(site / "proton_tui" / "payload" / "vecadd.py"), found.stderr
