"""The interactive session driven through Textual's pilot: the form, a real CPU run, cancel, runs, sample."""

from __future__ import annotations

import pytest
from textual.widgets import Button, Input, Switch

from proton_tui.capture.params import RunParams
from proton_tui.tui.app import ProtonApp, sample_capture
from proton_tui.tui.screens.form import FormScreen
from proton_tui.tui.screens.run import RunScreen
from proton_tui.tui.screens.runs import RunsScreen
from proton_tui.tui.screens.viewer import ProfileScreen
from proton_tui.tui.widgets.profile_table import ProfileTable
from tests.helpers import SCRIPTS, payload_processes, wait_for

SIZE = (120, 40)


async def detected_launch(pilot) -> FormScreen:
    screen = pilot.app.screen
    assert isinstance(screen, FormScreen)
    await wait_for(lambda: screen.info is not None or screen.probe_error is not None)
    await pilot.pause()
    return screen


async def set_input(pilot, screen, field: str, value: str) -> None:
    screen.query_one(f"#{field}", Input).value = value
    await pilot.pause()


@pytest.mark.slow
async def test_form_validates_inline_and_disables_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = ProtonApp()
    async with app.run_test(size=SIZE) as pilot:
        screen = await detected_launch(pilot)
        assert "Triton 3.6.0" in str(screen.query_one("#detection").render())
        await set_input(pilot, screen, "block_size", "1000")
        assert screen.query_one("#run", Button).disabled
        assert "not a power of two" in str(screen.query_one("#block_size-error").render())
        assert "--block-size" in str(screen.query_one("#findings").render())
        await set_input(pilot, screen, "block_size", "2^10")
        await set_input(pilot, screen, "size", "1M")
        assert str(screen.query_one("#block_size-error").render()) == ""
        assert screen.form_params(profile=False).size == 2**20 and screen.form_params().block_size == 1024


@pytest.mark.slow
async def test_no_gpu_form_offers_cpu_check_and_marks_backends(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = ProtonApp()
    async with app.run_test(size=SIZE) as pilot:
        screen = await detected_launch(pilot)
        if screen.info.gpu_count:
            pytest.skip("this machine has a GPU: the no-GPU launch screen does not apply")
        assert "no GPU found" in str(screen.query_one("#detection").render())
        assert screen.query_one("#profile", Switch).value is False  # nothing to profile without a GPU
        screen.query_one("#profile", Switch).value = True
        await pilot.pause()
        findings = str(screen.query_one("#findings").render())
        assert "rocprofiler unavailable: backend rocprofiler needs Triton >= 3.8.0" in findings
        buttons = {button.name: button for button in screen.query("#backend RadioButton")}
        assert buttons["rocprofiler"].disabled and not buttons["auto"].disabled


@pytest.mark.slow
async def test_run_the_real_payload_on_cpu_streams_pass(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = ProtonApp()
    async with app.run_test(size=SIZE) as pilot:
        screen = await detected_launch(pilot)
        await set_input(pilot, screen, "size", "4096")
        await set_input(pilot, screen, "iters", "2")
        screen.query_one("#profile", Switch).value = False
        await pilot.pause()
        await pilot.press("ctrl+r")
        await wait_for(lambda: isinstance(app.screen, RunScreen))
        run_screen = app.screen
        await wait_for(lambda: run_screen.result is not None or run_screen.problem is not None)
        await pilot.pause()
        assert run_screen.result.verdict.passed, run_screen.result.verdict.message
        status = run_screen.status_text()
        assert "PASS" in status and "max_abs_err=0.000e+00" in status
        log_text = "\n".join(run_screen.query_one("#run-log").lines)
        assert "vecadd: size=4096 iters=2 block_size=1024" in log_text and "vecadd: PASS" in log_text
        assert (run_screen.result.run_dir / "run.json").exists()
        assert app.runs == [run_screen.result]
        await pilot.press("f4")
        assert isinstance(app.screen, RunsScreen)
        await pilot.press("enter")  # reopen the run: no capture, so its log and verdict
        assert isinstance(app.screen, RunScreen) and app.screen.result is run_screen.result
        await pilot.pause()
        assert "vecadd: PASS" in "\n".join(app.screen.query_one("#run-log").lines)  # its log, read back


@pytest.mark.slow
async def test_cancel_and_quit_leave_no_process(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    marker = "4194301"  # a size no other test uses, to find this run's processes
    app = ProtonApp()
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(RunScreen(RunParams(size=marker, iters=100000, device="cpu", profile=False, output=tmp_path)))
        await wait_for(lambda: bool(payload_processes(marker)))
        run_screen = app.screen
        await wait_for(lambda: "vecadd: size=" in "\n".join(run_screen.query_one("#run-log").lines))
        await pilot.press("x")
        await wait_for(lambda: run_screen.result is not None, 30)
        assert run_screen.result.verdict.outcome.value == "cancelled"
        assert payload_processes(marker) == []
        # Quitting during a run ends it too.
        app.push_screen(RunScreen(RunParams(size=marker, iters=100000, device="cpu", profile=False, output=tmp_path)))
        await wait_for(lambda: bool(payload_processes(marker)))
    await wait_for(lambda: payload_processes(marker) == [], 30)


async def test_sample_capture_opens_a_real_table():
    app = ProtonApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        assert isinstance(app.screen, ProfileScreen)
        table = app.screen.query_one(ProfileTable)
        assert table.profile.path == sample_capture()
        assert "add_kernel<n=268435456>" in table.model.text(1, 120)


async def test_a_flood_of_output_streams_in_batches_and_the_ui_answers(tmp_path):
    """100,000 lines reach the log (the newest LOG_LINES kept, all of them in stdout.log) while keys still work."""
    from proton_tui.tui.screens.help import HelpScreen
    from proton_tui.tui.widgets.batched_log import LOG_LINES

    flood = SCRIPTS / "flood.py"
    app = ProtonApp()
    async with app.run_test(size=SIZE) as pilot:
        params = RunParams(size=100_000, iters=1, profile=False, device="cpu", output=tmp_path, payload=flood)
        app.push_screen(RunScreen(params))
        await pilot.pause()
        run_screen = app.screen
        await wait_for(lambda: run_screen.query_one("#run-log").line_count > 0, 60)
        await pilot.press("f1")  # the UI answers while lines pour in
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await wait_for(lambda: run_screen.result is not None, 120)
        await pilot.pause()
        log = run_screen.query_one("#run-log")
        assert log.line_count == LOG_LINES and log.lines[-1] == "vecadd: PASS"
        assert run_screen.result.verdict.passed
        assert (run_screen.result.run_dir / "stdout.log").read_text().count("\n") == 100_000 + 3


async def test_a_failed_run_gets_a_panel_with_its_remedy(tmp_path):
    """No GPU here: a profiled run writes no capture, and the panel says so with what to do."""
    app = ProtonApp()
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(RunScreen(RunParams(size=1024, iters=1, device="cpu", profile=True, output=tmp_path)))
        await pilot.pause()
        run_screen = app.screen
        await wait_for(lambda: run_screen.result is not None or run_screen.problem is not None, 120)
        await pilot.pause()
        panel = str(run_screen.query_one("#verdict-panel").render())
        assert run_screen.query_one("#verdict-panel").has_class("fail")
        assert "no capture written" in panel and "→" in panel and "--no-profile" in panel
        assert isinstance(app.screen, RunScreen)  # no table to open: the log and the panel stay
