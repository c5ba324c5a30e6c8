"""A full disk or a file-size limit (a real RLIMIT_FSIZE, so write() fails with EFBIG): each file that cannot be
written is one line naming it and the error, the verdict or report is still printed, nothing partial is left, no
traceback."""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import SCRIPTS

LIMIT_BYTES = 1024  # smaller than any record, larger than nothing a run needs before it writes one


def limited() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() then fails with EFBIG instead of the signal killing
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT_BYTES, LIMIT_BYTES))


def under_limit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "proton_tui", *args], capture_output=True, text=True, timeout=300,
                          preexec_fn=limited)


def errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("proton-tui: error: ")]


def test_a_run_over_the_limit_names_each_file_and_still_gives_its_verdict(tmp_path):
    result = under_limit("run", "--no-profile", "--payload", str(SCRIPTS / "flood.py"), "--size", "1000", "--output",
                         str(tmp_path))
    assert "Traceback" not in result.stderr + result.stdout
    (run_dir,) = tmp_path.iterdir()
    assert errors(result.stderr) == [f"proton-tui: error: {run_dir / 'stdout.log'}: cannot be written: File too large",
                                     f"proton-tui: error: {run_dir / 'run.json'}: cannot be written: File too large"]
    assert "verdict: " in result.stdout and f"run folder: {run_dir}" in result.stdout
    assert result.returncode == 1
    assert not [path for path in run_dir.iterdir() if path.name.endswith(".partial")]


@pytest.mark.slow
@pytest.mark.parametrize("command, record", [(["check", "--cpu"], "check.json"), (["doctor"], "doctor.json")])
def test_a_job_over_the_limit_names_its_record_and_still_reports(tmp_path, command, record):
    result = under_limit(*command, "--output", str(tmp_path))
    assert "Traceback" not in result.stderr + result.stdout
    (job_dir,) = tmp_path.iterdir()
    lines = errors(result.stderr)
    assert f"proton-tui: error: {job_dir / record}: cannot be written: File too large" in lines
    assert all(line.endswith(": cannot be written: File too large") for line in lines)
    assert result.stdout.strip() and result.returncode != 0
    assert not list(Path(job_dir).rglob("*.partial")) and not (job_dir / record).exists()
