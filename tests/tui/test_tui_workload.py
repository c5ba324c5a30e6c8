"""The form's Workload panel: a command of the user's, checked as typed by the rule `run -- COMMAND` uses, run from
the form and streamed by the run screen like the payload."""

from __future__ import annotations

import sys

from textual.widgets import Button, Input, RadioSet

from proton_tui.tui.app import ProtonApp
from proton_tui.tui.screens.run import RunScreen
from tests.helpers import wait_for
from tests.tui.test_tui_session import detected_launch, set_input

SIZE = (120, 40)


async def test_a_command_typed_on_the_form_runs_and_passes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "job.py").write_text("import os\nprint('job ran in', os.getcwd())\n")
    app = ProtonApp(output=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        screen = await detected_launch(pilot)
        workload = screen.query_one("#workload", RadioSet)
        workload.query("RadioButton")[1].value = True  # my command
        await pilot.pause()
        await set_input(pilot, screen, "command", f"{sys.executable} missing.py")
        await set_input(pilot, screen, "cwd", str(tmp_path / "work"))
        run = screen.query_one("#run", Button)
        assert run.disabled and "missing.py: no such script" in run.tooltip.plain
        assert screen.query_one("#payload-panel").disabled
        await set_input(pilot, screen, "command", f"{sys.executable} job.py")
        assert not run.disabled, run.tooltip
        await pilot.press("ctrl+r")
        await wait_for(lambda: isinstance(app.screen, RunScreen))
        run_screen = app.screen
        await wait_for(lambda: run_screen.result is not None or run_screen.problem is not None)
        await pilot.pause()
        result = run_screen.result
        assert result.verdict.passed and result.verdict.message == "PASS: the command exited 0 (not profiled)"
        assert result.record.workload == "script" and result.record.params.name == "job"
        assert f"job ran in {tmp_path / 'work'}" in (result.run_dir / "stdout.log").read_text()


async def test_an_unclosed_quote_and_a_missing_folder_are_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = ProtonApp(output=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        screen = await detected_launch(pilot)
        screen.query_one("#workload", RadioSet).query("RadioButton")[1].value = True
        await pilot.pause()
        await set_input(pilot, screen, "command", "python 'train.py")
        assert "does not read as a shell would" in screen.query_one("#run", Button).tooltip.plain
        await set_input(pilot, screen, "command", "python train.py")
        await set_input(pilot, screen, "cwd", str(tmp_path / "nowhere"))
        assert f"{tmp_path / 'nowhere'}: no such folder" in screen.query_one("#run", Button).tooltip.plain
        assert screen.query_one("#command", Input).disabled is False
