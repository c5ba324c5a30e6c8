"""The runner and a whole run, with real subprocesses: live lines, clean text, and no process left behind
(checked in the process table) after a cancel, a timeout, or a grandchild that holds the pipe."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from pathlib import Path

import orjson
import pytest

from proton_tui.engine.classify import Outcome
from proton_tui.engine.params import RunParams
from proton_tui.engine.probe import probe_interpreter
from proton_tui.engine.runner import LineSplitter, clean_line, run_process
from proton_tui.engine.session import execute_run, plan_run
from tests.helpers import SCRIPTS, running

PY = sys.executable
has_gpu = probe_interpreter(PY).gpu_count > 0
needs_gpu = pytest.mark.skipif(not has_gpu, reason="needs a CUDA or ROCm GPU with Proton; this machine has none")


async def wait_for_pids(pidfile: Path) -> list[int]:
    for _ in range(200):
        if pidfile.exists() and pidfile.read_text().endswith("\n"):
            return [int(pid) for pid in pidfile.read_text().split()]
        await asyncio.sleep(0.05)
    raise AssertionError("the hanging payload never wrote its pids")


async def gone(*pids: int) -> bool:
    """Whether the processes have all left within 10 s (a killed process takes a moment to be torn down, longer on
    a loaded machine)."""
    for _ in range(200):
        if not any(map(running, pids)):
            return True
        await asyncio.sleep(0.05)
    return not any(map(running, pids))


@pytest.fixture
def pidfile(tmp_path, monkeypatch):
    path = tmp_path / "pids"
    monkeypatch.setenv("PROTON_TUI_TEST_PIDFILE", str(path))
    return path


class Collector:
    """A line callback that keeps batches, and sets ``stop`` once ``trigger`` arrives."""

    def __init__(self, trigger: str | None = None):
        self.batches: list[list[str]] = []
        self.stop = asyncio.Event()
        self.trigger = trigger

    def __call__(self, lines: list[str]) -> None:
        self.batches.append(lines)
        if self.trigger in lines:
            self.stop.set()

    @property
    def lines(self) -> list[str]:
        return [line for batch in self.batches for line in batch]


def test_clean_line():
    assert clean_line(b"\x1b[31mred\x1b[0m") == "red"
    assert clean_line(b"10%\r50%\r100%") == "100%"
    assert clean_line(b"done\r") == "done" and clean_line(b"50%\r\x1b[K") == "50%"
    assert clean_line(b"\xff ok") == "\ufffd ok"
    assert clean_line(b"tab\tbell\x07") == "tab\tbell"


def test_splitter_holds_unfinished_lines():
    splitter = LineSplitter()
    assert splitter.feed(b"one\ntw") == ["one"]
    assert splitter.feed(b"o\r") == []
    assert splitter.feed(b"two!\nthree") == ["two!"]
    assert splitter.flush() == ["three"] and splitter.flush() == []


async def test_output_is_merged_and_cleaned():
    collect = Collector()
    result = await run_process([PY, str(SCRIPTS / "noisy.py")], collect)
    assert result.exit_code == 0 and result.ended_by is None
    assert collect.lines == ["plain line", "progress 100%", "green and text", "windows line",
                             "bad utf-8: \ufffd\ufffd end", "café", "to stderr", "no newline at the end"]


async def test_stdin_is_closed_and_output_unbuffered_by_env():
    collect = Collector()
    code = "import sys, os; print(repr(sys.stdin.read()), os.environ.get('X'))"
    result = await run_process([PY, "-c", code], collect, env={"X": "given"})
    assert result.exit_code == 0 and collect.lines == ["'' given"]


async def test_stop_ends_the_group_after_a_live_line(pidfile):
    collect = Collector(trigger="ready")  # the stop is set from the callback: lines arrive while it runs
    result = await run_process([PY, str(SCRIPTS / "hang.py")], collect, stop=collect.stop, timeout=60)
    child, grandchild = await wait_for_pids(pidfile)
    assert result.ended_by == "cancelled" and result.exit_code == -15 and result.wall_s < 30
    assert not running(child) and not running(grandchild)


async def test_sigterm_ignored_escalates_to_sigkill(pidfile):
    collect = Collector(trigger="ready")
    result = await run_process([PY, str(SCRIPTS / "hang.py"), "--ignore-term"], collect, stop=collect.stop,
                               grace_s=0.5)
    child, grandchild = await wait_for_pids(pidfile)
    assert result.ended_by == "cancelled" and result.exit_code == -9  # SIGTERM was ignored: SIGKILL ended it
    assert not running(child) and not running(grandchild)


async def test_timeout_ends_the_group(pidfile):
    # long enough for the script and its child to start on a loaded machine before the timeout ends them
    result = await run_process([PY, str(SCRIPTS / "hang.py")], Collector(), timeout=6)
    child, grandchild = await wait_for_pids(pidfile)
    assert result.ended_by == "timeout" and 6 <= result.wall_s < 15
    assert not running(child) and not running(grandchild)


async def test_a_grandchild_holding_the_pipe_does_not_hang_the_run(pidfile):
    collect = Collector()
    started = time.monotonic()
    result = await run_process([PY, str(SCRIPTS / "hang.py"), "--leader-exits"], collect, grace_s=0.5)
    _, grandchild = await wait_for_pids(pidfile)
    assert result.exit_code == 0 and result.ended_by is None and collect.lines == ["ready"]
    assert time.monotonic() - started < 10 and not running(grandchild)


async def test_cancelling_the_task_kills_the_group(pidfile):
    collect = Collector()
    task = asyncio.create_task(run_process([PY, str(SCRIPTS / "hang.py")], collect))
    child, grandchild = await wait_for_pids(pidfile)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await gone(child, grandchild)  # SIGKILL is sent synchronously; the kernel tears them down right after


@pytest.mark.parametrize("cancels", [1, 2])
async def test_a_cancel_while_the_process_starts_ends_its_whole_group(pidfile, monkeypatch, cancels):
    """On a loaded machine the task can be cancelled after the child has started (and started its own child) but
    before asyncio has connected its pipes: asyncio then kills the child alone. The whole group ends all the same.
    The pipes' connection is held back here until the grandchild runs, as a slow machine would."""
    create = asyncio.create_subprocess_exec

    async def slow_to_connect(*args, **kwargs):
        proc = await create(*args, **kwargs)
        await wait_for_pids(pidfile)
        await asyncio.sleep(2)  # cancelled here: the process started, its start not yet returned
        return proc

    monkeypatch.setattr(asyncio, "create_subprocess_exec", slow_to_connect)
    task = asyncio.create_task(run_process([PY, str(SCRIPTS / "hang.py")], Collector()))
    child, grandchild = await wait_for_pids(pidfile)
    for _ in range(cancels):  # a second: as when the app, ending, cancels what is still pending
        await asyncio.sleep(0.1)
        task.cancel()
    try:
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await gone(child, grandchild)
    finally:  # nothing left behind, even where the test fails
        for pid in (child, grandchild):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


async def test_a_failing_callback_ends_the_run(pidfile):
    def explode(lines):
        raise ValueError("callback broke")

    with pytest.raises(ValueError, match="callback broke"):
        await run_process([PY, str(SCRIPTS / "hang.py")], explode, timeout=60)
    child, grandchild = await wait_for_pids(pidfile)
    assert await gone(child, grandchild)  # SIGKILL is sent as the run ends


async def test_crashing_script():
    collect = Collector()
    result = await run_process([PY, str(SCRIPTS / "crash.py")], collect)
    assert result.exit_code == 1 and collect.lines[0] == "vecadd: device=cpu (crash test)"
    assert collect.lines[-1] == "RuntimeError: boom: the payload crashed on purpose"


async def test_crashing_payload_through_a_run(tmp_path):
    params = RunParams(python=PY, profile=False, output=tmp_path, payload=SCRIPTS / "crash.py")
    result = await execute_run(plan_run(params))
    assert result.verdict.outcome is Outcome.PAYLOAD_ERROR
    assert result.verdict.message == "payload error: RuntimeError: boom: the payload crashed on purpose"
    record = orjson.loads((result.run_dir / "run.json").read_bytes())
    assert record["verdict"] == "payload error" and record["exit_code"] == 1


async def test_cancelled_run_is_recorded(tmp_path, pidfile):
    params = RunParams(python=PY, profile=False, output=tmp_path, payload=SCRIPTS / "hang.py", name="hang")
    collect = Collector(trigger="ready")
    result = await execute_run(plan_run(params), collect, stop=collect.stop)
    child, grandchild = await wait_for_pids(pidfile)
    assert result.verdict.outcome is Outcome.CANCELLED and not running(child) and not running(grandchild)
    assert orjson.loads((result.run_dir / "run.json").read_bytes())["verdict"] == "cancelled"


async def test_cancelling_a_run_task_still_writes_run_json(tmp_path, pidfile):
    params = RunParams(python=PY, profile=False, output=tmp_path / "runs", payload=SCRIPTS / "hang.py", name="hang")
    plan = plan_run(params)
    task = asyncio.create_task(execute_run(plan))
    child, grandchild = await wait_for_pids(pidfile)
    (run_dir,) = (tmp_path / "runs").iterdir()
    for _ in range(400):  # the pids are written before "ready" is printed: cancel once the log holds it
        if (run_dir / "stdout.log").exists() and (run_dir / "stdout.log").read_text() == "ready\n":
            break
        await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    record = orjson.loads((run_dir / "run.json").read_bytes())
    assert record["verdict"] == "cancelled" and (run_dir / "stdout.log").read_text() == "ready\n"
    assert await gone(child, grandchild)  # the process group is ended


@pytest.mark.slow
async def test_real_payload_run_unprofiled(tmp_path):
    params = RunParams(python=PY, size=2048, iters=2, profile=False, device="cpu", output=tmp_path)
    plan = plan_run(params)
    starts = []
    collect = Collector()
    result = await execute_run(plan, collect, on_start=lambda run_dir, command: starts.append((run_dir, command)))
    assert result.verdict.outcome is Outcome.PASS and result.verdict.exit_code == 0
    assert starts == [(result.run_dir, result.command)] and result.run_dir.parent == tmp_path.resolve()
    assert result.run_dir.name.endswith("-vecadd") and len(result.run_dir.name) == len("20260101-120000-vecadd")
    assert (result.run_dir / "stdout.log").read_text().splitlines() == collect.lines
    record = orjson.loads((result.run_dir / "run.json").read_bytes())
    assert record["verdict"] == "PASS" and record["exit_code"] == 0 and record["argv"] == list(result.command.argv)
    assert record["device"] == "cpu (Triton interpreter, TRITON_INTERPRET=1)"
    assert record["interpreter"]["triton_version"] == plan.info.triton_version
    assert record["interpreter"]["torch_version"] == plan.info.torch_version
    assert record["compile_ms"] > 0 and record["wall_s"] > 0 and record["params"]["size"] == 2048
    assert record["backend_requested"] is None and record["metrics_summary"] is None
    assert record["env"]["PYTHONUNBUFFERED"] == "1" and record["env"]["TRITON_INTERPRET"] == "1"


def test_run_folders_never_overwrite(tmp_path):
    from datetime import datetime

    from proton_tui.engine.rundir import create_run_dir

    moment = datetime(2026, 1, 1, 12, 0, 0)
    first, second, third = (create_run_dir(tmp_path, "vecadd", moment) for _ in range(3))
    assert [p.name for p in (first, second, third)] == ["20260101-120000-vecadd", "20260101-120000-vecadd-2",
                                                         "20260101-120000-vecadd-3"]


# GPU: a real capture with Proton. Small sizes keep them quick.

def _gpu_run(tmp_path, **options):
    params = RunParams(python=PY, size=2**20, iters=5, output=tmp_path, **options)
    return asyncio.run(execute_run(plan_run(params)))


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("mode", ["cli", "env"])
def test_gpu_capture_passes(tmp_path, mode):
    result = _gpu_run(tmp_path, mode=mode)
    assert result.verdict.outcome is Outcome.PASS, result.verdict.message
    names = [k.name for k in result.profile.kernel_stats()]
    assert f"add_kernel<n={2**20}>" in names and result.profile.has_bytes
    summary = result.record.metrics_summary
    assert summary["proton_kernel_count"] >= 6 and summary["proton_artifact_dir"] == str(result.run_dir)
    assert result.record.backend_resolved in ("cupti", "roctracer", "rocprofiler")


@pytest.mark.gpu
@needs_gpu
def test_gpu_fail_leaves_a_capture(tmp_path):
    result = _gpu_run(tmp_path, inject_bug=True)
    assert result.verdict.outcome is Outcome.FAIL and result.command.capture_path.exists()


@pytest.mark.gpu
@needs_gpu
def test_gpu_instrumentation_of_a_kernel_without_scopes_is_an_empty_capture(tmp_path):
    """Proton's silent empty capture: the payload's plain kernel (a copy of it run as another payload, which gets
    no --scoped) under the instrumentation backend leaves a ROOT-only tree, said as such."""
    import shutil

    plain = Path(shutil.copy(Path(__file__).parents[2] / "payload" / "vecadd.py", tmp_path / "plain_vecadd.py"))
    result = _gpu_run(tmp_path, backend="instrumentation", payload=plain)
    assert result.verdict.outcome is Outcome.EMPTY_CAPTURE
